//! The lock-client interface workers drive: one enum over the lease, single-Redis and
//! Redlock clients, with the same methods on each.
//!
//! A client emits its own `LockRequested` / `LockAcquired` / `LockFailed` / `LockReleased` /
//! `LockLost` observations; it tells its worker what happened through [`LockEvent`].
//! [`LockConfig`] selects and configures a client; [`LockClient::new`] builds it.

use crate::lease::{LeaseClient, LeaseClientConfig, LeaseClientTimer};
use crate::msg::Msg;
use crate::node::Ctx;
use crate::redis_lock::{RedisClientTimer, RedisLockClient, RedisLockConfig};
use crate::redlock::{RedlockClient, RedlockConfig, RedlockTimer};
use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId};

/// What a lock client reports to the worker driving it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockEvent {
    /// The lock is held until local monotonic `valid_until_local`.
    Acquired {
        /// Fencing token, if the service issues one.
        token: Option<u64>,
        /// Local deadline of the hold.
        valid_until_local: LocalTime,
    },
    /// The hold was extended.
    Extended {
        /// New local deadline.
        valid_until_local: LocalTime,
    },
    /// The attempt failed for good (retries exhausted); the worker may try again later.
    Failed,
    /// The client stopped believing it holds the lock.
    Lost,
    /// The release completed (or was sent: release is fire-and-forget where the protocol is).
    Released,
}

/// Timers of the lock clients.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientTimer {
    /// Lease client timers.
    Lease(LeaseClientTimer),
    /// Single-instance Redis lock client timers.
    Redis(RedisClientTimer),
    /// Redlock client timers.
    Redlock(RedlockTimer),
}

/// Which lock client to build, with its configuration.
#[derive(Clone, Debug, PartialEq)]
pub enum LockConfig {
    /// A lease service client.
    Lease(LeaseClientConfig),
    /// A single-instance Redis lock client.
    Redis(RedisLockConfig),
    /// A Redlock client.
    Redlock(RedlockConfig),
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
}

macro_rules! each {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            LockClient::Lease($c) => $e,
            LockClient::Redis($c) => $e,
            LockClient::Redlock($c) => $e,
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
        }
    }
    /// The lock's name (lease name or Redis key), as the client's observations carry it.
    pub fn lock_name(&self) -> &str {
        each!(self, c => c.lock_name())
    }
    /// Starts an acquisition.
    pub fn acquire(&mut self, ctx: &mut Ctx<'_>) {
        each!(self, c => c.acquire(ctx))
    }
    /// Asks the client to extend its current hold; `true` if an extension was started. Only
    /// the Redlock client extends ([`RedlockClient::extend`]); the lease client renews on its
    /// own schedule and the single-instance Redis client does not extend.
    pub fn extend(&mut self, ctx: &mut Ctx<'_>) -> bool {
        match self {
            LockClient::Redlock(c) => c.extend(ctx),
            LockClient::Lease(_) | LockClient::Redis(_) => false,
        }
    }
    /// Releases the lock (if held).
    pub fn release(&mut self, ctx: &mut Ctx<'_>) {
        each!(self, c => c.release(ctx))
    }
    /// Handles a reply addressed to the client; `None` if it changed nothing the worker needs.
    pub fn on_message(&mut self, ctx: &mut Ctx<'_>, from: NodeId, msg: &Msg) -> Option<LockEvent> {
        each!(self, c => c.on_message(ctx, from, msg))
    }
    /// Handles one of the client's timers.
    pub fn on_timer(&mut self, ctx: &mut Ctx<'_>, timer: ClientTimer) -> Option<LockEvent> {
        each!(self, c => c.on_timer(ctx, timer))
    }
    /// The local deadline of the current hold, if the client believes it holds the lock.
    pub fn valid_until(&self) -> Option<LocalTime> {
        each!(self, c => c.valid_until())
    }
    /// The fencing token of the current hold, if any.
    pub fn token(&self) -> Option<u64> {
        each!(self, c => c.token())
    }
    /// Forgets all volatile state (after a crash of the worker's node).
    pub fn reset(&mut self) {
        each!(self, c => c.reset())
    }
}
