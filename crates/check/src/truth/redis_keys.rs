//! Redis key truth: which value each Redis instance holds at each key over true time, keys
//! expiring by the instance's own wall clock ([`key_expired`](crate::key_expired)).

use super::Fact;
use crate::clocks::WallClocks;
use crate::key_log::{KeyLog, KeyObs};
use crate::run::{Role, RunRecord};
use splitbrain_engine::{NodeId, SimTime, WallTime};
use splitbrain_protocols::Obs;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// One shared copy of each distinct string (keys and values), for the pieces: the key log's
/// ([`RunRecord::redis_keys`]) if it keeps it, so a long run's values are not held twice.
struct Strings<'a>(&'a KeyLog, BTreeSet<Arc<str>>);

impl Strings<'_> {
    fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.0.shared(s) {
            return a;
        }
        if let Some(a) = self.1.get(s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(s);
        self.1.insert(a.clone());
        a
    }
}

/// One Redis instance holding `value` at `key` over `[from, to)` (true time, ns): from the
/// instance's `SET` (or its restart with the key) until `DEL` (a deletion by lazy expiry
/// included), a new `SET`, its return from a crash (`RedisRestarted`: it then holds only the
/// keys it came back with, as its persistence decides), or the key's expiry by the instance's
/// wall clock ([`key_expired`](crate::key_expired)). While the instance is down (crashed, or
/// restarted but still in its restart delay) it answers nobody, so it grants the key to no one
/// else: the key goes on counting for its value until its deadline or the instance's return.
/// A backward clock step makes an expired key live again, which starts a new piece, unless the
/// instance deleted it in between (an access to an expired key deletes it and is observed), as
/// the Redis model does. A change of the key's expiry (`PEXPIRE`) ends the piece with no
/// evidence and the next piece of the same key and value starts at that instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyHold {
    /// The Redis instance.
    pub instance: NodeId,
    /// The key (one string shared by every piece of the key).
    pub key: Arc<str>,
    /// The value it holds (one string shared by every piece holding it, on any instance: a
    /// long run has thousands of pieces and a value is on several instances).
    pub value: Arc<str>,
    /// The client that reported acquiring lock `key` with `value` (the first to), if any.
    pub holder: Option<NodeId>,
    /// Start, true time.
    pub from: SimTime,
    /// End, true time (exclusive).
    pub to: SimTime,
    /// The fact that started it.
    pub start: Fact,
    /// The fact that ended it: the event, or the expiry (derived); `None` if it lasted to the
    /// horizon or the key's expiry changed at `to` (the next piece continues it).
    pub end: Option<Fact>,
}

/// An open Redis key on one instance.
struct KeySeg {
    value: Arc<str>,
    deadline: Option<WallTime>,
    since: SimTime,
    start: Fact,
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

/// The Redis key reports of `record` in order, `(index, t, node, report)`: those in its log
/// and those in its key log ([`RunRecord::redis_keys`]), merged by index.
fn key_reports(record: &RunRecord) -> impl Iterator<Item = (usize, SimTime, NodeId, KeyObs<'_>)> {
    let mut logged = record
        .observations
        .iter_indexed()
        .filter_map(|(i, o)| KeyObs::of(&o.obs).map(|k| (i, o.t, o.node, k)))
        .peekable();
    let mut compact = record.redis_keys.iter().peekable();
    std::iter::from_fn(move || {
        #[cfg(test)]
        tests::WALKED.with(|w| w.set(w.get() + 1));
        let from_log = match (logged.peek(), compact.peek()) {
            (Some(a), Some(b)) => a.0 < b.0,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if from_log {
            logged.next()
        } else {
            compact.next()
        }
    })
}

/// Every key held on every Redis instance of the run, as [`KeyHold`]s in the order they ended.
pub(crate) fn key_holds(record: &RunRecord, clocks: &WallClocks) -> Vec<KeyHold> {
    let Some(pass) = Pass::new(record, clocks, true) else {
        return Vec::new();
    };
    let sets = pass.openers().0;
    Walk::new(pass, Sink::All(Vec::with_capacity(sets))).all()
}

/// Key pieces a batch of [`key_hold_batches`] holds for the checkers (more only where the
/// `(key, value)` pairs completed by one report have more): a run with fewer keys set is one
/// batch, made in one pass as [`key_holds`] makes it.
pub(crate) const BATCH: usize = 512;

/// The key pieces of [`key_holds`], in batches of about `batch` ([`BATCH`]), each freed by
/// the caller before the next is made: a caller that reads the pieces one `(key, value)` at a
/// time (the majority holds) never holds them all (lesson 15 run for 3,000 s has 6,857
/// pieces, 0.66 MB, beside a 1.45 MB record). Every pair's pieces are in one batch, in the
/// order they ended; a pair goes to the batch being filled once its last segment has closed
/// and no later report opens it again, so the batches follow the run in time, and the pieces
/// of one `(key, value)` are the same as in [`key_holds`]. Two passes over the key reports in
/// all, whatever the run's length: the first finds each pair's last opening report (8 bytes a
/// pair kept), the second makes the pieces.
///
/// With `facts` [`Facts::KeepInOneBatch`](super::Facts::KeepInOneBatch), pieces made in more
/// than one batch keep no end fact derived from a key's expiry ([`KeyHold::end`] is `None`
/// there): the majority holds made of them keep no facts. Also returns whether the pieces
/// keep every fact.
pub(crate) fn key_hold_batches<'r>(
    record: &'r RunRecord,
    clocks: &'r WallClocks,
    batch: usize,
    facts: super::Facts,
) -> (bool, impl Iterator<Item = Vec<KeyHold>> + 'r) {
    let Some(mut pass) = Pass::new(record, clocks, true) else {
        return (true, Batches::Done);
    };
    let (sets, last) = pass.openers();
    if sets <= batch {
        let one = Walk::new(pass, Sink::All(Vec::with_capacity(sets))).all();
        return (true, Batches::One(Some(one)));
    }
    pass.facts = facts == super::Facts::Keep;
    let kept = pass.facts;
    let walk = Walk::new(
        pass,
        Sink::Pairs {
            pairs: BTreeMap::new(),
            last,
            next: 0,
            done: Vec::new(),
        },
    );
    (
        kept,
        Batches::Many {
            walk: Box::new(walk),
            batch,
        },
    )
}

/// The batches of [`key_hold_batches`].
enum Batches<'r> {
    /// No Redis instance.
    Done,
    /// Every piece in one batch.
    One(Option<Vec<KeyHold>>),
    /// Batches made as the reports are walked (boxed: the walk's state is large, and it is
    /// made once a check).
    Many { walk: Box<Walk<'r>>, batch: usize },
}

impl Iterator for Batches<'_> {
    type Item = Vec<KeyHold>;

    fn next(&mut self) -> Option<Vec<KeyHold>> {
        match self {
            Batches::Done => None,
            Batches::One(one) => one.take(),
            Batches::Many { walk, batch } => walk.batch(*batch),
        }
    }
}

/// What every pass over a run's key reports shares: its Redis instances and the owner of each
/// `(lock, value)`.
struct Pass<'r> {
    record: &'r RunRecord,
    clocks: &'r WallClocks,
    instances: Vec<NodeId>,
    owner: BTreeMap<(&'r str, &'r str), NodeId>,
    /// Whether a piece ended by its key's expiry keeps that fact (an allocation each).
    facts: bool,
}

impl<'r> Pass<'r> {
    /// `None` if the run has no Redis instance.
    fn new(record: &'r RunRecord, clocks: &'r WallClocks, facts: bool) -> Option<Pass<'r>> {
        let instances = record.nodes_where(|r| r == Role::RedisInstance);
        if instances.is_empty() {
            return None;
        }
        Some(Pass {
            record,
            clocks,
            instances,
            owner: value_owners(record),
            facts,
        })
    }

    fn is_instance(&self, n: NodeId) -> bool {
        self.instances.contains(&n)
    }

    /// The keys set on instances (every one is at least one piece; more only where a clock
    /// step splits one), and the last report that opens each `(key, value)` on an instance
    /// (a set, or a restart with the key), as `(index, place among the restart's keys)`, in
    /// order.
    fn openers(&self) -> (usize, Vec<(u32, u32)>) {
        let mut last: BTreeMap<(&'r str, &'r str), (u32, u32)> = BTreeMap::new();
        let mut sets = 0;
        for (index, _, node, report) in key_reports(self.record) {
            if !self.is_instance(node) {
                continue;
            }
            let index = u32::try_from(index).expect("fewer than 2^32 observations");
            match report {
                KeyObs::Set { key, value, .. } => {
                    sets += 1;
                    last.insert((key, value), (index, 0));
                }
                KeyObs::Restarted { keys } => {
                    for (place, (key, value, _)) in keys.iter().enumerate() {
                        let place = u32::try_from(place).expect("fewer than 2^32 keys");
                        last.insert((key.as_str(), value.as_str()), (index, place));
                    }
                }
                KeyObs::Expiry { .. } | KeyObs::Deleted { .. } => {}
            }
        }
        let mut last: Vec<(u32, u32)> = last.into_values().collect();
        last.sort_unstable();
        (sets, last)
    }
}

/// Where a [`Walk`] puts the pieces it makes.
enum Sink {
    /// Every piece, in the order they ended.
    All(Vec<KeyHold>),
    /// Each `(key, value)`'s pieces apart until the pair is complete, then in `done`.
    Pairs {
        /// The pairs not complete yet, by key and value.
        pairs: BTreeMap<Arc<str>, BTreeMap<Arc<str>, PairPieces>>,
        /// The last opening report of each pair ([`Pass::openers`]), and the next to come.
        last: Vec<(u32, u32)>,
        next: usize,
        /// The pieces of complete pairs, pair after pair: the batch being filled.
        done: Vec<KeyHold>,
    },
}

/// A `(key, value)` pair's pieces while it is not complete.
#[derive(Default)]
struct PairPieces {
    pieces: Vec<KeyHold>,
    /// Its open segments (on any instance).
    open: u32,
    /// Whether its last opening report is past.
    last_opened: bool,
}

/// One walk over a run's key reports, closing segments into pieces.
struct Walk<'r> {
    pass: Pass<'r>,
    reports: Box<dyn Iterator<Item = (usize, SimTime, NodeId, KeyObs<'r>)> + 'r>,
    /// The open segments, by instance and then key.
    open: BTreeMap<NodeId, BTreeMap<Arc<str>, KeySeg>>,
    strings: Strings<'r>,
    sink: Sink,
    /// Whether every report has been walked and every segment closed.
    ended: bool,
}

impl<'r> Walk<'r> {
    fn new(pass: Pass<'r>, sink: Sink) -> Walk<'r> {
        let record = pass.record;
        Walk {
            reports: Box::new(key_reports(record)),
            strings: Strings(&record.redis_keys, BTreeSet::new()),
            pass,
            open: BTreeMap::new(),
            sink,
            ended: false,
        }
    }

    /// Walks every report; the pieces of [`Sink::All`].
    fn all(mut self) -> Vec<KeyHold> {
        while let Some(report) = self.reports.next() {
            self.step(report);
        }
        self.end();
        match self.sink {
            Sink::All(mut held) => {
                held.retain(|h| h.from < h.to);
                held
            }
            Sink::Pairs { done, .. } => done,
        }
    }

    /// The next batch of at least `batch` pieces (fewer only at the end), of whole pairs.
    fn batch(&mut self, batch: usize) -> Option<Vec<KeyHold>> {
        if self.ended {
            return None;
        }
        if let Sink::Pairs { done, .. } = &mut self.sink {
            // A pair's pieces come in whole, so a batch goes a little past `batch`.
            *done = Vec::with_capacity(batch + batch / 4);
        }
        loop {
            match self.reports.next() {
                Some(report) => self.step(report),
                None => {
                    self.end();
                    self.ended = true;
                }
            }
            let full = match &self.sink {
                Sink::Pairs { done, .. } => done.len() >= batch,
                Sink::All(_) => false,
            };
            if full || self.ended {
                break;
            }
        }
        let made = match &mut self.sink {
            Sink::Pairs { done, .. } => std::mem::take(done),
            Sink::All(held) => std::mem::take(held),
        };
        (!made.is_empty() || !self.ended).then_some(made)
    }

    /// Closes every segment still open at the horizon; in [`Sink::Pairs`], every pair is
    /// then complete.
    fn end(&mut self) {
        let horizon = self.pass.record.horizon();
        for (node, keys) in std::mem::take(&mut self.open) {
            for (key, seg) in keys {
                self.close(node, &key, seg, horizon, None, false);
            }
        }
        if let Sink::Pairs { pairs, done, .. } = &mut self.sink {
            for (_, values) in std::mem::take(pairs) {
                for (_, mut pair) in values {
                    pair.pieces.retain(|h| h.from < h.to);
                    done.append(&mut pair.pieces);
                }
            }
        }
    }

    /// Opens a segment of `key` holding `value` on `node` from `t`, started by report
    /// `index` (its `place`-th key if a restart).
    fn open(
        &mut self,
        node: NodeId,
        key: &str,
        value: &str,
        deadline: Option<WallTime>,
        t: SimTime,
        (index, place): (usize, u32),
    ) {
        let key = self.strings.get(key);
        let value = self.strings.get(value);
        if let Sink::Pairs {
            pairs, last, next, ..
        } = &mut self.sink
        {
            let index = u32::try_from(index).expect("fewer than 2^32 observations");
            let pair = pairs
                .entry(key.clone())
                .or_default()
                .entry(value.clone())
                .or_default();
            pair.open += 1;
            if last.get(*next) == Some(&(index, place)) {
                pair.last_opened = true;
                *next += 1;
            }
        }
        self.open.entry(node).or_default().insert(
            key,
            KeySeg {
                value,
                deadline,
                since: t,
                start: Fact::obs_at(index, t),
            },
        );
    }

    /// Closes `seg` of `key` on `node` at `t` into its pieces; `end` is the fact that ends it
    /// (the last piece's, unless it expired). Unless `reopened` (an expiry change, which
    /// opens the pair again at once), a pair whose segments are all closed and that no later
    /// report opens is complete.
    fn close(
        &mut self,
        node: NodeId,
        key: &str,
        seg: KeySeg,
        t: SimTime,
        end: Option<Fact>,
        reopened: bool,
    ) {
        let pass = &self.pass;
        let pieces = match seg.deadline {
            None => vec![(seg.since, t, None)],
            Some(d) => pass.clocks.live_pieces(node, seg.since, t, d),
        };
        let n = pieces.len();
        let shared_key = self.strings.get(key);
        let holder = pass.owner.get(&(key, &*seg.value)).copied();
        let (held, pair) = match &mut self.sink {
            Sink::All(held) => (held, None),
            Sink::Pairs { pairs, .. } => {
                let pair = pairs
                    .get_mut(key)
                    .and_then(|values| values.get_mut(&*seg.value))
                    .expect("an open segment's pair is not complete");
                (&mut pair.pieces, Some(()))
            }
        };
        for (i, (from, to, expired)) in pieces.into_iter().enumerate() {
            let end = match expired {
                Some(_) if !pass.facts => None,
                Some(wall) => Some(Fact::key_expired(
                    to,
                    node,
                    shared_key.clone(),
                    seg.value.clone(),
                    wall,
                    seg.deadline.expect("pieces expire only with a deadline"),
                )),
                None if i + 1 == n => end.clone(),
                None => None,
            };
            held.push(KeyHold {
                instance: node,
                key: shared_key.clone(),
                value: seg.value.clone(),
                holder,
                from,
                to,
                start: seg.start.clone(),
                end,
            });
        }
        if pair.is_none() || reopened {
            return;
        }
        let Sink::Pairs { pairs, done, .. } = &mut self.sink else {
            return;
        };
        let values = pairs.get_mut(key).expect("the segment's key");
        let pair = values.get_mut(&*seg.value).expect("the segment's pair");
        pair.open -= 1;
        if pair.open == 0 && pair.last_opened {
            let mut pair = values.remove(&*seg.value).expect("the segment's pair");
            if values.is_empty() {
                pairs.remove(key);
            }
            pair.pieces.retain(|h| h.from < h.to);
            done.append(&mut pair.pieces);
        }
    }

    /// The open segment of `key` on `node`, taken out.
    fn take(&mut self, node: NodeId, key: &str) -> Option<KeySeg> {
        self.open.get_mut(&node).and_then(|keys| keys.remove(key))
    }

    /// Walks one report: `(index, t, node, report)`.
    fn step(&mut self, (index, t, node, report): (usize, SimTime, NodeId, KeyObs<'r>)) {
        if !self.pass.is_instance(node) {
            return;
        }
        let ev = || Some(Fact::obs_at(index, t));
        match report {
            KeyObs::Set {
                key,
                value,
                deadline,
            } => {
                if let Some(seg) = self.take(node, key) {
                    self.close(node, key, seg, t, ev(), false);
                }
                self.open(node, key, value, deadline, t, (index, 0));
            }
            KeyObs::Expiry { key, deadline } => {
                if let Some(seg) = self.take(node, key) {
                    let value = seg.value.clone();
                    let start = seg.start.clone();
                    self.close(node, key, seg, t, None, true);
                    let key = self.strings.get(key);
                    self.open.entry(node).or_default().insert(
                        key,
                        KeySeg {
                            value,
                            deadline,
                            since: t,
                            start,
                        },
                    );
                }
            }
            KeyObs::Deleted { key } => {
                if let Some(seg) = self.take(node, key) {
                    self.close(node, key, seg, t, ev(), false);
                }
            }
            KeyObs::Restarted { keys } => {
                // Serving again: it holds exactly what it came back with (its persistence
                // decides); whatever it held when it went down is gone.
                for (k, seg) in self.open.remove(&node).unwrap_or_default() {
                    self.close(node, &k, seg, t, ev(), false);
                }
                for (place, (key, value, deadline)) in keys.iter().enumerate() {
                    if let Some(seg) = self.take(node, key) {
                        self.close(node, key, seg, t, ev(), false);
                    }
                    let place = u32::try_from(place).expect("fewer than 2^32 keys");
                    self.open(node, key, value, *deadline, t, (index, place));
                }
            }
        }
        // A crash ends nothing here: a down instance (crashed, or restarted but still in its
        // restart delay) answers nobody, so it grants the key to no one else; it goes on
        // counting for the value it held until that key's deadline by its wall clock, or
        // until it serves again (`RedisRestarted`, above).
    }
}

#[cfg(test)]
mod tests {
    use super::key_holds;
    use std::cell::Cell;

    thread_local! {
        /// Key reports walked on this thread (each test runs on its own thread).
        pub(super) static WALKED: Cell<usize> = const { Cell::new(0) };
    }

    /// The key pieces of a run with many batches are made in two walks over its key reports,
    /// whatever the number of batches (a walk per batch made a long run's truth quadratic in
    /// its length): 3,000 values set on two of three instances and deleted, 15 batches.
    #[test]
    fn batches_of_key_pieces_take_two_walks_over_the_reports() {
        use crate::truth::Facts;
        let mut b = Builder::new(&[
            ("a", RedisInstance),
            ("b", RedisInstance),
            ("c", RedisInstance),
            ("w", Worker),
        ]);
        let mut reports = 0;
        for v in 0..3_000_u64 {
            // Values in no time order, as Redlock's random ones are.
            let value = format!("{:016x}", v.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            for i in 0..2_u32 {
                let node = (i + v as u32) % 3;
                b = b.obs(
                    ms(1_000 + v * 10),
                    node,
                    Obs::RedisKeySet {
                        key: "k".to_string(),
                        value: value.clone(),
                        deadline_wall: None,
                    },
                );
                b = b.obs(
                    ms(1_005 + v * 10),
                    node,
                    Obs::RedisKeyDeleted {
                        key: "k".to_string(),
                    },
                );
                reports += 2;
            }
        }
        let r = b.end(ms(100_000)).build();
        let clocks = WallClocks::new(&r);
        let all = key_holds(&r, &clocks);
        assert_eq!(all.len(), 6_000);
        WALKED.with(|w| w.set(0));
        let (_, batches) = super::key_hold_batches(&r, &clocks, super::BATCH, Facts::Keep);
        let mut pieces = 0;
        let mut made = 0;
        for batch in batches {
            pieces += batch.len();
            made += 1;
        }
        let walked = WALKED.with(Cell::get);
        assert_eq!(pieces, all.len());
        assert!(made >= 10, "{made} batches");
        // Two walks, each reading one report past the last.
        assert!(
            walked <= 2 * (reports + 1),
            "{walked} reports walked for {reports} reports in {made} batches"
        );
    }
    use crate::clocks::WallClocks;
    use crate::testkit::*;
    use splitbrain_engine::{SimTime, WallTime};
    use splitbrain_protocols::Obs;

    fn set(value: &str, deadline_s: i64) -> Obs {
        Obs::RedisKeySet {
            key: "k".to_string(),
            value: value.to_string(),
            deadline_wall: Some(WallTime(deadline_s * 1_000_000_000)),
        }
    }
    fn spans(r: &crate::run::RunRecord) -> Vec<(SimTime, SimTime, Vec<String>)> {
        key_holds(r, &WallClocks::new(r))
            .iter()
            .map(|k| {
                (
                    k.from,
                    k.to,
                    fact_texts(r, &k.end.clone().into_iter().collect::<Vec<_>>()),
                )
            })
            .collect()
    }

    /// The key is still live (deadline 100 s) when the instance crashes at
    /// 4 s. Down, it grants to nobody and keeps counting for its value; it comes back at 6 s
    /// (after a restart delay) with no keys, which ends the key there.
    #[test]
    fn a_crashed_instance_holds_its_key_until_it_comes_back_without_it() {
        let base = || {
            Builder::new(&[("redis", RedisInstance), ("c", Worker)])
                .obs(ms(1_000), 0, set("x", 100))
                .fault(ms(4_000), crash(0))
                .fault(ms(5_000), restart(0))
                .end(ms(200_000))
        };
        let r = base()
            .obs(ms(6_000), 0, Obs::RedisRestarted { keys: vec![] })
            .build();
        assert_eq!(
            spans(&r),
            vec![(
                ms(1_000),
                ms(6_000),
                vec!["6.000 s redis: restarted with 0 key(s)".to_string()]
            )]
        );
        // Back with the key (persistence): a new piece from the restart to the deadline.
        let r = base()
            .obs(
                ms(6_000),
                0,
                Obs::RedisRestarted {
                    keys: vec![(
                        "k".to_string(),
                        "x".to_string(),
                        Some(WallTime(100_000_000_000)),
                    )],
                },
            )
            .build();
        let s = spans(&r);
        assert_eq!(
            s.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
            vec![(ms(1_000), ms(6_000)), (ms(6_000), ms(100_000))]
        );
        // Never back: the key counts until its deadline by the instance's wall clock.
        let r = base().build();
        assert_eq!(
            spans(&r).iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
            vec![(ms(1_000), ms(100_000))]
        );
    }

    /// A deletion observed before a backward step ends the key for good; without it the key
    /// is live again after the step, as the Redis model finds it.
    #[test]
    fn a_backward_step_revives_only_a_key_not_deleted() {
        let base = || {
            Builder::new(&[("redis", RedisInstance), ("c", Worker)])
                .obs(ms(1_000), 0, set("x", 5))
                .fault(
                    ms(6_000),
                    splitbrain_engine::Fault::ClockStep {
                        node: id(0),
                        delta_ns: -3_000_000_000,
                    },
                )
                .end(ms(20_000))
        };
        let r = base().build();
        assert_eq!(
            spans(&r).iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
            vec![(ms(1_000), ms(5_000)), (ms(6_000), ms(8_000))]
        );
        let r = base()
            .obs(
                ms(5_500),
                0,
                Obs::RedisKeyDeleted {
                    key: "k".to_string(),
                },
            )
            .build();
        assert_eq!(
            spans(&r).iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
            vec![(ms(1_000), ms(5_000))]
        );
    }

    /// `(observations) -> key pieces (value, holder, from, to, end)`: an expiry change
    /// (`PEXPIRE`) splits the piece with no end evidence; only Redis instances' observations
    /// count; a piece of no length is dropped; the holder is the first client to report
    /// acquiring the key with the value.
    #[test]
    fn key_pieces_table() {
        type Piece = (String, Option<u32>, SimTime, SimTime, Option<String>);
        let acquired = |value: &str| Obs::LockAcquired {
            thread: None,
            lock: "k".to_string(),
            token: None,
            value: value.to_string(),
            valid_until_local: splitbrain_engine::LocalTime(0),
        };
        let expiry = |deadline_s: i64| Obs::RedisKeyExpiry {
            key: "k".to_string(),
            deadline_wall: Some(WallTime(deadline_s * 1_000_000_000)),
        };
        let del = || Obs::RedisKeyDeleted {
            key: "k".to_string(),
        };
        let piece = |v: &str, h: Option<u32>, f: u64, t: u64, end: Option<&str>| -> Piece {
            (v.to_string(), h, ms(f), ms(t), end.map(str::to_string))
        };
        type Case = (&'static str, Vec<(u64, u32, Obs)>, Vec<Piece>);
        let cases: Vec<Case> = vec![
            (
                "an expiry change at 3 s moves the deadline from 5 s to 10 s",
                vec![(1_000, 0, set("x", 5)), (3_000, 0, expiry(10))],
                vec![
                    piece("x", None, 1_000, 3_000, None),
                    piece(
                        "x",
                        None,
                        3_000,
                        10_000,
                        Some("10.000 s redis: key k (value x) expired: wall clock 1970-01-01T00:00:10.000Z >= deadline 1970-01-01T00:00:10.000Z"),
                    ),
                ],
            ),
            (
                "an expiry change of a key not held is nothing",
                vec![(3_000, 0, expiry(10))],
                vec![],
            ),
            (
                "a client's Redis observations are not an instance's",
                vec![(1_000, 1, set("x", 5)), (2_000, 1, del())],
                vec![],
            ),
            (
                "set and deleted at one instant; overwritten at one instant",
                vec![
                    (1_000, 0, set("x", 50)),
                    (1_000, 0, del()),
                    (2_000, 0, set("y", 50)),
                    (2_000, 0, set("z", 50)),
                    (4_000, 0, del()),
                ],
                vec![piece("z", None, 2_000, 4_000, Some("4.000 s redis: DEL k"))],
            ),
            (
                "a key with no expiry, set and deleted at one instant",
                vec![
                    (
                        1_000,
                        0,
                        Obs::RedisKeySet {
                            key: "k".to_string(),
                            value: "x".to_string(),
                            deadline_wall: None,
                        },
                    ),
                    (1_000, 0, del()),
                ],
                vec![],
            ),
            (
                "the holder is the first client to report the value",
                vec![
                    (1_000, 0, set("x", 50)),
                    (1_001, 2, acquired("x")),
                    (1_002, 1, acquired("x")),
                    (2_000, 0, set("y", 50)),
                ],
                vec![
                    piece("x", Some(2), 1_000, 2_000, Some("2.000 s redis: SET k = y until wall 1970-01-01T00:00:50.000Z")),
                    piece("y", None, 2_000, 20_000, None),
                ],
            ),
        ];
        for (what, steps, expect) in cases {
            let mut b = Builder::new(&[("redis", RedisInstance), ("c", Worker), ("d", Worker)])
                .end(ms(20_000));
            for (t, node, obs) in steps {
                b = b.obs(ms(t), node, obs);
            }
            let r = b.build();
            let got: Vec<Piece> = key_holds(&r, &WallClocks::new(&r))
                .into_iter()
                .map(|k| {
                    (
                        k.value.to_string(),
                        k.holder.map(|n| n.0),
                        k.from,
                        k.to,
                        k.end.map(|e| fact_texts(&r, &[e]).remove(0)),
                    )
                })
                .collect();
            assert_eq!(got, expect, "{what}");
        }
    }
}
