//! `single_leader`, `single_leader_per_term` and `eventual_leader`.
//!
//! A node believes it is leader from its `LeaderClaim` until its `LeaderStepDown` or its
//! crash. A paused node keeps believing: it cannot notice the pause.

use super::{end_evidence, join_names, names, tidy};
use crate::evidence::Evidence;
use crate::invariant::{Applies, InvariantDef, ParamDef, Premise};
use crate::run::{Role, RunRecord};
use crate::timeline::{
    describe_faults, leader_beliefs, obs_evidence, overlaps, Belief, End, Liveness,
};
use crate::verdict::{Verdict, Violation};
use splitbrain_engine::{NodeId, SimDuration, SimTime};
use splitbrain_protocols::Obs;
use std::collections::BTreeSet;

/// Default `settle` of `eventual_leader`: 5 s.
pub const DEFAULT_SETTLE: SimDuration = SimDuration::from_secs(5);

/// A node claimed leadership: the premise of the leader safety invariants.
const CLAIMED: Premise = Premise::Observed {
    seen: |o| matches!(o, Obs::LeaderClaim { .. }),
    missing: "no node ever claimed leadership",
};

/// `single_leader`: [`single_leader`].
pub const SINGLE_LEADER: InvariantDef = InvariantDef {
    name: "single_leader",
    params: &[],
    definition: "At no true instant do two live nodes both claim leadership. Reports each \
                 maximal window of overlap.",
    premise: CLAIMED,
    applies: Applies::Leader,
    reads_holds: false,
    judge: |s, _| single_leader(s.record),
};

/// `eventual_leader`: [`eventual_leader`].
pub const EVENTUAL_LEADER: InvariantDef = InvariantDef {
    name: "eventual_leader",
    params: &[ParamDef {
        name: "settle",
        default: DEFAULT_SETTLE,
        doc: "the time the system gets after the last fault",
    }],
    definition: "After the last fault that changed something (a pause counting until it \
                 ended) plus `settle`, exactly one live node believes it leads and every live \
                 participant agrees: a bully node or Raft replica by its own claim or by the \
                 latest leader it learned of since its last crash; lease-based leaders and \
                 candidates agree through the lease service, so for them the one live claim is \
                 agreement. Judged at the end of the run; inconclusive if the run ends before \
                 the last fault plus `settle`, or if no participant is live at the end.",
    premise: Premise::None,
    applies: Applies::Leader,
    reads_holds: false,
    judge: |s, i| eventual_leader(s.record, i.arg("settle")),
};

/// `single_leader_per_term`: [`single_leader_per_term`].
pub const SINGLE_LEADER_PER_TERM: InvariantDef = InvariantDef {
    name: "single_leader_per_term",
    params: &[],
    definition: "At most one node claims leadership for any one term, however far apart the \
                 claims (Raft's election safety, Ongaro & Ousterhout §5.2). Terms are the \
                 claims' own.",
    premise: CLAIMED,
    applies: Applies::Leader,
    reads_holds: false,
    judge: |s, _| single_leader_per_term(s.record),
};

/// `single_leader` (docs/design.md, "Invariants"): "at no true instant do two live nodes both claim
/// leadership". Reports each maximal true-time window `[from, to)` during which two or more
/// nodes believe they are leader, with the claims (and the step-downs or crashes that ended
/// the overlap) as evidence.
pub fn single_leader(record: &RunRecord) -> Verdict {
    let beliefs = leader_beliefs(record);
    let spans: Vec<(SimTime, SimTime)> = beliefs.iter().map(|b| (b.from, b.to)).collect();
    let mut violations = Vec::new();
    for o in overlaps(&spans, 2) {
        let members: Vec<&Belief> = o.members.iter().map(|&i| &beliefs[i]).collect();
        let nodes: BTreeSet<NodeId> = members.iter().map(|b| b.node).collect();
        let mut evidence = Vec::new();
        for b in &members {
            evidence.push(obs_evidence(record, b.start));
            if b.to <= o.to {
                evidence.extend(end_evidence(record, b.end));
            }
        }
        let who = names(record, &nodes);
        let summary = if who.len() == 2 {
            format!("{} both claim leadership", join_names(&who))
        } else {
            format!("{} all claim leadership", join_names(&who))
        };
        violations.push(Violation {
            invariant: "single_leader",
            from: o.from,
            to: o.to,
            nodes: who,
            summary,
            evidence: tidy(evidence),
            faults: describe_faults(record, &nodes, o.to),
        });
    }
    Verdict::from_violations(violations)
}

/// `single_leader_per_term` (Raft's election safety, Ongaro & Ousterhout 2014, section 5.2:
/// "at most one leader can be elected in a given term"): at most one node claims leadership
/// for any one term (epoch) of one election. Terms are the `LeaderClaim`s' own: bully terms,
/// a Raft replica's current term, the lease service's fencing token, the Raft lock key's
/// create revision, a lease record's version. A term is a number of one election's counter,
/// so a claim is judged only against claims of the same election
/// ([`RunRecord::election`]): a lease leader's term 7 (a revision of the Raft store) and a
/// Raft replica's term 7 count different things. Distinct from `single_leader`, which is
/// about overlap in true time: two claims of one term are a violation however far apart.
/// Reports one violation per term of an election claimed by two or more nodes, at the instant
/// of the second node's claim, with every claim of that term as evidence.
pub fn single_leader_per_term(record: &RunRecord) -> Verdict {
    let mut by_term: std::collections::BTreeMap<(&str, u64), Vec<usize>> = Default::default();
    for (i, o) in record.observations.iter_indexed() {
        if let Obs::LeaderClaim { term } = o.obs {
            by_term
                .entry((record.election(o.node), term))
                .or_default()
                .push(i);
        }
    }
    let mut violations = Vec::new();
    for ((_, term), claims) in by_term {
        let first = record.observations[claims[0]].node;
        let Some(&second) = claims
            .iter()
            .find(|&&i| record.observations[i].node != first)
        else {
            continue;
        };
        let nodes: BTreeSet<NodeId> = claims
            .iter()
            .map(|&i| record.observations[i].node)
            .collect();
        let who = names(record, &nodes);
        let t = record.observations[second].t;
        let verb = if who.len() == 2 { "both" } else { "all" };
        violations.push(Violation {
            invariant: "single_leader_per_term",
            from: t,
            to: t,
            summary: format!(
                "{} {verb} claim leadership for term {term}",
                join_names(&who)
            ),
            nodes: who,
            evidence: tidy(claims.iter().map(|&i| obs_evidence(record, i)).collect()),
            faults: describe_faults(record, &nodes, t),
        });
    }
    violations.sort_by_key(|v| v.from);
    Verdict::from_violations(violations)
}

/// The true time after which nothing more is done to the system: the latest fault that
/// changed something, counting a pause as ending when the paused node resumes or crashes,
/// whichever is first (as the engine recorded each fault's effect). A fault that changed
/// nothing (a restart of a node that is up, a heal with nothing to heal) ends no quiet.
fn quiet_since(record: &RunRecord) -> Option<SimTime> {
    record
        .fault_effects
        .iter()
        .filter(|a| a.idle.is_none())
        .map(|a| a.ends)
        .max()
}

/// `eventual_leader { settle }` (docs/design.md, "Invariants"): "after the last fault that
/// changed something plus `settle`, exactly one live node believes it leads and every live
/// participant agrees". Judged at the end of the run, which must be
/// at least the last fault (a pause counts until it ends) plus `settle` (true ns), else the
/// verdict is `Inconclusive`; so is a run in which no participant is live at the end (every
/// one crashed: no live node to agree on a leader). At the end exactly one live node must
/// claim leadership, and
/// every live bully participant must name it: by its own open claim or by its latest
/// `LeaderKnown` since its last crash (a restarted node has forgotten what it knew).
/// Lease-based leaders (`LeaseLeader`) never name a leader: they agree through the lease
/// service, which grants the lease to one holder at a time, so for them agreement is the one
/// live claim (the etcd / ZooKeeper election recipes: followers only wait on the lease).
pub fn eventual_leader(record: &RunRecord, settle: SimDuration) -> Verdict {
    let participants = record.leader_roles();
    let beliefs = leader_beliefs(record);
    if participants.is_empty() && beliefs.is_empty() {
        return Verdict::Inconclusive {
            reason: "the run has no leader-election participants".to_string(),
        };
    }
    let quiet = quiet_since(record);
    let settled = quiet.unwrap_or(SimTime::ZERO).saturating_add(settle);
    let end = record.end;
    if end < settled {
        let reason = match quiet {
            Some(q) => format!(
                "the run ends at {end}, before the last fault ({q}) plus settle {settle} = {settled}"
            ),
            None => format!("the run ends at {end}, before settle {settle}"),
        };
        return Verdict::Inconclusive { reason };
    }
    let live = Liveness::new(record);
    // With every participant crashed at the end there is no live node to agree on a leader:
    // the premise of "exactly one live leader that every live node agrees on" is absent, so
    // the run shows nothing either way (a violation would name the crashed last leader).
    if !participants.is_empty() && participants.iter().all(|&p| !live.is_up(p, end)) {
        let all_down = (0..record.names.len()).all(|i| !live.is_up(NodeId(i as u32), end));
        let reason = if all_down {
            "no node is live at the end (every node is crashed)"
        } else {
            "no leader-election participant is live at the end (every one is crashed)"
        };
        return Verdict::Inconclusive {
            reason: reason.to_string(),
        };
    }
    let leaders: Vec<&Belief> = beliefs.iter().filter(|b| b.end == End::Open).collect();
    let leader = match leaders.as_slice() {
        [one] => Some(one.node),
        _ => None,
    };

    let mut problems: Vec<String> = Vec::new();
    let mut evidence: Vec<Evidence> = leaders
        .iter()
        .map(|b| obs_evidence(record, b.start))
        .collect();
    let mut nodes: BTreeSet<NodeId> = leaders.iter().map(|b| b.node).collect();
    match leaders.len() {
        0 => {
            problems.push("no live node claims leadership at the end".to_string());
            if let Some(last) = beliefs.iter().max_by_key(|b| (b.to, b.start)) {
                evidence.push(obs_evidence(record, last.start));
                evidence.extend(end_evidence(record, last.end));
                nodes.insert(last.node);
            }
        }
        1 => {}
        _ => {
            let who = names(record, &nodes);
            problems.push(format!(
                "{} live nodes claim leadership at the end: {}",
                who.len(),
                join_names(&who)
            ));
        }
    }
    if let Some(leader) = leader {
        for &p in &participants {
            if p == leader || !live.is_up(p, end) || record.role(p) == Some(Role::LeaseLeader) {
                continue;
            }
            let forgot_at = live.down(p).iter().map(|d| d.0).filter(|&c| c <= end).max();
            let known = record
                .observations
                .iter_indexed()
                .rev()
                .filter(|(_, o)| o.node == p && o.t <= end && forgot_at.map_or(true, |c| o.t >= c))
                .filter_map(|(i, o)| match o.obs {
                    Obs::LeaderKnown { leader } => Some((i, leader)),
                    _ => None,
                })
                .next();
            match known {
                Some((_, l)) if l == leader => {}
                Some((i, l)) => {
                    problems.push(format!(
                        "{} follows {}, not {}",
                        record.name(p),
                        record.name(l),
                        record.name(leader)
                    ));
                    evidence.push(obs_evidence(record, i));
                    nodes.insert(p);
                }
                None => {
                    problems.push(format!("{} knows no leader", record.name(p)));
                    nodes.insert(p);
                }
            }
        }
    }
    if problems.is_empty() {
        return Verdict::Holds;
    }
    let mut relevant = nodes.clone();
    relevant.extend(participants.iter().copied());
    Verdict::Violated(vec![Violation {
        invariant: "eventual_leader",
        from: settled,
        to: end,
        nodes: names(record, &nodes),
        summary: problems.join("; "),
        evidence: tidy(evidence),
        faults: describe_faults(record, &relevant, end),
    }])
}

#[cfg(test)]
mod tests {
    use crate::testkit::*;
    use crate::verdict::{Outcome, Verdict};
    use splitbrain_engine::{Fault, NetRule, SimDuration, SimTime};
    use splitbrain_protocols::Obs;

    fn claim(term: u64) -> Obs {
        Obs::LeaderClaim { term }
    }
    fn down(term: u64) -> Obs {
        Obs::LeaderStepDown { term }
    }

    fn five() -> Builder {
        Builder::new(&[
            ("n1", Bully),
            ("n2", Bully),
            ("n3", Bully),
            ("n4", Bully),
            ("n5", Bully),
        ])
    }

    mod single_leader {
        use super::*;
        use crate::invariants::leader::single_leader;

        #[test]
        fn overlapping_claims_give_the_exact_window() {
            let r = five()
                .obs(ms(1_000), 0, claim(1))
                .obs(ms(3_000), 4, claim(2))
                .obs(ms(5_000), 0, down(1))
                .end(ms(10_000))
                .build();
            let v = violations(single_leader(&r));
            assert_eq!(v.len(), 1);
            assert_eq!((v[0].from, v[0].to), (ms(3_000), ms(5_000)));
            assert_eq!(v[0].nodes, vec!["n1", "n5"]);
            assert_eq!(v[0].summary, "n1 and n5 both claim leadership");
            assert_eq!(
                texts(&v[0].evidence),
                vec![
                    "1.000 s n1: claims leadership (term 1)",
                    "3.000 s n5: claims leadership (term 2)",
                    "5.000 s n1: steps down (term 1)",
                ]
            );
            assert!(v[0].faults.is_empty());
        }

        #[test]
        fn a_paused_leader_keeps_believing() {
            // n1 is paused 2 s..10 s; n5 takes over at 4 s; n1 only steps down at 10.5 s,
            // after it resumes and notices. The overlap is the whole 4 s..10.5 s.
            let r = five()
                .obs(ms(1_000), 0, claim(1))
                .fault(ms(2_000), pause(0, 8_000))
                .obs(ms(4_000), 4, claim(2))
                .obs(ms(10_500), 0, down(1))
                .end(ms(20_000))
                .build();
            let v = violations(single_leader(&r));
            assert_eq!(v.len(), 1);
            assert_eq!((v[0].from, v[0].to), (ms(4_000), ms(10_500)));
            assert_eq!(v[0].faults, vec!["n1 was paused 2.000 s to 10.000 s"]);
        }

        #[test]
        fn a_crash_ends_belief() {
            let r = five()
                .obs(ms(1_000), 0, claim(1))
                .fault(ms(3_000), crash(0))
                .obs(ms(4_000), 4, claim(2))
                .fault(ms(7_000), restart(0))
                .end(ms(20_000))
                .build();
            assert_eq!(single_leader(&r), Verdict::Holds);

            // Crash after the new claim: the overlap ends exactly at the crash.
            let r = five()
                .obs(ms(1_000), 0, claim(1))
                .obs(ms(4_000), 4, claim(2))
                .fault(ms(5_000), crash(0))
                .fault(ms(7_000), restart(0))
                .end(ms(20_000))
                .build();
            let v = violations(single_leader(&r));
            assert_eq!((v[0].from, v[0].to), (ms(4_000), ms(5_000)));
            assert_eq!(
                v[0].faults,
                vec!["n1 crashed at 5.000 s (restarted at 7.000 s)"]
            );
            assert_eq!(texts(&v[0].evidence)[2], "5.000 s n1: crashed");
        }

        #[test]
        fn hand_over_at_one_instant_is_not_an_overlap() {
            let r = five()
                .obs(ms(1_000), 0, claim(1))
                .obs(ms(3_000), 0, down(1))
                .obs(ms(3_000), 1, claim(2))
                .end(ms(10_000))
                .build();
            assert_eq!(single_leader(&r), Verdict::Holds);
        }

        #[test]
        fn split_brain_under_partition_reports_each_window_and_the_partition() {
            let part = Fault::Network {
                rule: NetRule::Partition {
                    groups: vec![vec![id(0), id(1)], vec![id(2), id(3), id(4)]],
                },
            };
            let r = five()
                .obs(ms(500), 4, claim(1))
                .fault(ms(2_000), part)
                .obs(ms(4_000), 1, claim(2))
                .fault(ms(9_000), Fault::Heal)
                .obs(ms(9_100), 1, down(2))
                .obs(ms(12_000), 2, claim(3))
                .obs(ms(13_000), 2, down(3))
                .end(ms(20_000))
                .build();
            let v = violations(single_leader(&r));
            assert_eq!(v.len(), 2);
            assert_eq!((v[0].from, v[0].to), (ms(4_000), ms(9_100)));
            assert_eq!(v[0].nodes, vec!["n2", "n5"]);
            assert_eq!(
                v[0].faults,
                vec!["partition {n1,n2} | {n3,n4,n5} from 2.000 s to 9.000 s"]
            );
            assert_eq!((v[1].from, v[1].to), (ms(12_000), ms(13_000)));
            assert_eq!(v[1].nodes, vec!["n3", "n5"]);
        }

        #[test]
        fn three_way_overlap_is_one_window_naming_all() {
            let r = five()
                .obs(ms(1_000), 0, claim(1))
                .obs(ms(2_000), 1, claim(1))
                .obs(ms(3_000), 2, claim(1))
                .obs(ms(4_000), 1, down(1))
                .obs(ms(4_000), 2, down(1))
                .end(ms(10_000))
                .build();
            let v = violations(single_leader(&r));
            assert_eq!(v.len(), 1);
            assert_eq!((v[0].from, v[0].to), (ms(2_000), ms(4_000)));
            assert_eq!(v[0].summary, "n1, n2 and n3 all claim leadership");
        }
    }

    mod single_leader_per_term {
        use super::*;
        use crate::invariants::leader::single_leader_per_term;

        /// Two nodes claiming one term is a violation even when the
        /// claims never overlap in true time (single_leader holds there).
        #[test]
        fn one_term_claimed_twice_is_a_violation_without_overlap() {
            let r = five()
                .obs(ms(1_000), 4, claim(1))
                .obs(ms(2_000), 4, down(1))
                .obs(ms(3_000), 1, claim(1))
                .obs(ms(4_000), 1, down(1))
                .obs(ms(5_000), 1, claim(2))
                .obs(ms(6_000), 1, down(2))
                .obs(ms(7_000), 1, claim(2))
                .end(ms(10_000))
                .build();
            assert_eq!(crate::invariants::leader::single_leader(&r), Verdict::Holds);
            let v = violations(single_leader_per_term(&r));
            assert_eq!(
                v.len(),
                1,
                "a node re-claiming its own term is not two leaders"
            );
            assert_eq!((v[0].from, v[0].to), (ms(3_000), ms(3_000)));
            assert_eq!(v[0].nodes, vec!["n2", "n5"]);
            assert_eq!(v[0].summary, "n2 and n5 both claim leadership for term 1");
            assert_eq!(
                texts(&v[0].evidence),
                vec![
                    "1.000 s n5: claims leadership (term 1)",
                    "3.000 s n2: claims leadership (term 1)",
                ]
            );
        }

        #[test]
        fn increasing_terms_hold() {
            let r = five()
                .obs(ms(1_000), 4, claim(1))
                .obs(ms(2_000), 3, claim(2))
                .obs(ms(3_000), 2, claim(3))
                .end(ms(10_000))
                .build();
            assert_eq!(single_leader_per_term(&r), Verdict::Holds);
        }

        /// Regression: lease leaders over the Raft lock service claim the lock key's create
        /// revision as their term, the replicas their own Raft term; the two counters were
        /// compared, and "leader1 and raft-2 both claim leadership for term 3" fired on 1,322
        /// of 3,000 seeds with no fault. A term is judged within its own election only.
        #[test]
        fn terms_of_different_elections_are_not_compared() {
            let b = || {
                Builder::new(&[
                    ("raft-1", Raft),
                    ("raft-2", Raft),
                    ("leader1", LeaseLeader),
                    ("leader2", LeaseLeader),
                ])
            };
            let r = b()
                .obs(ms(100), 1, claim(3))
                .obs(ms(1_000), 2, claim(3))
                .end(ms(10_000))
                .build();
            assert_eq!(single_leader_per_term(&r), Verdict::Holds);
            // Within one election a term claimed twice is still a violation, as is a Raft
            // term claimed by two replicas.
            let r = b()
                .obs(ms(100), 1, claim(3))
                .obs(ms(200), 0, claim(3))
                .obs(ms(1_000), 2, claim(3))
                .obs(ms(2_000), 3, claim(3))
                .end(ms(10_000))
                .build();
            let v = violations(single_leader_per_term(&r));
            let summaries: Vec<&str> = v.iter().map(|v| v.summary.as_str()).collect();
            assert_eq!(
                summaries,
                vec![
                    "raft-1 and raft-2 both claim leadership for term 3",
                    "leader1 and leader2 both claim leadership for term 3",
                ]
            );
            // Two lease services are two elections: each has its own tokens.
            let mut r = b()
                .obs(ms(1_000), 2, claim(4))
                .obs(ms(2_000), 3, claim(4))
                .end(ms(10_000))
                .build();
            r.elections = vec![
                String::new(),
                String::new(),
                "lease leader of locks-a".into(),
                "lease leader of locks-b".into(),
            ];
            assert_eq!(single_leader_per_term(&r), Verdict::Holds);
        }
    }

    mod eventual_leader {
        use super::*;
        use crate::invariants::leader::eventual_leader;

        const SETTLE: SimDuration = SimDuration::from_secs(5);

        fn known(leader: u32) -> Obs {
            Obs::LeaderKnown { leader: id(leader) }
        }

        fn three() -> Builder {
            Builder::new(&[("n1", Bully), ("n2", Bully), ("n3", Bully)])
        }

        #[test]
        fn one_leader_everyone_agrees() {
            let r = three()
                .obs(ms(100), 2, claim(1))
                .obs(ms(101), 0, known(2))
                .obs(ms(101), 1, known(2))
                .end(ms(10_000))
                .build();
            assert_eq!(eventual_leader(&r, SETTLE), Verdict::Holds);
        }

        /// A pause of 5 s at 2 s cut short by a crash at 3.5 s counts until the crash, as the
        /// engine ends it: the last fault is the restart at 4 s, so a run ending at 10 s with
        /// settle 5 s is decided (counting the pause until 7 s would make it inconclusive).
        #[test]
        fn a_pause_cut_short_by_a_crash_counts_until_the_crash() {
            let r = three()
                .obs(ms(100), 2, claim(1))
                .obs(ms(101), 0, known(2))
                .obs(ms(101), 1, known(2))
                .fault(ms(2_000), pause(2, 5_000))
                .fault(ms(3_000), pause(2, 1_000))
                .fault(ms(3_500), crash(2))
                .fault(ms(4_000), restart(2))
                .obs(ms(4_000), 2, claim(2))
                .end(ms(10_000))
                .build();
            assert_eq!(eventual_leader(&r, SETTLE), Verdict::Holds);
        }

        /// A restart of a node that is up (or a heal with nothing to heal, a pause of a node
        /// that is down) at 8 s changes nothing and ends no quiet: it is not the last fault,
        /// so a run ending at 10 s with settle 5 s is decided.
        #[test]
        fn a_fault_without_effect_is_not_the_last_fault() {
            for idle in [restart(0), Fault::Heal] {
                let r = three()
                    .obs(ms(100), 2, claim(1))
                    .obs(ms(101), 0, known(2))
                    .obs(ms(101), 1, known(2))
                    .fault(ms(8_000), idle.clone())
                    .end(ms(10_000))
                    .build();
                assert_eq!(eventual_leader(&r, SETTLE), Verdict::Holds, "{idle:?}");
            }
            let r = three()
                .obs(ms(100), 2, claim(1))
                .obs(ms(101), 0, known(2))
                .obs(ms(101), 1, known(2))
                .fault(ms(1_000), crash(0))
                .fault(ms(8_000), pause(0, 1_000))
                .end(ms(10_000))
                .build();
            assert_eq!(
                eventual_leader(&r, SETTLE),
                Verdict::Holds,
                "a pause of a down node"
            );
        }

        #[test]
        fn inconclusive_when_the_run_ends_before_settling() {
            let r = three()
                .obs(ms(100), 2, claim(1))
                .fault(ms(8_000), crash(0))
                .end(ms(10_000))
                .build();
            assert_eq!(
                eventual_leader(&r, SETTLE),
                Verdict::Inconclusive {
                    reason: "the run ends at 10.000 s, before the last fault (8.000 s) plus \
                             settle 5.000 s = 13.000 s"
                        .to_string()
                }
            );
            // A pause counts until it ends.
            let r = three()
                .obs(ms(100), 2, claim(1))
                .fault(ms(1_000), pause(0, 6_000))
                .end(ms(11_000))
                .build();
            assert_eq!(eventual_leader(&r, SETTLE).outcome(), Outcome::Inconclusive);
        }

        /// With every node crashed at 1 s no node is live to agree on a leader: inconclusive
        /// (not a violation naming a crashed node), and so when only non-participants are up.
        #[test]
        fn inconclusive_when_no_participant_is_live_at_the_end() {
            let r = three()
                .obs(ms(100), 2, claim(1))
                .obs(ms(101), 0, known(2))
                .obs(ms(101), 1, known(2))
                .fault(ms(1_000), crash(0))
                .fault(ms(1_000), crash(1))
                .fault(ms(1_000), crash(2))
                .end(ms(12_000))
                .build();
            assert_eq!(
                eventual_leader(&r, SETTLE),
                Verdict::Inconclusive {
                    reason: "no node is live at the end (every node is crashed)".to_string()
                }
            );
            let r = Builder::new(&[("service", LeaseService), ("n1", LeaseLeader)])
                .obs(ms(100), 1, claim(1))
                .fault(ms(1_000), crash(1))
                .end(ms(12_000))
                .build();
            assert_eq!(
                eventual_leader(&r, SETTLE),
                Verdict::Inconclusive {
                    reason: "no leader-election participant is live at the end (every one is \
                             crashed)"
                        .to_string()
                }
            );
            // One participant restarted: judged as before.
            let r = three()
                .obs(ms(100), 2, claim(1))
                .fault(ms(1_000), crash(0))
                .fault(ms(1_000), crash(1))
                .fault(ms(1_000), crash(2))
                .fault(ms(2_000), restart(0))
                .end(ms(12_000))
                .build();
            assert_eq!(eventual_leader(&r, SETTLE).outcome(), Outcome::Violated);
        }

        #[test]
        fn crashed_leader_not_replaced_is_a_violation() {
            let r = three()
                .obs(ms(100), 2, claim(1))
                .obs(ms(101), 0, known(2))
                .obs(ms(101), 1, known(2))
                .fault(ms(2_000), crash(2))
                .end(ms(10_000))
                .build();
            let v = violations(eventual_leader(&r, SETTLE));
            assert_eq!(v.len(), 1);
            assert_eq!((v[0].from, v[0].to), (ms(7_000), ms(10_000)));
            assert_eq!(v[0].summary, "no live node claims leadership at the end");
            assert_eq!(v[0].nodes, vec!["n3"]);
            assert_eq!(v[0].faults, vec!["n3 crashed at 2.000 s"]);
        }

        #[test]
        fn two_leaders_and_a_stale_follower_are_reported() {
            let r = three()
                .obs(ms(100), 2, claim(1))
                .obs(ms(101), 0, known(2))
                .obs(ms(200), 1, claim(1))
                .end(ms(10_000))
                .build();
            let v = violations(eventual_leader(&r, SETTLE));
            assert_eq!(
                v[0].summary,
                "2 live nodes claim leadership at the end: n2 and n3"
            );

            let r = three()
                .obs(ms(100), 2, claim(1))
                .obs(ms(101), 0, known(1))
                .obs(ms(101), 1, known(2))
                .end(ms(10_000))
                .build();
            let v = violations(eventual_leader(&r, SETTLE));
            assert_eq!(v[0].summary, "n1 follows n2, not n3");
            assert_eq!(v[0].nodes, vec!["n1", "n3"]);
        }

        /// Lease-based leaders never observe `LeaderKnown`; they agree
        /// through the lease service. Three of them, one crashed holder, one new holder: holds.
        #[test]
        fn lease_leaders_agree_through_the_service_without_naming_a_leader() {
            let r = Builder::new(&[
                ("locks", LeaseService),
                ("leader1", LeaseLeader),
                ("leader2", LeaseLeader),
                ("leader3", LeaseLeader),
            ])
            .obs(ms(2), 1, claim(1))
            .fault(ms(3_000), crash(1))
            .obs(ms(7_500), 2, claim(2))
            .end(ms(20_000))
            .build();
            assert_eq!(eventual_leader(&r, SETTLE), Verdict::Holds);
            // Two live lease claims at the end are still a violation.
            let r = Builder::new(&[
                ("locks", LeaseService),
                ("leader1", LeaseLeader),
                ("leader2", LeaseLeader),
            ])
            .obs(ms(2), 1, claim(1))
            .obs(ms(7_500), 2, claim(2))
            .end(ms(20_000))
            .build();
            assert_eq!(
                violations(eventual_leader(&r, SETTLE))[0].summary,
                "2 live nodes claim leadership at the end: leader1 and leader2"
            );
        }

        /// `(record) -> outcome`: participants that never claim are judged (only a run with
        /// neither participants nor claims is inconclusive), and a run ending exactly at the
        /// last fault plus settle is judged.
        #[test]
        fn when_the_end_is_judged() {
            let cases: Vec<(&str, crate::run::RunRecord, Result<&str, &str>)> = vec![
                (
                    "nobody ever claims",
                    three().end(ms(10_000)).build(),
                    Err("no live node claims leadership at the end"),
                ),
                (
                    "no participants, no claims",
                    Builder::new(&[("c", Worker)]).end(ms(10_000)).build(),
                    Ok("inconclusive"),
                ),
                (
                    "ends exactly at the last fault plus settle",
                    three()
                        .obs(ms(100), 2, claim(1))
                        .obs(ms(101), 1, known(2))
                        .fault(ms(5_000), crash(0))
                        .end(ms(10_000))
                        .build(),
                    Ok("holds"),
                ),
                (
                    "one nanosecond short of it",
                    three()
                        .obs(ms(100), 2, claim(1))
                        .obs(ms(101), 1, known(2))
                        .fault(SimTime(5_000_000_001), crash(0))
                        .end(ms(10_000))
                        .build(),
                    Ok("inconclusive"),
                ),
            ];
            for (what, r, expect) in cases {
                let got = match eventual_leader(&r, SETTLE) {
                    Verdict::Holds => Ok("holds"),
                    Verdict::Inconclusive { .. } => Ok("inconclusive"),
                    Verdict::Violated(v) => Err(v[0].summary.clone()),
                };
                assert_eq!(got, expect.map_err(str::to_string), "{what}");
            }
        }

        #[test]
        fn a_restarted_follower_has_forgotten_the_leader() {
            let r = three()
                .obs(ms(100), 2, claim(1))
                .obs(ms(101), 0, known(2))
                .obs(ms(101), 1, known(2))
                .fault(ms(1_000), crash(0))
                .fault(ms(2_000), restart(0))
                .end(ms(10_000))
                .build();
            let v = violations(eventual_leader(&r, SETTLE));
            assert_eq!(v[0].summary, "n1 knows no leader");
            assert_eq!(
                v[0].faults,
                vec!["n1 crashed at 1.000 s (restarted at 2.000 s)"]
            );
            // Once it hears from the leader again, all is well; a node still down at the
            // end is not asked.
            let r = three()
                .obs(ms(100), 2, claim(1))
                .obs(ms(101), 0, known(2))
                .fault(ms(1_000), crash(0))
                .fault(ms(1_000), crash(1))
                .fault(ms(2_000), restart(0))
                .obs(ms(2_500), 0, known(2))
                .end(ms(10_000))
                .build();
            assert_eq!(eventual_leader(&r, SETTLE), Verdict::Holds);
        }
    }
}
