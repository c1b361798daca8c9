//! Issue 13, asynchronous replication and the Sentinel-style failover rule: the distlock
//! page's failover hazard pinned with exact times, the truth of a replicated lock (the
//! current primary's value), and no false alarm when nothing fails.

use splitbrain_check::{Outcome, Truth, WallClocks};
use splitbrain_engine::{Observation, SimTime};
use splitbrain_scenario::{execute, load_str, RunResult};

fn run(src: &str, seed: u64) -> RunResult {
    let plan = load_str("inline.json", src).unwrap();
    execute(&plan, seed, None).unwrap()
}

fn ms(n: u64) -> SimTime {
    SimTime(n * 1_000_000)
}

/// `(true time, node, kind)` of the observations of `kinds`.
fn obs_of(r: &RunResult, kinds: &[&str]) -> Vec<(SimTime, String, &'static str)> {
    r.record
        .observations
        .iter()
        .filter(|o| kinds.contains(&o.obs.kind()))
        .map(|o| (o.t, r.record.name(o.node), o.obs.kind()))
        .collect()
}

/// The truth's holds as `(from, to, holder)`.
fn holds(r: &RunResult) -> Vec<(SimTime, SimTime, String)> {
    let truth = Truth::new(&r.record, &WallClocks::new(&r.record));
    truth
        .holds
        .iter()
        .map(|h| {
            (
                h.from,
                h.to,
                h.holder.map_or("?".into(), |n| r.record.name(n)),
            )
        })
        .collect()
}

/// Primary redis-a, replica redis-b (`delay`, `down_after` 2 s); client-1 locks at 0.1 s and
/// works 6 s, client-2 asks at 3 s; `faults` as JSON.
fn scenario(delay: &str, faults: &str) -> String {
    format!(
        r#"{{
  "splitbrain": 1, "name": "repl", "duration": "12s",
  "network": {{ "delay": {{ "fixed": "1ms" }} }},
  "nodes": {{
    "redis-a": {{ "role": "redis" }},
    "redis-b": {{ "role": "redis", "replica_of": "redis-a", "replication_delay": {delay},
                 "down_after": "2s" }},
    "storage": {{ "role": "storage", "fencing": false }},
    "client-1": {{ "role": "worker", "lock": "redis", "instance": "redis-a", "storage": "storage",
                  "ttl": "10s", "work_time": "6s", "start_after": "100ms", "rounds": 1 }},
    "client-2": {{ "role": "worker", "lock": "redis", "instance": "redis-a", "storage": "storage",
                  "ttl": "10s", "work_time": "1s", "start_after": "3s", "rounds": 1 }}
  }},
  "faults": {faults},
  "check": ["exclusive_holders", "holder_writes_only", "no_two_accepted_writers",
            "validity_within_truth"]
}}"#
    )
}

const KINDS: &[&str] = &[
    "redis_key_set",
    "redis_key_deleted",
    "redis_promoted",
    "lock_acquired",
    "lock_failed",
];

/// The hazard (lesson 17): client-1's SET lands on redis-a at 0.101 s; the 100 ms replication
/// delay would ship it at 0.201 s, but redis-a crashes at 0.15 s, so redis-b never gets it.
/// redis-b last heard from redis-a at 0.002 s (its full resync), so the failover rule fires
/// at 2.002 s; client-2's SET at 3.001 s lands on redis-b (told by +switch-master at
/// 2.003 s): two holders from 3.002 s. The truth: client-1 held until the promotion, client-2
/// from its SET on the new primary until its release script lands at 4.006 s.
#[test]
fn failover_before_the_key_replicates_makes_two_holders() {
    let r = run(
        &scenario(
            r#"{"fixed": "100ms"}"#,
            r#"[{"at": "150ms", "crash": "redis-a"}]"#,
        ),
        0,
    );
    assert_eq!(
        obs_of(&r, KINDS),
        [
            (ms(101), "redis-a".into(), "redis_key_set"),
            (ms(102), "client-1".into(), "lock_acquired"),
            (ms(2_002), "redis-b".into(), "redis_promoted"),
            (ms(3_001), "redis-b".into(), "redis_key_set"),
            (ms(3_002), "client-2".into(), "lock_acquired"),
            (ms(4_006), "redis-b".into(), "redis_key_deleted"),
        ]
    );
    assert_eq!(
        holds(&r),
        [
            (ms(101), ms(2_002), "client-1".into()),
            (ms(3_001), ms(4_006), "client-2".into()),
        ]
    );
    for inv in [
        "exclusive_holders",
        "holder_writes_only",
        "no_two_accepted_writers",
        "validity_within_truth",
    ] {
        assert_eq!(
            r.report.verdict(inv).unwrap().outcome(),
            Outcome::Violated,
            "{inv}"
        );
    }
    let v = r.report.verdict("exclusive_holders").unwrap();
    let w = &v.violations()[0];
    assert_eq!((w.from, w.to), (ms(3_002), ms(4_005)));
}

/// Same crash 100 ms later (at 0.25 s): the key reached redis-b at 0.202 s (0.101 s plus
/// 100 ms plus 1 ms of network), so after the failover client-2 finds it taken until client-1 releases
/// it: no two holders, and the truth passes from redis-a's copy to redis-b's at the
/// promotion with no gap.
#[test]
fn failover_after_the_key_replicated_is_safe() {
    let r = run(
        &scenario(
            r#"{"fixed": "100ms"}"#,
            r#"[{"at": "250ms", "crash": "redis-a"}]"#,
        ),
        0,
    );
    let got = obs_of(&r, KINDS);
    assert_eq!(got[1], (ms(102), "client-1".into(), "lock_acquired"));
    assert_eq!(got[2], (ms(202), "redis-b".into(), "redis_key_set"));
    assert_eq!(got[3], (ms(2_202), "redis-b".into(), "redis_promoted"));
    assert_eq!(got[4], (ms(3_002), "client-2".into(), "lock_failed"));
    assert_eq!(holds(&r)[0], (ms(101), ms(6_106), "client-1".into()));
    for inv in [
        "exclusive_holders",
        "holder_writes_only",
        "no_two_accepted_writers",
        "validity_within_truth",
    ] {
        assert_eq!(
            r.report.verdict(inv).unwrap().outcome(),
            Outcome::Holds,
            "{inv}"
        );
    }
}

/// No crash, replication lagging by a random 10..900 ms per write: the replica's copy is
/// behind and can even hold a value after the primary deleted it, but the primary is the
/// server of record, so nothing is flagged, on any seed tried.
#[test]
fn async_replication_without_a_crash_raises_no_false_alarm() {
    for seed in 0..20 {
        let r = run(&scenario(r#"{"uniform": ["10ms", "900ms"]}"#, "[]"), seed);
        assert!(obs_of(&r, &["redis_promoted"]).is_empty());
        // The replica applied both SETs and both deletions, in order.
        let on_b: Vec<&str> = obs_of(&r, &["redis_key_set", "redis_key_deleted"])
            .into_iter()
            .filter(|(_, n, _)| n == "redis-b")
            .map(|(_, _, k)| k)
            .collect();
        assert_eq!(
            on_b,
            [
                "redis_key_set",
                "redis_key_deleted",
                "redis_key_set",
                "redis_key_deleted"
            ],
            "seed {seed}"
        );
        for inv in [
            "exclusive_holders",
            "holder_writes_only",
            "no_two_accepted_writers",
            "validity_within_truth",
        ] {
            assert_eq!(
                r.report.verdict(inv).unwrap().outcome(),
                Outcome::Holds,
                "seed {seed} {inv}"
            );
        }
    }
}

/// A replica refuses writes (Redis's READONLY error): a client configured with the replica
/// fails to acquire.
#[test]
fn a_replica_refuses_writes() {
    let src = scenario(r#"{"fixed": "0ms"}"#, "[]").replace(
        r#""instance": "redis-a", "storage": "storage",
                  "ttl": "10s", "work_time": "1s""#,
        r#""instance": "redis-b", "storage": "storage",
                  "ttl": "10s", "work_time": "1s""#,
    );
    let r = run(&src, 0);
    let failed: Vec<String> = r
        .record
        .observations
        .iter()
        .filter_map(|o| match &o.obs {
            splitbrain_protocols::Obs::LockFailed { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    // Every attempt (the worker retries) is refused, and it never acquires.
    assert!(!failed.is_empty());
    assert!(
        failed
            .iter()
            .all(|f| f.contains("READONLY You can't write against a read only replica.")),
        "{failed:?}"
    );
    assert!(obs_of(&r, &["lock_acquired"])
        .iter()
        .all(|(_, n, _)| n == "client-1"));
}

/// A primary without persistence that restarts before the failover rule fires comes back
/// empty and resynchronises its replica, which drops the key too (the Redis replication
/// docs' warning about primaries without persistence): redis-a crashes at 0.5 s, restarts at
/// 1 s (within `down_after` 2 s, so no promotion) and its full resync deletes the key on
/// redis-b at 1.001 s.
#[test]
fn a_restarted_empty_primary_empties_its_replica() {
    let r = run(
        &scenario(
            r#"{"fixed": "100ms"}"#,
            r#"[{"at": "500ms", "crash": "redis-a"}, {"at": "1s", "restart": "redis-a"}]"#,
        ),
        0,
    );
    let on_b: Vec<(SimTime, &str)> = obs_of(&r, KINDS)
        .into_iter()
        .filter(|(_, n, _)| n == "redis-b")
        .map(|(t, _, k)| (t, k))
        .take(2)
        .collect();
    assert_eq!(
        on_b,
        [(ms(202), "redis_key_set"), (ms(1_001), "redis_key_deleted")]
    );
    assert!(obs_of(&r, &["redis_promoted"]).is_empty());
}
