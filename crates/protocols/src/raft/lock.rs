//! The Raft lock client as one of the lock clients a worker drives ([`RaftLock`]): a
//! [`RaftLockClient`] run against any [`Ctx`] whose types wrap the client's own
//! ([`RaftLockCtx`]), with its claims mapped onto the shared [`Obs`] vocabulary and reported to
//! the worker as [`LockEvent`]s, as the other lock clients do:
//! - `acquire` -> `LockRequested { servers: replicas }`;
//! - `Acquired { revision, lease, deadline }` -> `LockAcquired { token: Some(revision), value:
//!   lease id, valid_until_local: deadline }` (the revision is the fencing token handed to
//!   storage);
//! - `Extended` -> `LockRenewed`, `Denied` -> `LockFailed`, `Lost` -> `LockLost`, `Released`
//!   -> `LockReleased`.
//!
//! A grant that arrives after its own deadline is `LockAcquired` then `LockLost` at once, and
//! the worker hears `Failed` (it never held the lock long enough to act).

use super::client::{ClientObs, RaftClientConfig, RaftClientEnv, RaftClientTimer, RaftLockClient};
use super::msg::RaftMsg;
use crate::context::{Ctx, Wraps};
use crate::lock_event::LockEvent;
use crate::observation::Obs;
use splitbrain_engine::{LocalTime, NodeId, SimDuration, TimerId};

/// The context a Raft lock client runs in: messages that wrap [`RaftMsg`] and timers that wrap
/// [`RaftClientTimer`].
pub trait RaftLockCtx: Ctx<Msg: Wraps<RaftMsg>, Timer: Wraps<RaftClientTimer>> {}

impl<C: Ctx<Msg: Wraps<RaftMsg>, Timer: Wraps<RaftClientTimer>>> RaftLockCtx for C {}

/// [`RaftClientEnv`] over a [`RaftLockCtx`], collecting what the worker must hear.
struct Env<'a, C> {
    ctx: &'a mut C,
    lock: &'a str,
    event: Option<LockEvent>,
}

impl<C: RaftLockCtx> RaftClientEnv for Env<'_, C> {
    type TimerHandle = TimerId;
    #[inline]
    fn send(&mut self, to: NodeId, msg: RaftMsg) {
        self.ctx.send(to, msg);
    }
    #[inline]
    fn set_timer(&mut self, after: SimDuration, timer: RaftClientTimer) -> TimerId {
        self.ctx.set_timer(after, timer)
    }
    #[inline]
    fn cancel_timer(&mut self, handle: TimerId) {
        self.ctx.cancel_timer(handle);
    }
    #[inline]
    fn mono_now(&self) -> LocalTime {
        self.ctx.mono_now()
    }
    fn observe(&mut self, obs: ClientObs) {
        let lock = self.lock.to_string();
        let (o, ev) = match obs {
            ClientObs::Acquired {
                revision,
                lease,
                deadline,
                ..
            } => (
                Obs::LockAcquired {
                    thread: None,
                    lock,
                    token: Some(revision),
                    value: lease.to_string(),
                    valid_until_local: deadline,
                },
                LockEvent::Acquired {
                    token: Some(revision),
                    valid_until_local: deadline,
                },
            ),
            ClientObs::Extended { revision, deadline } => (
                Obs::LockRenewed {
                    thread: None,
                    lock,
                    token: Some(revision),
                    valid_until_local: deadline,
                },
                LockEvent::Extended {
                    valid_until_local: deadline,
                },
            ),
            ClientObs::Denied { held_revision, .. } => (
                Obs::LockFailed {
                    thread: None,
                    lock,
                    reason: format!("denied: the key exists (create revision {held_revision})"),
                },
                LockEvent::Failed,
            ),
            ClientObs::Lost { reason, .. } => {
                let ev = match self.event {
                    Some(LockEvent::Acquired { .. }) => LockEvent::Failed,
                    _ => LockEvent::Lost,
                };
                (
                    Obs::LockLost {
                        thread: None,
                        lock,
                        reason: reason.replace('_', " "),
                    },
                    ev,
                )
            }
            ClientObs::Released { .. } => (
                Obs::LockReleased { thread: None, lock },
                LockEvent::Released,
            ),
        };
        self.ctx.observe(o);
        self.event = Some(ev);
    }
}

/// A Raft lock client for a worker (module doc).
#[derive(Clone, Debug)]
pub struct RaftLock {
    client: RaftLockClient<TimerId>,
    lock: String,
    replicas: Vec<NodeId>,
}

impl RaftLock {
    /// An idle client of `cfg` (its `replicas` non-empty: the scenario layer validates).
    pub fn new(cfg: RaftClientConfig) -> Self {
        RaftLock {
            lock: cfg.lock.clone(),
            replicas: cfg.replicas.clone(),
            client: RaftLockClient::new(cfg),
        }
    }

    /// The lock key.
    pub fn lock_name(&self) -> &str {
        &self.lock
    }

    fn run<C: RaftLockCtx>(
        &mut self,
        ctx: &mut C,
        f: impl FnOnce(&mut RaftLockClient<TimerId>, &mut Env<'_, C>),
    ) -> Option<LockEvent> {
        let mut env = Env {
            ctx,
            lock: &self.lock,
            event: None,
        };
        f(&mut self.client, &mut env);
        env.event
    }

    /// Starts an acquisition; observes `LockRequested`.
    pub fn acquire(&mut self, ctx: &mut impl RaftLockCtx) {
        ctx.observe(Obs::LockRequested {
            thread: None,
            lock: self.lock.clone(),
            servers: self.replicas.clone(),
        });
        self.run(ctx, |c, e| c.acquire(e));
    }

    /// Stops acting at once and revokes the lease (if held).
    pub fn release(&mut self, ctx: &mut impl RaftLockCtx) {
        self.run(ctx, |c, e| c.release(e));
    }

    /// Handles a reply from a replica.
    pub fn on_message<C: RaftLockCtx>(
        &mut self,
        ctx: &mut C,
        from: NodeId,
        msg: &C::Msg,
    ) -> Option<LockEvent> {
        let m = msg.part()?;
        if !self.replicas.contains(&from) {
            return None;
        }
        let m = m.clone();
        self.run(ctx, |c, e| c.on_message(e, from, m))
    }

    /// Handles one of the client's timers.
    pub fn on_timer<C: RaftLockCtx>(&mut self, ctx: &mut C, timer: &C::Timer) -> Option<LockEvent> {
        let t = *timer.part()?;
        self.run(ctx, |c, e| c.on_timer(e, t))
    }

    /// The local deadline of the current hold.
    pub fn valid_until(&self) -> Option<LocalTime> {
        self.client.hold().map(|h| h.1)
    }

    /// The fencing token (create revision) of the current hold.
    pub fn token(&self) -> Option<u64> {
        self.client.hold().map(|h| h.0)
    }

    /// Forgets all volatile state after a crash of the owning node.
    pub fn reset(&mut self) {
        self.client.reset();
    }
}
