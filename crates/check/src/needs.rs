//! [`ObsNeeds`]: which observations a run that is only checked must keep (issue 11 §4,
//! memory flat in run length).
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

use splitbrain_engine::{NodeId, ObsFilter, SimTime};
use splitbrain_protocols::Obs;
use std::collections::{BTreeMap, BTreeSet};

/// The observation filter of a run that is only checked (see the module docs); set on a
/// simulation with `Sim::set_obs_filter`.
#[derive(Debug, Default)]
pub struct ObsNeeds {
    /// Kinds kept whatever they are (named by a `when` fault).
    always: BTreeSet<String>,
    /// The clients' open waits: (client, lock).
    waiting: BTreeSet<(NodeId, String)>,
    /// Per lock, the server sets its kept requests named.
    servers: BTreeMap<String, BTreeSet<Vec<NodeId>>>,
}

impl ObsNeeds {
    /// A filter that also keeps every observation of the `always` kinds (`Obs::kind` names).
    pub fn new(always: impl IntoIterator<Item = String>) -> ObsNeeds {
        ObsNeeds {
            always: always.into_iter().collect(),
            ..ObsNeeds::default()
        }
    }
}

impl ObsFilter<Obs> for ObsNeeds {
    fn keep(&mut self, _t: SimTime, node: NodeId, obs: &Obs) -> bool {
        use splitbrain_engine::Observation;
        if !self.always.is_empty() && self.always.contains(obs.kind()) {
            if let Obs::LockRequested { lock, servers, .. } = obs {
                self.waiting.insert((node, lock.clone()));
                self.note_servers(lock, servers);
            }
            return true;
        }
        match obs {
            Obs::LockFailed { .. } | Obs::ValidityChecked { .. } => false,
            Obs::LockRequested { lock, servers, .. } => {
                let starts = self.waiting.insert((node, lock.clone()));
                let new_servers = self.note_servers(lock, servers);
                starts || new_servers
            }
            Obs::LockAcquired { lock, .. } => {
                self.waiting.remove(&(node, lock.clone()));
                true
            }
            _ => true,
        }
    }

    fn crashed(&mut self, node: NodeId) {
        self.waiting.retain(|(n, _)| *n != node);
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
