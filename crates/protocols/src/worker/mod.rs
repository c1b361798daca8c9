//! Workers: the lock holder whose writes the storage judges.
//!
//! One round, all durations local monotonic ns of the worker's clock:
//! 1. acquire the lock (any [`LockConfig`]); on `Failed`, retry after `think_time`;
//! 2. on `Acquired`, work for `work_time`;
//! 3. check validity by its own clock: observe `ValidityChecked { lock, valid, remaining_ns }`
//!    with `remaining_ns = valid_until - now` and `valid = (the client still believes it holds)
//!    && remaining_ns > 0`; if not valid, give up the round: release (a no-op if the client
//!    already lost the lock), observe nothing more, think, next round. A Redlock client
//!    configured with `quorum_count_check` checks by asking its instances instead
//!    ([`LockClient::start_check`]): the worker waits in [`Phase::Checking`] for
//!    [`LockEvent::Checked`] and takes its `valid` (the local deadline plays no part);
//! 4. after `write_delay`, its own step, send the write with the lock's token (observe
//!    `WriteSent`). The step is separate so a fault triggered at `validity_checked` lands
//!    exactly between the check and the write: the classic unsafe window. The worker does not
//!    look at its lock again before writing (nor does real code between a check and an I/O),
//!    so a `LockLost` inside the window does not stop the write;
//! 5. on the storage's ack (accepted or not), or after `ack_timeout` without one, release.
//!    Releasing on the ack, not when the write is sent, keeps the lock held while the write is
//!    in flight, so the next holder's write cannot overtake it under a correct lock;
//! 6. think for `think_time`, next round.
//!
//! `rounds` counts holds used (written or given up at the check); `None` runs forever.
//!
//! **Idempotent work.** With `idempotent: true`, writes carry `job: Some(id)` where every worker
//! works through the same job ids 1, 2, 3, ...: the job advances when the storage accepts the
//! write (applied or already applied), so two workers doing job 1 apply it once.
//!
//! **Crash.** A worker keeps nothing: after a restart it starts its loop from scratch at once
//! (round count and job id back to the start, no `start_after`).
//!
//! **Threads** (`threads` > 1, Redis lock only). One node runs several copies of the loop
//! above, its threads, numbered from 1, each with its own lock client, timers and request ids
//! (thread `k`'s start at `(k - 1) * 1e9 + 1`, so replies and acks find their thread), all
//! started together; every message is offered to every thread, each timer goes to the
//! thread that set it ([`ThreadTimer`]), and every claim a thread observes carries its
//! number (`thread: Some(k)`). The node's handlers run one thread's step at a time, like a
//! process's threads under one interpreter lock; a pause or crash stops every thread.
//! [`LockObject`] says whether the threads share one lock object: `ThreadLocal` (default;
//! redis-py's `Lock(thread_local=True)`: each thread's token is its own) or `Shared`
//! (redis-py's `Lock(thread_local=False)`: one token field for the node, loaded into a
//! thread's client before each of its steps and stored back after, so a thread that acquires
//! overwrites the token another thread releases with). The sharing stays inside one node:
//! nodes share no state (docs/design.md, "Nodes and actors").

pub mod lock;

use crate::context::{Ctx, Role, Wraps};
use crate::observation::Obs;
use crate::redis_lock::RedisClientTimer;
use crate::storage::StorageMsg;
use lock::{LockClient, LockClientCtx, LockConfig, LockEvent};
use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId, RngStream, SimDuration, TimerId, WallTime};

/// Whether a worker's threads share one lock object (see the module doc, "Threads").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LockObject {
    /// Each thread's token is its own (default; redis-py `Lock(thread_local=True)`).
    #[default]
    ThreadLocal,
    /// One token field for all the node's threads (redis-py `Lock(thread_local=False)`
    /// shared between threads: the bug).
    Shared,
}

/// The request id distance between two threads of a worker: thread `k` (1-based) numbers its
/// lock requests and writes from `(k - 1) * THREAD_REQUEST_IDS + 1`.
pub const THREAD_REQUEST_IDS: u64 = 1_000_000_000;

/// Worker configuration. Durations are local monotonic ns of the worker's clock.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerConfig {
    /// The lock client to drive.
    pub lock: LockConfig,
    /// The storage node to write to.
    pub storage: NodeId,
    /// Work between acquiring and the validity check (default 2 s).
    pub work_time: SimDuration,
    /// Pause between rounds, and before retrying a failed acquisition (default 1 s).
    pub think_time: SimDuration,
    /// Between the validity check and the write (default 1 ms).
    pub write_delay: SimDuration,
    /// Wait before the first round (default 0).
    pub start_after: SimDuration,
    /// Stop after this many rounds (default `None`: forever).
    pub rounds: Option<u32>,
    /// Writes carry job ids 1, 2, 3, ... (default `false`).
    pub idempotent: bool,
    /// Release anyway if no ack arrives within this (default 1 s).
    pub ack_timeout: SimDuration,
    /// While working, ask the lock client to extend the hold this often (default `None`:
    /// never). Redlock clients extend (the distlock page's extension: the extend script
    /// on every instance, counted only with a quorum and within the validity time) and so do
    /// single-instance Redis clients (their `refresh`); lease clients renew on their own
    /// `renew_every`.
    pub extend_every: Option<SimDuration>,
    /// Threads running the loop in this node (default 1; more: Redis lock only).
    pub threads: u32,
    /// Whether the threads share one lock object (default thread-local).
    pub lock_object: LockObject,
}

impl WorkerConfig {
    /// A worker on `lock` writing to `storage`, every other field at its default: work 2 s,
    /// think 1 s, write delay 1 ms, start at once, forever, not idempotent, ack timeout 1 s.
    pub fn new(lock: LockConfig, storage: NodeId) -> Self {
        WorkerConfig {
            lock,
            storage,
            work_time: SimDuration::from_secs(2),
            think_time: SimDuration::from_secs(1),
            write_delay: SimDuration::from_millis(1),
            start_after: SimDuration::ZERO,
            rounds: None,
            idempotent: false,
            ack_timeout: SimDuration::from_secs(1),
            extend_every: None,
            threads: 1,
            lock_object: LockObject::ThreadLocal,
        }
    }
}

/// Worker loop timers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerTimer {
    /// Start a round (after `start_after`, `think_time`, or a failed attempt).
    Begin,
    /// Work is done: check validity.
    Check,
    /// Send the write.
    Write,
    /// No ack came.
    AckTimeout,
    /// Time to extend the lock while working (`extend_every`).
    Extend,
}

/// A timer set by one thread of a multi-threaded worker, with the thread's number (1-based),
/// so it goes back to that thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadTimer {
    /// The thread that set it (1-based).
    pub thread: u32,
    /// The thread's own timer.
    pub timer: ThreadTimerKind,
}

/// The timers a worker thread sets: its loop's and its Redis lock client's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThreadTimerKind {
    /// A loop timer.
    Worker(WorkerTimer),
    /// A Redis lock client timer.
    Redis(RedisClientTimer),
}

/// The context a worker runs in: its lock clients' ([`LockClientCtx`]), plus messages that
/// wrap [`StorageMsg`] (its writes and their acks) and timers that wrap [`WorkerTimer`].
pub trait WorkerCtx:
    LockClientCtx + Ctx<Msg: Wraps<StorageMsg>, Timer: Wraps<WorkerTimer> + Wraps<ThreadTimer>>
{
}

impl<C> WorkerCtx for C where
    C: LockClientCtx + Ctx<Msg: Wraps<StorageMsg>, Timer: Wraps<WorkerTimer> + Wraps<ThreadTimer>>
{
}

/// One thread's view of its node's context: the node's clocks, network and RNG stream, with
/// the thread's timers wrapped in [`ThreadTimer`] and its claims stamped with its number.
pub struct ThreadCtx<'a, C> {
    ctx: &'a mut C,
    thread: u32,
}

impl<C: WorkerCtx> Ctx for ThreadCtx<'_, C> {
    type Msg = C::Msg;
    type Timer = C::Timer;
    type Durable = C::Durable;
    fn id(&self) -> NodeId {
        self.ctx.id()
    }
    fn name(&self) -> &str {
        self.ctx.name()
    }
    fn mono_now(&self) -> LocalTime {
        self.ctx.mono_now()
    }
    fn wall_now(&self) -> WallTime {
        self.ctx.wall_now()
    }
    fn send(&mut self, to: NodeId, msg: impl Into<Self::Msg>) {
        self.ctx.send(to, msg);
    }
    /// # Panics
    /// If the timer is neither a loop timer nor a Redis lock client timer (threads are
    /// validated to use the Redis lock).
    fn set_timer(&mut self, after: SimDuration, timer: impl Into<Self::Timer>) -> TimerId {
        let t: C::Timer = timer.into();
        let timer = if let Some(w) = Wraps::<WorkerTimer>::part(&t) {
            ThreadTimerKind::Worker(w.clone())
        } else if let Some(r) = Wraps::<RedisClientTimer>::part(&t) {
            ThreadTimerKind::Redis(r.clone())
        } else {
            panic!("a worker thread sets only loop and Redis lock client timers")
        };
        self.ctx.set_timer(
            after,
            ThreadTimer {
                thread: self.thread,
                timer,
            },
        )
    }
    fn cancel_timer(&mut self, id: TimerId) {
        self.ctx.cancel_timer(id);
    }
    fn rng(&mut self) -> &mut RngStream {
        self.ctx.rng()
    }
    fn observe(&mut self, mut obs: Obs) {
        obs.set_thread(Some(self.thread));
        self.ctx.observe(obs);
    }
    fn persist(&mut self, durable: impl Into<Self::Durable>) {
        self.ctx.persist(durable);
    }
}

/// Where the worker is in its loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Waiting to begin a round.
    Waiting,
    /// Acquiring the lock.
    Acquiring,
    /// Holding the lock, working.
    Working {
        /// The hold's fencing token, if any.
        token: Option<u64>,
    },
    /// Waiting for the lock client's own validity check (Redlock `quorum_count`).
    Checking {
        /// The hold's fencing token, if any.
        token: Option<u64>,
    },
    /// Checked validity; the write goes out after `write_delay`.
    Writing {
        /// The token the write will carry.
        token: Option<u64>,
    },
    /// Write sent, waiting for the ack.
    AwaitAck {
        /// Request id of the write.
        req: u64,
    },
    /// All rounds done.
    Done,
}

/// One copy of the worker loop: a single-threaded worker's only one, or one thread of a
/// multi-threaded worker.
#[derive(Clone, Debug)]
pub struct Thread {
    cfg: WorkerConfig,
    client: LockClient,
    phase: Phase,
    rounds_done: u32,
    job: u64,
    deadline: Option<LocalTime>,
    timer: Option<TimerId>,
    /// The pending `Extend` timer while working (see `WorkerConfig::extend_every`).
    extend_timer: Option<TimerId>,
    next_req: u64,
}

impl Thread {
    /// The loop of thread `index` (0-based): its lock requests and writes are numbered from
    /// `index * THREAD_REQUEST_IDS + 1`.
    fn new(cfg: WorkerConfig, index: u32) -> Self {
        let first = index as u64 * THREAD_REQUEST_IDS + 1;
        let mut client = LockClient::new(cfg.lock.clone());
        client.set_first_request(first);
        Thread {
            client,
            cfg,
            phase: Phase::Waiting,
            rounds_done: 0,
            job: 1,
            deadline: None,
            timer: None,
            extend_timer: None,
            next_req: first,
        }
    }

    /// Where the worker is in its loop.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Rounds finished so far (since the last restart).
    pub fn rounds_done(&self) -> u32 {
        self.rounds_done
    }

    /// The lock client.
    pub fn client(&self) -> &LockClient {
        &self.client
    }

    fn set(&mut self, ctx: &mut impl WorkerCtx, after: SimDuration, t: WorkerTimer) {
        if let Some(old) = self.timer.take() {
            ctx.cancel_timer(old);
        }
        self.timer = Some(ctx.set_timer(after, t));
    }

    fn begin_round(&mut self, ctx: &mut impl WorkerCtx) {
        if self.cfg.rounds.is_some_and(|n| self.rounds_done >= n) {
            self.phase = Phase::Done;
            return;
        }
        self.phase = Phase::Acquiring;
        self.deadline = None;
        self.client.acquire(ctx);
    }

    fn finish_round(&mut self, ctx: &mut impl WorkerCtx) {
        self.rounds_done += 1;
        self.client.release(ctx);
        self.deadline = None;
        if self.cfg.rounds.is_some_and(|n| self.rounds_done >= n) {
            self.phase = Phase::Done;
        } else {
            self.phase = Phase::Waiting;
            self.set(ctx, self.cfg.think_time, WorkerTimer::Begin);
        }
    }

    fn on_lock_event(&mut self, ctx: &mut impl WorkerCtx, ev: LockEvent) {
        match ev {
            LockEvent::Acquired {
                token,
                valid_until_local,
            } if self.phase == Phase::Acquiring => {
                self.deadline = Some(valid_until_local);
                self.phase = Phase::Working { token };
                self.set(ctx, self.cfg.work_time, WorkerTimer::Check);
                if let Some(every) = self.cfg.extend_every {
                    self.extend_timer = Some(ctx.set_timer(every, WorkerTimer::Extend));
                }
            }
            LockEvent::Extended { valid_until_local } if self.deadline.is_some() => {
                self.deadline = Some(valid_until_local);
            }
            LockEvent::Checked { valid } => {
                if let Phase::Checking { token } = self.phase {
                    self.conclude_check(ctx, token, Some(valid));
                }
            }
            LockEvent::Failed if self.phase == Phase::Acquiring => {
                self.phase = Phase::Waiting;
                self.set(ctx, self.cfg.think_time, WorkerTimer::Begin);
            }
            // A lost lock is noticed at the validity check (the client no longer holds it);
            // after the check it is too late to notice: that is the unsafe window.
            _ => {}
        }
    }

    fn check(&mut self, ctx: &mut impl WorkerCtx, token: Option<u64>) {
        if let Some(t) = self.extend_timer.take() {
            ctx.cancel_timer(t);
        }
        if self.client.start_check(ctx) {
            self.phase = Phase::Checking { token };
            return;
        }
        self.conclude_check(ctx, token, None);
    }

    /// Observes the validity check and writes or gives up the round; `by_client`: the lock
    /// client's own verdict (else: the local deadline's).
    fn conclude_check(
        &mut self,
        ctx: &mut impl WorkerCtx,
        token: Option<u64>,
        by_client: Option<bool>,
    ) {
        let now = ctx.mono_now();
        let deadline = self.deadline.unwrap_or(now);
        let remaining = deadline.0 as i128 - now.0 as i128;
        let remaining_ns = remaining.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        let valid =
            by_client.unwrap_or_else(|| self.client.valid_until().is_some() && remaining_ns > 0);
        // Observe first: a fault triggered by this observation (delay 0) is scheduled before
        // the write timer, so it lands between the check and the write.
        ctx.observe(Obs::ValidityChecked {
            thread: None,
            lock: self.client.lock_name().to_string(),
            valid,
            remaining_ns,
        });
        if valid {
            self.phase = Phase::Writing { token };
            self.set(ctx, self.cfg.write_delay, WorkerTimer::Write);
        } else {
            self.finish_round(ctx);
        }
    }

    fn write(&mut self, ctx: &mut impl WorkerCtx, token: Option<u64>) {
        let req = self.next_req;
        self.next_req += 1;
        let job = self.cfg.idempotent.then_some(self.job);
        let data = format!("{} round {}", ctx.name(), self.rounds_done + 1);
        ctx.send(
            self.cfg.storage,
            StorageMsg::Write {
                req,
                token,
                job,
                data,
            },
        );
        ctx.observe(Obs::WriteSent {
            thread: None,
            req,
            token,
            job,
        });
        self.phase = Phase::AwaitAck { req };
        self.set(ctx, self.cfg.ack_timeout, WorkerTimer::AckTimeout);
    }
}

impl Thread {
    /// Runs at true time 0.
    fn on_start(&mut self, ctx: &mut impl WorkerCtx) {
        if self.cfg.start_after == SimDuration::ZERO {
            self.begin_round(ctx);
        } else {
            self.set(ctx, self.cfg.start_after, WorkerTimer::Begin);
        }
    }

    /// Handles a message: storage acks here, everything else to the lock client.
    fn on_message<C: WorkerCtx>(&mut self, ctx: &mut C, from: NodeId, msg: &C::Msg) {
        if let Some(&StorageMsg::Ack { req, accepted, .. }) = msg.part() {
            if from == self.cfg.storage && self.phase == (Phase::AwaitAck { req }) {
                if let Some(t) = self.timer.take() {
                    ctx.cancel_timer(t);
                }
                if self.cfg.idempotent && accepted {
                    self.job += 1;
                }
                self.finish_round(ctx);
            }
            return;
        }
        if let Some(ev) = self.client.on_message(ctx, from, msg) {
            self.on_lock_event(ctx, ev);
        }
    }

    /// Handles a timer: the worker's own, or its lock client's.
    fn on_timer<C: WorkerCtx>(&mut self, ctx: &mut C, timer: C::Timer) {
        let t = match timer.part() {
            Some(WorkerTimer::Extend) => {
                self.extend_timer = None;
                if let (Phase::Working { .. }, Some(every)) = (self.phase, self.cfg.extend_every) {
                    self.client.extend(ctx);
                    self.extend_timer = Some(ctx.set_timer(every, WorkerTimer::Extend));
                }
                return;
            }
            Some(t) => t.clone(),
            None => {
                if let Some(ev) = self.client.on_timer(ctx, &timer) {
                    self.on_lock_event(ctx, ev);
                }
                return;
            }
        };
        self.timer = None;
        match (t, self.phase) {
            (WorkerTimer::Begin, Phase::Waiting) => self.begin_round(ctx),
            (WorkerTimer::Check, Phase::Working { token }) => self.check(ctx, token),
            (WorkerTimer::Write, Phase::Writing { token }) => self.write(ctx, token),
            (WorkerTimer::AckTimeout, Phase::AwaitAck { .. }) => self.finish_round(ctx),
            _ => {}
        }
    }

    /// Rebuilds after a crash: nothing survives; the loop starts again at once. Write request
    /// ids keep counting, standing in for a fresh process's unique ids, so an ack to a write
    /// sent before the crash never matches one sent after.
    fn on_restart(&mut self, ctx: &mut impl WorkerCtx) {
        self.client.reset();
        self.phase = Phase::Waiting;
        self.rounds_done = 0;
        self.job = 1;
        self.deadline = None;
        self.timer = None;
        self.extend_timer = None;
        self.begin_round(ctx);
    }
}

/// A worker node: one thread running the loop, or several (see the module doc, "Threads").
#[derive(Clone, Debug)]
pub struct Worker {
    threads: Vec<Thread>,
    lock_object: LockObject,
    /// The shared lock object's token field (`LockObject::Shared` only).
    token: Option<String>,
}

impl Worker {
    /// A worker whose threads start their first round after `start_after`.
    ///
    /// # Panics
    /// If `threads` is 0 (validated by the scenario layer).
    pub fn new(cfg: WorkerConfig) -> Self {
        assert!(cfg.threads >= 1, "a worker runs at least one thread");
        Worker {
            threads: (0..cfg.threads)
                .map(|i| Thread::new(cfg.clone(), i))
                .collect(),
            lock_object: cfg.lock_object,
            token: None,
        }
    }

    /// Where the (first) thread is in its loop.
    pub fn phase(&self) -> Phase {
        self.threads[0].phase
    }

    /// Rounds the (first) thread finished so far (since the last restart).
    pub fn rounds_done(&self) -> u32 {
        self.threads[0].rounds_done
    }

    /// The (first) thread's lock client.
    pub fn client(&self) -> &LockClient {
        &self.threads[0].client
    }

    /// The threads' lock clients, thread 1 first.
    pub fn clients(&self) -> impl Iterator<Item = &LockClient> {
        self.threads.iter().map(|t| &t.client)
    }

    /// Runs one step of thread `i` (0-based) in its own context; with a shared lock object,
    /// the node's token field is loaded into the thread's client first and stored back after.
    fn step<C: WorkerCtx>(
        &mut self,
        ctx: &mut C,
        i: usize,
        f: impl FnOnce(&mut Thread, &mut ThreadCtx<'_, C>),
    ) {
        let shared = self.lock_object == LockObject::Shared;
        let thread = &mut self.threads[i];
        if shared {
            thread.client.set_lock_object_token(self.token.clone());
        }
        let mut tctx = ThreadCtx {
            ctx,
            thread: i as u32 + 1,
        };
        f(thread, &mut tctx);
        if shared {
            self.token = thread.client.lock_object_token().map(str::to_string);
        }
    }
}

impl<C: WorkerCtx> Role<C> for Worker {
    /// Runs at true time 0: every thread starts, thread 1 first.
    fn on_start(&mut self, ctx: &mut C) {
        if self.threads.len() == 1 {
            return self.threads[0].on_start(ctx);
        }
        for i in 0..self.threads.len() {
            self.step(ctx, i, |t, c| t.on_start(c));
        }
    }

    /// Offers a message to every thread (each takes only its own replies and acks).
    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg) {
        if self.threads.len() == 1 {
            return self.threads[0].on_message(ctx, from, &msg);
        }
        for i in 0..self.threads.len() {
            self.step(ctx, i, |t, c| t.on_message(c, from, &msg));
        }
    }

    /// Hands a timer to the thread that set it.
    fn on_timer(&mut self, ctx: &mut C, timer: C::Timer) {
        if self.threads.len() == 1 {
            return self.threads[0].on_timer(ctx, timer);
        }
        let Some(tt) = Wraps::<ThreadTimer>::part(&timer) else {
            return;
        };
        let i = tt.thread as usize - 1;
        let inner: C::Timer = match &tt.timer {
            ThreadTimerKind::Worker(w) => w.clone().into(),
            ThreadTimerKind::Redis(r) => r.clone().into(),
        };
        if i < self.threads.len() {
            self.step(ctx, i, |t, c| t.on_timer(c, inner));
        }
    }

    /// Rebuilds after a crash: nothing survives (the shared token field neither); every
    /// thread starts its loop again at once. Write request ids keep counting, standing in for
    /// a fresh process's unique ids, so an ack to a write sent before the crash never matches
    /// one sent after.
    fn on_restart(&mut self, ctx: &mut C, _durable: &C::Durable) {
        self.token = None;
        if self.threads.len() == 1 {
            return self.threads[0].on_restart(ctx);
        }
        for i in 0..self.threads.len() {
            self.step(ctx, i, |t, c| t.on_restart(c));
        }
    }
}
