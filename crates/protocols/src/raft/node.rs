//! The Raft replica as a role of the composition: [`RaftNode`] runs a [`RaftReplica`] against
//! any [`Ctx`] whose types wrap Raft's own ([`RaftCtx`]), through a zero-cost adapter that
//! implements [`RaftEnv`] over the context (monomorphized: no `dyn`).
//!
//! **Observations.** The replica speaks [`RaftObs`]; the adapter maps the claims the checkers
//! judge onto the shared [`Obs`] vocabulary and drops the rest (votes, appends and commit
//! indexes are visible in the trace's messages):
//! - `BecameLeader { term }` -> `LeaderClaim { term }` (one per term per node: what an
//!   election-safety invariant over terms consumes), `SteppedDown { term }` ->
//!   `LeaderStepDown { term }`;
//! - `BecameFollower { leader: Some(l) }` -> `LeaderKnown { leader: l }`, `BecameCandidate` ->
//!   `ElectionStarted`;
//! - `Applied { index, term, digest }` -> `RaftApplied` (state machine safety);
//! - `KeyCreated` / `KeyDeleted` -> `RaftKeyCreated` / `RaftKeyDeleted`: the lock store's
//!   state as of the committed log, the truth of who holds a Raft lock.

use super::config::RaftConfig;
use super::env::{RaftDurable, RaftEnv, RaftObs};
use super::msg::{RaftMsg, RaftTimer};
use super::replica::RaftReplica;
use crate::context::{Ctx, Role, Wraps};
use crate::observation::Obs;
use splitbrain_engine::{LocalTime, NodeId, SimDuration, TimerId};

/// The context a Raft replica runs in: messages, timers and durable state that wrap Raft's.
pub trait RaftCtx:
    Ctx<Msg: Wraps<RaftMsg>, Timer: Wraps<RaftTimer>, Durable: Wraps<RaftDurable>>
{
}

impl<C> RaftCtx for C where
    C: Ctx<Msg: Wraps<RaftMsg>, Timer: Wraps<RaftTimer>, Durable: Wraps<RaftDurable>>
{
}

/// [`RaftEnv`] over a [`RaftCtx`].
struct Env<'a, C>(&'a mut C);

impl<C: RaftCtx> RaftEnv for Env<'_, C> {
    type TimerHandle = TimerId;
    #[inline]
    fn send(&mut self, to: NodeId, msg: RaftMsg) {
        self.0.send(to, msg);
    }
    #[inline]
    fn set_timer(&mut self, after: SimDuration, timer: RaftTimer) -> TimerId {
        self.0.set_timer(after, timer)
    }
    #[inline]
    fn cancel_timer(&mut self, handle: TimerId) {
        self.0.cancel_timer(handle);
    }
    #[inline]
    fn mono_now(&self) -> LocalTime {
        self.0.mono_now()
    }
    #[inline]
    fn rng_u64(&mut self) -> u64 {
        self.0.rng().next_u64()
    }
    #[inline]
    fn durable_mut(&mut self) -> &mut RaftDurable {
        // A node that never persisted holds the composition's default state: Raft's starts
        // empty (term 0, no vote, no log), as a fresh replica's storage does.
        if self.0.durable_mut().part_mut().is_none() {
            self.0.persist(RaftDurable::default());
        }
        self.0
            .durable_mut()
            .part_mut()
            .expect("the node's durable state is Raft's")
    }
    #[inline]
    fn observe(&mut self, obs: RaftObs) {
        if let Some(o) = to_obs(obs) {
            self.0.observe(o);
        }
    }
}

/// The shared observation a replica's claim maps to, if the checkers judge it (module doc).
pub fn to_obs(obs: RaftObs) -> Option<Obs> {
    Some(match obs {
        RaftObs::BecameLeader { term } => Obs::LeaderClaim { term },
        RaftObs::SteppedDown { term } => Obs::LeaderStepDown { term },
        RaftObs::BecameFollower {
            leader: Some(leader),
            ..
        } => Obs::LeaderKnown { leader },
        RaftObs::BecameCandidate { .. } => Obs::ElectionStarted,
        RaftObs::Applied {
            index,
            term,
            digest,
        } => Obs::RaftApplied {
            index,
            term,
            digest,
        },
        RaftObs::KeyCreated {
            lock,
            owner,
            revision,
            mutex,
            ..
        } => Obs::RaftKeyCreated {
            lock,
            holder: owner,
            revision,
            mutex,
        },
        RaftObs::KeyDeleted {
            lock,
            revision,
            expired,
        } => Obs::RaftKeyDeleted {
            lock,
            revision,
            expired,
        },
        _ => return None,
    })
}

/// One replica of the Raft lock service, as a role (see [`RaftReplica`] for the algorithm).
/// The replica is built at start from the node's own id (the group's config lists every
/// replica; a node learns which one it is from its context).
#[derive(Clone, Debug)]
pub struct RaftNode {
    cfg: RaftConfig,
    replica: Option<RaftReplica<TimerId>>,
}

impl RaftNode {
    /// A replica of the group `cfg` (validated and listing this node: the scenario layer
    /// checks both; [`RaftReplica::new`] panics otherwise).
    pub fn new(cfg: RaftConfig) -> Self {
        RaftNode { cfg, replica: None }
    }

    /// The replica's state, once started (for tests and narration).
    pub fn replica(&self) -> Option<&RaftReplica<TimerId>> {
        self.replica.as_ref()
    }

    #[inline]
    fn replica_mut(&mut self, id: NodeId) -> &mut RaftReplica<TimerId> {
        let cfg = &self.cfg;
        self.replica
            .get_or_insert_with(|| RaftReplica::new(id, cfg.clone()))
    }
}

impl<C: RaftCtx> Role<C> for RaftNode {
    fn on_start(&mut self, ctx: &mut C) {
        self.replica_mut(ctx.id()).on_start(&mut Env(ctx));
    }

    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg) {
        if let Some(m) = msg.into_part() {
            self.replica_mut(ctx.id())
                .on_message(&mut Env(ctx), from, m);
        }
    }

    fn on_timer(&mut self, ctx: &mut C, timer: C::Timer) {
        if let Some(t) = timer.into_part() {
            self.replica_mut(ctx.id()).on_timer(&mut Env(ctx), t);
        }
    }

    fn on_restart(&mut self, ctx: &mut C, durable: &C::Durable) {
        let empty = RaftDurable::default();
        let d = durable.part().unwrap_or(&empty);
        self.replica_mut(ctx.id()).on_restart(&mut Env(ctx), d);
    }
}
