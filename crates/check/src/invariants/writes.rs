//! Judging the storage's accepted writes: `no_two_accepted_writers`, `fencing_monotonic`,
//! `exactly_once_effects`.

use super::{names, tidy};
use crate::evidence::Evidence;
use crate::invariant::{Applies, InvariantDef, Premise};
use crate::run::RunRecord;
use crate::sent::SentUnder;
use crate::sent::Start;
use crate::timeline::{describe_faults, obs_evidence};
use crate::truth::servers_of;
use crate::verdict::{Verdict, Violation};
use splitbrain_engine::{NodeId, SimTime};
use splitbrain_protocols::Obs;
use std::collections::{BTreeMap, BTreeSet};

/// The storage accepted a write: the premise of the write invariants.
pub(crate) const ACCEPTED: Premise = Premise::Observed {
    seen: |o| matches!(o, Obs::WriteAccepted { .. }),
    missing: "the storage accepted no write",
};

/// `no_two_accepted_writers`: [`no_two_accepted_writers`].
pub const NO_TWO_ACCEPTED_WRITERS: InvariantDef = InvariantDef {
    name: "no_two_accepted_writers",
    params: &[],
    definition: "The storage's accepted writes, in acceptance order, never return to an \
                 earlier holder after a later holder's write was accepted (A A B B is fine, A B \
                 A is a violation); per storage, once a write of one holder epoch was accepted, \
                 no write of an epoch that began earlier is (so B A, when A acquired before B, \
                 is a violation too). Epochs are ordered by when their hold began; a write \
                 whose epoch is unknown is skipped. The correctness property fencing exists \
                 for.",
    premise: ACCEPTED,
    applies: Applies::Writer,
    reads_holds: false,
    judge: |s, _| no_two_accepted_writers_in(s.record, s.words),
};

/// `fencing_monotonic`: [`fencing_monotonic`].
pub const FENCING_MONOTONIC: InvariantDef = InvariantDef {
    name: "fencing_monotonic",
    params: &[],
    definition: "Accepted fencing tokens never decrease, per storage (equal is fine).",
    premise: Premise::Observed {
        seen: |o| matches!(o, Obs::WriteAccepted { token: Some(_), .. }),
        missing: "the storage accepted no write carrying a fencing token",
    },
    applies: Applies::FencedWriter,
    reads_holds: false,
    judge: |s, _| fencing_monotonic(s.record),
};

/// `exactly_once_effects`: [`exactly_once_effects`].
pub const EXACTLY_ONCE_EFFECTS: InvariantDef = InvariantDef {
    name: "exactly_once_effects",
    params: &[],
    definition: "No job id has more than one applied write, across all storage nodes.",
    premise: Premise::Observed {
        seen: |o| matches!(o, Obs::WriteAccepted { job: Some(_), .. }),
        missing: "the storage accepted no write carrying a job id",
    },
    applies: Applies::JobWriter,
    reads_holds: false,
    judge: |s, _| exactly_once_effects(s.record),
};

/// A holder epoch: (writer, the start of the hold its write was sent under).
type Epoch = (NodeId, Start);

fn describe_epoch(record: &RunRecord, (writer, start): Epoch) -> String {
    let who = record.name(writer);
    match start {
        Start::Acquired(j) => format!("{who}'s hold acquired at {}", record.observations[j].t),
        Start::Claimed(j) => format!("{who}'s leadership claimed at {}", record.observations[j].t),
        Start::Unknown => format!("{who} (no acquisition observed)"),
    }
}

fn epoch_evidence(record: &RunRecord, (_, start): Epoch) -> Option<Evidence> {
    start.index().map(|j| obs_evidence(record, j))
}

/// The lock servers an epoch's truth comes from: its lock's servers (a leader's claim: every
/// lock server of the run).
fn epoch_servers(record: &RunRecord, (_, start): Epoch) -> BTreeSet<NodeId> {
    servers_of(record, start.hold(record).0)
}

/// Accepted writes per storage node: `(observation index, writer, token, job, applied)`.
type Accepted = (usize, NodeId, Option<u64>, Option<u64>, bool);

fn accepted_by_storage(record: &RunRecord) -> BTreeMap<NodeId, Vec<Accepted>> {
    let mut out: BTreeMap<NodeId, Vec<Accepted>> = BTreeMap::new();
    for (i, o) in record.observations.iter_indexed() {
        if let Obs::WriteAccepted {
            writer,
            token,
            job,
            applied,
            ..
        } = o.obs
        {
            out.entry(o.node)
                .or_default()
                .push((i, writer, token, job, applied));
        }
    }
    out
}

/// One stale epoch's writes accepted while a later epoch was the latest to write.
struct Window {
    stale: Epoch,
    later: Epoch,
    /// The later epoch's accepted write before the first stale write.
    by: usize,
    /// The stale writes, in acceptance order.
    writes: Vec<usize>,
}

/// `no_two_accepted_writers` (docs/design.md, "Invariants"): "the storage's accepted writes, in acceptance
/// order, never return to an earlier holder after a later holder's write was accepted (A A B
/// B is fine, A B A is a violation)". Each accepted write (applied or not) belongs to the
/// holder epoch it was SENT under (`sent.rs`): (writer, the writer's latest
/// `LockAcquired` before its `WriteSent`, or its latest `LeaderClaim` if it never acquired a
/// lock), not to whatever its writer holds when it lands: a write in flight across its
/// writer's re-acquisition is a write of the old epoch. Epochs are ordered by when they began
/// (the acquisition's place in the record). Per storage node, once a write of an epoch has
/// been accepted, a write of an epoch that began EARLIER must not be: A1 B1 A2 is fine (A2 is
/// a new hold), A1 B1 A1 is a violation, and so is B1 A1 when A acquired before B (the paused
/// holder's first write lands after the new holder's). Writes whose epoch is unknown (no
/// acquisition observed) cannot be ordered and are skipped.
///
/// Every stale write is reported: the stale writes of one epoch while one later epoch is the
/// latest to have written make one window, from that later epoch's write before them to the
/// last of them, with their count. Contributing faults include those on the lock servers the
/// epochs' truth is built from (a lock service's crash or restart can cause the overlap).
pub fn no_two_accepted_writers(record: &RunRecord) -> Verdict {
    no_two_accepted_writers_in(record, true)
}

/// [`no_two_accepted_writers`], its violations in words only if `words` (else with their
/// windows and nodes alone: [`crate::check_outcomes`]).
pub(crate) fn no_two_accepted_writers_in(record: &RunRecord, words: bool) -> Verdict {
    let sent = SentUnder::new(record);
    let mut windows: Vec<(NodeId, Window)> = Vec::new();
    // Each storage's accepted writes in order, read from the log: no list of them (a long
    // run accepts thousands).
    let storages: BTreeSet<NodeId> = record
        .observations
        .iter()
        .filter(|o| matches!(o.obs, Obs::WriteAccepted { .. }))
        .map(|o| o.node)
        .collect();
    for storage in storages {
        let writes = record
            .observations
            .iter_indexed()
            .filter_map(|(i, o)| match o.obs {
                Obs::WriteAccepted { writer, .. } if o.node == storage => Some((i, writer)),
                _ => None,
            });
        // The accepted write whose epoch began latest so far: (epoch, its start, write index).
        let mut latest: Option<(Epoch, usize, usize)> = None;
        // Open windows by (stale, later) epoch, as indices into `windows`.
        let mut open: BTreeMap<(Epoch, Epoch), usize> = BTreeMap::new();
        for (i, writer) in writes {
            let e: Epoch = (writer, sent.of(record, i));
            let Some(start) = e.1.index() else { continue };
            match latest {
                Some((later, later_start, by)) if start < later_start => {
                    match open.get(&(e, later)) {
                        Some(&w) => windows[w].1.writes.push(i),
                        None => {
                            open.insert((e, later), windows.len());
                            windows.push((
                                storage,
                                Window {
                                    stale: e,
                                    later,
                                    by,
                                    writes: vec![i],
                                },
                            ));
                        }
                    }
                }
                _ => latest = Some((e, start, i)),
            }
        }
    }
    let mut violations: Vec<Violation> = windows
        .into_iter()
        .map(|(storage, w)| {
            let nodes: BTreeSet<NodeId> = [w.stale.0, w.later.0, storage].into_iter().collect();
            let first = w.writes[0];
            let last = *w.writes.last().expect("a window has a write");
            if !words {
                return Violation {
                    invariant: "no_two_accepted_writers",
                    from: record.observations[w.by].t,
                    to: record.observations[last].t,
                    nodes: names(record, &nodes),
                    summary: String::new(),
                    evidence: Vec::new(),
                    faults: Vec::new(),
                };
            }
            let mut evidence = vec![obs_evidence(record, w.by), obs_evidence(record, first)];
            if last != first {
                evidence.push(obs_evidence(record, last));
            }
            evidence.extend(epoch_evidence(record, w.stale));
            evidence.extend(epoch_evidence(record, w.later));
            let (from, to) = (record.observations[w.by].t, record.observations[last].t);
            let count = match w.writes.len() {
                1 => String::new(),
                n => format!(" ({n} stale writes)"),
            };
            let mut relevant = nodes.clone();
            relevant.extend(epoch_servers(record, w.stale));
            relevant.extend(epoch_servers(record, w.later));
            Violation {
                invariant: "no_two_accepted_writers",
                from,
                to,
                nodes: names(record, &nodes),
                summary: format!(
                    "{} accepted a write of {} after a write of the later {}{count}",
                    record.name(storage),
                    describe_epoch(record, w.stale),
                    describe_epoch(record, w.later)
                ),
                evidence: tidy(evidence),
                faults: describe_faults(record, &relevant, to),
            }
        })
        .collect();
    violations.sort_by_key(|v| (v.from, v.to));
    Verdict::from_violations(violations)
}

/// `fencing_monotonic` (docs/design.md, "Invariants"): "accepted tokens never decrease". Per storage node, the
/// accepted writes that carry a token, in acceptance order, must have non-decreasing tokens
/// (equal tokens are fine: one holder writing twice). Each decreasing write is reported with
/// the window from the write that set the highest token to it.
pub fn fencing_monotonic(record: &RunRecord) -> Verdict {
    let mut violations = Vec::new();
    for (storage, writes) in accepted_by_storage(record) {
        let mut highest: Option<(u64, usize, NodeId)> = None;
        for &(i, writer, token, ..) in &writes {
            let Some(token) = token else { continue };
            match highest {
                Some((h, hi, hw)) if token < h => {
                    let nodes: BTreeSet<NodeId> = [writer, hw, storage].into_iter().collect();
                    let (from, to) = (record.observations[hi].t, record.observations[i].t);
                    violations.push(Violation {
                        invariant: "fencing_monotonic",
                        from,
                        to,
                        nodes: names(record, &nodes),
                        summary: format!(
                            "{} accepted token {token} from {} after token {h} from {}",
                            record.name(storage),
                            record.name(writer),
                            record.name(hw)
                        ),
                        evidence: tidy(vec![obs_evidence(record, hi), obs_evidence(record, i)]),
                        faults: describe_faults(record, &nodes, to),
                    });
                }
                Some((h, ..)) if token == h => {}
                _ => highest = Some((token, i, writer)),
            }
        }
    }
    violations.sort_by_key(|v| (v.from, v.to));
    Verdict::from_violations(violations)
}

/// `exactly_once_effects`: no job id has more than one `WriteAccepted { applied: true }`
/// (across all storage nodes of the run). Each such job is one violation, the window from
/// its first to its last applied write.
pub fn exactly_once_effects(record: &RunRecord) -> Verdict {
    let mut applied: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, o) in record.observations.iter_indexed() {
        if let Obs::WriteAccepted {
            job: Some(job),
            applied: true,
            ..
        } = o.obs
        {
            applied.entry(job).or_default().push(i);
        }
    }
    let mut violations = Vec::new();
    for (job, idx) in applied {
        if idx.len() < 2 {
            continue;
        }
        let mut nodes = BTreeSet::new();
        for &i in &idx {
            let o = &record.observations[i];
            nodes.insert(o.node);
            if let Obs::WriteAccepted { writer, .. } = o.obs {
                nodes.insert(writer);
            }
        }
        let from: SimTime = record.observations[idx[0]].t;
        let to: SimTime = record.observations[*idx.last().expect("two or more")].t;
        violations.push(Violation {
            invariant: "exactly_once_effects",
            from,
            to,
            nodes: names(record, &nodes),
            summary: format!("job {job} was applied {} times", idx.len()),
            evidence: idx.iter().map(|&i| obs_evidence(record, i)).collect(),
            faults: describe_faults(record, &nodes, to),
        });
    }
    violations.sort_by_key(|v| (v.from, v.to));
    Verdict::from_violations(violations)
}

#[cfg(test)]
mod tests {
    use crate::testkit::*;
    use crate::verdict::Verdict;
    use splitbrain_engine::{LocalTime, SimTime};
    use splitbrain_protocols::Obs;

    fn acquired(token: Option<u64>) -> Obs {
        Obs::LockAcquired {
            thread: None,
            lock: "lease".to_string(),
            token,
            value: String::new(),
            valid_until_local: LocalTime(0),
        }
    }
    fn write(writer: u32, token: Option<u64>, job: Option<u64>, applied: bool) -> Obs {
        Obs::WriteAccepted {
            writer: id(writer),
            req: 0,
            token,
            job,
            applied,
        }
    }
    fn run() -> Builder {
        Builder::new(&[("storage", Storage), ("A", Worker), ("B", Worker)])
    }

    /// Acquisitions and accepted writes in the given order, one a second from 1 s:
    /// `('a', w)` is an acquisition by writer `w`, `('w', w)` an accepted write.
    fn seq(steps: &[(char, u32)]) -> crate::run::RunRecord {
        let mut b = run();
        for (k, &(what, w)) in steps.iter().enumerate() {
            let t = ms((k as u64 + 1) * 1_000);
            b = match what {
                'a' => b.obs(t, w, acquired(None)),
                _ => b.obs(t, 0, write(w, None, None, true)),
            };
        }
        b.end(ms(60_000)).build()
    }

    mod no_two_accepted_writers {
        use super::*;
        use crate::invariants::writes::no_two_accepted_writers;

        #[test]
        fn a1_a1_b1_b1_a2_is_fine() {
            let r = seq(&[
                ('a', 1),
                ('w', 1),
                ('w', 1),
                ('a', 2),
                ('w', 2),
                ('w', 2),
                ('a', 1),
                ('w', 1),
            ]);
            assert_eq!(no_two_accepted_writers(&r), Verdict::Holds);
        }

        #[test]
        fn a1_b1_a2_is_fine_but_a1_b1_a1_is_not() {
            let r = seq(&[('a', 1), ('w', 1), ('a', 2), ('w', 2), ('a', 1), ('w', 1)]);
            assert_eq!(no_two_accepted_writers(&r), Verdict::Holds);
            let r = seq(&[('a', 1), ('w', 1), ('a', 2), ('w', 2), ('w', 1)]);
            let v = violations(no_two_accepted_writers(&r));
            assert_eq!((v[0].from, v[0].to), (ms(4_000), ms(5_000)));
        }

        #[test]
        fn a_paused_holders_first_write_after_the_new_holders_is_a_violation() {
            // B1 A1 where A acquired first: the GC-pause story (A never wrote before B).
            let r = seq(&[('a', 1), ('a', 2), ('w', 2), ('w', 1)]);
            let v = violations(no_two_accepted_writers(&r));
            assert_eq!(v.len(), 1);
            assert_eq!((v[0].from, v[0].to), (ms(3_000), ms(4_000)));
        }

        #[test]
        fn a1_b1_a1_is_a_violation() {
            let r = run()
                .obs(ms(1_000), 1, acquired(None))
                .obs(ms(2_000), 0, write(1, None, None, true))
                .fault(ms(2_500), pause(1, 10_000))
                .obs(ms(3_000), 2, acquired(None))
                .obs(ms(4_000), 0, write(2, None, None, true))
                .obs(ms(12_600), 0, write(1, None, None, false))
                .obs(ms(13_000), 0, write(1, None, None, true))
                .end(ms(20_000))
                .build();
            let v = violations(no_two_accepted_writers(&r));
            // One window for both returning writes (applied or not), counted.
            assert_eq!(v.len(), 1);
            assert_eq!((v[0].from, v[0].to), (ms(4_000), ms(13_000)));
            assert_eq!(v[0].nodes, vec!["A", "B", "storage"]);
            assert_eq!(
                v[0].summary,
                "storage accepted a write of A's hold acquired at 1.000 s after a write of \
                 the later B's hold acquired at 3.000 s (2 stale writes)"
            );
            assert_eq!(
                texts(&v[0].evidence),
                vec![
                    "1.000 s A: acquired lease",
                    "3.000 s B: acquired lease",
                    "4.000 s storage: accepted a write from B",
                    "12.600 s storage: accepted a write from A (duplicate: not applied)",
                    "13.000 s storage: accepted a write from A",
                ]
            );
            assert_eq!(v[0].faults, vec!["A was paused 2.500 s to 12.500 s"]);
        }

        /// A's write sent under its first hold lands after B's write and
        /// after A re-acquired; it is a write of A's first hold (A1 B1 A1), not of A2.
        #[test]
        fn a_write_belongs_to_the_hold_it_was_sent_under() {
            let sent = |req| Obs::WriteSent {
                thread: None,
                req,
                token: None,
                job: None,
            };
            let landed = |req| Obs::WriteAccepted {
                writer: id(1),
                req,
                token: None,
                job: None,
                applied: true,
            };
            let r = run()
                .obs(ms(1_000), 1, acquired(None))
                .obs(ms(1_003), 1, sent(1))
                .obs(ms(2_500), 2, acquired(None))
                .obs(ms(3_004), 0, write(2, None, None, true))
                .obs(ms(3_509), 1, acquired(None))
                .obs(ms(5_003), 0, landed(1))
                .end(ms(12_000))
                .build();
            let v = violations(no_two_accepted_writers(&r));
            assert_eq!((v[0].from, v[0].to), (ms(3_004), ms(5_003)));
            assert_eq!(
                v[0].summary,
                "storage accepted a write of A's hold acquired at 1.000 s after a write of \
                 the later B's hold acquired at 2.500 s"
            );
        }

        #[test]
        fn leaders_without_locks_use_their_claims() {
            let r = run()
                .obs(ms(1_000), 1, Obs::LeaderClaim { term: 1 })
                .obs(ms(2_000), 0, write(1, None, None, true))
                .obs(ms(3_000), 2, Obs::LeaderClaim { term: 2 })
                .obs(ms(4_000), 0, write(2, None, None, true))
                .obs(ms(5_000), 1, Obs::LeaderClaim { term: 3 })
                .obs(ms(6_000), 0, write(1, None, None, true))
                .end(ms(10_000))
                .build();
            assert_eq!(no_two_accepted_writers(&r), Verdict::Holds);
            let r = run()
                .obs(ms(1_000), 1, Obs::LeaderClaim { term: 1 })
                .obs(ms(2_000), 0, write(1, None, None, true))
                .obs(ms(3_000), 2, Obs::LeaderClaim { term: 2 })
                .obs(ms(4_000), 0, write(2, None, None, true))
                .obs(ms(6_000), 0, write(1, None, None, true))
                .end(ms(10_000))
                .build();
            let v = violations(no_two_accepted_writers(&r));
            assert_eq!(
                v[0].summary,
                "storage accepted a write of A's leadership claimed at 1.000 s after a write \
                 of the later B's leadership claimed at 3.000 s"
            );
        }
    }

    mod fencing_monotonic {
        use super::*;
        use crate::invariants::writes::fencing_monotonic;

        #[test]
        fn equal_and_tokenless_writes_are_fine_a_decrease_is_not() {
            let r = run()
                .obs(ms(1_000), 0, write(1, Some(33), None, true))
                .obs(ms(2_000), 0, write(1, Some(33), None, true))
                .obs(ms(3_000), 0, write(2, None, None, true))
                .obs(ms(4_000), 0, write(2, Some(34), None, true))
                .end(ms(10_000))
                .build();
            assert_eq!(fencing_monotonic(&r), Verdict::Holds);
            let r = run()
                .obs(ms(1_000), 0, write(2, Some(34), None, true))
                .obs(ms(2_000), 0, write(1, Some(33), None, true))
                .end(ms(10_000))
                .build();
            let v = violations(fencing_monotonic(&r));
            assert_eq!(v.len(), 1);
            assert_eq!((v[0].from, v[0].to), (ms(1_000), ms(2_000)));
            assert_eq!(
                v[0].summary,
                "storage accepted token 33 from A after token 34 from B"
            );
            assert_eq!(v[0].nodes, vec!["A", "B", "storage"]);
        }
    }

    /// `(tokens in acceptance order) -> (window of each decrease, in write numbers from 1)`:
    /// the window starts at the write that first set the highest token.
    #[test]
    fn fencing_windows_table() {
        use crate::invariants::writes::fencing_monotonic;
        for (tokens, expect) in [
            (vec![33, 34, 33], vec![(2, 3)]),
            (vec![33, 33, 32], vec![(1, 3)]),
            (vec![33, 35, 34, 36, 35], vec![(2, 3), (4, 5)]),
            (vec![1, 2, 2, 3], vec![]),
        ] {
            let mut b = run();
            for (k, &t) in tokens.iter().enumerate() {
                b = b.obs(ms(k as u64 + 1), 0, write(1, Some(t), None, true));
            }
            let got: Vec<(u64, u64)> = match fencing_monotonic(&b.end(ms(100)).build()) {
                Verdict::Holds => vec![],
                v => violations(v)
                    .iter()
                    .map(|v| (v.from.0 / 1_000_000, v.to.0 / 1_000_000))
                    .collect(),
            };
            assert_eq!(got, expect, "{tokens:?}");
        }
    }

    /// A crash of the lock service behind the epochs contributes to a stale write.
    #[test]
    fn the_epochs_lock_servers_faults_contribute() {
        use crate::invariants::writes::no_two_accepted_writers;
        let r = Builder::new(&[
            ("storage", Storage),
            ("A", Worker),
            ("B", Worker),
            ("locks", LeaseService),
        ])
        .obs(
            ms(500),
            1,
            Obs::LockRequested {
                thread: None,
                lock: "lease".to_string(),
                servers: vec![id(3)],
            },
        )
        .obs(ms(1_000), 1, acquired(None))
        .fault(ms(2_000), crash(3))
        .fault(ms(2_500), restart(3))
        .obs(ms(3_000), 2, acquired(None))
        .obs(ms(4_000), 0, write(2, None, None, true))
        .obs(ms(5_000), 0, write(1, None, None, true))
        .end(ms(10_000))
        .build();
        let v = violations(no_two_accepted_writers(&r));
        assert_eq!(
            v[0].faults,
            vec!["locks crashed at 2.000 s (restarted at 2.500 s)"]
        );
    }

    mod exactly_once_effects {
        use super::*;
        use crate::invariants::writes::exactly_once_effects;

        #[test]
        fn duplicates_not_applied_are_fine_a_second_effect_is_not() {
            let r = run()
                .obs(ms(1_000), 0, write(1, None, Some(7), true))
                .obs(ms(2_000), 0, write(2, None, Some(7), false))
                .obs(ms(3_000), 0, write(2, None, Some(8), true))
                .obs(ms(4_000), 0, write(2, None, None, true))
                .obs(ms(5_000), 0, write(1, None, None, true))
                .end(ms(10_000))
                .build();
            assert_eq!(exactly_once_effects(&r), Verdict::Holds);
            let r = run()
                .obs(ms(1_000), 0, write(1, None, Some(7), true))
                .obs(ms(2_000), 0, write(2, None, Some(7), true))
                .end(SimTime(10))
                .build();
            let v = violations(exactly_once_effects(&r));
            assert_eq!((v[0].from, v[0].to), (ms(1_000), ms(2_000)));
            assert_eq!(v[0].summary, "job 7 was applied 2 times");
            assert_eq!(v[0].nodes, vec!["A", "B", "storage"]);
        }
    }
}
