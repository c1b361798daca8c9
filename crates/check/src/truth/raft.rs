//! Raft truth: a Raft lock is held by the owner of its key in the lock store **as of the
//! committed log**. The key created at revision `r` is truly held from the first
//! `RaftKeyCreated { revision: r }` any replica reports (the first application of the
//! committed `Acquire`: the leader applies an entry the moment it learns it is committed, and
//! no replica applies an entry before it is committed) until the first `RaftKeyDeleted {
//! revision: r }` (the first application of the committed `Release` or `ExpireLease`).
//!
//! **etcd `Mutex` keys** (`RaftKeyCreated` with `mutex: Some(name)`): the lock `name` is held
//! by the owner of the **first-created live key** under its prefix (etcd
//! client/v3/concurrency/mutex.go at v3.5.0: "oldest waiter holds lock"), with that key's
//! create revision as the token. A waiter's key is no hold; it becomes one when every key
//! created before it is deleted (at that deletion's first application), whether or not its
//! owner has noticed yet.
//!
//! This is the linearizable view: the store's state changes at the commit of each command
//! (its linearization point), whatever any replica or client believes. Crashes do not end a
//! hold: the log is durable, and a key lives until a committed command deletes it, even while
//! every replica is down (the whole-cluster restart keeps every grant). Replicas re-applying
//! the same entries after a restart report them again; only the first report counts.

use super::{Fact, Hold, HoldSource};
use crate::run::{Role, RunRecord};
use splitbrain_engine::{NodeId, SimTime};
use splitbrain_protocols::Obs;
use std::collections::BTreeMap;

/// Every hold of every Raft lock key, as [`Hold`]s (unsorted).
pub(crate) fn holds(record: &RunRecord) -> Vec<Hold> {
    let replicas = record.nodes_where(|r| r == Role::Raft);
    if replicas.is_empty() {
        return Vec::new();
    }
    struct Open {
        holder: NodeId,
        since: SimTime,
        start: Fact,
    }
    let mut open: BTreeMap<(String, u64), Open> = BTreeMap::new();
    // Live mutex keys: by lock name, by create revision, the key's owner and name. The first
    // entry of each lock is the open hold in `open` (keyed by the lock name).
    let mut mutex_live: BTreeMap<String, BTreeMap<u64, (NodeId, String)>> = BTreeMap::new();
    let mut mutex_of: BTreeMap<(String, u64), String> = BTreeMap::new();
    let mut closed: BTreeMap<(String, u64), ()> = BTreeMap::new();
    let mut out = Vec::new();
    let hold = |lock: String, revision: u64, o: Open, to: SimTime, end: Option<Fact>| Hold {
        lock: lock.into(),
        holder: Some(o.holder),
        source: HoldSource::Raft {
            revision,
            replicas: replicas.clone(),
        },
        from: o.since,
        to,
        started_by: Box::new([o.start]),
        ended_by: end.into_iter().collect(),
    };
    for (index, ob) in record.observations.iter_indexed() {
        match &ob.obs {
            Obs::RaftKeyCreated {
                lock: key,
                holder,
                revision,
                mutex: Some(name),
            } => {
                let k = (key.clone(), *revision);
                if mutex_of.contains_key(&k) || closed.contains_key(&k) {
                    continue;
                }
                mutex_of.insert(k, name.clone());
                let live = mutex_live.entry(name.clone()).or_default();
                live.insert(*revision, (*holder, key.clone()));
                if live.len() == 1 {
                    open.insert(
                        (name.clone(), *revision),
                        Open {
                            holder: *holder,
                            since: ob.t,
                            start: Fact::obs(record, index),
                        },
                    );
                }
            }
            Obs::RaftKeyDeleted {
                lock: key,
                revision,
                ..
            } if mutex_of.contains_key(&(key.clone(), *revision)) => {
                let k = (key.clone(), *revision);
                let name = mutex_of.remove(&k).expect("checked by the guard");
                closed.insert(k, ());
                let live = mutex_live.get_mut(&name).expect("a live key's lock");
                let first = live.keys().next().copied();
                live.remove(revision);
                if first == Some(*revision) {
                    if let Some(o) = open.remove(&(name.clone(), *revision)) {
                        out.push(hold(
                            name.clone(),
                            *revision,
                            o,
                            ob.t,
                            Some(Fact::obs(record, index)),
                        ));
                    }
                    if let Some((next, (owner, _))) = live.iter().next() {
                        open.insert(
                            (name.clone(), *next),
                            Open {
                                holder: *owner,
                                since: ob.t,
                                start: Fact::obs(record, index),
                            },
                        );
                    }
                }
            }
            Obs::RaftKeyCreated {
                lock,
                holder,
                revision,
                mutex: None,
            } => {
                let k = (lock.clone(), *revision);
                if !open.contains_key(&k) && !closed.contains_key(&k) {
                    open.insert(
                        k,
                        Open {
                            holder: *holder,
                            since: ob.t,
                            start: Fact::obs(record, index),
                        },
                    );
                }
            }
            Obs::RaftKeyDeleted { lock, revision, .. } => {
                let k = (lock.clone(), *revision);
                if let Some(o) = open.remove(&k) {
                    out.push(hold(
                        k.0.clone(),
                        k.1,
                        o,
                        ob.t,
                        Some(Fact::obs(record, index)),
                    ));
                    closed.insert(k, ());
                }
            }
            _ => {}
        }
    }
    let horizon = record.horizon();
    for ((lock, revision), o) in open {
        out.push(hold(lock, revision, o, horizon, None));
    }
    out.retain(|h| h.from < h.to);
    out
}

#[cfg(test)]
mod tests {
    use super::holds;
    use crate::testkit::*;
    use splitbrain_engine::SimTime;
    use splitbrain_protocols::Obs;

    fn created(holder: u32, revision: u64) -> Obs {
        Obs::RaftKeyCreated {
            lock: "l".to_string(),
            holder: id(holder),
            revision,
            mutex: None,
        }
    }
    fn deleted(revision: u64) -> Obs {
        Obs::RaftKeyDeleted {
            lock: "l".to_string(),
            revision,
            expired: false,
        }
    }

    /// A key is held from its first application on any replica to the first application of
    /// its deletion; re-applications after restarts and replica crashes change nothing.
    #[test]
    fn first_application_counts_and_crashes_do_not_end_a_hold() {
        let r = Builder::new(&[
            ("r1", Raft),
            ("r2", Raft),
            ("r3", Raft),
            ("a", Worker),
            ("b", Worker),
        ])
        .obs(ms(1_000), 0, created(3, 2))
        .obs(ms(1_001), 1, created(3, 2))
        .fault(ms(1_500), crash(0))
        .fault(ms(1_600), crash(1))
        .fault(ms(1_700), crash(2))
        .obs(ms(3_000), 1, deleted(2))
        .obs(ms(3_002), 2, deleted(2))
        .obs(ms(4_000), 2, created(4, 4))
        // r1 restarts and re-applies the old history.
        .obs(ms(5_000), 0, created(3, 2))
        .obs(ms(5_000), 0, deleted(2))
        .end(ms(10_000))
        .build();
        let spans: Vec<(Option<u32>, SimTime, SimTime)> = holds(&r)
            .iter()
            .map(|h| (h.holder.map(|n| n.0), h.from, h.to))
            .collect();
        assert_eq!(
            spans,
            vec![
                (Some(3), ms(1_000), ms(3_000)),
                (Some(4), ms(4_000), ms(10_000)),
            ]
        );
    }

    /// A key created and deleted at the same instant (an acquire and its release or expiry
    /// applied in one step) was never held for any time: it is no hold, so no checker can
    /// find two holders at that instant.
    #[test]
    fn a_hold_of_no_length_is_no_hold() {
        let r = Builder::new(&[("r1", Raft), ("r2", Raft), ("r3", Raft), ("a", Worker)])
            .obs(ms(1_000), 0, created(3, 2))
            .obs(ms(1_000), 0, deleted(2))
            .obs(ms(2_000), 0, created(3, 3))
            .obs(ms(2_500), 0, deleted(3))
            .end(ms(10_000))
            .build();
        let spans: Vec<(SimTime, SimTime)> = holds(&r).iter().map(|h| (h.from, h.to)).collect();
        assert_eq!(spans, vec![(ms(2_000), ms(2_500))]);
    }

    fn mutex_created(key: &str, holder: u32, revision: u64) -> Obs {
        Obs::RaftKeyCreated {
            lock: key.to_string(),
            holder: id(holder),
            revision,
            mutex: Some("m".to_string()),
        }
    }
    fn key_deleted(key: &str, revision: u64, expired: bool) -> Obs {
        Obs::RaftKeyDeleted {
            lock: key.to_string(),
            revision,
            expired,
        }
    }

    /// An etcd mutex is held by the owner of its first-created live key: a waiter's key is no
    /// hold; when the holder's key goes, the next-oldest key's owner holds from that instant;
    /// a waiter whose key expired while waiting never holds.
    #[test]
    fn the_first_created_mutex_key_holds() {
        let r = Builder::new(&[("r1", Raft), ("a", Worker), ("b", Worker), ("c", Worker)])
            .obs(ms(1_000), 0, mutex_created("m/1", 1, 2))
            .obs(ms(1_100), 0, mutex_created("m/2", 2, 3))
            .obs(ms(1_200), 0, mutex_created("m/3", 3, 4))
            // b's session expires while it waits: its key goes, the lock stays a's.
            .obs(ms(2_000), 0, key_deleted("m/2", 3, true))
            .obs(ms(3_000), 0, key_deleted("m/1", 2, false))
            // A replica re-applying history changes nothing.
            .obs(ms(3_500), 0, mutex_created("m/1", 1, 2))
            .obs(ms(4_000), 0, key_deleted("m/3", 4, false))
            .end(ms(10_000))
            .build();
        let hs = holds(&r);
        let spans: Vec<(&str, Option<u32>, SimTime, SimTime)> = hs
            .iter()
            .map(|h| (&*h.lock, h.holder.map(|n| n.0), h.from, h.to))
            .collect();
        assert_eq!(
            spans,
            vec![
                ("m", Some(1), ms(1_000), ms(3_000)),
                ("m", Some(3), ms(3_000), ms(4_000)),
            ]
        );
    }
}
