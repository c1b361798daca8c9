//! The Redis lock variants of issue 13, each input pinned with its exact effect on a whole
//! run: realistic wall clocks, and (as they land) refresh, retry, validity and replication
//! variants.

use splitbrain_engine::{Observation, SimTime, WallTime, DEFAULT_WALL_START_NS};
use splitbrain_protocols::Obs;
use splitbrain_scenario::{execute, load_str, RunResult};

fn run(src: &str, seed: u64) -> RunResult {
    let plan = load_str("inline.json", src).unwrap();
    execute(&plan, seed, None).unwrap()
}

/// `(true time, node name, observation kind)` of every observation of `kinds`.
fn obs_of(r: &RunResult, kinds: &[&str]) -> Vec<(SimTime, String, String)> {
    r.record
        .observations
        .iter()
        .filter(|o| kinds.contains(&o.obs.kind()))
        .map(|o| (o.t, r.record.name(o.node), o.obs.kind().to_string()))
        .collect()
}

/// Issue 13's input: lesson 08 without client-2, client-1 `start_after: 2s`, and at 1 s the
/// Redis instance's wall clock steps back 20 s. `wall_clock_start` replaces `{start}`.
fn lesson08_step_back(start: Option<&str>) -> String {
    let start = start.map_or(String::new(), |s| format!("\"wall_clock_start\": \"{s}\","));
    format!(
        r#"{{
  "splitbrain": 1, "name": "issue13-wall", "duration": "10s", {start}
  "network": {{ "delay": {{ "fixed": "1ms" }} }},
  "nodes": {{
    "redis": {{ "role": "redis" }},
    "storage": {{ "role": "storage", "fencing": false }},
    "client-1": {{ "role": "worker", "lock": "redis", "instance": "redis", "storage": "storage",
                  "ttl": "10s", "work_time": "2s", "rounds": 1, "start_after": "2s" }}
  }},
  "faults": [ {{ "at": "1s", "clock_step": "redis", "by": "-20s" }} ],
  "check": ["exclusive_holders"]
}}"#
    )
}

/// Issue 13: with wall clocks at a realistic Unix time (the default, 2026-01-01T00:00:00Z)
/// the Redis instance grants the SET NX PX at 2.001 s, 20 s step back or not, as a real
/// server (wall about 1.7e12 ms) does; its key's deadline is 2026-01-01T00:00:11.001Z minus
/// the step, +1 ms (the first expired ms). Before the fix wall clocks started at 0 and every
/// acquisition failed with `ERR invalid expire time` for 8 s; `wall_clock_start` at the epoch
/// still reproduces that.
#[test]
fn issue13_step_back_20s_grants_at_2_001s() {
    let r = run(&lesson08_step_back(None), 0);
    let got = obs_of(&r, &["redis_key_set", "lock_acquired", "lock_failed"]);
    assert_eq!(
        got[..2],
        [
            (
                SimTime(2_001_000_000),
                "redis".into(),
                "redis_key_set".into()
            ),
            (
                SimTime(2_002_000_000),
                "client-1".into(),
                "lock_acquired".into()
            ),
        ]
    );
    let set = r
        .record
        .observations
        .iter()
        .find_map(|o| match &o.obs {
            Obs::RedisKeySet { deadline_wall, .. } => *deadline_wall,
            _ => None,
        })
        .unwrap();
    // wall(2.001 s) = start - 20 s + 2.001 s; PX 10000 -> deadline ms + 1 ms.
    assert_eq!(
        set,
        WallTime(DEFAULT_WALL_START_NS - 20_000_000_000 + 12_002_000_000)
    );
    assert_eq!(set.rfc3339(), "2025-12-31T23:59:52.002Z");

    // The same run with the wall clocks at the Unix epoch: Redis refuses every SET .. PX
    // while its wall clock reads at most -10 s (now_ms + ttl <= 0), i.e. until true 11 s,
    // past the end of this 10 s run.
    let r = run(&lesson08_step_back(Some("1970-01-01T00:00:00Z")), 0);
    assert_eq!(obs_of(&r, &["lock_acquired"]), []);
    assert!(!obs_of(&r, &["lock_failed"]).is_empty());
}

/// `wall_clock_start` is settable; every node's wall clock reads it (plus its own offset) at
/// true time 0.
#[test]
fn wall_clock_start_is_settable() {
    let r = run(&lesson08_step_back(Some("2030-06-15T12:00:00.5Z")), 0);
    let c = splitbrain_check::WallClocks::new(&r.record);
    let id = r.record.names.iter().position(|n| n == "client-1").unwrap();
    assert_eq!(
        c.wall(splitbrain_engine::NodeId(id as u32), SimTime::ZERO)
            .rfc3339(),
        "2030-06-15T12:00:00.500Z"
    );
}

/// One line per lock observation of `node` and per Redis key write: "t node kind detail",
/// deadlines as local monotonic seconds.
fn lock_log(r: &RunResult) -> Vec<String> {
    r.record
        .observations
        .iter()
        .filter_map(|o| {
            let what = match &o.obs {
                Obs::LockAcquired {
                    valid_until_local, ..
                } => format!("acquired until {}", SimTime(valid_until_local.0)),
                Obs::LockRenewed {
                    valid_until_local, ..
                } => format!("renewed until {}", SimTime(valid_until_local.0)),
                Obs::LockFailed { reason, .. } => format!("failed: {reason}"),
                Obs::LockLost { reason, .. } => format!("lost: {reason}"),
                Obs::LockReleased { .. } => "released".to_string(),
                Obs::RedisKeySet { .. } => "SET".to_string(),
                _ => return None,
            };
            Some(format!("{} {} {what}", o.t, r.record.name(o.node)))
        })
        .collect()
}

/// A worker on one Redis instance (1 ms links, perfect clocks) with extra worker fields.
fn redis_run(workers: &[(&str, &str)], faults: &str) -> RunResult {
    let nodes: Vec<String> = workers
        .iter()
        .map(|(name, extra)| {
            format!(
                r#""{name}": {{ "role": "worker", "lock": "redis", "instance": "redis",
                   "storage": "storage", "rounds": 1, {extra} }}"#
            )
        })
        .collect();
    run(
        &format!(
            r#"{{ "splitbrain": 1, "name": "t", "duration": "10s",
  "network": {{ "delay": {{ "fixed": "1ms" }} }},
  "nodes": {{ "redis": {{ "role": "redis" }}, "storage": {{ "role": "storage", "fencing": false }},
             {} }},
  "faults": [{faults}], "check": ["exclusive_holders"] }}"#,
            nodes.join(",")
        ),
        0,
    )
}

/// `extend_every` on the single-instance client (default `refresh: extend_if_owner`): each
/// extend script is sent at 1.002 s, 2.002 s, ... (every 1 s from the acquisition) and its
/// reply renews the hold to its send time + ttl; without it the 3 s hold is lost at 3 s,
/// before the check at 5.002 s.
#[test]
fn redis_extend_every_renews_from_the_send_time() {
    let r = redis_run(
        &[(
            "client-1",
            r#""ttl": "3s", "work_time": "5s", "extend_every": "1s""#,
        )],
        "",
    );
    assert_eq!(
        lock_log(&r)[..7],
        [
            "0.001 s redis SET",
            "0.002 s client-1 acquired until 3.000 s",
            "1.004 s client-1 renewed until 4.002 s",
            "2.004 s client-1 renewed until 5.002 s",
            "3.004 s client-1 renewed until 6.002 s",
            "4.004 s client-1 renewed until 7.002 s",
            "5.005 s client-1 released",
        ]
    );
    let r = redis_run(&[("client-1", r#""ttl": "3s", "work_time": "5s""#)], "");
    assert_eq!(
        lock_log(&r)[1..3],
        [
            "0.002 s client-1 acquired until 3.000 s",
            "3.000 s client-1 lost: TTL passed by the local clock",
        ]
    );
}

/// `watchdog: true` (Redisson): a refresh ttl/3 = 1 s after the acquisition and 1 s after each
/// refresh's reply (1.002, 2.004, 3.006, 4.008 s), stopped by the release.
#[test]
fn redis_watchdog_refreshes_every_third_of_the_ttl() {
    let r = redis_run(
        &[(
            "client-1",
            r#""ttl": "3s", "work_time": "5s", "watchdog": true"#,
        )],
        "",
    );
    assert_eq!(
        lock_log(&r),
        [
            "0.001 s redis SET",
            "0.002 s client-1 acquired until 3.000 s",
            "1.004 s client-1 renewed until 4.002 s",
            "2.006 s client-1 renewed until 5.004 s",
            "3.008 s client-1 renewed until 6.006 s",
            "4.010 s client-1 renewed until 7.008 s",
            "5.005 s client-1 released",
        ]
    );
}

/// The refresh variants when another client took the key: at 0.5 s the instance's wall clock
/// steps 2 s forward, so client-1's key (ttl 1 s) expires; client-2 takes it at 0.601 s.
/// client-1's refresh at 0.802 s then meets client-2's value:
/// - extend_if_owner + stop_believing (defaults): the script replies 0, LockLost at 0.804 s;
/// - extend_if_owner + until_deadline: LockFailed at 0.804 s, believed until 1.000 s;
/// - extend_if_owner + keep_believing: renewed to 1.802 s although Redis said 0;
/// - reset: `SET PX` overwrites client-2's value at 0.803 s: both hold the key's history.
#[test]
fn redis_refresh_variants_against_a_taken_key() {
    let step = r#"{ "at": "500ms", "clock_step": "redis", "by": "+2s" }"#;
    let c2 = (
        "client-2",
        r#""ttl": "1s", "work_time": "2s", "start_after": "600ms""#,
    );
    let log = |extra: &str| {
        let c1 = format!(r#""ttl": "1s", "work_time": "2s", "extend_every": "800ms", {extra}"#);
        let r = redis_run(&[("client-1", c1.trim_end_matches(", ")), c2], step);
        lock_log(&r)
            .into_iter()
            .filter(|l| l.starts_with("0.8") || l.starts_with("1.000"))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        log(""),
        ["0.804 s client-1 lost: refresh failed: the key no longer holds our value (extend replied 0)"]
    );
    assert_eq!(
        log(r#""on_refresh_failure": "until_deadline""#),
        [
            "0.804 s client-1 failed: refresh: the key no longer holds our value (extend replied 0)",
            "1.000 s client-1 lost: TTL passed by the local clock",
        ]
    );
    assert_eq!(
        log(r#""on_refresh_failure": "keep_believing""#),
        ["0.804 s client-1 renewed until 1.802 s"]
    );
    assert_eq!(
        log(r#""refresh": "reset""#),
        [
            "0.803 s redis SET",
            "0.804 s client-1 renewed until 1.802 s",
        ]
    );
}

/// `clock_drift_factor` on the single-instance client: 0.01 of a 10 s TTL plus 2 ms (as
/// Redlock's) comes off the belief: until 9.898 s instead of 10 s.
#[test]
fn redis_drift_factor_shortens_the_belief() {
    let r = redis_run(&[("client-1", r#""clock_drift_factor": 0.01"#)], "");
    assert_eq!(lock_log(&r)[1], "0.002 s client-1 acquired until 9.898 s");
    let r = redis_run(&[("client-1", r#""work_time": "1s""#)], "");
    assert_eq!(lock_log(&r)[1], "0.002 s client-1 acquired until 10.000 s");
}

/// Three instances; client-1 (Redlock) holds the lock from 0 s for 20 s of work; client-2
/// (Redlock, 4 attempts, `retry` as given, or the default with `None`) asks at 1 s and fails
/// every attempt (0 of 3 OK). Returns client-2's `lock_failed` true times in ms, and every
/// observation of the run.
fn redlock_retry_run(retry: Option<&str>, seed: u64) -> (Vec<u64>, String) {
    let retry = retry.map_or(String::new(), |r| format!("\"retry\": {r},"));
    let src = format!(
        r#"{{
  "splitbrain": 1, "name": "retry", "duration": "5s",
  "network": {{ "delay": {{ "fixed": "1ms" }} }},
  "nodes": {{
    "r1": {{ "role": "redis" }}, "r2": {{ "role": "redis" }}, "r3": {{ "role": "redis" }},
    "storage": {{ "role": "storage", "fencing": false }},
    "client-1": {{ "role": "worker", "lock": "redlock", "instances": ["r1", "r2", "r3"],
                  "storage": "storage", "ttl": "30s", "work_time": "20s", "rounds": 1 }},
    "client-2": {{ "role": "worker", "lock": "redlock", "instances": ["r1", "r2", "r3"],
                  "storage": "storage", "ttl": "30s", "work_time": "1s", "rounds": 1,
                  "start_after": "1s", "retry_count": 4, {retry} "think_time": "10s" }}
  }},
  "check": ["exclusive_holders"]
}}"#
    );
    let r = run(&src, seed);
    let fails = r
        .record
        .observations
        .iter()
        .filter(|o| o.obs.kind() == "lock_failed" && r.record.name(o.node) == "client-2")
        .map(|o| o.t.0 / 1_000_000)
        .collect();
    (fails, format!("{:?}", r.record.observations))
}

/// Issue 13, retry policies (Redlock): each failed attempt is observed 2 ms after it starts
/// (1 ms each way), so consecutive failures are `retry delay + 2 ms` apart. Fixed 300 ms: 302
/// ms apart; exponential 100 ms capped at 150 ms: 102, 152, 152; fixed 300 ms with 100 ms
/// jitter: within 202..=402 ms; and no `retry` is exactly `uniform` up to 200 ms (the same
/// observations; the lessons' trace hashes pin the rest).
#[test]
fn redlock_retry_policies_space_the_attempts() {
    let gaps = |f: &[u64]| f.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>();
    let (f, _) = redlock_retry_run(Some(r#"{"policy": "fixed", "delay": "300ms"}"#), 0);
    assert_eq!(f.len(), 4);
    assert_eq!(f[0], 1_002);
    assert_eq!(gaps(&f), [302, 302, 302]);
    let (f, _) = redlock_retry_run(
        Some(r#"{"policy": "exponential", "base": "100ms", "cap": "150ms"}"#),
        0,
    );
    assert_eq!(gaps(&f), [102, 152, 152]);
    for seed in 0..20 {
        let (f, _) = redlock_retry_run(
            Some(r#"{"policy": "fixed", "delay": "300ms", "jitter": "100ms"}"#),
            seed,
        );
        assert!(gaps(&f).iter().all(|g| (202..=402).contains(g)), "{f:?}");
    }
    for seed in 0..5 {
        let default = redlock_retry_run(None, seed);
        let uniform = redlock_retry_run(Some(r#"{"policy": "uniform", "max": "200ms"}"#), seed);
        assert_eq!(default, uniform);
        assert!(gaps(&default.0).iter().all(|g| (2..=202).contains(g)));
    }
}

/// client-1 (Redlock) holds from 0 s for 0.5 s of work; client-2 (Redlock, fixed 300 ms
/// retry, 5 attempts, `ttl`, `start_time`) asks at 0.1 s. Returns client-2's lock log.
fn first_attempt_run(ttl: &str, start_time: &str) -> Vec<String> {
    let src = format!(
        r#"{{
  "splitbrain": 1, "name": "first-attempt", "duration": "3s",
  "network": {{ "delay": {{ "fixed": "1ms" }} }},
  "nodes": {{
    "r1": {{ "role": "redis" }}, "r2": {{ "role": "redis" }}, "r3": {{ "role": "redis" }},
    "storage": {{ "role": "storage", "fencing": false }},
    "client-1": {{ "role": "worker", "lock": "redlock", "instances": ["r1", "r2", "r3"],
                  "storage": "storage", "ttl": "30s", "work_time": "500ms", "rounds": 1 }},
    "client-2": {{ "role": "worker", "lock": "redlock", "instances": ["r1", "r2", "r3"],
                  "storage": "storage", "ttl": "{ttl}", "work_time": "100ms", "rounds": 1,
                  "start_after": "100ms", "retry_count": 5, "think_time": "10s",
                  "retry": {{ "policy": "fixed", "delay": "300ms" }},
                  "start_time": "{start_time}" }}
  }},
  "check": ["exclusive_holders"]
}}"#
    );
    let r = run(&src, 0);
    lock_log(&r)
        .into_iter()
        .filter(|l| l.contains("client-2") && !l.contains("requested"))
        .collect()
}

/// Issue 13, `start_time: "first_attempt"`: client-2's attempts start at 0.1 s and 0.402 s
/// (0 of 3 OK while client-1 holds) and 0.704 s (3 of 3). Measured per attempt (the default)
/// it believes until 0.704 + 10 - 0.102 (drift) = 10.602 s; measured from the first attempt,
/// 0.1 + 10 - 0.102 = 9.998 s, 604 ms (two retries) less than it holds. With a 600 ms TTL the
/// same acquisition is given up: validity 0.1 + 0.6 - 0.008 - 0.706 < 0 although all three
/// instances said OK.
#[test]
fn redlock_start_time_first_attempt_counts_the_retries() {
    let tail = |v: Vec<String>| v[2..].to_vec();
    assert_eq!(
        tail(first_attempt_run("10s", "before_requests")),
        [
            "0.706 s client-2 acquired until 10.602 s",
            "0.809 s client-2 released"
        ]
    );
    assert_eq!(
        tail(first_attempt_run("10s", "first_attempt")),
        [
            "0.706 s client-2 acquired until 9.998 s",
            "0.809 s client-2 released"
        ]
    );
    assert_eq!(
        tail(first_attempt_run("600ms", "before_requests"))[0],
        "0.706 s client-2 acquired until 1.296 s"
    );
    assert_eq!(
        tail(first_attempt_run("600ms", "first_attempt"))[0],
        "0.706 s client-2 failed: 3 of 3 OK, but validity -14 ms <= 0 (ttl 600 ms - elapsed 606 ms - drift 8 ms)"
    );
}

/// client-1 (Redlock, TTL 1 s, drift 12 ms) acquires at 0.002 s, believing until 0.986 s,
/// works 990 ms and checks at 0.992 s, then writes 50 ms later; client-2 asks at 1.01 s.
fn quorum_count_run(validity_check: &str) -> RunResult {
    let src = format!(
        r#"{{
  "splitbrain": 1, "name": "quorum-count", "duration": "3s",
  "network": {{ "delay": {{ "fixed": "1ms" }} }},
  "nodes": {{
    "r1": {{ "role": "redis" }}, "r2": {{ "role": "redis" }}, "r3": {{ "role": "redis" }},
    "storage": {{ "role": "storage", "fencing": false }},
    "client-1": {{ "role": "worker", "lock": "redlock", "instances": ["r1", "r2", "r3"],
                  "storage": "storage", "ttl": "1s", "work_time": "990ms", "rounds": 1,
                  "write_delay": "50ms", "validity_check": {validity_check} }},
    "client-2": {{ "role": "worker", "lock": "redlock", "instances": ["r1", "r2", "r3"],
                  "storage": "storage", "ttl": "10s", "work_time": "500ms", "rounds": 1,
                  "start_after": "1010ms" }}
  }},
  "check": ["holder_writes_only", "exclusive_holders"]
}}"#
    );
    run(&src, 0)
}

/// Issue 13, `validity_check`: `true` and `"local_deadline"` are the same run (so are
/// `false` and `"off"`). At 0.992 s the local deadline (0.986 s) has passed: the default gives
/// the round up. `"quorum_count"` asks the three instances instead (GET at 0.993 s, keys live
/// until 1.001 s), counts 3 of 3 at 0.994 s, checks valid and writes at 1.044 s, when
/// client-2 holds the lock: `holder_writes_only` violated.
#[test]
fn redlock_validity_check_quorum_count_ignores_the_local_deadline() {
    let checks = |r: &RunResult| -> Vec<(u64, bool)> {
        r.record
            .observations
            .iter()
            .filter_map(|o| match &o.obs {
                Obs::ValidityChecked { valid, .. } if r.record.name(o.node) == "client-1" => {
                    Some((o.t.0 / 1_000_000, *valid))
                }
                _ => None,
            })
            .collect()
    };
    let dbg = |r: &RunResult| format!("{:?}", r.record.observations);
    let default = quorum_count_run("true");
    assert_eq!(dbg(&default), dbg(&quorum_count_run(r#""local_deadline""#)));
    assert_eq!(
        dbg(&quorum_count_run("false")),
        dbg(&quorum_count_run(r#""off""#))
    );
    assert_eq!(checks(&default), [(992, false)]);
    assert_eq!(
        default
            .report
            .verdict("holder_writes_only")
            .unwrap()
            .outcome(),
        splitbrain_check::Outcome::Holds
    );
    let q = quorum_count_run(r#""quorum_count""#);
    assert_eq!(checks(&q), [(994, true)]);
    let v = q.report.verdict("holder_writes_only").unwrap();
    assert_eq!(v.outcome(), splitbrain_check::Outcome::Violated);
    assert_eq!(v.violations()[0].from, SimTime(1_045_000_000));
}

/// client-1 (single Redis) holds the key from 0 s for 20 s of work; client-2 (single Redis,
/// `retry_count`, `retry` as given) asks at 1 s and gets nil on every attempt. Returns
/// client-2's `lock_requested` and `lock_failed` true times in ms, and whether the round
/// ended (the worker saw `Failed` and thinks 10 s: no further request in the 5 s run).
fn redis_retry_run(extra: &str, seed: u64) -> (Vec<u64>, Vec<u64>) {
    let src = format!(
        r#"{{
  "splitbrain": 1, "name": "redis-retry", "duration": "5s", "seed": {seed},
  "network": {{ "delay": {{ "fixed": "1ms" }} }},
  "nodes": {{
    "redis": {{ "role": "redis" }},
    "storage": {{ "role": "storage", "fencing": false }},
    "client-1": {{ "role": "worker", "lock": "redis", "instance": "redis",
                  "storage": "storage", "ttl": "30s", "work_time": "20s", "rounds": 1 }},
    "client-2": {{ "role": "worker", "lock": "redis", "instance": "redis",
                  "storage": "storage", "ttl": "30s", "work_time": "1s", "rounds": 1,
                  "start_after": "1s", "think_time": "10s" {extra} }}
  }},
  "check": ["exclusive_holders"]
}}"#
    );
    let r = run(&src, seed);
    let times = |kind: &str| {
        r.record
            .observations
            .iter()
            .filter(|o| o.obs.kind() == kind && r.record.name(o.node) == "client-2")
            .map(|o| o.t.0 / 1_000_000)
            .collect::<Vec<u64>>()
    };
    (times("lock_requested"), times("lock_failed"))
}

/// Issue 13, retry policy for the single-instance client: the Redlock client's policy type
/// and count. With no `retry_count` client-2 makes one attempt (request at 1 s, nil at 1.002
/// s) and its worker thinks 10 s. `retry_count: 4` (attempts) with a fixed 300 ms delay: four
/// requests 302 ms apart (1.000, 1.302, 1.604, 1.906 s), each failing 2 ms later, then the
/// round ends; exponential 100 ms capped at 150 ms: 102, 152, 152 ms apart; fixed 300 ms with
/// 100 ms jitter stays within 202..=402 ms apart; a uniform draw up to 200 ms within 2..=202.
#[test]
fn redis_retry_policies_space_the_attempts() {
    let gaps = |f: &[u64]| f.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>();
    assert_eq!(redis_retry_run("", 0), (vec![1_000], vec![1_002]));
    let (req, fail) = redis_retry_run(
        r#", "retry_count": 4, "retry": {"policy": "fixed", "delay": "300ms"}"#,
        0,
    );
    assert_eq!(req, [1_000, 1_302, 1_604, 1_906]);
    assert_eq!(fail, [1_002, 1_304, 1_606, 1_908]);
    let (req, _) = redis_retry_run(
        r#", "retry_count": 4, "retry": {"policy": "exponential", "base": "100ms", "cap": "150ms"}"#,
        0,
    );
    assert_eq!(gaps(&req), [102, 152, 152]);
    for seed in 0..20 {
        let (req, _) = redis_retry_run(
            r#", "retry_count": 4, "retry": {"policy": "fixed", "delay": "300ms", "jitter": "100ms"}"#,
            seed,
        );
        assert_eq!(req.len(), 4);
        assert!(
            gaps(&req).iter().all(|g| (202..=402).contains(g)),
            "{req:?}"
        );
        let (req, _) = redis_retry_run(r#", "retry_count": 3, "retry_delay_max": "200ms""#, seed);
        assert_eq!(req.len(), 3);
        assert!(gaps(&req).iter().all(|g| (2..=202).contains(g)), "{req:?}");
    }
}

/// A retried acquisition keeps its value and succeeds on the attempt after the key frees:
/// client-1 holds for 0.5 s (released at 0.503 s); client-2 asks at 0.1 s with 5 attempts
/// 300 ms apart: nil at 0.102 and 0.404 s, OK to the third attempt (0.704 s) at 0.706 s.
#[test]
fn redis_retry_acquires_once_the_key_is_free() {
    let r = redis_run(
        &[
            ("client-1", r#""ttl": "30s", "work_time": "500ms""#),
            (
                "client-2",
                r#""ttl": "30s", "work_time": "100ms", "start_after": "100ms", "retry_count": 5,
                   "retry": {"policy": "fixed", "delay": "300ms"}"#,
            ),
        ],
        "",
    );
    let log: Vec<String> = lock_log(&r)
        .into_iter()
        .filter(|l| l.contains("client-2"))
        .collect();
    assert_eq!(
        log,
        [
            "0.102 s client-2 failed: held by another client (SET NX replied nil)",
            "0.404 s client-2 failed: held by another client (SET NX replied nil)",
            "0.706 s client-2 acquired until 30.704 s",
            "0.809 s client-2 released",
        ]
    );
    let values: Vec<&str> = r
        .record
        .observations
        .iter()
        .filter_map(|o| match &o.obs {
            Obs::RedisKeySet { value, .. } => Some(value.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(values.len(), 2);
}

/// Lesson 24's run with 1 ms links: worker `app` runs two threads (lock object `lock_object`),
/// TTL 2 s, work 3 s, retry every 0.5 s; client-3 asks at 3.2 s. One line per lock claim,
/// shared-token release and Redis key change, naming the thread.
fn shared_lock_object_run(lock_object: &str) -> (Vec<String>, RunResult) {
    let src = format!(
        r#"{{
  "splitbrain": 1, "name": "shared-lock-object", "duration": "6s",
  "network": {{ "delay": {{ "fixed": "1ms" }} }},
  "nodes": {{
    "redis": {{ "role": "redis" }},
    "storage": {{ "role": "storage", "fencing": false }},
    "app": {{ "role": "worker", "lock": "redis", "instance": "redis", "storage": "storage",
             "threads": 2, "lock_object": "{lock_object}", "ttl": "2s", "work_time": "3s",
             "think_time": "500ms", "rounds": 1 }},
    "client-3": {{ "role": "worker", "lock": "redis", "instance": "redis", "storage": "storage",
                  "ttl": "10s", "work_time": "2s", "think_time": "500ms", "start_after": "3.2s",
                  "rounds": 1 }}
  }},
  "check": ["exclusive_holders"]
}}"#
    );
    let r = run(&src, 0);
    let log = r
        .record
        .observations
        .iter()
        .filter_map(|o| {
            let who = match o.obs.thread() {
                Some(t) => format!("{}/{t}", r.record.name(o.node)),
                None => r.record.name(o.node),
            };
            let what = match &o.obs {
                Obs::LockAcquired { value, .. } => format!("acquired {value}"),
                Obs::LockLost { .. } => "lost".to_string(),
                Obs::LockReleased { .. } => "released".to_string(),
                Obs::SharedTokenRelease { value, own, .. } => {
                    format!("releases with {value}, not its own {own}")
                }
                Obs::RedisKeySet { value, .. } => format!("SET {value}"),
                Obs::RedisKeyDeleted { .. } => "DEL".to_string(),
                _ => return None,
            };
            Some(format!("{} {who} {what}", o.t))
        })
        .collect();
    (log, r)
}

/// Issue 13, a lock object shared between workers (redis-py `Lock(thread_local=False)`): thread
/// 1 holds A until its local deadline 2.000 s (the key lives to 2.001 s); thread 2, refused
/// at 0.002 s and retrying every 502 ms (500 ms think + 2 ms round trip), takes it with B at
/// 2.009 s and overwrites the shared token; thread 1's release at 3.002 s sends B and deletes
/// thread 2's key at 3.003 s; client-3 takes the lock at 3.202 s while thread 2 believes until
/// 4.008 s: `exclusive_holders` violated over [3.202 s, 4.008 s),
/// app and client-3. Thread-local tokens (the default): thread 1's release sends A (no-op),
/// client-3's attempts at 3.2 and 3.7 s are refused and the one at 4.2 s acquires: holds.
#[test]
fn redis_shared_lock_object_releases_the_other_threads_key() {
    let (log, r) = shared_lock_object_run("shared");
    let (a, b, c) = ("b4553b7852e0a09e", "1eba841aca1a8cb6", "b595933573655db6");
    let want: Vec<String> = [
        format!("0.001 s redis SET {a}"),
        format!("0.002 s app/1 acquired {a}"),
        "2.000 s app/1 lost".to_string(),
        format!("2.009 s redis SET {b}"),
        format!("2.010 s app/2 acquired {b}"),
        format!("3.002 s app/1 releases with {b}, not its own {a}"),
        "3.003 s redis DEL".to_string(),
        format!("3.201 s redis SET {c}"),
        format!("3.202 s client-3 acquired {c}"),
        "4.008 s app/2 lost".to_string(),
    ]
    .into();
    assert_eq!(log[..want.len()], want[..], "{log:#?}");
    let v = r.report.verdict("exclusive_holders").unwrap();
    assert_eq!(v.outcome(), splitbrain_check::Outcome::Violated);
    let w = &v.violations()[0];
    assert_eq!(
        (w.from, w.to),
        (SimTime(3_202_000_000), SimTime(4_008_000_000))
    );
    assert_eq!(w.nodes, ["app", "client-3"]);
    assert!(
        w.evidence[0].text.starts_with("thread 2: acquired lock"),
        "{:?}",
        w.evidence
    );

    let (log, r) = shared_lock_object_run("thread_local");
    assert!(!log.iter().any(|l| l.contains("releases with")), "{log:#?}");
    assert_eq!(
        r.report.verdict("exclusive_holders").unwrap().outcome(),
        splitbrain_check::Outcome::Holds
    );
    let c3: Vec<&String> = log.iter().filter(|l| l.contains("client-3")).collect();
    assert!(c3[0].starts_with("4.2"), "{c3:?}");
}
