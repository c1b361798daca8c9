//! A Redlock client follows Sentinel's promotions: each of its instances follows its own
//! `+switch-master`, as the single-instance client does.

use splitbrain_check::Outcome;
use splitbrain_engine::{Observation, SimTime};
use splitbrain_protocols::Obs;
use splitbrain_scenario::{execute, load_str, RunResult};

fn run(src: &str) -> RunResult {
    let plan = load_str("inline.json", src).unwrap();
    execute(&plan, 0, None).unwrap()
}

fn kinds_of<'a>(r: &'a RunResult, node: &str, kind: &str) -> Vec<(SimTime, &'a Obs)> {
    let id = r.record.node_id(node).unwrap();
    r.record
        .observations
        .iter()
        .filter(|o| o.node == id && o.obs.kind() == kind)
        .map(|o| (o.t, &o.obs))
        .collect()
}

/// Redlock over five instances whose first three (redis-a, -b, -c) crash at 0.5 s for good;
/// each has a replica that Sentinel promotes 1 s after it last heard from its primary. The
/// client asks from 3 s: it follows each `+switch-master`, so it reaches redis-a2, -b2, -c2,
/// -d and -e (5 of 5) and holds the lock, instead of 2 of 5 forever.
#[test]
fn a_redlock_client_follows_each_promoted_instance() {
    let src = r#"{
  "splitbrain": 1, "name": "redlock-failover", "duration": "8s",
  "network": { "delay": { "fixed": "1ms" } },
  "nodes": {
    "redis-a": { "role": "redis" }, "redis-b": { "role": "redis" },
    "redis-c": { "role": "redis" }, "redis-d": { "role": "redis" },
    "redis-e": { "role": "redis" },
    "redis-a2": { "role": "redis", "replica_of": "redis-a", "down_after": "1s" },
    "redis-b2": { "role": "redis", "replica_of": "redis-b", "down_after": "1s" },
    "redis-c2": { "role": "redis", "replica_of": "redis-c", "down_after": "1s" },
    "storage": { "role": "storage", "fencing": false },
    "client-1": { "role": "worker", "lock": "redlock", "storage": "storage",
                  "instances": ["redis-a", "redis-b", "redis-c", "redis-d", "redis-e"],
                  "ttl": "10s", "work_time": "1s", "start_after": "3s", "rounds": 1 }
  },
  "faults": [
    { "at": "500ms", "crash": "redis-a" }, { "at": "500ms", "crash": "redis-b" },
    { "at": "500ms", "crash": "redis-c" }
  ],
  "check": ["exclusive_holders", "holder_writes_only"]
}"#;
    let r = run(src);
    assert_eq!(kinds_of(&r, "redis-a2", "redis_promoted").len(), 1);
    let failed = kinds_of(&r, "client-1", "lock_failed");
    assert!(failed.is_empty(), "{failed:?}");
    let acquired = kinds_of(&r, "client-1", "lock_acquired");
    assert_eq!(acquired.len(), 1);
    let requested = kinds_of(&r, "client-1", "lock_requested");
    let Obs::LockRequested { servers, .. } = requested[0].1 else {
        unreachable!()
    };
    let names: Vec<String> = servers.iter().map(|n| r.record.name(*n)).collect();
    assert_eq!(
        names,
        ["redis-a2", "redis-b2", "redis-c2", "redis-d", "redis-e"]
    );
    assert_eq!(kinds_of(&r, "storage", "write_accepted").len(), 1);
    for inv in ["exclusive_holders", "holder_writes_only"] {
        assert_eq!(
            r.report.verdict(inv).unwrap().outcome(),
            Outcome::Holds,
            "{inv}"
        );
    }
}
