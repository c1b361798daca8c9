//! Redlock client (stub).

use crate::lock::{ClientTimer, LockEvent};
use crate::msg::Msg;
use crate::node::Ctx;
use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId};

/// Timers (stub).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RedlockTimer {}

/// Configuration (placeholder stub, to be replaced by the client's implementer).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RedlockConfig {}

/// Lock client (stub).
#[derive(Clone, Debug)]
pub struct RedlockClient {}

impl RedlockClient {
    /// An idle client (stub).
    pub fn new(_cfg: RedlockConfig) -> Self {
        RedlockClient {}
    }
    /// The lock's name (stub).
    pub fn lock_name(&self) -> &str {
        ""
    }
    /// Starts an acquisition.
    pub fn acquire(&mut self, _ctx: &mut Ctx<'_>) {}
    /// Releases the lock.
    pub fn release(&mut self, _ctx: &mut Ctx<'_>) {}
    /// Handles a reply.
    pub fn on_message(
        &mut self,
        _ctx: &mut Ctx<'_>,
        _from: NodeId,
        _msg: &Msg,
    ) -> Option<LockEvent> {
        None
    }
    /// Handles a timer.
    pub fn on_timer(&mut self, _ctx: &mut Ctx<'_>, _timer: ClientTimer) -> Option<LockEvent> {
        None
    }
    /// Local deadline of the hold.
    pub fn valid_until(&self) -> Option<LocalTime> {
        None
    }
    /// Fencing token of the hold.
    pub fn token(&self) -> Option<u64> {
        None
    }
    /// Forgets volatile state.
    pub fn reset(&mut self) {}
}
