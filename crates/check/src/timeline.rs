//! Reconstructions over true time shared by the checkers: the merged event order, belief
//! intervals, node liveness, wall clocks, and the truth of who holds a lock.
//!
//! **Tie rule.** Observations and faults come in two lists; at one true instant the
//! observations are taken first, then the faults. A fault fired by a trigger (delay 0) lands
//! after the observation that fired it, and a claim made at the instant of a crash is a
//! zero-length belief.
//!
//! Intervals are half-open `[from, to)` in true ns; an interval still open at the end of the
//! record is closed at [`RunRecord::horizon`].

use crate::run::{Role, RunRecord};
use crate::verdict::{Evidence, Source};
use splitbrain_engine::{Fault, LocalClock, NetRule, NodeId, SimDuration, SimTime, WallTime};
use splitbrain_protocols::Obs;
use std::collections::{BTreeMap, BTreeSet};

/// One entry of the merged order.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Step<'a> {
    /// `record.observations[index]`.
    Obs {
        index: usize,
        t: SimTime,
        node: NodeId,
        obs: &'a Obs,
    },
    /// `record.faults[index]`.
    Fault {
        index: usize,
        t: SimTime,
        fault: &'a Fault,
    },
}

/// Removes and returns every entry of `node` from a map keyed by (node, name): what a node
/// held when it crashed, in name order.
fn take_node<V>(
    open: &mut BTreeMap<(NodeId, String), V>,
    node: NodeId,
) -> Vec<((NodeId, String), V)> {
    let keys: Vec<(NodeId, String)> = open
        .range((node, String::new())..)
        .take_while(|((n, _), _)| *n == node)
        .map(|(k, _)| k.clone())
        .collect();
    keys.into_iter()
        .map(|k| {
            let v = open.remove(&k).expect("key listed above");
            (k, v)
        })
        .collect()
}

/// Observations and faults merged in true-time order (observations first at a tie).
pub(crate) fn steps(record: &RunRecord) -> Vec<Step<'_>> {
    let (obs, faults) = (&record.observations, &record.faults);
    let mut out = Vec::with_capacity(obs.len() + faults.len());
    let (mut i, mut j) = (0, 0);
    while i < obs.len() || j < faults.len() {
        let take_obs = j >= faults.len() || (i < obs.len() && obs[i].t <= faults[j].0);
        if take_obs {
            let o = &obs[i];
            out.push(Step::Obs {
                index: i,
                t: o.t,
                node: o.node,
                obs: &o.obs,
            });
            i += 1;
        } else {
            out.push(Step::Fault {
                index: j,
                t: faults[j].0,
                fault: &faults[j].1,
            });
            j += 1;
        }
    }
    out
}

/// Per node, the indices of the observations matching a predicate, for "the node's latest
/// such observation before index i" in O(log n).
pub(crate) struct PerNode {
    by_node: BTreeMap<NodeId, Vec<usize>>,
}

impl PerNode {
    pub(crate) fn new(record: &RunRecord, pred: impl Fn(&Obs) -> bool) -> PerNode {
        let mut by_node: BTreeMap<NodeId, Vec<usize>> = BTreeMap::new();
        for (i, o) in record.observations.iter().enumerate() {
            if pred(&o.obs) {
                by_node.entry(o.node).or_default().push(i);
            }
        }
        PerNode { by_node }
    }

    /// The latest matching observation of `node` with an index below `index`.
    pub(crate) fn before(&self, node: NodeId, index: usize) -> Option<usize> {
        let list = self.by_node.get(&node)?;
        let k = list.partition_point(|&i| i < index);
        k.checked_sub(1).map(|k| list[k])
    }
}

/// How a belief (or a hold) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// By this observation (step-down, release, loss).
    Obs(usize),
    /// By this crash fault.
    Crash(usize),
    /// Still open at the horizon.
    Open,
}

/// A node's belief about itself over `[from, to)`: leadership (`key` empty) or holding the
/// lock `key`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Belief {
    pub node: NodeId,
    pub key: String,
    pub from: SimTime,
    pub to: SimTime,
    /// The observation that started it.
    pub start: usize,
    pub end: End,
}

/// What an observation does to a belief.
pub(crate) enum Change {
    Start(String),
    Stop(String),
}

/// Belief intervals: a `Start(key)` opens the node's belief in `key` (a second start while
/// open continues it), a `Stop(key)` or the node's crash closes it. Sorted by `from`.
pub(crate) fn beliefs(
    record: &RunRecord,
    classify: impl Fn(&Obs) -> Option<Change>,
) -> Vec<Belief> {
    let mut open: BTreeMap<(NodeId, String), (SimTime, usize)> = BTreeMap::new();
    let mut out = Vec::new();
    for step in steps(record) {
        match step {
            Step::Obs {
                index,
                t,
                node,
                obs,
                ..
            } => match classify(obs) {
                Some(Change::Start(key)) => {
                    open.entry((node, key)).or_insert((t, index));
                }
                Some(Change::Stop(key)) => {
                    if let Some((from, start)) = open.remove(&(node, key.clone())) {
                        out.push(Belief {
                            node,
                            key,
                            from,
                            to: t,
                            start,
                            end: End::Obs(index),
                        });
                    }
                }
                None => {}
            },
            Step::Fault {
                index,
                t,
                fault: Fault::Crash { node },
            } => {
                for (k, (from, start)) in take_node(&mut open, *node) {
                    out.push(Belief {
                        node: k.0,
                        key: k.1,
                        from,
                        to: t,
                        start,
                        end: End::Crash(index),
                    });
                }
            }
            Step::Fault { .. } => {}
        }
    }
    let horizon = record.horizon();
    for ((node, key), (from, start)) in open {
        out.push(Belief {
            node,
            key,
            from,
            to: horizon,
            start,
            end: End::Open,
        });
    }
    out.retain(|b| b.from < b.to);
    out.sort_by_key(|b| (b.from, b.start));
    out
}

/// Leadership beliefs: `LeaderClaim` until `LeaderStepDown` or crash.
pub(crate) fn leader_beliefs(record: &RunRecord) -> Vec<Belief> {
    beliefs(record, |o| match o {
        Obs::LeaderClaim { .. } => Some(Change::Start(String::new())),
        Obs::LeaderStepDown { .. } => Some(Change::Stop(String::new())),
        _ => None,
    })
}

/// Lock beliefs per lock name: `LockAcquired` until `LockReleased` / `LockLost` or crash.
pub(crate) fn lock_beliefs(record: &RunRecord) -> Vec<Belief> {
    beliefs(record, |o| match o {
        Obs::LockAcquired { lock, .. } => Some(Change::Start(lock.clone())),
        Obs::LockReleased { lock } | Obs::LockLost { lock, .. } => Some(Change::Stop(lock.clone())),
        _ => None,
    })
}

/// A maximal window during which two or more of the given intervals overlap, with the
/// indices (into the input) of every interval active at some instant of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Overlap {
    pub from: SimTime,
    pub to: SimTime,
    pub members: BTreeSet<usize>,
}

/// Maximal windows where at least `min` of `intervals` (half-open) are active at once.
pub(crate) fn overlaps(intervals: &[(SimTime, SimTime)], min: usize) -> Vec<Overlap> {
    // (time, 0 = end / 1 = start, index): ends before starts at one instant.
    let mut events: Vec<(SimTime, u8, usize)> = Vec::with_capacity(intervals.len() * 2);
    for (i, &(from, to)) in intervals.iter().enumerate() {
        if from < to {
            events.push((from, 1, i));
            events.push((to, 0, i));
        }
    }
    events.sort();
    let mut active: BTreeSet<usize> = BTreeSet::new();
    let mut out = Vec::new();
    let mut current: Option<Overlap> = None;
    let mut k = 0;
    while k < events.len() {
        let t = events[k].0;
        while k < events.len() && events[k].0 == t {
            let (_, kind, i) = events[k];
            if kind == 1 {
                active.insert(i);
            } else {
                active.remove(&i);
            }
            k += 1;
        }
        if active.len() >= min {
            let o = current.get_or_insert_with(|| Overlap {
                from: t,
                to: t,
                members: BTreeSet::new(),
            });
            o.members.extend(active.iter().copied());
        } else if let Some(mut o) = current.take() {
            o.to = t;
            out.push(o);
        }
    }
    out
}

/// Total length of `[from, to)` covered by none of `intervals`, ns.
pub(crate) fn uncovered_ns(intervals: &[(SimTime, SimTime)], from: SimTime, to: SimTime) -> u64 {
    let mut clipped: Vec<(SimTime, SimTime)> = intervals
        .iter()
        .map(|&(a, b)| (a.max(from), b.min(to)))
        .filter(|(a, b)| a < b)
        .collect();
    clipped.sort();
    let mut covered = 0u64;
    let mut cursor = from;
    for (a, b) in clipped {
        let a = a.max(cursor);
        if b > a {
            covered += b.0 - a.0;
            cursor = b;
        }
    }
    to.saturating_since(from).0 - covered
}

/// Up/down state of every node, from `Crash` / `Restart` faults.
pub(crate) struct Liveness {
    /// Per node: down intervals `[crash, restart)` (restart `SimTime::MAX` if none), with the
    /// crash fault's index.
    down: Vec<Vec<(SimTime, SimTime, usize)>>,
}

impl Liveness {
    pub(crate) fn new(record: &RunRecord) -> Liveness {
        let n = record.names.len();
        let mut down: Vec<Vec<(SimTime, SimTime, usize)>> = vec![Vec::new(); n];
        let ensure = |down: &mut Vec<Vec<_>>, node: NodeId| {
            if node.index() >= down.len() {
                down.resize(node.index() + 1, Vec::new());
            }
        };
        for (index, (t, fault)) in record.faults.iter().enumerate() {
            match fault {
                Fault::Crash { node } => {
                    ensure(&mut down, *node);
                    let d = &mut down[node.index()];
                    if d.last().map_or(true, |l| l.1 != SimTime::MAX) {
                        d.push((*t, SimTime::MAX, index));
                    }
                }
                Fault::Restart { node } => {
                    ensure(&mut down, *node);
                    if let Some(l) = down[node.index()].last_mut() {
                        if l.1 == SimTime::MAX {
                            l.1 = *t;
                        }
                    }
                }
                _ => {}
            }
        }
        Liveness { down }
    }

    /// Whether `node` is up at true time `t`.
    pub(crate) fn is_up(&self, node: NodeId, t: SimTime) -> bool {
        self.down
            .get(node.index())
            .map_or(true, |d| !d.iter().any(|&(a, b, _)| a <= t && t < b))
    }

    /// Down intervals of `node`.
    pub(crate) fn down(&self, node: NodeId) -> &[(SimTime, SimTime, usize)] {
        self.down.get(node.index()).map_or(&[], |d| d.as_slice())
    }
}

/// The Redis model's expiry rule: a key with wall-clock deadline `deadline` is expired at a
/// wall reading `wall` iff `wall >= deadline`. The Redis instance actor reports `deadline` as
/// the first wall instant at which Redis counts the key expired (`(deadline_ms + 1) * 1e6` ns,
/// Redis expiring at `now_ms > deadline_ms`), so this agrees with Redis to the nanosecond.
pub fn key_expired(wall: WallTime, deadline: WallTime) -> bool {
    wall >= deadline
}

/// Every node's clocks over true time (ns), rebuilt from its initial [`ClockConfig`] (the
/// record's `clocks`) and the `ClockStep` / `SetDrift` faults applied to it, replayed in order
/// with [`LocalClock`] as the engine applies them (DESIGN.md, "Clocks": `wall(t) = offset +
/// mono(t) + sum of steps so far`; a step moves the wall clock only). A fault at true time `t`
/// is in effect at `t`. A node the record does not know reads true time.
///
/// Used by the checkers for Redis key expiry ([`key_expired`], [`Truth`]) and by the charts
/// (belief deadlines, the clock-offset panel).
///
/// [`ClockConfig`]: splitbrain_engine::ClockConfig
pub struct WallClocks {
    /// Per node: `(from, clock)` snapshots, `from` increasing; the first is at 0.
    snaps: Vec<Vec<(SimTime, LocalClock)>>,
}

impl WallClocks {
    /// Rebuilds the clocks of every node of `record` from its initial clocks and applied
    /// faults.
    pub fn new(record: &RunRecord) -> WallClocks {
        let mut snaps: Vec<Vec<(SimTime, LocalClock)>> = (0..record.names.len())
            .map(|i| {
                vec![(
                    SimTime::ZERO,
                    LocalClock::new(record.clock(NodeId(i as u32))),
                )]
            })
            .collect();
        for (t, fault) in &record.faults {
            let (node, step, drift) = match *fault {
                Fault::ClockStep { node, delta_ns } => (node, Some(delta_ns), None),
                Fault::SetDrift { node, drift_ppm } => (node, None, Some(drift_ppm)),
                _ => continue,
            };
            let Some(list) = snaps.get_mut(node.index()) else {
                continue;
            };
            let mut clock = list.last().expect("initial snapshot").1.clone();
            if let Some(delta) = step {
                clock.step(delta);
            }
            if let Some(ppm) = drift {
                clock.set_drift(*t, ppm);
            }
            if list.last().expect("initial snapshot").0 == *t {
                list.last_mut().expect("initial snapshot").1 = clock;
            } else {
                list.push((*t, clock));
            }
        }
        WallClocks { snaps }
    }

    /// `node`'s wall clock reading (ns, signed) at true time `t`.
    pub fn wall(&self, node: NodeId, t: SimTime) -> WallTime {
        match self.snaps.get(node.index()) {
            Some(list) => {
                let i = list.partition_point(|(from, _)| *from <= t);
                list[i.saturating_sub(1)].1.wall(t)
            }
            None => WallTime(t.0 as i64),
        }
    }

    /// The first true instant at or after `t` at which `node`'s monotonic clock reads at least
    /// `local` ns (a belief's deadline, which actors keep as a monotonic reading); `t` itself
    /// if it already does. Follows drift changes after `t`, rounding as
    /// [`LocalClock::true_time_after`] does.
    pub fn true_time_of_mono(&self, node: NodeId, t: SimTime, local: u64) -> SimTime {
        let Some(list) = self.snaps.get(node.index()) else {
            return t;
        };
        let k = list
            .partition_point(|(from, _)| *from <= t)
            .saturating_sub(1);
        let mut start = t;
        for (i, (_, c)) in list.iter().enumerate().skip(k) {
            let now = c.mono(start).0;
            if now >= local {
                return start;
            }
            let at = c.true_time_after(start, SimDuration(local - now));
            match list.get(i + 1) {
                Some((next, _)) if *next <= at => start = *next,
                _ => return at,
            }
        }
        start
    }

    /// `node`'s wall clock minus true time (ns) over `[0, end]`, as continuous pieces of
    /// `(t, offset)` points: one point where each piece starts, at every drift change and at
    /// its end; a clock step starts a new piece. Empty for a node the record does not know.
    pub fn offsets(&self, node: NodeId, end: SimTime) -> Vec<Vec<(SimTime, i64)>> {
        let Some(list) = self.snaps.get(node.index()) else {
            return Vec::new();
        };
        let off = |c: &LocalClock, t: SimTime| c.wall(t).0.saturating_sub(t.0 as i64);
        let mut pieces: Vec<Vec<(SimTime, i64)>> = Vec::new();
        for (i, (from, c)) in list.iter().enumerate() {
            if *from > end {
                break;
            }
            let to = list.get(i + 1).map_or(end, |(f, _)| (*f).min(end));
            let first = (*from, off(c, *from));
            let stepped = i > 0 && c.steps_ns() != list[i - 1].1.steps_ns();
            match pieces.last_mut() {
                Some(p) if !stepped => p.push(first),
                _ => pieces.push(vec![first]),
            }
            let p = pieces.last_mut().expect("pushed above");
            if to > *from {
                p.push((to, off(c, to)));
            }
        }
        pieces
    }

    /// True times in `(from, to)` at which `node`'s clock changes (steps or drift changes).
    fn breakpoints(&self, node: NodeId, from: SimTime, to: SimTime) -> Vec<SimTime> {
        self.snaps.get(node.index()).map_or(Vec::new(), |list| {
            list.iter()
                .map(|(t, _)| *t)
                .filter(|t| from < *t && *t < to)
                .collect()
        })
    }

    /// The sub-intervals of `[from, to)` during which a key with wall deadline `deadline` on
    /// `node` is not expired ([`key_expired`]), each with the instant and wall reading at which
    /// it expired (`None` if it lasted to `to`). Between breakpoints the wall clock is
    /// continuous and non-decreasing, so expiry is a threshold found by bisection; a backward
    /// step can make an expired key live again.
    pub(crate) fn live_pieces(
        &self,
        node: NodeId,
        from: SimTime,
        to: SimTime,
        deadline: WallTime,
    ) -> Vec<(SimTime, SimTime, Option<WallTime>)> {
        let mut bounds = vec![from];
        bounds.extend(self.breakpoints(node, from, to));
        bounds.push(to);
        let mut out = Vec::new();
        let mut open: Option<SimTime> = None;
        for w in bounds.windows(2) {
            let (a, b) = (w[0], w[1]);
            if a >= b {
                continue;
            }
            let expired_at = |t: SimTime| key_expired(self.wall(node, t), deadline);
            if expired_at(a) {
                if let Some(s) = open.take() {
                    out.push((s, a, Some(self.wall(node, a))));
                }
                continue;
            }
            open.get_or_insert(a);
            let last = SimTime(b.0 - 1);
            if !expired_at(last) {
                continue;
            }
            // First expired instant in (a, last]: invariant lo not expired, hi expired.
            let (mut lo, mut hi) = (a.0, last.0);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if expired_at(SimTime(mid)) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let s = open.take().expect("opened above");
            out.push((s, SimTime(hi), Some(self.wall(node, SimTime(hi)))));
        }
        if let Some(s) = open {
            out.push((s, to, None));
        }
        out
    }
}

/// Who truly held a lock over `[from, to)` (true time, ns): a lease grant, or a majority of
/// Redis instances holding one value (DESIGN.md, `holder_writes_only`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    /// Lock (lease or key) name.
    pub lock: String,
    /// The client holding it, if known (a Redis value no client reported acquiring is held
    /// by nobody we can name).
    pub holder: Option<NodeId>,
    /// Which server state makes it a hold.
    pub source: HoldSource,
    /// What the hold is, in words ("lease grant with token 17", "value v1 on a majority (2 of
    /// 3) of Redis instances").
    pub what: String,
    /// Start, true time.
    pub from: SimTime,
    /// End, true time (exclusive).
    pub to: SimTime,
    /// Facts that started it.
    pub started_by: Vec<Evidence>,
    /// Facts that ended it (empty if open at the horizon).
    pub ended_by: Vec<Evidence>,
}

/// The server state behind a [`Hold`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HoldSource {
    /// A grant of the lease service `service`, with its fencing token. The grant lasts from
    /// the service's `LeaseGranted` until its `LeaseFreed`, its next grant of the lease, or
    /// its crash.
    Lease {
        /// The lease service.
        service: NodeId,
        /// The grant's fencing token.
        token: u64,
    },
    /// A majority (`n / 2 + 1` of the run's `n` Redis instances) holding `value` at the key.
    RedisMajority {
        /// The value (the client's random lock value).
        value: String,
    },
}

/// The truth about locks over the run (DESIGN.md, `holder_writes_only`: "truth = the lock
/// servers' state: the lease service's grant, or a majority of Redis instances holding the
/// client's value"), rebuilt from a [`RunRecord`]: the lease services' grant observations and
/// the Redis instances' key observations, keys expiring by the instance's wall clock
/// ([`WallClocks`], [`key_expired`]). Intervals are half-open in true ns; one still open at
/// the end is closed at [`RunRecord::horizon`]; empty ones are dropped.
pub struct Truth {
    /// Every hold, sorted by start (then lock, holder).
    pub holds: Vec<Hold>,
    /// Every Redis key held on an instance (the pieces majorities are made of), in the order
    /// they ended.
    pub keys: Vec<KeyHold>,
}

/// One Redis instance holding `value` at `key` over `[from, to)` (true time, ns): from the
/// instance's `SET` (or its restart with the key) until `DEL`, a new `SET`, its crash, or the
/// key's expiry by the instance's wall clock ([`key_expired`]; a backward clock step can make
/// an expired key live again, which starts a new piece). A change of the key's expiry
/// (`PEXPIRE`) ends the piece with no evidence and the next piece of the same key and value
/// starts at that instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyHold {
    /// The Redis instance.
    pub instance: NodeId,
    /// The key.
    pub key: String,
    /// The value it holds.
    pub value: String,
    /// The client that reported acquiring lock `key` with `value` (the first to), if any.
    pub holder: Option<NodeId>,
    /// Start, true time.
    pub from: SimTime,
    /// End, true time (exclusive).
    pub to: SimTime,
    /// The fact that started it.
    pub start: Evidence,
    /// The fact that ended it: the event, or the expiry (derived); `None` if it lasted to the
    /// horizon or the key's expiry changed at `to` (the next piece continues it).
    pub end: Option<Evidence>,
}

/// An open Redis key on one instance.
struct KeySeg {
    value: String,
    deadline: Option<WallTime>,
    since: SimTime,
    start: Evidence,
}

impl Truth {
    /// Rebuilds the truth of `record`, judging Redis key expiry with `clocks` (built from the
    /// same record).
    pub fn new(record: &RunRecord, clocks: &WallClocks) -> Truth {
        let mut holds = lease_holds(record);
        let keys = redis_key_holds(record, clocks);
        holds.extend(redis_majorities(record, &keys));
        holds.sort_by(|a, b| (a.from, &a.lock, a.holder).cmp(&(b.from, &b.lock, b.holder)));
        Truth { holds, keys }
    }

    /// Holds of `lock` (any lock if `None`) that contain instant `t`.
    pub fn at<'a>(
        &'a self,
        lock: Option<&'a str>,
        t: SimTime,
    ) -> impl Iterator<Item = &'a Hold> + 'a {
        self.holds
            .iter()
            .filter(move |h| lock.map_or(true, |l| h.lock == l) && h.from <= t && t < h.to)
    }

    /// The latest hold of `lock` (any if `None`) by `who` that started at or before `t`.
    pub fn last_by(&self, lock: Option<&str>, who: NodeId, t: SimTime) -> Option<&Hold> {
        self.holds
            .iter()
            .filter(|h| lock.map_or(true, |l| h.lock == l) && h.holder == Some(who) && h.from <= t)
            .max_by_key(|h| h.from)
    }
}

fn lease_holds(record: &RunRecord) -> Vec<Hold> {
    struct Grant {
        holder: NodeId,
        token: u64,
        since: SimTime,
        start: Evidence,
    }
    let mut open: BTreeMap<(NodeId, String), Grant> = BTreeMap::new();
    let mut out = Vec::new();
    let close = |out: &mut Vec<Hold>,
                 service: NodeId,
                 lease: String,
                 g: Grant,
                 t: SimTime,
                 end: Option<Evidence>| {
        out.push(Hold {
            lock: lease,
            holder: Some(g.holder),
            source: HoldSource::Lease {
                service,
                token: g.token,
            },
            what: format!("lease grant with token {}", g.token),
            from: g.since,
            to: t,
            started_by: vec![g.start],
            ended_by: end.into_iter().collect(),
        });
    };
    for step in steps(record) {
        match step {
            Step::Obs {
                index,
                t,
                node,
                obs,
            } => match obs {
                Obs::LeaseGranted {
                    lease,
                    holder,
                    token,
                    ..
                } => {
                    let ev = obs_evidence(record, index);
                    if let Some(g) = open.remove(&(node, lease.clone())) {
                        close(&mut out, node, lease.clone(), g, t, Some(ev.clone()));
                    }
                    open.insert(
                        (node, lease.clone()),
                        Grant {
                            holder: *holder,
                            token: *token,
                            since: t,
                            start: ev,
                        },
                    );
                }
                Obs::LeaseFreed { lease, .. } => {
                    if let Some(g) = open.remove(&(node, lease.clone())) {
                        close(
                            &mut out,
                            node,
                            lease.clone(),
                            g,
                            t,
                            Some(obs_evidence(record, index)),
                        );
                    }
                }
                _ => {}
            },
            Step::Fault {
                index,
                t,
                fault: Fault::Crash { node },
            } => {
                for (k, g) in take_node(&mut open, *node) {
                    close(
                        &mut out,
                        k.0,
                        k.1,
                        g,
                        t,
                        Some(fault_evidence(record, index)),
                    );
                }
            }
            Step::Fault { .. } => {}
        }
    }
    let horizon = record.horizon();
    for ((service, lease), g) in open {
        close(&mut out, service, lease, g, horizon, None);
    }
    out.retain(|h| h.from < h.to);
    out
}

/// The client behind each `(lock, value)`: the first that reported acquiring the lock with it.
fn value_owners(record: &RunRecord) -> BTreeMap<(&str, &str), NodeId> {
    let mut owner: BTreeMap<(&str, &str), NodeId> = BTreeMap::new();
    for o in &record.observations {
        if let Obs::LockAcquired { lock, value, .. } = &o.obs {
            owner
                .entry((lock.as_str(), value.as_str()))
                .or_insert(o.node);
        }
    }
    owner
}

fn redis_key_holds(record: &RunRecord, clocks: &WallClocks) -> Vec<KeyHold> {
    let instances = record.nodes_where(|r| r == Role::RedisInstance);
    if instances.is_empty() {
        return Vec::new();
    }
    let owner = value_owners(record);
    let is_instance = |n: NodeId| instances.contains(&n);
    let mut open: BTreeMap<(NodeId, String), KeySeg> = BTreeMap::new();
    let mut held: Vec<KeyHold> = Vec::new();
    let close = |held: &mut Vec<KeyHold>,
                 node: NodeId,
                 key: String,
                 seg: KeySeg,
                 t: SimTime,
                 end: Option<Evidence>| {
        let pieces = match seg.deadline {
            None => vec![(seg.since, t, None)],
            Some(d) => clocks.live_pieces(node, seg.since, t, d),
        };
        let n = pieces.len();
        for (i, (from, to, expired)) in pieces.into_iter().enumerate() {
            let end = match expired {
                Some(wall) => Some(Evidence {
                    t: to,
                    node: record.name(node),
                    text: format!(
                        "key {key} (value {}) expired: wall clock {} >= deadline {}",
                        seg.value,
                        fmt_wall(wall),
                        fmt_wall(seg.deadline.expect("pieces expire only with a deadline"))
                    ),
                    source: Source::Derived,
                }),
                None if i + 1 == n => end.clone(),
                None => None,
            };
            held.push(KeyHold {
                instance: node,
                key: key.clone(),
                value: seg.value.clone(),
                holder: owner.get(&(key.as_str(), seg.value.as_str())).copied(),
                from,
                to,
                start: seg.start.clone(),
                end,
            });
        }
    };
    for step in steps(record) {
        match step {
            Step::Obs {
                index,
                t,
                node,
                obs,
            } if is_instance(node) => {
                let ev = || obs_evidence(record, index);
                match obs {
                    Obs::RedisKeySet {
                        key,
                        value,
                        deadline_wall,
                    } => {
                        if let Some(seg) = open.remove(&(node, key.clone())) {
                            close(&mut held, node, key.clone(), seg, t, Some(ev()));
                        }
                        open.insert(
                            (node, key.clone()),
                            KeySeg {
                                value: value.clone(),
                                deadline: *deadline_wall,
                                since: t,
                                start: ev(),
                            },
                        );
                    }
                    Obs::RedisKeyExpiry { key, deadline_wall } => {
                        if let Some(seg) = open.remove(&(node, key.clone())) {
                            let value = seg.value.clone();
                            let start = seg.start.clone();
                            close(&mut held, node, key.clone(), seg, t, None);
                            open.insert(
                                (node, key.clone()),
                                KeySeg {
                                    value,
                                    deadline: *deadline_wall,
                                    since: t,
                                    start,
                                },
                            );
                        }
                    }
                    Obs::RedisKeyDeleted { key } => {
                        if let Some(seg) = open.remove(&(node, key.clone())) {
                            close(&mut held, node, key.clone(), seg, t, Some(ev()));
                        }
                    }
                    Obs::RedisRestarted { keys } => {
                        for (key, value, deadline) in keys {
                            if let Some(seg) = open.remove(&(node, key.clone())) {
                                close(&mut held, node, key.clone(), seg, t, Some(ev()));
                            }
                            open.insert(
                                (node, key.clone()),
                                KeySeg {
                                    value: value.clone(),
                                    deadline: *deadline,
                                    since: t,
                                    start: ev(),
                                },
                            );
                        }
                    }
                    _ => {}
                }
            }
            Step::Fault {
                index,
                t,
                fault: Fault::Crash { node },
            } => {
                for (k, seg) in take_node(&mut open, *node) {
                    close(
                        &mut held,
                        k.0,
                        k.1,
                        seg,
                        t,
                        Some(fault_evidence(record, index)),
                    );
                }
            }
            _ => {}
        }
    }
    let horizon = record.horizon();
    for ((node, key), seg) in std::mem::take(&mut open) {
        close(&mut held, node, key, seg, horizon, None);
    }
    held.retain(|h| h.from < h.to);
    held
}

/// Windows during which a majority of the run's Redis instances hold one `(key, value)`.
fn redis_majorities(record: &RunRecord, held: &[KeyHold]) -> Vec<Hold> {
    let instances = record.nodes_where(|r| r == Role::RedisInstance).len();
    if instances == 0 {
        return Vec::new();
    }
    let majority = instances / 2 + 1;
    // Majority windows per (key, value).
    let mut by_value: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, h) in held.iter().enumerate() {
        by_value
            .entry((h.key.as_str(), h.value.as_str()))
            .or_default()
            .push(i);
    }
    let mut out = Vec::new();
    for ((key, value), idx) in by_value {
        let spans: Vec<(SimTime, SimTime)> =
            idx.iter().map(|&i| (held[i].from, held[i].to)).collect();
        for o in overlaps(&spans, majority) {
            let members: Vec<&KeyHold> = o.members.iter().map(|&m| &held[idx[m]]).collect();
            let mut started_by: Vec<Evidence> = members
                .iter()
                .filter(|h| h.from <= o.from)
                .map(|h| h.start.clone())
                .collect();
            started_by.sort_by_key(|e| e.t);
            let ended_by: Vec<Evidence> = members
                .iter()
                .filter(|h| h.to == o.to)
                .filter_map(|h| h.end.clone())
                .collect();
            out.push(Hold {
                lock: key.to_string(),
                holder: members[0].holder,
                source: HoldSource::RedisMajority {
                    value: value.to_string(),
                },
                what: format!(
                    "value {value} on a majority ({majority} of {instances}) of Redis instances"
                ),
                from: o.from,
                to: o.to,
                started_by,
                ended_by,
            });
        }
    }
    out
}

/// A wall reading as signed seconds ("23.000 s", "-1.500 s").
pub(crate) fn fmt_wall(w: WallTime) -> String {
    let mag = SimDuration(w.0.unsigned_abs());
    if w.0 < 0 {
        format!("-{mag}")
    } else {
        mag.to_string()
    }
}

/// A signed step in seconds ("+20 s", "-0.250 s").
fn fmt_step(delta_ns: i64) -> String {
    let sign = if delta_ns < 0 { '-' } else { '+' };
    let mag = delta_ns.unsigned_abs();
    if mag % 1_000_000_000 == 0 {
        format!("{sign}{} s", mag / 1_000_000_000)
    } else {
        format!("{sign}{}", SimDuration(mag))
    }
}

fn fmt_opt(x: Option<u64>) -> String {
    x.map_or_else(|| "none".to_string(), |v| v.to_string())
}

/// An observation in a few words.
pub(crate) fn describe(record: &RunRecord, obs: &Obs) -> String {
    let name = |n: &NodeId| record.name(*n);
    match obs {
        Obs::LeaderClaim { term } => format!("claims leadership (term {term})"),
        Obs::LeaderStepDown { term } => format!("steps down (term {term})"),
        Obs::ElectionStarted => "starts an election".to_string(),
        Obs::LeaderKnown { leader } => format!("follows {}", name(leader)),
        Obs::LockRequested { lock } => format!("requests {lock}"),
        Obs::LockAcquired {
            lock, token, value, ..
        } => format!("acquired {lock} (token {}, value {value})", fmt_opt(*token)),
        Obs::LockRenewed { lock, token, .. } => {
            format!("renewed {lock} (token {})", fmt_opt(*token))
        }
        Obs::LockFailed { lock, reason } => format!("failed to acquire {lock}: {reason}"),
        Obs::LockReleased { lock } => format!("released {lock}"),
        Obs::LockLost { lock, reason } => format!("lost {lock}: {reason}"),
        Obs::ValidityChecked {
            lock,
            valid,
            remaining_ns,
        } => format!("checked validity of {lock}: valid={valid}, remaining {remaining_ns} ns"),
        Obs::WriteSent { token, job } => {
            format!(
                "sent a write (token {}, job {})",
                fmt_opt(*token),
                fmt_opt(*job)
            )
        }
        Obs::LeaseGranted {
            lease,
            holder,
            token,
            ..
        } => format!("granted {lease} to {} (token {token})", name(holder)),
        Obs::LeaseRenewed {
            lease,
            holder,
            token,
        } => format!("renewed {lease} for {} (token {token})", name(holder)),
        Obs::LeaseFreed {
            lease,
            holder,
            token,
            expired,
        } => format!(
            "{lease} of {} (token {token}) {}",
            name(holder),
            if *expired { "expired" } else { "released" }
        ),
        Obs::RedisKeySet {
            key,
            value,
            deadline_wall,
        } => format!(
            "SET {key} = {value}{}",
            deadline_wall.map_or(String::new(), |d| format!(" until wall {}", fmt_wall(d)))
        ),
        Obs::RedisKeyExpiry { key, deadline_wall } => format!(
            "expiry of {key} set to {}",
            deadline_wall.map_or("never".to_string(), fmt_wall)
        ),
        Obs::RedisKeyDeleted { key } => format!("DEL {key}"),
        Obs::RedisRestarted { keys } => format!("restarted with {} key(s)", keys.len()),
        Obs::WriteAccepted {
            writer,
            token,
            job,
            applied,
        } => format!(
            "accepted a write from {} (token {}, job {}{})",
            name(writer),
            fmt_opt(*token),
            fmt_opt(*job),
            if *applied {
                ""
            } else {
                ", duplicate: not applied"
            }
        ),
        Obs::WriteRejected {
            writer,
            token,
            reason,
            ..
        } => format!(
            "rejected a write from {} (token {}): {reason}",
            name(writer),
            fmt_opt(*token)
        ),
    }
}

/// Observation `index` as evidence.
pub(crate) fn obs_evidence(record: &RunRecord, index: usize) -> Evidence {
    let o = &record.observations[index];
    Evidence {
        t: o.t,
        node: record.name(o.node),
        text: describe(record, &o.obs),
        source: Source::Observation(index),
    }
}

/// Fault `index` as evidence.
pub(crate) fn fault_evidence(record: &RunRecord, index: usize) -> Evidence {
    let (t, fault) = &record.faults[index];
    let (node, text) = match fault {
        Fault::Crash { node } => (record.name(*node), "crashed".to_string()),
        Fault::Restart { node } => (record.name(*node), "restarted".to_string()),
        Fault::Pause { node, duration } => (record.name(*node), format!("paused for {duration}")),
        Fault::ClockStep { node, delta_ns } => (
            record.name(*node),
            format!("wall clock stepped {}", fmt_step(*delta_ns)),
        ),
        Fault::SetDrift { node, drift_ppm } => (
            record.name(*node),
            format!("clock drift set to {drift_ppm:+} ppm"),
        ),
        Fault::Network { .. } | Fault::Heal | Fault::SetLoss { .. } => {
            ("network".to_string(), "network fault".to_string())
        }
    };
    Evidence {
        t: *t,
        node,
        text,
        source: Source::Fault(index),
    }
}

fn group(record: &RunRecord, nodes: &[NodeId]) -> String {
    let names: Vec<String> = nodes.iter().map(|n| record.name(*n)).collect();
    format!("{{{}}}", names.join(","))
}

fn span(from: SimTime, to: Option<SimTime>) -> String {
    match to {
        Some(to) => format!("from {from} to {to}"),
        None => format!("from {from}"),
    }
}

/// The faults that touched `nodes` or the network and started at or before `until`, in
/// words, in the order applied. A crash is paired with the node's next restart and a network
/// rule with the next heal ("partition {n1,n2} | {n3,n4,n5} from 2.000 s to 9.000 s").
pub(crate) fn describe_faults(
    record: &RunRecord,
    nodes: &BTreeSet<NodeId>,
    until: SimTime,
) -> Vec<String> {
    let faults = &record.faults;
    let next = |from: usize, pred: &dyn Fn(&Fault) -> bool| {
        faults[from + 1..]
            .iter()
            .find(|(_, f)| pred(f))
            .map(|(t, _)| *t)
    };
    let mut out = Vec::new();
    for (i, (t, fault)) in faults.iter().enumerate() {
        if *t > until {
            break;
        }
        if fault.node().is_some_and(|n| !nodes.contains(&n)) {
            continue;
        }
        let text = match fault {
            Fault::Crash { node } => {
                let restart = next(i, &|f| *f == Fault::Restart { node: *node });
                match restart {
                    Some(r) => format!("{} crashed at {t} (restarted at {r})", record.name(*node)),
                    None => format!("{} crashed at {t}", record.name(*node)),
                }
            }
            // Restarts are told with their crash.
            Fault::Restart { .. } => continue,
            Fault::Pause { node, duration } => format!(
                "{} was paused {t} to {}",
                record.name(*node),
                t.saturating_add(*duration)
            ),
            Fault::ClockStep { node, delta_ns } => format!(
                "{}'s wall clock stepped {} at {t}",
                record.name(*node),
                fmt_step(*delta_ns)
            ),
            Fault::SetDrift { node, drift_ppm } => format!(
                "{}'s clock drift set to {drift_ppm:+} ppm at {t}",
                record.name(*node)
            ),
            Fault::Network { rule } => {
                let heal = next(i, &|f| *f == Fault::Heal);
                match rule {
                    NetRule::Partition { groups } => {
                        let sides: Vec<String> = groups.iter().map(|g| group(record, g)).collect();
                        format!("partition {} {}", sides.join(" | "), span(*t, heal))
                    }
                    NetRule::Block { from, to } => format!(
                        "link {} -> {} blocked {}",
                        record.name(*from),
                        record.name(*to),
                        span(*t, heal)
                    ),
                    NetRule::Cut { a, b } => format!(
                        "link {} <-> {} cut {}",
                        record.name(*a),
                        record.name(*b),
                        span(*t, heal)
                    ),
                }
            }
            // Heals are told with the rules they end.
            Fault::Heal => continue,
            Fault::SetLoss { loss_ppm } => match loss_ppm {
                Some(ppm) => format!("message loss set to {ppm} ppm on every link at {t}"),
                None => format!("message loss restored to each link's own at {t}"),
            },
        };
        out.push(text);
    }
    out
}
