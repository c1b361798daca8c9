//! splitbrain's actors: the algorithms the simulator exists to teach and test.
//!
//! One protocol, one folder ([`bully`], [`lease`], [`redis`], [`redis_lock`], [`redlock`],
//! [`storage`], [`worker`]): each owns its config, messages, timers, durable state and tests,
//! and is written against the small context trait [`Ctx`] with its own types, as a [`Role`].
//! No protocol imports the composition; a protocol imports another only where it genuinely
//! uses it (a worker drives lock clients; clients send the messages of the server they use).
//!
//! The composition ([`composition`]) is [`Node`], the one actor type of a simulation (an enum
//! over every role), and the enums that wrap the protocols' messages, timers and durable state
//! ([`Msg`], [`Timer`], [`Durable`]). Observations ([`Obs`]) are one shared vocabulary the
//! checkers consume. Actors know nothing about files: the scenario crate builds them from the
//! typed configs here.
//!
//! [`redis`] also holds a pure model of one Redis 7.0 instance (keyspace with lazy wall-clock
//! expiry, the commands the lock clients send, AOF persistence) that the Redis instance actor
//! wraps, with a replayer for the conformance vectors recorded from a real redis-server.

pub mod bully;
pub mod composition;
pub mod context;
pub mod custom;
pub mod lease;
pub mod lease_record;
pub mod lock_event;
pub mod observation;
pub mod opaque;
pub mod raft;
pub mod redis;
pub mod redis_lock;
pub mod redlock;
pub mod retry;
pub mod storage;
pub mod worker;

pub use composition::{ClientTimer, Durable, Msg, Node, Timer, MESSAGE_KINDS};
pub use context::{Ctx, Role, Wraps};
pub use observation::{Obs, OBSERVATION_KINDS};
/// The Redis instance actor ([`redis::instance`]), also at the crate's top level for the
/// crates that name it there.
pub use redis::instance as redis_instance;
/// The lock clients a worker drives ([`worker::lock`]), also at the crate's top level for
/// the crates that name them there.
pub use worker::lock;
