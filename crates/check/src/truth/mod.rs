//! The truth about locks over true time: who truly held which lock when, rebuilt from the
//! lock servers' observations. One file per kind of lock server, each one rule:
//! - [`lease`]: a lease service's grants;
//! - [`redis_keys`]: a key's value on each Redis instance, expiring by that instance's wall
//!   clock ([`WallClocks`](crate::WallClocks));
//! - [`majority`]: a value held on a majority of Redis instances (a single instance is the
//!   majority of one);
//! - [`raft`]: a key in the Raft lock store as of the committed log.
//! - [`replication`]: a primary and its replicas are one instance, whose value is the current
//!   primary's.
//!
//! `Truth` puts them together; the checkers and the charts read only `Truth`.

pub(crate) mod lease;
pub(crate) mod majority;
pub(crate) mod raft;
pub(crate) mod redis_keys;
pub(crate) mod replication;

use crate::clocks::WallClocks;
use crate::evidence::{Evidence, Source};
use crate::run::{Role, RunRecord};
use crate::timeline::{fault_evidence, fmt_wall, obs_evidence};
use splitbrain_engine::{NodeId, SimTime, WallTime};
use splitbrain_protocols::Obs;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub use redis_keys::KeyHold;

/// Who truly held a lock over `[from, to)` (true time, ns): a lease grant, or a majority of
/// Redis instances holding one value (docs/truth.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    /// Lock (lease or key) name (one string shared by a key's pieces and majority holds:
    /// a long run keeps thousands of holds).
    pub lock: Arc<str>,
    /// The client holding it, if known (a Redis value no client reported acquiring is held
    /// by nobody we can name).
    pub holder: Option<NodeId>,
    /// Which server state makes it a hold.
    pub source: HoldSource,
    /// Start, true time.
    pub from: SimTime,
    /// End, true time (exclusive).
    pub to: SimTime,
    /// Facts that started it (exactly as many as there are: a long run keeps thousands of
    /// holds).
    pub started_by: Box<[Fact]>,
    /// Facts that ended it (empty if open at the horizon).
    pub ended_by: Box<[Fact]>,
}

/// A fact behind a piece of truth, kept as a reference into the record (an observation or a
/// fault by index) and put in words ([`Fact::evidence`]) only when a verdict cites it: a run
/// has a fact for every key and hold, and a verdict cites a few. A fact derived from the run
/// (a key's expiry by its instance's wall clock) is kept as what it says, shared by its copies.
/// 16 bytes: a long run keeps two for every key piece and several for every hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact(FactRef);

/// What a [`Fact`] refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
enum FactRef {
    /// Observation `index`, reported at true time `t`.
    Obs { index: u32, t: SimTime },
    /// Fault `index`, at true time `t`.
    Fault { index: u32, t: SimTime },
    /// A fact derived from the run, shared by every copy (a key's expiry ends its piece and
    /// the majority holds it is part of).
    Derived(Arc<Derived>),
}

/// A fact derived from the run, kept until a verdict cites it (a long run has thousands of
/// key expiries, a verdict cites a few).
#[derive(Debug, PartialEq, Eq)]
enum Derived {
    /// Key `key` holding `value` on Redis instance `node` expired at true time `t`: its wall
    /// clock read `wall`, at or past the key's `deadline`.
    KeyExpired {
        t: SimTime,
        node: NodeId,
        key: Arc<str>,
        value: Arc<str>,
        wall: WallTime,
        deadline: WallTime,
    },
}

/// An index into the record's observations or faults, as a fact keeps it.
fn short(index: usize) -> u32 {
    u32::try_from(index).expect("fewer than 2^32 observations and faults")
}

impl Fact {
    /// Observation `index` of `record`.
    pub(crate) fn obs(record: &RunRecord, index: usize) -> Fact {
        Fact::obs_at(index, record.observations[index].t)
    }

    /// Observation `index`, reported at `t` (one the record's log may not hold: a Redis key
    /// report in its [`KeyLog`](crate::KeyLog)).
    pub(crate) fn obs_at(index: usize, t: SimTime) -> Fact {
        Fact(FactRef::Obs {
            index: short(index),
            t,
        })
    }

    /// Fault `index` of `record`.
    pub(crate) fn fault(record: &RunRecord, index: usize) -> Fact {
        Fact(FactRef::Fault {
            index: short(index),
            t: record.faults[index].0,
        })
    }

    /// Key `key` holding `value` on Redis instance `node` expired at true time `t`: its wall
    /// clock read `wall` >= the key's `deadline` ([`key_expired`](crate::key_expired)).
    pub(crate) fn key_expired(
        t: SimTime,
        node: NodeId,
        key: Arc<str>,
        value: Arc<str>,
        wall: WallTime,
        deadline: WallTime,
    ) -> Fact {
        Fact(FactRef::Derived(Arc::new(Derived::KeyExpired {
            t,
            node,
            key,
            value,
            wall,
            deadline,
        })))
    }

    /// True time of the fact.
    pub fn t(&self) -> SimTime {
        match &self.0 {
            FactRef::Obs { t, .. } | FactRef::Fault { t, .. } => *t,
            FactRef::Derived(d) => match **d {
                Derived::KeyExpired { t, .. } => t,
            },
        }
    }

    /// Where it comes from.
    pub fn source(&self) -> Source {
        match self.0 {
            FactRef::Obs { index, .. } => Source::Observation(index as usize),
            FactRef::Fault { index, .. } => Source::Fault(index as usize),
            FactRef::Derived(_) => Source::Derived,
        }
    }

    /// The fact in words, as a verdict cites it; `record` is the one the truth was built from.
    pub fn evidence(&self, record: &RunRecord) -> Evidence {
        match &self.0 {
            FactRef::Obs { index, .. } => obs_evidence(record, *index as usize),
            FactRef::Fault { index, .. } => fault_evidence(record, *index as usize),
            FactRef::Derived(d) => match &**d {
                Derived::KeyExpired {
                    t,
                    node,
                    key,
                    value,
                    wall,
                    deadline,
                } => Evidence {
                    t: *t,
                    node: record.name(*node),
                    text: format!(
                        "key {key} (value {value}) expired: wall clock {} >= deadline {}",
                        fmt_wall(*wall),
                        fmt_wall(*deadline)
                    ),
                    source: Source::Derived,
                },
            },
        }
    }
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
    /// A majority (`n / 2 + 1` of the lock's `n` Redis instances) holding `value` at the key.
    RedisMajority {
        /// The value (the client's random lock value; one string shared with the key pieces).
        value: Arc<str>,
        /// The lock's instances (the set its clients ask), sorted (one list shared by the
        /// lock's holds over that set).
        instances: Arc<[NodeId]>,
    },
    /// A key of the Raft lock store, from the commit of the `Acquire` that created it (its
    /// first application on any replica) to the commit of the command that deleted it.
    Raft {
        /// The key's create revision: the holder's fencing token.
        revision: u64,
        /// The replica group.
        replicas: Vec<NodeId>,
    },
}

/// Which of a client's holds: the fencing token of a lease grant, the random value of a Redis
/// lock (`None`: any).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct HoldId {
    pub token: Option<u64>,
    pub value: Option<String>,
}

impl Hold {
    /// What the hold is, in words ("lease grant with token 17", "value v1 on a majority (2 of
    /// 3) of Redis instances"): put in words when a verdict cites it, not kept with every
    /// hold.
    pub fn what(&self) -> String {
        match &self.source {
            HoldSource::Lease { token, .. } => format!("lease grant with token {token}"),
            HoldSource::RedisMajority { value, instances } => {
                let n = instances.len();
                format!(
                    "value {value} on a majority ({} of {n}) of Redis instances",
                    n / 2 + 1
                )
            }
            HoldSource::Raft { revision, .. } => {
                format!("key with create revision {revision} in the committed Raft log")
            }
        }
    }

    /// How holds that start together on one lock with one holder are ordered: lease grants
    /// (as made), then Redis majorities by value and then instance set, then Raft keys (as
    /// made). The majorities are made a batch of key pieces at a time, the batches in the
    /// run's time order, so their own order among equals is not the one to keep.
    fn tie(&self) -> (u8, Option<(&str, &[NodeId])>) {
        match &self.source {
            HoldSource::Lease { .. } => (0, None),
            HoldSource::RedisMajority { value, instances } => (1, Some((value, instances))),
            HoldSource::Raft { .. } => (2, None),
        }
    }

    /// Whether this hold is the one `id` names.
    pub(crate) fn is(&self, id: &HoldId) -> bool {
        match &self.source {
            HoldSource::Lease { token, .. }
            | HoldSource::Raft {
                revision: token, ..
            } => id.token.map_or(true, |t| t == *token),
            HoldSource::RedisMajority { value, .. } => {
                id.value.as_deref().map_or(true, |v| v == &**value)
            }
        }
    }
}

/// The lock servers a lock's truth is built from: every server its clients ask
/// (`LockRequested { servers }`), or every lock server of the run if none is named (`lock`
/// `None`, a hand-built record, an old trace).
pub(crate) fn servers_of(record: &RunRecord, lock: Option<&str>) -> BTreeSet<NodeId> {
    let mut out = BTreeSet::new();
    if let Some(lock) = lock {
        for o in &record.observations {
            if let Obs::LockRequested {
                thread: _,
                lock: l,
                servers,
            } = &o.obs
            {
                if l == lock {
                    out.extend(servers.iter().copied());
                }
            }
        }
    }
    if out.is_empty() {
        out.extend(record.nodes_where(Role::is_lock_server));
    }
    out
}

/// The truth about locks over the run (docs/truth.md: the lock servers' state, such as the
/// lease service's grant, or a majority of the lock's Redis instances holding the client's
/// value), rebuilt from a [`RunRecord`]: the lease services' grant observations and
/// the Redis instances' key observations, keys expiring by the instance's wall clock
/// ([`WallClocks`], [`key_expired`](crate::key_expired)). Intervals are half-open in true ns; one still open at
/// the end is closed at [`RunRecord::horizon`]; empty ones are dropped.
pub struct Truth {
    /// Every hold, sorted by start (then lock, holder); empty in [`Truth::holds_uncited`]'s
    /// truth of a long run, whose holds [`Truth::all`] gives.
    pub holds: Vec<Hold>,
    /// Every Redis key held on an instance (the pieces majorities are made of), in the order
    /// they ended.
    pub keys: Vec<KeyHold>,
    /// Whether every hold keeps its facts (`started_by`, `ended_by`); see
    /// [`Truth::holds_uncited`].
    facts: bool,
    /// The holds of [`Truth::holds_uncited`]'s truth of a long run, in the lists they were
    /// made in (`holds` empty): joining them into one list would hold them twice at once.
    chunks: Vec<Vec<Hold>>,
    /// Their order (as `holds` is sorted), as `(list, place)` in `chunks`.
    order: Vec<(u32, u32)>,
}

/// The holds' spans of [`Truth::spans`], in [`Truth::all`]'s order.
pub(crate) struct Spans {
    spans: Vec<Span>,
    /// The lock names, by id.
    locks: Vec<Arc<str>>,
}

impl Spans {
    /// `(from, to, lock, holder)` of each hold, in order.
    pub(crate) fn iter(
        &self,
    ) -> impl Iterator<Item = (SimTime, SimTime, &str, Option<NodeId>)> + '_ {
        self.spans.iter().map(|s| {
            let holder = s.holder.checked_sub(1).map(NodeId);
            (s.from, s.to, &*self.locks[s.lock as usize], holder)
        })
    }
}

/// When a hold holds which lock (32 bytes; a long run has thousands).
struct Span {
    /// Start, true time.
    from: SimTime,
    /// End, true time (exclusive).
    to: SimTime,
    /// The lock's id in [`Spans::locks`].
    lock: u32,
    /// The holder's id plus one; 0: not known.
    holder: u32,
    /// Its place among the holds as they were made (lease grants, majorities, Raft keys).
    place: u32,
}

/// Spans gathered per list while the holds are made.
const SPAN_LIST: usize = 256;

/// Whether a truth's holds keep the facts behind them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Facts {
    /// Every hold keeps them.
    Keep,
    /// Only where the key pieces are made in one batch (a run with at most
    /// [`redis_keys::BATCH`] keys set): a long run's Redis majority holds keep none.
    KeepInOneBatch,
}

/// Sorts `holds` by start, then lock, then holder, keeping the order of equals (as a stable
/// sort does) without a stable sort's scratch buffer, which holds up to as many holds again
/// (163 KB beside the 163 KB list in lesson 15 run for 3,000 s): the order is
/// found on a list of positions (4 bytes each) and applied by swapping along its cycles.
fn sort_in_place(holds: &mut [Hold]) {
    let n = u32::try_from(holds.len()).expect("fewer than 2^32 holds");
    let mut order: Vec<u32> = (0..n).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&holds[a as usize], &holds[b as usize]);
        (a.from, &a.lock, a.holder, a.tie()).cmp(&(b.from, &b.lock, b.holder, b.tie()))
    });
    // Position `i` takes the hold at `order[i]`; a position done is marked `u32::MAX`.
    for start in 0..holds.len() {
        let mut at = start;
        while order[at] != u32::MAX {
            let from = order[at] as usize;
            order[at] = u32::MAX;
            if from == start {
                break;
            }
            holds.swap(at, from);
            at = from;
        }
    }
}

impl Truth {
    /// Rebuilds the truth of `record`, judging Redis key expiry with `clocks` (built from the
    /// same record).
    pub fn new(record: &RunRecord, clocks: &WallClocks) -> Truth {
        Truth::build(record, clocks, true, Facts::Keep)
    }

    /// [`Truth::new`] without [`Truth::keys`], for the checkers, which read only the holds:
    /// the key pieces (one a key set on an instance, thousands in a long run) are made in
    /// batches of a few hundred `(key, value)` pairs' pieces, each freed once its holds are
    /// made, so they are never all alive (in lesson 15 run for 3,000 s they are
    /// 6,857 pieces, 0.66 MB, beside a 1.45 MB record); the same holds in the same order.
    pub fn holds_only(record: &RunRecord, clocks: &WallClocks) -> Truth {
        Truth::build(record, clocks, false, Facts::Keep)
    }

    /// [`Truth::holds_only`] for the checkers, whose verdicts cite the facts of a hold only
    /// where it is part of a violation: where the key pieces are made in more than one batch
    /// (more than [`redis_keys::BATCH`] keys set), the Redis majority holds keep no facts
    /// (`started_by`, `ended_by` empty, no key expiry derived as a fact), and a verdict that
    /// cites one finds them in a truth built with them ([`Truth::holds_only`], the same holds
    /// in the same order): lesson 15 run for 3,000 s has 1,355 holds with 3,
    /// 4 or 5 facts at each end, 0.2 MB of facts no verdict cites. [`Truth::keeps_facts`] says
    /// which this truth is.
    pub(crate) fn holds_uncited(record: &RunRecord, clocks: &WallClocks) -> Truth {
        Truth::build(record, clocks, false, Facts::KeepInOneBatch)
    }

    /// Where and when each hold of [`Truth::holds_uncited`] holds what, in [`Truth::all`]'s
    /// order (by start, then lock, then holder, equals as they were made), for the readers
    /// that need no more of a hold (`lock_progress`, the metric `no_valid_hold_ns`). Each hold
    /// is made as there and reduced to a [`Span`] as it is made, so the holds are never all
    /// alive: lesson 15 run for 3,000 s has 1,355 majority holds of 112 bytes
    /// (0.16 MB with their list of places); their spans take 32 bytes each, gathered in
    /// lists of [`SPAN_LIST`] and moved into one list of the exact size, never grown by
    /// doubling (which held 1.5 times the final list's memory at once).
    pub(crate) fn spans(record: &RunRecord, clocks: &WallClocks) -> Spans {
        let mut lists: Vec<Vec<Span>> = Vec::new();
        let mut locks: Vec<Arc<str>> = Vec::new();
        let mut lock_ids: BTreeMap<Arc<str>, u32> = BTreeMap::new();
        let mut made: u32 = 0;
        let mut take = |h: Hold| {
            let lock = match lock_ids.get(&h.lock) {
                Some(&id) => id,
                None => {
                    let id = u32::try_from(locks.len()).expect("fewer than 2^32 locks");
                    locks.push(h.lock.clone());
                    lock_ids.insert(h.lock, id);
                    id
                }
            };
            let span = Span {
                from: h.from,
                to: h.to,
                lock,
                holder: h
                    .holder
                    .map_or(0, |n| n.0.checked_add(1).expect("a node id below u32::MAX")),
                place: made,
            };
            made = made.checked_add(1).expect("fewer than 2^32 holds");
            match lists.last_mut() {
                Some(list) if list.len() < SPAN_LIST => list.push(span),
                _ => {
                    let mut list = Vec::with_capacity(SPAN_LIST);
                    list.push(span);
                    lists.push(list);
                }
            }
        };
        lease::holds(record).into_iter().for_each(&mut take);
        let (kept, batches) =
            redis_keys::key_hold_batches(record, clocks, redis_keys::BATCH, Facts::KeepInOneBatch);
        majority::for_each_hold(record, batches, kept, &mut take);
        raft::holds(record).into_iter().for_each(&mut take);
        drop(lock_ids);
        let mut spans = Vec::with_capacity(made as usize);
        for list in lists {
            spans.extend(list);
        }
        // Every place once: the unstable sort gives the one order.
        spans.sort_unstable_by(|a, b| {
            (a.from, &locks[a.lock as usize], a.holder, a.place).cmp(&(
                b.from,
                &locks[b.lock as usize],
                b.holder,
                b.place,
            ))
        });
        Spans { spans, locks }
    }

    /// Whether every hold keeps its facts (always, but in [`Truth::holds_uncited`]'s truth of
    /// a long run).
    pub(crate) fn keeps_facts(&self) -> bool {
        self.facts
    }

    fn build(record: &RunRecord, clocks: &WallClocks, keep_keys: bool, facts: Facts) -> Truth {
        let lease = lease::holds(record);
        let (keys, majority, kept) = if keep_keys {
            let keys = redis_keys::key_holds(record, clocks);
            let majority = majority::holds(record, [&keys[..]], true);
            (keys, majority, true)
        } else {
            // The key pieces in batches, each freed before the next is made: they are never
            // all alive at once.
            let (kept, batches) =
                redis_keys::key_hold_batches(record, clocks, redis_keys::BATCH, facts);
            (Vec::new(), majority::holds(record, batches, kept), kept)
        };
        let raft = raft::holds(record);
        if !kept {
            // A long run's holds are left in the lists they were made in, and sorted by a
            // list of their places (8 bytes a hold): one list of them all would be made while
            // the lists are alive, 0.15 MB in lesson 15 run for 3,000 s.
            let mut chunks = majority;
            chunks.insert(0, lease);
            chunks.push(raft);
            let mut order: Vec<(u32, u32)> = Vec::new();
            let n = chunks.iter().map(Vec::len).sum::<usize>();
            order.reserve_exact(n);
            for (c, chunk) in chunks.iter().enumerate() {
                let c = u32::try_from(c).expect("fewer than 2^32 lists");
                let len = u32::try_from(chunk.len()).expect("fewer than 2^32 holds");
                order.extend((0..len).map(|i| (c, i)));
            }
            // Ties in their first order, as the stable sort of `sort_in_place` leaves them.
            let at = |&(c, i): &(u32, u32)| &chunks[c as usize][i as usize];
            order.sort_unstable_by(|a, b| {
                let (x, y) = (at(a), at(b));
                (x.from, &x.lock, x.holder, x.tie())
                    .cmp(&(y.from, &y.lock, y.holder, y.tie()))
                    .then(a.cmp(b))
            });
            return Truth {
                holds: Vec::new(),
                keys,
                facts: false,
                chunks,
                order,
            };
        }
        let n = lease.len() + majority.iter().map(Vec::len).sum::<usize>() + raft.len();
        let mut holds = Vec::with_capacity(n);
        holds.extend(lease);
        for chunk in majority {
            holds.extend(chunk);
        }
        holds.extend(raft);
        sort_in_place(&mut holds);
        Truth {
            holds,
            keys,
            facts: kept,
            chunks: Vec::new(),
            order: Vec::new(),
        }
    }

    /// Every hold, sorted by start (then lock, holder): [`Truth::holds`], or the holds of
    /// [`Truth::holds_uncited`]'s truth of a long run.
    pub fn all(&self) -> impl Iterator<Item = &Hold> + '_ {
        let chunked = self
            .order
            .iter()
            .map(|&(c, i)| &self.chunks[c as usize][i as usize]);
        self.holds.iter().chain(chunked)
    }

    /// Holds of `lock` (any lock if `None`) that contain instant `t`.
    pub fn at<'a>(
        &'a self,
        lock: Option<&'a str>,
        t: SimTime,
    ) -> impl Iterator<Item = &'a Hold> + 'a {
        self.all()
            .filter(move |h| lock.map_or(true, |l| &*h.lock == l) && h.from <= t && t < h.to)
    }

    /// The latest hold of `lock` (any if `None`) by `who` that started at or before `t`.
    pub fn last_by(&self, lock: Option<&str>, who: NodeId, t: SimTime) -> Option<&Hold> {
        self.all()
            .filter(|h| {
                lock.map_or(true, |l| &*h.lock == l) && h.holder == Some(who) && h.from <= t
            })
            .max_by_key(|h| h.from)
    }
}

#[cfg(test)]
mod tests {
    use super::{servers_of, Facts, Hold, HoldId, HoldSource, Truth};
    use crate::clocks::WallClocks;
    use crate::testkit::*;
    use splitbrain_engine::SimTime;
    use splitbrain_protocols::Obs;

    fn hold(source: HoldSource) -> Hold {
        Hold {
            lock: "l".into(),
            holder: Some(id(1)),
            source,
            from: ms(0),
            to: ms(1),
            started_by: Box::new([]),
            ended_by: Box::new([]),
        }
    }

    /// Majority holds made from key pieces in batches of a few `(key, value)` pairs are the
    /// holds made from every piece at once, in the truth's order once sorted: 40 values, each
    /// set on two or three of three instances, some deleted, some expiring, some overwritten.
    #[test]
    fn holds_from_batches_of_key_pieces_are_the_holds_from_all() {
        use splitbrain_engine::WallTime;
        let mut b = Builder::new(&[
            ("a", RedisInstance),
            ("b", RedisInstance),
            ("c", RedisInstance),
            ("w", Worker),
        ]);
        for v in 0..40_u64 {
            let value = format!("v{}", (v * 7) % 40);
            let t = 1_000 + v * 100;
            for i in 0..(2 + v % 2) as u32 {
                let key = ["k", "j"][(v % 3 == 0) as usize].to_string();
                let deadline = Some(WallTime(((t + 50 + 40 * (v % 4)) * 1_000_000) as i64));
                b = b.obs(
                    ms(t + u64::from(i)),
                    (i + v as u32) % 3,
                    Obs::RedisKeySet {
                        key: key.clone(),
                        value: value.clone(),
                        deadline_wall: deadline,
                    },
                );
                if v % 5 == 0 {
                    b = b.obs(
                        ms(t + 30 + u64::from(i)),
                        (i + v as u32) % 3,
                        Obs::RedisKeyDeleted { key },
                    );
                }
            }
        }
        let r = b.end(ms(10_000)).build();
        let clocks = WallClocks::new(&r);
        let all = super::redis_keys::key_holds(&r, &clocks);
        // The batches follow the run in time: their holds are those made from every piece,
        // in the truth's order once sorted.
        let sorted = |mut holds: Vec<Hold>| {
            super::sort_in_place(&mut holds);
            holds
        };
        let want: Vec<Hold> = sorted(super::majority::holds(&r, [&all[..]], true).concat());
        assert!(want.len() > 20, "{} holds", want.len());
        for batch in [1, 3, 10] {
            let (kept, batches) =
                super::redis_keys::key_hold_batches(&r, &clocks, batch, Facts::Keep);
            assert!(kept);
            let got: Vec<Hold> = sorted(super::majority::holds(&r, batches, kept).concat());
            assert_eq!(got, want, "batches of {batch}");
            // Kept only in one batch: the same holds in the same order, without their facts.
            let (kept, batches) =
                super::redis_keys::key_hold_batches(&r, &clocks, batch, Facts::KeepInOneBatch);
            assert!(!kept, "batches of {batch}");
            let got: Vec<Hold> = sorted(super::majority::holds(&r, batches, kept).concat());
            let bare = |h: &Hold| Hold {
                started_by: Box::new([]),
                ended_by: Box::new([]),
                ..h.clone()
            };
            assert!(want.iter().any(|h| !h.ended_by.is_empty()));
            assert!(got
                .iter()
                .all(|h| h.started_by.is_empty() && h.ended_by.is_empty()));
            assert_eq!(
                got,
                want.iter().map(bare).collect::<Vec<_>>(),
                "batches of {batch}"
            );
        }
        // In one batch every fact is kept.
        let (kept, batches) =
            super::redis_keys::key_hold_batches(&r, &clocks, 10_000, Facts::KeepInOneBatch);
        assert!(kept);
        assert_eq!(
            sorted(super::majority::holds(&r, batches, kept).concat()),
            want
        );
    }

    /// The checkers' truth of a run with more keys set than one batch makes
    /// keeps its holds in the lists they were made in, without facts; [`Truth::all`] gives
    /// the holds of the truth built with them, in the same order, without their facts.
    #[test]
    fn a_long_runs_uncited_truth_has_the_same_holds_in_the_same_order() {
        use splitbrain_engine::WallTime;
        let mut b = Builder::new(&[
            ("a", RedisInstance),
            ("b", RedisInstance),
            ("c", RedisInstance),
            ("w", Worker),
        ]);
        for v in 0..400_u64 {
            // Values out of order, many holds starting at one instant on two keys.
            let value = format!("v{}", (v * 7) % 400);
            let t = 1_000 + (v / 3) * 100;
            for i in 0..(2 + v % 2) as u32 {
                let key = ["k", "j"][(v % 3 == 0) as usize].to_string();
                let deadline = Some(WallTime(((t + 50 + 40 * (v % 4)) * 1_000_000) as i64));
                b = b.obs(
                    ms(t),
                    (i + v as u32) % 3,
                    Obs::RedisKeySet {
                        key: key.clone(),
                        value: value.clone(),
                        deadline_wall: deadline,
                    },
                );
            }
        }
        let r = b.end(ms(100_000)).build();
        let clocks = WallClocks::new(&r);
        let full = Truth::holds_only(&r, &clocks);
        let uncited = Truth::holds_uncited(&r, &clocks);
        assert!(full.keeps_facts() && !uncited.keeps_facts());
        assert!(uncited.holds.is_empty());
        assert!(full.holds.len() > 200, "{} holds", full.holds.len());
        let bare: Vec<Hold> = full
            .holds
            .iter()
            .map(|h| Hold {
                started_by: Box::new([]),
                ended_by: Box::new([]),
                ..h.clone()
            })
            .collect();
        assert_eq!(uncited.all().cloned().collect::<Vec<_>>(), bare);
        assert!(full.all().eq(full.holds.iter()));
        // The spans, made without keeping the holds, are theirs in their order.
        let spans = |t: &Truth| -> Vec<(SimTime, SimTime, std::sync::Arc<str>)> {
            t.all().map(|h| (h.from, h.to, h.lock.clone())).collect()
        };
        let made: Vec<(SimTime, SimTime, std::sync::Arc<str>)> = Truth::spans(&r, &clocks)
            .iter()
            .map(|(from, to, lock, _)| (from, to, lock.into()))
            .collect();
        assert_eq!(made, spans(&uncited));
        // Also where the key pieces are made in one batch (a short run).
        let short = Builder::new(&[("a", RedisInstance), ("w", Worker)])
            .obs(
                ms(5),
                0,
                Obs::RedisKeySet {
                    key: "k".to_string(),
                    value: "v".to_string(),
                    deadline_wall: None,
                },
            )
            .end(ms(100))
            .build();
        let clocks = WallClocks::new(&short);
        let made: Vec<(SimTime, SimTime, std::sync::Arc<str>)> = Truth::spans(&short, &clocks)
            .iter()
            .map(|(from, to, lock, _)| (from, to, lock.into()))
            .collect();
        assert_eq!(made.len(), 1);
        assert_eq!(made, spans(&Truth::holds_uncited(&short, &clocks)));
    }

    /// The in-place sort orders holds exactly as the stable sort did: by start, lock and
    /// holder, equals in their first order (told apart here by their end).
    #[test]
    fn holds_are_sorted_in_place_as_a_stable_sort_sorts_them() {
        for n in [0_u64, 1, 2, 7, 64, 301] {
            let holds: Vec<Hold> = (0..n)
                .map(|i| {
                    let mut h = hold(HoldSource::Lease {
                        service: id(0),
                        token: i,
                    });
                    // A pseudo-random start, lock and holder with many ties.
                    let x = i.wrapping_mul(2_654_435_761) % 97;
                    h.from = ms(x % 5);
                    h.lock = ["l", "m"][(x % 2) as usize].into();
                    h.holder = (x % 3 != 0).then(|| id((x % 3) as u32));
                    h.to = ms(1_000 + i);
                    h
                })
                .collect();
            let mut want = holds.clone();
            want.sort_by(|a, b| (a.from, &a.lock, a.holder).cmp(&(b.from, &b.lock, b.holder)));
            let mut got = holds;
            super::sort_in_place(&mut got);
            assert_eq!(got, want, "{n} holds");
        }
    }

    /// A fact is 16 bytes, and so is one that may be missing: a long run keeps two for every
    /// key piece and several for every hold.
    #[test]
    fn a_fact_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<super::Fact>(), 16);
        assert_eq!(std::mem::size_of::<Option<super::Fact>>(), 16);
    }

    /// `(hold, id) -> is`: a token names a lease grant, a value a Redis majority; `None`
    /// names any.
    #[test]
    fn a_hold_id_names_a_token_or_a_value() {
        let lease = hold(HoldSource::Lease {
            service: id(0),
            token: 5,
        });
        let redis = hold(HoldSource::RedisMajority {
            value: "v".into(),
            instances: vec![id(0)].into(),
        });
        let hid = |token: Option<u64>, value: Option<&str>| HoldId {
            token,
            value: value.map(str::to_string),
        };
        for (h, i, expect) in [
            (&lease, hid(Some(5), None), true),
            (&lease, hid(Some(6), None), false),
            (&lease, hid(None, Some("w")), true),
            (&redis, hid(None, Some("v")), true),
            (&redis, hid(None, Some("w")), false),
            (&redis, hid(Some(6), None), true),
        ] {
            assert_eq!(h.is(&i), expect, "{:?} is {i:?}", h.source);
        }
    }

    /// A lock's servers are the ones its clients ask; a lock nobody asks about (or none)
    /// is judged over every lock server.
    #[test]
    fn a_locks_servers_are_the_ones_its_clients_ask() {
        let requested = |lock: &str, servers: &[u32]| Obs::LockRequested {
            thread: None,
            lock: lock.to_string(),
            servers: servers.iter().map(|&i| id(i)).collect(),
        };
        let r = Builder::new(&[
            ("redis-a", RedisInstance),
            ("redis-b", RedisInstance),
            ("locks", LeaseService),
            ("c1", Worker),
            ("c2", Worker),
        ])
        .obs(ms(1), 3, requested("x", &[0]))
        .obs(ms(2), 4, requested("y", &[1]))
        .obs(ms(3), 4, requested("x", &[0]))
        .end(ms(10))
        .build();
        for (lock, expect) in [
            (Some("x"), vec![0]),
            (Some("y"), vec![1]),
            (Some("z"), vec![0, 1, 2]),
            (None, vec![0, 1, 2]),
        ] {
            let got: Vec<u32> = servers_of(&r, lock).into_iter().map(|n| n.0).collect();
            assert_eq!(got, expect, "{lock:?}");
        }
    }

    /// Lease `l`: client 1 holds 1 s..3 s, client 2 3 s..5 s; lease `m`: client 1 2 s..4 s.
    #[test]
    fn holds_at_an_instant_and_a_clients_latest_hold() {
        let granted = |lease: &str, holder: u32, token: u64| Obs::LeaseGranted {
            lease: lease.to_string(),
            holder: id(holder),
            token,
            ttl_ns: 10_000_000_000,
        };
        let freed = |lease: &str, holder: u32, token: u64| Obs::LeaseFreed {
            lease: lease.to_string(),
            holder: id(holder),
            token,
            expired: false,
        };
        let r = Builder::new(&[("locks", LeaseService), ("c1", Worker), ("c2", Worker)])
            .obs(ms(1_000), 0, granted("l", 1, 1))
            .obs(ms(2_000), 0, granted("m", 1, 1))
            .obs(ms(3_000), 0, granted("l", 2, 2))
            .obs(ms(4_000), 0, freed("m", 1, 1))
            .obs(ms(5_000), 0, freed("l", 2, 2))
            .end(ms(10_000))
            .build();
        let truth = Truth::new(&r, &WallClocks::new(&r));
        let span = |h: &Hold| (h.lock.to_string(), h.holder.map(|n| n.0), h.from);
        for (lock, t, expect) in [
            (Some("l"), ms(999), vec![]),
            (Some("l"), ms(1_000), vec![("l", 1, 1_000)]),
            (Some("l"), SimTime(2_999_999_999), vec![("l", 1, 1_000)]),
            (Some("l"), ms(3_000), vec![("l", 2, 3_000)]),
            (None, ms(3_000), vec![("m", 1, 2_000), ("l", 2, 3_000)]),
            (Some("m"), ms(3_000), vec![("m", 1, 2_000)]),
            (Some("l"), ms(5_000), vec![]),
        ] {
            let got: Vec<_> = truth.at(lock, t).map(span).collect();
            let expect: Vec<_> = expect
                .into_iter()
                .map(|(l, c, f)| (l.to_string(), Some(c), ms(f)))
                .collect();
            assert_eq!(got, expect, "{lock:?} at {t}");
        }
        for (lock, who, t, expect) in [
            (Some("l"), 1, ms(10_000), Some(("l", 1_000))),
            (None, 1, ms(10_000), Some(("m", 2_000))),
            (Some("l"), 1, ms(999), None),
            (Some("l"), 2, ms(3_000), Some(("l", 3_000))),
            (Some("l"), 2, ms(2_999), None),
            (Some("m"), 2, ms(10_000), None),
        ] {
            let got = truth.last_by(lock, id(who), t).map(|h| (&*h.lock, h.from));
            assert_eq!(
                got,
                expect.map(|(l, f)| (l, ms(f))),
                "{lock:?} by {who} at {t}"
            );
        }
    }
}
