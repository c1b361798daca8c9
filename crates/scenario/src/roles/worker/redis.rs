//! `lock: "redis"` workers: one Redis instance as the lock. Defaults as the protocol's
//! `RedisLockConfig::new`: `ttl` 10 s, `release` compare_and_delete, `request_timeout`
//! 500 ms.

use super::spec::{ReleaseSpec, WorkerSpec};
use crate::checker::NodeCheck;
use crate::duration::or;
use crate::roster::Roster;
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::redis_lock::{RedisLockConfig, Release};

/// The fields only this lock reads, and whether `w` sets each.
pub(super) fn own_fields(w: &WorkerSpec) -> Vec<(&'static str, bool)> {
    vec![
        ("instance", w.instance.is_some()),
        ("release", w.release.is_some()),
    ]
}

/// Checks what a redis worker needs: `instance`, a Redis node.
pub(super) fn validate(w: &WorkerSpec, v: &mut NodeCheck<'_, '_>) {
    match &w.instance {
        Some(s) => v.node_ref("instance", s, &["redis"]),
        None => v.err_node("a redis worker needs `instance`, the Redis node"),
    }
}

/// The single-instance lock client config of a worker spec (validated: `instance` is set).
pub(super) fn config(w: &WorkerSpec, roster: &Roster, name: String) -> LockConfig {
    let instance = roster.id(w
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
    LockConfig::Redis(c)
}
