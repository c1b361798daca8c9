//! Maps Redis instance and Redis/Redlock worker specs onto their protocol configs, applying
//! the documented defaults (the protocols' `::new` / `Default` values):
//!
//! - `redis` node: `persistence` none, `restart_delay` 0;
//! - `lock: "redis"` worker: `ttl` 10 s, `release` compare_and_delete, `request_timeout`
//!   500 ms;
//! - `lock: "redlock"` worker: `ttl` 10 s, `request_timeout` 50 ms per instance,
//!   `retry_count` 3 attempts, `retry_delay_max` 200 ms, `clock_drift_factor` 0.01 (kept as
//!   integer ppm: `round(factor * 1e6)`, so 0.01 is exactly 10,000 ppm), `mode` parallel,
//!   `validity_check` true, `start_time` before_requests, `quorum` a majority of `instances`.

use crate::duration::Dur;
use crate::plan::Plan;
use crate::schema::{
    PersistenceSpec, RedisSpec, RedlockModeSpec, ReleaseSpec, StartTimeSpec, WorkerSpec,
};
use splitbrain_engine::SimDuration;
use splitbrain_protocols::redis::Persistence;
use splitbrain_protocols::redis_instance::{RedisInstance, RedisInstanceConfig};
use splitbrain_protocols::redis_lock::{RedisLockConfig, Release};
use splitbrain_protocols::redlock::{RedlockConfig, RedlockMode, StartTime};
use splitbrain_protocols::Node;

fn or(d: Option<Dur>, default: SimDuration) -> SimDuration {
    d.map_or(default, |d| d.0)
}

/// The Redis instance actor of a spec.
pub fn redis_instance(s: &RedisSpec) -> Node {
    let d = RedisInstanceConfig::default();
    Node::RedisInstance(RedisInstance::new(RedisInstanceConfig {
        persistence: match s.persistence {
            PersistenceSpec::None => Persistence::None,
            PersistenceSpec::AofEverysec => Persistence::AofEverysec,
            PersistenceSpec::AofAlways => Persistence::AofAlways,
        },
        restart_delay: or(s.restart_delay, d.restart_delay),
    }))
}

/// The single-instance lock client config of a worker spec (validated: `instance` is set).
pub fn redis_lock_config(plan: &Plan, w: &WorkerSpec, name: String) -> RedisLockConfig {
    let instance = plan.id(w
        .instance
        .as_deref()
        .expect("validated: redis workers name an instance"));
    let mut c = RedisLockConfig::new(instance, name);
    c.ttl = or(w.ttl, c.ttl);
    c.release = match w.release {
        None | Some(ReleaseSpec::CompareAndDelete) => Release::CompareAndDelete,
        Some(ReleaseSpec::Delete) => Release::Delete,
    };
    c.request_timeout = or(w.request_timeout, c.request_timeout);
    c
}

/// A drift factor in [0, 1) as integer parts per million (rounded to nearest).
fn factor_ppm(f: f64) -> u64 {
    (f * 1e6).round().clamp(0.0, 1e6) as u64
}

/// The Redlock client config of a worker spec (validated: `instances` is a non-empty list of
/// Redis nodes, `quorum` within 1..=N, `clock_drift_factor` in [0, 1)).
pub fn redlock_config(plan: &Plan, w: &WorkerSpec, name: String) -> RedlockConfig {
    let instances = w
        .instances
        .as_deref()
        .expect("validated: redlock workers name instances")
        .iter()
        .map(|n| plan.id(n))
        .collect();
    let mut c = RedlockConfig::new(instances, name);
    c.ttl = or(w.ttl, c.ttl);
    c.request_timeout = or(w.request_timeout, c.request_timeout);
    c.retry_count = w.retry_count.unwrap_or(c.retry_count);
    c.retry_delay_max = or(w.retry_delay_max, c.retry_delay_max);
    if let Some(f) = w.clock_drift_factor {
        c.clock_drift_factor_ppm = factor_ppm(f);
    }
    c.mode = match w.mode {
        None | Some(RedlockModeSpec::Parallel) => RedlockMode::Parallel,
        Some(RedlockModeSpec::Sequential) => RedlockMode::Sequential,
    };
    c.validity_check = w.validity_check.unwrap_or(c.validity_check);
    c.start_time = match w.start_time {
        None | Some(StartTimeSpec::BeforeRequests) => StartTime::BeforeRequests,
        Some(StartTimeSpec::AfterReplies) => StartTime::AfterReplies,
    };
    c.quorum = w.quorum.map(|q| q as usize);
    c
}

#[cfg(test)]
mod tests {
    use super::factor_ppm;

    #[test]
    fn drift_factor_to_ppm() {
        assert_eq!(factor_ppm(0.01), 10_000);
        assert_eq!(factor_ppm(0.0), 0);
        assert_eq!(factor_ppm(0.001), 1_000);
        assert_eq!(factor_ppm(0.999_999_9), 1_000_000);
    }
}
