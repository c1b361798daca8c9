//! What a protocol is written against: a small context trait ([`Ctx`]) and the [`Role`] a
//! protocol's actor plays, both generic over the composition the protocol runs in.
//!
//! A protocol never names the composition (`Node`, `Msg`, `Timer`, `Durable` in
//! `composition.rs`). It names its own message, timer and durable types, and asks that the
//! composition's types wrap them ([`Wraps`]). Each protocol folder spells that request once,
//! as a trait alias such as `BullyCtx: Ctx<Msg: Wraps<BullyMsg>, Timer: Wraps<BullyTimer>, ..>`.
//! The engine's [`Context`] implements [`Ctx`] for any actor whose observations are [`Obs`];
//! every call is monomorphized and inlined (no `dyn`), so a protocol pays nothing for its
//! independence.

use crate::observation::Obs;
use splitbrain_engine::{
    Actor, Context, LocalTime, NodeId, RngStream, SimDuration, TimerId, WallTime,
};

/// A composite type (message, timer or durable state of the composition) that wraps a
/// protocol's own type `P`: `P` converts into it ([`From`]), and it can be looked into for a
/// `P`.
pub trait Wraps<P>: From<P> {
    /// The wrapped `P`, if this value is one.
    fn into_part(self) -> Option<P>;
    /// A reference to the wrapped `P`, if this value is one.
    fn part(&self) -> Option<&P>;
}

/// What a protocol's handler can see and do: the engine's handler context, seen through the
/// protocol's own types. The node's own clocks only (never true time), `send`, timers, the
/// node's RNG stream, `observe` for claims the checkers judge, and `persist` for the state
/// that survives a crash (docs/design.md, "Nodes and actors").
pub trait Ctx {
    /// The composition's message type.
    type Msg;
    /// The composition's timer type.
    type Timer;
    /// The composition's durable-state type.
    type Durable;

    /// This node's id.
    fn id(&self) -> NodeId;
    /// This node's name.
    fn name(&self) -> &str;
    /// This node's monotonic clock now (local ns; drifts, never steps).
    fn mono_now(&self) -> LocalTime;
    /// This node's wall clock now (local ns; drifts and steps).
    fn wall_now(&self) -> WallTime;
    /// Sends `msg` to `to` through the network.
    fn send(&mut self, to: NodeId, msg: impl Into<Self::Msg>);
    /// Sets a timer to fire after `after` of this node's monotonic clock.
    fn set_timer(&mut self, after: SimDuration, timer: impl Into<Self::Timer>) -> TimerId;
    /// Cancels a pending timer (no effect if it already fired or was cancelled).
    fn cancel_timer(&mut self, id: TimerId);
    /// This node's random stream (`"actor/<name>"`).
    fn rng(&mut self) -> &mut RngStream;
    /// Reports a claim about this node, for the checkers and fault triggers.
    fn observe(&mut self, obs: Obs);
    /// Replaces this node's durable state (what `on_restart` will see after a crash).
    fn persist(&mut self, durable: impl Into<Self::Durable>);
}

/// A protocol's actor: the four reactions of the engine's [`Actor`], against any context
/// `C` whose types wrap the protocol's own. The composition's `Node` dispatches to it.
pub trait Role<C: Ctx> {
    /// Runs once at true time 0.
    fn on_start(&mut self, ctx: &mut C);
    /// A message from `from` arrived (any protocol's: a role ignores what is not its own).
    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg);
    /// A timer set through `ctx` came due (any of the node's: a role ignores what is not
    /// its own).
    fn on_timer(&mut self, ctx: &mut C, timer: C::Timer);
    /// The node restarted after a crash; rebuild from `durable` alone.
    fn on_restart(&mut self, ctx: &mut C, durable: &C::Durable);
}

impl<A: Actor<Obs = Obs>> Ctx for Context<'_, A> {
    type Msg = A::Msg;
    type Timer = A::Timer;
    type Durable = A::Durable;

    #[inline]
    fn id(&self) -> NodeId {
        Context::id(self)
    }
    #[inline]
    fn name(&self) -> &str {
        Context::name(self)
    }
    #[inline]
    fn mono_now(&self) -> LocalTime {
        Context::mono_now(self)
    }
    #[inline]
    fn wall_now(&self) -> WallTime {
        Context::wall_now(self)
    }
    #[inline]
    fn send(&mut self, to: NodeId, msg: impl Into<A::Msg>) {
        Context::send(self, to, msg.into());
    }
    #[inline]
    fn set_timer(&mut self, after: SimDuration, timer: impl Into<A::Timer>) -> TimerId {
        Context::set_timer(self, after, timer.into())
    }
    #[inline]
    fn cancel_timer(&mut self, id: TimerId) {
        Context::cancel_timer(self, id);
    }
    #[inline]
    fn rng(&mut self) -> &mut RngStream {
        Context::rng(self)
    }
    #[inline]
    fn observe(&mut self, obs: Obs) {
        Context::observe(self, obs);
    }
    #[inline]
    fn persist(&mut self, durable: impl Into<A::Durable>) {
        Context::persist(self, durable.into());
    }
}
