//! splitbrain protocols: the actors of the simulator and the pure state machines they wrap.
//!
//! This crate will hold the bully election, the lease service and clients, the Redis
//! instance, the Redis lock and Redlock clients, fenced storage and workers (see
//! `DESIGN.md`). What is here so far is engine-independent:
//!
//! - [`redis`]: a pure model of a single Redis 7.0 instance as the lock protocols use it
//!   (keyspace with lazy wall-clock expiry, `SET`/`GET`/`DEL`/`PTTL`/`PEXPIRE`/`EVAL` of the two
//!   lock scripts, AOF persistence modes) plus a replayer for the recorded conformance vectors.
//!
//! Nothing in this crate reads a clock: every time-dependent operation takes the caller's
//! notion of time as a plain integer (wall-clock nanoseconds for Redis).

pub mod redis;
