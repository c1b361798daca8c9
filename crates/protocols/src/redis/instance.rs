//! The Redis instance actor: one Redis server on the simulated network.
//!
//! It wraps the pure model [`Instance`]: every command a client sends runs through
//! [`Instance::execute`] at the node's **wall clock** (`ctx.wall_now()`), so each Redis
//! rule (SET NX PX, lazy expiry, the lock scripts, persistence) has one implementation, shared
//! with the conformance replayer. A wall-clock step on this node therefore moves every key's
//! expiry, as in real Redis.
//!
//! **Messages.** `RedisMsg::Command { req, args }` (kind = the command name: `SET`, `GET`,
//! `DEL`, `EVAL`, `EVALSHA`, `PEXPIRE`, `PTTL`, any other `CMD`) is answered with
//! `RedisMsg::Reply { req, reply }` (kind `REPLY`) to the sender.
//!
//! **Truth.** After each command the instance compares the touched keys (the keys the
//! command names: `SET`/`GET`/`PTTL`/`PEXPIRE` its first argument, `DEL` all, `EVAL`/`EVALSHA` its
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
//!
//! **Replication** (`replica_of`, Redis's asynchronous replication). A replica observes
//! `RedisReplicaOf { primary }` at start and sends `PSYNC` ([`RedisMsg::Psync`], carrying its
//! replication delay) to the primary, which answers with a full resynchronisation
//! ([`RedisMsg::FullResync`]: its whole dataset and the next stream offset) and from then on
//! ships every write it applies: after each command that changed the keyspace, the post-state
//! of each touched key (value and absolute deadline, as Redis 7 propagates `SET .. PX` as
//! `PXAT`, or a deletion) joins that replica's stream ([`RedisMsg::Replicate`], one offset per
//! write) and is sent after the replica's **replication delay** (fixed, or uniform between two
//! bounds drawn from the primary's RNG stream; never before an earlier write of the same
//! stream), on the primary's monotonic clock. Sent means gone: a crash of the primary drops
//! whatever it had not sent yet, which is the distlock page's failover hazard. The replica
//! applies the stream in offset order (buffering gaps) and observes the key changes as a
//! primary does. While it is a replica it answers reads and refuses writes with Redis's
//! `READONLY You can't write against a read only replica.` The primary pings each replica
//! every [`REPL_PING_EVERY`] of its monotonic clock. A primary that restarts sends each of its
//! replicas a new full resynchronisation; a replica that restarts sends `PSYNC` again.
//!
//! **Failover** (`down_after`; Sentinel modelled as ONE failover rule, evaluated by the
//! replica, not as a quorum of watchers). The replica judges its primary down when it has
//! received nothing from it (stream, full resync or ping) for `down_after` of the replica's
//! monotonic clock, as Sentinel judges a master subjectively down after
//! `down-after-milliseconds` without a valid PING reply. It then promotes itself at once
//! (Sentinel's quorum, leader election and `failover-timeout` are not modelled): it observes
//! `RedisPromoted { primary }`, stops applying the old primary's stream, accepts writes, and
//! sends [`RedisMsg::SwitchMaster`] to every client it was told of (Sentinel's `+switch-master`
//! notice, which every client subscribes to); a client that receives it sends to the new
//! primary from then on. The old primary is not demoted when it comes back (Sentinel would
//! reconfigure it as a replica): clients that got the notice no longer ask it.

use super::command::parse_redis_integer;
use super::store::{first_expired_wall_ns, Entry};
use super::{Instance, Keyspace, Persistence, Reply};
use crate::context::{Ctx, Role, Wraps};
use crate::observation::Obs;
use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId, SimDuration, TimerId, WallTime};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

/// The AOF fsync period of `appendfsync everysec` (local monotonic).
pub const FSYNC_EVERY: SimDuration = SimDuration::from_secs(1);

/// How often a primary pings each replica (local monotonic): once a second, as Sentinel
/// pings a master (Redis's own `repl-ping-replica-period` is 10 s; the failure detector this
/// stands for is Sentinel's).
pub const REPL_PING_EVERY: SimDuration = SimDuration::from_secs(1);

/// Redis's refusal of a write on a replica.
pub const READONLY_ERROR: &str = "READONLY You can't write against a read only replica.";

/// One write of the replication stream: each touched key's state after the write (value and
/// absolute deadline) or `None` (deleted).
pub type ReplOps = Vec<(String, Option<Entry>)>;

/// A command's arguments as a message carries them (the command name first): shared, so a
/// client that sends the same command to several instances (Redlock) builds it once, and the
/// engine's copies of a message (trace, duplicates) copy no strings; with the message kind
/// worked out once, when built (the engine asks a message's kind several times per send).
/// Dereferences to the argument list; serialized as the plain list of strings.
#[derive(Clone, Debug)]
pub struct CommandArgs {
    args: Arc<[String]>,
    kind: &'static str,
}

impl CommandArgs {
    /// The message kind of a command named `name`: `SET`, `GET`, `DEL`, `EVAL`, `EVALSHA`,
    /// `PEXPIRE`, `PTTL` (case-insensitive), `CMD` for anything else.
    fn kind_of(name: &str) -> &'static str {
        const NAMED: [&str; 7] = ["SET", "GET", "DEL", "EVAL", "EVALSHA", "PEXPIRE", "PTTL"];
        NAMED
            .into_iter()
            .find(|k| name.eq_ignore_ascii_case(k))
            .unwrap_or("CMD")
    }

    /// The message kind of this command (see [`RedisMsg::kind`]).
    pub fn kind(&self) -> &'static str {
        self.kind
    }
}

impl From<Vec<String>> for CommandArgs {
    fn from(args: Vec<String>) -> Self {
        let kind = CommandArgs::kind_of(args.first().map_or("", String::as_str));
        CommandArgs {
            args: args.into(),
            kind,
        }
    }
}

impl std::ops::Deref for CommandArgs {
    type Target = [String];
    fn deref(&self) -> &[String] {
        &self.args
    }
}

/// Equal arguments (the kind follows from them).
impl PartialEq for CommandArgs {
    fn eq(&self, other: &Self) -> bool {
        self.args == other.args
    }
}

impl Eq for CommandArgs {}

impl Serialize for CommandArgs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.args[..].serialize(s)
    }
}

impl<'de> Deserialize<'de> for CommandArgs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<String>::deserialize(d).map(CommandArgs::from)
    }
}

/// Redis messages (client <-> instance).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedisMsg {
    /// Client -> instance: run `args` (the command name first, as a client library sends it).
    Command {
        /// Request id, echoed in the reply.
        req: u64,
        /// The command and its arguments (build them with the `redis::command::*_args`).
        args: CommandArgs,
    },
    /// Instance -> client: the reply to request `req`.
    Reply {
        /// Request id of the command.
        req: u64,
        /// Redis's reply.
        reply: Reply,
    },
    /// Replica -> primary: start (or restart) replicating me. `delay` is the replica's
    /// replication delay as `[min, max]` (ns; equal bounds: fixed), which the primary waits
    /// before shipping each write to it.
    Psync {
        /// Replication delay bounds, ns.
        delay: [SimDuration; 2],
    },
    /// Primary -> replica: the whole dataset; the stream continues at `offset`.
    FullResync {
        /// The next stream offset.
        offset: u64,
        /// Every stored key with its absolute deadline.
        keys: Vec<(String, Entry)>,
    },
    /// Primary -> replica: the write at stream offset `offset`.
    Replicate {
        /// Stream offset (one per write).
        offset: u64,
        /// The touched keys' states after the write.
        ops: ReplOps,
    },
    /// Primary -> replica: the replication heartbeat.
    ReplPing,
    /// Promoted replica -> clients: Sentinel's `+switch-master`: `new` replaces `old`.
    SwitchMaster {
        /// The failed primary.
        old: NodeId,
        /// The promoted replica.
        new: NodeId,
    },
}

impl RedisMsg {
    /// The message kind for traces and metrics: the command name (`SET`, `GET`, `DEL`,
    /// `EVAL`, `EVALSHA`, `PEXPIRE`, `PTTL`; `CMD` for anything else) or `REPLY`.
    pub fn kind(&self) -> &'static str {
        match self {
            RedisMsg::Command { args, .. } => args.kind(),
            RedisMsg::Reply { .. } => "REPLY",
            RedisMsg::Psync { .. } => "PSYNC",
            RedisMsg::FullResync { .. } => "FULLRESYNC",
            RedisMsg::Replicate { .. } => "REPL",
            RedisMsg::ReplPing => "REPLPING",
            RedisMsg::SwitchMaster { .. } => "SWITCH-MASTER",
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
    /// Ship the due writes of the stream to `replica`.
    Ship {
        /// The replica.
        replica: NodeId,
    },
    /// Ping every replica.
    ReplPing,
    /// Nothing from the primary for `down_after`: promote.
    PrimaryDown,
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

/// A replica's configuration (see the module doc, "Replication" and "Failover").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaConfig {
    /// The primary it replicates.
    pub primary: NodeId,
    /// Replication delay bounds `[min, max]` (ns): each write reaches the replica's stream
    /// this long after the primary applied it, uniform between the bounds (equal bounds:
    /// fixed), plus the network's delay.
    pub delay: [SimDuration; 2],
    /// Promote after this long without hearing from the primary (local monotonic); `None`:
    /// never (no failover).
    pub down_after: Option<SimDuration>,
    /// Who learns of a promotion (`SwitchMaster`): the clients.
    pub notify: Vec<NodeId>,
}

/// Redis instance configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisInstanceConfig {
    /// What survives a crash (default [`Persistence::None`]: nothing).
    pub persistence: Persistence,
    /// After a restart, stay silent this long on the local monotonic clock before answering
    /// (default 0: answer at once). The distlock page's delayed restart: set it above the
    /// longest lock TTL.
    pub restart_delay: SimDuration,
    /// Replicate this primary (default `None`: a primary).
    pub replica_of: Option<ReplicaConfig>,
}

impl Default for RedisInstanceConfig {
    /// No persistence, no restart delay, a primary.
    fn default() -> Self {
        RedisInstanceConfig {
            persistence: Persistence::None,
            restart_delay: SimDuration::ZERO,
            replica_of: None,
        }
    }
}

/// A primary's stream to one replica.
#[derive(Clone, Debug)]
struct Stream {
    delay: [SimDuration; 2],
    /// Writes not yet sent: (due, local monotonic; offset; ops).
    queue: VecDeque<(LocalTime, u64, ReplOps)>,
    /// The pending ship timer.
    timer: Option<TimerId>,
}

/// A replica's state.
#[derive(Clone, Debug)]
struct ReplicaState {
    /// Still a replica (false once promoted).
    replica: bool,
    /// The next offset to apply; `None` before the first full resync.
    expected: Option<u64>,
    /// Writes received ahead of `expected`.
    ahead: BTreeMap<u64, ReplOps>,
    /// The `down_after` timer.
    down: Option<TimerId>,
}

/// The Redis instance actor (see the module doc).
#[derive(Clone, Debug)]
pub struct RedisInstance {
    cfg: RedisInstanceConfig,
    inst: Instance,
    available: bool,
    fsync: Option<TimerId>,
    /// As a primary: the stream to each replica that sent `PSYNC`.
    streams: BTreeMap<NodeId, Stream>,
    /// The next stream offset.
    offset: u64,
    /// As a (possibly promoted) replica.
    replica: Option<ReplicaState>,
}

/// A key's deadline as the checkers take it: the first wall instant (ns) at which the key is
/// expired, saturated to `i64`.
fn deadline_wall(e: &Entry) -> Option<WallTime> {
    e.expires_at_ms.map(|ms| {
        let ns = first_expired_wall_ns(ms).clamp(i64::MIN as i128, i64::MAX as i128);
        WallTime(ns as i64)
    })
}

/// The keys a command names, deduplicated, in byte order, borrowed from its arguments.
enum Touched<'a> {
    /// At most one key: a slice of the arguments (no allocation).
    Args(&'a [String]),
    /// Several keys, sorted and deduplicated.
    Sorted(Vec<&'a str>),
}

impl Touched<'_> {
    /// The keys as owned strings (tests).
    #[cfg(test)]
    fn to_vec(&self) -> Vec<String> {
        match self {
            Touched::Args(a) => a.to_vec(),
            Touched::Sorted(v) => v.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// The keys a command names (see [`Touched`]), by its kind (the command name, matched
/// case-insensitively once, when the arguments were built).
fn touched_keys(args: &CommandArgs) -> Touched<'_> {
    let kind = args.kind();
    let is = |k: &str| kind == k;
    let keys = if args.is_empty() {
        &[]
    } else if is("DEL") {
        &args[1..]
    } else if is("EVAL") || is("EVALSHA") {
        let n = args
            .get(2)
            .and_then(|s| parse_redis_integer(s))
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0);
        &args[3.min(args.len())..args.len().min(3usize.saturating_add(n))]
    } else if is("SET") || is("GET") || is("PTTL") || is("PEXPIRE") {
        &args[1.min(args.len())..2.min(args.len())]
    } else {
        &[]
    };
    if keys.len() <= 1 {
        return Touched::Args(keys);
    }
    let mut sorted: Vec<&str> = keys.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    sorted.dedup();
    Touched::Sorted(sorted)
}

impl RedisInstance {
    /// A running, empty instance.
    pub fn new(cfg: RedisInstanceConfig) -> Self {
        let replica = cfg.replica_of.as_ref().map(|_| ReplicaState {
            replica: true,
            expected: None,
            ahead: BTreeMap::new(),
            down: None,
        });
        RedisInstance {
            inst: Instance::new(cfg.persistence),
            cfg,
            available: true,
            fsync: None,
            streams: BTreeMap::new(),
            offset: 0,
            replica,
        }
    }

    /// Whether it is a replica now (configured `replica_of` and not promoted).
    pub fn is_replica(&self) -> bool {
        self.replica.as_ref().is_some_and(|r| r.replica)
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

impl RedisInstance {
    /// Runs `f` on the model and observes how the `keys` (deduplicated, in byte order)
    /// changed (see the module doc, "Truth"); returns whether the keyspace changed, and, if it
    /// did and a replica streams from this instance, each touched key's stored state after
    /// (the replication stream's write; empty otherwise, as nothing would ship it).
    fn observed<K: AsRef<str>, R>(
        &mut self,
        ctx: &mut impl InstanceCtx,
        keys: &[K],
        f: impl FnOnce(&mut Instance, i64) -> R,
    ) -> (R, bool, ReplOps) {
        let now = ctx.wall_now().0;
        // Each key's live entry (value and deadline) and whether it was stored, before: on
        // the stack for the one or two keys of the lock commands, in a list beyond.
        let capture = |k: &K| {
            let stored = self.inst.keyspace().get_stored(k.as_ref());
            let live = stored.filter(|e| !e.is_expired(now)).cloned();
            (live, stored.is_some())
        };
        let mut stack: [(Option<Entry>, bool); 2] = Default::default();
        let mut heap = Vec::new();
        let before: &mut [(Option<Entry>, bool)] = if keys.len() <= stack.len() {
            for (slot, k) in stack.iter_mut().zip(keys) {
                *slot = capture(k);
            }
            &mut stack[..keys.len()]
        } else {
            heap.extend(keys.iter().map(capture));
            &mut heap
        };
        let stored_count = self.inst.keyspace().stored_len();
        let out = f(&mut self.inst, now);
        let mut changed = self.inst.keyspace().stored_len() != stored_count;
        for (key, (before, was_stored)) in keys.iter().zip(before.iter_mut().map(std::mem::take)) {
            let key = key.as_ref();
            let ks = self.inst.keyspace();
            let after = ks.peek(key, now);
            let obs = match (before, after) {
                (Some(_), None) => Some(Obs::RedisKeyDeleted {
                    key: key.to_string(),
                }),
                // Lazy expiry: an expired key found on access is deleted.
                (None, None) if was_stored && !ks.contains_stored(key) => {
                    Some(Obs::RedisKeyDeleted {
                        key: key.to_string(),
                    })
                }
                (None, Some(a)) => Some(Obs::RedisKeySet {
                    key: key.to_string(),
                    deadline_wall: deadline_wall(a),
                    value: a.value.clone(),
                }),
                (Some(b), Some(a)) if b.value != a.value => Some(Obs::RedisKeySet {
                    key: key.to_string(),
                    deadline_wall: deadline_wall(a),
                    value: a.value.clone(),
                }),
                (Some(b), Some(a)) if b.expires_at_ms != a.expires_at_ms => {
                    Some(Obs::RedisKeyExpiry {
                        key: key.to_string(),
                        deadline_wall: deadline_wall(a),
                    })
                }
                _ => None,
            };
            if let Some(o) = obs {
                changed = true;
                ctx.observe(o);
            }
        }
        let ops = if changed && !self.streams.is_empty() {
            let ks = self.inst.keyspace();
            keys.iter()
                .map(|k| {
                    let k = k.as_ref();
                    (k.to_string(), ks.get_stored(k).cloned())
                })
                .collect()
        } else {
            Vec::new()
        };
        if changed && self.cfg.persistence == Persistence::AofAlways {
            self.persist(ctx);
        }
        (out, changed, ops)
    }

    /// The whole stored dataset, for a full resynchronisation.
    fn dataset(&self) -> Vec<(String, Entry)> {
        self.inst
            .keyspace()
            .iter()
            .map(|(k, e)| (k.to_string(), e.clone()))
            .collect()
    }

    /// As a primary: queues one write on every replica's stream.
    fn ship(&mut self, ctx: &mut impl InstanceCtx, ops: ReplOps) {
        if self.streams.is_empty() {
            return;
        }
        let offset = self.offset;
        self.offset += 1;
        let now = ctx.mono_now();
        let replicas: Vec<NodeId> = self.streams.keys().copied().collect();
        for r in replicas {
            let [lo, hi] = self.streams[&r].delay;
            let d = if lo == hi {
                lo
            } else {
                SimDuration(ctx.rng().uniform_inclusive(lo.0, hi.0))
            };
            let stream = self.streams.get_mut(&r).expect("listed above");
            let mut due = now.saturating_add(d);
            if let Some(&(last, _, _)) = stream.queue.back() {
                due = due.max(last);
            }
            stream.queue.push_back((due, offset, ops.clone()));
            if stream.timer.is_none() {
                stream.timer = Some(ctx.set_timer(
                    due.saturating_since(now),
                    InstanceTimer::Ship { replica: r },
                ));
            }
        }
    }

    /// As a primary: sends `replica` the due writes of its stream, re-arms for the rest.
    fn ship_due(&mut self, ctx: &mut impl InstanceCtx, replica: NodeId) {
        let now = ctx.mono_now();
        let Some(stream) = self.streams.get_mut(&replica) else {
            return;
        };
        stream.timer = None;
        let mut sent = Vec::new();
        while stream.queue.front().is_some_and(|(due, _, _)| *due <= now) {
            let (_, offset, ops) = stream.queue.pop_front().expect("checked");
            sent.push(RedisMsg::Replicate { offset, ops });
        }
        let next = stream.queue.front().map(|(due, _, _)| *due);
        for m in sent {
            ctx.send(replica, m);
        }
        if let Some(due) = next {
            let t = ctx.set_timer(due.saturating_since(now), InstanceTimer::Ship { replica });
            self.streams.get_mut(&replica).expect("present").timer = Some(t);
        }
    }

    /// As a primary: (re)starts `replica`'s stream with a full resynchronisation.
    fn full_resync(
        &mut self,
        ctx: &mut impl InstanceCtx,
        replica: NodeId,
        delay: [SimDuration; 2],
    ) {
        if let Some(t) = self.streams.get_mut(&replica).and_then(|s| s.timer.take()) {
            ctx.cancel_timer(t);
        }
        let first = self.streams.is_empty();
        self.streams.insert(
            replica,
            Stream {
                delay,
                queue: VecDeque::new(),
                timer: None,
            },
        );
        ctx.send(
            replica,
            RedisMsg::FullResync {
                offset: self.offset,
                keys: self.dataset(),
            },
        );
        if first {
            ctx.set_timer(REPL_PING_EVERY, InstanceTimer::ReplPing);
        }
    }

    /// As a replica: restarts the `down_after` timer (heard from the primary).
    fn heard_from_primary(&mut self, ctx: &mut impl InstanceCtx) {
        let down_after = self.cfg.replica_of.as_ref().and_then(|r| r.down_after);
        let Some(st) = self.replica.as_mut() else {
            return;
        };
        if let Some(t) = st.down.take() {
            ctx.cancel_timer(t);
        }
        if let Some(d) = down_after {
            st.down = Some(ctx.set_timer(d, InstanceTimer::PrimaryDown));
        }
    }

    /// As a replica: applies one write of the stream.
    fn apply(&mut self, ctx: &mut impl InstanceCtx, ops: ReplOps) {
        let keys: Vec<String> = ops
            .iter()
            .map(|(k, _)| k.clone())
            .collect::<BTreeSet<String>>()
            .into_iter()
            .collect();
        self.observed(ctx, &keys, |inst, _| {
            for (k, e) in ops {
                inst.apply_replicated(&k, e);
            }
        });
    }

    /// Handles a replication message from node `from`.
    fn on_replication(&mut self, ctx: &mut impl InstanceCtx, from: NodeId, msg: RedisMsg) {
        match msg {
            RedisMsg::Psync { delay } if !self.is_replica() => {
                self.full_resync(ctx, from, delay);
            }
            RedisMsg::FullResync { offset, keys } => {
                if !self.is_replica()
                    || Some(from) != self.cfg.replica_of.as_ref().map(|r| r.primary)
                {
                    return;
                }
                self.heard_from_primary(ctx);
                let mut names: BTreeSet<String> = self
                    .inst
                    .keyspace()
                    .iter()
                    .map(|(k, _)| k.to_string())
                    .collect();
                names.extend(keys.iter().map(|(k, _)| k.clone()));
                let names: Vec<String> = names.into_iter().collect();
                let mut ks = Keyspace::new();
                for (k, e) in keys {
                    ks.insert(k, e);
                }
                self.observed(ctx, &names, |inst, _| inst.replace_dataset(ks));
                let st = self.replica.as_mut().expect("a replica");
                st.expected = Some(offset);
                st.ahead.retain(|&o, _| o >= offset);
                self.drain(ctx);
            }
            RedisMsg::Replicate { offset, ops } => {
                if !self.is_replica()
                    || Some(from) != self.cfg.replica_of.as_ref().map(|r| r.primary)
                {
                    return;
                }
                self.heard_from_primary(ctx);
                let st = self.replica.as_mut().expect("a replica");
                if st.expected.map_or(true, |e| offset >= e) {
                    st.ahead.insert(offset, ops);
                }
                self.drain(ctx);
            }
            RedisMsg::ReplPing
                if self.is_replica()
                    && Some(from) == self.cfg.replica_of.as_ref().map(|r| r.primary) =>
            {
                self.heard_from_primary(ctx);
            }
            _ => {}
        }
    }

    /// As a replica: applies the buffered writes that are next in offset order.
    fn drain(&mut self, ctx: &mut impl InstanceCtx) {
        loop {
            let st = self.replica.as_mut().expect("a replica");
            let Some(e) = st.expected else {
                return;
            };
            let Some(ops) = st.ahead.remove(&e) else {
                return;
            };
            st.expected = Some(e + 1);
            self.apply(ctx, ops);
        }
    }

    /// As a replica: the failover rule fired; become the primary and tell the clients.
    fn promote(&mut self, ctx: &mut impl InstanceCtx) {
        let Some(rc) = self.cfg.replica_of.clone() else {
            return;
        };
        let Some(st) = self.replica.as_mut() else {
            return;
        };
        if !st.replica {
            return;
        }
        st.replica = false;
        st.down = None;
        st.ahead.clear();
        ctx.observe(Obs::RedisPromoted {
            primary: rc.primary,
        });
        let me = ctx.id();
        for c in rc.notify {
            ctx.send(
                c,
                RedisMsg::SwitchMaster {
                    old: rc.primary,
                    new: me,
                },
            );
        }
    }

    /// As a replica: (re)connects to the primary.
    fn connect(&mut self, ctx: &mut impl InstanceCtx) {
        let Some(rc) = self.cfg.replica_of.clone() else {
            return;
        };
        if !self.is_replica() {
            return;
        }
        if let Some(st) = self.replica.as_mut() {
            st.expected = None;
            st.ahead.clear();
        }
        ctx.send(rc.primary, RedisMsg::Psync { delay: rc.delay });
        self.heard_from_primary(ctx);
    }
}

/// Whether a command writes (a replica refuses it).
pub(crate) fn is_write(args: &CommandArgs) -> bool {
    matches!(args.kind(), "SET" | "DEL" | "EVAL" | "EVALSHA" | "PEXPIRE")
}

/// The keys a command names (`SET`/`GET`/`PTTL`/`PEXPIRE` its first argument, `DEL` all,
/// `EVAL`/`EVALSHA` its `KEYS`), deduplicated, in byte order: what a primary ships to its
/// replicas after a write (each key's stored state after it).
pub(crate) fn touched_key_names(args: &CommandArgs) -> Vec<String> {
    match touched_keys(args) {
        Touched::Args(a) => a.to_vec(),
        Touched::Sorted(v) => v.iter().map(|s| s.to_string()).collect(),
    }
}

impl<C: InstanceCtx> Role<C> for RedisInstance {
    /// Runs at true time 0: starts the fsync timer under `aof_everysec`; a replica observes
    /// `RedisReplicaOf` and connects to its primary.
    fn on_start(&mut self, ctx: &mut C) {
        self.arm_fsync(ctx);
        if let Some(rc) = &self.cfg.replica_of {
            ctx.observe(Obs::RedisReplicaOf {
                primary: rc.primary,
            });
            self.connect(ctx);
        }
    }

    /// Runs a command and replies; drops it unanswered while unavailable. Replication
    /// messages go to the replication logic.
    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg) {
        let Some(msg) = msg.into_part() else {
            return;
        };
        if !self.available {
            return;
        }
        let RedisMsg::Command { req, args } = msg else {
            self.on_replication(ctx, from, msg);
            return;
        };
        if self.is_replica() && is_write(&args) {
            let reply = Reply::Error(READONLY_ERROR.to_string());
            ctx.send(from, RedisMsg::Reply { req, reply });
            return;
        }
        let run = |inst: &mut Instance, now| {
            match inst.execute(&args, now) {
                Ok(r) => r,
                // The model refuses commands only when stopped; the actor never stops it.
                Err(e) => Reply::Error(format!("ERR {e}")),
            }
        };
        let (reply, changed, ops) = match touched_keys(&args) {
            Touched::Args(keys) => self.observed(ctx, keys, run),
            Touched::Sorted(keys) => self.observed(ctx, &keys, run),
        };
        if changed {
            self.ship(ctx, ops);
        }
        ctx.send(from, RedisMsg::Reply { req, reply });
    }

    /// Handles the fsync tick, the end of the restart delay and the replication timers.
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
            InstanceTimer::Available => {
                self.become_available(ctx);
                self.after_restart(ctx);
            }
            InstanceTimer::Ship { replica } => self.ship_due(ctx, replica),
            InstanceTimer::ReplPing => {
                if !self.is_replica() && !self.streams.is_empty() {
                    let rs: Vec<NodeId> = self.streams.keys().copied().collect();
                    for r in rs {
                        ctx.send(r, RedisMsg::ReplPing);
                    }
                    ctx.set_timer(REPL_PING_EVERY, InstanceTimer::ReplPing);
                }
            }
            InstanceTimer::PrimaryDown => {
                if let Some(st) = self.replica.as_mut() {
                    st.down = None;
                }
                self.promote(ctx);
            }
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
        // Timers died with the process: forget the pending ones.
        for s in self.streams.values_mut() {
            s.queue.clear();
            s.timer = None;
        }
        if let Some(st) = self.replica.as_mut() {
            st.down = None;
        }
        if self.cfg.restart_delay == SimDuration::ZERO {
            self.become_available(ctx);
            self.after_restart(ctx);
        } else {
            self.available = false;
            ctx.set_timer(self.cfg.restart_delay, InstanceTimer::Available);
        }
    }
}

impl RedisInstance {
    /// Back in service after a restart: a primary resynchronises its replicas (and pings
    /// again), a replica reconnects.
    fn after_restart(&mut self, ctx: &mut impl InstanceCtx) {
        if self.is_replica() {
            self.connect(ctx);
            return;
        }
        let rs: Vec<(NodeId, [SimDuration; 2])> =
            self.streams.iter().map(|(r, s)| (*r, s.delay)).collect();
        self.streams.clear();
        for (r, d) in rs {
            self.full_resync(ctx, r, d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(args: &[&str]) -> RedisMsg {
        RedisMsg::Command {
            req: 1,
            args: args
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .into(),
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

    /// Shared arguments travel in traces exactly as the plain list of strings did, and read
    /// back to the same message.
    #[test]
    fn shared_args_serialize_as_a_plain_list() {
        let m = cmd(&["SET", "lock", "v", "NX", "PX", "10000"]);
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(
            json,
            r#"{"command":{"req":1,"args":["SET","lock","v","NX","PX","10000"]}}"#
        );
        let back: RedisMsg = serde_json::from_str(&json).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.kind(), "SET");
        let read: RedisMsg =
            serde_json::from_str(r#"{"command":{"req":2,"args":["pExpire","k","5"]}}"#).unwrap();
        assert_eq!(read.kind(), "PEXPIRE");
    }

    #[test]
    fn touched_keys_per_command() {
        let v = |a: &[&str]| -> Vec<String> {
            let args: CommandArgs = a.iter().map(|s| s.to_string()).collect::<Vec<_>>().into();
            touched_keys(&args).to_vec()
        };
        assert_eq!(v(&["SET", "k", "v", "NX"]), ["k"]);
        assert_eq!(v(&["DEL", "b", "a", "b"]), ["a", "b"]);
        assert_eq!(v(&["EVAL", "s", "1", "k", "v"]), ["k"]);
        assert_eq!(v(&["EVAL", "s", "-1", "k"]), Vec::<String>::new());
        assert_eq!(v(&["PING"]), Vec::<String>::new());
        // Command names are case-insensitive, as Redis reads them.
        assert_eq!(v(&["del", "y", "x"]), ["x", "y"]);
        assert_eq!(v(&["pExpire", "k", "5"]), ["k"]);
        assert_eq!(v(&[]), Vec::<String>::new());
        let w = |a: &[&str]| is_write(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>().into());
        assert!(w(&["set", "k", "v"]) && w(&["Eval", "s", "0"]) && w(&["DEL", "k"]));
        assert!(!w(&["GET", "k"]) && !w(&["pttl", "k"]) && !w(&["PING"]));
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
