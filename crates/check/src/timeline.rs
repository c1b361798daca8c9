//! Reconstructions over true time shared by the checkers: the merged event order, belief
//! intervals, overlaps, node liveness, and evidence in words. Wall clocks are in
//! [`crate::clocks`], the truth of who holds a lock in [`crate::truth`].
//!
//! **Order at one instant.** Observations and faults come in two lists, merged in the order
//! the run had them: each fault keeps how many observations came before it
//! ([`RunRecord::fault_positions`]), so a claim made between a crash and a restart at one
//! instant is the restarted node's, and a fault fired by a trigger (delay 0) lands after the
//! observation that fired it. A record without positions (hand-built in tests) uses the tie
//! rule: at one true instant the observations first, then the faults.
//!
//! Intervals are half-open `[from, to)` in true ns; an interval still open at the end of the
//! record is closed at [`RunRecord::horizon`].

use crate::evidence::{Evidence, Source};
use crate::run::RunRecord;
use splitbrain_engine::{Fault, NetRule, NodeId, SimDuration, SimTime, WallTime};
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
pub(crate) fn take_node<K: Ord + Clone + Default, V>(
    open: &mut BTreeMap<(NodeId, K), V>,
    node: NodeId,
) -> Vec<((NodeId, K), V)> {
    let keys: Vec<(NodeId, K)> = open
        .range((node, K::default())..)
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

/// Observations and faults merged in true-time order (observations first at a tie), one
/// at a time (a run has many: a list of them all would be as long as the record).
pub(crate) fn steps(record: &RunRecord) -> impl Iterator<Item = Step<'_>> {
    let faults = &record.faults;
    // Positions, when known for every fault, give the run's own order.
    let positions: &[usize] = if record.fault_positions.len() == faults.len() {
        &record.fault_positions
    } else {
        &[]
    };
    let mut obs = record.observations.iter_indexed().peekable();
    let mut j = 0;
    std::iter::from_fn(move || {
        let take_obs = match obs.peek() {
            None => false,
            Some((index, o)) => {
                j >= faults.len()
                    || match positions.get(j) {
                        Some(&before) => *index < before,
                        None => o.t <= faults[j].0,
                    }
            }
        };
        if take_obs {
            let (index, o) = obs.next().expect("peeked");
            Some(Step::Obs {
                index,
                t: o.t,
                node: o.node,
                obs: &o.obs,
            })
        } else if j < faults.len() {
            j += 1;
            Some(Step::Fault {
                index: j - 1,
                t: faults[j - 1].0,
                fault: &faults[j - 1].1,
            })
        } else {
            None
        }
    })
}

/// Per node, the indices of the observations matching a predicate, for "the node's latest
/// such observation before index i" in O(log n).
pub(crate) struct PerNode {
    by_node: BTreeMap<NodeId, Vec<usize>>,
}

impl PerNode {
    pub(crate) fn new(record: &RunRecord, pred: impl Fn(&Obs) -> bool) -> PerNode {
        let mut by_node: BTreeMap<NodeId, Vec<usize>> = BTreeMap::new();
        for (i, o) in record.observations.iter_indexed() {
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
/// lock `key` (a `String`, or a `&str` borrowed from the record's observations where a long
/// run's beliefs must not each own a copy of the lock name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Belief<K = String> {
    pub node: NodeId,
    pub key: K,
    pub from: SimTime,
    pub to: SimTime,
    /// The observation that started it.
    pub start: usize,
    pub end: End,
}

/// What an observation does to a belief.
pub(crate) enum Change<K = String> {
    Start(K),
    Stop(K),
}

/// Belief intervals: a `Start(key)` opens the node's belief in `key` (a second start while
/// open continues it), a `Stop(key)` or the node's crash closes it. Sorted by `from`.
pub(crate) fn beliefs<'a, K: Ord + Clone + Default>(
    record: &'a RunRecord,
    classify: impl Fn(&'a Obs) -> Option<Change<K>>,
) -> Vec<Belief<K>> {
    let mut out = Vec::new();
    for_each_belief(record, classify, |b| out.push(b));
    // Each belief starts at its own observation, so `(from, start)` tells any two apart: an
    // unstable sort gives the stable sort's order without its scratch list.
    out.sort_unstable_by_key(|b| (b.from, b.start));
    out
}

/// The belief intervals of [`beliefs`], each given to `each` as it closes (the ones open at
/// the horizon last), in no useful order: for a caller that needs no list of them (issue
/// 11 §4). Beliefs of no length are left out.
pub(crate) fn for_each_belief<'a, K: Ord + Clone + Default>(
    record: &'a RunRecord,
    classify: impl Fn(&'a Obs) -> Option<Change<K>>,
    mut each: impl FnMut(Belief<K>),
) {
    let mut open: BTreeMap<(NodeId, K), (SimTime, usize)> = BTreeMap::new();
    let mut out = |b: Belief<K>| {
        if b.from < b.to {
            each(b);
        }
    };
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
                        out(Belief {
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
                    out(Belief {
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
    for ((node, key), (from, start)) in std::mem::take(&mut open) {
        out(Belief {
            node,
            key,
            from,
            to: horizon,
            start,
            end: End::Open,
        });
    }
}

/// Leadership beliefs: `LeaderClaim` until `LeaderStepDown` or crash, of the nodes the leader
/// invariants judge ([`RunRecord::judged_as_leader`]).
pub(crate) fn leader_beliefs(record: &RunRecord) -> Vec<Belief> {
    let mut out = beliefs(record, |o| match o {
        Obs::LeaderClaim { .. } => Some(Change::Start(String::new())),
        Obs::LeaderStepDown { .. } => Some(Change::Stop(String::new())),
        _ => None,
    });
    let judged = record.judged_as_leader();
    out.retain(|b| judged(record.roles[b.node.index()]));
    out
}

/// Lock beliefs per lock name: `LockAcquired` until `LockReleased` / `LockLost` or crash.
pub(crate) fn lock_beliefs(record: &RunRecord) -> Vec<Belief> {
    beliefs(record, |o| match o {
        Obs::LockAcquired { lock, .. } => Some(Change::Start(lock.clone())),
        Obs::LockReleased { thread: _, lock } | Obs::LockLost { lock, .. } => {
            Some(Change::Stop(lock.clone()))
        }
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

/// A wall reading as the UTC time it is ("2026-01-01T00:00:23.000Z"; nanoseconds shown
/// where they are not whole milliseconds), since wall clocks read Unix time.
pub(crate) fn fmt_wall(w: WallTime) -> String {
    w.rfc3339()
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

/// The parts that are present, in parentheses after a space (` (token 33, job 1)`), or
/// nothing: an absent token or job is left out rather than told as `none`.
fn parts(items: &[(&str, Option<String>)]) -> String {
    let present: Vec<String> = items
        .iter()
        .filter_map(|(name, v)| {
            v.as_ref().map(|v| {
                if name.is_empty() {
                    v.clone()
                } else {
                    format!("{name} {v}")
                }
            })
        })
        .collect();
    if present.is_empty() {
        String::new()
    } else {
        format!(" ({})", present.join(", "))
    }
}

fn num(x: Option<u64>) -> Option<String> {
    x.map(|v| v.to_string())
}

/// An observation in a few words.
pub(crate) fn describe(record: &RunRecord, obs: &Obs) -> String {
    let text = describe_claim(record, obs);
    match obs.thread() {
        Some(t) => format!("thread {t}: {text}"),
        None => text,
    }
}

/// [`describe`] without the worker thread.
///
/// Long because: one arm per kind of client and leader observation, each its few words.
fn describe_claim(record: &RunRecord, obs: &Obs) -> String {
    let name = |n: &NodeId| record.name(*n);
    match obs {
        Obs::SharedTokenRelease {
            lock, value, own, ..
        } => format!(
            "released {lock} with value {value} from the shared lock object (its own hold's \
             was {own})"
        ),
        Obs::LeaderClaim { term } => format!("claims leadership (term {term})"),
        Obs::LeaderStepDown { term } => format!("steps down (term {term})"),
        Obs::ElectionStarted => "starts an election".to_string(),
        Obs::LeaderKnown { leader } => format!("follows {}", name(leader)),
        Obs::LockRequested { lock, .. } => format!("requests {lock}"),
        Obs::LockAcquired {
            lock, token, value, ..
        } => format!(
            "acquired {lock}{}",
            parts(&[
                ("token", num(*token)),
                ("value", Some(value.clone()).filter(|v| !v.is_empty())),
            ])
        ),
        Obs::LockRenewed { lock, token, .. } => {
            format!("renewed {lock}{}", parts(&[("token", num(*token))]))
        }
        Obs::LockFailed {
            thread: _,
            lock,
            reason,
        } => format!("failed to acquire {lock}: {reason}"),
        Obs::LockReleased { thread: _, lock } => format!("released {lock}"),
        Obs::LockLost {
            thread: _,
            lock,
            reason,
        } => format!("lost {lock}: {reason}"),
        Obs::LockBeliefPastDeadline {
            lock,
            until_local,
            reason,
            ..
        } => match until_local {
            Some(u) => format!(
                "believes it holds {lock} past its deadline, until local {}: {reason}",
                SimDuration(u.0)
            ),
            None => format!("believes it holds {lock} with no deadline: {reason}"),
        },
        Obs::ValidityChecked {
            thread: _,
            lock,
            valid,
            remaining_ns,
        } => {
            let left = SimDuration(remaining_ns.unsigned_abs());
            match (*valid, *remaining_ns >= 0) {
                (true, true) => format!("checked validity of {lock}: valid, {left} left"),
                (true, false) => {
                    format!("checked validity of {lock}: counted valid, {left} past its deadline")
                }
                (false, true) => format!("checked validity of {lock}: not valid, {left} left"),
                (false, false) => format!("checked validity of {lock}: not valid, {left} past"),
            }
        }
        Obs::WriteSent { token, job, .. } => {
            format!(
                "sent a write{}",
                parts(&[("token", num(*token)), ("job", num(*job))])
            )
        }
        Obs::LeaseGranted { .. }
        | Obs::LeaseRenewed { .. }
        | Obs::LeaseFreed { .. }
        | Obs::RedisKeySet { .. }
        | Obs::RedisKeyExpiry { .. }
        | Obs::RedisKeyDeleted { .. }
        | Obs::RedisRestarted { .. }
        | Obs::RaftApplied { .. }
        | Obs::RaftKeyCreated { .. }
        | Obs::RaftKeyDeleted { .. }
        | Obs::RedisReplicaOf { .. }
        | Obs::RedisPromoted { .. }
        | Obs::WriteAccepted { .. }
        | Obs::WriteRejected { .. } => describe_server_claim(record, obs),
    }
}

/// [`describe_claim`] of the servers' observations (the truth: lease grants, Redis keys,
/// Raft commits, storage writes); a client's or leader's observation is not one of them.
///
/// Long because: one arm per kind of server observation, each its few words.
fn describe_server_claim(record: &RunRecord, obs: &Obs) -> String {
    let name = |n: &NodeId| record.name(*n);
    match obs {
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
        Obs::RaftApplied {
            index,
            term,
            digest,
        } => format!("applied log entry {index} (term {term}, command digest {digest:016x})"),
        Obs::RaftKeyCreated {
            lock,
            holder,
            revision,
            ..
        } => format!(
            "committed {lock} to {} (create revision {revision})",
            name(holder)
        ),
        Obs::RaftKeyDeleted {
            lock,
            revision,
            expired,
        } => format!(
            "committed the deletion of {lock} (create revision {revision}): {}",
            if *expired {
                "lease expired"
            } else {
                "released"
            }
        ),
        Obs::RedisReplicaOf { primary } => format!("replicates {}", name(primary)),
        Obs::RedisPromoted { primary } => {
            format!("promoted to primary in place of {}", name(primary))
        }
        Obs::WriteAccepted {
            writer,
            token,
            job,
            applied,
            ..
        } => format!(
            "accepted a write from {}{}",
            name(writer),
            parts(&[
                ("token", num(*token)),
                ("job", num(*job)),
                (
                    "",
                    (!*applied).then(|| "duplicate: not applied".to_string())
                ),
            ])
        ),
        Obs::WriteRejected {
            writer,
            token,
            reason,
            ..
        } => format!(
            "rejected a write from {}{}: {reason}",
            name(writer),
            parts(&[("token", num(*token))])
        ),
        _ => unreachable!("only the server observations are told here"),
    }
}

/// Observation `index` as evidence (from the record's log, or from its Redis key log).
pub(crate) fn obs_evidence(record: &RunRecord, index: usize) -> Evidence {
    let (t, node, text) = match record.observations.get(index) {
        Some(o) => (o.t, o.node, describe(record, &o.obs)),
        None => match record.redis_keys.get(index) {
            Some((t, node, obs)) => (t, node, describe(record, &obs)),
            None => panic!("observation {index} is in neither the record's log nor its key log"),
        },
    };
    Evidence {
        t,
        node: record.name(node),
        text,
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
        Fault::Network { .. }
        | Fault::Heal
        | Fault::HealPartition { .. }
        | Fault::SetLoss { .. } => ("network".to_string(), "network fault".to_string()),
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
/// rule with the next heal ("partition {n1,n2} | {n3,n4,n5} from 2.000 s to 9.000 s"). A fault
/// that changed nothing (its recorded effect is idle: a crash of a node already down, a pause of
/// a node that is down or already paused past its end) is no cause and is left out; the
/// summary notes it apart. A pause is told to when it actually ended: a crash cuts it short.
pub(crate) fn describe_faults(
    record: &RunRecord,
    nodes: &BTreeSet<NodeId>,
    until: SimTime,
) -> Vec<String> {
    describe_faults_where(record, until, |_, f| {
        f.node().map_or(true, |n| nodes.contains(&n))
    })
}

/// The faults `include(index, fault)` picks that started at or before `until`, in words, as
/// [`describe_faults`] tells them (a fault that changed nothing left out, a crash paired with
/// its restart, a rule with its heal, a pause to when it ended). Long because each kind of
/// fault is told in its own arm, after the pass that joins pauses that extend one another.
pub(crate) fn describe_faults_where(
    record: &RunRecord,
    until: SimTime,
    include: impl Fn(usize, &Fault) -> bool,
) -> Vec<String> {
    let faults = &record.faults;
    let next = |from: usize, pred: &dyn Fn(&Fault) -> bool| {
        faults[from + 1..]
            .iter()
            .find(|(_, f)| pred(f))
            .map(|(t, _)| *t)
    };
    let effects = &record.fault_effects[..];
    // A pause that extends the pause in force is one stop with it: told with the first pause
    // (its start, the last extension's end, when it was extended), not as a pause of its own.
    // Per pause index: its end as told, its nominal end, the times it was extended.
    let mut stop: Vec<(SimTime, SimTime, Vec<SimTime>)> = faults
        .iter()
        .zip(effects)
        .map(|((t, f), a)| match f {
            Fault::Pause { duration, .. } => (a.ends, t.saturating_add(*duration), Vec::new()),
            _ => (a.ends, a.ends, Vec::new()),
        })
        .collect();
    let mut extended = vec![false; faults.len()];
    let mut first: BTreeMap<NodeId, usize> = BTreeMap::new();
    for (i, ((t, f), a)) in faults.iter().zip(effects).enumerate() {
        if *t > until {
            break;
        }
        match f {
            Fault::Crash { node } => {
                first.remove(node);
            }
            Fault::Pause { node, duration } if a.idle.is_none() => match first.get(node) {
                Some(&h) if a.extends.is_some() => {
                    stop[h].0 = a.ends;
                    stop[h].1 = t.saturating_add(*duration);
                    stop[h].2.push(*t);
                    extended[i] = true;
                }
                _ => {
                    first.insert(*node, i);
                }
            },
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (i, (t, fault)) in faults.iter().enumerate() {
        if *t > until {
            break;
        }
        if !include(i, fault) || effects[i].idle.is_some() || extended[i] {
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
            // A pause ends when it actually ended: a later pause extends it, a crash cuts it
            // short.
            Fault::Pause { node, .. } => {
                let (ends, nominal, at) = &stop[i];
                let mut why: Vec<String> = Vec::new();
                if !at.is_empty() {
                    let at: Vec<String> = at.iter().map(|a| a.to_string()).collect();
                    why.push(format!("extended at {}", at.join(", ")));
                }
                if ends < nominal {
                    why.push("cut short by its crash".to_string());
                }
                let why = if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", why.join("; "))
                };
                format!("{} was paused {t} to {ends}{why}", record.name(*node))
            }
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
                // A rule ends at the next heal of every rule, or of this partition by name.
                let heal = next(i, &|f| match (f, rule) {
                    (Fault::Heal, _) => true,
                    (Fault::HealPartition { groups: g }, NetRule::Partition { groups }) => {
                        g == groups
                    }
                    _ => false,
                });
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
            Fault::Heal | Fault::HealPartition { .. } => continue,
            Fault::SetLoss { loss_ppm } => match loss_ppm {
                Some(ppm) => format!("message loss set to {ppm} ppm on every link at {t}"),
                None => format!("message loss restored to each link's own at {t}"),
            },
        };
        out.push(text);
    }
    out
}

#[cfg(test)]
mod describe_tests {
    use super::describe;

    /// A fault that changed nothing is no cause: "n5 crashed at 7.500 s" and "n5 was paused
    /// 7.800 s to 8.800 s", both with no effect (n5 was already down), are left out of a
    /// violation's causes and noted apart only.
    #[test]
    fn faults_without_effect_are_not_listed_as_causes() {
        use super::describe_faults;
        use crate::testkit::{crash, id, ms, pause, restart, Builder};
        use crate::Role;
        let rec = Builder::new(&[("n1", Role::Bully), ("n5", Role::Bully)])
            .fault(ms(7000), crash(1))
            .fault(ms(7500), crash(1))
            .fault(ms(7800), pause(1, 1000))
            .fault(ms(9000), restart(1))
            .fault(ms(9500), restart(1))
            .fault(ms(9600), pause(1, 100))
            .end(ms(12_000))
            .build();
        assert_eq!(
            rec.fault_effects.iter().map(|e| e.idle).collect::<Vec<_>>(),
            [
                None,
                Some("already down"),
                Some("down"),
                None,
                Some("up"),
                None
            ]
        );
        let nodes = [id(1)].into_iter().collect();
        assert_eq!(
            describe_faults(&rec, &nodes, ms(12_000)),
            [
                "n5 crashed at 7.000 s (restarted at 9.000 s)",
                "n5 was paused 9.600 s to 9.700 s"
            ]
        );
    }
    /// Pauses are told as the engine applied them. With n5 paused 2 s for 5 s, paused again
    /// 3 s for 1 s, crashed at 3.5 s and restarted at 4 s, the pause ran 2 s to 3.5 s (the
    /// crash ends it), and the pause at 3 s changed nothing (n5 was paused until 7 s already;
    /// the engine keeps the later end). The pause at 5.5 s, which extends the one at 5 s, is
    /// one stop with it, 5 s to 6.5 s, not a pause of its own.
    #[test]
    fn a_pause_cut_short_by_a_crash_ends_at_the_crash() {
        use super::describe_faults;
        use crate::testkit::{crash, ms, pause, restart};
        use crate::Role;
        let rec = Builder::new(&[("n1", Role::Bully), ("n5", Role::Bully)])
            .fault(ms(2000), pause(1, 5000))
            .fault(ms(3000), pause(1, 1000))
            .fault(ms(3500), crash(1))
            .fault(ms(4000), restart(1))
            .fault(ms(5000), pause(1, 1000))
            .fault(ms(5500), pause(1, 1000))
            .end(ms(10_000))
            .build();
        assert_eq!(
            rec.fault_effects.iter().map(|e| e.idle).collect::<Vec<_>>(),
            [None, Some("already paused"), None, None, None, None]
        );
        let nodes = [id(1)].into_iter().collect();
        assert_eq!(
            describe_faults(&rec, &nodes, ms(10_000)),
            [
                "n5 was paused 2.000 s to 3.500 s (cut short by its crash)",
                "n5 crashed at 3.500 s (restarted at 4.000 s)",
                // One stop: the pause at 5.5 s extends the one at 5 s.
                "n5 was paused 5.000 s to 6.500 s (extended at 5.500 s)",
            ]
        );
    }

    use crate::testkit::{id, Builder, Storage, Worker};
    use splitbrain_protocols::Obs;

    /// Evidence leaves out an absent job or token (never `job none`, `token none`) and tells
    /// a validity check in words, not as `valid=true, remaining N ns`.
    #[test]
    fn absent_tokens_and_jobs_are_left_out_of_evidence() {
        let rec = Builder::new(&[("client-1", Worker), ("storage", Storage)]).build();
        let accepted = |token, job, applied| Obs::WriteAccepted {
            writer: id(0),
            req: 1,
            token,
            job,
            applied,
        };
        assert_eq!(
            describe(&rec, &accepted(Some(33), None, true)),
            "accepted a write from client-1 (token 33)"
        );
        assert_eq!(
            describe(&rec, &accepted(None, None, true)),
            "accepted a write from client-1"
        );
        assert_eq!(
            describe(&rec, &accepted(None, Some(1), false)),
            "accepted a write from client-1 (job 1, duplicate: not applied)"
        );
        let checked = Obs::ValidityChecked {
            thread: None,
            lock: "lock".into(),
            valid: true,
            remaining_ns: 1_500_000_000,
        };
        assert_eq!(
            describe(&rec, &checked),
            "checked validity of lock: valid, 1.500 s left"
        );
        for obs in [accepted(None, None, true), checked] {
            let text = describe(&rec, &obs);
            assert!(!text.contains("none") && !text.contains("ns"), "{text}");
        }
    }
}
