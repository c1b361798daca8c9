//! A Raft-replicated, etcd-style lock service, as pure state machines.
//!
//! - [`config`]: replica group and timing ([`RaftConfig`]).
//! - [`msg`]: the wire vocabulary ([`RaftMsg`]), log entries and commands, timers.
//! - [`log`]: the replicated log (consistency check, conflict truncation, up-to-date check).
//! - [`store`]: the lock store state machine (revisions, leases, create-if-absent locks).
//! - [`env`](mod@env): the context trait a replica runs against ([`RaftEnv`]), its durable state and
//!   its observations.
//! - [`replica`]: one Raft replica ([`RaftReplica`]).
//! - [`client`]: a lock client ([`RaftLockClient`]).
//! - [`node`]: the replica as a role of the composition ([`RaftNode`], [`RaftCtx`]): an
//!   adapter implements [`RaftEnv`] over the shared context trait and maps [`RaftObs`] onto
//!   the shared `Obs`.
//! - [`etcd_mutex`]: etcd's `concurrency` Session + Mutex over the same store
//!   ([`EtcdMutexClient`], and [`EtcdMutexLock`] for a worker).
//! - [`znode`]: ZooKeeper's data tree (znodes, sessions, ephemeral and sequential nodes,
//!   one-shot watches, zxids), kept in the same store so that the group serves as a
//!   ZooKeeper ensemble.
//! - [`zk_lock`]: a ZooKeeper client (session, connection loss vs. expiry, Curator's
//!   connection states) with the lock recipe ([`ZkLockClient`], and [`ZkLock`] for a worker).
//! - [`lock`]: the client as one of the lock clients a worker drives ([`RaftLock`]).
//!
//! The replica and the client know neither the engine's `Context` nor the other protocols:
//! they run over [`RaftEnv`] / [`client::RaftClientEnv`], which `node` and `lock` implement.

pub mod client;
pub mod config;
pub mod env;
pub mod etcd_mutex;
pub mod lock;
pub mod log;
pub mod msg;
pub mod node;
pub mod replica;
pub mod store;
pub mod zk_lock;
pub mod znode;

#[cfg(test)]
mod tests;

pub use client::{RaftClientConfig, RaftClientTimer, RaftLockClient};
pub use config::{CommitRule, RaftConfig, ReadOnlyOption};
pub use env::{RaftDurable, RaftEnv, RaftObs};
pub use etcd_mutex::{
    EtcdMutexClient, EtcdMutexConfig, EtcdMutexCtx, EtcdMutexLock, OnSessionDone,
};
pub use lock::{RaftLock, RaftLockCtx};
pub use msg::{Command, Entry, Kv, LeaseId, LogIndex, RaftMsg, RaftTimer, RangeOrder, Term};
pub use node::{RaftCtx, RaftNode};
pub use replica::{RaftReplica, Role};
pub use store::LockStore;
pub use zk_lock::{OnSuspended, RecipeCall, ZkLock, ZkLockClient, ZkLockConfig, ZkLockCtx};
pub use znode::{negotiate_timeout, ZkError, ZkEventType, ZkOp, ZkResult, ZnodeTree};
