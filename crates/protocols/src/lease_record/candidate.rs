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
//! stream); the leader tries to renew every `retry_period`. The leader **steps down**
//! (`LeaderStepDown`) when it has not renewed successfully for `renew_deadline` since its last
//! successful renewal, by its own clock, and becomes a candidate again. A request with no
//! reply within `request_timeout` counts as a failed attempt. Clock-rate safety: a holder cut
//! off keeps believing `renew_deadline` (its clock) after its last renewal, and a candidate
//! takes over `lease_duration` (its clock) after it last saw a change, so the pair is safe
//! only while the candidate's clock runs less than `lease_duration / renew_deadline` times as
//! fast as the holder's (1.5 with client-go's 15 s / 10 s defaults).
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
}

impl CandidateConfig {
    /// client-go's usual values: 15 s / 10 s / 2 s, request timeout 1 s, judge by the record.
    pub fn new(record: NodeId) -> Self {
        CandidateConfig {
            record,
            lease_duration: SimDuration::from_secs(15),
            renew_deadline: SimDuration::from_secs(10),
            retry_period: SimDuration::from_secs(2),
            request_timeout: SimDuration::from_secs(1),
            judge_by: JudgeBy::Record,
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
    /// Check whether the leader renewed within `renew_deadline`.
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
    last_renew: LocalTime,
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
            last_renew: LocalTime(0),
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

    /// Schedules the next attempt: `retry_period` for the leader, jittered otherwise.
    fn next_attempt(&mut self, ctx: &mut impl CandidateCtx) {
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
        if ok {
            self.last_renew = ctx.mono_now();
            if self.term.is_none() {
                self.term = Some(record.version);
                ctx.observe(Obs::LeaderClaim {
                    term: record.version,
                });
            }
            if let Some(d) = self.deadline.take() {
                ctx.cancel_timer(d);
            }
            self.deadline =
                Some(ctx.set_timer(self.cfg.renew_deadline, CandidateTimer::RenewDeadline));
        }
        self.next_attempt(ctx);
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
                let since = ctx.mono_now().saturating_since(self.last_renew);
                if since >= self.cfg.renew_deadline {
                    self.step_down(ctx);
                } else {
                    // Fired early: the clock slowed after the timer was set (the engine keeps
                    // a timer's true instant). Wait for the rest of the local time.
                    self.deadline = Some(ctx.set_timer(
                        self.cfg.renew_deadline.saturating_sub(since),
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
