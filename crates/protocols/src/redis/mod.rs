//! Redis: the Redis instance actor ([`instance`]) and, under it, a pure, engine-independent
//! model of one Redis 7.0 instance as the lock protocols use it.
//!
//! - [`instance`]: [`RedisInstance`], one Redis server on the simulated network, with its
//!   messages ([`RedisMsg`]: what the lock clients send), timers and durable state. It runs
//!   every command through the model below. It also models asynchronous replication to a
//!   replica and a Sentinel-style failover rule (see its module doc).
//! - [`store`]: the keyspace (`BTreeMap`), absolute wall-clock deadlines in ms, lazy expiry
//!   with Redis's `now > deadline` rule, and the ns -> ms mapping of the simulated wall clock.
//! - [`command`]: [`execute`] for `SET` (Redis 7.0 options), `GET`, `DEL`, `PTTL`, `PEXPIRE`
//!   and `EVAL` of the two lock scripts, with Redis's exact reply and error texts; the typed
//!   lock helpers and the argument builders / reply decoders lock clients use.
//! - [`persistence`]: [`Instance`], a keyspace plus its durable copy under
//!   [`Persistence::None`], [`Persistence::AofEverysec`] or [`Persistence::AofAlways`], with
//!   graceful and crash stops.
//! - [`conformance`]: the replayer for `shared/conformance/redis-vectors.json`, the replies
//!   recorded from a real redis-server 7.0.15.
//!
//! Time: nothing in the model reads a clock. Every operation takes the instance's wall clock as
//! `now_wall_ns: i64` (nanoseconds, as the engine's wall clock reads it; it may be stepped
//! forward or backward) and converts it to Redis's milliseconds by flooring. See [`store`]
//! for the exact expiry boundary and what a wall-clock step does.
//!
//! Not modelled (deliberately): other data types and commands, `EVALSHA`/`SCRIPT LOAD`/
//! `FUNCTION` and any Lua beyond the two lock scripts, RESP3, RDB snapshots,
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
