//! `lock: "zookeeper"` workers: ZooKeeper's lock recipe over the Raft group serving as the
//! ensemble, its servers listed in `replicas`. Defaults: `ttl` (the requested session
//! timeout) 10 s, kazoo's `KazooClient(timeout=10.0)` (the ensemble clamps it to `[2, 20] x
//! tickTime`, `tickTime` being the replicas' `lease_check_interval`); `protection` true
//! (Curator's `withProtection()`, kazoo's `Lock`); `on_suspended` "give_up" (Curator's
//! advice for SUSPENDED). Give the replicas `lease_promote_extend: "0s"` for ZooKeeper's
//! takeover (a new leader re-arms each session to its full timeout).

use super::raft;
use super::spec::{OnSuspendedSpec, WorkerSpec};
use crate::checker::NodeCheck;
use crate::duration::or;
use crate::roster::Roster;
use splitbrain_engine::SimDuration;
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::raft::{OnSuspended, ZkLockConfig};

/// The fields only this lock reads, and whether `w` sets each.
pub(super) fn own_fields(w: &WorkerSpec) -> Vec<(&'static str, bool)> {
    vec![
        ("replicas", w.replicas.is_some()),
        ("protection", w.protection.is_some()),
        ("on_suspended", w.on_suspended.is_some()),
    ]
}

/// Checks what a zookeeper worker needs: `replicas`, as a raft worker's.
pub(super) fn validate(w: &WorkerSpec, v: &mut NodeCheck<'_, '_>) {
    raft::validate(w, v);
}

/// The ZooKeeper lock client config of a worker spec (validated: `replicas` lists raft nodes).
pub(super) fn config(w: &WorkerSpec, roster: &Roster, name: String) -> LockConfig {
    let servers = w
        .replicas
        .as_deref()
        .expect("validated: zookeeper workers list replicas")
        .iter()
        .map(|n| roster.id(n))
        .collect();
    LockConfig::Zookeeper(ZkLockConfig {
        servers,
        lock: name,
        session_timeout: or(w.ttl, SimDuration::from_secs(10)),
        protection: w.protection.unwrap_or(true),
        on_suspended: match w.on_suspended {
            None | Some(OnSuspendedSpec::GiveUp) => OnSuspended::GiveUp,
            Some(OnSuspendedSpec::HoldUntilLost) => OnSuspended::HoldUntilLost,
        },
        guid: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use crate::error::{Problem, ScenarioError};
    use crate::load_str;

    /// A three-replica file with one worker `c` whose fields are `worker` (JSON members).
    fn problems(worker: &str) -> Vec<Problem> {
        let src = format!(
            "{{\"splitbrain\": 2, \"name\": \"z\", \"duration\": \"2s\",\n\
             \"nodes\": {{\n\
             \"zk1\": {{\"role\": \"raft\"}}, \"zk2\": {{\"role\": \"raft\"}}, \"zk3\": {{\"role\": \"raft\"}},\n\
             \"s\": {{\"role\": \"storage\"}},\n\
             \"c\": {{\"role\": \"worker\", \"storage\": \"s\",\n{worker}}}\n}}}}"
        );
        match load_str("z.json", &src) {
            Err(ScenarioError::Invalid { problems, .. }) => problems,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    fn said(p: &[Problem]) -> Vec<(String, usize, String)> {
        p.iter()
            .map(|p| (p.path.clone(), p.line, p.message.clone()))
            .collect()
    }

    #[test]
    fn an_unknown_suspended_policy_is_located() {
        let p = problems(
            "\"lock\": \"zookeeper\", \"replicas\": [\"zk1\"],\n\"on_suspended\": \"hold\"",
        );
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!((p[0].path.as_str(), p[0].line), ("nodes.c.on_suspended", 7));
        assert!(
            p[0].message.contains("give_up") && p[0].message.contains("hold_until_lost"),
            "{}",
            p[0].message
        );
    }

    #[test]
    fn protection_must_be_a_boolean_and_is_located() {
        let p =
            problems("\"lock\": \"zookeeper\", \"replicas\": [\"zk1\"],\n\"protection\": \"yes\"");
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!((p[0].path.as_str(), p[0].line), ("nodes.c.protection", 7));
    }

    #[test]
    fn zookeeper_knobs_on_other_locks_and_other_knobs_on_zookeeper_are_refused() {
        assert_eq!(
            said(&problems(
                "\"lock\": \"etcd_mutex\", \"replicas\": [\"zk1\"],\n\"on_suspended\": \"give_up\""
            )),
            vec![(
                "nodes.c.on_suspended".to_string(),
                7,
                "`on_suspended` applies to lock \"zookeeper\", but this worker uses lock \"etcd_mutex\""
                    .to_string()
            )]
        );
        assert_eq!(
            said(&problems(
                "\"lock\": \"zookeeper\", \"replicas\": [\"zk1\"],\n\"recheck_own_key\": false"
            )),
            vec![(
                "nodes.c.recheck_own_key".to_string(),
                7,
                "`recheck_own_key` applies to lock \"etcd_mutex\", but this worker uses lock \"zookeeper\""
                    .to_string()
            )]
        );
    }

    #[test]
    fn a_zookeeper_worker_needs_raft_servers() {
        let p = problems("\"lock\": \"zookeeper\"");
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            p[0].message,
            "a zookeeper worker needs `replicas`, a non-empty list of raft nodes"
        );
        let p = problems("\"lock\": \"zookeeper\", \"replicas\": [\"s\"]");
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].path, "nodes.c.replicas[0]");
    }
}
