//! `exclusive_holders` (beliefs) and `holder_writes_only` (writes judged against the truth).
//!
//! A client believes it holds lock `L` from its `LockAcquired { lock: L }` until its
//! `LockReleased` / `LockLost` for `L` or its crash; a paused client goes on believing.

use super::{end_evidence, join_names, names, tidy, Shared};
use crate::invariant::{Applies, InvariantDef, Premise};
use crate::run::{Role, RunRecord};
use crate::sent::{SentUnder, Start};
use crate::timeline::{describe_faults, lock_beliefs, obs_evidence, overlaps, Belief, PerNode};
use crate::truth::{servers_of, HoldId};
use crate::verdict::{Verdict, Violation};
use splitbrain_engine::{NodeId, SimTime};
use splitbrain_protocols::Obs;
use std::collections::{BTreeMap, BTreeSet};

/// A client acquired a lock: the premise of the lock belief invariants.
const ACQUIRED: Premise = Premise::Observed {
    seen: |o| matches!(o, Obs::LockAcquired { .. }),
    missing: "no client ever acquired a lock",
};

/// `exclusive_holders`: [`exclusive_holders`].
pub const EXCLUSIVE_HOLDERS: InvariantDef = InvariantDef {
    name: "exclusive_holders",
    params: &[],
    definition: "At no true instant do two clients both believe they hold the same lock (an \
                 efficiency property: a double run is wasted work; safety is the storage's \
                 business).",
    premise: ACQUIRED,
    applies: Applies::LockClient,
    reads_holds: false,
    judge: |s, _| exclusive_holders_in(s.record, s.words),
};

/// `validity_within_truth`: [`validity_within_truth`].
pub const VALIDITY_WITHIN_TRUTH: InvariantDef = InvariantDef {
    name: "validity_within_truth",
    params: &[],
    definition: "A holder's believed end of validity (its acquisition's or latest renewal's \
                 local deadline, converted to true time through its own monotonic clock) is \
                 never later than the true end of that hold on the servers. A client that \
                 releases before its hold ends never violates.",
    premise: ACQUIRED,
    applies: Applies::LockClient,
    reads_holds: true,
    judge: |s, _| validity_within_truth_in(s),
};

/// `holder_writes_only`: [`holder_writes_only`].
pub const HOLDER_WRITES_ONLY: InvariantDef = InvariantDef {
    name: "holder_writes_only",
    params: &[],
    definition: "Every write the storage accepts was sent by the client that truly held the \
                 lock at the instant of acceptance, under that very hold. Stricter than \
                 fencing: a stale write that lands before the new holder's first write passes \
                 fencing but fails here. Inconclusive if the run has accepted writes but no \
                 lock servers.",
    premise: crate::invariants::writes::ACCEPTED,
    applies: Applies::Writer,
    reads_holds: true,
    judge: |s, _| holder_writes_only_in(s),
};

/// `exclusive_holders` (docs/design.md, "Invariants"): "at no true instant do two clients both believe they
/// hold the same lock". Reports, per lock name, each maximal true-time window `[from, to)`
/// in which two or more clients believe they hold it, with the acquisitions (and the
/// releases, losses or crashes that ended the overlap) as evidence.
pub fn exclusive_holders(record: &RunRecord) -> Verdict {
    exclusive_holders_in(record, true)
}

/// [`exclusive_holders`], its violations in words only if `words` (else with their windows
/// and nodes alone: [`crate::check_outcomes`]).
pub(crate) fn exclusive_holders_in(record: &RunRecord, words: bool) -> Verdict {
    if !beliefs_may_overlap(record) {
        return Verdict::Holds;
    }
    let beliefs = lock_beliefs(record);
    let mut by_lock: BTreeMap<&str, Vec<&Belief>> = BTreeMap::new();
    for b in &beliefs {
        by_lock.entry(b.key.as_str()).or_default().push(b);
    }
    let mut violations = Vec::new();
    for (lock, list) in by_lock {
        let spans: Vec<(SimTime, SimTime)> = list.iter().map(|b| (b.from, b.to)).collect();
        for o in overlaps(&spans, 2) {
            let members: Vec<&Belief> = o.members.iter().map(|&i| list[i]).collect();
            let nodes: BTreeSet<NodeId> = members.iter().map(|b| b.node).collect();
            if !words {
                violations.push(Violation {
                    invariant: "exclusive_holders",
                    from: o.from,
                    to: o.to,
                    nodes: names(record, &nodes),
                    summary: String::new(),
                    evidence: Vec::new(),
                    faults: Vec::new(),
                });
                continue;
            }
            let mut evidence = Vec::new();
            for b in &members {
                evidence.push(obs_evidence(record, b.start));
                if b.to <= o.to {
                    evidence.extend(end_evidence(record, b.end));
                }
            }
            let who = names(record, &nodes);
            let summary = format!(
                "{} {} believe they hold {lock}",
                join_names(&who),
                if who.len() == 2 { "both" } else { "all" }
            );
            // Faults on the lock servers explain double grants (a clock step, a restart),
            // so they count as contributing too.
            let mut relevant = nodes.clone();
            relevant.extend(record.nodes_where(Role::is_lock_server));
            violations.push(Violation {
                invariant: "exclusive_holders",
                from: o.from,
                to: o.to,
                nodes: who,
                summary,
                evidence: tidy(evidence),
                faults: describe_faults(record, &relevant, o.to),
            });
        }
    }
    violations.sort_by_key(|v| (v.from, v.to));
    Verdict::from_violations(violations)
}

/// Whether two clients' beliefs in one lock ([`lock_beliefs`]) may overlap: `false` only if
/// at no instant two of them are held, found in one pass over the run that makes no belief
/// (a long run has thousands of beliefs, and the list and its overlap events
/// are 0.5 MB of resident memory in lesson 15 run for 3,000 s, for a verdict that holds).
/// Follows [`beliefs`](crate::timeline::beliefs)' rule: an acquisition opens the node's
/// belief in its lock (continues an open one), a release or loss closes it, a crash closes
/// all of the node's. After all the steps of one instant, the open beliefs are those with
/// `from <= t < to`, which [`overlaps`] counts; the count can only rise where one opened.
fn beliefs_may_overlap(record: &RunRecord) -> bool {
    use crate::timeline::{steps, Step};
    use splitbrain_engine::Fault;
    let mut open: BTreeMap<(NodeId, &str), ()> = BTreeMap::new();
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    // The locks whose belief opened at the current instant.
    let mut opened: Vec<&str> = Vec::new();
    let mut now: Option<SimTime> = None;
    for step in steps(record) {
        let t = match step {
            Step::Obs { t, .. } | Step::Fault { t, .. } => t,
        };
        if now != Some(t) {
            if now.is_some_and(|n| t < n) {
                // Out of time order (a hand-built record): the full check decides.
                return true;
            }
            if opened.drain(..).any(|lock| count[lock] >= 2) {
                return true;
            }
            now = Some(t);
        }
        match step {
            Step::Obs { node, obs, .. } => {
                // A start while open continues the belief; a stop of none is nothing.
                let (lock, opens) = match obs {
                    Obs::LockAcquired { lock, .. } => (lock.as_str(), true),
                    Obs::LockReleased { lock, .. } | Obs::LockLost { lock, .. } => {
                        (lock.as_str(), false)
                    }
                    _ => continue,
                };
                if opens && open.insert((node, lock), ()).is_none() {
                    *count.entry(lock).or_default() += 1;
                    opened.push(lock);
                } else if !opens && open.remove(&(node, lock)).is_some() {
                    *count.get_mut(lock).expect("counted when opened") -= 1;
                }
            }
            Step::Fault {
                fault: Fault::Crash { node },
                ..
            } => {
                for ((_, lock), ()) in crate::timeline::take_node(&mut open, *node) {
                    *count.get_mut(lock).expect("counted when opened") -= 1;
                }
            }
            Step::Fault { .. } => {}
        }
    }
    opened.iter().any(|lock| count[lock] >= 2)
}

/// `holder_writes_only` (docs/design.md, "Invariants"): "every write the storage accepts was sent by the client
/// that truly held the lock at the instant of acceptance". Every `WriteAccepted` (applied or
/// not) at true time `t` is judged against the truth at `t` (`Truth`): the hold the write
/// was SENT under (`sent.rs`: its `WriteSent`'s hold, or its token's) must be true at
/// `t`. A write in flight across its writer's re-acquisition belongs to the old hold, so it
/// fails here if the old hold ended, even though its writer holds the lock again.
/// - a lease is held by `holder` from `LeaseGranted` until `LeaseFreed`, a new grant of the
///   same lease, or the service's crash; the write's token must be the grant's;
/// - a Redis lock (key) is held by the client whose `LockAcquired.value` a majority of the
///   lock's own instances (the `servers` its clients' `LockRequested` name) hold at `t`; see
///   [`KeyHold`](crate::KeyHold) for when an instance holds a key (a down instance grants to
///   nobody and goes on counting for what it held).
///
/// A writer that never acquired a lock (a lease-based leader) must truly hold a grant whose
/// token is its claimed term. A run with accepted writes but no lock servers is
/// `Inconclusive`: nothing defines the truth.
pub fn holder_writes_only(record: &RunRecord) -> Verdict {
    holder_writes_only_in(&Shared::new(record))
}

/// [`holder_writes_only`] with the truth shared with the other invariants of a check.
pub(crate) fn holder_writes_only_in(shared: &Shared) -> Verdict {
    let record = shared.record;
    let writes: Vec<usize> = record
        .observations
        .iter_indexed()
        .filter(|(_, o)| matches!(o.obs, Obs::WriteAccepted { .. }))
        .map(|(i, _)| i)
        .collect();
    let servers = record.nodes_where(Role::is_lock_server);
    if servers.is_empty() {
        if writes.is_empty() {
            return Verdict::Holds;
        }
        return Verdict::Inconclusive {
            reason: "the run has no lock servers, so nothing defines who truly holds the lock"
                .to_string(),
        };
    }
    let truth = shared.truth();
    let sent = SentUnder::new(record);
    let acquisitions = PerNode::new(record, |o| matches!(o, Obs::LockAcquired { .. }));
    let mut violations = Vec::new();
    for i in writes {
        let o = &record.observations[i];
        let Obs::WriteAccepted { writer, .. } = o.obs else {
            unreachable!("filtered above")
        };
        let under = sent.of(record, i);
        let (lock, id) = under.hold(record);
        if truth
            .at(lock, o.t)
            .any(|h| h.holder == Some(writer) && h.is(&id))
        {
            continue;
        }
        let mut nodes: BTreeSet<NodeId> = [writer, o.node].into_iter().collect();
        if !shared.words {
            nodes.extend(truth.at(lock, o.t).filter_map(|h| h.holder));
            violations.push(Violation {
                invariant: "holder_writes_only",
                from: o.t,
                to: o.t,
                nodes: names(record, &nodes),
                summary: String::new(),
                evidence: Vec::new(),
                faults: Vec::new(),
            });
            continue;
        }
        let mut evidence = vec![obs_evidence(record, i)];
        evidence.extend(under.index().map(|j| obs_evidence(record, j)));
        let send = sent.send_of(record, i);
        evidence.extend(send.map(|s| obs_evidence(record, s)));
        if let Some(last) = truth.last_by(lock, writer, o.t) {
            let (started_by, ended_by) = shared.facts(last);
            evidence.extend(started_by.iter().map(|f| f.evidence(record)));
            evidence.extend(ended_by.iter().map(|f| f.evidence(record)));
        }
        let others: Vec<_> = truth.at(lock, o.t).collect();
        for h in &others {
            nodes.extend(h.holder);
            let (started_by, _) = shared.facts(h);
            evidence.extend(started_by.iter().map(|f| f.evidence(record)));
        }
        let lock_name = lock.unwrap_or("any lock");
        let truly = if others.is_empty() {
            format!("nobody truly held {lock_name}")
        } else {
            let held: Vec<String> = others
                .iter()
                .map(|h| {
                    let who = h
                        .holder
                        .map_or("an unknown client".to_string(), |n| record.name(n));
                    format!("{who} truly held {} ({})", h.lock, h.what())
                })
                .collect();
            held.join(" and ")
        };
        // Say which hold the write was sent under when it is not the writer's latest.
        let latest = acquisitions.before(writer, i);
        let what = match (under, send) {
            (Start::Acquired(j), Some(s)) if latest != Some(j) => format!(
                "a write {} sent at {} under its hold acquired at {}",
                record.name(writer),
                record.observations[s].t,
                record.observations[j].t
            ),
            _ => format!("a write from {}", record.name(writer)),
        };
        let summary = format!("{} accepted {what} while {truly}", record.name(o.node));
        let mut relevant = nodes.clone();
        relevant.extend(servers_of(record, lock));
        violations.push(Violation {
            invariant: "holder_writes_only",
            from: o.t,
            to: o.t,
            nodes: names(record, &nodes),
            summary,
            evidence: tidy(evidence),
            faults: describe_faults(record, &relevant, o.t),
        });
    }
    Verdict::from_violations(violations)
}

/// `validity_within_truth`: a holder's believed end of validity, converted to true time
/// through its own monotonic clock, is never later than the true end of its hold on the
/// servers (`Truth`: the lease grant's end; for a Redis lock, the instant its value stops
/// being live on a majority of the lock's instances). Catches a client that measures validity
/// from the wrong timestamp even when no second client acquires inside the gap.
///
/// Per belief (`LockAcquired` until `LockReleased` / `LockLost` / crash): the believed end is
/// the latest `valid_until_local` of the acquisition and of the client's `LockRenewed` for
/// the lock during the belief, each converted with
/// [`WallClocks::true_time_of_mono`](crate::WallClocks::true_time_of_mono) from the instant it
/// was observed, or later where the client said its belief outlasts that deadline
/// (`LockBeliefPastDeadline`: a grace's `until_local`, converted the same way; a belief with
/// no deadline, `until_local: None`, ends only with the belief itself, so it is judged to the
/// belief's end against the truth's). The true end is the end of the client's hold with the acquisition's token or
/// value that contains the acquisition instant (the acquisition instant itself if there is
/// none). A violation is the window from the true end to the believed end, cut at the end of
/// the belief: a client that releases before its hold ends never violates.
pub fn validity_within_truth(record: &RunRecord) -> Verdict {
    validity_within_truth_in(&Shared::new(record))
}

/// [`validity_within_truth`] with the clocks and truth shared with the other invariants of a
/// check.
pub(crate) fn validity_within_truth_in(shared: &Shared) -> Verdict {
    let record = shared.record;
    let beliefs = lock_beliefs(record);
    if beliefs.is_empty() {
        return Verdict::Holds;
    }
    if record.nodes_where(Role::is_lock_server).is_empty() {
        return Verdict::Inconclusive {
            reason: "the run has no lock servers, so nothing defines when a hold truly ends"
                .to_string(),
        };
    }
    let clocks = shared.clocks();
    let truth = shared.truth();
    let mut violations = Vec::new();
    for b in &beliefs {
        let acq = &record.observations[b.start];
        let Obs::LockAcquired {
            token,
            value,
            valid_until_local,
            ..
        } = &acq.obs
        else {
            continue;
        };
        let id = HoldId {
            token: *token,
            value: Some(value.clone()),
        };
        let believed_at = |i: usize, local: u64| {
            clocks.true_time_of_mono(b.node, record.observations[i].t, local)
        };
        let mut believed = (believed_at(b.start, valid_until_local.0), b.start);
        for (i, o) in record
            .observations
            .iter_indexed()
            .skip_while(|(i, _)| *i <= b.start)
        {
            if o.t >= b.to {
                break;
            }
            if o.node != b.node {
                continue;
            }
            match &o.obs {
                Obs::LockRenewed {
                    lock,
                    valid_until_local,
                    ..
                } if *lock == b.key => {
                    believed = believed.max((believed_at(i, valid_until_local.0), i));
                }
                Obs::LockBeliefPastDeadline {
                    lock, until_local, ..
                } if *lock == b.key => {
                    let until = until_local.map_or(b.to, |u| believed_at(i, u.0));
                    believed = believed.max((until, i));
                }
                _ => {}
            }
        }
        let hold = truth
            .all()
            .filter(|h| *h.lock == *b.key && h.holder == Some(b.node) && h.is(&id))
            .find(|h| h.from <= b.from && b.from < h.to);
        let true_end = hold.map_or(b.from, |h| h.to);
        let until = believed.0.min(b.to);
        if true_end >= until {
            continue;
        }
        let mut nodes: BTreeSet<NodeId> = [b.node].into_iter().collect();
        let mut evidence = vec![obs_evidence(record, b.start)];
        if believed.1 != b.start {
            evidence.push(obs_evidence(record, believed.1));
        }
        if let Some(h) = hold {
            let (started_by, ended_by) = shared.facts(h);
            evidence.extend(started_by.iter().map(|f| f.evidence(record)));
            evidence.extend(ended_by.iter().map(|f| f.evidence(record)));
        }
        let truly = match hold {
            Some(h) => format!("its hold ({}) truly ended at {true_end}", h.what()),
            None => "the servers never truly held it for it".to_string(),
        };
        let open = matches!(
            record.observations[believed.1].obs,
            Obs::LockBeliefPastDeadline {
                until_local: None,
                ..
            }
        );
        let summary = if open {
            format!(
                "{} believed it held {} with no deadline until {until} (true time) but {truly}",
                record.name(b.node),
                b.key,
            )
        } else {
            format!(
                "{} believed {} valid until {} (true time) but {truly}",
                record.name(b.node),
                b.key,
                believed.0
            )
        };
        let mut relevant = nodes.clone();
        relevant.extend(servers_of(record, Some(&b.key)));
        nodes.extend(hold.and_then(|h| h.holder));
        violations.push(Violation {
            invariant: "validity_within_truth",
            from: true_end,
            to: until,
            nodes: names(record, &nodes),
            summary,
            evidence: tidy(evidence),
            faults: describe_faults(record, &relevant, until),
        });
    }
    violations.sort_by_key(|v| (v.from, v.to));
    Verdict::from_violations(violations)
}

#[cfg(test)]
mod tests {
    use crate::testkit::*;
    use crate::verdict::Verdict;
    use splitbrain_engine::{Fault, LocalTime, SimTime, WallTime};
    use splitbrain_protocols::Obs;

    fn acquired(lock: &str, token: Option<u64>, value: &str) -> Obs {
        Obs::LockAcquired {
            thread: None,
            lock: lock.to_string(),
            token,
            value: value.to_string(),
            valid_until_local: LocalTime(0),
        }
    }
    fn released(lock: &str) -> Obs {
        Obs::LockReleased {
            thread: None,
            lock: lock.to_string(),
        }
    }
    fn lost(lock: &str) -> Obs {
        Obs::LockLost {
            thread: None,
            lock: lock.to_string(),
            reason: "deadline passed".to_string(),
        }
    }
    fn accepted(writer: u32, token: Option<u64>) -> Obs {
        Obs::WriteAccepted {
            writer: id(writer),
            req: 0,
            token,
            job: None,
            applied: true,
        }
    }
    /// `b` built with 600 values set and deleted at key `filler` on instance `node` from
    /// `from_ms` on: more keys set than the truth makes in one batch, so the checkers' truth
    /// keeps no facts and a verdict finds those it cites in a truth built with them.
    fn with_filler(mut b: Builder, node: u32, from_ms: u64) -> crate::run::RunRecord {
        for i in 0..600 {
            let key = "filler".to_string();
            b = b
                .obs(ms(from_ms + 2 * i), node, set(&key, &format!("f{i}"), None))
                .obs(ms(from_ms + 2 * i + 1), node, Obs::RedisKeyDeleted { key });
        }
        let r = b.build();
        let shared = crate::invariants::Shared::new(&r);
        assert!(!shared.truth().keeps_facts(), "a truth without facts");
        r
    }
    fn wall_s(s: i64) -> Option<WallTime> {
        Some(WallTime(s * 1_000_000_000))
    }
    fn set(key: &str, value: &str, deadline: Option<WallTime>) -> Obs {
        Obs::RedisKeySet {
            key: key.to_string(),
            value: value.to_string(),
            deadline_wall: deadline,
        }
    }

    mod exclusive_holders {
        use super::*;
        use crate::invariants::locks::{beliefs_may_overlap, exclusive_holders};

        /// The one-pass test finds an overlap exactly where the beliefs overlap: 2,000
        /// pseudo-random runs of three clients and two locks over six instants (many steps at
        /// one instant: a release and an acquisition, an acquisition and its release, a crash
        /// among them), and the table's instants.
        #[test]
        fn the_one_pass_test_agrees_with_the_beliefs() {
            let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
            let mut next = |n: u64| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (x >> 33) % n
            };
            let (mut overlapping, mut apart) = (0, 0);
            for _ in 0..2_000 {
                let mut b = Builder::new(&[
                    ("redis", RedisInstance),
                    ("c1", Worker),
                    ("c2", Worker),
                    ("c3", Worker),
                ])
                .end(ms(10));
                for _ in 0..next(9) {
                    let (t, node) = (ms(next(6)), 1 + next(3) as u32);
                    let lock = ["a", "b"][next(2) as usize];
                    b = match next(7) {
                        0..=2 => b.obs(t, node, acquired(lock, None, "v")),
                        3 | 4 => b.obs(t, node, released(lock)),
                        5 => b.obs(t, node, lost(lock)),
                        _ => b.fault(t, crash(node)),
                    };
                }
                let r = b.build();
                let violated = exclusive_holders(&r) != Verdict::Holds;
                let full = {
                    let beliefs = crate::timeline::lock_beliefs(&r);
                    beliefs.iter().enumerate().any(|(i, p)| {
                        beliefs[i + 1..]
                            .iter()
                            .any(|q| p.key == q.key && p.from.max(q.from) < p.to.min(q.to))
                    })
                };
                assert_eq!(beliefs_may_overlap(&r), full, "{:?}", r.observations);
                assert_eq!(violated, full);
                if full {
                    overlapping += 1;
                } else {
                    apart += 1;
                }
            }
            assert!(
                overlapping > 200 && apart > 200,
                "{overlapping} and {apart}"
            );
        }

        fn lease_run() -> Builder {
            Builder::new(&[
                ("locks", LeaseService),
                ("storage", Storage),
                ("client-1", Worker),
                ("client-2", Worker),
            ])
        }

        #[test]
        fn a_gc_paused_holder_keeps_believing() {
            // The classic: client-1 acquires at 1 s, is paused 5 s..45 s, its lease expires
            // at the service, client-2 acquires at 16 s; client-1 notices only at 45 s.
            let r = lease_run()
                .obs(ms(1_000), 2, acquired("lease", Some(33), "1"))
                .fault(ms(5_000), pause(2, 40_000))
                .obs(ms(16_000), 3, acquired("lease", Some(34), "2"))
                .obs(ms(45_000), 2, lost("lease"))
                .obs(ms(50_000), 3, released("lease"))
                .end(ms(60_000))
                .build();
            let v = violations(exclusive_holders(&r));
            assert_eq!(v.len(), 1);
            assert_eq!((v[0].from, v[0].to), (ms(16_000), ms(45_000)));
            assert_eq!(v[0].nodes, vec!["client-1", "client-2"]);
            assert_eq!(
                v[0].summary,
                "client-1 and client-2 both believe they hold lease"
            );
            assert_eq!(
                texts(&v[0].evidence),
                vec![
                    "1.000 s client-1: acquired lease (token 33, value 1)",
                    "16.000 s client-2: acquired lease (token 34, value 2)",
                    "45.000 s client-1: lost lease: deadline passed",
                ]
            );
            assert_eq!(v[0].faults, vec!["client-1 was paused 5.000 s to 45.000 s"]);
        }

        #[test]
        fn different_locks_and_crashes_do_not_overlap() {
            let r = lease_run()
                .obs(ms(1_000), 2, acquired("a", None, "1"))
                .obs(ms(2_000), 3, acquired("b", None, "2"))
                .fault(ms(3_000), crash(2))
                .obs(ms(4_000), 3, acquired("a", None, "2"))
                .end(ms(10_000))
                .build();
            assert_eq!(exclusive_holders(&r), Verdict::Holds);
        }

        #[test]
        fn an_overlap_open_at_the_end_runs_to_the_end() {
            let r = lease_run()
                .obs(ms(1_000), 2, acquired("a", None, "1"))
                .obs(ms(2_000), 3, acquired("a", None, "2"))
                .end(ms(10_000))
                .build();
            let v = violations(exclusive_holders(&r));
            assert_eq!((v[0].from, v[0].to), (ms(2_000), ms(10_000)));
        }
    }

    mod holder_writes_only {
        use super::*;
        use crate::invariants::locks::holder_writes_only;
        use crate::{Truth, WallClocks};

        fn granted(holder: u32, token: u64) -> Obs {
            Obs::LeaseGranted {
                lease: "lease".to_string(),
                holder: id(holder),
                token,
                ttl_ns: 10_000_000_000,
            }
        }
        fn freed(holder: u32, token: u64) -> Obs {
            Obs::LeaseFreed {
                lease: "lease".to_string(),
                holder: id(holder),
                token,
                expired: true,
            }
        }

        fn lease_run() -> Builder {
            Builder::new(&[
                ("locks", LeaseService),
                ("storage", Storage),
                ("client-1", Worker),
                ("client-2", Worker),
            ])
            .obs(ms(1_000), 0, granted(2, 33))
            .obs(ms(1_001), 2, acquired("lease", Some(33), "33"))
            .fault(ms(5_000), pause(2, 40_000))
            .obs(ms(11_000), 0, freed(2, 33))
            .obs(ms(16_000), 0, granted(3, 34))
            .obs(ms(16_001), 3, acquired("lease", Some(34), "34"))
            .end(ms(60_000))
        }

        #[test]
        fn writes_inside_the_grant_hold() {
            let r = lease_run()
                .obs(ms(3_000), 1, accepted(2, Some(33)))
                .obs(ms(18_000), 1, accepted(3, Some(34)))
                .build();
            assert_eq!(holder_writes_only(&r), Verdict::Holds);
        }

        #[test]
        fn a_stale_write_before_the_new_holder_writes_passes_fencing_but_fails_here() {
            // client-1 wakes at 45 s and writes with token 33; client-2 has not written yet,
            // so fencing would accept it; the truth says client-2 holds the lease.
            let r = lease_run()
                .obs(ms(45_002), 1, accepted(2, Some(33)))
                .obs(ms(46_000), 1, accepted(3, Some(34)))
                .build();
            let v = violations(holder_writes_only(&r));
            assert_eq!(v.len(), 1);
            assert_eq!((v[0].from, v[0].to), (ms(45_002), ms(45_002)));
            assert_eq!(v[0].nodes, vec!["client-1", "client-2", "storage"]);
            assert_eq!(
                v[0].summary,
                "storage accepted a write from client-1 while client-2 truly held lease \
                 (lease grant with token 34)"
            );
            assert_eq!(
                texts(&v[0].evidence),
                vec![
                    "1.000 s locks: granted lease to client-1 (token 33)",
                    "1.001 s client-1: acquired lease (token 33, value 33)",
                    "11.000 s locks: lease of client-1 (token 33) expired",
                    "16.000 s locks: granted lease to client-2 (token 34)",
                    "45.002 s storage: accepted a write from client-1 (token 33)",
                ]
            );
            assert_eq!(v[0].faults, vec!["client-1 was paused 5.000 s to 45.000 s"]);
        }

        #[test]
        fn a_service_crash_ends_every_grant() {
            let r = lease_run()
                .fault(ms(2_000), crash(0))
                .obs(ms(3_000), 1, accepted(2, Some(33)))
                .build();
            let v = violations(holder_writes_only(&r));
            assert_eq!(
                v[0].summary,
                "storage accepted a write from client-1 while nobody truly held lease"
            );
            assert!(texts(&v[0].evidence).contains(&"2.000 s locks: crashed".to_string()));
        }

        /// Three Redis instances; client-1 SETs on redis-a and redis-c at 1 s (2 of 3, a
        /// majority) with deadline wall 11 s. redis-c's wall clock steps +20 s at 3 s, so
        /// its key expires at exactly 3 s: client-1 is down to 1 of 3. client-2 SETs on
        /// redis-b and redis-c at 4 s and acquires. client-1 writes at 5 s.
        fn redlock_run() -> Builder {
            Builder::new(&[
                ("redis-a", RedisInstance),
                ("redis-b", RedisInstance),
                ("redis-c", RedisInstance),
                ("storage", Storage),
                ("client-1", Worker),
                ("client-2", Worker),
            ])
            .obs(ms(1_000), 0, set("lock", "v1", wall_s(11)))
            .obs(ms(1_000), 2, set("lock", "v1", wall_s(11)))
            .obs(ms(1_010), 4, acquired("lock", None, "v1"))
            .fault(
                ms(3_000),
                Fault::ClockStep {
                    node: id(2),
                    delta_ns: 20_000_000_000,
                },
            )
            .obs(ms(4_000), 1, set("lock", "v2", wall_s(14)))
            .obs(ms(4_000), 2, set("lock", "v2", wall_s(34)))
            .obs(ms(4_010), 5, acquired("lock", None, "v2"))
            .end(ms(20_000))
        }

        #[test]
        fn redis_truth_is_a_majority_and_a_clock_step_expires_a_key_early() {
            let r = redlock_run().build();
            let truth = Truth::new(&r, &WallClocks::new(&r));
            let spans: Vec<(Option<u32>, SimTime, SimTime)> = truth
                .holds
                .iter()
                .map(|h| (h.holder.map(|n| n.0), h.from, h.to))
                .collect();
            // client-1: 1 s until redis-c's key expires at exactly 3 s (wall 23 s >= 11 s).
            // client-2: from 4 s until redis-b's key expires at 14 s (redis-b's wall = true).
            assert_eq!(
                spans,
                vec![
                    (Some(4), ms(1_000), ms(3_000)),
                    (Some(5), ms(4_000), ms(14_000))
                ]
            );
            assert_eq!(
                fact_texts(&r, &truth.holds[0].ended_by),
                vec!["3.000 s redis-c: key lock (value v1) expired: wall clock 1970-01-01T00:00:23.000Z >= deadline 1970-01-01T00:00:11.000Z"]
            );
        }

        #[test]
        fn redlock_clock_step_lets_the_old_holder_write_without_the_lock() {
            let r = redlock_run()
                .obs(ms(2_000), 3, accepted(4, None))
                .obs(ms(5_000), 3, accepted(4, None))
                .obs(ms(6_000), 3, accepted(5, None))
                .build();
            let v = violations(holder_writes_only(&r));
            assert_eq!(v.len(), 1, "{v:#?}");
            assert_eq!((v[0].from, v[0].to), (ms(5_000), ms(5_000)));
            assert_eq!(v[0].nodes, vec!["client-1", "client-2", "storage"]);
            assert_eq!(
                v[0].summary,
                "storage accepted a write from client-1 while client-2 truly held lock \
                 (value v2 on a majority (2 of 3) of Redis instances)"
            );
            assert_eq!(
                texts(&v[0].evidence),
                vec![
                    "1.000 s redis-a: SET lock = v1 until wall 1970-01-01T00:00:11.000Z",
                    "1.000 s redis-c: SET lock = v1 until wall 1970-01-01T00:00:11.000Z",
                    "1.010 s client-1: acquired lock (value v1)",
                    "3.000 s redis-c: key lock (value v1) expired: wall clock 1970-01-01T00:00:23.000Z >= deadline 1970-01-01T00:00:11.000Z",
                    "4.000 s redis-b: SET lock = v2 until wall 1970-01-01T00:00:14.000Z",
                    "4.000 s redis-c: SET lock = v2 until wall 1970-01-01T00:00:34.000Z",
                    "5.000 s storage: accepted a write from client-1",
                ]
            );
            assert_eq!(
                v[0].faults,
                vec!["redis-c's wall clock stepped +20 s at 3.000 s"]
            );
        }

        /// A long run's truth keeps no facts; the violation cites them all the
        /// same, in the same words.
        #[test]
        fn a_long_run_cites_the_facts_its_truth_did_not_keep() {
            let run = || {
                redlock_run()
                    .obs(ms(2_000), 3, accepted(4, None))
                    .obs(ms(5_000), 3, accepted(4, None))
                    .obs(ms(6_000), 3, accepted(5, None))
            };
            let short = holder_writes_only(&run().build());
            assert_eq!(violations(short.clone())[0].evidence.len(), 7);
            assert_eq!(holder_writes_only(&with_filler(run(), 0, 7_000)), short);
        }

        #[test]
        fn expiry_boundary_wall_equal_to_deadline_is_expired() {
            // Single instance, deadline wall 5 s, wall offset +1 s: wall(4 s) = 5 s.
            let base = || {
                Builder::new(&[
                    ("redis", RedisInstance),
                    ("storage", Storage),
                    ("c", Worker),
                ])
                .clock(
                    0,
                    splitbrain_engine::ClockConfig {
                        drift_ppm: 0,
                        wall_offset_ns: 1_000_000_000,
                        ..splitbrain_engine::ClockConfig::default()
                    },
                )
                .obs(ms(0), 0, set("k", "x", wall_s(5)))
                .obs(ms(1), 2, acquired("k", None, "x"))
                .end(ms(10_000))
            };
            let r = base()
                .obs(SimTime(3_999_999_999), 1, accepted(2, None))
                .build();
            assert_eq!(holder_writes_only(&r), Verdict::Holds);
            let r = base().obs(ms(4_000), 1, accepted(2, None)).build();
            assert_eq!(violations(holder_writes_only(&r)).len(), 1);
        }

        #[test]
        fn drift_and_restart_are_replayed() {
            // One instance at +1_000_000 ppm from 1 s (double speed): deadline wall 5 s is
            // reached at true 3 s. Then it crashes (key lost) and restarts with the key (AOF)
            // and a new deadline, so the key holds again.
            let r = Builder::new(&[
                ("redis", RedisInstance),
                ("storage", Storage),
                ("c", Worker),
            ])
            .obs(ms(0), 0, set("k", "x", wall_s(5)))
            .obs(ms(1), 2, acquired("k", None, "x"))
            .fault(
                ms(1_000),
                Fault::SetDrift {
                    node: id(0),
                    drift_ppm: 1_000_000,
                },
            )
            .fault(ms(4_000), crash(0))
            .fault(ms(5_000), restart(0))
            .obs(
                ms(5_000),
                0,
                Obs::RedisRestarted {
                    keys: vec![("k".to_string(), "x".to_string(), wall_s(100))],
                },
            )
            .end(ms(10_000))
            .build();
            let truth = Truth::new(&r, &WallClocks::new(&r));
            let spans: Vec<(SimTime, SimTime)> =
                truth.holds.iter().map(|h| (h.from, h.to)).collect();
            assert_eq!(spans, vec![(ms(0), ms(3_000)), (ms(5_000), ms(10_000))]);
        }

        /// A write from a client that never acquired is judged against every hold: someone
        /// else's hold does not cover it.
        #[test]
        fn a_writer_that_never_acquired_holds_nothing() {
            let r = Builder::new(&[
                ("locks", LeaseService),
                ("storage", Storage),
                ("client-1", Worker),
                ("intruder", Worker),
            ])
            .obs(ms(1_000), 0, granted(2, 33))
            .obs(ms(1_001), 2, acquired("lease", Some(33), "33"))
            .obs(ms(2_000), 1, accepted(3, None))
            .end(ms(10_000))
            .build();
            let v = violations(holder_writes_only(&r));
            assert_eq!(
                v[0].summary,
                "storage accepted a write from intruder while client-1 truly held lease \
                 (lease grant with token 33)"
            );
        }

        /// Writes judged by the hold they were sent under, with leases: the summary names the hold a write was sent under
        /// only when it is not the writer's latest. client-1 sends request 1 under token 1
        /// and request 2 under token 3; request 1 lands under token 3 (the old hold ended),
        /// request 2 after token 3 was freed.
        #[test]
        fn the_summary_names_an_old_hold_a_write_was_sent_under() {
            let sent = |req| Obs::WriteSent {
                thread: None,
                req,
                token: None,
                job: None,
            };
            let landed = |req, token| Obs::WriteAccepted {
                writer: id(2),
                req,
                token: Some(token),
                job: None,
                applied: true,
            };
            let r = Builder::new(&[
                ("locks", LeaseService),
                ("storage", Storage),
                ("client-1", Worker),
                ("client-2", Worker),
            ])
            .obs(ms(1_000), 0, granted(2, 1))
            .obs(ms(1_001), 2, acquired("lease", Some(1), "1"))
            .obs(ms(1_003), 2, sent(1))
            .obs(ms(4_000), 0, freed(2, 1))
            .obs(ms(4_500), 0, granted(3, 2))
            .obs(ms(5_000), 0, freed(3, 2))
            .obs(ms(5_500), 0, granted(2, 3))
            .obs(ms(5_501), 2, acquired("lease", Some(3), "3"))
            .obs(ms(5_502), 2, sent(2))
            .obs(ms(6_000), 1, landed(1, 1))
            .obs(ms(7_000), 0, freed(2, 3))
            .obs(ms(7_500), 1, landed(2, 3))
            .end(ms(10_000))
            .build();
            let v = violations(holder_writes_only(&r));
            let got: Vec<&str> = v.iter().map(|v| v.summary.as_str()).collect();
            assert_eq!(
                got,
                vec![
                    "storage accepted a write client-1 sent at 1.003 s under its hold \
                     acquired at 1.001 s while client-1 truly held lease (lease grant with \
                     token 3)",
                    "storage accepted a write from client-1 while nobody truly held lease",
                ]
            );
        }

        #[test]
        fn no_lock_servers_is_inconclusive() {
            let r = Builder::new(&[("storage", Storage), ("c", Worker)])
                .obs(ms(1), 0, accepted(1, None))
                .end(ms(10))
                .build();
            assert_eq!(
                holder_writes_only(&r).outcome(),
                crate::verdict::Outcome::Inconclusive
            );
        }
    }

    mod validity_within_truth {
        use super::*;
        use crate::invariants::locks::validity_within_truth;

        /// One Redis instance; client c SETs at 1 s with a 10 s TTL (deadline wall 11.001 s)
        /// and acquires at `acq_ms`, believing itself valid until local `valid_ms`; it loses
        /// the lock at 20 s.
        fn redis_run(acq_ms: u64, valid_ms: u64) -> crate::run::RunRecord {
            redis_builder(acq_ms, valid_ms).build()
        }
        fn redis_builder(acq_ms: u64, valid_ms: u64) -> Builder {
            Builder::new(&[("redis", RedisInstance), ("c", Worker)])
                .obs(ms(1_000), 0, set("k", "x", Some(WallTime(11_001_000_000))))
                .obs(
                    ms(acq_ms),
                    1,
                    Obs::LockAcquired {
                        thread: None,
                        lock: "k".to_string(),
                        token: None,
                        value: "x".to_string(),
                        valid_until_local: LocalTime(valid_ms * 1_000_000),
                    },
                )
                .obs(ms(20_000), 1, lost("k"))
                .end(ms(30_000))
        }

        #[test]
        fn validity_measured_from_before_the_request_holds() {
            // Start before the SET (0.999 s) + 10 s TTL - 10 ms drift margin.
            let r = redis_run(1_002, 10_989);
            assert_eq!(validity_within_truth(&r), Verdict::Holds);
        }

        #[test]
        fn validity_measured_from_after_slow_replies_is_violated() {
            // Start taken after the replies (3 s): believed valid until 12.990 s, but the key
            // expires at 11.001 s; no second client is needed to see it.
            let r = redis_run(3_000, 12_990);
            let v = violations(validity_within_truth(&r));
            assert_eq!(v.len(), 1);
            assert_eq!((v[0].from, v[0].to), (ms(11_001), ms(12_990)));
            assert_eq!(
                v[0].summary,
                "c believed k valid until 12.990 s (true time) but its hold (value x on a \
                 majority (1 of 1) of Redis instances) truly ended at 11.001 s"
            );
        }

        /// A long run's truth keeps no facts; the violation cites them all the
        /// same, in the same words (here the key's expiry).
        #[test]
        fn a_long_run_cites_the_facts_its_truth_did_not_keep() {
            let short = validity_within_truth(&redis_run(3_000, 12_990));
            let ev = &violations(short.clone())[0].evidence;
            assert!(ev.iter().any(|e| e.text.contains("expired")), "{ev:?}");
            let long = with_filler(redis_builder(3_000, 12_990), 0, 21_000);
            assert_eq!(validity_within_truth(&long), short);
        }

        /// Renewals move the believed end; only the holder's renewals of this lock during
        /// the belief count. client-1 holds lease `lease` (token 1) 1 s..13 s at the
        /// service (and before that 0.2 s..1 s, and lease `other` with token 1 from 0.5 s),
        /// acquires at 1 s believing it valid until local 11 s, and loses it at 20 s.
        #[test]
        fn renewals_table() {
            let lease = |lease: &str, token: u64| Obs::LeaseGranted {
                lease: lease.to_string(),
                holder: id(1),
                token,
                ttl_ns: 10_000_000_000,
            };
            let renewed = |lock: &str, until_ms: u64| Obs::LockRenewed {
                thread: None,
                lock: lock.to_string(),
                token: Some(1),
                valid_until_local: LocalTime(until_ms * 1_000_000),
            };
            let base = || {
                Builder::new(&[("locks", LeaseService), ("c1", Worker), ("c2", Worker)])
                    .obs(ms(200), 0, lease("lease", 1))
                    .obs(ms(500), 0, lease("other", 1))
                    .obs(ms(1_000), 0, lease("lease", 1))
                    .obs(
                        ms(1_000),
                        1,
                        Obs::LockAcquired {
                            thread: None,
                            lock: "lease".to_string(),
                            token: Some(1),
                            value: "1".to_string(),
                            valid_until_local: LocalTime(11_000_000_000),
                        },
                    )
                    .obs(
                        ms(13_000),
                        0,
                        Obs::LeaseFreed {
                            lease: "lease".to_string(),
                            holder: id(1),
                            token: 1,
                            expired: true,
                        },
                    )
                    .obs(ms(20_000), 1, lost("lease"))
                    .end(ms(30_000))
            };
            type Case = (
                &'static str,
                Vec<(u64, u32, Obs)>,
                Option<(u64, u64, usize)>,
            );
            let cases: Vec<Case> = vec![
                ("no renewal", vec![], None),
                (
                    "renewed past the hold's end",
                    vec![(5_000, 1, renewed("lease", 15_000))],
                    Some((13_000, 15_000, 4)),
                ),
                (
                    "a later, shorter renewal does not undo it",
                    vec![
                        (5_000, 1, renewed("lease", 15_000)),
                        (6_000, 1, renewed("lease", 12_000)),
                    ],
                    Some((13_000, 15_000, 4)),
                ),
                (
                    "renewed past the end of the belief: cut there",
                    vec![(5_000, 1, renewed("lease", 25_000))],
                    Some((13_000, 20_000, 4)),
                ),
                (
                    "another client's renewal",
                    vec![(5_000, 2, renewed("lease", 15_000))],
                    None,
                ),
                (
                    "a renewal of another lock",
                    vec![(5_000, 1, renewed("other", 15_000))],
                    None,
                ),
                (
                    "a renewal after the belief ended",
                    vec![(21_000, 1, renewed("lease", 25_000))],
                    None,
                ),
            ];
            for (what, extra, expect) in cases {
                let mut b = base();
                for (t, node, obs) in extra {
                    b = b.obs(ms(t), node, obs);
                }
                let got = match validity_within_truth(&b.build()) {
                    Verdict::Holds => None,
                    v => {
                        let v = violations(v);
                        assert_eq!(v.len(), 1, "{what}");
                        Some((
                            v[0].from.0 / 1_000_000,
                            v[0].to.0 / 1_000_000,
                            v[0].evidence.len(),
                        ))
                    }
                };
                assert_eq!(got, expect, "{what}");
            }
        }

        /// An acquisition the servers never backed: the believed validity is all violation.
        #[test]
        fn a_hold_the_servers_never_granted() {
            let r = Builder::new(&[("locks", LeaseService), ("c1", Worker)])
                .obs(
                    ms(0),
                    1,
                    Obs::LockAcquired {
                        thread: None,
                        lock: "lease".to_string(),
                        token: Some(5),
                        value: "5".to_string(),
                        valid_until_local: LocalTime(10_000_000_000),
                    },
                )
                .obs(ms(20_000), 1, lost("lease"))
                .end(ms(30_000))
                .build();
            let v = violations(validity_within_truth(&r));
            assert_eq!((v[0].from, v[0].to), (ms(0), ms(10_000)));
            assert_eq!(
                v[0].summary,
                "c1 believed lease valid until 10.000 s (true time) but the servers never \
                 truly held it for it"
            );
        }

        #[test]
        fn a_belief_ended_before_the_truth_is_fine_and_drift_converts_the_deadline() {
            // Released at 5 s: nothing believed after the hold.
            let r = Builder::new(&[("redis", RedisInstance), ("c", Worker)])
                .obs(ms(1_000), 0, set("k", "x", Some(WallTime(11_001_000_000))))
                .obs(ms(1_002), 1, acquired("k", None, "x"))
                .obs(ms(5_000), 1, released("k"))
                .end(ms(30_000))
                .build();
            assert_eq!(validity_within_truth(&r), Verdict::Holds);
            // A client clock running 10% slow: local 10.989 s is true 12.21 s.
            let r = Builder::new(&[("redis", RedisInstance), ("c", Worker)])
                .clock(
                    1,
                    splitbrain_engine::ClockConfig {
                        drift_ppm: -100_000,
                        wall_offset_ns: 0,
                        ..splitbrain_engine::ClockConfig::default()
                    },
                )
                .obs(ms(1_000), 0, set("k", "x", Some(WallTime(11_001_000_000))))
                .obs(
                    ms(1_002),
                    1,
                    Obs::LockAcquired {
                        thread: None,
                        lock: "k".to_string(),
                        token: None,
                        value: "x".to_string(),
                        valid_until_local: LocalTime(10_989_000_000),
                    },
                )
                .obs(ms(20_000), 1, lost("k"))
                .end(ms(30_000))
                .build();
            let v = violations(validity_within_truth(&r));
            assert_eq!((v[0].from, v[0].to), (ms(11_001), ms(12_210)));
        }
    }
}
