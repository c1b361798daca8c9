//! `lock: "redlock"` workers: Redlock over several Redis instances. Defaults as the
//! protocol's `RedlockConfig::new`: `ttl` 10 s, `request_timeout` 50 ms per instance,
//! `retry_count` 3 attempts, `retry` uniform up to 200 ms, `clock_drift_factor` 0.01 (kept as
//! integer ppm: `round(factor * 1e6)`, so 0.01 is exactly 10,000 ppm), `mode` parallel,
//! `validity_check` local_deadline, `start_time` before_requests, `quorum` a majority of `instances`.

use super::spec::{RedlockModeSpec, RetrySpec, StartTimeSpec, ValidityCheckMode, WorkerSpec};
use crate::checker::NodeCheck;
use crate::duration::or;
use crate::roster::Roster;
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::redlock::{RedlockConfig, RedlockMode, RetryPolicy, StartTime};

/// The fields only this lock reads, and whether `w` sets each.
pub(super) fn own_fields(w: &WorkerSpec) -> Vec<(&'static str, bool)> {
    vec![
        ("instances", w.instances.is_some()),
        ("retry_count", w.retry_count.is_some()),
        ("retry_delay_max", w.retry_delay_max.is_some()),
        ("retry", w.retry.is_some()),
        ("mode", w.mode.is_some()),
        ("validity_check", w.validity_check.is_some()),
        ("start_time", w.start_time.is_some()),
        ("quorum", w.quorum.is_some()),
    ]
}

/// Checks what a redlock worker needs: `instances`, a non-empty list of distinct Redis
/// nodes, and a `quorum` (if given) within 1..=N.
pub(super) fn validate(w: &WorkerSpec, v: &mut NodeCheck<'_, '_>) {
    match &w.instances {
        Some(list) if !list.is_empty() => {
            for (j, s) in list.iter().enumerate() {
                if list[..j].contains(s) {
                    v.err_item("instances", j, format!("instance `{s}` is listed twice"));
                }
                v.node_ref_item("instances", j, s, &["redis"]);
            }
            if let Some(q) = w.quorum {
                if q == 0 || q as usize > list.len() {
                    v.err(
                        "quorum",
                        format!(
                            "quorum must be between 1 and the number of instances ({})",
                            list.len()
                        ),
                    );
                }
            }
        }
        _ => v.err_node("a redlock worker needs `instances`, a non-empty list of Redis nodes"),
    }
    check_retry(w, v);
}

/// Checks the retry fields the Redis and Redlock clients share: `retry` or its shorthand
/// `retry_delay_max` (not both), an exponential policy's `base <= cap`, `retry_count >= 1`.
pub(super) fn check_retry(w: &WorkerSpec, v: &mut NodeCheck<'_, '_>) {
    if w.retry.is_some() && w.retry_delay_max.is_some() {
        v.err(
            "retry",
            "give `retry` or its shorthand `retry_delay_max`, not both",
        );
    }
    if let Some(RetrySpec::Exponential { base, cap }) = &w.retry {
        if base.0 > cap.0 {
            v.err("retry", "exponential backoff needs base <= cap");
        }
    }
    if w.retry_count == Some(0) {
        v.err(
            "retry_count",
            "retry_count counts attempts, the first one included: it must be at least 1",
        );
    }
}

/// The retry policy a worker spec gives (`retry`, or `retry_delay_max` as a uniform policy),
/// if any; the same mapping for the Redis and Redlock clients.
pub(super) fn retry_policy(w: &WorkerSpec) -> Option<RetryPolicy> {
    if let Some(max) = w.retry_delay_max {
        return Some(RetryPolicy::Uniform { max: max.0 });
    }
    w.retry.as_ref().map(|r| match r {
        RetrySpec::Uniform { max } => RetryPolicy::Uniform { max: max.0 },
        RetrySpec::Fixed { delay, jitter } => RetryPolicy::Fixed {
            delay: delay.0,
            jitter: jitter.map_or(splitbrain_engine::SimDuration::ZERO, |j| j.0),
        },
        RetrySpec::Exponential { base, cap } => RetryPolicy::Exponential {
            base: base.0,
            cap: cap.0,
        },
    })
}

/// Checks that `clock_drift_factor`, if given, is in [0, 1) (whatever the lock: a worker of
/// another lock that sets it is told both things).
pub(super) fn check_drift_factor(w: &WorkerSpec, v: &mut NodeCheck<'_, '_>) {
    if let Some(f) = w.clock_drift_factor {
        if !(0.0..1.0).contains(&f) {
            v.err(
                "clock_drift_factor",
                format!("clock_drift_factor must be in [0, 1), found {f}"),
            );
        }
    }
}

/// A drift factor in [0, 1) as integer parts per million (rounded to nearest).
pub(super) fn factor_ppm(f: f64) -> u64 {
    (f * 1e6).round().clamp(0.0, 1e6) as u64
}

/// The Redlock client config of a worker spec (validated: `instances` is a non-empty list of
/// Redis nodes, `quorum` within 1..=N, `clock_drift_factor` in [0, 1)).
pub(super) fn config(w: &WorkerSpec, roster: &Roster, name: String) -> LockConfig {
    let instances = w
        .instances
        .as_deref()
        .expect("validated: redlock workers name instances")
        .iter()
        .map(|n| roster.id(n))
        .collect();
    let mut c = RedlockConfig::new(instances, name);
    c.ttl = or(w.ttl, c.ttl);
    c.request_timeout = or(w.request_timeout, c.request_timeout);
    c.retry_count = w.retry_count.unwrap_or(c.retry_count);
    c.retry = retry_policy(w).unwrap_or(c.retry);
    if let Some(f) = w.clock_drift_factor {
        c.clock_drift_factor_ppm = factor_ppm(f);
    }
    c.mode = match w.mode {
        None | Some(RedlockModeSpec::Parallel) => RedlockMode::Parallel,
        Some(RedlockModeSpec::Sequential) => RedlockMode::Sequential,
    };
    if let Some(v) = w.validity_check {
        let mode = v.mode();
        c.validity_check = mode != ValidityCheckMode::Off;
        c.quorum_count_check = mode == ValidityCheckMode::QuorumCount;
    }
    c.start_time = match w.start_time {
        None | Some(StartTimeSpec::BeforeRequests) => StartTime::BeforeRequests,
        Some(StartTimeSpec::AfterReplies) => StartTime::AfterReplies,
        Some(StartTimeSpec::FirstAttempt) => StartTime::FirstAttempt,
    };
    c.quorum = w.quorum.map(|q| q as usize);
    LockConfig::Redlock(c)
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
