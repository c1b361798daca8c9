//! Which invariants apply to a scenario: the roles of its nodes decide which invariants can
//! be owed at all ([`applicable_invariants`]), and the file's `check`, `expect` and
//! `check_params` which are checked ([`check_spec`]). Validation refuses a file with nothing
//! to check from here; a run checks what [`check_spec`] says.

use crate::roles::worker::LockKind;
use crate::roles::NodeSpec;
use crate::schema::Scenario;
use splitbrain_check::{CheckSpec, Invariant};

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
        .map(|inv| match inv {
            Invariant::EventualLeader { settle } => Invariant::EventualLeader {
                settle: s.check_params.settle.map_or(settle, |d| d.0),
            },
            Invariant::LockProgress { window } => Invariant::LockProgress {
                window: s.check_params.window.map_or(window, |d| d.0),
            },
            other => other,
        })
        .collect();
    CheckSpec::new(invariants)
}

/// The invariants that can apply to the roles of `s`'s nodes, in canonical order
/// ([`Invariant::NAMES`]): what a file that names neither `check` nor `expect` checks. Each
/// needs the roles that make its premise possible (the observations that
/// [`splitbrain_check::vacuity::vacuous`] looks for):
/// - `single_leader`, `eventual_leader`, `single_leader_per_term`: a node that claims
///   leadership (`bully`, `lease_leader`, `lease_candidate`, `raft`);
/// - `exclusive_holders`, `validity_within_truth`, `lock_progress`: a lock client (a `worker`,
///   or a `lease_leader`, which holds the lease "leader");
/// - `holder_writes_only`, `no_two_accepted_writers`: a node that writes to storage (every
///   `worker`, a `lease_leader` with `write_to`);
/// - `fencing_monotonic`: such a writer whose writes carry a fencing token (a `lease` or `raft`
///   lock; Redis and Redlock clients carry none);
/// - `exactly_once_effects`: a worker whose writes carry job ids (`idempotent: true`);
/// - `state_machine_safety`: a `raft` replica.
pub fn applicable_invariants(s: &Scenario) -> Vec<&'static str> {
    let (mut leader, mut client, mut writer, mut tokens, mut jobs, mut raft) =
        (false, false, false, false, false, false);
    for spec in s.nodes.values() {
        match spec {
            NodeSpec::Bully(_) | NodeSpec::LeaseCandidate(_) => leader = true,
            NodeSpec::LeaseLeader(l) => {
                (leader, client) = (true, true);
                if l.write_to.is_some() {
                    (writer, tokens) = (true, true);
                }
            }
            NodeSpec::Worker(w) => {
                (client, writer) = (true, true);
                tokens |= matches!(
                    w.lock,
                    LockKind::Lease | LockKind::Raft | LockKind::EtcdMutex
                );
                jobs |= w.idempotent == Some(true);
            }
            NodeSpec::Raft(_) => (leader, raft) = (true, true),
            NodeSpec::LeaseService(_)
            | NodeSpec::Redis(_)
            | NodeSpec::Storage(_)
            | NodeSpec::LeaseRecord(_) => {}
        }
    }
    Invariant::all()
        .into_iter()
        .filter(|inv| match inv {
            Invariant::SingleLeader
            | Invariant::EventualLeader { .. }
            | Invariant::SingleLeaderPerTerm => leader,
            Invariant::ExclusiveHolders
            | Invariant::ValidityWithinTruth
            | Invariant::LockProgress { .. } => client,
            Invariant::HolderWritesOnly | Invariant::NoTwoAcceptedWriters => writer,
            Invariant::FencingMonotonic => tokens,
            Invariant::ExactlyOnceEffects => jobs,
            Invariant::StateMachineSafety => raft,
        })
        .map(|inv| inv.name())
        .collect()
}
