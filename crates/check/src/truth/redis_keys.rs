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
    let sets = pass.sets();
    pass.pieces(None, sets)
}

/// Key pieces a batch of [`key_hold_batches`] holds for the checkers (more only where one
/// `(key, value)` alone has more): a run with fewer is one batch, made in one pass as
/// [`key_holds`] makes it.
pub(crate) const BATCH: usize = 512;

/// A contiguous range of `(key, value)` pairs in their order, both ends included.
type PairRange<'r> = ((&'r str, &'r str), (&'r str, &'r str));

/// The key pieces of [`key_holds`], in batches of about `batch` ([`BATCH`]): each batch holds the pieces
/// of a contiguous range of `(key, value)` pairs, the ranges in `(key, value)` order, each
/// batch's pieces in the order they ended. Sorted by `(key, value)` (stably), the batches one
/// after another are [`key_holds`] sorted so; a caller that reads the pieces one `(key, value)`
/// at a time (the majority holds) never holds them all (lesson 15 run for 3,000 s
/// has 6,857 pieces, 0.66 MB, beside a 1.45 MB record). Each batch is one pass over the key
/// reports, skipping the pieces of other pairs.
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
    let mut pass = Pass::new(record, clocks, true);
    let ranges: Vec<(Option<PairRange<'r>>, usize)> = match &mut pass {
        None => Vec::new(),
        Some(pass) => {
            let sets = pass.sets();
            if sets <= batch {
                vec![(None, sets)]
            } else {
                pass.facts = facts == super::Facts::Keep;
                let mut ranges = pass.ranges(batch);
                // Every batch reserves as much as the largest: one size of list, whose memory
                // each batch reuses (the allocator keeps memory for each size of
                // block it gave, so lists of a dozen slightly different sizes would each keep
                // their own).
                let most = ranges.iter().map(|r| r.1).max().unwrap_or(0);
                for r in &mut ranges {
                    r.1 = most;
                }
                ranges
            }
        }
    };
    let kept = pass.as_ref().map_or(true, |p| p.facts);
    let batches = ranges.into_iter().map(move |(range, capacity)| {
        pass.as_ref()
            .expect("ranges only with a pass")
            .pieces(range, capacity)
    });
    (kept, batches)
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

    /// The keys set on instances: every one is at least one piece (more only where a clock
    /// step splits one).
    fn sets(&self) -> usize {
        key_reports(self.record)
            .filter(|(_, _, node, k)| self.is_instance(*node) && matches!(k, KeyObs::Set { .. }))
            .count()
    }

    /// The `(key, value)` ranges of the batches, each with the keys set in it (sets and
    /// restarts with the key): consecutive pairs gathered while they stay within `batch`.
    fn ranges(&self, batch: usize) -> Vec<(Option<PairRange<'r>>, usize)> {
        let mut count: BTreeMap<(&'r str, &'r str), usize> = BTreeMap::new();
        for (_, _, node, report) in key_reports(self.record) {
            if !self.is_instance(node) {
                continue;
            }
            match report {
                KeyObs::Set { key, value, .. } => *count.entry((key, value)).or_default() += 1,
                KeyObs::Restarted { keys } => {
                    for (key, value, _) in keys {
                        *count.entry((key.as_str(), value.as_str())).or_default() += 1;
                    }
                }
                KeyObs::Expiry { .. } | KeyObs::Deleted { .. } => {}
            }
        }
        let mut out: Vec<(Option<PairRange<'r>>, usize)> = Vec::new();
        let mut open: Option<(PairRange<'r>, usize)> = None;
        for (pair, n) in count {
            match &mut open {
                Some((range, m)) if *m + n <= batch => {
                    range.1 = pair;
                    *m += n;
                }
                _ => {
                    if let Some((range, m)) = open.take() {
                        out.push((Some(range), m));
                    }
                    open = Some(((pair, pair), n));
                }
            }
        }
        if let Some((range, m)) = open {
            out.push((Some(range), m));
        }
        out
    }

    /// The key pieces of the `(key, value)` pairs in `range` (every pair if `None`), in the
    /// order they ended; `capacity` reserved at once, so the list never holds two buffers
    /// while it grows.
    fn pieces(&self, range: Option<PairRange<'_>>, capacity: usize) -> Vec<KeyHold> {
        let (record, clocks, owner) = (self.record, self.clocks, &self.owner);
        let wanted = |key: &str, value: &str| {
            range.map_or(true, |(lo, hi)| lo <= (key, value) && (key, value) <= hi)
        };
        // The open segments of the wanted pairs only, by instance and then key (a nested map,
        // so that a report's key is looked up as `&str`, without a copy). A report of a pair
        // outside the batch still ends the open segment of its key (of another value), but
        // opens none and interns nothing: each batch's pass over every report stays cheap
        // (interning every value on each pass would make a long run's truth quadratic).
        let mut open: BTreeMap<NodeId, BTreeMap<String, KeySeg>> = BTreeMap::new();
        let mut held: Vec<KeyHold> = Vec::with_capacity(capacity);
        let mut strings = Strings(&record.redis_keys, BTreeSet::new());
        let close = |held: &mut Vec<KeyHold>,
                     strings: &mut Strings,
                     node: NodeId,
                     key: &str,
                     seg: KeySeg,
                     t: SimTime,
                     end: Option<Fact>| {
            let pieces = match seg.deadline {
                None => vec![(seg.since, t, None)],
                Some(d) => clocks.live_pieces(node, seg.since, t, d),
            };
            let n = pieces.len();
            let shared_key = strings.get(key);
            for (i, (from, to, expired)) in pieces.into_iter().enumerate() {
                let end = match expired {
                    Some(_) if !self.facts => None,
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
                    holder: owner.get(&(key, &*seg.value)).copied(),
                    from,
                    to,
                    start: seg.start.clone(),
                    end,
                });
            }
        };
        let remove =
            |open: &mut BTreeMap<NodeId, BTreeMap<String, KeySeg>>, node: NodeId, key: &str| {
                open.get_mut(&node).and_then(|keys| keys.remove(key))
            };
        for (index, t, node, report) in key_reports(record) {
            if !self.is_instance(node) {
                continue;
            }
            let ev = || Fact::obs_at(index, t);
            match report {
                KeyObs::Set {
                    key,
                    value,
                    deadline,
                } => {
                    if let Some(seg) = remove(&mut open, node, key) {
                        close(&mut held, &mut strings, node, key, seg, t, Some(ev()));
                    }
                    if wanted(key, value) {
                        open.entry(node).or_default().insert(
                            key.to_string(),
                            KeySeg {
                                value: strings.get(value),
                                deadline,
                                since: t,
                                start: ev(),
                            },
                        );
                    }
                }
                KeyObs::Expiry { key, deadline } => {
                    if let Some(seg) = remove(&mut open, node, key) {
                        let value = seg.value.clone();
                        let start = seg.start.clone();
                        close(&mut held, &mut strings, node, key, seg, t, None);
                        open.entry(node).or_default().insert(
                            key.to_string(),
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
                    if let Some(seg) = remove(&mut open, node, key) {
                        close(&mut held, &mut strings, node, key, seg, t, Some(ev()));
                    }
                }
                KeyObs::Restarted { keys } => {
                    // Serving again: it holds exactly what it came back with (its persistence
                    // decides); whatever it held when it went down is gone.
                    for (k, seg) in open.remove(&node).unwrap_or_default() {
                        close(&mut held, &mut strings, node, &k, seg, t, Some(ev()));
                    }
                    for (key, value, deadline) in keys {
                        if let Some(seg) = remove(&mut open, node, key) {
                            close(&mut held, &mut strings, node, key, seg, t, Some(ev()));
                        }
                        if wanted(key, value) {
                            open.entry(node).or_default().insert(
                                key.clone(),
                                KeySeg {
                                    value: strings.get(value),
                                    deadline: *deadline,
                                    since: t,
                                    start: ev(),
                                },
                            );
                        }
                    }
                }
            }
            // A crash ends nothing here: a down instance (crashed, or restarted but still in its
            // restart delay) answers nobody, so it grants the key to no one else; it goes on
            // counting for the value it held until that key's deadline by its wall clock, or
            // until it serves again (`RedisRestarted`, above).
        }
        let horizon = record.horizon();
        for (node, keys) in std::mem::take(&mut open) {
            for (key, seg) in keys {
                close(&mut held, &mut strings, node, &key, seg, horizon, None);
            }
        }
        held.retain(|h| h.from < h.to);
        held
    }
}

#[cfg(test)]
mod tests {
    use super::key_holds;
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
