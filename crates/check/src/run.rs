//! [`RunRecord`]: everything the checkers judge, taken from a finished run.
//!
//! The record is plain data (names, roles, initial clocks, observations, applied faults,
//! message counters), so checkers can be tested with hand-built observation lists and the
//! scenario crate can build it from a [`Sim`] with [`RunRecord::from_sim`].

use crate::KeyLog;
use serde::{Deserialize, Serialize};
use splitbrain_engine::{
    ClockConfig, Fault, FaultEffect, KindCounts, NodeId, ObsLog, Observed, Sim, SimDuration,
    SimTime,
};
use splitbrain_protocols::custom::JudgedAs;
use splitbrain_protocols::{Node, Obs};
use std::collections::BTreeMap;

/// The role a node plays; decides which observations are truth (servers) and which are
/// beliefs (clients and leaders).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A bully election participant.
    Bully,
    /// The lease service: its grants are the truth of who holds a lease.
    LeaseService,
    /// A lease-based leader (a leader-election participant that holds the lease "leader").
    LeaseLeader,
    /// A Redis instance: its keys are the truth of who holds a Redis lock.
    RedisInstance,
    /// Fenced (or unfenced) storage: its accepted writes are judged.
    Storage,
    /// A worker driving a lock client.
    Worker,
    /// A replica of the Raft lock service: a leader-election participant, and a lock server
    /// whose applied log is the truth of who holds a Raft lock.
    Raft,
}

impl Role {
    /// Whether the role takes part in leader election (`eventual_leader` asks these to agree).
    pub fn elects_leader(self) -> bool {
        matches!(self, Role::Bully | Role::LeaseLeader | Role::Raft)
    }
    /// Whether the role is a lock server (`lock_progress` counts these).
    pub fn is_lock_server(self) -> bool {
        matches!(self, Role::LeaseService | Role::RedisInstance | Role::Raft)
    }
}

impl From<JudgedAs> for Role {
    /// The built-in role whose observations a custom node's are read as.
    fn from(j: JudgedAs) -> Role {
        match j {
            JudgedAs::LockClient => Role::Worker,
            JudgedAs::LockServer => Role::LeaseService,
            JudgedAs::Leader => Role::LeaseLeader,
            // Storage's accepted writes are judged; a node of no judged role is read as a
            // store whose contents no checker reads, as a lease record is.
            JudgedAs::Storage | JudgedAs::Other => Role::Storage,
        }
    }
}

/// One finished run, as the checkers see it. Times are true time (ns).
#[derive(Clone, Debug, PartialEq)]
pub struct RunRecord {
    /// Node names by `NodeId` index.
    pub names: Vec<String>,
    /// Node roles by `NodeId` index.
    pub roles: Vec<Role>,
    /// Initial clock of each node (drift ppm, wall offset ns), by `NodeId` index. Missing
    /// entries mean a perfect clock.
    pub clocks: Vec<ClockConfig>,
    /// The observations, in true-time order (the engine's order), in the engine's chunked
    /// log (never copied to grow), indexed by their place among all the run's observations.
    /// Every one, unless the run kept only those its checks read ([`ObsNeeds`](crate::ObsNeeds)):
    /// then the others are only counted by kind.
    pub observations: ObsLog<Observed<Obs>>,
    /// Every applied fault with its true time, in order.
    pub faults: Vec<(SimTime, Fault)>,
    /// Per fault of `faults`, what it did: recorded by the engine as it applied it, or, for a
    /// run read back from a trace, the engine's ledger fed the trace's faults again.
    pub fault_effects: Vec<FaultEffect>,
    /// Per fault, the number of observations (by index) recorded before it was applied, so
    /// observations and faults at one instant merge in the order the run had them; empty when
    /// not known (then the tie rule of [`crate::timeline`]: observations first).
    pub fault_positions: Vec<usize>,
    /// End of the run (the scenario's duration).
    pub end: SimTime,
    /// Message counters per message kind (from the engine's `Stats`).
    pub messages: BTreeMap<String, KindCounts>,
    /// The Redis instances' key reports a run that is only checked kept compactly instead of
    /// in `observations` ([`ObsNeeds::key_log`](crate::ObsNeeds::key_log)), each by its index
    /// among all the run's observations; empty otherwise.
    pub redis_keys: KeyLog,
    /// The election each node's `LeaderClaim`s belong to, by `NodeId` index: the arbiter
    /// whose counter its terms come from (`"bully"` for the bully nodes, `"raft"` for the
    /// Raft replicas, the lease of a lease service, the key of the Raft lock service, or the
    /// lease record a candidate updates). Empty, or an empty entry: the node's role names it
    /// ([`RunRecord::election`]).
    pub elections: Vec<String>,
}

impl RunRecord {
    /// Builds the record of a finished simulation, moving its observations out of it (the
    /// simulation keeps none afterwards). `clocks` are the initial clock configs by node (the
    /// simulation only keeps the current clocks); `roles` are the nodes' checked roles by
    /// node, as their specs give them; `end` is the scenario duration.
    pub fn from_sim(
        sim: &mut Sim<Node>,
        roles: Vec<Role>,
        clocks: Vec<ClockConfig>,
        end: SimTime,
    ) -> RunRecord {
        let names = sim.names().to_vec();
        RunRecord {
            names,
            roles,
            clocks,
            observations: sim.take_observations(),
            faults: sim.applied_faults().to_vec(),
            fault_effects: sim.fault_effects().to_vec(),
            fault_positions: sim.applied_fault_positions().to_vec(),
            end,
            messages: sim
                .stats()
                .messages
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            redis_keys: KeyLog::default(),
            elections: Vec::new(),
        }
    }

    /// The election node `id`'s leadership claims belong to ([`RunRecord::elections`]), by
    /// default its role's: every bully node is in one election, every Raft replica in one
    /// cluster, every lease-based leader in one lease.
    pub fn election(&self, id: NodeId) -> &str {
        match self.elections.get(id.index()) {
            Some(e) if !e.is_empty() => e,
            _ => match self.role(id) {
                Some(Role::Bully) => "bully",
                Some(Role::Raft) => "raft",
                Some(Role::LeaseLeader) => "lease",
                _ => "",
            },
        }
    }

    /// The name of node `id` (`"#7"` if the record does not name it).
    pub fn name(&self, id: NodeId) -> String {
        self.names
            .get(id.index())
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    /// The role of node `id`, if known.
    pub fn role(&self, id: NodeId) -> Option<Role> {
        self.roles.get(id.index()).copied()
    }

    /// The node called `name`.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| NodeId(i as u32))
    }

    /// The nodes whose leadership the leader invariants judge: every node that elects a
    /// leader, except that Raft replicas are left out when the run also has application
    /// leaders (bully nodes or lease leaders). Such leaders elect themselves THROUGH the Raft
    /// lock service (etcd's election recipe), whose replicas' own leadership is the service's
    /// internal affair, judged by `single_leader_per_term`.
    pub fn leader_roles(&self) -> Vec<NodeId> {
        self.nodes_where(self.judged_as_leader())
    }

    /// Whether a node of role `r` is one of [`RunRecord::leader_roles`] in this run (decided
    /// once per run, so callers can test many beliefs cheaply).
    pub fn judged_as_leader(&self) -> impl Fn(Role) -> bool {
        let app = self
            .roles
            .iter()
            .any(|r| matches!(r, Role::Bully | Role::LeaseLeader));
        move |r: Role| r.elects_leader() && !(app && r == Role::Raft)
    }

    /// The nodes whose role satisfies `pred`, in node order.
    pub fn nodes_where(&self, pred: impl Fn(Role) -> bool) -> Vec<NodeId> {
        self.roles
            .iter()
            .enumerate()
            .filter(|(_, r)| pred(**r))
            .map(|(i, _)| NodeId(i as u32))
            .collect()
    }

    /// The initial clock config of node `id` (a perfect clock if none was recorded).
    pub fn clock(&self, id: NodeId) -> ClockConfig {
        self.clocks.get(id.index()).copied().unwrap_or_default()
    }

    /// The instant open intervals are closed at: the end of the run, or just after the last
    /// recorded event if that is later (so nothing recorded falls outside every interval).
    pub fn horizon(&self) -> SimTime {
        let after = |t: SimTime| t.saturating_add(SimDuration(1));
        let last_obs = self
            .observations
            .last_recorded()
            .map_or(SimTime::ZERO, |o| after(o.t));
        let last_fault = self.faults.last().map_or(SimTime::ZERO, |f| after(f.0));
        self.end.max(last_obs).max(last_fault)
    }
}
