//! The configuration of one Raft replica group: who the replicas are and the timing rules.
//!
//! Every duration is measured on the replica's own **monotonic** clock (local ns): Raft never
//! compares clocks across machines, it only needs each timer to run at roughly the right rate
//! (Ongaro & Ousterhout, "In Search of an Understandable Consensus Algorithm", USENIX ATC 2014,
//! §5.6 "Timing and availability": `broadcastTime << electionTimeout << MTBF`).

use splitbrain_engine::{NodeId, SimDuration};
use std::fmt;

/// The timing and membership of a Raft replica group. Membership is fixed for the whole run
/// (no joint consensus, §6 of the paper, is modelled).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaftConfig {
    /// Every replica of the group (the voters), including the replica this config is given
    /// to. Order does not matter; duplicates are rejected by [`RaftConfig::validate`].
    pub replicas: Vec<NodeId>,
    /// Lower bound of the randomized election timeout, local monotonic ns. A follower that
    /// hears from no leader and grants no vote for this long becomes a candidate (§5.2).
    pub election_timeout_min: SimDuration,
    /// Upper bound (inclusive) of the randomized election timeout, local monotonic ns. Each
    /// timeout is drawn uniformly from `[min, max]` from the replica's own random stream, so
    /// split votes are rare and resolve quickly (§5.2; the paper uses 150–300 ms).
    pub election_timeout_max: SimDuration,
    /// How often a leader sends AppendEntries to every follower when it has nothing else to
    /// send, local monotonic ns (§5.2 "heartbeats"). Must be well below
    /// `election_timeout_min` (§5.6); etcd's default is 100 ms against a 1 s election timeout.
    pub heartbeat_interval: SimDuration,
    /// At most this many log entries in one AppendEntries message (etcd: `MaxSizePerMsg`,
    /// counted in entries here). At least 1.
    pub max_entries_per_append: usize,
    /// How often the leader looks for leases whose TTL has run out on its clock, local
    /// monotonic ns. etcd's lessor checks every 500 ms (`lessor.runLoop`) and proposes a
    /// `LeaseRevoke` through Raft for each expired lease; here the proposal is
    /// [`Command::ExpireLease`](super::msg::Command::ExpireLease).
    pub lease_check_interval: SimDuration,
    /// The extension a new leader adds to every lease when it takes over, local monotonic ns:
    /// etcd's `lessor.Promote(extend)` sets each lease's expiry to `now + extend + TTL`, and
    /// etcd passes its election timeout as `extend`. So a lease whose holder died just before
    /// a leader change is revoked no sooner than `extend + TTL` after the new leader took over
    /// (takeover time grows by up to one TTL plus one election timeout).
    pub lease_promote_extend: SimDuration,
    /// Which entries the leader may commit by counting the replicas that store them (§5.4.2).
    /// [`CommitRule::CurrentTerm`] is Raft's rule; [`CommitRule::CountReplicas`] is the
    /// planted bug of the paper's Figure 8.
    pub commit_rule: CommitRule,
    /// Run a PreVote round before every election (Ongaro's thesis §9.6; etcd-io/raft
    /// `Config.PreVote`, raft.go `campaign(campaignPreElection)`): a replica whose election
    /// timer fires asks for votes for `term + 1` without raising its own term, and starts the
    /// real election only once a majority would grant it. A replica cut off from the others
    /// therefore keeps its term, and cannot depose a healthy leader when it rejoins.
    pub pre_vote: bool,
    /// The leader steps down when a majority has not been heard from within one
    /// `election_timeout_min` (thesis §6.2; etcd-io/raft `Config.CheckQuorum`, raft.go
    /// `tickHeartbeat` -> `MsgCheckQuorum` -> `checkQuorumActive`), and a replica that heard a
    /// leader less than `election_timeout_min` ago ignores a (Pre)Vote request of a higher
    /// term (raft.go `Step`, the `inLease` test: "it does not update its term or grant its
    /// vote").
    pub check_quorum: bool,
    /// How the leader answers a read: a keepalive, which confirms that a holder's lease still
    /// lives ([`ReadOnlyOption::Safe`], ReadIndex, by default; [`ReadOnlyOption::LeaseBased`]
    /// trusts the clocks instead). etcd-io/raft `Config.ReadOnlyOption`.
    pub read_only: ReadOnlyOption,
    /// The clock drift bound a lease read trusts, ppm: no replica's clock runs more than
    /// `1 + clock_drift_bound_ppm / 1e6` times as fast as the leader's. The leader's lease
    /// lasts `election_timeout_min / (1 + clock_drift_bound_ppm / 1e6)` on its own clock from
    /// the start of a heartbeat round a majority acknowledged (Ongaro's thesis §6.4.1: "start
    /// + election timeout / clock drift bound"). Unused unless `read_only` is `LeaseBased`.
    pub clock_drift_bound_ppm: u32,
}

/// How a leader answers reads (Ongaro's thesis §6.4; etcd-io/raft raft.go `ReadOnlyOption`,
/// `sendMsgReadIndexResponse`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReadOnlyOption {
    /// ReadIndex (thesis §6.4 steps 1-4; etcd-io/raft `ReadOnlySafe`, "communicating with the
    /// quorum"): the leader answers once a majority of its term acknowledged a heartbeat round
    /// sent after the read arrived, and an entry of its term is committed. A deposed leader
    /// never gets that majority.
    #[default]
    Safe,
    /// The leader lease of thesis §6.4.1 (etcd-io/raft `ReadOnlyLeaseBased`, "relying on the
    /// leader lease. It can be affected by clock drift"): once a majority acknowledged a
    /// heartbeat round started at local `start`, the leader answers reads at once until
    /// `start + election_timeout_min / (1 + clock_drift_bound_ppm / 1e6)` on its own clock,
    /// with no message; past it, a read waits for a ReadIndex round as under `Safe`. Safe only
    /// while the followers honour that window: they ignore (Pre)Vote requests within
    /// `election_timeout_min` of hearing the leader (thesis §4.2.3), which is CheckQuorum's
    /// `inLease` here, so `check_quorum` must be on (etcd-io/raft `Config.validate`: "CheckQuorum
    /// must be enabled when ReadOnlyOption is ReadOnlyLeaseBased"), and only while no
    /// follower's clock runs faster than the bound allows. etcd-io/raft itself answers at once
    /// while it leads (after its first commit in its term) and lets CheckQuorum's step-down end
    /// the lease, which can come up to two election timeouts after the last contact
    /// (reported on etcd-io/raft's tracker); this model keeps the thesis's explicit lease.
    LeaseBased,
}

/// How the leader decides that an entry is committed (Raft §5.4.2, Figure 8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CommitRule {
    /// Raft's rule (Figure 2, "Rules for Servers, Leaders"): only an entry of the leader's
    /// current term is committed by counting replicas; earlier entries commit with it.
    #[default]
    CurrentTerm,
    /// The planted bug of §5.4.2: any entry stored on a majority is committed, whatever its
    /// term. Figure 8 shows an entry so committed (term 2 at index 2, on S1, S2, S3) being
    /// overwritten by a leader of a later term (S5, term 3), so two replicas apply different
    /// entries at one index. The replica's "committed entries are never truncated" assertion
    /// is off under this rule: the truncation is the lesson, and `state_machine_safety`
    /// reports it.
    CountReplicas,
}

/// Why a [`RaftConfig`] cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RaftConfigError {
    /// No replicas listed.
    NoReplicas,
    /// A replica is listed twice.
    DuplicateReplica(NodeId),
    /// `election_timeout_min` is 0 or above `election_timeout_max`.
    ElectionTimeoutRange,
    /// `heartbeat_interval` is 0 or not below `election_timeout_min`.
    HeartbeatNotBelowElectionTimeout,
    /// `max_entries_per_append` is 0.
    NoEntriesPerAppend,
    /// `lease_check_interval` is 0.
    LeaseCheckInterval,
    /// `read_only` is `LeaseBased` without `check_quorum`.
    LeaseReadWithoutCheckQuorum,
}

impl fmt::Display for RaftConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RaftConfigError::NoReplicas => write!(f, "a Raft group needs at least one replica"),
            RaftConfigError::DuplicateReplica(n) => write!(f, "replica {n} is listed twice"),
            RaftConfigError::ElectionTimeoutRange => write!(
                f,
                "expected 0 < election_timeout_min <= election_timeout_max"
            ),
            RaftConfigError::HeartbeatNotBelowElectionTimeout => write!(
                f,
                "expected 0 < heartbeat_interval < election_timeout_min (Raft §5.6)"
            ),
            RaftConfigError::NoEntriesPerAppend => {
                write!(f, "expected max_entries_per_append >= 1")
            }
            RaftConfigError::LeaseCheckInterval => write!(f, "expected lease_check_interval > 0"),
            RaftConfigError::LeaseReadWithoutCheckQuorum => write!(
                f,
                "a lease-based read needs check_quorum (etcd-io/raft Config.validate)"
            ),
        }
    }
}

impl std::error::Error for RaftConfigError {}

impl RaftConfig {
    /// A config with the paper's timing (election timeout 150–300 ms, §5.6), heartbeats every
    /// 50 ms, etcd's 500 ms lease check, a promote extension of one maximal election
    /// timeout (300 ms), the paper's commit rule, neither PreVote nor CheckQuorum (etcd-io/raft's
    /// defaults: both `false` in `Config`), and ReadIndex reads (etcd-io/raft's default
    /// `ReadOnlySafe`; a lease would trust a drift bound of 10,000 ppm, 1%, well above the
    /// 500 ppm an NTP-disciplined clock may slew).
    pub fn with_replicas(replicas: Vec<NodeId>) -> RaftConfig {
        RaftConfig {
            replicas,
            election_timeout_min: SimDuration::from_millis(150),
            election_timeout_max: SimDuration::from_millis(300),
            heartbeat_interval: SimDuration::from_millis(50),
            max_entries_per_append: 64,
            lease_check_interval: SimDuration::from_millis(500),
            lease_promote_extend: SimDuration::from_millis(300),
            commit_rule: CommitRule::CurrentTerm,
            pre_vote: false,
            check_quorum: false,
            read_only: ReadOnlyOption::Safe,
            clock_drift_bound_ppm: 10_000,
        }
    }

    /// Checks the rules above.
    pub fn validate(&self) -> Result<(), RaftConfigError> {
        if self.replicas.is_empty() {
            return Err(RaftConfigError::NoReplicas);
        }
        let mut seen = self.replicas.clone();
        seen.sort();
        if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
            return Err(RaftConfigError::DuplicateReplica(w[0]));
        }
        if self.election_timeout_min.0 == 0 || self.election_timeout_min > self.election_timeout_max
        {
            return Err(RaftConfigError::ElectionTimeoutRange);
        }
        if self.heartbeat_interval.0 == 0 || self.heartbeat_interval >= self.election_timeout_min {
            return Err(RaftConfigError::HeartbeatNotBelowElectionTimeout);
        }
        if self.max_entries_per_append == 0 {
            return Err(RaftConfigError::NoEntriesPerAppend);
        }
        if self.lease_check_interval.0 == 0 {
            return Err(RaftConfigError::LeaseCheckInterval);
        }
        if self.read_only == ReadOnlyOption::LeaseBased && !self.check_quorum {
            return Err(RaftConfigError::LeaseReadWithoutCheckQuorum);
        }
        Ok(())
    }

    /// The number of replicas that makes a majority: `n / 2 + 1` (§5.2, §5.3).
    pub fn quorum(&self) -> usize {
        self.replicas.len() / 2 + 1
    }

    /// How long a leader lease lasts from the start of the round a majority acknowledged, on
    /// the leader's clock: `election_timeout_min * 1e6 / (1e6 + clock_drift_bound_ppm)`,
    /// rounded down (thesis §6.4.1).
    pub fn leader_lease(&self) -> SimDuration {
        let ppm = 1_000_000u128;
        let ns = u128::from(self.election_timeout_min.0) * ppm
            / (ppm + u128::from(self.clock_drift_bound_ppm));
        SimDuration(ns as u64)
    }
}
