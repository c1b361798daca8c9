//! `lock: "etcd_mutex"` workers: etcd's `concurrency` Session + Mutex over the Raft lock
//! service's store, its replicas listed. Defaults as etcd's: `ttl` 60 s (the session TTL,
//! `defaultSessionTTL` in client/v3/concurrency/session.go), `recheck_own_key` true (v3.5.0
//! on), `on_session_done` "stop"; `request_timeout` 200 ms before trying the next replica.

use super::raft;
use super::spec::{OnSessionDoneSpec, WorkerSpec};
use crate::checker::NodeCheck;
use crate::duration::or;
use crate::roster::Roster;
use splitbrain_engine::SimDuration;
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::raft::{EtcdMutexConfig, OnSessionDone};

/// The fields only this lock reads, and whether `w` sets each.
pub(super) fn own_fields(w: &WorkerSpec) -> Vec<(&'static str, bool)> {
    vec![
        ("replicas", w.replicas.is_some()),
        ("recheck_own_key", w.recheck_own_key.is_some()),
        ("on_session_done", w.on_session_done.is_some()),
    ]
}

/// Checks what an etcd_mutex worker needs: `replicas`, as a raft worker's.
pub(super) fn validate(w: &WorkerSpec, v: &mut NodeCheck<'_, '_>) {
    raft::validate(w, v);
}

/// The etcd mutex client config of a worker spec (validated: `replicas` lists raft nodes).
pub(super) fn config(w: &WorkerSpec, roster: &Roster, name: String) -> LockConfig {
    let replicas = w
        .replicas
        .as_deref()
        .expect("validated: etcd_mutex workers list replicas")
        .iter()
        .map(|n| roster.id(n))
        .collect();
    LockConfig::EtcdMutex(EtcdMutexConfig {
        replicas,
        lock: name,
        ttl: or(w.ttl, SimDuration::from_secs(60)),
        request_timeout: or(w.request_timeout, SimDuration::from_millis(200)),
        recheck_own_key: w.recheck_own_key.unwrap_or(true),
        on_session_done: match w.on_session_done {
            None | Some(OnSessionDoneSpec::Stop) => OnSessionDone::Stop,
            Some(OnSessionDoneSpec::Ignore) => OnSessionDone::Ignore,
        },
    })
}

#[cfg(test)]
mod tests {
    use crate::error::{Problem, ScenarioError};
    use crate::validate::load_str;

    /// A three-replica file with one worker `c` whose fields are `worker` (JSON members).
    fn problems(worker: &str) -> Vec<Problem> {
        let src = format!(
            "{{\"splitbrain\": 1, \"name\": \"e\", \"duration\": \"2s\",\n\
             \"nodes\": {{\n\
             \"r1\": {{\"role\": \"raft\"}}, \"r2\": {{\"role\": \"raft\"}}, \"r3\": {{\"role\": \"raft\"}},\n\
             \"s\": {{\"role\": \"storage\"}},\n\
             \"c\": {{\"role\": \"worker\", \"storage\": \"s\",\n{worker}}}\n}}}}"
        );
        match load_str("e.json", &src) {
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
    fn an_unknown_session_policy_is_located() {
        let p = problems(
            "\"lock\": \"etcd_mutex\", \"replicas\": [\"r1\"],\n\"on_session_done\": \"maybe\"",
        );
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].path, "nodes.c.on_session_done");
        assert_eq!(p[0].line, 7);
        assert!(p[0].message.contains("stop") && p[0].message.contains("ignore"));
    }

    #[test]
    fn etcd_knobs_on_a_raft_worker_and_raft_knobs_on_an_etcd_worker_are_refused() {
        assert_eq!(
            said(&problems(
                "\"lock\": \"raft\", \"replicas\": [\"r1\"],\n\"recheck_own_key\": false"
            )),
            vec![(
                "nodes.c.recheck_own_key".to_string(),
                7,
                "`recheck_own_key` applies to lock \"etcd_mutex\", but this worker uses lock \"raft\""
                    .to_string()
            )]
        );
        assert_eq!(
            said(&problems(
                "\"lock\": \"etcd_mutex\", \"replicas\": [\"r1\"],\n\"safety_margin\": \"1s\""
            )),
            ["lease", "raft"]
                .map(|k| (
                    "nodes.c.safety_margin".to_string(),
                    7,
                    format!("`safety_margin` applies to lock \"{k}\", but this worker uses lock \"etcd_mutex\"")
                ))
                .to_vec()
        );
    }

    #[test]
    fn an_etcd_worker_needs_raft_replicas() {
        let p = problems("\"lock\": \"etcd_mutex\"");
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            p[0].message,
            "an etcd_mutex worker needs `replicas`, a non-empty list of raft nodes"
        );
        let p = problems("\"lock\": \"etcd_mutex\", \"replicas\": [\"s\"]");
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].path, "nodes.c.replicas[0]");
    }
}
