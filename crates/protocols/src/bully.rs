//! The bully election (stub).

use crate::durable::Durable;
use crate::msg::Msg;
use crate::node::Ctx;
use crate::timer::Timer;
use serde::{Deserialize, Serialize};
use splitbrain_engine::NodeId;

/// Messages of this protocol (stub).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BullyMsg {}

impl BullyMsg {
    /// The message kind for traces and metrics.
    pub fn kind(&self) -> &'static str {
        match *self {}
    }
}

/// Timers (stub).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BullyTimer {}

/// Durable state (stub).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BullyDurable {}

/// Actor (stub).
#[derive(Clone, Debug)]
pub struct BullyNode {}

impl BullyNode {
    /// Runs at true time 0.
    pub fn on_start(&mut self, _ctx: &mut Ctx<'_>) {}
    /// Handles a message.
    pub fn on_message(&mut self, _ctx: &mut Ctx<'_>, _from: NodeId, _msg: Msg) {}
    /// Handles a timer.
    pub fn on_timer(&mut self, _ctx: &mut Ctx<'_>, _timer: Timer) {}
    /// Rebuilds from durable state after a crash.
    pub fn on_restart(&mut self, _ctx: &mut Ctx<'_>, _durable: &Durable) {}
}
