//! [`ObsNeeds`]: which observations a run that is only checked must keep (so its
//! memory stays flat in run length).
//!
//! A lock client reports every attempt: `LockRequested`, then `LockFailed` with a reason in
//! words, until one succeeds; a worker reports a `ValidityChecked` before each write. In a
//! long run these are most of the observations, and no checker reads most of them:
//! - `LockFailed` is only counted (the metric `failed_attempts`): the log counts it by kind.
//! - `ValidityChecked` is read by no checker (narration reads it from the trace).
//! - A `LockRequested` matters where it starts a client's wait for its lock (`lock_progress`
//!   cites it; a wait lasts from the first request until the client's `LockAcquired` of that
//!   lock or its crash, as `timeline::beliefs` reads it), where it names a set of servers not
//!   named before for its lock (the truth is built over the servers a lock's clients ask), and
//!   as the first one (vacuity). A retry within a wait, to the same servers, is none of these.
//!
//! Everything else is kept, and so is every observation of a kind a `when` fault names (the
//! run's report says which of those never triggered). A kept observation keeps its index
//! among all the run's observations, so evidence cites the same index either way. Charts,
//! narration and comparisons read a run that kept every observation (or its trace).

use crate::key_log::KeyLog;
use splitbrain_engine::{NodeId, ObsFilter, SimTime};
use splitbrain_protocols::Obs;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// The observation filter of a run that is only checked (see the module docs); set on a
/// simulation with `Sim::set_obs_filter`.
#[derive(Debug, Default)]
pub struct ObsNeeds {
    /// Kinds kept whatever they are (named by a `when` fault).
    always: BTreeSet<String>,
    /// The clients' open waits: per client, the locks it waits for.
    waiting: BTreeMap<NodeId, BTreeSet<String>>,
    /// Per lock, the server sets its kept requests named.
    servers: BTreeMap<String, BTreeSet<Vec<NodeId>>>,
    /// Observations seen so far, kept or not: the index of the next one.
    seen: usize,
    /// Where the Redis instances' key reports go instead of the record's log, if anywhere
    /// ([`ObsNeeds::key_log`]).
    keys: Option<Rc<RefCell<KeyLog>>>,
}

impl ObsNeeds {
    /// A filter that also keeps every observation of the `always` kinds (`Obs::kind` names).
    pub fn new(always: impl IntoIterator<Item = String>) -> ObsNeeds {
        ObsNeeds {
            always: always.into_iter().collect(),
            ..ObsNeeds::default()
        }
    }

    /// From now on, the Redis instances' key reports (sets, expiry changes, deletions) go to
    /// the returned [`KeyLog`], compactly, instead of the record's log (unless a `when` fault
    /// names their kind); give it to the record as
    /// [`RunRecord::redis_keys`](crate::RunRecord::redis_keys) once the run is over.
    pub fn key_log(&mut self) -> Rc<RefCell<KeyLog>> {
        self.keys.get_or_insert_with(Rc::default).clone()
    }
}

impl ObsFilter<Obs> for ObsNeeds {
    fn keep(&mut self, t: SimTime, node: NodeId, obs: &Obs) -> bool {
        use splitbrain_engine::Observation;
        let index = self.seen;
        self.seen += 1;
        if let Some(keys) = &self.keys {
            if !self.always.contains(obs.kind()) && keys.borrow_mut().take(index, t, node, obs) {
                return false;
            }
        }
        // The waits are followed whatever is kept.
        let needed = match obs {
            Obs::LockFailed { .. } | Obs::ValidityChecked { .. } => false,
            Obs::LockRequested { lock, servers, .. } => {
                let waits = self.waiting.entry(node).or_default();
                // A retry within a wait allocates nothing.
                let starts = !waits.contains(lock.as_str()) && waits.insert(lock.clone());
                let new_servers = self.note_servers(lock, servers);
                starts || new_servers
            }
            Obs::LockAcquired { lock, .. } => {
                if let Some(waits) = self.waiting.get_mut(&node) {
                    waits.remove(lock.as_str());
                }
                true
            }
            _ => true,
        };
        needed || self.always.contains(obs.kind())
    }

    fn crashed(&mut self, node: NodeId) {
        self.waiting.remove(&node);
    }
}

impl ObsNeeds {
    /// Notes that a request for `lock` named `servers`; whether no earlier one did.
    fn note_servers(&mut self, lock: &str, servers: &[NodeId]) -> bool {
        match self.servers.get_mut(lock) {
            Some(sets) => {
                if sets.contains(servers) {
                    false
                } else {
                    sets.insert(servers.to_vec())
                }
            }
            None => {
                self.servers
                    .insert(lock.to_string(), BTreeSet::from([servers.to_vec()]));
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ObsNeeds;
    use crate::testkit::*;
    use splitbrain_engine::{LocalTime, NodeId, ObsFilter};
    use splitbrain_protocols::Obs;

    fn failed() -> Obs {
        Obs::LockFailed {
            thread: None,
            lock: "l".to_string(),
            reason: "0 of 5 OK, quorum 3".to_string(),
        }
    }
    fn acquired() -> Obs {
        Obs::LockAcquired {
            thread: None,
            lock: "l".to_string(),
            token: None,
            value: "v".to_string(),
            valid_until_local: LocalTime(0),
        }
    }

    /// `(what happens, kept?)`: a request is kept where it starts a wait (the first, the
    /// first after an acquisition or a crash), names new servers, or is of a kind a `when`
    /// fault names; attempts' failures are left out unless named.
    #[test]
    fn a_request_is_kept_where_it_starts_a_wait_or_names_new_servers() {
        enum Step {
            See(u32, Obs, bool),
            Crash(u32),
        }
        use Step::*;
        let steps = [
            See(1, requested("l", &[0, 1]), true),
            See(1, failed(), false),
            See(1, requested("l", &[0, 1]), false),
            See(2, requested("l", &[0, 1]), true),
            See(1, requested("l", &[0, 2]), true),
            See(1, requested("m", &[0, 1]), true),
            See(1, acquired(), true),
            See(1, requested("l", &[0, 1]), true),
            See(2, requested("l", &[0, 1]), false),
            Crash(2),
            See(2, requested("l", &[0, 1]), true),
            See(2, requested("l", &[0, 1]), false),
        ];
        let mut f = ObsNeeds::new([]);
        for (k, s) in steps.iter().enumerate() {
            match s {
                See(n, o, keep) => {
                    assert_eq!(f.keep(ms(k as u64), NodeId(*n), o), *keep, "step {k}")
                }
                Crash(n) => f.crashed(NodeId(*n)),
            }
        }
        // A kind a `when` fault names is kept, and the waits are still followed.
        let mut f = ObsNeeds::new(["lock_failed".to_string(), "lock_acquired".to_string()]);
        assert!(f.keep(ms(0), id(1), &requested("l", &[0])));
        assert!(f.keep(ms(1), id(1), &failed()));
        assert!(!f.keep(ms(2), id(1), &requested("l", &[0])));
        assert!(f.keep(ms(3), id(1), &acquired()));
        assert!(f.keep(ms(4), id(1), &requested("l", &[0])));
    }
}
