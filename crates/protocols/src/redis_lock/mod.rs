//! The single-instance Redis lock client (one of the lock clients a worker drives) over one Redis
//! instance, as the Redis distlock page describes the "correct implementation with a single
//! instance" (<https://redis.io/docs/latest/develop/use/patterns/distributed-locks/>).
//!
//! **Acquire.** Draw a value unique to this acquisition from the node's RNG stream (16 hex
//! digits), take `start = mono_now()` **before** sending, and send
//! `SET key value NX PX ttl_ms` ([`set_nx_px_args`]). `OK` -> the client believes it holds the
//! lock until `start + ttl` (minus the drift margin, below) on its own monotonic clock (`LockAcquired { token: None, value,
//! valid_until_local }`; the TTL as sent, in whole ms) and sets a timer there that ends the belief with `LockLost`; nil
//! (someone holds it), an error reply, or no reply within `request_timeout` -> `LockFailed`
//! (the attempt failed) and, after `retry_count` attempts in all, [`LockEvent::Failed`]. The instance starts the TTL when the SET arrives, after `start`,
//! so with equal clock rates the belief ends no later than the key (the instance's clock is a
//! wall clock, though: a step on it breaks this, which is the Redlock lessons' point).
//!
//! **Retry** (`retry_count`, `retry`: the same [`RetryPolicy`] and the same count as the
//! Redlock client's, `crate::retry`). `retry_count` counts ATTEMPTS, the first one included
//! (default 1: no retry, the worker tries again after its `think_time`); after a failed
//! attempt that is not the last, the client waits `retry.delay(attempt)` of its monotonic
//! clock and sends the SET NX again with the SAME value: one value per acquisition, as
//! redis-py's `Lock.acquire` loops `do_acquire(token)` with `sleep` between tries and
//! node-redlock keeps its value across retries. A late `OK` to an earlier attempt of the
//! acquisition still in progress is not released (the key then holds our value, and the
//! retries get nil until it expires, as with redis-py); once the acquisition is over it is.
//!
//! **Release.** [`Release::CompareAndDelete`] (default) sends the release script
//! ([`release_args`]): delete the key only if it still holds this acquisition's value.
//! [`Release::Delete`] sends a plain `DEL key` (the unsafe variant: after the key expired and
//! another client took it, this deletes the other client's lock). Either way `LockReleased`
//! is observed when the request is sent, and [`LockEvent::Released`] is returned on its reply.
//! A hold that ended by `LockLost` (the TTL passed by the local clock) is still released when
//! the worker calls `release` at the end of its round, as real code's `finally { unlock }`
//! does: the release goes out with that hold's value (no second `LockReleased`: the belief
//! already ended). With compare-and-delete that is harmless; with plain `DEL` it deletes
//! whoever holds the key now.
//!
//! **Shared lock object.** Release and refresh send the lock object's token field (redis-py's
//! `Lock.local.token`), set by a successful acquisition and cleared by a release. For one
//! client it is always its hold's value. In a worker whose threads share one lock object
//! (`lock_object: "shared"`, redis-py's `Lock(thread_local=False)` used from several
//! threads) the field is the node's, so a thread that acquires overwrites the token another
//! thread will release with: that thread's compare-and-delete then deletes the new holder's
//! key (`SharedTokenRelease` is observed when a release sends a token that is not the
//! releasing hold's own). After a release cleared the field, a release or refresh sends
//! nothing (redis-py raises `LockError`; the belief still ends with `LockReleased`).
//!
//! **Refresh** ([`RedisLockClient::extend`], asked by the worker's `extend_every` or by the
//! client's own watchdog). [`Refresh::ExtendIfOwner`] (default) sends the extend script
//! ([`extend_args`]: `PEXPIRE key ttl` only if the key still holds this hold's value; the
//! distlock page's extension, redis-py `Lock.extend`/`reacquire`, Redisson's renewal script):
//! reply 1 renews. [`Refresh::Reset`] sends a plain `SET key value PX ttl` ([`set_px_args`],
//! no `NX`): always `OK`, so after the key expired and another client took it, the refresh
//! silently takes it back (the bug of clients that "refresh" by re-setting). The take time
//! is `start = mono_now()` before the request; a successful refresh makes the hold run to
//! `start + ttl - drift` (`LockRenewed`, [`LockEvent::Extended`]). One refresh is in flight
//! at a time; it has the acquisition's `request_timeout`.
//!
//! A refresh **fails** on a 0 reply, an error, or no reply in time. What the client then
//! believes is [`OnRefreshFailure`]: `StopBelieving` (default; `LockLost` at once, as
//! Redisson's watchdog cancels its renewal and redis-py's `extend` raises `LockNotOwnedError`),
//! `UntilDeadline` (`LockFailed` "refresh: ...", the hold stands until its current deadline,
//! as the Redlock client's extension does), `KeepBelieving` (the bug of ignoring the reply: the
//! hold is renewed to `start + ttl - drift` as if it had worked, `LockRenewed`).
//!
//! **Watchdog** (`watchdog: true`, Redisson's lock watchdog: `renewExpiration` every
//! `internalLockLeaseTime / 3`): while the client believes it holds the lock it refreshes
//! every `ttl / 3` of its own monotonic clock, from the acquisition and from each refresh's
//! outcome, until it releases or stops believing.
//!
//! **Drift margin** (`drift_ppm`, default 0): the hold is believed until
//! `start + ttl - (ttl * drift_ppm / 1e6 + 2 ms)` when `drift_ppm > 0`, Redlock's margin
//! (see `redlock/`), so the client stops believing before a key expiring on a slightly fast
//! instance clock; with 0 (the default, the distlock page's single-instance client and
//! redis-py) there is no margin: `start + ttl`.
//!
//! **Replies** are matched by request id. A late `OK` to an acquisition the client gave up on
//! (timed out or abandoned) is released at once with the configured release. Request ids keep
//! counting across [`RedisLockClient::reset`], as the lease client's do. Redis issues no
//! fencing token: [`RedisLockClient::token`] is always `None`.
//!
//! **Failover.** The client sends to its current primary, at first `instance`. On Sentinel's
//! `+switch-master` notice ([`RedisMsg::SwitchMaster`] from a promoted replica naming the
//! current primary as `old`) it sends to the new primary from then on, as Sentinel-aware
//! clients (redis-py's `Sentinel.master_for`, Redisson's sentinel mode) reconnect; replies
//! still in flight from the old primary are ignored (their requests time out).

use crate::context::{Ctx, Wraps};
use crate::lock_event::LockEvent;
use crate::observation::Obs;
use crate::redis::command::{
    decode_flag, decode_set_nx_px, del_args, extend_args, release_args, set_nx_px_args,
};
use crate::redis::RedisMsg;
pub use crate::retry::RetryPolicy;
use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId, SimDuration, TimerId};

/// How a Redis lock is released.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Release {
    /// The release script: `DEL` only if the key holds our value (default; the distlock page).
    #[default]
    CompareAndDelete,
    /// Plain `DEL key` (unsafe: can delete another client's lock).
    Delete,
}

/// How the single-instance client refreshes (extends) a hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Refresh {
    /// The extend script: `PEXPIRE` only if the key holds our value (default; redis-py
    /// `Lock.extend`, Redisson's renewal, the distlock page).
    #[default]
    ExtendIfOwner,
    /// A plain `SET key value PX ttl` (no `NX`): re-takes the key even if another client
    /// holds it now (unsafe, for teaching).
    Reset,
}

/// What the single-instance client believes after a refresh fails (0 reply, error, timeout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnRefreshFailure {
    /// Stop believing at once: `LockLost` (default; Redisson's watchdog, redis-py's
    /// `LockNotOwnedError`).
    #[default]
    StopBelieving,
    /// Keep the current hold until its deadline (`LockFailed` "refresh: ..."), as the
    /// Redlock client's extension does.
    UntilDeadline,
    /// Renew the belief as if the refresh had worked (the bug of ignoring the reply).
    KeepBelieving,
}

/// Arguments of `SET key value PX ttl_ms` (no `NX`): the [`Refresh::Reset`] refresh.
pub fn set_px_args(key: &str, value: &str, ttl_ms: i64) -> Vec<String> {
    vec![
        "SET".into(),
        key.into(),
        value.into(),
        "PX".into(),
        ttl_ms.to_string(),
    ]
}

/// Single-instance Redis lock configuration. Durations are local monotonic ns of the
/// client's clock; the TTL is sent to Redis in whole milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisLockConfig {
    /// The Redis instance node.
    pub instance: NodeId,
    /// The key (the lock's name in observations).
    pub key: String,
    /// Lock TTL (default 10 s); sent as `PX floor(ttl / 1 ms)`, at least 1 ms.
    pub ttl: SimDuration,
    /// How to release (default compare-and-delete).
    pub release: Release,
    /// Wait this long for a reply before giving up an acquisition or a refresh (default
    /// 500 ms).
    pub request_timeout: SimDuration,
    /// How a refresh is sent (default [`Refresh::ExtendIfOwner`]).
    pub refresh: Refresh,
    /// What the client believes after a failed refresh (default
    /// [`OnRefreshFailure::StopBelieving`]).
    pub on_refresh_failure: OnRefreshFailure,
    /// Refresh every `ttl / 3` while holding, Redisson style (default `false`).
    pub watchdog: bool,
    /// Clock drift margin in ppm of the TTL (default 0: no margin). With `drift_ppm > 0`
    /// the validity is `ttl - (ttl * drift_ppm / 1e6 + 2 ms)` from the start time, as
    /// Redlock's.
    pub drift_ppm: u64,
    /// Attempts per acquisition, the first one included (default 1: no retry); as the
    /// Redlock client's `retry_count`.
    pub retry_count: u32,
    /// The delay before each retry (default [`RetryPolicy::default`], uniform up to 200 ms;
    /// unused with one attempt).
    pub retry: RetryPolicy,
}

impl RedisLockConfig {
    /// A config for `key` at `instance` with every other field at its default: ttl 10 s,
    /// compare-and-delete release, request timeout 500 ms, extend-if-owner refresh, stop
    /// believing on a failed refresh, no watchdog, no drift margin, one attempt.
    pub fn new(instance: NodeId, key: impl Into<String>) -> Self {
        RedisLockConfig {
            instance,
            key: key.into(),
            ttl: SimDuration::from_secs(10),
            release: Release::CompareAndDelete,
            request_timeout: SimDuration::from_millis(500),
            refresh: Refresh::ExtendIfOwner,
            on_refresh_failure: OnRefreshFailure::StopBelieving,
            watchdog: false,
            drift_ppm: 0,
            retry_count: 1,
            retry: RetryPolicy::default(),
        }
    }

    /// How long a hold taken (or refreshed) at local `start` is believed: the TTL as sent,
    /// minus the drift margin `ttl * drift_ppm / 1e6 + 2 ms` when `drift_ppm > 0` (zero if
    /// the margin exceeds the TTL).
    pub fn validity(&self) -> SimDuration {
        let ttl = SimDuration::from_millis(self.ttl_ms());
        if self.drift_ppm == 0 {
            return ttl;
        }
        let drift = (ttl.0 as u128 * self.drift_ppm as u128 / 1_000_000) as u64 + 2_000_000;
        SimDuration(ttl.0.saturating_sub(drift))
    }

    /// The watchdog's period: `ttl / 3` (Redisson's `internalLockLeaseTime / 3`), at least
    /// 1 ns.
    pub fn watchdog_every(&self) -> SimDuration {
        SimDuration((self.ttl.0 / 3).max(1))
    }

    /// The TTL in whole ms as sent in `PX` (floor, at least 1).
    pub fn ttl_ms(&self) -> u64 {
        self.ttl.as_millis().max(1)
    }
}

/// Single-instance Redis lock client timers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedisClientTimer {
    /// No reply to the acquisition `req` within `request_timeout`.
    Timeout {
        /// The request.
        req: u64,
    },
    /// The belief deadline (`start + ttl`) is reached.
    Deadline,
    /// No reply to the refresh `req` within `request_timeout`.
    RefreshTimeout {
        /// The request.
        req: u64,
    },
    /// The watchdog's period (`ttl / 3`) passed: refresh.
    Watchdog,
    /// The delay before the next attempt of an acquisition is over.
    Retry,
}

/// The context a single-instance Redis lock client runs in: any composition whose messages and
/// timers wrap the client's own ([`RedisMsg`], [`RedisClientTimer`]).
pub trait RedisLockCtx: Ctx<Msg: Wraps<RedisMsg>, Timer: Wraps<RedisClientTimer>> {}

impl<C: Ctx<Msg: Wraps<RedisMsg>, Timer: Wraps<RedisClientTimer>>> RedisLockCtx for C {}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    Idle,
    Acquiring {
        req: u64,
        value: String,
        start: LocalTime,
        timeout: TimerId,
    },
    /// Between two attempts of one acquisition (its value kept).
    Backoff {
        value: String,
        retry: TimerId,
    },
    Held {
        value: String,
        valid_until: LocalTime,
        deadline: TimerId,
    },
}

/// A single-instance Redis lock client (see the module doc).
#[derive(Clone, Debug)]
pub struct RedisLockClient {
    cfg: RedisLockConfig,
    /// The primary it sends to (at first `cfg.instance`; moved by `SwitchMaster`).
    primary: NodeId,
    state: State,
    next_req: u64,
    /// Request id of the last release sent, to report its reply.
    releasing: Option<u64>,
    /// The acquisition given up last (request id, value): a late `OK` to it is released.
    abandoned: Option<(u64, String)>,
    /// The value of a hold lost by its deadline and not yet released.
    lost: Option<String>,
    /// The refresh in flight: request id, local start, timeout timer.
    refreshing: Option<(u64, LocalTime, TimerId)>,
    /// The pending watchdog timer.
    watchdog: Option<TimerId>,
    /// Attempts made in the current acquisition.
    attempts: u32,
    /// The lock object's token field (redis-py's `Lock.local.token`): set when an
    /// acquisition succeeds, read by release and refresh, cleared by release. In a worker
    /// whose threads share one lock object it is the node's one field, loaded before and
    /// stored after every handler of a thread ([`Self::lock_object_token`]); otherwise it is
    /// always the current (or lost) hold's value.
    token: Option<String>,
}

impl RedisLockClient {
    /// An idle client.
    pub fn new(cfg: RedisLockConfig) -> Self {
        RedisLockClient {
            primary: cfg.instance,
            cfg,
            state: State::Idle,
            next_req: 1,
            releasing: None,
            abandoned: None,
            lost: None,
            refreshing: None,
            watchdog: None,
            attempts: 0,
            token: None,
        }
    }

    /// Numbers this client's requests from `first` (a worker thread's range).
    pub fn set_first_request(&mut self, first: u64) {
        self.next_req = first;
    }

    /// The lock object's token field (see the module doc, "Shared lock object").
    pub fn lock_object_token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Overwrites the lock object's token field (a worker whose threads share one lock
    /// object loads the node's field here before each of a thread's handlers).
    pub fn set_lock_object_token(&mut self, token: Option<String>) {
        self.token = token;
    }

    /// Sends the release of the lock object's token (clearing it, as redis-py's `release`
    /// sets `local.token = None` first); `own` is the value of the hold being released. A
    /// token that is not `own` (another thread's, through a shared lock object) is observed
    /// as `SharedTokenRelease`. No token: nothing is sent (redis-py raises `LockError`).
    fn release_token(&mut self, ctx: &mut impl RedisLockCtx, own: &str) {
        let Some(token) = self.token.take() else {
            return;
        };
        let args = self.release_args(&token);
        self.releasing = Some(self.send(ctx, args));
        if token != own {
            ctx.observe(Obs::SharedTokenRelease {
                lock: self.cfg.key.clone(),
                value: token,
                own: own.to_string(),
                thread: None,
            });
        }
    }

    /// The configuration.
    pub fn config(&self) -> &RedisLockConfig {
        &self.cfg
    }

    /// The key.
    pub fn lock_name(&self) -> &str {
        &self.cfg.key
    }

    fn send(&mut self, ctx: &mut impl RedisLockCtx, args: Vec<String>) -> u64 {
        let req = self.next_req;
        self.next_req += 1;
        ctx.send(
            self.primary,
            RedisMsg::Command {
                req,
                args: args.into(),
            },
        );
        req
    }

    fn release_args(&self, value: &str) -> Vec<String> {
        match self.cfg.release {
            Release::CompareAndDelete => release_args(&self.cfg.key, value),
            Release::Delete => del_args(&self.cfg.key),
        }
    }

    /// Starts an acquisition (no effect unless idle). Observes `LockRequested`.
    pub fn acquire(&mut self, ctx: &mut impl RedisLockCtx) {
        if self.state != State::Idle {
            return;
        }
        self.lost = None;
        self.attempts = 0;
        let value = format!("{:016x}", ctx.rng().next_u64());
        self.start_attempt(ctx, value);
    }

    /// One attempt of the acquisition with `value`: observes `LockRequested`, takes the start
    /// time, sends the SET NX PX.
    fn start_attempt(&mut self, ctx: &mut impl RedisLockCtx, value: String) {
        self.attempts += 1;
        let start = ctx.mono_now();
        let ttl_ms = self.cfg.ttl_ms() as i64;
        let req = self.send(ctx, set_nx_px_args(&self.cfg.key, &value, ttl_ms));
        let timeout = ctx.set_timer(self.cfg.request_timeout, RedisClientTimer::Timeout { req });
        self.state = State::Acquiring {
            req,
            value,
            start,
            timeout,
        };
        ctx.observe(Obs::LockRequested {
            thread: None,
            lock: self.cfg.key.clone(),
            servers: vec![self.primary],
        });
    }

    /// Releases the lock if held (observes `LockReleased` when the request is sent). An
    /// acquisition in progress is abandoned (`LockFailed`, "abandoned").
    pub fn release(&mut self, ctx: &mut impl RedisLockCtx) {
        self.stop_refreshing(ctx);
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Idle => {
                if let Some(value) = self.lost.take() {
                    self.release_token(ctx, &value);
                }
            }
            State::Acquiring {
                req,
                value,
                timeout,
                ..
            } => {
                ctx.cancel_timer(timeout);
                self.abandoned = Some((req, value));
                ctx.observe(Obs::LockFailed {
                    thread: None,
                    lock: self.cfg.key.clone(),
                    reason: "abandoned".to_string(),
                });
            }
            State::Backoff { retry, .. } => {
                ctx.cancel_timer(retry);
                ctx.observe(Obs::LockFailed {
                    thread: None,
                    lock: self.cfg.key.clone(),
                    reason: "abandoned".to_string(),
                });
            }
            State::Held {
                value, deadline, ..
            } => {
                ctx.cancel_timer(deadline);
                self.release_token(ctx, &value);
                ctx.observe(Obs::LockReleased {
                    thread: None,
                    lock: self.cfg.key.clone(),
                });
            }
        }
    }

    /// An attempt of the acquisition with `value` failed (`LockFailed { reason }`): wait for
    /// the retry policy's delay and try again, or, after `retry_count` attempts, give up
    /// ([`LockEvent::Failed`]).
    fn fail(
        &mut self,
        ctx: &mut impl RedisLockCtx,
        value: String,
        reason: String,
    ) -> Option<LockEvent> {
        ctx.observe(Obs::LockFailed {
            thread: None,
            lock: self.cfg.key.clone(),
            reason,
        });
        if self.attempts < self.cfg.retry_count {
            let delay = self.cfg.retry.delay(self.attempts, ctx.rng());
            let retry = ctx.set_timer(delay, RedisClientTimer::Retry);
            self.state = State::Backoff { value, retry };
            return None;
        }
        self.state = State::Idle;
        Some(LockEvent::Failed)
    }

    /// Handles a reply from the instance; `None` if nothing changed for the caller.
    pub fn on_message<C: RedisLockCtx>(
        &mut self,
        ctx: &mut C,
        from: NodeId,
        msg: &C::Msg,
    ) -> Option<LockEvent> {
        if let Some(&RedisMsg::SwitchMaster { old, new }) = msg.part() {
            if old == self.primary {
                self.primary = new;
            }
            return None;
        }
        let Some(RedisMsg::Reply { req, reply }) = msg.part() else {
            return None;
        };
        if from != self.primary {
            return None;
        }
        if self.releasing == Some(*req) {
            self.releasing = None;
            return Some(LockEvent::Released);
        }
        if let Some((pending, start, timeout)) = self.refreshing {
            if pending == *req {
                ctx.cancel_timer(timeout);
                self.refreshing = None;
                let outcome = match self.cfg.refresh {
                    Refresh::ExtendIfOwner => match decode_flag("extend", reply) {
                        Ok(true) => Ok(()),
                        Ok(false) => {
                            Err("the key no longer holds our value (extend replied 0)".to_string())
                        }
                        Err(e) => Err(format!("{e}")),
                    },
                    Refresh::Reset => match decode_set_nx_px(reply) {
                        Ok(true) => Ok(()),
                        Ok(false) => Err("SET PX replied nil".to_string()),
                        Err(e) => Err(format!("{e}")),
                    },
                };
                return self.settle_refresh(ctx, start, outcome);
            }
        }
        let State::Acquiring {
            req: pending,
            start,
            timeout,
            ..
        } = self.state
        else {
            return self.late_reply(ctx, *req, reply);
        };
        if pending != *req {
            return self.late_reply(ctx, *req, reply);
        }
        ctx.cancel_timer(timeout);
        let State::Acquiring { value, .. } = std::mem::replace(&mut self.state, State::Idle) else {
            unreachable!("matched above");
        };
        match decode_set_nx_px(reply) {
            Ok(true) => {
                let valid_until = start.saturating_add(self.cfg.validity());
                let now = ctx.mono_now();
                if now >= valid_until {
                    let args = self.release_args(&value);
                    self.send(ctx, args);
                    return self.fail(ctx, value, "OK came after the TTL had passed".to_string());
                }
                let deadline = ctx.set_timer(
                    valid_until.saturating_since(now),
                    RedisClientTimer::Deadline,
                );
                ctx.observe(Obs::LockAcquired {
                    thread: None,
                    lock: self.cfg.key.clone(),
                    token: None,
                    value: value.clone(),
                    valid_until_local: valid_until,
                });
                self.token = Some(value.clone());
                self.state = State::Held {
                    value,
                    valid_until,
                    deadline,
                };
                self.arm_watchdog(ctx);
                Some(LockEvent::Acquired {
                    token: None,
                    valid_until_local: valid_until,
                })
            }
            Ok(false) => self.fail(
                ctx,
                value,
                "held by another client (SET NX replied nil)".to_string(),
            ),
            Err(e) => self.fail(ctx, value, format!("{e}")),
        }
    }

    /// A reply to a request that is no longer pending: an `OK` to an abandoned acquisition is
    /// handed back at once, unless that acquisition (its value) is still being retried or
    /// holds.
    fn late_reply(
        &mut self,
        ctx: &mut impl RedisLockCtx,
        req: u64,
        reply: &crate::redis::Reply,
    ) -> Option<LockEvent> {
        if let Some((r, value)) = self.abandoned.take() {
            if r == req {
                if decode_set_nx_px(reply) == Ok(true) && !self.is_current(&value) {
                    let args = self.release_args(&value);
                    self.send(ctx, args);
                }
            } else {
                self.abandoned = Some((r, value));
            }
        }
        None
    }

    /// Whether `value` is the value of the acquisition in progress or of the current hold.
    fn is_current(&self, value: &str) -> bool {
        match &self.state {
            State::Idle => false,
            State::Acquiring { value: v, .. }
            | State::Backoff { value: v, .. }
            | State::Held { value: v, .. } => v == value,
        }
    }

    /// Handles one of this client's timers; `None` if nothing changed for the caller.
    pub fn on_timer<C: RedisLockCtx>(&mut self, ctx: &mut C, t: &C::Timer) -> Option<LockEvent> {
        let t = t.part()?;
        match *t {
            RedisClientTimer::Timeout { req } => match &self.state {
                State::Acquiring {
                    req: pending,
                    value,
                    ..
                } if *pending == req => {
                    let value = value.clone();
                    self.abandoned = Some((req, value.clone()));
                    let ms = self.cfg.request_timeout.as_millis();
                    self.fail(ctx, value, format!("no reply within {ms} ms"))
                }
                _ => None,
            },
            RedisClientTimer::Retry => {
                if let State::Backoff { value, .. } =
                    std::mem::replace(&mut self.state, State::Idle)
                {
                    self.start_attempt(ctx, value);
                }
                None
            }
            RedisClientTimer::Deadline => {
                let State::Held {
                    valid_until,
                    deadline,
                    ..
                } = &mut self.state
                else {
                    return None;
                };
                let now = ctx.mono_now();
                if now < *valid_until {
                    // Fired early: the clock slowed after the timer was set (the engine keeps
                    // a timer's true instant). Wait for the rest of the local time.
                    *deadline = ctx.set_timer(
                        valid_until.saturating_since(now),
                        RedisClientTimer::Deadline,
                    );
                    return None;
                }
                self.lose(ctx, "TTL passed by the local clock".to_string())
            }
            RedisClientTimer::RefreshTimeout { req } => match self.refreshing {
                Some((pending, start, _)) if pending == req => {
                    self.refreshing = None;
                    let ms = self.cfg.request_timeout.as_millis();
                    self.settle_refresh(ctx, start, Err(format!("no reply within {ms} ms")))
                }
                _ => None,
            },
            RedisClientTimer::Watchdog => {
                self.watchdog = None;
                self.extend(ctx);
                None
            }
        }
    }

    /// Ends the current hold's belief (`LockLost { reason }`, [`LockEvent::Lost`]); its value
    /// is kept for the release at the end of the round.
    fn lose(&mut self, ctx: &mut impl RedisLockCtx, reason: String) -> Option<LockEvent> {
        self.stop_refreshing(ctx);
        if let State::Held {
            value, deadline, ..
        } = std::mem::replace(&mut self.state, State::Idle)
        {
            ctx.cancel_timer(deadline);
            self.lost = Some(value);
        }
        ctx.observe(Obs::LockLost {
            thread: None,
            lock: self.cfg.key.clone(),
            reason,
        });
        Some(LockEvent::Lost)
    }

    /// Cancels a refresh in flight and the watchdog.
    fn stop_refreshing(&mut self, ctx: &mut impl RedisLockCtx) {
        if let Some((_, _, timeout)) = self.refreshing.take() {
            ctx.cancel_timer(timeout);
        }
        if let Some(t) = self.watchdog.take() {
            ctx.cancel_timer(t);
        }
    }

    /// Sets the watchdog's next refresh `ttl / 3` from now (watchdog mode only).
    fn arm_watchdog(&mut self, ctx: &mut impl RedisLockCtx) {
        if self.cfg.watchdog {
            if let Some(t) = self.watchdog.take() {
                ctx.cancel_timer(t);
            }
            self.watchdog =
                Some(ctx.set_timer(self.cfg.watchdog_every(), RedisClientTimer::Watchdog));
        }
    }

    /// Starts a refresh of the current hold (see the module doc, "Refresh"); `false` (and
    /// nothing sent) unless the client holds the lock with no refresh in flight.
    pub fn extend(&mut self, ctx: &mut impl RedisLockCtx) -> bool {
        if !matches!(self.state, State::Held { .. }) || self.refreshing.is_some() {
            return false;
        }
        // The lock object's token (redis-py's `extend` reads `local.token`; none: it raises
        // `LockError`, nothing is sent).
        let Some(value) = &self.token else {
            return false;
        };
        let ttl_ms = self.cfg.ttl_ms() as i64;
        let args = match self.cfg.refresh {
            Refresh::ExtendIfOwner => extend_args(&self.cfg.key, value, ttl_ms),
            Refresh::Reset => set_px_args(&self.cfg.key, value, ttl_ms),
        };
        let start = ctx.mono_now();
        let req = self.send(ctx, args);
        let timeout = ctx.set_timer(
            self.cfg.request_timeout,
            RedisClientTimer::RefreshTimeout { req },
        );
        self.refreshing = Some((req, start, timeout));
        true
    }

    /// Applies a refresh's outcome, per [`OnRefreshFailure`] when it failed.
    fn settle_refresh(
        &mut self,
        ctx: &mut impl RedisLockCtx,
        start: LocalTime,
        outcome: Result<(), String>,
    ) -> Option<LockEvent> {
        if !matches!(self.state, State::Held { .. }) {
            return None;
        }
        let renew = match (&outcome, self.cfg.on_refresh_failure) {
            (Ok(()), _) | (Err(_), OnRefreshFailure::KeepBelieving) => true,
            (Err(reason), OnRefreshFailure::StopBelieving) => {
                return self.lose(ctx, format!("refresh failed: {reason}"));
            }
            (Err(reason), OnRefreshFailure::UntilDeadline) => {
                ctx.observe(Obs::LockFailed {
                    thread: None,
                    lock: self.cfg.key.clone(),
                    reason: format!("refresh: {reason}"),
                });
                false
            }
        };
        let now = ctx.mono_now();
        let new_until = start.saturating_add(self.cfg.validity());
        let mut event = None;
        if renew && now < new_until {
            if let State::Held {
                valid_until,
                deadline,
                ..
            } = &mut self.state
            {
                ctx.cancel_timer(*deadline);
                *valid_until = new_until;
                *deadline =
                    ctx.set_timer(new_until.saturating_since(now), RedisClientTimer::Deadline);
            }
            ctx.observe(Obs::LockRenewed {
                thread: None,
                lock: self.cfg.key.clone(),
                token: None,
                valid_until_local: new_until,
            });
            event = Some(LockEvent::Extended {
                valid_until_local: new_until,
            });
        }
        self.arm_watchdog(ctx);
        event
    }

    /// The local monotonic deadline of the current hold, if the client believes it holds.
    pub fn valid_until(&self) -> Option<LocalTime> {
        match self.state {
            State::Held { valid_until, .. } => Some(valid_until),
            _ => None,
        }
    }

    /// The value of the current hold, if any.
    pub fn value(&self) -> Option<&str> {
        match &self.state {
            State::Held { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Always `None`: Redis issues no fencing token.
    pub fn token(&self) -> Option<u64> {
        None
    }

    /// Forgets all volatile state (after a crash of the owning node). Request ids keep
    /// counting.
    pub fn reset(&mut self) {
        self.state = State::Idle;
        self.releasing = None;
        self.abandoned = None;
        self.lost = None;
        self.refreshing = None;
        self.watchdog = None;
        self.attempts = 0;
        self.token = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The drift margin is Redlock's (`ttl * ppm / 1e6 + 2 ms`) only when asked for; the
    /// watchdog period is a third of the TTL; a reset refresh is a SET without NX.
    #[test]
    fn validity_watchdog_period_and_reset_args() {
        let mut c = RedisLockConfig::new(NodeId(0), "lock");
        assert_eq!(c.validity(), SimDuration::from_secs(10));
        c.drift_ppm = 10_000;
        assert_eq!(c.validity(), SimDuration::from_millis(9_898));
        c.ttl = SimDuration::from_millis(1);
        assert_eq!(c.validity(), SimDuration::ZERO);
        c.ttl = SimDuration::from_secs(30);
        assert_eq!(c.watchdog_every(), SimDuration::from_secs(10));
        assert_eq!(
            set_px_args("lock", "v", 30_000),
            ["SET", "lock", "v", "PX", "30000"]
        );
    }
}
