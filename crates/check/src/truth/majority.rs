//! Redis majority truth: a Redis lock is held by the client whose value a majority of the
//! lock's own instances hold (Redlock's quorum rule; one instance is a majority of one).
//!
//! **Which instances.** A lock is named by its key within the set of instances its clients
//! ask (each client's `LockRequested { servers }`): two single-instance locks on different
//! instances are two locks, even under one name, and an instance no client of the lock asks
//! has no say in it. A key no client requested (a hand-built record, a trace whose requests name
//! no `servers`) is judged over every Redis instance of the run.
//!
//! **Replication.** A primary and its replicas count as one instance, named by the configured
//! primary, holding what the current primary holds ([`super::replication`]).

use super::replication::Groups;
use super::{Fact, Hold, HoldSource, KeyHold};
use crate::run::{Role, RunRecord};
use crate::timeline::overlaps;
use splitbrain_engine::{NodeId, SimTime};
use splitbrain_protocols::Obs;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The instance sets each Redis lock (key) is asked of, from the clients' `LockRequested`:
/// per key, each distinct set (sorted), in key then set order. Sets naming a node that is not
/// a Redis instance (a lease service) are left out.
pub(crate) fn lock_instances(record: &RunRecord) -> BTreeMap<&str, BTreeSet<Vec<NodeId>>> {
    let groups = Groups::new(record);
    let mut out: BTreeMap<&str, BTreeSet<Vec<NodeId>>> = BTreeMap::new();
    for o in &record.observations {
        if let Obs::LockRequested {
            thread: _,
            lock,
            servers,
        } = &o.obs
        {
            let mut set: Vec<NodeId> = servers.iter().map(|n| groups.root(*n)).collect();
            set.sort();
            set.dedup();
            if !set.is_empty()
                && set
                    .iter()
                    .all(|n| record.role(*n) == Some(Role::RedisInstance))
            {
                out.entry(lock.as_str()).or_default().insert(set);
            }
        }
    }
    out
}

/// Holds a majority list puts in one chunk.
const CHUNK: usize = 256;

/// Windows during which a majority (`n / 2 + 1`) of a lock's `n` instances hold one
/// `(key, value)`, for each instance set the key is asked of; in chunks of [`CHUNK`], which the
/// caller joins once it has freed the key pieces (or, in a long run's truth for the checkers,
/// keeps as they are: [`Truth::all`](super::Truth::all)): one list grown by doubling would at its peak
/// hold up to twice its holds and its previous buffer beside them. The key
/// pieces come in `batches`, each holding every piece of the `(key, value)` pairs it has, in
/// `(key, value)` order from batch to batch ([`key_hold_batches`](super::redis_keys::key_hold_batches)),
/// so only one batch need be alive at a time; one batch of every piece gives the same holds.
/// Without `facts`, the holds keep none (`started_by` and `ended_by` empty): the same holds
/// in the same order, 160 bytes lighter each where a majority is three instances.
pub(crate) fn holds<B: AsRef<[KeyHold]>>(
    record: &RunRecord,
    batches: impl IntoIterator<Item = B>,
    facts: bool,
) -> Vec<Vec<Hold>> {
    let mut out: Vec<Vec<Hold>> = Vec::new();
    for_each_hold(record, batches, facts, |hold| match out.last_mut() {
        Some(chunk) if chunk.len() < CHUNK => chunk.push(hold),
        _ => {
            let mut chunk = Vec::with_capacity(CHUNK);
            chunk.push(hold);
            out.push(chunk);
        }
    });
    out
}

/// The holds of [`holds`], in its order, each given to `emit` as it is made (a caller that
/// keeps less of a hold than the hold never has them all).
pub(crate) fn for_each_hold<B: AsRef<[KeyHold]>>(
    record: &RunRecord,
    batches: impl IntoIterator<Item = B>,
    facts: bool,
    mut emit: impl FnMut(Hold),
) {
    let groups = Groups::new(record);
    let mut all: Vec<NodeId> = record
        .nodes_where(|r| r == Role::RedisInstance)
        .into_iter()
        .map(|n| groups.root(n))
        .collect();
    all.sort();
    all.dedup();
    if all.is_empty() {
        return;
    }
    let sets = lock_instances(record);
    let mut set_ids: BTreeMap<Vec<NodeId>, Arc<[NodeId]>> = BTreeMap::new();
    for batch in batches {
        let held = &groups.as_primary(batch.as_ref(), record.horizon())[..];
        // Key pieces grouped by (key, value), in (key, value) order, each group in piece order
        // (one sorted list of indices, not a list per value: a long run has thousands of
        // values).
        let n = u32::try_from(held.len()).expect("fewer than 2^32 key pieces");
        let mut order: Vec<u32> = (0..n).collect();
        let at = |i: u32| &held[i as usize];
        order.sort_by(|&a, &b| (&at(a).key, &at(a).value).cmp(&(&at(b).key, &at(b).value)));
        for group in order.chunk_by(|&a, &b| at(a).key == at(b).key && at(a).value == at(b).value) {
            let (key, value) = (&at(group[0]).key, &at(group[0]).value);
            let key_sets: Vec<Arc<[NodeId]>> = match sets.get(&**key) {
                Some(s) => s.iter().map(|set| shared_set(&mut set_ids, set)).collect(),
                None => vec![shared_set(&mut set_ids, &all)],
            };
            for instances in key_sets {
                let idx: Vec<usize> = group
                    .iter()
                    .map(|&i| i as usize)
                    .filter(|&i| instances.contains(&held[i].instance))
                    .collect();
                for hold in majority_windows(held, &idx, key, value, &instances, facts) {
                    emit(hold);
                }
            }
        }
    }
}

/// One shared copy of instance set `set`, for the holds over it.
fn shared_set(ids: &mut BTreeMap<Vec<NodeId>, Arc<[NodeId]>>, set: &[NodeId]) -> Arc<[NodeId]> {
    ids.entry(set.to_vec())
        .or_insert_with(|| Arc::from(set))
        .clone()
}

/// The majority windows of one `(key, value)` over one instance set, from its pieces `idx`.
fn majority_windows(
    held: &[KeyHold],
    idx: &[usize],
    key: &Arc<str>,
    value: &Arc<str>,
    instances: &Arc<[NodeId]>,
    facts: bool,
) -> Vec<Hold> {
    let n = instances.len();
    let majority = n / 2 + 1;
    let spans: Vec<(SimTime, SimTime)> = idx.iter().map(|&i| (held[i].from, held[i].to)).collect();
    let mut out = Vec::new();
    for o in overlaps(&spans, majority) {
        let members: Vec<&KeyHold> = o.members.iter().map(|&m| &held[idx[m]]).collect();
        let (started_by, ended_by): (Box<[Fact]>, Box<[Fact]>) = if facts {
            let mut started_by: Vec<Fact> = members
                .iter()
                .filter(|h| h.from <= o.from)
                .map(|h| h.start.clone())
                .collect();
            started_by.sort_by_key(Fact::t);
            // Exactly as long as they are: a long run keeps thousands of holds.
            let ended_by = members
                .iter()
                .filter(|h| h.to == o.to)
                .filter_map(|h| h.end.clone())
                .collect();
            (started_by.into_boxed_slice(), ended_by)
        } else {
            (Box::new([]), Box::new([]))
        };
        out.push(Hold {
            lock: key.clone(),
            holder: members[0].holder,
            source: HoldSource::RedisMajority {
                value: value.clone(),
                instances: instances.clone(),
            },
            from: o.from,
            to: o.to,
            started_by,
            ended_by,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::testkit::*;
    use crate::{Truth, WallClocks};
    use splitbrain_engine::{LocalTime, SimTime};
    use splitbrain_protocols::Obs;

    fn set(key: &str, value: &str) -> Obs {
        Obs::RedisKeySet {
            key: key.to_string(),
            value: value.to_string(),
            deadline_wall: None,
        }
    }
    fn acquired(lock: &str, value: &str) -> Obs {
        Obs::LockAcquired {
            thread: None,
            lock: lock.to_string(),
            token: None,
            value: value.to_string(),
            valid_until_local: LocalTime(0),
        }
    }

    /// A lock's truth is a majority of its OWN instances. Two single-instance
    /// locks on two instances each hold with 1 of 1, not 2 of the run's 2.
    /// A same-named lock on another instance set is a separate lock.
    #[test]
    fn each_lock_is_judged_over_the_instances_its_clients_ask() {
        let r = Builder::new(&[
            ("redis-x", RedisInstance),
            ("redis-y", RedisInstance),
            ("c1", Worker),
            ("c2", Worker),
        ])
        .obs(ms(0), 2, requested("lock-x", &[0]))
        .obs(ms(1), 0, set("lock-x", "v1"))
        .obs(ms(2), 2, acquired("lock-x", "v1"))
        .obs(ms(3_000), 3, requested("lock", &[1]))
        .obs(ms(3_001), 1, set("lock", "v2"))
        .obs(ms(3_002), 3, acquired("lock", "v2"))
        .end(ms(10_000))
        .build();
        let truth = Truth::new(&r, &WallClocks::new(&r));
        let spans: Vec<(&str, Option<u32>, SimTime, String)> = truth
            .holds
            .iter()
            .map(|h| (&*h.lock, h.holder.map(|n| n.0), h.from, h.what()))
            .collect();
        assert_eq!(
            spans,
            vec![
                (
                    "lock-x",
                    Some(2),
                    ms(1),
                    "value v1 on a majority (1 of 1) of Redis instances".to_string()
                ),
                (
                    "lock",
                    Some(3),
                    ms(3_001),
                    "value v2 on a majority (1 of 1) of Redis instances".to_string()
                ),
            ]
        );
    }

    /// With no `LockRequested` naming the instances, every Redis instance of the run counts.
    #[test]
    fn without_requests_every_instance_counts() {
        let r = Builder::new(&[("a", RedisInstance), ("b", RedisInstance), ("c", Worker)])
            .obs(ms(1), 0, set("k", "v"))
            .obs(ms(2), 2, acquired("k", "v"))
            .end(ms(10_000))
            .build();
        assert!(Truth::new(&r, &WallClocks::new(&r)).holds.is_empty());
    }

    /// A lock's instance sets are sorted and deduplicated; a set that is empty or names a
    /// node other than a Redis instance is left out, and a key with no set left is judged
    /// over every instance: `(key, value, instances holding it) -> majority holds`.
    #[test]
    fn instance_sets_and_majorities_table() {
        let nodes = || {
            Builder::new(&[
                ("a", RedisInstance),
                ("b", RedisInstance),
                ("c", RedisInstance),
                ("locks", LeaseService),
                ("w", Worker),
            ])
            .obs(ms(0), 4, requested("k", &[2, 0, 0]))
            .obs(ms(0), 4, requested("k", &[0, 3]))
            .obs(ms(0), 4, requested("k", &[]))
            .obs(ms(0), 4, requested("j", &[3]))
            .end(ms(10_000))
        };
        let r = nodes().build();
        let sets = super::lock_instances(&r);
        let sets: Vec<(&str, Vec<Vec<u32>>)> = sets
            .iter()
            .map(|(k, s)| {
                (
                    *k,
                    s.iter().map(|v| v.iter().map(|n| n.0).collect()).collect(),
                )
            })
            .collect();
        assert_eq!(sets, vec![("k", vec![vec![0, 2]])]);
        for (key, on, expect) in [
            ("k", vec![0, 1], vec![]),
            (
                "k",
                vec![0, 2],
                vec!["value v on a majority (2 of 2) of Redis instances"],
            ),
            (
                "j",
                vec![0, 1],
                vec!["value v on a majority (2 of 3) of Redis instances"],
            ),
            ("j", vec![2], vec![]),
        ] {
            let mut b = nodes();
            for &i in &on {
                b = b.obs(ms(1_000), i, set(key, "v"));
            }
            let r = b.build();
            let truth = Truth::new(&r, &WallClocks::new(&r));
            let got: Vec<String> = truth.holds.iter().map(|h| h.what()).collect();
            assert_eq!(got, expect, "{key} on {on:?}");
        }
    }
}
