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

pub mod lock;

use crate::context::{Ctx, Role, Wraps};
use crate::observation::Obs;
use crate::storage::StorageMsg;
use lock::{LockClient, LockClientCtx, LockConfig, LockEvent};
use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId, SimDuration, TimerId};

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

/// The context a worker runs in: its lock clients' ([`LockClientCtx`]), plus messages that
/// wrap [`StorageMsg`] (its writes and their acks) and timers that wrap [`WorkerTimer`].
pub trait WorkerCtx:
    LockClientCtx + Ctx<Msg: Wraps<StorageMsg>, Timer: Wraps<WorkerTimer>>
{
}

impl<C> WorkerCtx for C where
    C: LockClientCtx + Ctx<Msg: Wraps<StorageMsg>, Timer: Wraps<WorkerTimer>>
{
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

/// A worker.
#[derive(Clone, Debug)]
pub struct Worker {
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

impl Worker {
    /// A worker that starts its first round after `start_after`.
    pub fn new(cfg: WorkerConfig) -> Self {
        Worker {
            client: LockClient::new(cfg.lock.clone()),
            cfg,
            phase: Phase::Waiting,
            rounds_done: 0,
            job: 1,
            deadline: None,
            timer: None,
            extend_timer: None,
            next_req: 1,
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
        ctx.observe(Obs::WriteSent { req, token, job });
        self.phase = Phase::AwaitAck { req };
        self.set(ctx, self.cfg.ack_timeout, WorkerTimer::AckTimeout);
    }
}

impl<C: WorkerCtx> Role<C> for Worker {
    /// Runs at true time 0.
    fn on_start(&mut self, ctx: &mut C) {
        if self.cfg.start_after == SimDuration::ZERO {
            self.begin_round(ctx);
        } else {
            self.set(ctx, self.cfg.start_after, WorkerTimer::Begin);
        }
    }

    /// Handles a message: storage acks here, everything else to the lock client.
    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg) {
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
        if let Some(ev) = self.client.on_message(ctx, from, &msg) {
            self.on_lock_event(ctx, ev);
        }
    }

    /// Handles a timer: the worker's own, or its lock client's.
    fn on_timer(&mut self, ctx: &mut C, timer: C::Timer) {
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
    fn on_restart(&mut self, ctx: &mut C, _durable: &C::Durable) {
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
