//! The Redis instance actor: one Redis server on the simulated network.
//!
//! It wraps the pure model [`Instance`]: every command a client sends runs through
//! [`Instance::execute`] at the node's **wall clock** (`ctx.wall_now()`), so each Redis
//! rule (SET NX PX, lazy expiry, the lock scripts, persistence) has one implementation, shared
//! with the conformance replayer. A wall-clock step on this node therefore moves every key's
//! expiry, as in real Redis.
//!
//! **Messages.** `RedisMsg::Command { req, args }` (kind = the command name: `SET`, `GET`,
//! `DEL`, `EVAL`, `PEXPIRE`, `PTTL`, any other `CMD`) is answered with
//! `RedisMsg::Reply { req, reply }` (kind `REPLY`) to the sender.
//!
//! **Truth.** After each command the instance compares the touched keys (the keys the
//! command names: `SET`/`GET`/`PTTL`/`PEXPIRE` its first argument, `DEL` all, `EVAL` its
//! `KEYS`) as they were live just before and just after, at the same wall reading, and
//! observes what changed: `RedisKeySet` (a new value, or a key that was absent or expired),
//! `RedisKeyExpiry` (same value, new deadline), `RedisKeyDeleted` (a live key is gone).
//! Deadlines are reported as the **first wall instant at which the key is expired**:
//! `(deadline_ms + 1) * 1_000_000` ns ([`first_expired_wall_ns`]), because Redis keeps the key
//! alive through the whole millisecond `deadline_ms` (`now_ms > deadline_ms` expires it). The
//! checker's `key_expired(wall, deadline) = wall >= deadline` then agrees with Redis to the
//! nanosecond. A key found expired on access and deleted then (lazy expiry) is observed as
//! `RedisKeyDeleted` too (Redis propagates that deletion as a `DEL`): its truth already ended
//! at its deadline, but once deleted a backward wall-clock step cannot bring it back, so the
//! checkers must know it is gone.
//!
//! **Persistence** (what `ctx.persist` keeps, [`RedisDurable`]):
//! - `none`: nothing durable; a restart comes back empty;
//! - `aof_everysec`: a timer every 1 s of the local monotonic clock calls
//!   [`Instance::fsync_tick`] and persists the AOF; a crash loses what was written
//!   since the last tick (a host crash; see [`super::persistence`]);
//! - `aof_always`: the AOF is persisted after every command that changed the keyspace (lazy
//!   expiry included: Redis propagates it to the AOF as a `DEL`).
//!
//! **Restart.** `on_restart` rebuilds the instance from the durable AOF alone
//! ([`Instance::load`]). Deadlines are absolute wall times, so keys whose deadline
//! passed while the node was down are expired. With `restart_delay > 0` the instance stays
//! unavailable for that long on its monotonic clock: it drops every command unanswered and
//! observes nothing (the "delayed restarts" of the Redis distlock page: a restarted instance
//! must not take part in any lock for longer than the maximum TTL, so every lock it knew of
//! has expired before it answers). When it becomes available it observes
//! `RedisRestarted { keys }` with the keys that are live at that instant (deadlines as above).

use super::command::parse_redis_integer;
use super::store::{first_expired_wall_ns, Entry};
use super::{Instance, Keyspace, Persistence, Reply};
use crate::context::{Ctx, Role, Wraps};
use crate::observation::Obs;
use serde::{Deserialize, Serialize};
use splitbrain_engine::{NodeId, SimDuration, TimerId, WallTime};
use std::collections::BTreeSet;

/// The AOF fsync period of `appendfsync everysec` (local monotonic).
pub const FSYNC_EVERY: SimDuration = SimDuration::from_secs(1);

/// Redis messages (client <-> instance).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedisMsg {
    /// Client -> instance: run `args` (the command name first, as a client library sends it).
    Command {
        /// Request id, echoed in the reply.
        req: u64,
        /// The command and its arguments (build them with the `redis::command::*_args`).
        args: Vec<String>,
    },
    /// Instance -> client: the reply to request `req`.
    Reply {
        /// Request id of the command.
        req: u64,
        /// Redis's reply.
        reply: Reply,
    },
}

impl RedisMsg {
    /// The message kind for traces and metrics: the command name (`SET`, `GET`, `DEL`,
    /// `EVAL`, `PEXPIRE`, `PTTL`; `CMD` for anything else) or `REPLY`.
    pub fn kind(&self) -> &'static str {
        match self {
            RedisMsg::Command { args, .. } => {
                let name = args.first().map_or("", String::as_str);
                ["SET", "GET", "DEL", "EVAL", "PEXPIRE", "PTTL"]
                    .into_iter()
                    .find(|k| name.eq_ignore_ascii_case(k))
                    .unwrap_or("CMD")
            }
            RedisMsg::Reply { .. } => "REPLY",
        }
    }
}

/// Redis instance timers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstanceTimer {
    /// The once-a-second AOF fsync of `aof_everysec`.
    Fsync,
    /// The restart delay is over: start answering.
    Available,
}

/// What survives a crash of a Redis instance: its append-only file, as the keyspace it
/// loads to (entries with absolute wall-clock deadlines). Empty under `persistence: none`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RedisDurable {
    /// The durable copy of the keyspace.
    pub aof: Keyspace,
}

/// The context a Redis instance runs in: any composition whose messages, timers and durable
/// state wrap the instance's own ([`RedisMsg`], [`InstanceTimer`], [`RedisDurable`]).
pub trait InstanceCtx:
    Ctx<Msg: Wraps<RedisMsg>, Timer: Wraps<InstanceTimer>, Durable: Wraps<RedisDurable>>
{
}

impl<C> InstanceCtx for C where
    C: Ctx<Msg: Wraps<RedisMsg>, Timer: Wraps<InstanceTimer>, Durable: Wraps<RedisDurable>>
{
}

/// Redis instance configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedisInstanceConfig {
    /// What survives a crash (default [`Persistence::None`]: nothing).
    pub persistence: Persistence,
    /// After a restart, stay silent this long on the local monotonic clock before answering
    /// (default 0: answer at once). The distlock page's delayed restart: set it above the
    /// longest lock TTL.
    pub restart_delay: SimDuration,
}

impl Default for RedisInstanceConfig {
    /// No persistence, no restart delay.
    fn default() -> Self {
        RedisInstanceConfig {
            persistence: Persistence::None,
            restart_delay: SimDuration::ZERO,
        }
    }
}

/// The Redis instance actor (see the module doc).
#[derive(Clone, Debug)]
pub struct RedisInstance {
    cfg: RedisInstanceConfig,
    inst: Instance,
    available: bool,
    fsync: Option<TimerId>,
}

/// A key's deadline as the checkers take it: the first wall instant (ns) at which the key is
/// expired, saturated to `i64`.
fn deadline_wall(e: &Entry) -> Option<WallTime> {
    e.expires_at_ms.map(|ms| {
        let ns = first_expired_wall_ns(ms).clamp(i64::MIN as i128, i64::MAX as i128);
        WallTime(ns as i64)
    })
}

/// The keys a command names (deduplicated, in byte order).
fn touched_keys(args: &[String]) -> BTreeSet<String> {
    let Some(name) = args.first() else {
        return BTreeSet::new();
    };
    let is = |k: &str| name.eq_ignore_ascii_case(k);
    if is("DEL") {
        args[1..].iter().cloned().collect()
    } else if is("EVAL") {
        let n = args
            .get(2)
            .and_then(|s| parse_redis_integer(s))
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0);
        args.iter().skip(3).take(n).cloned().collect()
    } else if is("SET") || is("GET") || is("PTTL") || is("PEXPIRE") {
        args.get(1).cloned().into_iter().collect()
    } else {
        BTreeSet::new()
    }
}

impl RedisInstance {
    /// A running, empty instance.
    pub fn new(cfg: RedisInstanceConfig) -> Self {
        RedisInstance {
            cfg,
            inst: Instance::new(cfg.persistence),
            available: true,
            fsync: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &RedisInstanceConfig {
        &self.cfg
    }

    /// The model instance (live keyspace and durable copy), for tests and reports.
    pub fn instance(&self) -> &Instance {
        &self.inst
    }

    /// Whether it answers commands (false during a restart delay).
    pub fn is_available(&self) -> bool {
        self.available
    }

    fn arm_fsync(&mut self, ctx: &mut impl InstanceCtx) {
        if self.cfg.persistence == Persistence::AofEverysec {
            self.fsync = Some(ctx.set_timer(FSYNC_EVERY, InstanceTimer::Fsync));
        }
    }

    fn persist(&self, ctx: &mut impl InstanceCtx) {
        if self.cfg.persistence != Persistence::None {
            ctx.persist(RedisDurable {
                aof: self.inst.durable().clone(),
            });
        }
    }

    fn become_available(&mut self, ctx: &mut impl InstanceCtx) {
        self.available = true;
        let now = ctx.wall_now().0;
        let keys = self
            .inst
            .keyspace()
            .iter()
            .filter(|(_, e)| !e.is_expired(now))
            .map(|(k, e)| (k.to_string(), e.value.clone(), deadline_wall(e)))
            .collect();
        ctx.observe(Obs::RedisRestarted { keys });
    }
}

impl<C: InstanceCtx> Role<C> for RedisInstance {
    /// Runs at true time 0: starts the fsync timer under `aof_everysec`.
    fn on_start(&mut self, ctx: &mut C) {
        self.arm_fsync(ctx);
    }

    /// Runs a command and replies; drops it unanswered while unavailable.
    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg) {
        let Some(RedisMsg::Command { req, args }) = msg.into_part() else {
            return;
        };
        if !self.available {
            return;
        }
        let now = ctx.wall_now().0;
        let keys = touched_keys(&args);
        let live = |inst: &Instance, k: &str| inst.keyspace().peek(k, now).cloned();
        let before: Vec<Option<Entry>> = keys.iter().map(|k| live(&self.inst, k)).collect();
        let stored = |inst: &Instance, k: &str| inst.keyspace().iter().any(|(s, _)| s == k);
        let stored_before: Vec<bool> = keys.iter().map(|k| stored(&self.inst, k)).collect();
        let stored_count = self.inst.keyspace().stored_len();
        let reply = match self.inst.execute(&args, now) {
            Ok(r) => r,
            // The model refuses commands only when stopped; the actor never stops it.
            Err(e) => Reply::Error(format!("ERR {e}")),
        };
        let mut changed = self.inst.keyspace().stored_len() != stored_count;
        for ((key, before), was_stored) in keys.iter().zip(before).zip(stored_before) {
            let after = live(&self.inst, key);
            let obs = match (before, after) {
                (Some(_), None) => Some(Obs::RedisKeyDeleted { key: key.clone() }),
                // Lazy expiry: an expired key found on access is deleted.
                (None, None) if was_stored && !stored(&self.inst, key) => {
                    Some(Obs::RedisKeyDeleted { key: key.clone() })
                }
                (None, Some(a)) => Some(Obs::RedisKeySet {
                    key: key.clone(),
                    deadline_wall: deadline_wall(&a),
                    value: a.value,
                }),
                (Some(b), Some(a)) if b.value != a.value => Some(Obs::RedisKeySet {
                    key: key.clone(),
                    deadline_wall: deadline_wall(&a),
                    value: a.value,
                }),
                (Some(b), Some(a)) if b.expires_at_ms != a.expires_at_ms => {
                    Some(Obs::RedisKeyExpiry {
                        key: key.clone(),
                        deadline_wall: deadline_wall(&a),
                    })
                }
                _ => None,
            };
            if let Some(o) = obs {
                changed = true;
                ctx.observe(o);
            }
        }
        if changed && self.cfg.persistence == Persistence::AofAlways {
            self.persist(ctx);
        }
        ctx.send(from, RedisMsg::Reply { req, reply });
    }

    /// Handles the fsync tick and the end of the restart delay.
    fn on_timer(&mut self, ctx: &mut C, timer: C::Timer) {
        let Some(t) = timer.into_part() else {
            return;
        };
        match t {
            InstanceTimer::Fsync => {
                self.inst.fsync_tick();
                self.persist(ctx);
                self.arm_fsync(ctx);
            }
            InstanceTimer::Available => self.become_available(ctx),
        }
    }

    /// Rebuilds from the durable AOF alone (empty under `none`); answers again at once or
    /// after `restart_delay`.
    fn on_restart(&mut self, ctx: &mut C, durable: &C::Durable) {
        let aof = durable
            .part()
            .map_or_else(Keyspace::new, |d: &RedisDurable| d.aof.clone());
        self.inst = Instance::load(self.cfg.persistence, aof);
        self.fsync = None;
        self.arm_fsync(ctx);
        if self.cfg.restart_delay == SimDuration::ZERO {
            self.become_available(ctx);
        } else {
            self.available = false;
            ctx.set_timer(self.cfg.restart_delay, InstanceTimer::Available);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(args: &[&str]) -> RedisMsg {
        RedisMsg::Command {
            req: 1,
            args: args.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn kinds_name_the_command() {
        assert_eq!(cmd(&["set", "k", "v"]).kind(), "SET");
        assert_eq!(cmd(&["EVAL", "x", "1", "k"]).kind(), "EVAL");
        assert_eq!(cmd(&["PING"]).kind(), "CMD");
        assert_eq!(cmd(&[]).kind(), "CMD");
        let r = RedisMsg::Reply {
            req: 1,
            reply: Reply::Nil,
        };
        assert_eq!(r.kind(), "REPLY");
    }

    #[test]
    fn touched_keys_per_command() {
        let v = |a: &[&str]| -> Vec<String> {
            touched_keys(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .into_iter()
                .collect()
        };
        assert_eq!(v(&["SET", "k", "v", "NX"]), ["k"]);
        assert_eq!(v(&["DEL", "b", "a", "b"]), ["a", "b"]);
        assert_eq!(v(&["EVAL", "s", "1", "k", "v"]), ["k"]);
        assert_eq!(v(&["EVAL", "s", "-1", "k"]), Vec::<String>::new());
        assert_eq!(v(&["PING"]), Vec::<String>::new());
    }

    #[test]
    fn deadline_is_the_first_expired_instant() {
        let e = Entry {
            value: "v".into(),
            expires_at_ms: Some(30_000),
        };
        assert_eq!(deadline_wall(&e), Some(WallTime(30_001_000_000)));
        let e = Entry {
            value: "v".into(),
            expires_at_ms: Some(i64::MAX),
        };
        assert_eq!(deadline_wall(&e), Some(WallTime(i64::MAX)));
    }
}
