//! Maps Redis instance and Redis/Redlock worker specs onto their protocol configs.

use crate::plan::Plan;
use crate::schema::{RedisSpec, WorkerSpec};
use splitbrain_protocols::redis_instance::RedisInstance;
use splitbrain_protocols::redis_lock::RedisLockConfig;
use splitbrain_protocols::redlock::RedlockConfig;
use splitbrain_protocols::Node;

/// The Redis instance actor of a spec.
pub fn redis_instance(_s: &RedisSpec) -> Node {
    Node::RedisInstance(RedisInstance {})
}

/// The single-instance lock client config of a worker spec.
pub fn redis_lock_config(_plan: &Plan, _w: &WorkerSpec, _name: String) -> RedisLockConfig {
    RedisLockConfig::default()
}

/// The Redlock client config of a worker spec.
pub fn redlock_config(_plan: &Plan, _w: &WorkerSpec, _name: String) -> RedlockConfig {
    RedlockConfig::default()
}
