//! `lock: "redis"` workers: one Redis instance as the lock. Defaults as the protocol's
//! `RedisLockConfig::new`: `ttl` 10 s, `release` compare_and_delete, `request_timeout`
//! 500 ms, `refresh` extend_if_owner, `on_refresh_failure` stop_believing, `watchdog` false,
//! `clock_drift_factor` 0 (no margin), `retry_count` 1 attempt (no retry), `retry` uniform up to
//! 200 ms (the Redlock client's policy type, `protocols::retry`).

use super::spec::{LockObjectSpec, ReleaseSpec, WorkerSpec};
use crate::checker::NodeCheck;
use crate::duration::or;
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::redis_lock::{OnRefreshFailure, RedisLockConfig, Refresh, Release};

/// How a single-instance Redis lock client refreshes its hold (`extend_every`, `watchdog`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefreshSpec {
    /// The extend script, `PEXPIRE` only if the key holds our value (default; redis-py
    /// `Lock.extend`, Redisson's renewal script, the distlock page).
    ExtendIfOwner,
    /// A plain `SET key value PX ttl`: silently re-takes a key another client holds now
    /// (unsafe; clients that "refresh" by re-setting).
    Reset,
}

/// What a single-instance Redis lock client believes after a refresh fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnRefreshFailureSpec {
    /// Stop believing at once (default; Redisson's watchdog, redis-py `LockNotOwnedError`).
    StopBelieving,
    /// Keep believing until the current validity ends (as Redlock's extension).
    UntilDeadline,
    /// Believe the refresh worked anyway (the bug of ignoring the reply).
    KeepBelieving,
}

/// The fields only this lock reads, and whether `w` sets each.
pub(super) fn own_fields(w: &WorkerSpec) -> Vec<(&'static str, bool)> {
    vec![
        ("instance", w.instance.is_some()),
        ("release", w.release.is_some()),
        ("refresh", w.refresh.is_some()),
        ("on_refresh_failure", w.on_refresh_failure.is_some()),
        ("watchdog", w.watchdog.is_some()),
        ("retry_count", w.retry_count.is_some()),
        ("retry_delay_max", w.retry_delay_max.is_some()),
        ("retry", w.retry.is_some()),
        ("threads", w.threads.is_some()),
        ("lock_object", w.lock_object.is_some()),
    ]
}

/// The most threads one worker node may run (validation refuses more): the model steps
/// every thread of a node in turn, so a node's cost grows with its thread count.
pub const MAX_THREADS: u32 = 64;

/// Checks what a redis worker needs: `instance`, a Redis node.
pub(super) fn validate(w: &WorkerSpec, v: &mut NodeCheck<'_, '_>) {
    match &w.instance {
        Some(s) => v.node_ref("instance", s, &["redis"]),
        None => v.err_node("a redis worker needs `instance`, the Redis node"),
    }
    super::redlock::check_retry(w, v);
    match w.threads {
        Some(0) => v.err("threads", "threads must be at least 1"),
        Some(n) if n > MAX_THREADS => v.err(
            "threads",
            format!("threads is {n}: at most {MAX_THREADS} threads in one worker node"),
        ),
        _ => {}
    }
    if matches!(w.lock_object, Some(LockObjectSpec::Shared)) && w.threads.unwrap_or(1) < 2 {
        v.err(
            "lock_object",
            "a shared lock object needs `threads` of 2 or more (one thread has nothing to share \
             it with)",
        );
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
    c.refresh = match w.refresh {
        None | Some(RefreshSpec::ExtendIfOwner) => Refresh::ExtendIfOwner,
        Some(RefreshSpec::Reset) => Refresh::Reset,
    };
    c.on_refresh_failure = match w.on_refresh_failure {
        None | Some(OnRefreshFailureSpec::StopBelieving) => OnRefreshFailure::StopBelieving,
        Some(OnRefreshFailureSpec::UntilDeadline) => OnRefreshFailure::UntilDeadline,
        Some(OnRefreshFailureSpec::KeepBelieving) => OnRefreshFailure::KeepBelieving,
    };
    c.watchdog = w.watchdog.unwrap_or(false);
    c.drift_ppm = w.clock_drift_factor.map_or(0, super::redlock::factor_ppm);
    c.retry_count = w.retry_count.unwrap_or(c.retry_count);
    c.retry = super::redlock::retry_policy(w).unwrap_or(c.retry);
    LockConfig::Redis(c)
}
