//! What survives a crash, per actor kind (see `Context::persist`).

use crate::bully::BullyDurable;
use crate::lease::ServiceDurable;
use crate::redis_instance::RedisDurable;
use crate::storage::StorageDurable;

/// The durable state of a node; `Nothing` for actors that keep nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Durable {
    /// Nothing survives.
    #[default]
    Nothing,
    /// Bully node: its term counter.
    Bully(BullyDurable),
    /// Lease service: its token counter.
    LeaseService(ServiceDurable),
    /// Redis instance: its persisted keyspace.
    Redis(RedisDurable),
    /// Storage: its highest token and applied jobs.
    Storage(StorageDurable),
}
