//! [`KeyLog`]: the Redis instances' key reports of a run that is only checked, kept compactly
//! beside its record (issue 11 §4, memory flat in run length).
//!
//! A Redis lock run reports a `RedisKeySet` on every instance an acquisition reaches and a
//! `RedisKeyDeleted` on every one its release reaches: lesson 15 run for 3,000 s keeps 13,709
//! of them, two thirds of what it keeps, each 104 bytes in the observation log plus its key
//! and value strings. The truth reads only their key, value, deadline, time and instance, and
//! cites them in words when a verdict needs them. [`ObsNeeds`](crate::ObsNeeds) hands them to
//! a `KeyLog` instead of the record's log: 32 bytes each, every key and value string once.
//! Each keeps its index among all the run's observations, so the truth's facts and the
//! evidence cite it exactly as they would the observation ([`KeyLog::get`] rebuilds it).

use splitbrain_engine::{NodeId, ObsLog, SimTime, WallTime};
use splitbrain_protocols::Obs;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The Redis key reports (`RedisKeySet`, `RedisKeyExpiry`, `RedisKeyDeleted`) a run left out
/// of its observation log, in order (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyLog {
    entries: ObsLog<Entry>,
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

/// One report: observation number `index`, by `node` at true time `t` (32 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    t: SimTime,
    /// The deadline's wall time in ns; [`NO_DEADLINE`] for none.
    deadline: i64,
    index: u32,
    node: NodeId,
    key: u32,
    /// The value's string id (a `Set`'s) and the kind in the top two bits.
    value_kind: u32,
}

/// An [`Entry`]'s deadline when the key has none (no wall clock reads `i64::MIN`).
const NO_DEADLINE: i64 = i64::MIN;

/// The bits of [`Entry::value_kind`] holding the kind.
const KIND_SHIFT: u32 = 30;

impl Entry {
    fn kind(&self) -> Kind {
        match self.value_kind >> KIND_SHIFT {
            0 => Kind::Set,
            1 => Kind::Expiry,
            _ => Kind::Deleted,
        }
    }

    fn value(&self) -> u32 {
        self.value_kind & ((1 << KIND_SHIFT) - 1)
    }

    fn deadline(&self) -> Option<WallTime> {
        (self.deadline != NO_DEADLINE).then_some(WallTime(self.deadline))
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
        let key = self.id(key);
        let value = value.map_or(0, |v| self.id(v));
        assert!(value >> KIND_SHIFT == 0, "fewer than 2^30 distinct strings");
        let kind_bits = match kind {
            Kind::Set => 0,
            Kind::Expiry => 1,
            Kind::Deleted => 2,
        };
        assert!(
            deadline.map_or(true, |d| d.0 != NO_DEADLINE),
            "a deadline of i64::MIN ns"
        );
        self.entries.push(Entry {
            t,
            deadline: deadline.map_or(NO_DEADLINE, |d| d.0),
            index: u32::try_from(index).expect("fewer than 2^32 observations"),
            node,
            key,
            value_kind: value | kind_bits << KIND_SHIFT,
        });
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
        self.entries.len()
    }

    /// Whether no report was kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn view(&self, e: &Entry) -> KeyObs<'_> {
        let key = &*self.strings[e.key as usize];
        match e.kind() {
            Kind::Set => KeyObs::Set {
                key,
                value: &self.strings[e.value() as usize],
                deadline: e.deadline(),
            },
            Kind::Expiry => KeyObs::Expiry {
                key,
                deadline: e.deadline(),
            },
            Kind::Deleted => KeyObs::Deleted { key },
        }
    }

    /// The reports in order: `(index, t, node, report)`.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, SimTime, NodeId, KeyObs<'_>)> {
        self.entries
            .iter()
            .map(move |e| (e.index as usize, e.t, e.node, self.view(e)))
    }

    /// Observation `index` as it was reported, `(t, node, obs)`, if this log kept it.
    pub fn get(&self, index: usize) -> Option<(SimTime, NodeId, Obs)> {
        // The entries are in index order: a binary search over their positions.
        let (mut lo, mut hi) = (0, self.entries.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if (self.entries[mid].index as usize) < index {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let e = self.entries.get(lo).filter(|e| e.index as usize == index)?;
        let obs = match self.view(e) {
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
        assert_eq!(std::mem::size_of::<super::Entry>(), 32, "bytes a report");
    }
}
