//! The fixed twins of the planted ZooKeeper designs (`tests/coverage/planted/zk-*.json`) on
//! seeds where the nemesis once made them violate: each seed is a model error that was fixed,
//! pinned here with the design and fault pattern that reached it.

use splitbrain_check::Outcome;
use splitbrain_scenario::{execute, load_str, RunResult};

/// The first form of `tests/coverage/planted/zk-hold-until-lost.json`'s fixed twin (give up
/// at SUSPENDED; 1 s of work), under partitions, crashes and drift.
const GIVE_UP_UNDER_NEMESIS: &str = r#"{
 "splitbrain": 2,
 "name": "zk-give-up-nemesis",
 "duration": "60s",
 "network": {
  "delay": {
   "uniform": [
    "1ms",
    "5ms"
   ]
  }
 },
 "nodes": {
  "zk-1": {
   "role": "raft",
   "election_timeout_min": "150ms",
   "election_timeout_max": "300ms",
   "lease_check_interval": "500ms",
   "lease_promote_extend": "0s"
  },
  "zk-2": {
   "role": "raft",
   "election_timeout_min": "150ms",
   "election_timeout_max": "300ms",
   "lease_check_interval": "500ms",
   "lease_promote_extend": "0s"
  },
  "zk-3": {
   "role": "raft",
   "election_timeout_min": "150ms",
   "election_timeout_max": "300ms",
   "lease_check_interval": "500ms",
   "lease_promote_extend": "0s"
  },
  "storage": {
   "role": "storage",
   "fencing": false
  },
  "client": {
   "role": "worker",
   "count": 3,
   "lock": "zookeeper",
   "replicas": [
    "zk-1",
    "zk-2",
    "zk-3"
   ],
   "storage": "storage",
   "ttl": "3s",
   "work_time": "1s",
   "on_suspended": "give_up"
  }
 },
 "nemesis": {
  "mean_interval": "3s",
  "crash": {
   "min": "1s",
   "max": "8s"
  },
  "partition": {
   "min": "1s",
   "max": "10s"
  },
  "drift_ppm": 100000,
  "targets": [
   "zk-1",
   "zk-2",
   "zk-3",
   "client1",
   "client2",
   "client3"
  ]
 },
 "check": [
  "holder_writes_only",
  "exclusive_holders"
 ]
}"#;

fn outcome(r: &RunResult, inv: &str) -> Outcome {
    r.report.verdict(inv).unwrap().outcome()
}

/// Seed 4: client2's release is never committed (its leader lost the majority), Curator's
/// LOST ends its session on the client while a new leader has re-armed it on the ensemble
/// for a full timeout; client2's next acquisition opens a new session and finds its old node
/// by its GUID. Taking that node (kazoo's `_find_node`, no owner check) made client2 believe
/// until the old session expired under it and client3 took the lock; Curator's
/// `ProtectedMode.validateFoundNode` refuses a node of another session.
#[test]
fn a_node_of_an_older_session_is_not_adopted() {
    let plan = load_str("give-up.json", GIVE_UP_UNDER_NEMESIS).unwrap();
    let r = execute(&plan, 4, None).unwrap();
    assert_eq!(outcome(&r, "holder_writes_only"), Outcome::Holds);
    assert_eq!(outcome(&r, "exclusive_holders"), Outcome::Holds);
}
