//! The Redlock client (one of the lock clients a worker drives) over N independent Redis
//! instances, as the Redis distlock page specifies it
//! (<https://redis.io/docs/latest/develop/use/patterns/distributed-locks/>, "The Redlock
//! Algorithm") and the reference clients implement it: node-redlock (requests to all
//! instances in parallel) and redlock-rb (one instance after another).
//!
//! **One attempt** (distlock page, steps 1-5):
//! 1. take `start = mono_now()` **before** the first request (variant
//!    [`StartTime::AfterReplies`]: after the last reply, which drops the time spent acquiring
//!    from `elapsed` and overstates the validity: a bug; variant [`StartTime::FirstAttempt`]:
//!    before the first request of the acquisition's first attempt, so retries count as
//!    elapsed: another bug);
//! 2. send `SET key value NX PX ttl_ms` to every instance: all at once
//!    ([`RedlockMode::Parallel`], node-redlock) or one after another, each after the previous
//!    answered or timed out ([`RedlockMode::Sequential`], redlock-rb); each request has its
//!    own `request_timeout`, much shorter than the TTL, so a dead instance costs little;
//! 3. when every instance has answered or timed out: `elapsed = now - start`,
//!    `drift = ttl * clock_drift_factor + 2 ms` (the 2 ms is the page's and both clients'
//!    allowance for Redis's own expiry granularity; node-redlock
//!    `Math.round(driftFactor * duration) + 2`, redlock-rb `(ttl * drift_factor).to_i + 2`),
//!    computed in integer ns as `ttl_ns * ppm / 1_000_000 + 2_000_000`, and
//!    `validity = ttl - elapsed - drift`;
//! 4. the lock is acquired iff at least `quorum` instances replied `OK` (default a majority,
//!    `N/2 + 1`; fewer is a bug variant) and `validity > 0` (variant `validity_check: false`
//!    skips the second test). Then the client believes it holds the lock until
//!    `now + validity` on its monotonic clock (`LockAcquired { token: None, value,
//!    valid_until_local }`; a timer there ends the belief with `LockLost`);
//! 5. otherwise it unlocks every instance (the release script, fire-and-forget, also the ones
//!    that did not answer), observes `LockFailed { reason }` with the numbers ("2 of 5 OK,
//!    quorum 3", "5 of 5 OK, but validity -12 ms ..."), and retries after the delay its
//!    [`RetryPolicy`] gives (default [`RetryPolicy::Uniform`]: drawn uniformly from
//!    `0..=200 ms` from the node's RNG stream, "retry after a random delay", distlock page,
//!    "Retry on Failure"). After `retry_count` attempts in all it gives up:
//!    [`LockEvent::Failed`].
//!
//! `retry_count` counts **attempts** (the first one included), as node-redlock documents its
//! `retryCount` ("the max number of times Redlock will attempt to lock a resource before
//! erroring"); `retry_count: 3` makes at most 2 retries. The policy type and this count are
//! shared with the single-instance client (`crate::retry`). The value is drawn once
//! per [`RedlockClient::acquire`] (16 hex digits from the node's RNG stream) and kept across
//! the retries of that acquisition, as both reference clients do.
//!
//! **Release**: the release script on every instance (distlock page, "Releasing the lock":
//! "simply release the lock in all instances, whether or not the client believes it was able
//! to successfully lock a given instance"); `LockReleased` when sent. A hold that ended by
//! `LockLost` is still unlocked when the worker calls `release` at the end of its round (as
//! node-redlock's `release()` after expiry does), without a second `LockReleased`.
//!
//! Replies are matched by request id; a reply to an attempt that is over is ignored (the
//! unlock sent at the end of a failed attempt follows the SET on the same link). Redlock
//! issues no fencing token: [`RedlockClient::token`] is always `None` (Kleppmann's point: a
//! paused holder's write cannot be told from the new holder's). Request ids keep counting
//! across [`RedlockClient::reset`].
//!
//! **Failover.** Each of the N instances is reached through its own Sentinel-aware
//! connection, as a Redlock client built on Sentinel clients is (Redisson's `RedissonRedLock`
//! over clients in sentinel mode; node-redlock or redlock-py over one Sentinel-backed client
//! per instance): on Sentinel's `+switch-master` notice ([`RedisMsg::SwitchMaster`] from a
//! promoted replica naming the slot's current primary as `old`) the client sends that slot's
//! requests to the new primary from then on, and the other slots are unchanged. Real clients
//! learn of the switch either from the notice (the Sentinel client spec, "Subscribe to
//! Sentinel events to improve responsiveness"; go-redis's `sentinel.go` listens to
//! `+switch-master`) or by asking Sentinel again when they reconnect (redis-py's
//! `SentinelManagedConnection.connect` calls `SentinelConnectionPool.get_master_address`,
//! which runs `Sentinel.discover_master`); the model takes the notice, as the
//! single-instance client does. Replies still in flight from a replaced primary are ignored
//! (their requests time out). The slots survive [`RedlockClient::reset`]: a restarted
//! process asks Sentinel for the current primaries.

use crate::context::{Ctx, Wraps};
use crate::lock_event::LockEvent;
use crate::observation::Obs;
use crate::redis::command::{
    decode_flag, decode_get, decode_set_nx_px, extend_args, get_args, release_args, set_nx_px_args,
};
use crate::redis::{CommandArgs, RedisMsg};
pub use crate::retry::RetryPolicy;
use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId, SimDuration, TimerId};

/// How the requests of one attempt go out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RedlockMode {
    /// To every instance at once (node-redlock; default).
    #[default]
    Parallel,
    /// One instance after another, each after the previous answered or timed out (redlock-rb).
    Sequential,
}

/// When an attempt's start time is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StartTime {
    /// Before the first request (the algorithm; default).
    #[default]
    BeforeRequests,
    /// After the last reply (a bug: the time spent acquiring is not subtracted).
    AfterReplies,
    /// Before the first request of the acquisition's FIRST attempt, kept across its retries
    /// (a published client bug: the failed attempts and the retry delays count as elapsed,
    /// so a retried acquisition that succeeds is believed for less than it holds, or given up
    /// as `validity <= 0` although it holds the quorum).
    FirstAttempt,
}

/// Redlock configuration. Durations are local monotonic ns of the client's clock; the TTL is
/// sent to the instances in whole milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedlockConfig {
    /// The Redis instances (N).
    pub instances: Vec<NodeId>,
    /// The key (the lock's name in observations).
    pub key: String,
    /// Lock TTL (default 10 s); sent as `PX floor(ttl / 1 ms)`, at least 1 ms.
    pub ttl: SimDuration,
    /// Per-instance reply timeout (default 50 ms).
    pub request_timeout: SimDuration,
    /// Attempts per acquisition before giving up (default 3).
    pub retry_count: u32,
    /// The delay before each retry (default [`RetryPolicy::Uniform`] up to 200 ms).
    pub retry: RetryPolicy,
    /// Clock drift factor in parts per million (default 10,000 = 0.01, the reference clients'
    /// `driftFactor`).
    pub clock_drift_factor_ppm: u64,
    /// Parallel (default) or sequential requests.
    pub mode: RedlockMode,
    /// Require `validity > 0` to claim the lock (default true; false is a bug variant).
    pub validity_check: bool,
    /// Check validity later (the worker's check before it writes) by asking the instances
    /// instead of by the local deadline (default false): [`RedlockClient::start_check`].
    pub quorum_count_check: bool,
    /// When the start time is taken (default before the requests).
    pub start_time: StartTime,
    /// OK replies needed (default `None`: a majority, `N/2 + 1`; fewer is a bug variant).
    pub quorum: Option<usize>,
}

impl RedlockConfig {
    /// A config for `key` on `instances` with every other field at its default: ttl 10 s,
    /// request timeout 50 ms, 3 attempts, retry delay up to 200 ms, drift factor 0.01,
    /// parallel, validity check on, start before the requests, majority quorum.
    pub fn new(instances: Vec<NodeId>, key: impl Into<String>) -> Self {
        RedlockConfig {
            instances,
            key: key.into(),
            ttl: SimDuration::from_secs(10),
            request_timeout: SimDuration::from_millis(50),
            retry_count: 3,
            retry: RetryPolicy::default(),
            clock_drift_factor_ppm: 10_000,
            mode: RedlockMode::Parallel,
            validity_check: true,
            quorum_count_check: false,
            start_time: StartTime::BeforeRequests,
            quorum: None,
        }
    }

    /// OK replies needed: `quorum`, or a majority of the instances.
    pub fn quorum(&self) -> usize {
        self.quorum.unwrap_or(self.instances.len() / 2 + 1)
    }

    /// The TTL as sent in `PX` (whole ms, floor, at least 1), as a duration.
    pub fn ttl_sent(&self) -> SimDuration {
        SimDuration::from_millis(self.ttl.as_millis().max(1))
    }

    /// `ttl * factor + 2 ms`, integer ns: `ttl_ns * ppm / 1_000_000 + 2_000_000`.
    pub fn drift(&self) -> SimDuration {
        let ttl = self.ttl_sent().as_nanos() as u128;
        let d = ttl * self.clock_drift_factor_ppm as u128 / 1_000_000;
        SimDuration(d.min(u64::MAX as u128) as u64).saturating_add(SimDuration::from_millis(2))
    }

    /// `ttl - elapsed - drift` in signed ns.
    pub fn validity_ns(&self, elapsed: SimDuration) -> i128 {
        self.ttl_sent().as_nanos() as i128
            - elapsed.as_nanos() as i128
            - self.drift().as_nanos() as i128
    }
}

/// Redlock client timers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedlockTimer {
    /// No reply to request `req` within `request_timeout`.
    Timeout {
        /// The request.
        req: u64,
    },
    /// The random delay before the next attempt is over.
    Retry,
    /// The belief deadline (`now + validity`) is reached.
    Deadline,
}

/// The context a Redlock client runs in: any composition whose messages and timers wrap the
/// client's own ([`RedisMsg`], [`RedlockTimer`]).
pub trait RedlockCtx: Ctx<Msg: Wraps<RedisMsg>, Timer: Wraps<RedlockTimer>> {}

impl<C: Ctx<Msg: Wraps<RedisMsg>, Timer: Wraps<RedlockTimer>>> RedlockCtx for C {}

/// One instance's part in an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Not asked yet (sequential mode).
    Unsent,
    /// Asked; waiting for the reply or the timeout.
    Pending { req: u64, timeout: TimerId },
    /// Replied OK.
    Ok,
    /// Replied nil or an error, or timed out.
    NotOk,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Attempt {
    start: LocalTime,
    outcomes: Vec<Outcome>,
}

impl Attempt {
    /// Records the outcome of pending request `req` (cancelling its timeout when a reply came
    /// first); the instance's index, or `None` if `req` is not pending in this attempt.
    fn record(
        &mut self,
        ctx: &mut impl RedlockCtx,
        req: u64,
        ok: bool,
        cancel: bool,
    ) -> Option<usize> {
        let i = self
            .outcomes
            .iter()
            .position(|o| matches!(o, Outcome::Pending { req: r, .. } if *r == req))?;
        if let Outcome::Pending { timeout, .. } = self.outcomes[i] {
            if cancel {
                ctx.cancel_timer(timeout);
            }
        }
        self.outcomes[i] = if ok { Outcome::Ok } else { Outcome::NotOk };
        Some(i)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    Idle,
    Acquiring(Attempt),
    Backoff {
        retry: TimerId,
    },
    Held {
        valid_until: LocalTime,
        deadline: TimerId,
    },
    /// Held, with an extension in flight (the hold stands until it concludes).
    Extending {
        attempt: Attempt,
        valid_until: LocalTime,
        deadline: TimerId,
    },
}

/// A Redlock client (see the module doc).
#[derive(Clone, Debug)]
pub struct RedlockClient {
    /// Boxed: keeps the worker (and so the composition's `Node`) small.
    cfg: Box<RedlockConfig>,
    state: State,
    /// The value of the current acquisition (kept across its retries).
    value: String,
    /// The acquire (`SET`) and release (script) commands of this value, built once per
    /// acquisition and shared by every message that carries them (`None`: not built yet).
    commands: Option<(CommandArgs, CommandArgs)>,
    /// Attempts made in the current acquisition.
    attempts: u32,
    /// The start time of the current acquisition's first attempt (local monotonic).
    first_start: LocalTime,
    /// A hold lost by its deadline and not yet unlocked.
    lost: bool,
    next_req: u64,
    /// The quorum-count check in flight: per instance, `Pending`, `Ok` (it holds our value)
    /// or `NotOk`.
    checking: Option<Vec<Outcome>>,
    /// The node each instance slot is reached at now, in the order of `cfg.instances`: the
    /// configured instance, or the replica Sentinel promoted in its place (see the module
    /// doc, "Failover").
    primaries: Vec<NodeId>,
}

/// `"{prefix}{oks} of {n} OK, quorum {quorum}"`: the reason of an attempt short of its
/// quorum.
fn short_of_quorum(prefix: &str, oks: usize, n: usize, quorum: usize) -> String {
    format!("{prefix}{oks} of {n} OK, quorum {quorum}")
}

/// Signed ns as milliseconds, with as few decimals as show the value exactly ("-12 ms",
/// "9895.5 ms").
fn fmt_ms(ns: i128) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let (whole, frac) = (ns.abs() / 1_000_000, ns.abs() % 1_000_000);
    if frac == 0 {
        format!("{sign}{whole} ms")
    } else {
        let f = format!("{frac:06}");
        format!("{sign}{whole}.{} ms", f.trim_end_matches('0'))
    }
}

impl RedlockClient {
    /// An idle client.
    ///
    /// # Panics
    /// If `instances` is empty or the quorum is 0 or above N (validated by the scenario layer).
    pub fn new(cfg: RedlockConfig) -> Self {
        assert!(!cfg.instances.is_empty(), "redlock needs instances");
        assert!(
            (1..=cfg.instances.len()).contains(&cfg.quorum()),
            "quorum must be in 1..=N"
        );
        RedlockClient {
            primaries: cfg.instances.clone(),
            cfg: Box::new(cfg),
            state: State::Idle,
            value: String::new(),
            commands: None,
            attempts: 0,
            first_start: LocalTime(0),
            lost: false,
            next_req: 1,
            checking: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &RedlockConfig {
        &self.cfg
    }

    /// The key.
    pub fn lock_name(&self) -> &str {
        &self.cfg.key
    }

    /// The value of the current (or last) acquisition.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The acquire and release commands of the current value.
    fn commands(&mut self) -> &(CommandArgs, CommandArgs) {
        let (cfg, value) = (&self.cfg, &self.value);
        self.commands.get_or_insert_with(|| {
            let ttl_ms = cfg.ttl_sent().as_millis() as i64;
            (
                set_nx_px_args(&cfg.key, value, ttl_ms).into(),
                release_args(&cfg.key, value).into(),
            )
        })
    }

    fn send(&mut self, ctx: &mut impl RedlockCtx, to: NodeId, args: CommandArgs) -> u64 {
        let req = self.next_req;
        self.next_req += 1;
        ctx.send(to, RedisMsg::Command { req, args });
        req
    }

    /// Sends the SET to instance `i` of the attempt and starts its timeout.
    fn ask(&mut self, ctx: &mut impl RedlockCtx, i: usize) -> Outcome {
        let args = self.commands().0.clone();
        let req = self.send(ctx, self.primaries[i], args);
        let timeout = ctx.set_timer(self.cfg.request_timeout, RedlockTimer::Timeout { req });
        Outcome::Pending { req, timeout }
    }

    fn unlock_all(&mut self, ctx: &mut impl RedlockCtx) {
        let args = self.commands().1.clone();
        for i in 0..self.cfg.instances.len() {
            self.send(ctx, self.primaries[i], args.clone());
        }
    }

    /// Starts an acquisition (no effect unless idle).
    pub fn acquire(&mut self, ctx: &mut impl RedlockCtx) {
        if self.state != State::Idle {
            return;
        }
        self.value = format!("{:016x}", ctx.rng().next_u64());
        self.commands = None;
        self.attempts = 0;
        self.lost = false;
        self.first_start = ctx.mono_now();
        self.start_attempt(ctx);
    }

    /// One attempt: observes `LockRequested`, takes the start time, sends the first (or
    /// every) request.
    fn start_attempt(&mut self, ctx: &mut impl RedlockCtx) {
        self.attempts += 1;
        ctx.observe(Obs::LockRequested {
            thread: None,
            lock: self.cfg.key.clone(),
            servers: self.primaries.clone(),
        });
        let start = ctx.mono_now();
        let n = self.cfg.instances.len();
        let mut outcomes = vec![Outcome::Unsent; n];
        match self.cfg.mode {
            RedlockMode::Parallel => {
                for (i, o) in outcomes.iter_mut().enumerate() {
                    *o = self.ask(ctx, i);
                }
            }
            RedlockMode::Sequential => outcomes[0] = self.ask(ctx, 0),
        }
        self.state = State::Acquiring(Attempt { start, outcomes });
    }

    /// Records the outcome of request `req`; sends the next request in sequential mode;
    /// concludes the attempt when every instance is done.
    fn settle(
        &mut self,
        ctx: &mut impl RedlockCtx,
        req: u64,
        ok: bool,
        cancel: bool,
    ) -> Option<LockEvent> {
        if let State::Extending { .. } = self.state {
            return self.settle_extend(ctx, req, ok, cancel);
        }
        let State::Acquiring(att) = &mut self.state else {
            return None;
        };
        let i = att.record(ctx, req, ok, cancel)?;
        if self.cfg.mode == RedlockMode::Sequential && i + 1 < self.cfg.instances.len() {
            let next = self.ask(ctx, i + 1);
            if let State::Acquiring(att) = &mut self.state {
                att.outcomes[i + 1] = next;
            }
            return None;
        }
        let State::Acquiring(att) = &self.state else {
            return None;
        };
        if att
            .outcomes
            .iter()
            .any(|o| matches!(o, Outcome::Pending { .. } | Outcome::Unsent))
        {
            return None;
        }
        let (start, oks) = (
            att.start,
            att.outcomes.iter().filter(|o| **o == Outcome::Ok).count(),
        );
        self.conclude(ctx, start, oks)
    }

    fn conclude(
        &mut self,
        ctx: &mut impl RedlockCtx,
        start: LocalTime,
        oks: usize,
    ) -> Option<LockEvent> {
        let now = ctx.mono_now();
        let start = match self.cfg.start_time {
            StartTime::BeforeRequests => start,
            StartTime::AfterReplies => now,
            StartTime::FirstAttempt => self.first_start,
        };
        let elapsed = now.saturating_since(start);
        let validity = self.cfg.validity_ns(elapsed);
        let (n, quorum) = (self.cfg.instances.len(), self.cfg.quorum());
        let failure = if oks < quorum {
            Some(short_of_quorum("", oks, n, quorum))
        } else if validity <= 0 && self.cfg.validity_check {
            Some(format!(
                "{oks} of {n} OK, but validity {} <= 0 (ttl {} - elapsed {} - drift {})",
                fmt_ms(validity),
                fmt_ms(self.cfg.ttl_sent().as_nanos() as i128),
                fmt_ms(elapsed.as_nanos() as i128),
                fmt_ms(self.cfg.drift().as_nanos() as i128),
            ))
        } else {
            None
        };
        if let Some(reason) = failure {
            self.unlock_all(ctx);
            ctx.observe(Obs::LockFailed {
                thread: None,
                lock: self.cfg.key.clone(),
                reason,
            });
            if self.attempts < self.cfg.retry_count {
                let delay = self.cfg.retry.delay(self.attempts, ctx.rng());
                let retry = ctx.set_timer(delay, RedlockTimer::Retry);
                self.state = State::Backoff { retry };
                return None;
            }
            self.state = State::Idle;
            return Some(LockEvent::Failed);
        }
        let valid_until = if validity >= 0 {
            now.saturating_add(SimDuration(validity as u64))
        } else {
            LocalTime(now.0.saturating_sub(validity.unsigned_abs() as u64))
        };
        let deadline = ctx.set_timer(valid_until.saturating_since(now), RedlockTimer::Deadline);
        self.state = State::Held {
            valid_until,
            deadline,
        };
        ctx.observe(Obs::LockAcquired {
            thread: None,
            lock: self.cfg.key.clone(),
            token: None,
            value: self.value.clone(),
            valid_until_local: valid_until,
        });
        Some(LockEvent::Acquired {
            token: None,
            valid_until_local: valid_until,
        })
    }

    /// Starts extending a held lock (the distlock page's "extending the lock"): the extend
    /// script (`PEXPIRE` if the value is ours) goes to every instance at once, each with its
    /// `request_timeout`. The extension counts only if a quorum replies 1 and the new validity
    /// `ttl - elapsed - drift` is positive while the current hold is still valid; then the
    /// hold runs to `now + validity` (`LockRenewed`, [`LockEvent::Extended`]). Otherwise the
    /// current hold stands unchanged (`LockFailed` "extend: ..."). Returns `false` (and does
    /// nothing) unless the lock is held.
    pub fn extend(&mut self, ctx: &mut impl RedlockCtx) -> bool {
        let State::Held {
            valid_until,
            deadline,
        } = self.state
        else {
            return false;
        };
        let start = ctx.mono_now();
        let ttl_ms = self.cfg.ttl_sent().as_millis() as i64;
        let mut outcomes = Vec::with_capacity(self.cfg.instances.len());
        let args: CommandArgs = extend_args(&self.cfg.key, &self.value, ttl_ms).into();
        for i in 0..self.cfg.instances.len() {
            let req = self.send(ctx, self.primaries[i], args.clone());
            let timeout = ctx.set_timer(self.cfg.request_timeout, RedlockTimer::Timeout { req });
            outcomes.push(Outcome::Pending { req, timeout });
        }
        self.state = State::Extending {
            attempt: Attempt { start, outcomes },
            valid_until,
            deadline,
        };
        true
    }

    fn settle_extend(
        &mut self,
        ctx: &mut impl RedlockCtx,
        req: u64,
        ok: bool,
        cancel: bool,
    ) -> Option<LockEvent> {
        let State::Extending {
            attempt,
            valid_until,
            deadline,
        } = &mut self.state
        else {
            return None;
        };
        attempt.record(ctx, req, ok, cancel)?;
        if attempt
            .outcomes
            .iter()
            .any(|o| matches!(o, Outcome::Pending { .. }))
        {
            return None;
        }
        let (start, old_until, old_deadline) = (attempt.start, *valid_until, *deadline);
        let oks = attempt
            .outcomes
            .iter()
            .filter(|o| **o == Outcome::Ok)
            .count();
        let now = ctx.mono_now();
        let validity = self.cfg.validity_ns(now.saturating_since(start));
        let (n, quorum) = (self.cfg.instances.len(), self.cfg.quorum());
        let failure = if oks < quorum {
            Some(short_of_quorum("extend: ", oks, n, quorum))
        } else if validity <= 0 {
            Some(format!("extend: validity {} <= 0", fmt_ms(validity)))
        } else if now >= old_until {
            Some("extend: the hold expired before the extension completed".to_string())
        } else {
            None
        };
        if let Some(reason) = failure {
            self.state = State::Held {
                valid_until: old_until,
                deadline: old_deadline,
            };
            ctx.observe(Obs::LockFailed {
                thread: None,
                lock: self.cfg.key.clone(),
                reason,
            });
            return None;
        }
        ctx.cancel_timer(old_deadline);
        let valid_until = now.saturating_add(SimDuration(validity as u64));
        let deadline = ctx.set_timer(valid_until.saturating_since(now), RedlockTimer::Deadline);
        self.state = State::Held {
            valid_until,
            deadline,
        };
        ctx.observe(Obs::LockRenewed {
            thread: None,
            lock: self.cfg.key.clone(),
            token: None,
            valid_until_local: valid_until,
        });
        Some(LockEvent::Extended {
            valid_until_local: valid_until,
        })
    }

    /// Releases the lock on every instance if held (`LockReleased`); abandons an acquisition
    /// in progress (unlock all, `LockFailed` "abandoned") or a pending retry.
    pub fn release(&mut self, ctx: &mut impl RedlockCtx) {
        for o in self.checking.take().unwrap_or_default() {
            if let Outcome::Pending { timeout, .. } = o {
                ctx.cancel_timer(timeout);
            }
        }
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Idle => {
                if std::mem::take(&mut self.lost) {
                    self.unlock_all(ctx);
                }
            }
            State::Backoff { retry } => ctx.cancel_timer(retry),
            State::Acquiring(att) => {
                for o in att.outcomes {
                    if let Outcome::Pending { timeout, .. } = o {
                        ctx.cancel_timer(timeout);
                    }
                }
                self.unlock_all(ctx);
                ctx.observe(Obs::LockFailed {
                    thread: None,
                    lock: self.cfg.key.clone(),
                    reason: "abandoned".to_string(),
                });
            }
            State::Held { deadline, .. } | State::Extending { deadline, .. } => {
                ctx.cancel_timer(deadline);
                self.unlock_all(ctx);
                ctx.observe(Obs::LockReleased {
                    thread: None,
                    lock: self.cfg.key.clone(),
                });
            }
        }
    }

    /// Starts the later validity check by quorum count, if configured
    /// (`quorum_count_check`): `GET key` to every instance, each with `request_timeout`; when
    /// every instance has answered or timed out, [`LockEvent::Checked`] with `valid` iff at
    /// least `quorum` of them replied with this hold's value. The local deadline plays no
    /// part (the published bug: a reply read just before the key expired arrives after it,
    /// and the client counts it). `false` (nothing sent) if not configured.
    pub fn start_check(&mut self, ctx: &mut impl RedlockCtx) -> bool {
        if !self.cfg.quorum_count_check {
            return false;
        }
        let mut outcomes = Vec::with_capacity(self.cfg.instances.len());
        let args: CommandArgs = get_args(&self.cfg.key).into();
        for i in 0..self.cfg.instances.len() {
            let req = self.send(ctx, self.primaries[i], args.clone());
            let timeout = ctx.set_timer(self.cfg.request_timeout, RedlockTimer::Timeout { req });
            outcomes.push(Outcome::Pending { req, timeout });
        }
        self.checking = Some(outcomes);
        true
    }

    /// Records a check reply (or timeout); the verdict once every instance is done.
    fn settle_check(
        &mut self,
        ctx: &mut impl RedlockCtx,
        req: u64,
        ok: bool,
        cancel: bool,
    ) -> Option<Option<LockEvent>> {
        let outcomes = self.checking.as_mut()?;
        let i = outcomes
            .iter()
            .position(|o| matches!(o, Outcome::Pending { req: r, .. } if *r == req))?;
        if let Outcome::Pending { timeout, .. } = outcomes[i] {
            if cancel {
                ctx.cancel_timer(timeout);
            }
        }
        outcomes[i] = if ok { Outcome::Ok } else { Outcome::NotOk };
        if outcomes
            .iter()
            .any(|o| matches!(o, Outcome::Pending { .. }))
        {
            return Some(None);
        }
        let oks = outcomes.iter().filter(|o| **o == Outcome::Ok).count();
        self.checking = None;
        Some(Some(LockEvent::Checked {
            valid: oks >= self.cfg.quorum(),
        }))
    }

    /// Handles a reply from an instance; `None` if nothing changed for the caller.
    pub fn on_message<C: RedlockCtx>(
        &mut self,
        ctx: &mut C,
        from: NodeId,
        msg: &C::Msg,
    ) -> Option<LockEvent> {
        if let Some(&RedisMsg::SwitchMaster { old, new }) = msg.part() {
            for p in self.primaries.iter_mut().filter(|p| **p == old) {
                *p = new;
            }
            return None;
        }
        let Some(RedisMsg::Reply { req, reply }) = msg.part() else {
            return None;
        };
        if !self.primaries.contains(&from) {
            return None;
        }
        if self.checking.is_some() {
            let ours = decode_get(reply).ok().flatten().as_deref() == Some(self.value.as_str());
            if let Some(ev) = self.settle_check(ctx, *req, ours, true) {
                return ev;
            }
        }
        let ok = match self.state {
            State::Extending { .. } => decode_flag("extend", reply) == Ok(true),
            _ => decode_set_nx_px(reply) == Ok(true),
        };
        self.settle(ctx, *req, ok, true)
    }

    /// Handles one of this client's timers; `None` if nothing changed for the caller.
    pub fn on_timer<C: RedlockCtx>(&mut self, ctx: &mut C, t: &C::Timer) -> Option<LockEvent> {
        let t = t.part()?;
        match *t {
            RedlockTimer::Timeout { req } => {
                if let Some(ev) = self.settle_check(ctx, req, false, false) {
                    return ev;
                }
                self.settle(ctx, req, false, false)
            }
            RedlockTimer::Retry => {
                if matches!(self.state, State::Backoff { .. }) {
                    self.start_attempt(ctx);
                }
                None
            }
            RedlockTimer::Deadline => match &mut self.state {
                State::Held {
                    valid_until,
                    deadline,
                }
                | State::Extending {
                    valid_until,
                    deadline,
                    ..
                } if ctx.mono_now() < *valid_until => {
                    // Fired early: the clock slowed after the timer was set (the engine keeps
                    // a timer's true instant). Wait for the rest of the local time.
                    let rest = valid_until.saturating_since(ctx.mono_now());
                    *deadline = ctx.set_timer(rest, RedlockTimer::Deadline);
                    None
                }
                State::Held { .. } | State::Extending { .. } => {
                    self.state = State::Idle;
                    self.lost = true;
                    ctx.observe(Obs::LockLost {
                        thread: None,
                        lock: self.cfg.key.clone(),
                        reason: "validity passed by the local clock".to_string(),
                    });
                    Some(LockEvent::Lost)
                }
                _ => None,
            },
        }
    }

    /// The local monotonic deadline of the current hold, if the client believes it holds.
    pub fn valid_until(&self) -> Option<LocalTime> {
        match self.state {
            State::Held { valid_until, .. } | State::Extending { valid_until, .. } => {
                Some(valid_until)
            }
            _ => None,
        }
    }

    /// Always `None`: Redlock issues no fencing token.
    pub fn token(&self) -> Option<u64> {
        None
    }

    /// Forgets all volatile state (after a crash of the owning node). Request ids keep
    /// counting.
    pub fn reset(&mut self) {
        self.state = State::Idle;
        self.attempts = 0;
        self.lost = false;
        self.checking = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_and_validity_of_the_distlock_example() {
        let cfg = RedlockConfig::new(vec![NodeId(0)], "k");
        assert_eq!(cfg.drift(), SimDuration::from_millis(102));
        assert_eq!(cfg.validity_ns(SimDuration::from_millis(2)), 9_896_000_000);
        assert_eq!(cfg.quorum(), 1);
        let five = RedlockConfig::new((0..5).map(NodeId).collect(), "k");
        assert_eq!(five.quorum(), 3);
    }

    #[test]
    fn quorum_reason_reads_as_formatted() {
        for (oks, n, q) in [(0, 5, 3), (2, 5, 3), (10, 11, 6), (123, 4567, 890)] {
            assert_eq!(
                short_of_quorum("", oks, n, q),
                format!("{oks} of {n} OK, quorum {q}")
            );
        }
        assert_eq!(
            short_of_quorum("extend: ", 1, 3, 2),
            "extend: 1 of 3 OK, quorum 2"
        );
        assert_eq!(
            short_of_quorum("", usize::MAX, 0, 1),
            format!("{} of 0 OK, quorum 1", usize::MAX)
        );
    }

    #[test]
    fn ms_formatting() {
        assert_eq!(fmt_ms(-12_000_000), "-12 ms");
        assert_eq!(fmt_ms(9_895_500_000), "9895.5 ms");
        assert_eq!(fmt_ms(1), "0.000001 ms");
    }
}
