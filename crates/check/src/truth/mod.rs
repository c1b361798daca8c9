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
//! [`Truth`] puts them together; the checkers and the charts read only [`Truth`].

pub(crate) mod lease;
pub(crate) mod majority;
pub(crate) mod raft;
pub(crate) mod redis_keys;
pub(crate) mod replication;

use crate::clocks::WallClocks;
use crate::run::{Role, RunRecord};
use crate::verdict::Evidence;
use splitbrain_engine::{NodeId, SimTime};
use splitbrain_protocols::Obs;
use std::collections::BTreeSet;

pub use redis_keys::KeyHold;

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
    /// A majority (`n / 2 + 1` of the lock's `n` Redis instances) holding `value` at the key.
    RedisMajority {
        /// The value (the client's random lock value).
        value: String,
        /// The lock's instances (the set its clients ask), sorted.
        instances: Vec<NodeId>,
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
    /// Whether this hold is the one `id` names.
    pub(crate) fn is(&self, id: &HoldId) -> bool {
        match &self.source {
            HoldSource::Lease { token, .. }
            | HoldSource::Raft {
                revision: token, ..
            } => id.token.map_or(true, |t| t == *token),
            HoldSource::RedisMajority { value, .. } => {
                id.value.as_deref().map_or(true, |v| v == value)
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
            if let Obs::LockRequested { lock: l, servers } = &o.obs {
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

/// The truth about locks over the run (DESIGN.md, `holder_writes_only`: "truth = the lock
/// servers' state: the lease service's grant, or a majority of the lock's Redis instances
/// holding the client's value"), rebuilt from a [`RunRecord`]: the lease services' grant observations and
/// the Redis instances' key observations, keys expiring by the instance's wall clock
/// ([`WallClocks`], [`key_expired`](crate::key_expired)). Intervals are half-open in true ns; one still open at
/// the end is closed at [`RunRecord::horizon`]; empty ones are dropped.
pub struct Truth {
    /// Every hold, sorted by start (then lock, holder).
    pub holds: Vec<Hold>,
    /// Every Redis key held on an instance (the pieces majorities are made of), in the order
    /// they ended.
    pub keys: Vec<KeyHold>,
}

impl Truth {
    /// Rebuilds the truth of `record`, judging Redis key expiry with `clocks` (built from the
    /// same record).
    pub fn new(record: &RunRecord, clocks: &WallClocks) -> Truth {
        let mut holds = lease::holds(record);
        let keys = redis_keys::key_holds(record, clocks);
        holds.extend(majority::holds(record, &keys));
        holds.extend(raft::holds(record));
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
