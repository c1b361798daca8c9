//! The lease client: the client side of the lease service, driven by a worker (as one of its
//! lock clients) or by a lease-based leader; it reports to them through [`LockEvent`].
//!
//! **Belief rule.** The client considers itself holder until
//! `local send time of the (re)acquire/renew request + ttl - safety_margin`, on its own
//! monotonic clock, measured from when the request was **sent** (never from when the reply
//! arrived): the service starts its TTL no earlier than it receives the request, so with
//! clocks that run at the same rate the client's deadline comes no later than the service's
//! expiry (Gray & Cheriton 1989, section 2: the client's lease term is conservative by the
//! message delay; `safety_margin` covers clock rate differences). A timer at that deadline
//! ends the belief with `LockLost` unless a renewal succeeded first.
//!
//! **Renewal.** With `renew_every: Some(p)`, the holder sends `Renew` every `p` (local) from
//! the grant. A successful renewal moves the deadline to `renew send time + ttl - margin`.
//! A denied renewal means the service no longer knows this grant.
//!
//! **Belief policy** ([`RenewFailure`], `on_renew_failure`), what the client believes while
//! renewals fail:
//! - `StopAtDeadline` (the default, and the rule above): a denied renewal ends the belief at
//!   once (`LockLost`); a timed-out one changes nothing, the deadline timer decides.
//! - `Grace(g)`: as `StopAtDeadline`, but the belief lasts until `deadline + g` (ZooKeeper's
//!   Curator: SUSPENDED on disconnection, LOST only when the session is known to be gone;
//!   Consul's sessions, which the server itself keeps up to 2 x TTL). A renewal that succeeds
//!   within the grace carries on as usual.
//! - `UntilDenied`: the deadline ends nothing; the client believes until a reply says no
//!   (a denied renewal), as a client does that trusts its session until the reconnected
//!   server says it expired. Without renewals it believes until it releases.
//! - `KeepBelieving`, **the classic bug** (also written `stop_on_renew_failure: false`): on a
//!   denied or timed-out renewal the client carries on as if it had succeeded, extending its
//!   own belief to `renew send time + ttl - margin` (observed as `LockRenewed`, which is its
//!   belief), so it never emits `LockLost` while renewals keep failing. Without renewals
//!   (`renew_every: None`) it loses the lock at the deadline like `StopAtDeadline`.
//!
//! **Renewal attempts** (`renew_attempts: Some(k)`, default `None`: no limit): after `k`
//! consecutive failed renewals (denied or timed out, as counted before the policy acts) the
//! client stops renewing but keeps believing, with no deadline, until it releases: the bug of
//! a lock watchdog that dies quietly while the application still thinks it holds the lock
//! (Redisson's watchdog, issue reports of a renewal task that stopped after an error).
//!
//! **Replies.** Replies are matched by request id; a late reply to an abandoned request is
//! ignored, except a late `Granted`, which the client releases at once (it does not want a
//! lease it gave up on, and the service frees it sooner). Request ids keep counting across
//! [`LeaseClient::reset`], standing in for the fresh session id a restarted process draws, so
//! a reply to a request sent before a crash never matches a request sent after it.

use super::service::LeaseMsg;
use crate::context::{Ctx, Wraps};
use crate::lock_event::LockEvent;
use crate::observation::Obs;
use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId, SimDuration, TimerId};

/// Lease client configuration. Durations are local monotonic ns of the client's clock
/// (the TTL is also sent to the service, which measures it on its own clock).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseClientConfig {
    /// The lease service node.
    pub service: NodeId,
    /// Lease name (the lock's name in observations).
    pub lease: String,
    /// Requested TTL (default 10 s).
    pub ttl: SimDuration,
    /// Renewal period, from the grant and then from each renewal sent (default `None`: no
    /// renewal, for a worker that holds briefly).
    pub renew_every: Option<SimDuration>,
    /// Subtracted from the belief deadline (default 0: with equal clock rates the deadline,
    /// measured from the send time, is already conservative by the request's network delay;
    /// set it to at least `ttl * (max relative clock drift)` when clocks drift).
    pub safety_margin: SimDuration,
    /// How long to wait for a reply before giving up on a request (default 500 ms).
    pub request_timeout: SimDuration,
    /// What the client believes while renewals fail (default
    /// [`RenewFailure::StopAtDeadline`]; see the module doc).
    pub on_renew_failure: RenewFailure,
    /// Stop renewing after this many consecutive failed renewals, but keep believing
    /// (default `None`: renew for as long as the hold lasts).
    pub renew_attempts: Option<u32>,
}

/// What a lease client believes while its renewals fail (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RenewFailure {
    /// Denied: lose at once; timed out: lose at the local deadline (the correct client).
    #[default]
    StopAtDeadline,
    /// Believe until `deadline + grace` unless denied (ZooKeeper SUSPENDED then LOST).
    Grace(SimDuration),
    /// Believe until a renewal is denied, whatever the deadline.
    UntilDenied,
    /// Carry on as if every failed renewal had succeeded (the classic bug).
    KeepBelieving,
}

impl LeaseClientConfig {
    /// A config for lease `lease` at `service` with every other field at its default:
    /// ttl 10 s, no renewal, safety margin 0, request timeout 500 ms, stop at the deadline
    /// when renewals fail, no limit on renewal attempts.
    pub fn new(service: NodeId, lease: impl Into<String>) -> Self {
        LeaseClientConfig {
            service,
            lease: lease.into(),
            ttl: SimDuration::from_secs(10),
            renew_every: None,
            safety_margin: SimDuration::ZERO,
            request_timeout: SimDuration::from_millis(500),
            on_renew_failure: RenewFailure::StopAtDeadline,
            renew_attempts: None,
        }
    }

    /// The local instant the belief ends at if nothing is renewed, for a deadline
    /// `valid_until` (`None`: no instant, with `UntilDenied`).
    pub fn belief_end(&self, valid_until: LocalTime) -> Option<LocalTime> {
        match self.on_renew_failure {
            RenewFailure::StopAtDeadline | RenewFailure::KeepBelieving => Some(valid_until),
            RenewFailure::Grace(g) => Some(valid_until.saturating_add(g)),
            RenewFailure::UntilDenied => None,
        }
    }

    /// The belief deadline for a request sent at local `sent_at`:
    /// `sent_at + ttl - safety_margin` (no earlier than `sent_at`).
    pub fn deadline_for(&self, sent_at: LocalTime) -> LocalTime {
        sent_at.saturating_add(self.ttl.saturating_sub(self.safety_margin))
    }
}

/// Lease client timers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaseClientTimer {
    /// No reply to request `req` within `request_timeout`.
    Timeout {
        /// The request.
        req: u64,
    },
    /// Time to send a renewal.
    Renew,
    /// The belief deadline (`valid_until`) is reached.
    Deadline,
}

/// The context a lease client runs in: any composition whose messages and timers wrap the
/// client's own ([`LeaseMsg`], [`LeaseClientTimer`]).
pub trait LeaseClientCtx: Ctx<Msg: Wraps<LeaseMsg>, Timer: Wraps<LeaseClientTimer>> {}

impl<C: Ctx<Msg: Wraps<LeaseMsg>, Timer: Wraps<LeaseClientTimer>>> LeaseClientCtx for C {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pending {
    req: u64,
    sent_at: LocalTime,
    timeout: TimerId,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    Idle,
    Acquiring(Pending),
    Held {
        token: u64,
        valid_until: LocalTime,
        deadline: TimerId,
        renew: Option<TimerId>,
        renewing: Option<Pending>,
        /// Consecutive failed renewals.
        failures: u32,
        /// Gave up renewing after `renew_attempts` failures: believes with no deadline.
        gave_up: bool,
    },
}

/// A lease client (see the module doc for its rules).
#[derive(Clone, Debug)]
pub struct LeaseClient {
    cfg: LeaseClientConfig,
    state: State,
    next_req: u64,
    /// Request id of the last `Release` sent, to report its answer.
    releasing: Option<u64>,
}

impl LeaseClient {
    /// An idle client.
    pub fn new(cfg: LeaseClientConfig) -> Self {
        LeaseClient {
            cfg,
            state: State::Idle,
            next_req: 1,
            releasing: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LeaseClientConfig {
        &self.cfg
    }

    /// The lease name.
    pub fn lock_name(&self) -> &str {
        &self.cfg.lease
    }

    fn next_req(&mut self) -> u64 {
        let r = self.next_req;
        self.next_req += 1;
        r
    }

    fn send(&self, ctx: &mut impl LeaseClientCtx, msg: LeaseMsg) {
        ctx.send(self.cfg.service, msg);
    }

    fn send_request(
        &mut self,
        ctx: &mut impl LeaseClientCtx,
        make: impl FnOnce(u64) -> LeaseMsg,
    ) -> Pending {
        let req = self.next_req();
        let sent_at = ctx.mono_now();
        self.send(ctx, make(req));
        let timeout = ctx.set_timer(self.cfg.request_timeout, LeaseClientTimer::Timeout { req });
        Pending {
            req,
            sent_at,
            timeout,
        }
    }

    /// Starts an acquisition (no effect unless idle). Observes `LockRequested`.
    pub fn acquire(&mut self, ctx: &mut impl LeaseClientCtx) {
        if self.state != State::Idle {
            return;
        }
        let (lease, ttl) = (self.cfg.lease.clone(), self.cfg.ttl);
        let p = self.send_request(ctx, |req| LeaseMsg::Acquire { req, lease, ttl });
        self.state = State::Acquiring(p);
        ctx.observe(Obs::LockRequested {
            thread: None,
            lock: self.cfg.lease.clone(),
            servers: vec![self.cfg.service],
        });
    }

    /// Releases the lease if held (fire-and-forget: observes `LockReleased` when the request is
    /// sent). An acquisition in progress is abandoned (`LockFailed`, "abandoned").
    pub fn release(&mut self, ctx: &mut impl LeaseClientCtx) {
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Idle => {}
            State::Acquiring(p) => {
                ctx.cancel_timer(p.timeout);
                ctx.observe(Obs::LockFailed {
                    thread: None,
                    lock: self.cfg.lease.clone(),
                    reason: "abandoned".to_string(),
                });
            }
            State::Held {
                token,
                deadline,
                renew,
                renewing,
                ..
            } => {
                Self::cancel_hold_timers(ctx, deadline, renew, renewing);
                let req = self.next_req();
                self.releasing = Some(req);
                let lease = self.cfg.lease.clone();
                self.send(ctx, LeaseMsg::Release { req, lease, token });
                ctx.observe(Obs::LockReleased {
                    thread: None,
                    lock: self.cfg.lease.clone(),
                });
            }
        }
    }

    fn cancel_hold_timers(
        ctx: &mut impl LeaseClientCtx,
        deadline: TimerId,
        renew: Option<TimerId>,
        renewing: Option<Pending>,
    ) {
        ctx.cancel_timer(deadline);
        if let Some(r) = renew {
            ctx.cancel_timer(r);
        }
        if let Some(p) = renewing {
            ctx.cancel_timer(p.timeout);
        }
    }

    /// Ends the belief without releasing: observes `LockLost`.
    fn lose(&mut self, ctx: &mut impl LeaseClientCtx, reason: &str) -> Option<LockEvent> {
        if let State::Held {
            deadline,
            renew,
            renewing,
            ..
        } = std::mem::replace(&mut self.state, State::Idle)
        {
            Self::cancel_hold_timers(ctx, deadline, renew, renewing);
            ctx.observe(Obs::LockLost {
                thread: None,
                lock: self.cfg.lease.clone(),
                reason: reason.to_string(),
            });
            return Some(LockEvent::Lost);
        }
        None
    }

    fn fail(&mut self, ctx: &mut impl LeaseClientCtx, reason: String) -> Option<LockEvent> {
        self.state = State::Idle;
        ctx.observe(Obs::LockFailed {
            thread: None,
            lock: self.cfg.lease.clone(),
            reason,
        });
        Some(LockEvent::Failed)
    }

    /// Moves the belief deadline of the current hold to `valid_until` (re-arming its timer)
    /// and observes `LockRenewed`; loses the lock instead if that instant has already passed.
    fn extend_to(
        &mut self,
        ctx: &mut impl LeaseClientCtx,
        new_until: LocalTime,
    ) -> Option<LockEvent> {
        let now = ctx.mono_now();
        let end = self.cfg.belief_end(new_until);
        if end.is_some_and(|end| now >= end) {
            return self.lose(ctx, "renewed too late: local deadline passed");
        }
        let State::Held {
            token,
            valid_until,
            deadline,
            ..
        } = &mut self.state
        else {
            return None;
        };
        let token = *token;
        if new_until > *valid_until {
            ctx.cancel_timer(*deadline);
            let end = end.unwrap_or(new_until);
            *deadline = ctx.set_timer(end.saturating_since(now), LeaseClientTimer::Deadline);
            *valid_until = new_until;
        }
        let valid_until = *valid_until;
        ctx.observe(Obs::LockRenewed {
            thread: None,
            lock: self.cfg.lease.clone(),
            token: Some(token),
            valid_until_local: valid_until,
        });
        Some(LockEvent::Extended {
            valid_until_local: valid_until,
        })
    }

    /// A renewal failed (denied or timed out).
    fn renew_failed(
        &mut self,
        ctx: &mut impl LeaseClientCtx,
        sent_at: LocalTime,
        denied: bool,
    ) -> Option<LockEvent> {
        if let (
            State::Held {
                failures,
                gave_up,
                renew,
                ..
            },
            Some(k),
        ) = (&mut self.state, self.cfg.renew_attempts)
        {
            *failures += 1;
            if *failures >= k {
                // The watchdog gives up quietly: no more renewals, and the belief stays.
                *gave_up = true;
                if let Some(r) = renew.take() {
                    ctx.cancel_timer(r);
                }
                return None;
            }
        }
        match self.cfg.on_renew_failure {
            RenewFailure::StopAtDeadline | RenewFailure::Grace(_) | RenewFailure::UntilDenied => {
                if denied {
                    return self.lose(ctx, "renewal denied");
                }
                None // the deadline timer (and the grace) decides
            }
            RenewFailure::KeepBelieving => {
                // The classic bug: carry on as if the renewal had gone through.
                let until = self.cfg.deadline_for(sent_at);
                self.extend_to(ctx, until)
            }
        }
    }

    /// Handles a reply from the lease service; `None` if nothing changed for the caller.
    pub fn on_message<C: LeaseClientCtx>(
        &mut self,
        ctx: &mut C,
        from: NodeId,
        msg: &C::Msg,
    ) -> Option<LockEvent> {
        let msg = msg.part()?;
        if from != self.cfg.service {
            return None;
        }
        match msg {
            LeaseMsg::Granted { req, token, .. } => {
                let token = *token;
                match self.state {
                    State::Acquiring(p) if p.req == *req => {
                        ctx.cancel_timer(p.timeout);
                        let valid_until = self.cfg.deadline_for(p.sent_at);
                        let now = ctx.mono_now();
                        if now >= valid_until {
                            let lease = self.cfg.lease.clone();
                            let req = self.next_req();
                            self.send(ctx, LeaseMsg::Release { req, lease, token });
                            return self.fail(ctx, "granted after the local deadline".to_string());
                        }
                        let end = self.cfg.belief_end(valid_until).unwrap_or(valid_until);
                        let deadline =
                            ctx.set_timer(end.saturating_since(now), LeaseClientTimer::Deadline);
                        let renew = self
                            .cfg
                            .renew_every
                            .map(|p| ctx.set_timer(p, LeaseClientTimer::Renew));
                        self.state = State::Held {
                            token,
                            valid_until,
                            deadline,
                            renew,
                            renewing: None,
                            failures: 0,
                            gave_up: false,
                        };
                        ctx.observe(Obs::LockAcquired {
                            thread: None,
                            lock: self.cfg.lease.clone(),
                            token: Some(token),
                            value: token.to_string(),
                            valid_until_local: valid_until,
                        });
                        Some(LockEvent::Acquired {
                            token: Some(token),
                            valid_until_local: valid_until,
                        })
                    }
                    _ => {
                        // A grant we gave up on: hand it back (the guard is belt and braces:
                        // every grant carries a new token, so it is never the hold we have).
                        if self.token() != Some(token) {
                            let lease = self.cfg.lease.clone();
                            let req = self.next_req();
                            self.send(ctx, LeaseMsg::Release { req, lease, token });
                        }
                        None
                    }
                }
            }
            LeaseMsg::Denied { req, reason, .. } => match self.state {
                State::Acquiring(p) if p.req == *req => {
                    ctx.cancel_timer(p.timeout);
                    self.fail(ctx, format!("denied: {reason}"))
                }
                State::Held {
                    renewing: Some(p), ..
                } if p.req == *req => {
                    ctx.cancel_timer(p.timeout);
                    self.clear_renewing();
                    self.renew_failed(ctx, p.sent_at, true)
                }
                _ => None,
            },
            LeaseMsg::Renewed { req, .. } => match self.state {
                State::Held {
                    renewing: Some(p), ..
                } if p.req == *req => {
                    ctx.cancel_timer(p.timeout);
                    self.clear_renewing();
                    if let State::Held { failures, .. } = &mut self.state {
                        *failures = 0;
                    }
                    let until = self.cfg.deadline_for(p.sent_at);
                    self.extend_to(ctx, until)
                }
                _ => None,
            },
            LeaseMsg::Released { req, .. } => {
                if self.releasing == Some(*req) {
                    self.releasing = None;
                    Some(LockEvent::Released)
                } else {
                    None
                }
            }
            LeaseMsg::Acquire { .. } | LeaseMsg::Renew { .. } | LeaseMsg::Release { .. } => None,
        }
    }

    fn clear_renewing(&mut self) {
        if let State::Held { renewing, .. } = &mut self.state {
            *renewing = None;
        }
    }

    /// Handles one of this client's timers (others: `None`); `None` if nothing changed for the
    /// caller.
    pub fn on_timer<C: LeaseClientCtx>(&mut self, ctx: &mut C, t: &C::Timer) -> Option<LockEvent> {
        let t = t.part()?;
        match *t {
            LeaseClientTimer::Timeout { req } => match self.state {
                State::Acquiring(p) if p.req == req => self.fail(ctx, "timeout".to_string()),
                State::Held {
                    renewing: Some(p), ..
                } if p.req == req => {
                    self.clear_renewing();
                    self.renew_failed(ctx, p.sent_at, false)
                }
                _ => None,
            },
            LeaseClientTimer::Renew => {
                let (
                    State::Held {
                        token, renewing, ..
                    },
                    Some(every),
                ) = (&self.state, self.cfg.renew_every)
                else {
                    return None;
                };
                let (token, in_flight) = (*token, renewing.is_some());
                let pending = if in_flight {
                    None
                } else {
                    let (lease, ttl) = (self.cfg.lease.clone(), self.cfg.ttl);
                    Some(self.send_request(ctx, |req| LeaseMsg::Renew {
                        req,
                        lease,
                        token,
                        ttl,
                    }))
                };
                let next = ctx.set_timer(every, LeaseClientTimer::Renew);
                if let State::Held {
                    renew, renewing, ..
                } = &mut self.state
                {
                    *renew = Some(next);
                    if pending.is_some() {
                        *renewing = pending;
                    }
                }
                None
            }
            LeaseClientTimer::Deadline => {
                let State::Held {
                    valid_until,
                    deadline,
                    gave_up: false,
                    ..
                } = &mut self.state
                else {
                    return None;
                };
                let end = self.cfg.belief_end(*valid_until)?;
                let now = ctx.mono_now();
                if now < end {
                    // Fired early: the clock slowed after the timer was set (the engine keeps
                    // a timer's true instant). Wait for the rest of the local time.
                    *deadline =
                        ctx.set_timer(end.saturating_since(now), LeaseClientTimer::Deadline);
                    return None;
                }
                let reason = match self.cfg.on_renew_failure {
                    RenewFailure::Grace(_) => "grace after the local deadline passed",
                    _ => "local deadline passed without renewal",
                };
                self.lose(ctx, reason)
            }
        }
    }

    /// The local monotonic deadline of the current hold, if the client believes it holds.
    pub fn valid_until(&self) -> Option<LocalTime> {
        match self.state {
            State::Held { valid_until, .. } => Some(valid_until),
            _ => None,
        }
    }

    /// The fencing token of the current hold.
    pub fn token(&self) -> Option<u64> {
        match self.state {
            State::Held { token, .. } => Some(token),
            _ => None,
        }
    }

    /// Forgets all volatile state (after a crash of the owning node; the engine has already
    /// cancelled the node's timers). Request ids keep counting (see the module doc).
    pub fn reset(&mut self) {
        self.state = State::Idle;
        self.releasing = None;
    }
}
