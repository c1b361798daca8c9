//! The lock clients a worker can drive: one enum over the lease, single-Redis, Redlock, Raft,
//! etcd-mutex and ZooKeeper clients, with the same methods on each. (Also reachable as `splitbrain_protocols::lock`.)
//!
//! A client emits its own `LockRequested` / `LockAcquired` / `LockFailed` / `LockReleased` /
//! `LockLost` observations; it tells its worker what happened through [`LockEvent`].
//! [`LockConfig`] selects and configures a client; [`LockClient::new`] builds it.

use crate::lease::{Belief, LeaseClient, LeaseClientConfig, LeaseClientCtx};
use crate::raft::{
    EtcdMutexConfig, EtcdMutexLock, RaftClientConfig, RaftLock, RaftLockCtx, ZkLock, ZkLockConfig,
};
use crate::redis_lock::{RedisLockClient, RedisLockConfig, RedisLockCtx};
use crate::redlock::{RedlockClient, RedlockConfig, RedlockCtx};
use splitbrain_engine::{LocalTime, NodeId};

pub use crate::lock_event::LockEvent;

/// The context any lock client runs in: the union of the clients' contexts.
pub trait LockClientCtx: LeaseClientCtx + RedisLockCtx + RedlockCtx + RaftLockCtx {}

impl<C: LeaseClientCtx + RedisLockCtx + RedlockCtx + RaftLockCtx> LockClientCtx for C {}

/// Which lock client to build, with its configuration.
#[derive(Clone, Debug, PartialEq)]
pub enum LockConfig {
    /// A lease service client.
    Lease(LeaseClientConfig),
    /// A single-instance Redis lock client.
    Redis(RedisLockConfig),
    /// A Redlock client.
    Redlock(RedlockConfig),
    /// A client of the Raft lock service.
    Raft(RaftClientConfig),
    /// etcd's `concurrency` Session + Mutex over the Raft lock service's store.
    EtcdMutex(EtcdMutexConfig),
    /// ZooKeeper's lock recipe over the Raft group serving as an ensemble.
    Zookeeper(ZkLockConfig),
}

/// A lock client of any kind.
#[derive(Clone, Debug)]
pub enum LockClient {
    /// Lease service client.
    Lease(LeaseClient),
    /// Single Redis instance client.
    Redis(RedisLockClient),
    /// Redlock client.
    Redlock(RedlockClient),
    /// Raft lock service client.
    Raft(RaftLock),
    /// etcd Session + Mutex client.
    EtcdMutex(EtcdMutexLock),
    /// ZooKeeper lock recipe client.
    Zookeeper(ZkLock),
}

macro_rules! each {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            LockClient::Lease($c) => $e,
            LockClient::Redis($c) => $e,
            LockClient::Redlock($c) => $e,
            LockClient::Raft($c) => $e,
            LockClient::EtcdMutex($c) => $e,
            LockClient::Zookeeper($c) => $e,
        }
    };
}

impl LockClient {
    /// An idle client of the configured kind.
    pub fn new(cfg: LockConfig) -> Self {
        match cfg {
            LockConfig::Lease(c) => LockClient::Lease(LeaseClient::new(c)),
            LockConfig::Redis(c) => LockClient::Redis(RedisLockClient::new(c)),
            LockConfig::Redlock(c) => LockClient::Redlock(RedlockClient::new(c)),
            LockConfig::Raft(c) => LockClient::Raft(RaftLock::new(c)),
            LockConfig::EtcdMutex(c) => LockClient::EtcdMutex(EtcdMutexLock::new(c)),
            LockConfig::Zookeeper(c) => LockClient::Zookeeper(ZkLock::new(c)),
        }
    }
    /// The lock's name (lease name or Redis key), as the client's observations carry it.
    pub fn lock_name(&self) -> &str {
        each!(self, c => c.lock_name())
    }
    /// Starts an acquisition.
    pub fn acquire(&mut self, ctx: &mut impl LockClientCtx) {
        each!(self, c => c.acquire(ctx))
    }
    /// Asks the client to extend its current hold; `true` if an extension was started. The
    /// Redlock client ([`RedlockClient::extend`]) and the single-instance Redis client
    /// ([`RedisLockClient::extend`], its `refresh`) extend; the lease client renews on its own
    /// schedule.
    pub fn extend(&mut self, ctx: &mut impl LockClientCtx) -> bool {
        match self {
            LockClient::Redlock(c) => c.extend(ctx),
            LockClient::Redis(c) => c.extend(ctx),
            LockClient::Lease(_)
            | LockClient::Raft(_)
            | LockClient::EtcdMutex(_)
            | LockClient::Zookeeper(_) => false,
        }
    }
    /// Releases the lock (if held).
    pub fn release(&mut self, ctx: &mut impl LockClientCtx) {
        each!(self, c => c.release(ctx))
    }
    /// Starts a validity check by asking the servers, if the client is configured to check
    /// that way (Redlock's `quorum_count_check`); it ends with [`LockEvent::Checked`]. `false`
    /// (nothing sent): the worker checks its local deadline.
    pub fn start_check(&mut self, ctx: &mut impl LockClientCtx) -> bool {
        match self {
            LockClient::Redlock(c) => c.start_check(ctx),
            _ => false,
        }
    }
    /// Handles a reply addressed to the client; `None` if it changed nothing the worker needs.
    pub fn on_message<C: LockClientCtx>(
        &mut self,
        ctx: &mut C,
        from: NodeId,
        msg: &C::Msg,
    ) -> Option<LockEvent> {
        each!(self, c => c.on_message(ctx, from, msg))
    }
    /// Handles one of the client's timers (any other timer: `None`).
    pub fn on_timer<C: LockClientCtx>(
        &mut self,
        ctx: &mut C,
        timer: &C::Timer,
    ) -> Option<LockEvent> {
        each!(self, c => c.on_timer(ctx, timer))
    }
    /// The local deadline of the current hold, if the client believes it holds the lock.
    pub fn valid_until(&self) -> Option<LocalTime> {
        each!(self, c => c.valid_until())
    }
    /// How long the client believes in its current hold, by its belief policy: the lease
    /// client's [`LeaseClient::belief`]; every other client believes until its deadline
    /// ([`Belief::Deadline`]) while it holds.
    pub fn belief(&self) -> Belief {
        match self {
            LockClient::Lease(c) => c.belief(),
            _ if self.valid_until().is_some() => Belief::Deadline,
            _ => Belief::None,
        }
    }
    /// The fencing token of the current hold, if any.
    pub fn token(&self) -> Option<u64> {
        each!(self, c => c.token())
    }
    /// Numbers the client's requests from `first` (a worker thread's range, so replies find
    /// their thread). Only the Redis client has threads; the others keep counting from 1.
    pub fn set_first_request(&mut self, first: u64) {
        if let LockClient::Redis(c) = self {
            c.set_first_request(first);
        }
    }
    /// The lock object's token field (the Redis client's; the others have none).
    pub fn lock_object_token(&self) -> Option<&str> {
        match self {
            LockClient::Redis(c) => c.lock_object_token(),
            _ => None,
        }
    }
    /// Overwrites the lock object's token field (the Redis client's; no effect on others).
    pub fn set_lock_object_token(&mut self, token: Option<String>) {
        if let LockClient::Redis(c) = self {
            c.set_lock_object_token(token);
        }
    }
    /// Forgets all volatile state (after a crash of the worker's node).
    pub fn reset(&mut self) {
        each!(self, c => c.reset())
    }
}
