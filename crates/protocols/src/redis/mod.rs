//! Redis: the Redis instance actor ([`instance`]) and, under it, a pure, engine-independent
//! model of one Redis 7.0 instance as the lock protocols use it.
//!
//! - [`instance`]: [`RedisInstance`], one Redis server on the simulated network, with its
//!   messages ([`RedisMsg`]: what the lock clients send), timers and durable state. It runs
//!   every command through the model below. It also models asynchronous replication to a
//!   replica and a Sentinel-style failover rule (see its module doc).
//! - [`store`]: the keyspace (`BTreeMap`), absolute wall-clock deadlines in ms, lazy expiry
//!   with Redis's `now > deadline` rule, and the ns -> ms mapping of the simulated wall clock.
//! - [`command`]: [`execute`] for `SET` (Redis 7.0 options), `GET`, `DEL`, `PTTL`, `PEXPIRE`,
//!   and `EVAL` / `EVALSHA` / `SCRIPT LOAD` of the recognised lock scripts (the simulated
//!   clients' two, and those redis-py's `Lock` and pottery's `Redlock` send), with Redis's exact
//!   reply and error texts; the typed lock helpers and the argument builders / reply decoders
//!   lock clients use.
//! - [`persistence`]: [`Instance`], a keyspace plus its durable copy under
//!   [`Persistence::None`], [`Persistence::AofEverysec`] or [`Persistence::AofAlways`], with
//!   graceful and crash stops.
//! - [`conformance`]: the replayer for the vectors the repository's harness records from a
//!   live redis-server 7.0 (`conformance/redis/`): replies, key states, AOF contents,
//!   restarts, wall-clock steps, replication, and the real client libraries' sequences.
//!
//! Time: nothing in the model reads a clock. Every operation takes the instance's wall clock as
//! `now_wall_ns: i64` (nanoseconds, as the engine's wall clock reads it; it may be stepped
//! forward or backward) and converts it to Redis's milliseconds by flooring. See [`store`]
//! for the exact expiry boundary and what a wall-clock step does.
//!
//! Not modelled (deliberately): other data types and commands, `FUNCTION`, `SCRIPT`
//! subcommands other than `LOAD`, any Lua beyond the recognised lock scripts, RESP3, RDB
//! snapshots,
//! the active expire cycle (it changes no reply), memory limits and eviction, `WRONGTYPE`
//! (every value is a string), binary-unsafe values (keys and values are UTF-8 `String`s).

pub mod command;
pub mod conformance;
pub mod instance;
pub mod persistence;
pub mod store;

pub use command::{execute, CommandError, Reply, EXTEND_SCRIPT, RELEASE_SCRIPT};
pub use instance::{
    CommandArgs, InstanceCtx, InstanceTimer, RedisDurable, RedisInstance, RedisInstanceConfig,
    RedisMsg, ReplicaConfig,
};
pub use persistence::{Instance, InstanceError, Persistence, StopKind};
pub use store::{wall_ns_to_ms, Entry, Keyspace, NS_PER_MS};
