//! What actors exchange and hold, apart from the simulator: the [`Message`] and [`Observation`]
//! traits (each names its kind) and the [`TimerId`] handle. The [`crate::Actor`] trait and the
//! [`crate::Context`] a handler acts through live with the simulator's core in `sim.rs`: the
//! context is a window onto that core, and the core is generic over the actor.

use serde::Serialize;
use std::fmt::Debug;

/// A message type: its `kind` names it in traces, metrics and charts (e.g. `"ELECTION"`).
pub trait Message: Clone + Debug + Serialize {
    /// A short stable name of the message's kind.
    fn kind(&self) -> &'static str;
}

/// An observation type: what an actor claims about itself. `kind` is what fault triggers
/// match on (e.g. `"validity_checked"`).
pub trait Observation: Clone + Debug + Serialize {
    /// A short stable name of the observation's kind.
    fn kind(&self) -> &'static str;
}

/// A handle to a pending timer, for [`crate::Context::cancel_timer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerId {
    pub(crate) slot: u32,
    pub(crate) gen: u32,
}
