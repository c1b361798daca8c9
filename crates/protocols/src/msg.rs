//! The message vocabulary of all actors: one enum per protocol, wrapped in [`Msg`].

use crate::bully::BullyMsg;
use crate::lease::LeaseMsg;
use crate::redis_instance::RedisMsg;
use crate::storage::StorageMsg;
use serde::{Deserialize, Serialize};
use splitbrain_engine::Message;

/// Every message a splitbrain actor sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Msg {
    /// Bully election messages.
    Bully(BullyMsg),
    /// Lease service requests and replies.
    Lease(LeaseMsg),
    /// Redis commands and replies.
    Redis(RedisMsg),
    /// Storage writes and acknowledgements.
    Storage(StorageMsg),
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Bully(m) => m.kind(),
            Msg::Lease(m) => m.kind(),
            Msg::Redis(m) => m.kind(),
            Msg::Storage(m) => m.kind(),
        }
    }
}
