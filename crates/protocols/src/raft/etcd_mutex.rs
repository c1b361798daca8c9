//! etcd's `concurrency` Session and Mutex as a client of the Raft-replicated store, as a pure
//! state machine over [`EtcdClientEnv`], and the same client as one of the lock clients a
//! worker drives ([`EtcdMutexLock`]).
//!
//! Followed from etcd's own client (go.etcd.io/etcd, tag v3.5.0, commit 946a5a6f; the
//! v3.4.3 tag, commit 3cf2f69b, for the variant):
//! - **Session** (client/v3/concurrency/session.go, `NewSession`): `Grant(ttl)` (default TTL
//!   60 s, `defaultSessionTTL`), then `KeepAlive` on the lease. The keepalive loop
//!   (client/v3/lease.go): `sendKeepAliveLoop` sends a keepalive for the lease every 500 ms
//!   once its `nextKeepAlive` has passed; `recvKeepAlive` sets `nextKeepAlive = now + TTL/3`
//!   and `deadline = now + TTL` on each response (**the receipt time**, not the send time),
//!   and closes the keepalive channel (the session's `Done`) on a response with TTL <= 0 (lease
//!   not found); `deadlineLoop` closes it once `deadline` has passed (it looks every 500 ms;
//!   the model closes it at the deadline itself). `Session.Close` revokes the lease.
//! - **Mutex** (client/v3/concurrency/mutex.go, `NewMutex`, `Lock`, `tryAcquire`, `Unlock`):
//!   the key is `pfx + "/" + hex(lease)`; `tryAcquire` runs `Txn(If(CreateRevision(key) ==
//!   0), Then(Put(key, "", WithLease(lease)), Get(pfx, WithFirstCreate())), Else(Get(key),
//!   Get(pfx, WithFirstCreate())))`; `myRev` is the txn's header revision (or the existing
//!   key's create revision); if the prefix's first-created key is ours, the lock is held.
//!   Otherwise `waitDeletes` (client/v3/concurrency/key.go) loops: `Get(pfx,
//!   WithLastCreate(), WithMaxCreateRev(myRev - 1))`; if nothing, done; else `waitDelete` on
//!   that key from the read's revision (a watch for its DELETE event), and again.
//!   **Then (v3.5.0, commit b14c7cd4 "concurrency: make lock more reliable", the fix of etcd
//!   issue #11456 that Jepsen's etcd 3.4.3 analysis reported):** `Get(myKey)`; if the key is
//!   gone, the session expired while waiting: `ErrSessionExpired`, no lock. v3.4.3's `Lock`
//!   returns success right after `waitDeletes` (`recheck_own_key: false`): a waiter whose
//!   lease expired while it waited is told it holds the lock, while the first-created live
//!   key is someone else's. `Unlock` deletes the key.
//! - The fencing token is the key's create revision (`myRev`; etcd `Mutex.Header()` /
//!   `IsOwner()` compare it).
//!
//! What the holder does with the session (`on_session_done`): `Stop` (default) believes the
//! lock until the session's `Done` (the keepalive deadline, or a keepalive answered lease not
//! found), as an application selecting on `Session.Done()` does; `Ignore` never consults it
//! (Jepsen's and many applications' clients: the lock is believed until released), the
//! "Lock with an expired session" variant.
//!
//! The worker's lock round is one `etcdctl lock`-like use (etcdctl/ctlv3/command/
//! lock_command.go): a new session per acquisition, `Lock`, work, `Unlock`, `Session.Close`.
//!
//! Not modelled: the value of the key, `TryLock`, `Election` (Campaign / Proclaim / Resign /
//! Observe), watch compaction (`ErrCompacted`), the 500 ms granularity of the deadline loop.

use super::client::RaftClientTimer;
use super::msg::{Kv, LeaseId, RaftMsg, RangeOrder};
use crate::context::{Ctx, Wraps};
use crate::lock_event::LockEvent;
use crate::observation::Obs;
use serde::Serialize;
use splitbrain_engine::{LocalTime, NodeId, Observation, SimDuration, TimerId};

/// etcd's `sendKeepAliveLoop` period (client/v3/lease.go): a lease whose `nextKeepAlive` has
/// passed is kept alive again this often until a response arrives.
pub const KEEPALIVE_RESEND: SimDuration = SimDuration::from_millis(500);

/// What the holder does when its session ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OnSessionDone {
    /// Stop believing at the session's `Done` (default).
    #[default]
    Stop,
    /// Never consult the session: hold until released.
    Ignore,
}

/// How an etcd mutex client behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdMutexConfig {
    /// The replicas, tried in this order from the first.
    pub replicas: Vec<NodeId>,
    /// The lock's name; the mutex prefix is `name + "/"`.
    pub lock: String,
    /// The session's lease TTL, ns (etcd's default 60 s).
    pub ttl: SimDuration,
    /// How long to wait for an answer before trying the next replica, ns.
    pub request_timeout: SimDuration,
    /// `Get(myKey)` after waiting (etcd v3.5.0 on); false: v3.4.3's `Lock`.
    pub recheck_own_key: bool,
    /// What the holder does when its session ends.
    pub on_session_done: OnSessionDone,
}

/// What the client claims.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum EtcdObs {
    /// `Lock` returned success: the client holds the lock with token `revision`.
    Acquired {
        /// The fencing token (`myRev`).
        revision: u64,
        /// The session's lease.
        lease: LeaseId,
        /// Local deadline (the session's keepalive deadline; far future with `Ignore`).
        deadline: LocalTime,
    },
    /// A keepalive moved the holder's deadline.
    Extended {
        /// The fencing token.
        revision: u64,
        /// The new deadline.
        deadline: LocalTime,
    },
    /// `Lock` failed.
    Failed {
        /// Why, in etcd's words.
        reason: &'static str,
    },
    /// The holder stopped believing (its session ended).
    Lost {
        /// The fencing token it held.
        revision: u64,
        /// Why.
        reason: &'static str,
    },
    /// The holder released (it stops acting at once).
    Released {
        /// The fencing token it held.
        revision: u64,
    },
}

impl Observation for EtcdObs {
    fn kind(&self) -> &'static str {
        match self {
            EtcdObs::Acquired { .. } => "etcd_mutex_acquired",
            EtcdObs::Extended { .. } => "etcd_mutex_extended",
            EtcdObs::Failed { .. } => "etcd_mutex_failed",
            EtcdObs::Lost { .. } => "etcd_mutex_lost",
            EtcdObs::Released { .. } => "etcd_mutex_released",
        }
    }
}

/// The client's effects: network, own clock, timers, observations.
pub trait EtcdClientEnv {
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
    fn observe(&mut self, obs: EtcdObs);
}

/// The session: a lease and its keepalive state.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Session {
    lease: LeaseId,
    /// The keepalive channel's deadline (`recvKeepAlive`: receipt + TTL).
    deadline: LocalTime,
    /// `Done` closed.
    done: bool,
    /// The outstanding keepalive's request id.
    keepalive: Option<u64>,
}

/// Where `Lock` / `Unlock` / `Close` stand; each step waits for one request.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Idle,
    /// `NewSession`: `Grant` outstanding.
    Granting {
        req: u64,
    },
    /// `tryAcquire`'s txn outstanding.
    Txn {
        req: u64,
    },
    /// `waitDeletes`: the `Get(pfx, WithLastCreate, WithMaxCreateRev)` outstanding.
    Ranging {
        req: u64,
    },
    /// `waitDelete` on `key` (created at `create_revision`); `acked`: the registration was
    /// answered `WatchPending` (the retry timer then re-registers at the same replica).
    Watching {
        req: u64,
        key: String,
        create_revision: u64,
        acked: bool,
    },
    /// The v3.5 re-check: `Get(myKey)` outstanding.
    Rechecking {
        req: u64,
    },
    /// `Lock` returned success.
    Holding,
    /// `Unlock`: `Delete(myKey)` outstanding.
    Unlocking {
        req: u64,
    },
    /// `Session.Close`: `Revoke(lease)` outstanding.
    Closing {
        req: u64,
    },
}

/// An etcd `concurrency` Session + Mutex client. `H` is the environment's timer handle type.
#[derive(Clone, Debug)]
pub struct EtcdMutexClient<H> {
    cfg: EtcdMutexConfig,
    target: usize,
    next_req: u64,
    step: Step,
    session: Option<Session>,
    my_key: String,
    my_rev: u64,
    /// `acquire` was called while a previous round's `Unlock`/`Close` was outstanding.
    then_acquire: bool,
    retry: Option<H>,
    keepalive: Option<H>,
    deadline: Option<H>,
}

impl<H: Copy> EtcdMutexClient<H> {
    /// An idle client. Panics on an empty replica list (the scenario layer validates first).
    pub fn new(cfg: EtcdMutexConfig) -> Self {
        assert!(!cfg.replicas.is_empty(), "an etcd client needs replicas");
        EtcdMutexClient {
            cfg,
            target: 0,
            next_req: 1,
            step: Step::Idle,
            session: None,
            my_key: String::new(),
            my_rev: 0,
            then_acquire: false,
            retry: None,
            keepalive: None,
            deadline: None,
        }
    }

    /// The mutex prefix (`name + "/"`, etcd `NewMutex`).
    pub fn prefix(&self) -> String {
        format!("{}/", self.cfg.lock)
    }

    /// The fencing token and local deadline while `Lock` has returned and not been undone.
    pub fn hold(&self) -> Option<(u64, LocalTime)> {
        match self.step {
            Step::Holding => Some((self.my_rev, self.belief_deadline())),
            _ => None,
        }
    }

    /// True while nothing is outstanding and no session is open.
    pub fn is_idle(&self) -> bool {
        self.step == Step::Idle
    }

    fn belief_deadline(&self) -> LocalTime {
        match self.cfg.on_session_done {
            OnSessionDone::Ignore => LocalTime(u64::MAX),
            OnSessionDone::Stop => self.session.as_ref().map_or(LocalTime(0), |s| s.deadline),
        }
    }

    /// `NewSession` then `Lock` (ignored unless idle; after an outstanding release, it
    /// starts once that release is answered).
    pub fn acquire<E: EtcdClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        match self.step {
            Step::Idle => {
                let req = self.fresh_req();
                self.step = Step::Granting { req };
                self.send_current(env);
            }
            Step::Unlocking { .. } | Step::Closing { .. } => self.then_acquire = true,
            _ => {}
        }
    }

    /// `Unlock` then `Session.Close`: the holder stops acting at once.
    pub fn release<E: EtcdClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        if self.step == Step::Holding {
            env.observe(EtcdObs::Released {
                revision: self.my_rev,
            });
            let req = self.fresh_req();
            self.step = Step::Unlocking { req };
            self.send_current(env);
        }
    }

    /// A timer came due.
    pub fn on_timer<E: EtcdClientEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        timer: RaftClientTimer,
    ) {
        match timer {
            RaftClientTimer::Retry => {
                self.retry = None;
                // A watch the leader acknowledged is re-registered where it is; any other
                // unanswered request goes to the next replica.
                let acked = match &mut self.step {
                    Step::Watching { acked, .. } => std::mem::replace(acked, false),
                    _ => false,
                };
                if !acked {
                    self.target = (self.target + 1) % self.cfg.replicas.len();
                }
                self.send_current(env);
            }
            RaftClientTimer::KeepAlive => {
                self.keepalive = None;
                let Some(s) = &mut self.session else { return };
                if s.done {
                    return;
                }
                if s.keepalive.is_some() {
                    // The last one went unanswered: try the next replica.
                    self.target = (self.target + 1) % self.cfg.replicas.len();
                }
                let req = self.next_req;
                self.next_req += 1;
                let lease = s.lease;
                s.keepalive = Some(req);
                env.send(
                    self.cfg.replicas[self.target],
                    RaftMsg::KeepAlive { req, lease },
                );
                self.keepalive = Some(env.set_timer(KEEPALIVE_RESEND, RaftClientTimer::KeepAlive));
            }
            RaftClientTimer::Deadline => {
                self.deadline = None;
                let Some(s) = &self.session else { return };
                if s.done {
                    return;
                }
                if env.mono_now() >= s.deadline {
                    self.session_done(env, "session deadline (no keepalive answer for a TTL)");
                } else {
                    let at = s.deadline;
                    self.arm_deadline(env, at);
                }
            }
        }
    }

    /// A reply arrived from `from`.
    ///
    /// Long because it is the one match over every reply the client can get, each arm one
    /// step of the session and mutex; the longer steps (keepalive, range) are methods.
    pub fn on_message<E: EtcdClientEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        from: NodeId,
        msg: RaftMsg,
    ) {
        let keepalive_req = self.session.as_ref().and_then(|s| s.keepalive);
        match msg {
            RaftMsg::Redirect { req, leader_hint } => {
                if Some(req) != self.outstanding() && Some(req) != keepalive_req {
                    return;
                }
                let hint = leader_hint.and_then(|h| self.cfg.replicas.iter().position(|r| *r == h));
                if let Some(i) = hint.filter(|i| self.cfg.replicas[*i] != from) {
                    self.target = i;
                    if Some(req) == self.outstanding() {
                        self.send_current(env);
                    }
                }
            }
            RaftMsg::KeptAlive { req, ttl, .. } if Some(req) == keepalive_req => {
                self.kept_alive(env, from, ttl);
            }
            RaftMsg::LeaseNotFound { req, .. } if Some(req) == keepalive_req => {
                if let Some(s) = &mut self.session {
                    s.keepalive = None;
                }
                self.session_done(env, "keepalive: lease not found");
            }
            RaftMsg::LeaseGranted { req, lease, ttl } if self.step == (Step::Granting { req }) => {
                self.cancel_retry(env);
                self.remember_leader(from);
                let now = env.mono_now();
                self.session = Some(Session {
                    lease,
                    deadline: now.saturating_add(ttl),
                    done: false,
                    keepalive: None,
                });
                let deadline = now.saturating_add(ttl);
                self.arm_deadline(env, deadline);
                // KeepAlive starts at once (session.go calls client.KeepAlive after Grant).
                self.keepalive = Some(env.set_timer(SimDuration::ZERO, RaftClientTimer::KeepAlive));
                self.my_key = format!("{}{lease:x}", self.prefix());
                let req = self.fresh_req();
                self.step = Step::Txn { req };
                self.send_current(env);
            }
            RaftMsg::TxnResult {
                req,
                key_create_revision,
                owner,
                ..
            } if self.step == (Step::Txn { req }) => {
                self.cancel_retry(env);
                self.remember_leader(from);
                self.my_rev = key_create_revision;
                match owner {
                    Some(Kv {
                        create_revision, ..
                    }) if create_revision != self.my_rev => self.range(env),
                    _ => self.locked(env),
                }
            }
            RaftMsg::LeaseNotFound { req, .. } if self.step == (Step::Txn { req }) => {
                self.cancel_retry(env);
                self.fail(env, "requested lease not found");
            }
            RaftMsg::RangeResult { req, kvs, .. } => {
                self.range_result(env, from, req, kvs);
            }
            RaftMsg::WatchPending { req } => {
                if let Step::Watching { req: r, acked, .. } = &mut self.step {
                    if *r == req {
                        *acked = true;
                        self.remember_leader(from);
                    }
                }
            }
            RaftMsg::WatchFired { req, .. } => {
                if matches!(self.step, Step::Watching { req: r, .. } if r == req) {
                    self.cancel_retry(env);
                    self.remember_leader(from);
                    self.range(env);
                }
            }
            RaftMsg::DeleteResult { req, .. } if self.step == (Step::Unlocking { req }) => {
                self.cancel_retry(env);
                self.close(env);
            }
            RaftMsg::Released { req, .. } if self.step == (Step::Closing { req }) => {
                self.cancel_retry(env);
                self.go_idle(env);
            }
            // Late or unrelated replies.
            _ => {}
        }
    }

    /// A `KeepAlive` of the session's lease was answered with `ttl` (session.go's
    /// `recvKeepAlive`): the session lives `ttl` from now and the next keepalive goes out at a
    /// third of it; a holder that stops when its session is done reports the extension.
    fn kept_alive<E: EtcdClientEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        from: NodeId,
        ttl: SimDuration,
    ) {
        self.remember_leader(from);
        let now = env.mono_now();
        let holding = self.step == Step::Holding;
        let stop = self.cfg.on_session_done == OnSessionDone::Stop;
        let s = self.session.as_mut().expect("keepalive_req is a session's");
        s.keepalive = None;
        if s.done {
            return;
        }
        // recvKeepAlive: deadline = now + TTL, next keepalive at now + TTL/3.
        s.deadline = now.saturating_add(ttl);
        let deadline = s.deadline;
        if let Some(t) = self.keepalive.take() {
            env.cancel_timer(t);
        }
        let every = SimDuration((ttl.0 / 3).max(1));
        self.keepalive = Some(env.set_timer(every, RaftClientTimer::KeepAlive));
        self.arm_deadline(env, deadline);
        if holding && stop {
            env.observe(EtcdObs::Extended {
                revision: self.my_rev,
                deadline,
            });
        }
    }

    /// A `Range` answered with `kvs` (request `req`): while ranging, the lock is ours if no
    /// key of the prefix came before ours (after a recheck of our own key, if configured), else
    /// we watch the key just before ours; while rechecking, our key's absence means the
    /// session expired. Any other step ignores it (a late reply).
    fn range_result<E: EtcdClientEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        from: NodeId,
        req: u64,
        kvs: Vec<Kv>,
    ) {
        if self.step == (Step::Ranging { req }) {
            self.cancel_retry(env);
            self.remember_leader(from);
            match kvs.into_iter().next() {
                None if self.cfg.recheck_own_key => {
                    let req = self.fresh_req();
                    self.step = Step::Rechecking { req };
                    self.send_current(env);
                }
                None => self.locked(env),
                Some(kv) => {
                    let req = self.fresh_req();
                    self.step = Step::Watching {
                        req,
                        key: kv.key,
                        create_revision: kv.create_revision,
                        acked: false,
                    };
                    self.send_current(env);
                }
            }
        } else if self.step == (Step::Rechecking { req }) {
            self.cancel_retry(env);
            self.remember_leader(from);
            if kvs.is_empty() {
                // ErrSessionExpired: the key is gone; Lock returns without Unlock.
                self.fail(env, "mutex: session is expired");
            } else {
                self.locked(env);
            }
        }
    }

    /// Forgets all volatile state (the owning node crashed; the engine dropped its timers).
    /// Request ids keep counting.
    pub fn reset(&mut self) {
        self.step = Step::Idle;
        self.session = None;
        self.target = 0;
        self.then_acquire = false;
        self.retry = None;
        self.keepalive = None;
        self.deadline = None;
    }

    fn fresh_req(&mut self) -> u64 {
        let r = self.next_req;
        self.next_req += 1;
        r
    }

    fn outstanding(&self) -> Option<u64> {
        match &self.step {
            Step::Granting { req }
            | Step::Txn { req }
            | Step::Ranging { req }
            | Step::Watching { req, .. }
            | Step::Rechecking { req }
            | Step::Unlocking { req }
            | Step::Closing { req } => Some(*req),
            Step::Idle | Step::Holding => None,
        }
    }

    fn remember_leader(&mut self, from: NodeId) {
        if let Some(i) = self.cfg.replicas.iter().position(|r| *r == from) {
            self.target = i;
        }
    }

    /// `waitDeletes`' read: the last-created key under the prefix created before ours.
    fn range<E: EtcdClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        let req = self.fresh_req();
        self.step = Step::Ranging { req };
        self.send_current(env);
    }

    /// `Lock` returned success.
    fn locked<E: EtcdClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        self.step = Step::Holding;
        let lease = self.session.as_ref().map_or(0, |s| s.lease);
        let deadline = self.belief_deadline();
        env.observe(EtcdObs::Acquired {
            revision: self.my_rev,
            lease,
            deadline,
        });
        let done = self.session.as_ref().map_or(true, |s| s.done);
        if done && self.cfg.on_session_done == OnSessionDone::Stop {
            // Granted on a session already `Done`: an application selecting on `Done` never
            // acts on it.
            env.observe(EtcdObs::Lost {
                revision: self.my_rev,
                reason: "session already done when Lock returned",
            });
            self.unlock_after_loss(env);
        }
    }

    /// `Lock` failed: the session is closed (its lease revoked if it may still exist).
    fn fail<E: EtcdClientEnv<TimerHandle = H>>(&mut self, env: &mut E, reason: &'static str) {
        env.observe(EtcdObs::Failed { reason });
        self.close(env);
    }

    /// The session's `Done` closed.
    fn session_done<E: EtcdClientEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        reason: &'static str,
    ) {
        let Some(s) = &mut self.session else { return };
        if s.done {
            return;
        }
        s.done = true;
        for t in [self.keepalive.take(), self.deadline.take()]
            .into_iter()
            .flatten()
        {
            env.cancel_timer(t);
        }
        if self.step == Step::Holding && self.cfg.on_session_done == OnSessionDone::Stop {
            env.observe(EtcdObs::Lost {
                revision: self.my_rev,
                reason,
            });
            self.unlock_after_loss(env);
        }
    }

    /// After a loss the application gives the lock back as `defer m.Unlock()` would.
    fn unlock_after_loss<E: EtcdClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        let req = self.fresh_req();
        self.step = Step::Unlocking { req };
        self.send_current(env);
    }

    /// `Session.Close`: revoke the lease (skipped if the session is known gone).
    fn close<E: EtcdClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        match &self.session {
            Some(s) if !s.done => {
                let req = self.fresh_req();
                self.step = Step::Closing { req };
                self.send_current(env);
            }
            _ => self.go_idle(env),
        }
    }

    fn go_idle<E: EtcdClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
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
        self.session = None;
        self.step = Step::Idle;
        if std::mem::take(&mut self.then_acquire) {
            self.acquire(env);
        }
    }

    /// (Re)sends the outstanding request to the current target and re-arms the retry timer.
    fn send_current<E: EtcdClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        let to = self.cfg.replicas[self.target];
        let lease = self.session.as_ref().map_or(0, |s| s.lease);
        let msg = match &self.step {
            Step::Idle | Step::Holding => return,
            Step::Granting { req } => RaftMsg::LeaseGrant {
                req: *req,
                ttl: self.cfg.ttl,
            },
            Step::Txn { req } => RaftMsg::MutexTxn {
                req: *req,
                key: self.my_key.clone(),
                lease,
                prefix: self.prefix(),
            },
            Step::Ranging { req } => RaftMsg::Range {
                req: *req,
                key: self.prefix(),
                prefix: true,
                max_create_revision: self.my_rev.saturating_sub(1).max(1),
                order: RangeOrder::LastCreate,
                limit: 1,
            },
            Step::Watching {
                req,
                key,
                create_revision,
                ..
            } => RaftMsg::WatchDelete {
                req: *req,
                key: key.clone(),
                create_revision: *create_revision,
            },
            Step::Rechecking { req } => RaftMsg::Range {
                req: *req,
                key: self.my_key.clone(),
                prefix: false,
                max_create_revision: 0,
                order: RangeOrder::Key,
                limit: 0,
            },
            Step::Unlocking { req } => RaftMsg::Delete {
                req: *req,
                key: self.my_key.clone(),
            },
            Step::Closing { req } => RaftMsg::Release { req: *req, lease },
        };
        env.send(to, msg);
        self.cancel_retry(env);
        self.retry = Some(env.set_timer(self.cfg.request_timeout, RaftClientTimer::Retry));
    }

    fn cancel_retry<E: EtcdClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        if let Some(t) = self.retry.take() {
            env.cancel_timer(t);
        }
    }

    fn arm_deadline<E: EtcdClientEnv<TimerHandle = H>>(&mut self, env: &mut E, at: LocalTime) {
        if let Some(t) = self.deadline.take() {
            env.cancel_timer(t);
        }
        let after = at.saturating_since(env.mono_now());
        self.deadline = Some(env.set_timer(after, RaftClientTimer::Deadline));
    }
}

/// The context an etcd mutex client runs in (the Raft lock client's).
pub trait EtcdMutexCtx: Ctx<Msg: Wraps<RaftMsg>, Timer: Wraps<RaftClientTimer>> {}

impl<C: Ctx<Msg: Wraps<RaftMsg>, Timer: Wraps<RaftClientTimer>>> EtcdMutexCtx for C {}

/// [`EtcdClientEnv`] over an [`EtcdMutexCtx`], collecting what the worker must hear.
struct Env<'a, C> {
    ctx: &'a mut C,
    lock: &'a str,
    event: Option<LockEvent>,
}

impl<C: EtcdMutexCtx> EtcdClientEnv for Env<'_, C> {
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
    fn observe(&mut self, obs: EtcdObs) {
        let lock = self.lock.to_string();
        let (o, ev) = match obs {
            EtcdObs::Acquired {
                revision,
                lease,
                deadline,
            } => (
                Obs::LockAcquired {
                    thread: None,
                    lock,
                    token: Some(revision),
                    value: format!("{lease:x}"),
                    valid_until_local: deadline,
                },
                LockEvent::Acquired {
                    token: Some(revision),
                    valid_until_local: deadline,
                },
            ),
            EtcdObs::Extended { revision, deadline } => (
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
            EtcdObs::Failed { reason } => (
                Obs::LockFailed {
                    thread: None,
                    lock,
                    reason: reason.to_string(),
                },
                LockEvent::Failed,
            ),
            EtcdObs::Lost { reason, .. } => {
                let ev = match self.event {
                    Some(LockEvent::Acquired { .. }) => LockEvent::Failed,
                    _ => LockEvent::Lost,
                };
                (
                    Obs::LockLost {
                        thread: None,
                        lock,
                        reason: reason.to_string(),
                    },
                    ev,
                )
            }
            EtcdObs::Released { .. } => (
                Obs::LockReleased { thread: None, lock },
                LockEvent::Released,
            ),
        };
        self.ctx.observe(o);
        self.event = Some(ev);
    }
}

/// An etcd Session + Mutex client for a worker (module doc).
#[derive(Clone, Debug)]
pub struct EtcdMutexLock {
    client: EtcdMutexClient<TimerId>,
    lock: String,
    replicas: Vec<NodeId>,
}

impl EtcdMutexLock {
    /// An idle client of `cfg` (its `replicas` non-empty: the scenario layer validates).
    pub fn new(cfg: EtcdMutexConfig) -> Self {
        EtcdMutexLock {
            lock: cfg.lock.clone(),
            replicas: cfg.replicas.clone(),
            client: EtcdMutexClient::new(cfg),
        }
    }

    /// The lock's name.
    pub fn lock_name(&self) -> &str {
        &self.lock
    }

    fn run<C: EtcdMutexCtx>(
        &mut self,
        ctx: &mut C,
        f: impl FnOnce(&mut EtcdMutexClient<TimerId>, &mut Env<'_, C>),
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
    pub fn acquire(&mut self, ctx: &mut impl EtcdMutexCtx) {
        ctx.observe(Obs::LockRequested {
            thread: None,
            lock: self.lock.clone(),
            servers: self.replicas.clone(),
        });
        self.run(ctx, |c, e| c.acquire(e));
    }

    /// Stops acting at once, deletes the key and closes the session.
    pub fn release(&mut self, ctx: &mut impl EtcdMutexCtx) {
        self.run(ctx, |c, e| c.release(e));
    }

    /// Handles a reply from a replica.
    pub fn on_message<C: EtcdMutexCtx>(
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
    pub fn on_timer<C: EtcdMutexCtx>(
        &mut self,
        ctx: &mut C,
        timer: &C::Timer,
    ) -> Option<LockEvent> {
        let t = *timer.part()?;
        self.run(ctx, |c, e| c.on_timer(e, t))
    }

    /// The local deadline of the current hold.
    pub fn valid_until(&self) -> Option<LocalTime> {
        self.client.hold().map(|h| h.1)
    }

    /// The fencing token (the key's create revision) of the current hold.
    pub fn token(&self) -> Option<u64> {
        self.client.hold().map(|h| h.0)
    }

    /// Forgets all volatile state after a crash of the owning node.
    pub fn reset(&mut self) {
        self.client.reset();
    }
}
