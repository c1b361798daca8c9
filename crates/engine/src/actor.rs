//! The actor API: one trait, and the context a handler acts through.
//!
//! Handlers are reactions: `(state, event) -> state changes + effects through the context`.
//! The context gives the node's own clocks (never true time), `send`, `set_timer` /
//! `cancel_timer`, the node's RNG stream, `observe` for claims the checkers judge, and
//! `persist` for the state that survives a crash. Several kinds of actor share one simulation
//! by being variants of one enum that implements [`Actor`] (no `dyn Any`).

use crate::clock::{LocalTime, WallTime};
use crate::node::NodeId;
use crate::rng::RngStream;
use crate::sim::Core;
use crate::time::SimDuration;
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

/// A node's behaviour: a state machine reacting to start, messages, timers and restart.
pub trait Actor: Sized {
    /// Messages exchanged between nodes.
    type Msg: Message;
    /// Timer payloads.
    type Timer: Clone + Debug + Serialize;
    /// Observations this actor reports.
    type Obs: Observation;
    /// The state that survives a crash (written with [`Context::persist`]).
    type Durable: Clone + Debug + Default;

    /// Runs once at true time 0.
    fn on_start(&mut self, ctx: &mut Context<'_, Self>);
    /// A message from `from` arrived.
    fn on_message(&mut self, ctx: &mut Context<'_, Self>, from: NodeId, msg: Self::Msg);
    /// A timer set with [`Context::set_timer`] came due.
    fn on_timer(&mut self, ctx: &mut Context<'_, Self>, timer: Self::Timer);
    /// The node restarted after a crash. The actor must rebuild itself from `durable` alone:
    /// everything else it held is volatile and lost.
    fn on_restart(&mut self, ctx: &mut Context<'_, Self>, durable: &Self::Durable);
}

/// A handle to a pending timer, for [`Context::cancel_timer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerId {
    pub(crate) slot: u32,
    pub(crate) gen: u32,
}

/// What a handler can see and do. Created by the engine for each handler call.
pub struct Context<'a, A: Actor> {
    pub(crate) node: NodeId,
    pub(crate) core: &'a mut Core<A>,
}

impl<A: Actor> Context<'_, A> {
    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.node
    }
    /// This node's name.
    pub fn name(&self) -> &str {
        &self.core.names[self.node.index()]
    }
    /// Number of nodes in the simulation.
    pub fn node_count(&self) -> usize {
        self.core.names.len()
    }
    /// The id of the node called `name`.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.core.name_index.get(name).copied()
    }
    /// The name of node `id`.
    pub fn node_name(&self, id: NodeId) -> &str {
        &self.core.names[id.index()]
    }
    /// This node's monotonic clock now (local ns; drifts, never steps).
    pub fn mono_now(&self) -> LocalTime {
        self.core.nodes[self.node.index()].clock.mono(self.core.now)
    }
    /// This node's wall clock now (local ns; drifts and steps).
    pub fn wall_now(&self) -> WallTime {
        self.core.nodes[self.node.index()].clock.wall(self.core.now)
    }
    /// Sends `msg` to `to` through the network.
    pub fn send(&mut self, to: NodeId, msg: A::Msg) {
        self.core.send(self.node, to, msg);
    }
    /// Sets a timer to fire after `after` of this node's monotonic clock: it fires when that
    /// clock reaches its deadline, its reading now + `after`, as a `CLOCK_MONOTONIC` timer
    /// does. If the node's drift changes before then ([`crate::Fault::SetDrift`]), the timer
    /// follows the clock (a faster clock fires it sooner in true time, a slower one later);
    /// a clock step (wall clock only) does not move it.
    pub fn set_timer(&mut self, after: SimDuration, timer: A::Timer) -> TimerId {
        self.core.set_timer(self.node, after, timer)
    }
    /// Cancels a pending timer (no effect if it already fired or was cancelled). O(1).
    pub fn cancel_timer(&mut self, id: TimerId) {
        self.core.cancel_timer(id);
    }
    /// This node's random stream (`"actor/<name>"`).
    pub fn rng(&mut self) -> &mut RngStream {
        &mut self.core.nodes[self.node.index()].rng
    }
    /// Reports a claim about this node; recorded with true time for the checkers, and matched
    /// against fault triggers.
    pub fn observe(&mut self, obs: A::Obs) {
        self.core.observe(self.node, obs);
    }
    /// Replaces this node's durable state (what `on_restart` will see after a crash).
    pub fn persist(&mut self, durable: A::Durable) {
        self.core.nodes[self.node.index()].durable = durable;
    }
    /// This node's durable state as last persisted.
    pub fn durable(&self) -> &A::Durable {
        &self.core.nodes[self.node.index()].durable
    }
    /// This node's durable state, to change in place: a write of what changed (say, entries
    /// appended to a log on disk) costs what changed, where [`Context::persist`] replaces the
    /// whole state. A crash keeps whatever the state holds when it strikes.
    pub fn durable_mut(&mut self) -> &mut A::Durable {
        &mut self.core.nodes[self.node.index()].durable
    }
}
