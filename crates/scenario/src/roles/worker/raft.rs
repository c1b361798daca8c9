//! `lock: "raft"` workers: the Raft lock service as the lock, its replicas listed. Defaults as
//! the protocol's `RaftClientConfig` here: `ttl` 10 s, `safety_margin` 0 (set it to at least
//! `ttl * (client drift + leader drift) / 1e6` when clocks drift), `request_timeout` 200 ms
//! before trying the next replica.

use super::spec::WorkerSpec;
use crate::checker::NodeCheck;
use crate::duration::or;
use crate::roster::Roster;
use splitbrain_engine::SimDuration;
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::raft::RaftClientConfig;

/// The fields only this lock reads, and whether `w` sets each.
pub(super) fn own_fields(w: &WorkerSpec) -> Vec<(&'static str, bool)> {
    vec![
        ("replicas", w.replicas.is_some()),
        ("safety_margin", w.safety_margin.is_some()),
    ]
}

/// Checks what a raft (or etcd_mutex) worker needs: `replicas`, a non-empty list of distinct
/// raft nodes.
pub(super) fn validate(w: &WorkerSpec, v: &mut NodeCheck<'_, '_>) {
    match &w.replicas {
        Some(list) if !list.is_empty() => {
            for (j, s) in list.iter().enumerate() {
                if list[..j].contains(s) {
                    v.err_item("replicas", j, format!("replica `{s}` is listed twice"));
                }
                v.node_ref_item("replicas", j, s, &["raft"]);
            }
        }
        _ => {
            let kind = w.lock.name();
            let a = if kind.starts_with('e') { "an" } else { "a" };
            v.err_node(format!(
                "{a} {kind} worker needs `replicas`, a non-empty list of raft nodes"
            ))
        }
    }
}

/// The Raft client config of a worker spec (validated: `replicas` lists raft nodes).
pub(super) fn config(w: &WorkerSpec, roster: &Roster, name: String) -> LockConfig {
    let replicas = w
        .replicas
        .as_deref()
        .expect("validated: raft workers list replicas")
        .iter()
        .map(|n| roster.id(n))
        .collect();
    LockConfig::Raft(RaftClientConfig {
        replicas,
        lock: name,
        ttl: or(w.ttl, SimDuration::from_secs(10)),
        safety_margin: or(w.safety_margin, SimDuration::ZERO),
        request_timeout: or(w.request_timeout, SimDuration::from_millis(200)),
        first_req: 1,
    })
}
