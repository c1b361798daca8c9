//! The timer vocabulary of all actors, wrapped in [`Timer`].

use crate::bully::BullyTimer;
use crate::lease::{LeaderTimer, ServiceTimer};
use crate::lock::ClientTimer;
use crate::redis_instance::InstanceTimer;
use crate::worker::WorkerTimer;
use serde::{Deserialize, Serialize};

/// Every timer payload a splitbrain actor sets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timer {
    /// Bully node timers.
    Bully(BullyTimer),
    /// Lease service timers (grant expiry).
    LeaseService(ServiceTimer),
    /// Lease-based leader timers.
    LeaseLeader(LeaderTimer),
    /// Redis instance timers (AOF fsync tick, delayed restart).
    RedisInstance(InstanceTimer),
    /// Lock client timers (inside workers and lease leaders).
    Client(ClientTimer),
    /// Worker loop timers.
    Worker(WorkerTimer),
}
