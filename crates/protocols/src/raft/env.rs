//! What a Raft replica needs from the world, and what it tells the world: the context trait
//! [`RaftEnv`], the durable state [`RaftDurable`] and the observations [`RaftObs`].
//!
//! The replica is a pure state machine over this trait (stateright's actor shape): the
//! simulator implements it over the engine's `Context`, and the unit tests over a tiny
//! deterministic harness.

use super::msg::{Entry, LeaseId, LogIndex, RaftTimer, Term};
use serde::Serialize;
use splitbrain_engine::{LocalTime, NodeId, Observation, SimDuration};

/// The effects and inputs a replica has: its own clock and random stream, the network, timers,
/// stable storage and observations.
pub trait RaftEnv {
    /// A handle to a pending timer (the engine's `TimerId`; anything `Copy` in tests).
    type TimerHandle: Copy;
    /// Sends `msg` to `to` through the network.
    fn send(&mut self, to: NodeId, msg: crate::raft::msg::RaftMsg);
    /// Sets `timer` to fire after `after` of this replica's monotonic clock.
    fn set_timer(&mut self, after: SimDuration, timer: RaftTimer) -> Self::TimerHandle;
    /// Cancels a pending timer (no effect if it already fired).
    fn cancel_timer(&mut self, handle: Self::TimerHandle);
    /// This replica's monotonic clock now, local ns.
    fn mono_now(&self) -> LocalTime;
    /// The next draw of this replica's own random stream.
    fn rng_u64(&mut self) -> u64;
    /// The state that must survive a crash, as stable storage holds it now, to write in place
    /// (Figure 2: "updated on stable storage before responding to RPCs"). The replica writes
    /// what changed, before any send that depends on the change: a new term or vote, and the
    /// log from the first changed index on, so an append costs the entries appended, as an
    /// append to a log file does, not the whole log.
    fn durable_mut(&mut self) -> &mut RaftDurable;
    /// Reports a claim for the checkers and the narration.
    fn observe(&mut self, obs: RaftObs);
}

/// A replica's stable storage (Figure 2, "Persistent state on all servers"): everything else
/// is rebuilt after a restart (commit index and the store by re-applying once a leader says
/// what is committed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RaftDurable {
    /// Latest term the replica has seen.
    pub current_term: Term,
    /// The candidate that received this replica's vote in `current_term`, if any.
    pub voted_for: Option<NodeId>,
    /// The log, index 1 first.
    pub log: Vec<Entry>,
}

/// What a replica claims, in Raft's own terms. The checkers use `BecameLeader` (at most one per
/// term: Election Safety, §5.2), `Applied` (no two replicas apply different commands at one
/// index: State Machine Safety, §5.4.3) and `Granted` / `KeptAlive` / `LockFreed` (the lock).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum RaftObs {
    /// The replica is a follower in `term`, of `leader` if known.
    BecameFollower {
        /// The term.
        term: Term,
        /// The leader, if known.
        leader: Option<NodeId>,
    },
    /// The replica started an election for `term` (§5.2).
    BecameCandidate {
        /// The new term.
        term: Term,
    },
    /// The replica won the election of `term`.
    BecameLeader {
        /// The term.
        term: Term,
    },
    /// The replica voted for `candidate` in `term` (durably).
    Voted {
        /// The term.
        term: Term,
        /// Who got the vote (possibly itself).
        candidate: NodeId,
    },
    /// Entries `from..=to` were written to the log (durably), the last with `term`.
    Appended {
        /// First index written.
        from: LogIndex,
        /// Last index written.
        to: LogIndex,
        /// The term of the last entry written.
        term: Term,
    },
    /// Entries from `from` on were deleted because they conflicted with the leader's.
    Truncated {
        /// First index deleted.
        from: LogIndex,
    },
    /// The replica learned that entries up to `commit_index` are committed.
    CommitAdvanced {
        /// The new commit index.
        commit_index: LogIndex,
    },
    /// The replica applied the entry at `index` to its store.
    Applied {
        /// Log index.
        index: LogIndex,
        /// The entry's term.
        term: Term,
        /// [`Command::digest`](super::msg::Command::digest) of the command.
        digest: u64,
    },
    /// Applying a committed `Acquire` created the lock key `lock` (every replica that applies
    /// the entry says so; the first to say it marks the commit in true time).
    KeyCreated {
        /// The lock key.
        lock: String,
        /// The client whose `Acquire` created it.
        owner: NodeId,
        /// The key's create revision (the fencing token).
        revision: u64,
        /// The lease the key is attached to.
        lease: LeaseId,
        /// For a key an etcd `Mutex` created: the lock's name (its prefix without the
        /// trailing `/`); the first-created key under the prefix owns the lock.
        mutex: Option<String>,
    },
    /// Applying a committed `Release`, `ExpireLease` or `Delete` deleted the key `lock` (every
    /// replica that applies the entry says so).
    KeyDeleted {
        /// The lock key.
        lock: String,
        /// The deleted key's create revision.
        revision: u64,
        /// True if its lease expired, false if its holder revoked it.
        expired: bool,
    },
    /// The replica was leader of `term` and is not any more (it saw a higher term).
    SteppedDown {
        /// The term it led.
        term: Term,
    },
    /// A new leader re-armed every lease it knows to `now + extend + TTL` (etcd
    /// `lessor.Promote`).
    LeasesPromoted {
        /// The leader's term.
        term: Term,
        /// How many leases were re-armed.
        leases: usize,
        /// The extension added, local ns.
        extend: SimDuration,
    },
    /// The leader answered `Granted`: `client` holds `lock` with fencing token `revision`.
    Granted {
        /// The client.
        client: NodeId,
        /// The lock key.
        lock: String,
        /// The key's create revision (fencing token).
        revision: u64,
        /// The lease.
        lease: LeaseId,
        /// The lease TTL.
        ttl: SimDuration,
        /// True if this grant created the key (false: the answer to a retry).
        fresh: bool,
    },
    /// The leader confirmed a keepalive after a ReadIndex round.
    KeptAlive {
        /// The client.
        client: NodeId,
        /// The lease.
        lease: LeaseId,
        /// The lease TTL.
        ttl: SimDuration,
    },
    /// The leader applied the deletion of `lock` (create revision `revision`) because its
    /// lease was released or expired.
    LockFreed {
        /// The lock key.
        lock: String,
        /// Its create revision.
        revision: u64,
        /// The lease.
        lease: LeaseId,
        /// True if the lease expired, false if its holder released it.
        expired: bool,
    },
    /// The replica restarted from its durable state.
    Restarted {
        /// The durable term.
        term: Term,
        /// The durable log's length.
        log_len: LogIndex,
    },
}

impl RaftObs {
    /// A short stable name of the observation's kind.
    pub fn kind(&self) -> &'static str {
        match self {
            RaftObs::BecameFollower { .. } => "raft_follower",
            RaftObs::BecameCandidate { .. } => "raft_candidate",
            RaftObs::BecameLeader { .. } => "raft_leader",
            RaftObs::Voted { .. } => "raft_voted",
            RaftObs::Appended { .. } => "raft_appended",
            RaftObs::Truncated { .. } => "raft_truncated",
            RaftObs::CommitAdvanced { .. } => "raft_commit",
            RaftObs::Applied { .. } => "raft_applied",
            RaftObs::LeasesPromoted { .. } => "raft_leases_promoted",
            RaftObs::Granted { .. } => "raft_granted",
            RaftObs::KeptAlive { .. } => "raft_kept_alive",
            RaftObs::LockFreed { .. } => "raft_lock_freed",
            RaftObs::Restarted { .. } => "raft_restarted",
            RaftObs::KeyCreated { .. } => "raft_key_created",
            RaftObs::KeyDeleted { .. } => "raft_key_deleted",
            RaftObs::SteppedDown { .. } => "raft_stepped_down",
        }
    }
}

impl Observation for RaftObs {
    fn kind(&self) -> &'static str {
        RaftObs::kind(self)
    }
}
