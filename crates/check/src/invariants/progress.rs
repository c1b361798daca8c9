//! `lock_progress`: liveness of the lock service.

use super::{names, Shared};
use crate::evidence::{Evidence, Source};
use crate::invariant::{Applies, Invariant, InvariantDef, ParamDef, Premise};
use crate::run::{Role, RunRecord};
use crate::timeline::{
    describe_faults, for_each_belief, obs_evidence, overlaps, Change, Liveness, Overlap,
};
use crate::verdict::{Verdict, Violation};
use splitbrain_engine::{NodeId, SimDuration, SimTime};
use splitbrain_protocols::Obs;
use std::collections::{BTreeMap, BTreeSet};

/// Default `window` of `lock_progress`: 10 s.
pub const DEFAULT_WINDOW: SimDuration = SimDuration::from_secs(10);

/// `lock_progress`: [`lock_progress`].
pub const LOCK_PROGRESS: InvariantDef = InvariantDef {
    name: "lock_progress",
    params: &[ParamDef {
        name: "window",
        default: DEFAULT_WINDOW,
        doc: "the longest owed time allowed between acquisitions",
    }],
    definition: "While a majority of lock servers is up, no more than `window` of owed time \
                 passes between acquisitions. Lock servers are the lease services, Redis \
                 instances and Raft replicas; up or down by crash and restart only (a partition \
                 or a pause takes no server down). Time is owed while some client waits for a \
                 lock (from its request until its acquisition or crash) and nobody validly \
                 holds that lock by the truth; an acquisition or a renewal by any client is \
                 progress. Inconclusive if the run has no lock servers, or if no stretch with a \
                 majority up is longer than `window` (it could not show a stall).",
    premise: Premise::Custom {
        doc: "no client ever asked for a lock, or no lock was ever acquired or renewed",
        vacuous: vacuous_progress,
    },
    applies: Applies::LockClient,
    reads_holds: false,
    judge: |s, i| lock_progress_in(s, i.arg("window")),
};

/// Why a `holds` of `lock_progress` is vacuous: no client asked for a lock; or none was
/// acquired or renewed (progress is shown by acquisitions only), and it held only because
/// clients waited no longer than the window while a majority of lock servers was up, or no
/// majority-up stretch was longer than the window ([`unproven_progress`]).
fn vacuous_progress(record: &RunRecord, invariant: &Invariant) -> Option<String> {
    let any = |pred: &dyn Fn(&Obs) -> bool| record.observations.iter().any(|o| pred(&o.obs));
    if !any(&|o| matches!(o, Obs::LockRequested { .. })) {
        return Some("no client ever asked for a lock".to_string());
    }
    if any(&|o| matches!(o, Obs::LockAcquired { .. } | Obs::LockRenewed { .. })) {
        return None;
    }
    Some(
        unproven_progress(record, invariant.arg("window"))
            .unwrap_or_else(|| "no lock was acquired".to_string()),
    )
}

/// `lock_progress { window }` (docs/design.md, "Invariants"): "while a majority of lock
/// servers is up, no more than `window` of owed time passes between acquisitions". Lock
/// servers are the run's nodes whose role [`Role::is_lock_server`] (lease services, Redis
/// instances, Raft replicas; one lease service is 1 of 1); up/down comes
/// from `Crash` / `Restart` faults only (pauses and partitions are not counted).
///
/// Only time that owes progress counts: time during which some client waits for a lock (from
/// its `LockRequested` until its `LockAcquired` or its crash; a failed attempt followed by a
/// retry is still waiting) while no live client holds that lock (the servers' truth,
/// `Truth`: a lease grant, a Redis value on a majority, held by a client that has not
/// crashed since the hold began). So an idle lock owes nothing, and a live holder that keeps
/// its lock to expiry is not a stall: the waiting client correctly waits out the TTL. A hold
/// whose holder crashed is no progress from the crash on: no live client can act on it,
/// whether it then expires after its TTL, a Raft leader change re-arms it, or the restarted
/// holder forgot it. Nor is a hold while its own holder waits for that lock (from its
/// `LockRequested`) with a wait that outlasts the hold: it cannot act on a hold it never
/// learns of, as a ZooKeeper client whose lost create reply left an orphan node it then waits
/// behind. (A holder that learns of its hold while it lasts, by a reply in flight or a
/// retried request, is progress from the hold's start. This is judged for runs with Raft
/// replicas, whose holds are keys a client's own request created.) Progress means a live client that wants the lock holds it or can get it. Within every true-time interval in which a majority is up, between its start, each
/// `LockAcquired` or `LockRenewed` (any client, any lock: a renewal re-acquires the lease, so
/// a leader that keeps its lease is progress) and its end (at most the end of the run), the
/// owed time must not exceed `window` (true ns). Reports the first longer gap. A run without
/// lock servers is `Inconclusive`; so is a run in which no majority-up span is longer than
/// `window` (no gap can owe more than its span, so such a run cannot show a stall, as a run
/// shorter than `settle` cannot show `eventual_leader`).
pub fn lock_progress(record: &RunRecord, window: SimDuration) -> Verdict {
    lock_progress_in(&Shared::new(record), window)
}

/// [`lock_progress`] with the truth shared with the other invariants of a check.
pub(crate) fn lock_progress_in(shared: &Shared, window: SimDuration) -> Verdict {
    let record = shared.record;
    let servers = record.nodes_where(Role::is_lock_server);
    if servers.is_empty() {
        return Verdict::Inconclusive {
            reason: "the run has no lock servers".to_string(),
        };
    }
    let majority = servers.len() / 2 + 1;
    let spans = majority_up(record, &servers);
    if let Some(reason) = too_short(record, &spans, majority, servers.len(), window) {
        return Verdict::Inconclusive { reason };
    }
    let owed = Reach::sorted(owed_time(shared));
    let acquisitions: Vec<(SimTime, usize)> = record
        .observations
        .iter_indexed()
        .filter(|(_, o)| matches!(o.obs, Obs::LockAcquired { .. } | Obs::LockRenewed { .. }))
        .map(|(i, o)| (o.t, i))
        .collect();
    for span in spans {
        // Gap boundaries: the span's start, each acquisition in it, the span's end.
        let mut prev: (SimTime, Option<usize>) = (span.from, None);
        let inside = acquisitions
            .iter()
            .filter(|(t, _)| span.from <= *t && *t < span.to)
            .map(|&(t, i)| (t, Some(i)));
        for next in inside.chain(std::iter::once((span.to, None))) {
            let pieces = clip(&owed, prev.0, next.0);
            let total = pieces.iter().fold(SimDuration::ZERO, |acc, p| {
                acc.saturating_add(p.to.saturating_since(p.from))
            });
            if total > window {
                let gap = Gap {
                    span_from: span.from,
                    prev,
                    next,
                    owed: total,
                    first_request: pieces.first().map(|p| p.request),
                };
                return Verdict::Violated(vec![violation(record, &servers, majority, window, gap)]);
            }
            prev = next;
        }
    }
    Verdict::Holds
}

/// The true-time spans in which a majority (`servers.len() / 2 + 1`) of `servers` is up, by
/// `Crash` / `Restart` faults, in time order.
fn majority_up(record: &RunRecord, servers: &[NodeId]) -> Vec<Overlap> {
    let live = Liveness::new(record);
    let end = record.end;
    let mut up: Vec<(SimTime, SimTime)> = Vec::new();
    for &s in servers {
        let mut from = SimTime::ZERO;
        for &(crash, restart, _) in live.down(s) {
            up.push((from, crash.min(end)));
            from = restart;
        }
        up.push((from, end));
    }
    overlaps(&up, servers.len() / 2 + 1)
}

/// Why `lock_progress` with `window` cannot be violated in `record`, in words, or `None` if
/// it can: a gap owes at most the length of its majority-up span, so a run whose every
/// majority-up span (`spans`, of `majority` of `n` lock servers up) is no longer than
/// `window` cannot show a stall.
fn too_short(
    record: &RunRecord,
    spans: &[Overlap],
    majority: usize,
    n: usize,
    window: SimDuration,
) -> Option<String> {
    let longest = spans
        .iter()
        .map(|s| s.to.saturating_since(s.from))
        .max()
        .unwrap_or(SimDuration::ZERO);
    if longest > window {
        return None;
    }
    let run = record.end.saturating_since(SimTime::ZERO);
    Some(if run <= window {
        format!(
            "the run ({run}) is no longer than the window ({window}): too short to show a stall"
        )
    } else if longest == SimDuration::ZERO {
        format!("a majority ({majority} of {n}) of lock servers was never up: no progress was owed")
    } else {
        format!(
            "a majority ({majority} of {n}) of lock servers was up for at most {longest} at a \
             stretch, no longer than the window ({window}): too short to show a stall"
        )
    })
}

/// Why `lock_progress` with `window` is vacuous or cannot be judged for `record`, in words,
/// given that it held: `None` without lock servers. Either the run cannot show a stall (see
/// [`lock_progress`]), or clients waited no longer than `window` in any stretch with a
/// majority of lock servers up. For the vacuity note of a `lock_progress` that held without
/// any acquisition ([`crate::vacuity::vacuous`]).
pub(crate) fn unproven_progress(record: &RunRecord, window: SimDuration) -> Option<String> {
    let servers = record.nodes_where(Role::is_lock_server);
    if servers.is_empty() {
        return None;
    }
    let (majority, n) = (servers.len() / 2 + 1, servers.len());
    let spans = majority_up(record, &servers);
    Some(
        too_short(record, &spans, majority, n, window).unwrap_or_else(|| {
            format!(
                "no lock was acquired, and no client waited longer than the window ({window}) \
                 while a majority ({majority} of {n}) of lock servers was up"
            )
        }),
    )
}

/// A stretch of owed time: some client waits for `lock` and nobody validly holds it.
#[derive(Clone, Copy, Debug)]
struct Owed {
    from: SimTime,
    to: SimTime,
    /// The `LockRequested` observation of one waiting client.
    request: usize,
}

/// Every stretch of owed time, per lock, sorted by start (stretches of different locks may
/// overlap; [`clip`] merges them).
fn owed_time<'r>(shared: &Shared<'r>) -> Vec<Owed> {
    let record = shared.record;
    // Nothing is owed where no client asks.
    let asks = record
        .observations
        .iter()
        .any(|o| matches!(o.obs, Obs::LockRequested { .. }));
    if !asks {
        return Vec::new();
    }
    // The truth first, then the waits, taken as they close. A hold counts only
    // while its holder lives: from the holder's crash on, nobody who can act holds it (a
    // Raft leader change may re-arm a crashed holder's lease, a restarted holder forgot its
    // grant), so a client waiting for it is owed progress.
    let mut crashes: BTreeMap<NodeId, Vec<SimTime>> = BTreeMap::new();
    for (t, f) in &record.faults {
        if let splitbrain_engine::Fault::Crash { node } = f {
            crashes.entry(*node).or_default().push(*t);
        }
    }
    // The waits, each with its client: a hold is no progress while its own holder waits for
    // the lock it holds and does not learn of it before it ends (a ZooKeeper client whose
    // create reply was lost and whose retried create waits behind the orphan node).
    let waits = |o: &'r Obs| match o {
        Obs::LockRequested { lock, .. } => Some(Change::Start(lock.as_str())),
        Obs::LockAcquired { lock, .. } => Some(Change::Stop(lock.as_str())),
        _ => None,
    };
    let mut own_waits: BTreeMap<(NodeId, &str), Vec<(SimTime, SimTime)>> = BTreeMap::new();
    // Judged for the Raft store's locks only (etcd keys, ZooKeeper nodes: a key the holder's
    // own request created, which it can only learn of from the reply); a Redis majority that
    // its client abandoned after a failed attempt stays progress, as it always was.
    let raft = !record.nodes_where(|r| r == Role::Raft).is_empty();
    for_each_belief(record, waits, |w| {
        if !raft {
            return;
        }
        own_waits
            .entry((w.node, w.key))
            .or_default()
            .push((w.from, w.to));
    });
    for spans in own_waits.values_mut() {
        spans.sort_unstable();
    }
    let mut held: BTreeMap<&str, Vec<(SimTime, SimTime)>> = BTreeMap::new();
    for (from, to, lock, holder) in shared.spans() {
        let crash = holder
            .and_then(|h| crashes.get(&h))
            .and_then(|ts| ts.iter().find(|&&t| from <= t && t < to));
        let to = crash.map_or(to, |&t| t);
        if from >= to {
            continue;
        }
        let spans = held.entry(lock).or_default();
        // Only a wait that outlasts the hold: a holder that learns of its hold while it lasts
        // (a reply in flight, a retried request answered from the log) is making progress.
        let blind: Vec<(SimTime, SimTime)> = holder
            .and_then(|h| own_waits.get(&(h, lock)))
            .map(|w| {
                w.iter()
                    .filter(|&&(wf, wt)| wf < to && wt >= to)
                    .copied()
                    .collect()
            })
            .unwrap_or_default();
        subtract(from, to, &blind, |a, b| spans.push((a, b)));
    }
    let held: BTreeMap<&str, Reach> = held
        .into_iter()
        .map(|(lock, spans)| (lock, Reach::new(spans)))
        .collect();
    let mut out = Vec::new();
    // The waits, each as it closes, not a list of them; lock names borrowed from the
    // observations, not a copy per wait.
    for_each_belief(record, waits, |w| {
        // The wait minus the lock's holds: walk the holds that can meet it, in start order,
        // with a cursor at the end of what is covered so far.
        let holds = held.get(w.key);
        uncovered(w.from, w.to, holds, |from, to| {
            out.push(Owed {
                from,
                to,
                request: w.start,
            })
        });
    });
    // A wait's stretches are disjoint and each wait has its own request, so `(from, to,
    // request)` tells any two apart: an unstable sort gives the stable sort's order without
    // its scratch list.
    out.sort_unstable_by_key(|o| (o.from, o.to, o.request));
    out
}

/// The pieces of `[from, to)` outside every span of `cut` (sorted by start), given to `push`.
fn subtract(
    from: SimTime,
    to: SimTime,
    cut: &[(SimTime, SimTime)],
    mut push: impl FnMut(SimTime, SimTime),
) {
    let mut cursor = from;
    for &(cf, ct) in cut {
        if ct <= cursor || cf >= to {
            continue;
        }
        if cf > cursor {
            push(cursor, cf);
        }
        cursor = cursor.max(ct);
        if cursor >= to {
            return;
        }
    }
    if cursor < to {
        push(cursor, to);
    }
}

/// The maximal pieces of `[from, to)` that no span of `holds` covers, in time order, given to
/// `push`. A hold of zero length inside the interval splits it there, as subtracting the
/// holds one at a time does.
fn uncovered(
    from: SimTime,
    to: SimTime,
    holds: Option<&Reach>,
    mut push: impl FnMut(SimTime, SimTime),
) {
    let mut cursor = from;
    for &(hf, ht) in holds.map_or(&[][..], |h| h.meeting(from, to)) {
        if ht <= cursor {
            continue;
        }
        if hf > cursor {
            push(cursor, hf);
        }
        cursor = ht;
        if cursor >= to {
            break;
        }
    }
    if cursor < to {
        push(cursor, to);
    }
}

/// Intervals sorted by start, with the latest end reached so far at each place, so that the
/// intervals that can meet a given interval are found by a binary search instead of a walk
/// from the first (a long run has thousands of holds and waits; the walk made `lock_progress`
/// quadratic in run length).
struct Reach<T = (SimTime, SimTime)> {
    items: Vec<T>,
    /// `reach[i]`: the largest end among `items[..=i]`.
    reach: Vec<SimTime>,
}

/// The start and end of an interval kept in a [`Reach`].
trait Span {
    fn span(&self) -> (SimTime, SimTime);
}

impl Span for (SimTime, SimTime) {
    fn span(&self) -> (SimTime, SimTime) {
        *self
    }
}

impl Span for Owed {
    fn span(&self) -> (SimTime, SimTime) {
        (self.from, self.to)
    }
}

impl<T: Span> Reach<T> {
    /// `items` must be sorted by start; the spans of holds are sorted here.
    fn sorted(items: Vec<T>) -> Self {
        let mut last = SimTime::ZERO;
        let reach = items
            .iter()
            .map(|i| {
                last = last.max(i.span().1);
                last
            })
            .collect();
        Reach { items, reach }
    }

    /// The items, in order, that may overlap `[from, to)`: those before the first whose
    /// prefix reaches past `from` all end at or before it, and those starting at or after
    /// `to` are left out. Items in between that do not overlap are the caller's to skip.
    fn meeting(&self, from: SimTime, to: SimTime) -> &[T] {
        let first = self.reach.partition_point(|&r| r <= from);
        let rest = &self.items[first..];
        &rest[..rest.partition_point(|i| i.span().0 < to)]
    }
}

impl Reach {
    fn new(mut spans: Vec<(SimTime, SimTime)>) -> Self {
        spans.sort_unstable();
        Reach::sorted(spans)
    }
}

/// The owed stretches within `[from, to)`, clipped and merged (no instant counted twice), in
/// time order; each keeps the request of the first stretch it contains.
fn clip(owed: &Reach<Owed>, from: SimTime, to: SimTime) -> Vec<Owed> {
    let mut out: Vec<Owed> = Vec::new();
    for o in owed.meeting(from, to) {
        let (a, b) = (o.from.max(from), o.to.min(to));
        if a >= b {
            continue;
        }
        match out.last_mut() {
            Some(last) if a <= last.to => last.to = last.to.max(b),
            _ => out.push(Owed {
                from: a,
                to: b,
                request: o.request,
            }),
        }
    }
    out
}

/// The first gap between progress points that owed more than the window.
struct Gap {
    span_from: SimTime,
    prev: (SimTime, Option<usize>),
    next: (SimTime, Option<usize>),
    owed: SimDuration,
    first_request: Option<usize>,
}

fn violation(
    record: &RunRecord,
    servers: &[NodeId],
    majority: usize,
    window: SimDuration,
    gap: Gap,
) -> Violation {
    let (from, to) = (gap.prev.0, gap.next.0);
    let mut evidence: Vec<Evidence> = Vec::new();
    match gap.prev.1 {
        Some(i) => evidence.push(obs_evidence(record, i)),
        None => evidence.push(Evidence {
            t: gap.span_from,
            node: "lock servers".to_string(),
            text: format!("a majority ({majority} of {}) is up", servers.len()),
            source: Source::Derived,
        }),
    }
    if let Some(i) = gap.first_request {
        evidence.push(obs_evidence(record, i));
    }
    if let Some(i) = gap.next.1 {
        evidence.push(obs_evidence(record, i));
    }
    let evidence = super::tidy(evidence);
    let server_set: BTreeSet<NodeId> = servers.iter().copied().collect();
    let mut relevant = server_set.clone();
    relevant.extend(record.nodes_where(|r| matches!(r, Role::Worker | Role::LeaseLeader)));
    Violation {
        invariant: "lock_progress",
        from,
        to,
        nodes: names(record, &server_set),
        summary: format!(
            "no lock acquired for {} while a majority ({majority} of {}) of lock servers was \
             up; clients waited {} of it with nobody holding the lock (window {window})",
            to.saturating_since(from),
            servers.len(),
            gap.owed,
        ),
        evidence,
        faults: describe_faults(record, &relevant, to),
    }
}

#[cfg(test)]
mod tests {
    use super::{clip, lock_progress, uncovered, Owed, Reach};
    use crate::testkit::*;
    use crate::verdict::{Outcome, Verdict};
    use splitbrain_engine::{LocalTime, SimDuration};
    use splitbrain_protocols::Obs;

    const WINDOW: SimDuration = SimDuration::from_secs(10);

    fn acquired() -> Obs {
        Obs::LockAcquired {
            thread: None,
            lock: "lock".to_string(),
            token: None,
            value: String::new(),
            valid_until_local: LocalTime(0),
        }
    }
    fn redis3() -> Builder {
        Builder::new(&[
            ("redis-a", RedisInstance),
            ("redis-b", RedisInstance),
            ("redis-c", RedisInstance),
            ("client-1", Worker),
            ("client-2", Worker),
        ])
        // client-2 waits for the lock the whole run and never gets it: every gap is owed.
        .obs(ms(0), 4, requested())
    }
    fn requested() -> Obs {
        Obs::LockRequested {
            thread: None,
            lock: "lock".to_string(),
            servers: vec![],
        }
    }

    /// A Raft-store lock node whose owner is itself still waiting for the lock (a ZooKeeper
    /// orphan node: the create was applied, its reply lost, and the retried create waits
    /// behind it) is no progress: the other waiter is owed the time.
    #[test]
    fn a_hold_whose_holder_still_waits_is_no_progress() {
        let created = Obs::RaftKeyCreated {
            lock: "/lock/__lock__0000000000".to_string(),
            holder: splitbrain_engine::NodeId(3),
            revision: 4,
            mutex: Some("lock".to_string()),
        };
        let r = Builder::new(&[
            ("zk-1", Raft),
            ("zk-2", Raft),
            ("zk-3", Raft),
            ("client-1", Worker),
            ("client-2", Worker),
        ])
        .obs(ms(1_000), 3, requested())
        .obs(ms(1_010), 0, created)
        .obs(ms(2_000), 4, requested())
        .end(ms(30_000))
        .build();
        let v = match lock_progress(&r, WINDOW) {
            Verdict::Violated(v) => v,
            other => panic!("{other:?}"),
        };
        assert_eq!((v[0].from, v[0].to), (ms(0), ms(30_000)));
        assert!(
            v[0].summary.contains("clients waited 29.000 s"),
            "{}",
            v[0].summary
        );
    }

    /// The other side of the orphan rule: a holder whose wait ends while its node still
    /// stands (its create's reply came late, it listed the children and found itself lowest)
    /// acted on the hold, so the whole hold is progress and the other waiter is owed nothing,
    /// however long the holder took to learn of it.
    #[test]
    fn a_hold_whose_holder_learns_of_it_while_it_lasts_is_progress() {
        let created = Obs::RaftKeyCreated {
            lock: "/lock/__lock__0000000000".to_string(),
            holder: splitbrain_engine::NodeId(3),
            revision: 4,
            mutex: Some("lock".to_string()),
        };
        let r = Builder::new(&[
            ("zk-1", Raft),
            ("zk-2", Raft),
            ("zk-3", Raft),
            ("client-1", Worker),
            ("client-2", Worker),
        ])
        .obs(ms(1_000), 3, requested())
        .obs(ms(1_005), 4, requested())
        .obs(ms(1_010), 0, created)
        .obs(ms(12_000), 3, acquired())
        .end(ms(20_000))
        .build();
        assert_eq!(lock_progress(&r, WINDOW), Verdict::Holds);
    }

    #[test]
    fn steady_acquisitions_hold() {
        let mut b = redis3();
        for s in 0..6 {
            b = b.obs(ms(1_000 + s * 9_000), 3, acquired());
        }
        let r = b.end(ms(50_000)).build();
        assert_eq!(lock_progress(&r, WINDOW), Verdict::Holds);
    }

    #[test]
    fn the_first_long_gap_is_reported() {
        let r = redis3()
            .obs(ms(1_000), 3, acquired())
            .obs(ms(5_000), 3, acquired())
            .obs(ms(20_000), 3, acquired())
            .fault(ms(30_000), crash(0))
            .end(ms(60_000))
            .build();
        let v = match lock_progress(&r, WINDOW) {
            Verdict::Violated(v) => v,
            other => panic!("{other:?}"),
        };
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].from, v[0].to), (ms(5_000), ms(20_000)));
        assert_eq!(
            v[0].summary,
            "no lock acquired for 15.000 s while a majority (2 of 3) of lock servers was up; \
             clients waited 15.000 s of it with nobody holding the lock (window 10.000 s)"
        );
        assert_eq!(v[0].nodes, vec!["redis-a", "redis-b", "redis-c"]);
        assert!(v[0].faults.is_empty());
    }

    #[test]
    fn a_crashed_majority_is_not_a_violation() {
        // Two of three instances are down 5 s..30 s: no majority, no obligation.
        let r = redis3()
            .obs(ms(1_000), 3, acquired())
            .obs(ms(4_000), 3, acquired())
            .fault(ms(5_000), crash(0))
            .fault(ms(5_000), crash(1))
            .fault(ms(30_000), restart(0))
            .obs(ms(31_000), 3, acquired())
            .obs(ms(39_000), 3, acquired())
            .fault(ms(45_000), restart(1))
            .end(ms(45_000))
            .build();
        assert_eq!(lock_progress(&r, WINDOW), Verdict::Holds);
        // One crash leaves a majority: the 4 s..31 s gap counts.
        let r = redis3()
            .obs(ms(1_000), 3, acquired())
            .obs(ms(4_000), 3, acquired())
            .fault(ms(5_000), crash(0))
            .obs(ms(31_000), 3, acquired())
            .end(ms(35_000))
            .build();
        let v = crate::testkit::violations(lock_progress(&r, WINDOW));
        assert_eq!((v[0].from, v[0].to), (ms(4_000), ms(31_000)));
        assert_eq!(v[0].faults, vec!["redis-a crashed at 5.000 s"]);
    }

    #[test]
    fn a_lease_service_is_one_of_one_and_the_run_end_closes_the_last_gap() {
        let lease = || {
            Builder::new(&[
                ("locks", LeaseService),
                ("client-1", Worker),
                ("client-2", Worker),
            ])
            .obs(ms(0), 2, requested())
            .obs(ms(1_000), 1, acquired())
        };
        let r = lease()
            .fault(ms(2_000), crash(0))
            .fault(ms(40_000), restart(0))
            .obs(ms(41_000), 1, acquired())
            .end(ms(50_000))
            .build();
        // Up 0..2 s and 40..50 s: no stretch longer than the window, so nothing to show.
        assert_eq!(lock_progress(&r, WINDOW).outcome(), Outcome::Inconclusive);
        let r = lease()
            .fault(ms(2_000), crash(0))
            .fault(ms(40_000), restart(0))
            .obs(ms(41_000), 1, acquired())
            .obs(ms(49_000), 1, acquired())
            .end(ms(55_000))
            .build();
        assert_eq!(lock_progress(&r, WINDOW), Verdict::Holds);
        let r = lease().end(ms(50_000)).build();
        let v = crate::testkit::violations(lock_progress(&r, WINDOW));
        assert_eq!((v[0].from, v[0].to), (ms(1_000), ms(50_000)));
        // Restarted service with no acquisition afterwards: the gap starts at the restart.
        let r = lease()
            .fault(ms(2_000), crash(0))
            .fault(ms(40_000), restart(0))
            .end(ms(55_000))
            .build();
        let v = crate::testkit::violations(lock_progress(&r, WINDOW));
        assert_eq!((v[0].from, v[0].to), (ms(40_000), ms(55_000)));
        assert_eq!(
            texts(&v[0].evidence),
            vec![
                "0.000 s client-2: requests lock",
                "40.000 s lock servers: a majority (1 of 1) is up"
            ]
        );
    }

    /// An idle lock owes no progress. Nobody asks between 2 s and 40 s.
    #[test]
    fn an_idle_lock_is_not_a_stall() {
        let r = Builder::new(&[("locks", LeaseService), ("client-1", Worker)])
            .obs(ms(900), 1, requested())
            .obs(ms(1_000), 1, acquired())
            .obs(
                ms(2_000),
                1,
                Obs::LockReleased {
                    thread: None,
                    lock: "lock".to_string(),
                },
            )
            .obs(ms(40_000), 1, requested())
            .obs(ms(40_010), 1, acquired())
            .end(ms(45_000))
            .build();
        assert_eq!(lock_progress(&r, WINDOW), Verdict::Holds);
    }

    /// A client that waits out another's valid
    /// hold is not a stall. client-1's lease (TTL 10 s) runs 1 s..11 s at the service;
    /// client-2 asks at 2 s and gets it at 11.5 s: 0.5 s owed, within a 5 s window.
    #[test]
    fn waiting_out_a_valid_hold_is_not_a_stall() {
        let window = SimDuration::from_secs(5);
        let build = |freed_ms: u64| {
            Builder::new(&[
                ("locks", LeaseService),
                ("client-1", Worker),
                ("client-2", Worker),
            ])
            .obs(ms(999), 1, requested())
            .obs(ms(1_000), 0, granted(1, 1))
            .obs(ms(1_001), 1, acquired())
            .obs(ms(2_000), 2, requested())
            .obs(
                ms(freed_ms),
                0,
                Obs::LeaseFreed {
                    lease: "lock".to_string(),
                    holder: id(1),
                    token: 1,
                    expired: true,
                },
            )
            .obs(ms(11_500), 0, granted(2, 2))
            .obs(ms(11_501), 2, acquired())
            .end(ms(14_000))
            .build()
        };
        assert_eq!(lock_progress(&build(11_000), window), Verdict::Holds);
        // Freed early at 4 s (released, say) and nobody gets it until 11.5 s: 7.5 s owed.
        let v = violations(lock_progress(&build(4_000), window));
        assert_eq!((v[0].from, v[0].to), (ms(1_001), ms(11_501)));
        assert!(
            v[0].summary.contains("clients waited 7.500 s of it"),
            "{}",
            v[0].summary
        );
        assert_eq!(
            texts(&v[0].evidence),
            vec![
                "1.001 s client-1: acquired lock",
                "2.000 s client-2: requests lock",
                "11.501 s client-2: acquired lock",
            ]
        );
    }

    /// A dead holder's hold is no progress. client-1's lease runs 1 s..30 s at the service (a
    /// Raft leader change re-arming it, say) but client-1 crashes at 2 s; client-2 asks at
    /// 2 s and gets it at 30.5 s: 28.5 s owed, with nobody alive to act on the hold. The same with client-1
    /// restarted at 3 s, having forgotten its grant.
    #[test]
    fn a_crashed_holders_hold_is_not_progress() {
        let build = |restart_ms: Option<u64>| {
            let mut b = Builder::new(&[
                ("locks", LeaseService),
                ("client-1", Worker),
                ("client-2", Worker),
            ])
            .obs(ms(999), 1, requested())
            .obs(ms(1_000), 0, granted(1, 1))
            .obs(ms(1_001), 1, acquired())
            .fault(ms(2_000), crash(1))
            .obs(ms(2_000), 2, requested());
            if let Some(t) = restart_ms {
                b = b.fault(ms(t), restart(1));
            }
            b.obs(
                ms(30_000),
                0,
                Obs::LeaseFreed {
                    lease: "lock".to_string(),
                    holder: id(1),
                    token: 1,
                    expired: true,
                },
            )
            .obs(ms(30_500), 0, granted(2, 2))
            .obs(ms(30_501), 2, acquired())
            .end(ms(35_000))
            .build()
        };
        for restart_ms in [None, Some(3_000)] {
            let v = violations(lock_progress(&build(restart_ms), WINDOW));
            assert_eq!(
                (v[0].from, v[0].to),
                (ms(1_001), ms(30_501)),
                "{restart_ms:?}"
            );
            assert!(
                v[0].summary.contains("clients waited 28.500 s of it"),
                "{}",
                v[0].summary
            );
        }
    }

    fn granted(holder: u32, token: u64) -> Obs {
        Obs::LeaseGranted {
            lease: "lock".to_string(),
            holder: id(holder),
            token,
            ttl_ns: 10_000_000_000,
        }
    }

    /// Owed time is the union of the clients' waits (an instant two clients wait counts
    /// once; a stretch nobody waits counts not at all), and a gap owing exactly the window
    /// holds. One lease service, no grants, no acquisition until 8 s:
    /// `(waits, window) -> owed in the violation`.
    #[test]
    fn owed_time_is_the_union_of_waits() {
        let base = || {
            Builder::new(&[
                ("locks", LeaseService),
                ("client-1", Worker),
                ("client-2", Worker),
                ("client-3", Worker),
            ])
            .obs(ms(8_000), 3, acquired())
            .end(ms(9_000))
        };
        for (what, waits, window_ms, expect) in [
            (
                "overlapping waits 1 s..8 s and 2 s..8 s",
                vec![(1, 1_000, None), (2, 2_000, None)],
                5_000,
                Some("7.000 s"),
            ),
            (
                "disjoint waits 1 s..3 s and 5 s..8 s: exactly the window",
                vec![(1, 1_000, Some(3_000)), (2, 5_000, None)],
                5_000,
                None,
            ),
            (
                "the same, one nanosecond less of window",
                vec![(1, 1_000, Some(3_000)), (2, 5_000, None)],
                4_999,
                Some("5.000 s"),
            ),
        ] {
            let mut b = base();
            for (client, from, crashed) in waits {
                b = b.obs(ms(from), client, requested());
                if let Some(c) = crashed {
                    b = b.fault(ms(c), crash(client));
                }
            }
            let window = SimDuration::from_millis(window_ms);
            let got = match lock_progress(&b.build(), window) {
                Verdict::Holds => None,
                v => {
                    let v = violations(v);
                    assert_eq!((v[0].from, v[0].to), (ms(0), ms(8_000)), "{what}");
                    Some(v[0].summary.clone())
                }
            };
            let expect = expect.map(|owed| {
                format!(
                    "no lock acquired for 8.000 s while a majority (1 of 1) of lock servers \
                     was up; clients waited {owed} of it with nobody holding the lock \
                     (window {window})"
                )
            });
            assert_eq!(got, expect, "{what}");
        }
    }

    /// An up-span is half-open: an acquisition at the instant the service crashes is outside
    /// it, so it is not the evidence that ends the gap (the crash is).
    #[test]
    fn an_acquisition_at_the_crash_instant_is_outside_the_span() {
        let r = Builder::new(&[
            ("locks", LeaseService),
            ("client-1", Worker),
            ("client-2", Worker),
        ])
        .obs(ms(0), 2, requested())
        .obs(ms(1_000), 1, acquired())
        .fault(ms(20_000), crash(0))
        .obs(ms(20_000), 1, acquired())
        .end(ms(30_000))
        .build();
        let v = violations(lock_progress(&r, WINDOW));
        assert_eq!((v[0].from, v[0].to), (ms(1_000), ms(20_000)));
        assert_eq!(
            texts(&v[0].evidence),
            vec![
                "0.000 s client-2: requests lock",
                "1.000 s client-1: acquired lock",
            ]
        );
    }

    /// A Redlock client cut from a majority, in a run of exactly the window (10 s): no gap can
    /// owe more than its majority-up span, so a run whose every such span is no longer than
    /// the window cannot show a stall: it is inconclusive (as `eventual_leader` is for a run
    /// shorter than `settle`), not a vacuous pass with a false reason; at 10.001 s it is
    /// violated.
    #[test]
    fn a_run_no_longer_than_the_window_is_inconclusive() {
        let run = |end| redis3().end(ms(end)).build();
        assert_eq!(
            lock_progress(&run(10_000), WINDOW),
            Verdict::Inconclusive {
                reason: "the run (10.000 s) is no longer than the window (10.000 s): too short \
                         to show a stall"
                    .to_string()
            }
        );
        assert_eq!(
            lock_progress(&run(10_001), WINDOW).outcome(),
            Outcome::Violated
        );
        // A longer run whose crashes leave no majority-up stretch longer than the window.
        let chopped = redis3()
            .fault(ms(8_000), crash(0))
            .fault(ms(8_000), crash(1))
            .fault(ms(12_000), restart(0))
            .end(ms(20_000))
            .build();
        assert_eq!(
            lock_progress(&chopped, WINDOW),
            Verdict::Inconclusive {
                reason: "a majority (2 of 3) of lock servers was up for at most 8.000 s at a \
                         stretch, no longer than the window (10.000 s): too short to show a \
                         stall"
                    .to_string()
            }
        );
    }

    #[test]
    fn no_lock_servers_is_inconclusive() {
        let r = Builder::new(&[("n1", Bully)]).end(ms(1_000)).build();
        assert_eq!(lock_progress(&r, WINDOW).outcome(), Outcome::Inconclusive);
    }

    /// A small deterministic generator for the randomized agreement tests (xorshift64).
    struct Draws(u64);

    impl Draws {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
        /// An interval in 0..100 ns, sometimes of zero length.
        fn interval(&mut self) -> (SimTime, SimTime) {
            let a = self.below(100);
            let len = if self.below(8) == 0 {
                0
            } else {
                self.below(30)
            };
            (SimTime(a), SimTime(a + len))
        }
    }

    use splitbrain_engine::SimTime;

    #[test]
    fn uncovered_agrees_with_subtracting_the_holds_one_at_a_time() {
        let mut d = Draws(0x9e37_79b9_7f4a_7c15);
        for _ in 0..5_000 {
            let holds: Vec<_> = (0..d.below(6)).map(|_| d.interval()).collect();
            // A wait is never empty (`for_each_belief` gives only beliefs of positive length).
            let (from, to) = d.interval();
            if from == to {
                continue;
            }
            // The rule before the binary search: each hold cut out of every piece in turn.
            let mut want = vec![(from, to)];
            for &(hf, ht) in &holds {
                want = want
                    .into_iter()
                    .flat_map(|(a, b)| [(a, b.min(hf)), (a.max(ht), b)])
                    .filter(|(x, y)| x < y)
                    .collect();
            }
            let mut got = Vec::new();
            let reach = Reach::new(holds.clone());
            uncovered(from, to, Some(&reach), |a, b| got.push((a, b)));
            assert_eq!(got, want, "holds {holds:?}, wait {from:?}..{to:?}");
        }
    }

    #[test]
    fn clip_with_a_binary_search_agrees_with_a_walk_over_every_stretch() {
        let mut d = Draws(7);
        for _ in 0..5_000 {
            let mut owed: Vec<Owed> = (0..d.below(8))
                .map(|i| {
                    let (from, to) = d.interval();
                    Owed {
                        from,
                        to,
                        request: i as usize,
                    }
                })
                .collect();
            owed.sort_unstable_by_key(|o| (o.from, o.to, o.request));
            let (from, to) = d.interval();
            // The walk over every stretch, as before.
            let mut want: Vec<Owed> = Vec::new();
            for o in &owed {
                let (a, b) = (o.from.max(from), o.to.min(to));
                if a >= b {
                    continue;
                }
                match want.last_mut() {
                    Some(last) if a <= last.to => last.to = last.to.max(b),
                    _ => want.push(Owed {
                        from: a,
                        to: b,
                        request: o.request,
                    }),
                }
            }
            let got = clip(&Reach::sorted(owed.clone()), from, to);
            let key =
                |v: &[Owed]| -> Vec<_> { v.iter().map(|o| (o.from, o.to, o.request)).collect() };
            assert_eq!(key(&got), key(&want), "owed {owed:?}, gap {from:?}..{to:?}");
        }
    }
}
