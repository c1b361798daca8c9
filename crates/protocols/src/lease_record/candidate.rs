//! A leader-election candidate over a [`LeaseRecord`], as client-go's `leaderelection`
//! (`tryAcquireOrRenew`, `acquire`, `renew`) runs it. Durations are local monotonic ns.
//!
//! **One attempt** reads the record (`Get`). If its version differs from the last one seen,
//! the candidate notes it and the local instant it saw it (client-go's `observedTime`). If
//! someone else holds the record and `observed_at + duration > now` (local), the lease is
//! valid: the attempt fails. Otherwise it writes itself as holder with a compare-and-swap on
//! the version it read (`Update`): a new holder sets `acquire_time` and counts a transition, the
//! holder renewing keeps them and sets `renew_time`. An applied update makes it leader
//! (`LeaderClaim`, term = the record's version after its acquiring update, which increases
//! with every update, so terms increase across holders).
//!
//! **Which duration judges expiry** ([`JudgeBy`]): `Record` (the default, current client-go:
//! the `leaseDurationSeconds` stored by the holder) or `Own` (the candidate's own configured
//! `lease_duration`, as older client-go did): with mismatched configurations, a candidate with
//! a shorter own duration than the holder's renewal interval takes a held lease.
//!
//! **Timing.** A candidate that is not leader tries every `retry_period` with client-go's
//! jitter (`wait.JitterUntil`, factor 1.2: a uniform wait in `[retry, 2.2 retry]` from its
//! stream); the leader tries to renew every `retry_period`. A request with no reply within
//! `request_timeout` counts as a failed attempt.
//!
//! **When a leader that cannot renew steps down** ([`StepDownAfter`]). client-go v0.36.0
//! (`tools/leaderelection/leaderelection.go`): `Run` calls `acquire`, then `renew`, which is
//! `wait.UntilWithContext(ctx, round, RetryPeriod)`; a round is
//! `wait.PollUntilContextTimeout(ctx, RetryPeriod, RenewDeadline, true, tryAcquireOrRenew)`
//! and a round that times out ends `renew` (the leader stops leading). `UntilWithContext` runs
//! the first round at once and each next one `RetryPeriod` after the previous returned
//! (apimachinery `wait.BackoffUntil`, sliding); a round tries at once (`immediate` true) and
//! gives up `RenewDeadline` after it began. So, with
//! [`StepDownAfter::RetryPeriodAndRenewDeadline`] (the default):
//!
//! - right after acquiring, a renewal round starts at once: an immediate attempt, and a step
//!   down `renew_deadline` later unless an attempt succeeds first;
//! - after a successful renewal the next round starts `retry_period` later, so a leader that
//!   can no longer reach the record steps down `retry_period + renew_deadline` after its last
//!   success (12 s with client-go's 15 s / 10 s / 2 s).
//!
//! [`StepDownAfter::RenewDeadline`] steps down `renew_deadline` after the last success, with no
//! renewal at once after acquiring: client-go v7.0.0 (Kubernetes 1.10), whose `renew` was
//! `wait.Until(round, 0)` with the round `wait.Poll(RetryPeriod, RenewDeadline, ...)`: the next
//! round began at the success, tried first `retry_period` later (`wait.Poll` does not try at
//! once) and gave up `renew_deadline` after the success. Format 1's model; with
//! [`StepDownCheck::BetweenAttempts`] it is v7.0.0's loop.
//!
//! **How the deadline is judged** ([`StepDownCheck`]). Since kubernetes PR #65094 (June 2018,
//! "set leader election client and renew timeout") the round's deadline is a context timeout
//! that also cancels the request in flight: the leader steps down when the deadline passes
//! ([`StepDownCheck::Timer`], the default), and a reply that comes later is dropped. Before
//! it, `renew` used `wait.Poll(RetryPeriod, RenewDeadline, ...)`, which looks at its timeout
//! only between calls of the condition ("wait.Poll check timeout before running
//! ConditionFunc. If ConditionFunc takes too long, it can not quit quickly", the PR's
//! review): [`StepDownCheck::BetweenAttempts`] steps down at the deadline only when no attempt
//! (read and write) is running, else when that attempt fails; an attempt that succeeds late
//! renews. A hung renew (no client-side timeout) is this with a `request_timeout` longer than
//! the run: the leader cut off from the record never steps down.
//!
//! **Clock-rate safety.** A holder cut off keeps believing `retry_period + renew_deadline`
//! (its clock) after its last renewal, and a candidate takes over `lease_duration` (its clock)
//! after it last saw a change, so the pair is safe only while the candidate's clock runs less
//! than `lease_duration / (retry_period + renew_deadline)` times as fast as the holder's (1.25
//! with client-go's 15 s / 10 s / 2 s defaults; `lease_duration / renew_deadline` = 1.5 under
//! [`StepDownAfter::RenewDeadline`]).
//!
//! After a crash it starts as a fresh candidate (nothing is durable).

use super::{LeaseRecord, RecordMsg};
use crate::context::{Ctx, Role, Wraps};
use crate::observation::Obs;
use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId, SimDuration, TimerId};

/// Which lease duration a candidate judges expiry with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JudgeBy {
    /// The duration the holder stored in the record (current client-go).
    #[default]
    Record,
    /// The candidate's own configured `lease_duration` (older client-go).
    Own,
}

/// When a leader that cannot renew steps down (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepDownAfter {
    /// client-go since July 2018: `retry_period + renew_deadline` after the last successful
    /// renewal (`renew_deadline` after acquiring, whose renewal round starts at once).
    #[default]
    RetryPeriodAndRenewDeadline,
    /// `renew_deadline` after the last successful renewal (client-go v7.0.0's loop).
    RenewDeadline,
}

/// How a leader judges its renewal deadline (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepDownCheck {
    /// A timer: at the deadline it steps down and drops the request in flight (client-go
    /// since kubernetes PR #65094).
    #[default]
    Timer,
    /// Only between attempts: at the deadline it steps down if no attempt runs, else when the
    /// running attempt fails (client-go before PR #65094; with a long `request_timeout`, a
    /// hung renew).
    BetweenAttempts,
}

/// Candidate configuration (client-go's `LeaderElectionConfig`), local ns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CandidateConfig {
    /// The record node.
    pub record: NodeId,
    /// How long a non-leader waits since it last saw the record change before it may take it
    /// (default 15 s); also what it stores as holder.
    pub lease_duration: SimDuration,
    /// How long the leader keeps trying to renew before it steps down (default 10 s).
    pub renew_deadline: SimDuration,
    /// Wait between attempts (default 2 s).
    pub retry_period: SimDuration,
    /// Wait for a reply before counting the attempt failed (default 1 s).
    pub request_timeout: SimDuration,
    /// Which duration judges expiry (default [`JudgeBy::Record`]).
    pub judge_by: JudgeBy,
    /// When a leader that cannot renew steps down (default
    /// [`StepDownAfter::RetryPeriodAndRenewDeadline`]).
    pub step_down_after: StepDownAfter,
    /// How the renewal deadline is judged (default [`StepDownCheck::Timer`]).
    pub step_down_check: StepDownCheck,
}

impl CandidateConfig {
    /// client-go's usual values: 15 s / 10 s / 2 s, request timeout 1 s, judge by the record,
    /// client-go's renewal loop.
    pub fn new(record: NodeId) -> Self {
        CandidateConfig {
            record,
            lease_duration: SimDuration::from_secs(15),
            renew_deadline: SimDuration::from_secs(10),
            retry_period: SimDuration::from_secs(2),
            request_timeout: SimDuration::from_secs(1),
            judge_by: JudgeBy::Record,
            step_down_after: StepDownAfter::RetryPeriodAndRenewDeadline,
            step_down_check: StepDownCheck::Timer,
        }
    }
}

/// Candidate timers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CandidateTimer {
    /// Time for the next attempt.
    Tick,
    /// No reply to request `req`.
    Timeout {
        /// The request.
        req: u64,
    },
    /// Check whether the leader's renewal deadline has passed.
    RenewDeadline,
}

/// The context a candidate runs in.
pub trait CandidateCtx: Ctx<Msg: Wraps<RecordMsg>, Timer: Wraps<CandidateTimer>> {}

impl<C: Ctx<Msg: Wraps<RecordMsg>, Timer: Wraps<CandidateTimer>>> CandidateCtx for C {}

/// A leader-election candidate over a lease record.
#[derive(Clone, Debug)]
pub struct LeaseCandidate {
    cfg: CandidateConfig,
    observed: Option<LeaseRecord>,
    observed_at: LocalTime,
    term: Option<u64>,
    /// The local instant at which the leader gives up renewing.
    give_up_at: LocalTime,
    /// [`StepDownCheck::BetweenAttempts`]: the deadline passed during an attempt; the leader
    /// steps down when that attempt ends without renewing.
    overdue: bool,
    deadline: Option<TimerId>,
    pending: Option<(u64, TimerId)>,
    next_req: u64,
}

impl LeaseCandidate {
    /// A candidate that tries at start.
    pub fn new(cfg: CandidateConfig) -> Self {
        LeaseCandidate {
            cfg,
            observed: None,
            observed_at: LocalTime(0),
            term: None,
            give_up_at: LocalTime(0),
            overdue: false,
            deadline: None,
            pending: None,
            next_req: 1,
        }
    }

    /// The term it claims, while it believes it leads.
    pub fn term(&self) -> Option<u64> {
        self.term
    }

    fn request(&mut self, ctx: &mut impl CandidateCtx, make: impl FnOnce(u64) -> RecordMsg) {
        let req = self.next_req;
        self.next_req += 1;
        ctx.send(self.cfg.record, make(req));
        let t = ctx.set_timer(self.cfg.request_timeout, CandidateTimer::Timeout { req });
        self.pending = Some((req, t));
    }

    /// Schedules the next attempt: `retry_period` for the leader, jittered otherwise. An
    /// attempt has just ended: a leader whose deadline passed during it steps down first
    /// ([`StepDownCheck::BetweenAttempts`]).
    fn next_attempt(&mut self, ctx: &mut impl CandidateCtx) {
        if self.overdue {
            self.overdue = false;
            self.step_down(ctx);
        }
        let r = self.cfg.retry_period.as_nanos();
        let wait = if self.term.is_some() {
            r
        } else {
            ctx.rng().uniform_inclusive(r, r + r * 6 / 5)
        };
        ctx.set_timer(SimDuration(wait), CandidateTimer::Tick);
    }

    /// Notes a record read or returned by an update: a new version resets `observed_at`.
    fn observe_record(&mut self, ctx: &mut impl CandidateCtx, record: &LeaseRecord) {
        if self.observed.as_ref().map(|o| o.version) != Some(record.version) {
            self.observed = Some(record.clone());
            self.observed_at = ctx.mono_now();
        }
    }

    fn step_down(&mut self, ctx: &mut impl CandidateCtx) {
        if let Some(term) = self.term.take() {
            ctx.observe(Obs::LeaderStepDown { term });
        }
        if let Some(d) = self.deadline.take() {
            ctx.cancel_timer(d);
        }
    }

    fn on_got(&mut self, ctx: &mut impl CandidateCtx, record: LeaseRecord) {
        self.observe_record(ctx, &record);
        let me = ctx.id();
        let duration = match self.cfg.judge_by {
            JudgeBy::Record => record.lease_duration,
            JudgeBy::Own => self.cfg.lease_duration,
        };
        let valid = self.observed_at.saturating_add(duration) > ctx.mono_now();
        if record.holder.is_some_and(|h| h != me) && valid {
            self.next_attempt(ctx);
            return;
        }
        let wall = ctx.wall_now();
        let new = if record.holder == Some(me) {
            LeaseRecord {
                renew_time: wall,
                lease_duration: self.cfg.lease_duration,
                ..record.clone()
            }
        } else {
            LeaseRecord {
                holder: Some(me),
                acquire_time: wall,
                renew_time: wall,
                lease_duration: self.cfg.lease_duration,
                transitions: record.transitions + u64::from(record.holder.is_some()),
                version: 0,
            }
        };
        let expected_version = record.version;
        self.request(ctx, |req| RecordMsg::Update {
            req,
            expected_version,
            record: new,
        });
    }

    fn on_updated(&mut self, ctx: &mut impl CandidateCtx, ok: bool, record: LeaseRecord) {
        self.observe_record(ctx, &record);
        if !ok {
            self.next_attempt(ctx);
            return;
        }
        self.overdue = false;
        let acquired = self.term.is_none();
        if acquired {
            self.term = Some(record.version);
            ctx.observe(Obs::LeaderClaim {
                term: record.version,
            });
        }
        if let Some(d) = self.deadline.take() {
            ctx.cancel_timer(d);
        }
        // How long until the leader gives up, from now (see the module doc).
        let (give_up_in, renew_at_once) = match self.cfg.step_down_after {
            StepDownAfter::RenewDeadline => (self.cfg.renew_deadline, false),
            // `renew` starts its first round at once after `acquire`.
            StepDownAfter::RetryPeriodAndRenewDeadline if acquired => {
                (self.cfg.renew_deadline, true)
            }
            StepDownAfter::RetryPeriodAndRenewDeadline => (
                self.cfg
                    .retry_period
                    .saturating_add(self.cfg.renew_deadline),
                false,
            ),
        };
        self.give_up_at = ctx.mono_now().saturating_add(give_up_in);
        self.deadline = Some(ctx.set_timer(give_up_in, CandidateTimer::RenewDeadline));
        if renew_at_once {
            self.request(ctx, |req| RecordMsg::Get { req });
        } else {
            self.next_attempt(ctx);
        }
    }

    /// The renewal deadline has passed (by the leader's clock).
    fn deadline_passed(&mut self, ctx: &mut impl CandidateCtx) {
        match (self.cfg.step_down_check, self.pending) {
            (StepDownCheck::BetweenAttempts, Some(_)) => self.overdue = true,
            (StepDownCheck::BetweenAttempts, None) => self.step_down(ctx),
            (StepDownCheck::Timer, pending) => {
                self.step_down(ctx);
                // client-go's round context cancels the request in flight; format 1's model
                // let it finish (and a late success claim again).
                if self.cfg.step_down_after == StepDownAfter::RetryPeriodAndRenewDeadline {
                    if let Some((_, t)) = pending {
                        ctx.cancel_timer(t);
                        self.pending = None;
                        self.next_attempt(ctx);
                    }
                }
            }
        }
    }
}

impl<C: CandidateCtx> Role<C> for LeaseCandidate {
    /// Runs at true time 0: the first attempt.
    fn on_start(&mut self, ctx: &mut C) {
        self.request(ctx, |req| RecordMsg::Get { req });
    }

    /// Handles the record's replies (others and late ones are ignored).
    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg) {
        if from != self.cfg.record {
            return;
        }
        let Some(msg) = msg.into_part() else { return };
        let req = match &msg {
            RecordMsg::Got { req, .. } | RecordMsg::Updated { req, .. } => *req,
            _ => return,
        };
        match self.pending {
            Some((r, t)) if r == req => {
                ctx.cancel_timer(t);
                self.pending = None;
            }
            _ => return,
        }
        match msg {
            RecordMsg::Got { record, .. } => self.on_got(ctx, record),
            RecordMsg::Updated { ok, record, .. } => self.on_updated(ctx, ok, record),
            _ => {}
        }
    }

    /// Handles its timers.
    fn on_timer(&mut self, ctx: &mut C, timer: C::Timer) {
        let Some(t) = timer.into_part() else { return };
        match t {
            CandidateTimer::Tick => {
                if self.pending.is_none() {
                    self.request(ctx, |req| RecordMsg::Get { req });
                }
            }
            CandidateTimer::Timeout { req } => {
                if self.pending.map(|(r, _)| r) == Some(req) {
                    self.pending = None;
                    self.next_attempt(ctx);
                }
            }
            CandidateTimer::RenewDeadline => {
                self.deadline = None;
                if self.term.is_none() {
                    return;
                }
                let now = ctx.mono_now();
                if now >= self.give_up_at {
                    self.deadline_passed(ctx);
                } else {
                    // Fired early: the clock slowed after the timer was set (the engine keeps
                    // a timer's true instant). Wait for the rest of the local time.
                    self.deadline = Some(ctx.set_timer(
                        self.give_up_at.saturating_since(now),
                        CandidateTimer::RenewDeadline,
                    ));
                }
            }
        }
    }

    /// Starts over as a fresh candidate.
    fn on_restart(&mut self, ctx: &mut C, _durable: &C::Durable) {
        let next_req = self.next_req;
        *self = LeaseCandidate::new(self.cfg.clone());
        self.next_req = next_req;
        self.request(ctx, |req| RecordMsg::Get { req });
    }
}
