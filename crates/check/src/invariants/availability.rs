//! `leader_available`: no stretch without a leader longer than a threshold (a liveness
//! property with a bound).

use super::{end_evidence, names, tidy};
use crate::invariant::{Applies, InvariantDef, ParamDef, Premise};
use crate::run::RunRecord;
use crate::timeline::{describe_faults, leader_beliefs, obs_evidence, Belief};
use crate::verdict::{Verdict, Violation};
use splitbrain_engine::{SimDuration, SimTime};
use splitbrain_protocols::Obs;
use std::collections::BTreeSet;

/// Default `max_gap` of `leader_available`: 2 s.
pub const DEFAULT_MAX_GAP: SimDuration = SimDuration::from_secs(2);

/// `leader_available`: [`leader_available`]. Opt-in ([`Applies::Named`]): a file that names
/// neither `check` nor `expect` does not check it, so no existing result changes.
pub const LEADER_AVAILABLE: InvariantDef = InvariantDef {
    name: "leader_available",
    params: &[ParamDef {
        name: "max_gap",
        default: DEFAULT_MAX_GAP,
        doc: "the longest stretch with no leader allowed",
    }],
    definition: "From the first leadership claim on, no stretch longer than `max_gap` passes \
                 in which no node believes it leads (a deposed leader cut off in a minority \
                 still counts, so this is a lower bound on unavailability). The initial \
                 election is not a gap; a gap still open at the end of the run counts up to \
                 the end. Sees what `lock_progress` cannot: an election a rejoining Raft \
                 replica forces while the holder's lease stays valid (Ongaro's thesis §9.6).",
    premise: Premise::Observed {
        seen: |o| matches!(o, Obs::LeaderClaim { .. }),
        missing: "no node ever claimed leadership",
    },
    applies: Applies::Named,
    reads_holds: false,
    judge: |s, i| leader_available(s.record, i.arg("max_gap")),
};

/// `leader_available`: from the first leadership claim on, no node believes it leads for at
/// most `max_gap` at a time (true ns). A leader is a node between its `LeaderClaim` and its
/// `LeaderStepDown` or crash (the beliefs every leader invariant reads), so this is availability
/// as the nodes believe it: a deposed leader cut off in a minority still counts (it is a
/// lower bound on unavailability, not an upper one).
///
/// What it sees that `lock_progress` cannot: a gap shorter than a lock's TTL, such as the
/// election a rejoining Raft replica with a raised term forces on a healthy cluster (Ongaro's
/// thesis §9.6, the reason for PreVote): the holder's lease stays valid throughout, so no
/// client waits, but no request can be served until a new leader is elected.
///
/// The time before the first claim (the initial election) is not a gap; a gap still open at
/// the run's end counts up to the end. Each gap longer than `max_gap` is one violation over the
/// gap's window, citing the belief that ended before it and the claim that ended it.
/// `Inconclusive` if no node ever claims leadership.
pub fn leader_available(record: &RunRecord, max_gap: SimDuration) -> Verdict {
    let mut beliefs = leader_beliefs(record);
    if beliefs.is_empty() {
        return Verdict::Inconclusive {
            reason: "no node ever claimed leadership".to_string(),
        };
    }
    beliefs.sort_by_key(|b| (b.from, b.start));
    let end = record.end;
    let mut violations = Vec::new();
    // The belief that reaches furthest so far: the gap starts where it ends.
    let mut last: &Belief = &beliefs[0];
    let mut report = |before: &Belief, gap_to: SimTime, next: Option<&Belief>| {
        let gap = gap_to.saturating_since(before.to);
        if gap <= max_gap {
            return;
        }
        let mut nodes = BTreeSet::from([before.node]);
        let mut evidence: Vec<_> = end_evidence(record, before.end).into_iter().collect();
        if let Some(n) = next {
            nodes.insert(n.node);
            evidence.push(obs_evidence(record, n.start));
        }
        let summary = match next {
            Some(n) => format!(
                "no node led for {gap}, from {} to {} (the threshold is {max_gap}): {} stopped leading and {} claimed next",
                before.to,
                gap_to,
                record.name(before.node),
                record.name(n.node)
            ),
            None => format!(
                "no node led for {gap}, from {} to the end of the run at {} (the threshold is {max_gap}): {} was the last leader",
                before.to,
                gap_to,
                record.name(before.node)
            ),
        };
        violations.push(Violation {
            invariant: "leader_available",
            from: before.to,
            to: gap_to,
            nodes: names(record, &nodes),
            summary,
            evidence: tidy(evidence),
            faults: describe_faults(record, &nodes, gap_to),
        });
    };
    for b in &beliefs[1..] {
        if b.from > last.to {
            report(last, b.from, Some(b));
        }
        if b.to > last.to {
            last = b;
        }
    }
    if last.to < end {
        report(last, end, None);
    }
    Verdict::from_violations(violations)
}

#[cfg(test)]
mod tests {
    use super::leader_available;
    use crate::testkit::*;
    use crate::verdict::Verdict;
    use splitbrain_engine::SimDuration;
    use splitbrain_protocols::Obs;

    fn claim(term: u64) -> Obs {
        Obs::LeaderClaim { term }
    }
    fn down(term: u64) -> Obs {
        Obs::LeaderStepDown { term }
    }

    #[test]
    fn a_gap_longer_than_the_threshold_is_reported_with_its_window() {
        let nodes = [("r1", Raft), ("r2", Raft), ("r3", Raft)];
        // r1 leads 0.2-1.0 s; nobody until r2 claims at 1.5 s; r2 leads to the end (3 s).
        let rec = Builder::new(&nodes)
            .obs(ms(200), 0, claim(1))
            .obs(ms(1000), 0, down(1))
            .obs(ms(1500), 1, claim(2))
            .end(ms(3000))
            .build();
        let v = violations(leader_available(&rec, SimDuration::from_millis(400)));
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].from, v[0].to), (ms(1000), ms(1500)));
        assert_eq!(v[0].nodes, vec!["r1".to_string(), "r2".to_string()]);
        // A gap as long as the threshold is allowed.
        assert_eq!(
            leader_available(&rec, SimDuration::from_millis(500)),
            Verdict::Holds
        );
    }

    #[test]
    fn the_initial_election_is_no_gap_but_a_trailing_one_is_and_overlaps_are_covered() {
        let nodes = [("r1", Raft), ("r2", Raft)];
        // Nobody for the first 2 s; r1 2.0-3.0 s and r2 2.5-3.2 s overlap (no gap); then
        // nobody until the end at 4 s (a 0.8 s gap).
        let rec = Builder::new(&nodes)
            .obs(ms(2000), 0, claim(1))
            .obs(ms(2500), 1, claim(2))
            .obs(ms(3000), 0, down(1))
            .obs(ms(3200), 1, down(2))
            .end(ms(4000))
            .build();
        let v = violations(leader_available(&rec, SimDuration::from_millis(700)));
        assert_eq!((v[0].from, v[0].to), (ms(3200), ms(4000)));
        assert_eq!(
            leader_available(&rec, SimDuration::from_millis(800)),
            Verdict::Holds
        );
        let none = Builder::new(&nodes).end(ms(4000)).build();
        assert!(matches!(
            leader_available(&none, SimDuration::from_millis(1)),
            Verdict::Inconclusive { .. }
        ));
    }

    /// A crash ends a leader's belief like a step-down does.
    #[test]
    fn a_crashed_leader_leads_no_more() {
        let nodes = [("r1", Raft), ("r2", Raft)];
        let rec = Builder::new(&nodes)
            .obs(ms(100), 0, claim(1))
            .fault(ms(1000), crash(0))
            .obs(ms(1900), 1, claim(2))
            .end(ms(3000))
            .build();
        let v = violations(leader_available(&rec, SimDuration::from_millis(500)));
        assert_eq!((v[0].from, v[0].to), (ms(1000), ms(1900)));
    }
}
