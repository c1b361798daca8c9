//! splitbrain's actors: the algorithms the simulator exists to teach and test.
//!
//! Every role is a variant of [`Node`], the one actor type of a simulation; messages,
//! timers, observations and durable state are enums over the protocols ([`Msg`], [`Timer`],
//! [`Obs`], [`Durable`]). Actors know nothing about files: the scenario crate builds them from
//! the typed configs here.
//!
//! [`redis`] is a pure model of one Redis 7.0 instance (keyspace with lazy wall-clock expiry,
//! the commands the lock clients send, AOF persistence) that the Redis instance actor wraps,
//! with a replayer for the conformance vectors recorded from a real redis-server.

pub mod bully;
pub mod durable;
pub mod lease;
pub mod lock;
pub mod msg;
pub mod node;
pub mod observation;
pub mod raft;
pub mod redis;
pub mod redis_instance;
pub mod redis_lock;
pub mod redlock;
pub mod storage;
pub mod timer;
pub mod worker;

pub use durable::Durable;
pub use msg::Msg;
pub use node::{Ctx, Node};
pub use observation::{Obs, OBSERVATION_KINDS};
pub use timer::Timer;
