//! Lease-based leader election: a node is leader exactly while it holds the lease "leader"
//! (the way etcd's and ZooKeeper's election recipes use a lease / ephemeral node).
//!
//! The node drives a [`LeaseClient`] on the lease: it tries to acquire, and retries every
//! `retry_every` (local) after a failed attempt or a lost lease; the client renews every
//! `renew_every`. It observes `LeaderClaim { term: token }` when it acquires (the fencing
//! token is the term: it increases with every grant, across holders) and
//! `LeaderStepDown { term }` when the client loses the lease.
//!
//! With `write_to: Some(storage)`, while it believes it is leader it writes to that storage
//! every `write_every` (local) with its token: a leader that keeps acting after its renewals
//! failed (`on_renew_failure: KeepBelieving`) then shows up in the storage's log, violating
//! `no_two_accepted_writers` unless the storage fences. Storage acks are not acted on.
//!
//! With `raft: Some(cfg)` the leadership is the Raft lock service's key instead (etcd's
//! election recipe: a key created with a lease): the node drives a [`RaftLock`]
//! client, which keeps its lease alive on its own, and its term is the key's create revision,
//! which also only grows across holders. The lease client config is then unused.
//!
//! After a crash it starts from scratch (nothing is durable): a fresh acquisition.

use super::client::{LeaseClient, LeaseClientConfig, LeaseClientCtx};
use crate::context::{Ctx, Role, Wraps};
use crate::lock_event::LockEvent;
use crate::observation::Obs;
use crate::raft::{RaftClientConfig, RaftLock, RaftLockCtx};
use crate::storage::StorageMsg;
use serde::{Deserialize, Serialize};
use splitbrain_engine::{NodeId, SimDuration, TimerId};

/// Lease-based leader configuration. Durations are local monotonic ns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseLeaderConfig {
    /// The lease client (lease name default `"leader"`, renewal default every 3 s of a 10 s
    /// TTL via [`LeaseLeaderConfig::new`]).
    pub client: LeaseClientConfig,
    /// Wait after a failed attempt or a lost lease before trying again (default 1 s).
    pub retry_every: SimDuration,
    /// Storage to write to while leader (default `None`: no writes).
    pub write_to: Option<NodeId>,
    /// Period of those writes, the first one `write_every` after the claim (default 1 s).
    pub write_every: SimDuration,
    /// Wait this long (local) after start before the first acquisition (default 0: at once).
    pub start_after: SimDuration,
    /// Hold leadership as this Raft lock service key instead of the lease (default `None`:
    /// the lease service of `client`).
    pub raft: Option<RaftClientConfig>,
}

impl LeaseLeaderConfig {
    /// Defaults: lease `"leader"` at `service`, ttl 10 s, renew every 3 s, margin 0, request
    /// timeout 500 ms, stop at the deadline when renewals fail; retry every 1 s; no writes
    /// (period 1 s); start at once.
    pub fn new(service: NodeId) -> Self {
        let mut client = LeaseClientConfig::new(service, "leader");
        client.renew_every = Some(SimDuration::from_secs(3));
        LeaseLeaderConfig {
            client,
            retry_every: SimDuration::from_secs(1),
            write_to: None,
            write_every: SimDuration::from_secs(1),
            start_after: SimDuration::ZERO,
            raft: None,
        }
    }
}

/// The lock a leader holds its leadership with.
#[derive(Clone, Debug)]
enum LeaderLock {
    Lease(LeaseClient),
    Raft(RaftLock),
}

impl LeaderLock {
    fn acquire(&mut self, ctx: &mut impl LeaderCtx) {
        match self {
            LeaderLock::Lease(c) => c.acquire(ctx),
            LeaderLock::Raft(c) => c.acquire(ctx),
        }
    }
    fn on_message<C: LeaderCtx>(
        &mut self,
        ctx: &mut C,
        from: NodeId,
        msg: &C::Msg,
    ) -> Option<LockEvent> {
        match self {
            LeaderLock::Lease(c) => c.on_message(ctx, from, msg),
            LeaderLock::Raft(c) => c.on_message(ctx, from, msg),
        }
    }
    fn on_timer<C: LeaderCtx>(&mut self, ctx: &mut C, timer: &C::Timer) -> Option<LockEvent> {
        match self {
            LeaderLock::Lease(c) => c.on_timer(ctx, timer),
            LeaderLock::Raft(c) => c.on_timer(ctx, timer),
        }
    }
    fn reset(&mut self) {
        match self {
            LeaderLock::Lease(c) => c.reset(),
            LeaderLock::Raft(c) => c.reset(),
        }
    }
}

/// Lease-based leader timers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaderTimer {
    /// Try to acquire again.
    Retry,
    /// Write to storage (while leader).
    Write,
}

/// The context a lease-based leader runs in: its lock clients' ([`LeaseClientCtx`],
/// [`RaftLockCtx`]), plus messages that wrap [`StorageMsg`] (its writes) and timers that wrap
/// [`LeaderTimer`].
pub trait LeaderCtx:
    LeaseClientCtx + RaftLockCtx + Ctx<Msg: Wraps<StorageMsg>, Timer: Wraps<LeaderTimer>>
{
}

impl<C> LeaderCtx for C where
    C: LeaseClientCtx + RaftLockCtx + Ctx<Msg: Wraps<StorageMsg>, Timer: Wraps<LeaderTimer>>
{
}

/// A lease-based leader.
#[derive(Clone, Debug)]
pub struct LeaseLeader {
    cfg: LeaseLeaderConfig,
    client: LeaderLock,
    /// The term (token) this node claims, while it believes it is leader.
    term: Option<u64>,
    retry: Option<TimerId>,
    write: Option<TimerId>,
    writes_sent: u64,
}

impl LeaseLeader {
    /// A node that will try to become leader at start.
    pub fn new(cfg: LeaseLeaderConfig) -> Self {
        LeaseLeader {
            client: match &cfg.raft {
                Some(r) => LeaderLock::Raft(RaftLock::new(r.clone())),
                None => LeaderLock::Lease(LeaseClient::new(cfg.client.clone())),
            },
            cfg,
            term: None,
            retry: None,
            write: None,
            writes_sent: 0,
        }
    }

    /// The term this node claims now, if it believes it is leader.
    pub fn term(&self) -> Option<u64> {
        self.term
    }

    fn arm_write(&mut self, ctx: &mut impl LeaderCtx) {
        if self.cfg.write_to.is_some() {
            self.write = Some(ctx.set_timer(self.cfg.write_every, LeaderTimer::Write));
        }
    }

    fn arm_retry(&mut self, ctx: &mut impl LeaderCtx) {
        if self.retry.is_none() {
            self.retry = Some(ctx.set_timer(self.cfg.retry_every, LeaderTimer::Retry));
        }
    }

    fn on_lock_event(&mut self, ctx: &mut impl LeaderCtx, ev: LockEvent) {
        match ev {
            LockEvent::Acquired { token, .. } => {
                let term = token.expect("lease grants and Raft keys carry a token");
                self.term = Some(term);
                ctx.observe(Obs::LeaderClaim { term });
                self.arm_write(ctx);
            }
            LockEvent::Lost => {
                if let Some(term) = self.term.take() {
                    ctx.observe(Obs::LeaderStepDown { term });
                }
                if let Some(w) = self.write.take() {
                    ctx.cancel_timer(w);
                }
                self.arm_retry(ctx);
            }
            LockEvent::Failed => self.arm_retry(ctx),
            LockEvent::Extended { .. } | LockEvent::Released | LockEvent::Checked { .. } => {}
        }
    }
}

impl<C: LeaderCtx> Role<C> for LeaseLeader {
    /// Runs at true time 0: starts acquiring, at once or after `start_after`.
    fn on_start(&mut self, ctx: &mut C) {
        if self.cfg.start_after == SimDuration::ZERO {
            self.client.acquire(ctx);
        } else {
            self.retry = Some(ctx.set_timer(self.cfg.start_after, LeaderTimer::Retry));
        }
    }

    /// Handles a message (lease replies go to the client; storage acks are ignored).
    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg) {
        if let Some(ev) = self.client.on_message(ctx, from, &msg) {
            self.on_lock_event(ctx, ev);
        }
    }

    /// Handles a timer: its own, or its lease client's.
    fn on_timer(&mut self, ctx: &mut C, timer: C::Timer) {
        match timer.part() {
            Some(LeaderTimer::Retry) => {
                self.retry = None;
                self.client.acquire(ctx);
            }
            Some(LeaderTimer::Write) => {
                self.write = None;
                if let (Some(term), Some(storage)) = (self.term, self.cfg.write_to) {
                    self.writes_sent += 1;
                    ctx.send(
                        storage,
                        StorageMsg::Write {
                            req: self.writes_sent,
                            token: Some(term),
                            job: None,
                            data: format!("leader term {term} write {}", self.writes_sent),
                        },
                    );
                    ctx.observe(Obs::WriteSent {
                        thread: None,
                        req: self.writes_sent,
                        token: Some(term),
                        job: None,
                    });
                    self.arm_write(ctx);
                }
            }
            None => {
                if let Some(ev) = self.client.on_timer(ctx, &timer) {
                    self.on_lock_event(ctx, ev);
                }
            }
        }
    }

    /// Rebuilds after a crash: nothing survives; it starts acquiring again.
    fn on_restart(&mut self, ctx: &mut C, _durable: &C::Durable) {
        self.client.reset();
        self.term = None;
        self.retry = None;
        self.write = None;
        self.client.acquire(ctx);
    }
}
