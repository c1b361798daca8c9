//! A lock client's belief policy, judged and acted on to its real end: the worker's validity
//! check uses the policy it was given (`grace`, `until_denied`, `renew_attempts`), and
//! `validity_within_truth` judges a belief that outlasts its deadline to its end.

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

/// A lease worker (ttl 2 s, renewing every 500 ms, working 4 s) whose link to the lease
/// service is cut at 1.1 s, with `belief` (JSON fields) as its belief policy: its renewals
/// fail, its last good renewal (sent at 1.0 s) makes its local deadline 3.0 s, and its
/// validity check comes at 4.0 s, after that deadline.
fn lease_worker(belief: &str) -> String {
    format!(
        r#"{{
  "splitbrain": 1, "name": "belief", "duration": "8s",
  "network": {{ "delay": {{ "fixed": "1ms" }} }},
  "nodes": {{
    "locks": {{ "role": "lease_service" }},
    "storage": {{ "role": "storage", "fencing": false }},
    "client-1": {{ "role": "worker", "lock": "lease", "service": "locks", "storage": "storage",
                  "ttl": "2s", "renew_every": "500ms", "work_time": "4s", "rounds": 1
                  {belief} }}
  }},
  "faults": [{{ "at": "1100ms", "cut": [["client-1", "locks"]] }}],
  "check": ["validity_within_truth"]
}}"#
    )
}

/// The validity check of client-1: `(valid, remaining_ns)`.
fn check_of(r: &RunResult) -> (bool, i64) {
    let checks = kinds_of(r, "client-1", "validity_checked");
    assert_eq!(checks.len(), 1, "{checks:?}");
    match checks[0].1 {
        Obs::ValidityChecked {
            valid,
            remaining_ns,
            ..
        } => (*valid, *remaining_ns),
        _ => unreachable!(),
    }
}

/// With the default policy the deadline (3.0 s) ends the belief before the check: no write.
/// With `until_denied`, a 3 s `grace` (until 6.0 s) or renewals given up after 2 failures,
/// the client still believes at 4.0 s, so its worker writes, 1 s past its deadline; the
/// belief past the deadline is observed and `validity_within_truth` judges it to its end
/// against the service's grant, which ended at 3.003 s.
#[test]
fn a_worker_acts_on_the_belief_policy_it_was_given() {
    let stop = run(&lease_worker(""));
    assert_eq!(check_of(&stop), (false, -1_000_000_000));
    assert!(kinds_of(&stop, "client-1", "write_sent").is_empty());
    assert_eq!(
        stop.report
            .verdict("validity_within_truth")
            .unwrap()
            .outcome(),
        Outcome::Holds
    );
    for belief in [
        r#", "on_renew_failure": "until_denied""#,
        r#", "on_renew_failure": "grace", "grace": "3s""#,
        r#", "renew_attempts": 2"#,
    ] {
        let r = run(&lease_worker(belief));
        assert_eq!(check_of(&r), (true, -1_000_000_000), "{belief}");
        assert_eq!(
            kinds_of(&r, "client-1", "write_sent").len(),
            1,
            "{belief}: the worker writes"
        );
        assert_eq!(
            kinds_of(&r, "client-1", "lock_belief_past_deadline").len(),
            1,
            "{belief}"
        );
        let v = r.report.verdict("validity_within_truth").unwrap();
        assert_eq!(v.outcome(), Outcome::Violated, "{belief}");
        let w = &v.violations()[0];
        assert_eq!(w.from, SimTime(3_003_000_000), "{belief}: {}", w.summary);
        // The belief ends when the worker releases after its write's ack (4.001 s + 2 ms).
        assert!(w.to > SimTime(4_000_000_000), "{belief}: {}", w.summary);
    }
}

/// Lease-based leaders believing until the service says no (`until_denied`): leader-a's
/// link to the service is cut from 3 s to 12 s; its grant ends at the service at 6.003 s
/// and leader-b takes the lease; leader-a believes until its first renewal after the heal is
/// denied, at 12.004 s. `validity_within_truth` reports the whole
/// stretch, from the grant's end to the denial, not nothing (its deadline, 6.0 s, came before
/// the grant's end).
#[test]
fn a_belief_with_no_deadline_is_judged_against_the_truths_end() {
    let src = r#"{
  "splitbrain": 1, "name": "until-denied", "duration": "15s",
  "network": { "delay": { "fixed": "1ms" } },
  "nodes": {
    "locks": { "role": "lease_service" },
    "leader-a": { "role": "lease_leader", "service": "locks", "ttl": "4s", "renew_every": "1s",
                  "retry_every": "500ms", "on_renew_failure": "until_denied" },
    "leader-b": { "role": "lease_leader", "service": "locks", "ttl": "4s", "renew_every": "1s",
                  "retry_every": "500ms", "start_after": "100ms" }
  },
  "faults": [{ "at": "3s", "cut": [["leader-a", "locks"]] }, { "at": "12s", "heal": true }],
  "check": ["validity_within_truth"]
}"#;
    let r = run(src);
    let lost = kinds_of(&r, "leader-a", "lock_lost");
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert_eq!(lost[0].0, SimTime(12_004_000_000));
    let v = r.report.verdict("validity_within_truth").unwrap();
    assert_eq!(v.outcome(), Outcome::Violated);
    let w = &v.violations()[0];
    assert_eq!(
        (w.from, w.to),
        (SimTime(6_003_000_000), lost[0].0),
        "{}",
        w.summary
    );
    assert!(w.summary.contains("with no deadline"), "{}", w.summary);
}
