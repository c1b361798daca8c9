//! [`KeyLog`]: the Redis instances' key reports of a run that is only checked, kept compactly
//! beside its record (so its memory stays flat in run length).
//!
//! A Redis lock run reports a `RedisKeySet` on every instance an acquisition reaches and a
//! `RedisKeyDeleted` on every one its release reaches: lesson 15 run for 3,000 s keeps 13,709
//! of them, two thirds of what it keeps, each 96 bytes in the observation log plus its key
//! and value strings. The truth reads only their key, value, deadline, time and instance, and
//! cites them in words when a verdict needs them. [`ObsNeeds`](crate::ObsNeeds) hands them to
//! a `KeyLog` instead of the record's log, every key and value string once. Each keeps its
//! index among all the run's observations, so the truth's facts and the evidence cite it
//! exactly as they would the observation ([`KeyLog::get`] rebuilds it).
//!
//! The reports are encoded, each against the one before it: a header byte, then varints (7
//! bits a byte) of the index and time after the last report's, the instance, the key and
//! value ids, and the deadline's offset from its report's time after the last offset
//! (zigzag): lesson 15's reports take 7.8 bytes each (they took 32 as fixed-size entries; at
//! 3,000 s the run's heap peak fell from 1.75 MB to 1.40 MB). They are kept in chunks of
//! 4 KB, each allocated once at full size (growing never copies) and starting from a zero
//! state, so that one decodes on its own: [`KeyLog::get`] finds its chunk by a binary search
//! over the chunks' first indices and decodes it up to the report.

use splitbrain_engine::{NodeId, SimTime, WallTime};
use splitbrain_protocols::Obs;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The Redis key reports (`RedisKeySet`, `RedisKeyExpiry`, `RedisKeyDeleted`) a run left out
/// of its observation log, in order (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyLog {
    /// The reports, encoded ([`KeyLog::take`]) in chunks of at most [`CHUNK_BYTES`], each
    /// allocated once at full size and decoded on its own.
    chunks: Vec<Vec<u8>>,
    /// Per chunk, the index of its first report (for [`KeyLog::get`]).
    firsts: Vec<u32>,
    /// The encoder's state: the last report's index, time and deadline offset.
    last: State,
    /// Reports kept.
    len: usize,
    /// Every key and value, once, by id.
    strings: Vec<Arc<str>>,
    ids: BTreeMap<Arc<str>, u32>,
}

/// What a report says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Set,
    Expiry,
    Deleted,
}

/// One report as its fields: observation number `index`, by `node` at true time `t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    t: SimTime,
    deadline: Option<WallTime>,
    index: u32,
    node: NodeId,
    key: u32,
    kind: Kind,
    /// The value's string id (a `Set`'s; 0 otherwise).
    value: u32,
}

/// What a report is encoded against: the one before it in its chunk (zero at a chunk's
/// start, so a chunk decodes on its own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct State {
    index: u32,
    t: u64,
    /// The last deadline less its report's time (ns, wrapping): on an instance whose wall
    /// clock runs at true rate, a key's deadline is its set time plus a constant and the TTL.
    offset: i64,
}

/// Bytes per chunk of encoded reports (one report takes 6 to 10 bytes in lesson 15).
const CHUNK_BYTES: usize = 4096;

/// The most bytes one report takes: a header, five varints of at most 32 bits and two of 64.
const MAX_ENTRY: usize = 1 + 5 * 5 + 2 * 10;

/// The header's bits: the kind (0 set, 1 expiry, 2 deleted), and whether a deadline follows.
const HAS_DEADLINE: u8 = 4;

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get(bytes: &[u8], at: &mut usize) -> u64 {
    // Most fields take one byte.
    let first = bytes[*at];
    if first < 0x80 {
        *at += 1;
        return u64::from(first);
    }
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

fn get32(bytes: &[u8], at: &mut usize) -> u32 {
    u32::try_from(get(bytes, at)).expect("an encoded 32-bit field")
}

impl Entry {
    /// Appends this report to `out`, encoded against `last` (which it then becomes): a header
    /// byte, then as varints the index and time after the last report's, the node, the key,
    /// a set's value, and a deadline's offset from its time after the last offset (zigzag).
    fn encode(&self, last: &mut State, out: &mut Vec<u8>) {
        let kind = match self.kind {
            Kind::Set => 0,
            Kind::Expiry => 1,
            Kind::Deleted => 2,
        };
        let header = kind
            | if self.deadline.is_some() {
                HAS_DEADLINE
            } else {
                0
            };
        out.push(header);
        put(out, u64::from(self.index - last.index));
        put(out, self.t.0 - last.t);
        put(out, u64::from(self.node.0));
        put(out, u64::from(self.key));
        if self.kind == Kind::Set {
            put(out, u64::from(self.value));
        }
        last.index = self.index;
        last.t = self.t.0;
        if let Some(d) = self.deadline {
            let offset = d.0.wrapping_sub(self.t.0 as i64);
            let delta = offset.wrapping_sub(last.offset);
            put(out, ((delta << 1) ^ (delta >> 63)) as u64);
            last.offset = offset;
        }
    }

    /// The report at `*at` in `bytes`, encoded against `last` (which it then becomes).
    fn decode(bytes: &[u8], at: &mut usize, last: &mut State) -> Entry {
        let header = bytes[*at];
        *at += 1;
        let kind = match header & 3 {
            0 => Kind::Set,
            1 => Kind::Expiry,
            _ => Kind::Deleted,
        };
        let index = last.index + get32(bytes, at);
        let t = last.t + get(bytes, at);
        let node = NodeId(get32(bytes, at));
        let key = get32(bytes, at);
        let value = if kind == Kind::Set {
            get32(bytes, at)
        } else {
            0
        };
        last.index = index;
        last.t = t;
        let deadline = (header & HAS_DEADLINE != 0).then(|| {
            let z = get(bytes, at);
            let delta = (z >> 1) as i64 ^ -((z & 1) as i64);
            last.offset = last.offset.wrapping_add(delta);
            WallTime(last.offset.wrapping_add(t as i64))
        });
        Entry {
            t: SimTime(t),
            deadline,
            index,
            node,
            key,
            kind,
            value,
        }
    }
}

/// A Redis instance's report about its keys, as the truth reads it, from the record's log or
/// from a [`KeyLog`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum KeyObs<'a> {
    /// `RedisKeySet`.
    Set {
        key: &'a str,
        value: &'a str,
        deadline: Option<WallTime>,
    },
    /// `RedisKeyExpiry`.
    Expiry {
        key: &'a str,
        deadline: Option<WallTime>,
    },
    /// `RedisKeyDeleted`.
    Deleted { key: &'a str },
    /// `RedisRestarted` (always in the record's log).
    Restarted {
        keys: &'a [(String, String, Option<WallTime>)],
    },
}

impl<'a> KeyObs<'a> {
    /// The key report `obs` is, if it is one.
    pub(crate) fn of(obs: &'a Obs) -> Option<KeyObs<'a>> {
        Some(match obs {
            Obs::RedisKeySet {
                key,
                value,
                deadline_wall,
            } => KeyObs::Set {
                key,
                value,
                deadline: *deadline_wall,
            },
            Obs::RedisKeyExpiry { key, deadline_wall } => KeyObs::Expiry {
                key,
                deadline: *deadline_wall,
            },
            Obs::RedisKeyDeleted { key } => KeyObs::Deleted { key },
            Obs::RedisRestarted { keys } => KeyObs::Restarted { keys },
            _ => return None,
        })
    }
}

impl KeyLog {
    /// Takes `obs`, observation number `index` reported by `node` at `t`, if it is a key
    /// report this log keeps (a set, an expiry change or a deletion); `false` if not.
    pub(crate) fn take(&mut self, index: usize, t: SimTime, node: NodeId, obs: &Obs) -> bool {
        let (kind, key, value, deadline) = match obs {
            Obs::RedisKeySet {
                key,
                value,
                deadline_wall,
            } => (Kind::Set, key, Some(value), *deadline_wall),
            Obs::RedisKeyExpiry { key, deadline_wall } => (Kind::Expiry, key, None, *deadline_wall),
            Obs::RedisKeyDeleted { key } => (Kind::Deleted, key, None, None),
            _ => return false,
        };
        let entry = Entry {
            t,
            deadline,
            index: u32::try_from(index).expect("fewer than 2^32 observations"),
            node,
            key: self.id(key),
            kind,
            value: value.map_or(0, |v| self.id(v)),
        };
        let room = self
            .chunks
            .last()
            .is_some_and(|c| c.len() + MAX_ENTRY <= CHUNK_BYTES);
        if !room {
            // A chunk is allocated once, at full size, and starts from a zero state.
            self.chunks.push(Vec::with_capacity(CHUNK_BYTES));
            self.firsts.push(entry.index);
            self.last = State::default();
        }
        let chunk = self.chunks.last_mut().expect("a chunk with room");
        entry.encode(&mut self.last, chunk);
        self.len += 1;
        true
    }

    /// The id of string `s`, given it on first sight.
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = u32::try_from(self.strings.len()).expect("fewer than 2^32 distinct strings");
        let shared: Arc<str> = Arc::from(s);
        self.strings.push(shared.clone());
        self.ids.insert(shared, id);
        id
    }

    /// This log's copy of string `s` (a key or value it keeps), to share.
    pub(crate) fn shared(&self, s: &str) -> Option<Arc<str>> {
        self.ids.get_key_value(s).map(|(a, _)| a.clone())
    }

    /// The number of reports kept.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no report was kept.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn view(&self, e: &Entry) -> KeyObs<'_> {
        let key = &*self.strings[e.key as usize];
        match e.kind {
            Kind::Set => KeyObs::Set {
                key,
                value: &self.strings[e.value as usize],
                deadline: e.deadline,
            },
            Kind::Expiry => KeyObs::Expiry {
                key,
                deadline: e.deadline,
            },
            Kind::Deleted => KeyObs::Deleted { key },
        }
    }

    /// The reports of chunk `k`, decoded in order.
    fn chunk(&self, k: usize) -> impl Iterator<Item = Entry> + '_ {
        let bytes = &self.chunks[k];
        let (mut at, mut last) = (0, State::default());
        std::iter::from_fn(move || {
            (at < bytes.len()).then(|| Entry::decode(bytes, &mut at, &mut last))
        })
    }

    /// The reports in order: `(index, t, node, report)`.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, SimTime, NodeId, KeyObs<'_>)> {
        (0..self.chunks.len())
            .flat_map(move |k| self.chunk(k))
            .map(move |e| (e.index as usize, e.t, e.node, self.view(&e)))
    }

    /// Observation `index` as it was reported, `(t, node, obs)`, if this log kept it.
    pub fn get(&self, index: usize) -> Option<(SimTime, NodeId, Obs)> {
        let index = u32::try_from(index).ok()?;
        // The last chunk starting at or before `index`, decoded up to it.
        let k = self
            .firsts
            .partition_point(|&f| f <= index)
            .checked_sub(1)?;
        let e = self
            .chunk(k)
            .take_while(|e| e.index <= index)
            .find(|e| e.index == index)?;
        let obs = match self.view(&e) {
            KeyObs::Set {
                key,
                value,
                deadline,
            } => Obs::RedisKeySet {
                key: key.to_string(),
                value: value.to_string(),
                deadline_wall: deadline,
            },
            KeyObs::Expiry { key, deadline } => Obs::RedisKeyExpiry {
                key: key.to_string(),
                deadline_wall: deadline,
            },
            KeyObs::Deleted { key } => Obs::RedisKeyDeleted {
                key: key.to_string(),
            },
            KeyObs::Restarted { .. } => unreachable!("a key log keeps no restart"),
        };
        Some((e.t, e.node, obs))
    }
}

#[cfg(test)]
mod tests {
    use super::KeyLog;
    use splitbrain_engine::{NodeId, SimTime, WallTime};
    use splitbrain_protocols::Obs;

    /// Sets, expiry changes and deletions are taken and given back as reported, by their
    /// index; anything else is not taken; strings are kept once.
    #[test]
    fn key_reports_are_taken_and_given_back_by_index() {
        let reports = [
            (
                3,
                Obs::RedisKeySet {
                    key: "k".to_string(),
                    value: "v1".to_string(),
                    deadline_wall: Some(WallTime(7)),
                },
            ),
            (
                5,
                Obs::RedisKeyExpiry {
                    key: "k".to_string(),
                    deadline_wall: None,
                },
            ),
            (
                8,
                Obs::RedisKeySet {
                    key: "k".to_string(),
                    value: "v1".to_string(),
                    deadline_wall: None,
                },
            ),
            (
                9,
                Obs::RedisKeyDeleted {
                    key: "k".to_string(),
                },
            ),
        ];
        let mut log = KeyLog::default();
        for (i, o) in &reports {
            assert!(log.take(*i, SimTime(*i as u64 * 10), NodeId(*i as u32), o));
        }
        let restarted = Obs::RedisRestarted { keys: vec![] };
        assert!(!log.take(10, SimTime(100), NodeId(0), &restarted));
        assert!(!log.take(11, SimTime(110), NodeId(0), &Obs::ElectionStarted));
        assert_eq!(log.len(), 4);
        assert_eq!(log.strings.len(), 2, "k and v1, once each");
        for (i, o) in &reports {
            let want = (SimTime(*i as u64 * 10), NodeId(*i as u32), o.clone());
            assert_eq!(log.get(*i), Some(want), "index {i}");
        }
        for i in [0, 4, 6, 10, 11] {
            assert_eq!(log.get(i), None, "index {i}");
        }
        let indices: Vec<usize> = log.iter().map(|(i, ..)| i).collect();
        assert_eq!(indices, vec![3, 5, 8, 9]);
        // A header and one byte a field: 7 bytes a set with a deadline, 6 without, 5 otherwise.
        assert_eq!(log.chunks.iter().map(Vec::len).sum::<usize>(), 23, "bytes");
    }

    /// Reports across many chunks, with times, deadlines and indices far apart and close
    /// (an instance's wall clock behind true time, a deadline before its set), come back as
    /// they were taken, each by its index.
    #[test]
    fn reports_come_back_exactly_across_chunks() {
        let mut log = KeyLog::default();
        let mut taken = Vec::new();
        let (mut index, mut t) = (0usize, 0u64);
        for i in 0..3_000u64 {
            index += 1 + (i % 7) as usize * (i as usize % 300);
            t += (i % 5) * 1_000_003 + (i % 11) * (1 << 40);
            let key = format!("k{}", i % 3);
            let deadline = match i % 4 {
                0 => None,
                1 => Some(WallTime(i64::MAX - i as i64)),
                2 => Some(WallTime(-(t as i64) - 5)),
                _ => Some(WallTime(t as i64 + 10_000_000_000)),
            };
            let obs = match i % 3 {
                0 => Obs::RedisKeySet {
                    key,
                    value: format!("v{}", i % 1_000),
                    deadline_wall: deadline,
                },
                1 => Obs::RedisKeyExpiry {
                    key,
                    deadline_wall: deadline,
                },
                _ => Obs::RedisKeyDeleted { key },
            };
            let node = NodeId((i % 13) as u32 * 100_000);
            assert!(log.take(index, SimTime(t), node, &obs));
            taken.push((index, SimTime(t), node, obs));
        }
        assert!(log.chunks.len() > 10, "{} chunks", log.chunks.len());
        assert_eq!(log.len(), taken.len());
        for (index, t, node, obs) in &taken {
            assert_eq!(
                log.get(*index),
                Some((*t, *node, obs.clone())),
                "index {index}"
            );
        }
        let at: std::collections::BTreeSet<usize> = taken.iter().map(|(i, ..)| *i).collect();
        for i in 0..5_000 {
            assert_eq!(log.get(i).is_some(), at.contains(&i), "index {i}");
        }
        let indices: Vec<usize> = log.iter().map(|(i, ..)| i).collect();
        let want: Vec<usize> = taken.iter().map(|(i, ..)| *i).collect();
        assert_eq!(indices, want);
    }
}
