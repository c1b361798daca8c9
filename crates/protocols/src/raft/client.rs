//! A lock client of the Raft lock service, as a pure state machine over [`RaftClientEnv`].
//!
//! It finds the leader (follows `Redirect` hints; on a timeout or a redirect without a hint it
//! tries the next replica in its list), acquires the lock key with a lease, keeps the lease
//! alive every TTL/3 (etcd's client keeps alive every TTL/3 too), releases it, and **stops
//! believing at its local deadline minus a safety margin**: the deadline is the send time, on
//! its own monotonic clock, of the request that last confirmed the lease (the first send of an
//! `Acquire`, whose retries reuse the request id, or the send of a confirmed `KeepAlive`) plus
//! the TTL. The service's expiry is never earlier than that instant (see
//! [`super::replica`]), so the margin only has to cover the clocks' rate difference over a TTL
//! (`ttl * (drift_client + drift_leader) / 1e6`) plus what the holder needs to stop in time.
//! The fencing token handed to storage is the key's create revision. A grant that arrives after
//! its own deadline (the acquisition took longer than the TTL, say across a partition) is given
//! up at once and its lease revoked, so the key does not block the lock for a whole TTL.

use super::msg::{LeaseId, RaftMsg};
use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId, Observation, SimDuration};

/// The client's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RaftClientTimer {
    /// The outstanding request got no answer in time: try the next replica.
    Retry,
    /// Time to send a keepalive.
    KeepAlive,
    /// The holder's deadline (minus the margin) has come.
    Deadline,
}

/// What a client claims.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ClientObs {
    /// The client holds `lock` with fencing token `revision` until local `deadline`.
    Acquired {
        /// The lock key.
        lock: String,
        /// The fencing token (the key's create revision).
        revision: u64,
        /// The lease.
        lease: LeaseId,
        /// Local monotonic deadline (already minus the safety margin), ns.
        deadline: LocalTime,
    },
    /// A keepalive moved the deadline.
    Extended {
        /// The fencing token.
        revision: u64,
        /// The new local deadline, ns.
        deadline: LocalTime,
    },
    /// The key exists for someone else.
    Denied {
        /// The lock key.
        lock: String,
        /// The holder's token.
        held_revision: u64,
    },
    /// The client stopped believing it holds the lock.
    Lost {
        /// The fencing token it held.
        revision: u64,
        /// Why: `"deadline"` or `"lease_not_found"`.
        reason: &'static str,
    },
    /// The client released the lock (confirmed or not, it no longer acts).
    Released {
        /// The fencing token it held.
        revision: u64,
    },
}

impl Observation for ClientObs {
    fn kind(&self) -> &'static str {
        match self {
            ClientObs::Acquired { .. } => "raft_client_acquired",
            ClientObs::Extended { .. } => "raft_client_extended",
            ClientObs::Denied { .. } => "raft_client_denied",
            ClientObs::Lost { .. } => "raft_client_lost",
            ClientObs::Released { .. } => "raft_client_released",
        }
    }
}

/// The client's effects: network, own clock, timers, observations.
pub trait RaftClientEnv {
    /// A handle to a pending timer.
    type TimerHandle: Copy;
    /// Sends `msg` to `to`.
    fn send(&mut self, to: NodeId, msg: RaftMsg);
    /// Sets `timer` to fire after `after` of the client's monotonic clock.
    fn set_timer(&mut self, after: SimDuration, timer: RaftClientTimer) -> Self::TimerHandle;
    /// Cancels a pending timer.
    fn cancel_timer(&mut self, handle: Self::TimerHandle);
    /// The client's monotonic clock now, local ns.
    fn mono_now(&self) -> LocalTime;
    /// Reports a claim.
    fn observe(&mut self, obs: ClientObs);
}

/// How a lock client behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaftClientConfig {
    /// The replicas, tried in this order from the first.
    pub replicas: Vec<NodeId>,
    /// The lock key.
    pub lock: String,
    /// The lease TTL asked for, ns.
    pub ttl: SimDuration,
    /// Subtracted from every deadline, ns (clock rate difference over a TTL plus the time the
    /// holder needs to stop).
    pub safety_margin: SimDuration,
    /// How long to wait for an answer before trying the next replica, ns.
    pub request_timeout: SimDuration,
    /// The first request id (request ids must not repeat across the client's restarts: draw it
    /// from the client's random stream).
    pub first_req: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    Idle,
    Acquiring {
        req: u64,
        first_sent: LocalTime,
    },
    Holding {
        lease: LeaseId,
        revision: u64,
        deadline: LocalTime,
        /// The outstanding keepalive: request id and send time.
        keepalive: Option<(u64, LocalTime)>,
    },
    Releasing {
        req: u64,
        lease: LeaseId,
        /// `acquire` was called while the release was outstanding: acquire once it is answered.
        then_acquire: bool,
    },
}

/// A Raft lock client. `H` is the environment's timer handle type.
#[derive(Clone, Debug)]
pub struct RaftLockClient<H> {
    cfg: RaftClientConfig,
    target: usize,
    next_req: u64,
    state: State,
    retry: Option<H>,
    keepalive: Option<H>,
    deadline: Option<H>,
}

impl<H: Copy> RaftLockClient<H> {
    /// An idle client. Panics on an empty replica list (the scenario layer validates first).
    pub fn new(cfg: RaftClientConfig) -> Self {
        assert!(!cfg.replicas.is_empty(), "a Raft client needs replicas");
        RaftLockClient {
            next_req: cfg.first_req,
            cfg,
            target: 0,
            state: State::Idle,
            retry: None,
            keepalive: None,
            deadline: None,
        }
    }

    /// The fencing token if the client holds the lock at local time `now` (before its deadline).
    pub fn token(&self, now: LocalTime) -> Option<u64> {
        match &self.state {
            State::Holding {
                revision, deadline, ..
            } if now < *deadline => Some(*revision),
            _ => None,
        }
    }

    /// The replica the client currently believes leads.
    pub fn target(&self) -> NodeId {
        self.cfg.replicas[self.target]
    }

    /// Starts acquiring (ignored unless idle; while a release is outstanding, acquiring starts
    /// once the release is answered, so the client never competes with its own lease).
    pub fn acquire<E: RaftClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        if let State::Releasing { then_acquire, .. } = &mut self.state {
            *then_acquire = true;
            return;
        }
        if self.state != State::Idle {
            return;
        }
        let req = self.fresh_req();
        self.state = State::Acquiring {
            req,
            first_sent: env.mono_now(),
        };
        self.send_current(env);
    }

    /// Releases the lock: stops acting at once, then revokes the lease.
    pub fn release<E: RaftClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        if let State::Holding {
            lease, revision, ..
        } = self.state
        {
            env.observe(ClientObs::Released { revision });
            self.clear_hold_timers(env);
            let req = self.fresh_req();
            self.state = State::Releasing {
                req,
                lease,
                then_acquire: false,
            };
            self.send_current(env);
        }
    }

    /// A timer came due.
    pub fn on_timer<E: RaftClientEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        timer: RaftClientTimer,
    ) {
        match timer {
            RaftClientTimer::Retry => {
                self.retry = None;
                self.target = (self.target + 1) % self.cfg.replicas.len();
                self.send_current(env);
            }
            RaftClientTimer::KeepAlive => {
                self.keepalive = None;
                if let State::Holding { keepalive, .. } = &mut self.state {
                    let req = self.next_req;
                    self.next_req += 1;
                    *keepalive = Some((req, env.mono_now()));
                    self.send_current(env);
                    self.arm_keepalive(env);
                }
            }
            RaftClientTimer::Deadline => {
                self.deadline = None;
                if let State::Holding {
                    revision, deadline, ..
                } = self.state
                {
                    if env.mono_now() >= deadline {
                        self.lose(env, revision, "deadline");
                    } else {
                        self.arm_deadline(env, deadline);
                    }
                }
            }
        }
    }

    /// A reply arrived from `from`.
    pub fn on_message<E: RaftClientEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        from: NodeId,
        msg: RaftMsg,
    ) {
        let now = env.mono_now();
        match (msg, self.state.clone()) {
            (RaftMsg::Redirect { req, leader_hint }, _) if Some(req) == self.outstanding() => {
                match leader_hint.and_then(|h| self.cfg.replicas.iter().position(|r| *r == h)) {
                    Some(i) if self.cfg.replicas[i] != from => {
                        self.target = i;
                        self.send_current(env);
                    }
                    // No useful hint (an election is under way): the retry timer moves on.
                    _ => {}
                }
            }
            (
                RaftMsg::Granted {
                    req,
                    lock,
                    revision,
                    lease,
                    ttl,
                },
                State::Acquiring { req: r, first_sent },
            ) if req == r => {
                self.cancel_retry(env);
                self.remember_leader(from);
                let deadline = self.deadline_from(first_sent, ttl);
                env.observe(ClientObs::Acquired {
                    lock,
                    revision,
                    lease,
                    deadline,
                });
                self.state = State::Holding {
                    lease,
                    revision,
                    deadline,
                    keepalive: None,
                };
                if now >= deadline {
                    // Granted too late to act on: stop at once and hand the lease back, so the
                    // key does not block everyone until the leader expires it.
                    self.lose(env, revision, "deadline");
                    let req = self.fresh_req();
                    self.state = State::Releasing {
                        req,
                        lease,
                        then_acquire: false,
                    };
                    self.send_current(env);
                    return;
                }
                self.arm_deadline(env, deadline);
                self.arm_keepalive(env);
            }
            (
                RaftMsg::Denied {
                    req,
                    lock,
                    held_revision,
                },
                State::Acquiring { req: r, .. },
            ) if req == r => {
                self.cancel_retry(env);
                self.remember_leader(from);
                env.observe(ClientObs::Denied {
                    lock,
                    held_revision,
                });
                self.state = State::Idle;
            }
            (
                RaftMsg::KeptAlive { req, ttl, .. },
                State::Holding {
                    lease,
                    revision,
                    deadline,
                    keepalive: Some((r, sent)),
                },
            ) if req == r => {
                self.cancel_retry(env);
                self.remember_leader(from);
                let extended = self.deadline_from(sent, ttl).max(deadline);
                self.state = State::Holding {
                    lease,
                    revision,
                    deadline: extended,
                    keepalive: None,
                };
                if extended > deadline {
                    env.observe(ClientObs::Extended {
                        revision,
                        deadline: extended,
                    });
                }
            }
            (
                RaftMsg::LeaseNotFound { req, .. },
                State::Holding {
                    revision,
                    keepalive: Some((r, _)),
                    ..
                },
            ) if req == r => {
                self.cancel_retry(env);
                self.lose(env, revision, "lease_not_found");
            }
            (
                RaftMsg::Released { req, .. },
                State::Releasing {
                    req: r,
                    then_acquire,
                    ..
                },
            ) if req == r => {
                self.cancel_retry(env);
                self.state = State::Idle;
                if then_acquire {
                    self.acquire(env);
                }
            }
            // Late or unrelated replies.
            _ => {}
        }
    }

    /// Forgets all volatile state (the owning node crashed; the engine dropped its timers).
    /// Request ids keep counting, so a reply to a request sent before the crash, or the store's
    /// memory of it, never matches a request sent after.
    pub fn reset(&mut self) {
        self.state = State::Idle;
        self.target = 0;
        self.retry = None;
        self.keepalive = None;
        self.deadline = None;
    }

    /// The fencing token and local deadline of the current hold, whatever the time.
    pub fn hold(&self) -> Option<(u64, LocalTime)> {
        match &self.state {
            State::Holding {
                revision, deadline, ..
            } => Some((*revision, *deadline)),
            _ => None,
        }
    }

    fn fresh_req(&mut self) -> u64 {
        let r = self.next_req;
        self.next_req += 1;
        r
    }

    fn outstanding(&self) -> Option<u64> {
        match &self.state {
            State::Acquiring { req, .. } | State::Releasing { req, .. } => Some(*req),
            State::Holding {
                keepalive: Some((req, _)),
                ..
            } => Some(*req),
            _ => None,
        }
    }

    fn deadline_from(&self, sent: LocalTime, ttl: SimDuration) -> LocalTime {
        LocalTime(
            sent.saturating_add(ttl)
                .0
                .saturating_sub(self.cfg.safety_margin.0),
        )
    }

    fn remember_leader(&mut self, from: NodeId) {
        if let Some(i) = self.cfg.replicas.iter().position(|r| *r == from) {
            self.target = i;
        }
    }

    /// (Re)sends the outstanding request to the current target and re-arms the retry timer.
    fn send_current<E: RaftClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        let to = self.target();
        let msg = match &self.state {
            State::Idle => return,
            State::Acquiring { req, .. } => RaftMsg::Acquire {
                req: *req,
                lock: self.cfg.lock.clone(),
                ttl: self.cfg.ttl,
            },
            State::Holding {
                lease,
                keepalive: Some((req, _)),
                ..
            } => RaftMsg::KeepAlive {
                req: *req,
                lease: *lease,
            },
            State::Holding { .. } => return,
            State::Releasing { req, lease, .. } => RaftMsg::Release {
                req: *req,
                lease: *lease,
            },
        };
        env.send(to, msg);
        self.cancel_retry(env);
        self.retry = Some(env.set_timer(self.cfg.request_timeout, RaftClientTimer::Retry));
    }

    fn cancel_retry<E: RaftClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        if let Some(t) = self.retry.take() {
            env.cancel_timer(t);
        }
    }

    fn arm_keepalive<E: RaftClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        if let Some(t) = self.keepalive.take() {
            env.cancel_timer(t);
        }
        let every = SimDuration((self.cfg.ttl.0 / 3).max(1));
        self.keepalive = Some(env.set_timer(every, RaftClientTimer::KeepAlive));
    }

    fn arm_deadline<E: RaftClientEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        deadline: LocalTime,
    ) {
        if let Some(t) = self.deadline.take() {
            env.cancel_timer(t);
        }
        let after = deadline.saturating_since(env.mono_now());
        self.deadline = Some(env.set_timer(after, RaftClientTimer::Deadline));
    }

    fn clear_hold_timers<E: RaftClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        for t in [
            self.keepalive.take(),
            self.deadline.take(),
            self.retry.take(),
        ]
        .into_iter()
        .flatten()
        {
            env.cancel_timer(t);
        }
    }

    fn lose<E: RaftClientEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        revision: u64,
        reason: &'static str,
    ) {
        self.clear_hold_timers(env);
        env.observe(ClientObs::Lost { revision, reason });
        self.state = State::Idle;
    }
}
