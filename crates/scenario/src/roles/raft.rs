//! The `raft` role: a replica of the Raft-replicated, etcd-style lock service (file spec,
//! validation, actor). Every `raft` node of a scenario belongs to one replica group (3 or 5
//! make the usual clusters). Defaults as the protocol's `RaftConfig::with_replicas`: election
//! timeout 150–300 ms (the paper's, §5.6), heartbeats every 50 ms, at most 64 entries per
//! AppendEntries, lease checks every 500 ms (etcd's lessor loop), lease promote extension
//! 300 ms (etcd extends by its election timeout), Raft's commit rule, no PreVote, no
//! CheckQuorum, ReadIndex reads.

use crate::checker::NodeCheck;
use crate::duration::{or, Dur};
use crate::role::clock_and_count;
use crate::role::{ClockSpec, Role};
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use splitbrain_protocols::raft::{CommitRule, RaftConfig, RaftNode, ReadOnlyOption};
use splitbrain_protocols::Node;

/// Raft replica parameters (local monotonic durations of the replica's own clock).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RaftSpec {
    /// Expand into `count` replicas named `<name>1..<name>count` (default: one node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = "crate::limits::MAX_NODES"))]
    pub count: Option<u32>,
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// Lower bound of the randomized election timeout (default 150 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub election_timeout_min: Option<Dur>,
    /// Upper bound (inclusive) of the randomized election timeout, drawn uniformly from the
    /// replica's own random stream (default 300 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub election_timeout_max: Option<Dur>,
    /// Leader heartbeat period, below `election_timeout_min` (default 50 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_interval: Option<Dur>,
    /// At most this many log entries per AppendEntries (default 64; at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_entries_per_append: Option<u32>,
    /// How often the leader looks for expired leases and commits their revocation (default
    /// 500 ms, etcd's lessor loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_check_interval: Option<Dur>,
    /// A new leader re-arms every lease to `now + lease_promote_extend + TTL` (etcd
    /// `lessor.Promote`; default 300 ms). Takeover after a holder's death can take this plus a
    /// whole TTL when the leader changes in between.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_promote_extend: Option<Dur>,
    /// Which entries a leader commits by counting replicas (Raft §5.4.2): `current_term`
    /// (default, Raft's rule: only entries of its own term) or `count_replicas` (the planted
    /// bug of the paper's Figure 8: any entry stored on a majority, so an entry of an earlier
    /// term can be committed, applied, and then overwritten by a later leader).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_rule: Option<CommitRuleSpec>,
    /// PreVote (Ongaro's thesis §9.6, etcd-io/raft `Config.PreVote`): a replica whose election
    /// timer fires first asks whether a majority would vote for it, without raising its term
    /// (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_vote: Option<bool>,
    /// CheckQuorum (thesis §6.2, etcd-io/raft `Config.CheckQuorum`): a leader that has not
    /// heard from a majority within `election_timeout_min` steps down, and a replica that
    /// heard its leader within `election_timeout_min` ignores vote requests of higher terms
    /// (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_quorum: Option<bool>,
    /// How the leader answers a keepalive, which confirms that a lock holder's lease lives
    /// (etcd-io/raft `Config.ReadOnlyOption`): `safe` (default, ReadIndex: a heartbeat round
    /// acknowledged by a majority first) or `lease_based` (Ongaro's thesis §6.4.1: at once
    /// while the leader's lease, `election_timeout_min / (1 + clock_drift_bound_ppm / 1e6)`
    /// from a round a majority acknowledged, lasts on its clock; needs `check_quorum`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<ReadOnlySpec>,
    /// The clock drift bound a `lease_based` read trusts, ppm: no replica's clock runs more
    /// than `1 + ppm / 1e6` times as fast as the leader's (default 10000, 1%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_drift_bound_ppm: Option<u32>,
}

/// The file form of [`ReadOnlyOption`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadOnlySpec {
    /// ReadIndex (etcd-io/raft `ReadOnlySafe`).
    Safe,
    /// The leader lease (etcd-io/raft `ReadOnlyLeaseBased`).
    LeaseBased,
}

/// The file form of [`CommitRule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CommitRuleSpec {
    /// Raft's rule: commit by counting replicas only entries of the leader's current term.
    CurrentTerm,
    /// The planted Figure 8 bug: commit any entry stored on a majority.
    CountReplicas,
}

impl RaftSpec {
    /// The group config with this spec's timing and `replicas` as the group.
    fn config(&self, replicas: Vec<splitbrain_engine::NodeId>) -> RaftConfig {
        let d = RaftConfig::with_replicas(replicas);
        RaftConfig {
            election_timeout_min: or(self.election_timeout_min, d.election_timeout_min),
            election_timeout_max: or(self.election_timeout_max, d.election_timeout_max),
            heartbeat_interval: or(self.heartbeat_interval, d.heartbeat_interval),
            max_entries_per_append: self
                .max_entries_per_append
                .map_or(d.max_entries_per_append, |n| n as usize),
            lease_check_interval: or(self.lease_check_interval, d.lease_check_interval),
            lease_promote_extend: or(self.lease_promote_extend, d.lease_promote_extend),
            commit_rule: match self.commit_rule {
                None => d.commit_rule,
                Some(CommitRuleSpec::CurrentTerm) => CommitRule::CurrentTerm,
                Some(CommitRuleSpec::CountReplicas) => CommitRule::CountReplicas,
            },
            pre_vote: self.pre_vote.unwrap_or(d.pre_vote),
            check_quorum: self.check_quorum.unwrap_or(d.check_quorum),
            read_only: match self.read_only {
                None => d.read_only,
                Some(ReadOnlySpec::Safe) => ReadOnlyOption::Safe,
                Some(ReadOnlySpec::LeaseBased) => ReadOnlyOption::LeaseBased,
            },
            clock_drift_bound_ppm: self
                .clock_drift_bound_ppm
                .unwrap_or(d.clock_drift_bound_ppm),
            replicas: d.replicas,
        }
    }
}

impl Role for RaftSpec {
    fn checked_as(&self) -> splitbrain_check::Role {
        splitbrain_check::Role::Raft
    }

    clock_and_count!();

    fn validate(&self, v: &mut NodeCheck<'_, '_>) {
        for (f, d) in [
            ("election_timeout_min", self.election_timeout_min),
            ("election_timeout_max", self.election_timeout_max),
            ("heartbeat_interval", self.heartbeat_interval),
            ("lease_check_interval", self.lease_check_interval),
        ] {
            v.positive(f, d);
        }
        if self.max_entries_per_append == Some(0) {
            v.err(
                "max_entries_per_append",
                "max_entries_per_append must be at least 1",
            );
        }
        let c = self.config(vec![splitbrain_engine::NodeId(0)]);
        if c.election_timeout_min > c.election_timeout_max {
            v.err(
                "election_timeout_max",
                format!(
                    "election_timeout_max ({}) must be at least election_timeout_min ({})",
                    c.election_timeout_max, c.election_timeout_min
                ),
            );
        }
        if c.read_only == ReadOnlyOption::LeaseBased && !c.check_quorum {
            v.err(
                "read_only",
                "read_only \"lease_based\" needs check_quorum: true: the lease holds only while followers ignore votes within election_timeout_min of hearing the leader (etcd-io/raft Config.validate: CheckQuorum must be enabled when ReadOnlyOption is ReadOnlyLeaseBased)",
            );
        }
        if c.heartbeat_interval >= c.election_timeout_min {
            v.err(
                "heartbeat_interval",
                format!(
                    "heartbeat_interval ({}) must be below election_timeout_min ({}): Raft §5.6, broadcast time << election timeout",
                    c.heartbeat_interval, c.election_timeout_min
                ),
            );
        }
    }

    /// A replica's group is every `raft` node of the scenario, itself included.
    fn observations(&self) -> &'static [&'static str] {
        &[
            "leader_claim",
            "leader_step_down",
            "election_started",
            "leader_known",
            "raft_applied",
            "raft_key_created",
            "raft_key_deleted",
        ]
    }

    fn node(&self, roster: &Roster) -> Node {
        Node::Raft(RaftNode::new(self.config(roster.ids_of("raft"))))
    }
}
