//! A Raft-replicated, etcd-style lock service (issue 12), as pure state machines.
//!
//! - [`config`]: replica group and timing ([`RaftConfig`]).
//! - [`msg`]: the wire vocabulary ([`RaftMsg`]), log entries and commands, timers.
//! - [`log`]: the replicated log (consistency check, conflict truncation, up-to-date check).
//! - [`store`]: the lock store state machine (revisions, leases, create-if-absent locks).
//! - [`env`]: the context trait a replica runs against ([`RaftEnv`]), its durable state and
//!   its observations.
//! - [`replica`]: one Raft replica ([`RaftReplica`]).
//! - [`client`]: a lock client ([`RaftLockClient`]).
//!
//! Nothing here knows the engine's `Context` or the other protocols: an adapter implements
//! [`RaftEnv`] over the engine.

pub mod client;
pub mod config;
pub mod env;
pub mod log;
pub mod msg;
pub mod replica;
pub mod store;

#[cfg(test)]
mod tests;

pub use client::RaftLockClient;
pub use config::RaftConfig;
pub use env::{RaftDurable, RaftEnv, RaftObs};
pub use msg::{Command, Entry, LeaseId, LogIndex, RaftMsg, RaftTimer, Term};
pub use replica::{RaftReplica, Role};
pub use store::LockStore;
