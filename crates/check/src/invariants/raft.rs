//! `state_machine_safety`: Raft's State Machine Safety property.

use super::{names, tidy};
use crate::invariant::{Applies, InvariantDef, Premise};
use crate::run::{Role, RunRecord};
use crate::timeline::{describe_faults, obs_evidence};
use crate::verdict::{Verdict, Violation};
use splitbrain_engine::NodeId;
use splitbrain_protocols::Obs;
use std::collections::{BTreeMap, BTreeSet};

/// `state_machine_safety`: [`state_machine_safety`].
pub const STATE_MACHINE_SAFETY: InvariantDef = InvariantDef {
    name: "state_machine_safety",
    params: &[],
    definition: "No two Raft replicas apply different entries (by term or command digest) at \
                 the same log index, a replica re-applying its log after a restart included \
                 (Raft §5.4.3). Inconclusive without Raft replicas.",
    premise: Premise::Observed {
        seen: |o| matches!(o, Obs::RaftApplied { .. }),
        missing: "no Raft replica applied a log entry",
    },
    applies: Applies::RaftReplica,
    reads_holds: false,
    judge: |s, _| state_machine_safety(s.record),
};

/// `state_machine_safety` (Ongaro & Ousterhout 2014, Figure 3 and §5.4.3): "if a server has
/// applied a log entry at a given index to its state machine, no other server will ever apply
/// a different log entry for the same index". Every replica's `RaftApplied { index, term,
/// digest }` is compared with the first application of that index by any replica (a replica
/// re-applying its log after a restart is held to the same rule); an entry differs if its term
/// or its command digest does. Reports the first conflicting application per index, at its
/// true time. A run without Raft replicas is `Inconclusive`.
pub fn state_machine_safety(record: &RunRecord) -> Verdict {
    if record.nodes_where(|r| r == Role::Raft).is_empty() {
        return Verdict::Inconclusive {
            reason: "the run has no Raft replicas".to_string(),
        };
    }
    // index -> (term, digest, observation index) of its first application.
    let mut first: BTreeMap<u64, (u64, u64, usize)> = BTreeMap::new();
    let mut reported: BTreeSet<u64> = BTreeSet::new();
    let mut violations = Vec::new();
    for (i, o) in record.observations.iter_indexed() {
        let Obs::RaftApplied {
            index,
            term,
            digest,
        } = o.obs
        else {
            continue;
        };
        let &mut (t0, d0, i0) = first.entry(index).or_insert((term, digest, i));
        if (t0, d0) == (term, digest) || !reported.insert(index) {
            continue;
        }
        let a = &record.observations[i0];
        let nodes: BTreeSet<NodeId> = [a.node, o.node].into_iter().collect();
        let who = names(record, &nodes);
        violations.push(Violation {
            invariant: "state_machine_safety",
            from: o.t,
            to: o.t,
            nodes: who,
            summary: format!(
                "{} applies a different entry at log index {index} (term {term}) than {} did (term {t0})",
                record.name(o.node),
                record.name(a.node)
            ),
            evidence: tidy(vec![obs_evidence(record, i0), obs_evidence(record, i)]),
            faults: describe_faults(record, &nodes, o.t),
        });
    }
    Verdict::from_violations(violations)
}

#[cfg(test)]
mod tests {
    use super::state_machine_safety;
    use crate::testkit::*;
    use crate::verdict::Verdict;
    use splitbrain_protocols::Obs;

    fn applied(index: u64, term: u64, digest: u64) -> Obs {
        Obs::RaftApplied {
            index,
            term,
            digest,
        }
    }

    #[test]
    fn same_entries_hold_and_a_different_one_is_reported_once() {
        let nodes = [("r1", Raft), ("r2", Raft), ("r3", Raft)];
        let ok = Builder::new(&nodes)
            .obs(ms(100), 0, applied(1, 1, 7))
            .obs(ms(101), 1, applied(1, 1, 7))
            .obs(ms(300), 0, applied(2, 1, 9))
            .obs(ms(900), 0, applied(1, 1, 7)) // re-applied after a restart
            .end(ms(1_000))
            .build();
        assert_eq!(state_machine_safety(&ok), Verdict::Holds);

        let bad = Builder::new(&nodes)
            .obs(ms(100), 0, applied(1, 1, 7))
            .obs(ms(200), 2, applied(1, 2, 8))
            .obs(ms(300), 1, applied(1, 2, 8))
            .end(ms(1_000))
            .build();
        let Verdict::Violated(v) = state_machine_safety(&bad) else {
            panic!("expected a violation");
        };
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].from, ms(200));
        assert_eq!(v[0].nodes, vec!["r1".to_string(), "r3".to_string()]);
    }

    #[test]
    fn no_replicas_is_inconclusive() {
        let r = Builder::new(&[("a", Worker)]).end(ms(1_000)).build();
        assert!(matches!(
            state_machine_safety(&r),
            Verdict::Inconclusive { .. }
        ));
    }
}
