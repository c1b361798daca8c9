//! The single-instance Redis lock client (one of the lock clients a worker drives) over one Redis
//! instance, as the Redis distlock page describes the "correct implementation with a single
//! instance" (https://redis.io/docs/latest/develop/use/patterns/distributed-locks/).
//!
//! **Acquire.** Draw a value unique to this acquisition from the node's RNG stream (16 hex
//! digits), take `start = mono_now()` **before** sending, and send
//! `SET key value NX PX ttl_ms` ([`set_nx_px_args`]). `OK` -> the client believes it holds the
//! lock until `start + ttl` on its own monotonic clock (`LockAcquired { token: None, value,
//! valid_until_local }`; the TTL as sent, in whole ms) and sets a timer there that ends the belief with `LockLost`; nil
//! (someone holds it), an error reply, or no reply within `request_timeout` -> `LockFailed`
//! and [`LockEvent::Failed`]. The instance starts the TTL when the SET arrives, after `start`,
//! so with equal clock rates the belief ends no later than the key (the instance's clock is a
//! wall clock, though: a step on it breaks this, which is the Redlock lessons' point).
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
//! **Replies** are matched by request id. A late `OK` to an acquisition the client gave up on
//! (timed out or abandoned) is released at once with the configured release. Request ids keep
//! counting across [`RedisLockClient::reset`], as the lease client's do. Redis issues no
//! fencing token: [`RedisLockClient::token`] is always `None`.

use crate::context::{Ctx, Wraps};
use crate::lock_event::LockEvent;
use crate::observation::Obs;
use crate::redis::command::{decode_set_nx_px, del_args, release_args, set_nx_px_args};
use crate::redis::RedisMsg;
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
    /// Wait this long for a reply before giving up an acquisition (default 500 ms).
    pub request_timeout: SimDuration,
}

impl RedisLockConfig {
    /// A config for `key` at `instance` with every other field at its default: ttl 10 s,
    /// compare-and-delete release, request timeout 500 ms.
    pub fn new(instance: NodeId, key: impl Into<String>) -> Self {
        RedisLockConfig {
            instance,
            key: key.into(),
            ttl: SimDuration::from_secs(10),
            release: Release::CompareAndDelete,
            request_timeout: SimDuration::from_millis(500),
        }
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
    state: State,
    next_req: u64,
    /// Request id of the last release sent, to report its reply.
    releasing: Option<u64>,
    /// The acquisition given up last (request id, value): a late `OK` to it is released.
    abandoned: Option<(u64, String)>,
    /// The value of a hold lost by its deadline and not yet released.
    lost: Option<String>,
}

impl RedisLockClient {
    /// An idle client.
    pub fn new(cfg: RedisLockConfig) -> Self {
        RedisLockClient {
            cfg,
            state: State::Idle,
            next_req: 1,
            releasing: None,
            abandoned: None,
            lost: None,
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
        ctx.send(self.cfg.instance, RedisMsg::Command { req, args });
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
        let value = format!("{:016x}", ctx.rng().next_u64());
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
            lock: self.cfg.key.clone(),
            servers: vec![self.cfg.instance],
        });
    }

    /// Releases the lock if held (observes `LockReleased` when the request is sent). An
    /// acquisition in progress is abandoned (`LockFailed`, "abandoned").
    pub fn release(&mut self, ctx: &mut impl RedisLockCtx) {
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Idle => {
                if let Some(value) = self.lost.take() {
                    let args = self.release_args(&value);
                    self.releasing = Some(self.send(ctx, args));
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
                    lock: self.cfg.key.clone(),
                    reason: "abandoned".to_string(),
                });
            }
            State::Held {
                value, deadline, ..
            } => {
                ctx.cancel_timer(deadline);
                let args = self.release_args(&value);
                self.releasing = Some(self.send(ctx, args));
                ctx.observe(Obs::LockReleased {
                    lock: self.cfg.key.clone(),
                });
            }
        }
    }

    fn fail(&mut self, ctx: &mut impl RedisLockCtx, reason: String) -> Option<LockEvent> {
        self.state = State::Idle;
        ctx.observe(Obs::LockFailed {
            lock: self.cfg.key.clone(),
            reason,
        });
        Some(LockEvent::Failed)
    }

    /// Handles a reply from the instance; `None` if nothing changed for the caller.
    pub fn on_message<C: RedisLockCtx>(
        &mut self,
        ctx: &mut C,
        from: NodeId,
        msg: &C::Msg,
    ) -> Option<LockEvent> {
        let Some(RedisMsg::Reply { req, reply }) = msg.part() else {
            return None;
        };
        if from != self.cfg.instance {
            return None;
        }
        if self.releasing == Some(*req) {
            self.releasing = None;
            return Some(LockEvent::Released);
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
                let valid_until = start.saturating_add(SimDuration::from_millis(self.cfg.ttl_ms()));
                let now = ctx.mono_now();
                if now >= valid_until {
                    let args = self.release_args(&value);
                    self.send(ctx, args);
                    return self.fail(ctx, "OK came after the TTL had passed".to_string());
                }
                let deadline = ctx.set_timer(
                    valid_until.saturating_since(now),
                    RedisClientTimer::Deadline,
                );
                ctx.observe(Obs::LockAcquired {
                    lock: self.cfg.key.clone(),
                    token: None,
                    value: value.clone(),
                    valid_until_local: valid_until,
                });
                self.state = State::Held {
                    value,
                    valid_until,
                    deadline,
                };
                Some(LockEvent::Acquired {
                    token: None,
                    valid_until_local: valid_until,
                })
            }
            Ok(false) => self.fail(
                ctx,
                "held by another client (SET NX replied nil)".to_string(),
            ),
            Err(e) => self.fail(ctx, format!("{e}")),
        }
    }

    /// A reply to a request that is no longer pending: an `OK` to an abandoned acquisition is
    /// handed back at once.
    fn late_reply(
        &mut self,
        ctx: &mut impl RedisLockCtx,
        req: u64,
        reply: &crate::redis::Reply,
    ) -> Option<LockEvent> {
        if let Some((r, value)) = self.abandoned.take() {
            if r == req {
                if decode_set_nx_px(reply) == Ok(true) {
                    let args = self.release_args(&value);
                    self.send(ctx, args);
                }
            } else {
                self.abandoned = Some((r, value));
            }
        }
        None
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
                    self.abandoned = Some((req, value.clone()));
                    let ms = self.cfg.request_timeout.as_millis();
                    self.fail(ctx, format!("no reply within {ms} ms"))
                }
                _ => None,
            },
            RedisClientTimer::Deadline => match &self.state {
                State::Held { valid_until, .. } if ctx.mono_now() >= *valid_until => {
                    if let State::Held { value, .. } =
                        std::mem::replace(&mut self.state, State::Idle)
                    {
                        self.lost = Some(value);
                    }
                    ctx.observe(Obs::LockLost {
                        lock: self.cfg.key.clone(),
                        reason: "TTL passed by the local clock".to_string(),
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
    }
}
