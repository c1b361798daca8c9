//! Which invariants apply to a scenario: the roles of its nodes decide which invariants can
//! be owed at all ([`applicable_invariants`]), and the file's `check`, `expect` and
//! `check_params` which are checked ([`check_spec`]). Validation refuses a file with nothing
//! to check from here; a run checks what [`check_spec`] says.

use crate::roles::worker::LockKind;
use crate::roles::NodeSpec;
use crate::schema::Scenario;
use splitbrain_check::{Applies, CheckSpec, Invariant};
use std::collections::BTreeSet;

/// The invariants a scenario checks: `check`; without it (absent or `[]`), the names in
/// `expect` and `expect_rate`; without those either, every invariant that can apply to the
/// file's roles ([`applicable_invariants`]), so an invariant about locks is never owed by a
/// file of bully nodes. With `check_params` applied.
pub fn check_spec(s: &Scenario) -> CheckSpec {
    let names: Vec<String> = if !s.check.is_empty() {
        s.check.clone()
    } else if !s.expect.is_empty() || !s.expect_rate.is_empty() {
        Invariant::NAMES
            .iter()
            .filter(|n| s.expect.contains_key(**n) || s.expect_rate.contains_key(**n))
            .map(|n| n.to_string())
            .collect()
    } else {
        applicable_invariants(s)
            .into_iter()
            .map(str::to_string)
            .collect()
    };
    let invariants = names
        .iter()
        .filter_map(|n| Invariant::from_name(n))
        .map(|inv| {
            inv.def()
                .params
                .iter()
                .fold(inv.clone(), |inv, p| match s.check_params.get(p.name) {
                    Some(v) => inv.with_param(p.name, v),
                    None => inv,
                })
        })
        .collect();
    CheckSpec::new(invariants)
}

/// The invariants that can apply to the roles of `s`'s nodes, in canonical order
/// ([`Invariant::NAMES`]): what a file that names neither `check` nor `expect` checks. Each
/// applies where some node provides its [`Applies`] (what makes its premise possible, the
/// observations that [`splitbrain_check::vacuity::vacuous`] looks for):
/// - `Leader`: a node that claims leadership (`bully`, `lease_leader`, `lease_candidate`,
///   `raft`);
/// - `LockClient`: a lock client (a `worker`, or a `lease_leader`, which holds the lease
///   "leader");
/// - `Writer`: a node that writes to storage (every `worker`, a `lease_leader` with
///   `write_to`);
/// - `FencedWriter`: such a writer whose writes carry a fencing token (a `lease`, `raft` or
///   `etcd_mutex` lock; Redis and Redlock clients carry none);
/// - `JobWriter`: a worker whose writes carry job ids (`idempotent: true`);
/// - `RaftReplica`: a `raft` replica.
pub fn applicable_invariants(s: &Scenario) -> Vec<&'static str> {
    let mut provided = BTreeSet::new();
    for spec in s.nodes.values() {
        match spec {
            NodeSpec::Bully(_) | NodeSpec::LeaseCandidate(_) => {
                provided.insert(Applies::Leader);
            }
            NodeSpec::LeaseLeader(l) => {
                provided.extend([Applies::Leader, Applies::LockClient]);
                if l.write_to.is_some() {
                    provided.extend([Applies::Writer, Applies::FencedWriter]);
                }
            }
            NodeSpec::Worker(w) => {
                provided.extend([Applies::LockClient, Applies::Writer]);
                if matches!(
                    w.lock,
                    LockKind::Lease | LockKind::Raft | LockKind::EtcdMutex
                ) {
                    provided.insert(Applies::FencedWriter);
                }
                if w.idempotent == Some(true) {
                    provided.insert(Applies::JobWriter);
                }
            }
            NodeSpec::Raft(_) => {
                provided.extend([Applies::Leader, Applies::RaftReplica]);
            }
            NodeSpec::LeaseService(_)
            | NodeSpec::Redis(_)
            | NodeSpec::Storage(_)
            | NodeSpec::LeaseRecord(_) => {}
            NodeSpec::Custom(c) => {
                let claims = crate::role::Role::claims(c);
                let each = [
                    (claims.leader, Applies::Leader),
                    (claims.lock_client, Applies::LockClient),
                    (claims.writer, Applies::Writer),
                    (claims.tokens, Applies::FencedWriter),
                    (claims.jobs, Applies::JobWriter),
                ];
                provided.extend(each.into_iter().filter(|(c, _)| *c).map(|(_, a)| a));
            }
        }
    }
    splitbrain_check::invariant_defs()
        .filter(|d| provided.contains(&d.applies))
        .map(|d| d.name)
        .collect()
}
