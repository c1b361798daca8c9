//! The observation vocabulary: what actors claim about themselves, judged by the checkers
//! against true time. Clients report beliefs; servers (lease service, Redis instances,
//! storage) report the state that is the truth the checkers compare beliefs with.

use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId, Observation, WallTime};
use std::num::NonZeroU32;

/// One observation. `kind()` gives the snake_case name fault triggers match on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "obs", rename_all = "snake_case")]
pub enum Obs {
    // ---- leader election (bully nodes, lease-based leaders) ----
    /// "I am leader in `term`" (from now until my `LeaderStepDown`, crash or restart).
    LeaderClaim {
        /// The term (epoch) of this claim; increases with every claim the node makes.
        term: u64,
    },
    /// "I am no longer leader of `term`."
    LeaderStepDown {
        /// The term given up.
        term: u64,
    },
    /// "I started an election" (metrics).
    ElectionStarted,
    /// "I now follow `leader`" (a COORDINATOR accepted; for `eventual_leader`).
    LeaderKnown {
        /// The node this one believes is leader.
        leader: NodeId,
    },

    // ---- lock clients (beliefs) ----
    /// An acquisition attempt started (metrics: acquisitions and failed attempts).
    LockRequested {
        /// Lock (lease or key) name.
        lock: String,
        /// The lock servers this client asks (its lease service, its Redis instance, or its
        /// Redlock instances), as configured. A lock is named by its key within this set: the
        /// checkers judge its truth over these servers only. Empty in traces written before
        /// the field existed.
        #[serde(default)]
        servers: Vec<NodeId>,
        /// The worker thread that made this claim, in a worker with `threads` > 1 (1-based;
        /// `None`, and absent from traces, for a single-threaded node).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<NonZeroU32>,
    },
    /// "I hold `lock` until local monotonic `valid_until_local`."
    LockAcquired {
        /// Lock name.
        lock: String,
        /// Fencing token, if the lock service issues one (leases do; Redis and Redlock do not).
        token: Option<u64>,
        /// The unique value this client stored (Redis) or its lease id as text.
        value: String,
        /// Local monotonic deadline of the belief.
        valid_until_local: LocalTime,
        /// The worker thread that made this claim, in a worker with `threads` > 1 (1-based;
        /// `None`, and absent from traces, for a single-threaded node).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<NonZeroU32>,
    },
    /// "My hold on `lock` is extended until `valid_until_local`."
    LockRenewed {
        /// Lock name.
        lock: String,
        /// Fencing token, if any.
        token: Option<u64>,
        /// New local monotonic deadline.
        valid_until_local: LocalTime,
        /// The worker thread that made this claim, in a worker with `threads` > 1 (1-based;
        /// `None`, and absent from traces, for a single-threaded node).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<NonZeroU32>,
    },
    /// An acquisition attempt failed (denied, no quorum, validity not positive, timeout).
    LockFailed {
        /// Lock name.
        lock: String,
        /// Why, in words.
        reason: String,
        /// The worker thread that made this claim, in a worker with `threads` > 1 (1-based;
        /// `None`, and absent from traces, for a single-threaded node).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<NonZeroU32>,
    },
    /// "I released `lock`" (belief ends).
    LockReleased {
        /// Lock name.
        lock: String,
        /// The worker thread that made this claim, in a worker with `threads` > 1 (1-based;
        /// `None`, and absent from traces, for a single-threaded node).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<NonZeroU32>,
    },
    /// "I no longer hold `lock`" without releasing it (deadline passed, renewal failed).
    LockLost {
        /// Lock name.
        lock: String,
        /// Why, in words.
        reason: String,
        /// The worker thread that made this claim, in a worker with `threads` > 1 (1-based;
        /// `None`, and absent from traces, for a single-threaded node).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<NonZeroU32>,
    },
    /// "My belief that I hold `lock` outlasts its local deadline": from now on it ends at
    /// local monotonic `until_local` (a grace after the deadline), or only when a reply says
    /// no or the client releases (`None`: no deadline). Observed by a lease client whose
    /// belief policy keeps believing (`until_denied` and `grace` when the deadline passes;
    /// any policy when `renew_attempts` gives up renewing), so the checkers judge the belief
    /// to its real end and the story tells it.
    LockBeliefPastDeadline {
        /// Lock name.
        lock: String,
        /// Local monotonic instant the belief now ends at (`None`: no deadline).
        until_local: Option<LocalTime>,
        /// Why, in words.
        reason: String,
        /// The worker thread that made this claim, in a worker with `threads` > 1 (1-based;
        /// `None`, and absent from traces, for a single-threaded node).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<NonZeroU32>,
    },
    /// A worker compared its clock with its validity deadline before writing.
    ValidityChecked {
        /// Lock name.
        lock: String,
        /// Whether the deadline had not yet passed (the worker writes only if true).
        valid: bool,
        /// Local ns left until the deadline (negative: passed).
        remaining_ns: i64,
        /// The worker thread that made this claim, in a worker with `threads` > 1 (1-based;
        /// `None`, and absent from traces, for a single-threaded node).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<NonZeroU32>,
    },
    /// A worker sent a write to storage.
    WriteSent {
        /// The writer's request id (unique per writer), echoed by the storage's
        /// `WriteAccepted`, so a write is judged by the hold it was sent under. 0 in traces
        /// written before the field existed.
        #[serde(default)]
        req: u64,
        /// Fencing token carried, if any.
        token: Option<u64>,
        /// Job id, for idempotent work.
        job: Option<u64>,
        /// The worker thread that made this claim, in a worker with `threads` > 1 (1-based;
        /// `None`, and absent from traces, for a single-threaded node).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<NonZeroU32>,
    },

    /// A worker thread released `lock` with a token it did not store: the one another thread
    /// of the same node stored in their shared lock object (redis-py's `Lock` with
    /// `thread_local=False`; workers with `lock_object: "shared"`). The release script then
    /// deletes the other thread's key.
    SharedTokenRelease {
        /// Lock name.
        lock: String,
        /// The token sent (the other thread's value).
        value: String,
        /// The value this thread's own (last) hold stored.
        own: String,
        /// The releasing thread (1-based).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<NonZeroU32>,
    },

    // ---- servers (truth) ----
    /// Lease service: granted `lease` to `holder` with `token`, for `ttl_ns` of its clock.
    LeaseGranted {
        /// Lease name.
        lease: String,
        /// The new holder.
        holder: NodeId,
        /// Fencing token of this grant.
        token: u64,
        /// TTL, local ns of the service's monotonic clock.
        ttl_ns: u64,
    },
    /// Lease service: renewed the holder's grant.
    LeaseRenewed {
        /// Lease name.
        lease: String,
        /// Holder.
        holder: NodeId,
        /// Token of the grant.
        token: u64,
    },
    /// Lease service: the grant ended (released by its holder, or expired by the service's
    /// monotonic clock).
    LeaseFreed {
        /// Lease name.
        lease: String,
        /// Former holder.
        holder: NodeId,
        /// Token of the ended grant.
        token: u64,
        /// `true` if it expired, `false` if released.
        expired: bool,
    },
    /// Redis instance: `key` now holds `value` with an absolute wall-clock deadline (or none).
    RedisKeySet {
        /// Key.
        key: String,
        /// Value.
        value: String,
        /// The key's deadline on this instance's wall clock (ns): the FIRST wall instant at
        /// which the key is expired, `(deadline_ms + 1) * 1_000_000`, because Redis keeps a
        /// key alive through its whole deadline millisecond (`now_ms > deadline_ms` expires
        /// it). So `wall >= deadline_wall` (the checker's `key_expired`) is exactly Redis's
        /// rule. `None`: no TTL.
        deadline_wall: Option<WallTime>,
    },
    /// Redis instance: `key`'s deadline changed (PEXPIRE by the extend script).
    RedisKeyExpiry {
        /// Key.
        key: String,
        /// New deadline: the first wall instant (ns) at which the key is expired, as in
        /// `RedisKeySet`.
        deadline_wall: Option<WallTime>,
    },
    /// Redis instance: `key` was deleted (DEL, release script, PEXPIRE <= 0, or lazy expiry:
    /// an expired key found on access).
    RedisKeyDeleted {
        /// Key.
        key: String,
    },
    /// Redis instance: restarted; these keys survived (per its persistence mode).
    RedisRestarted {
        /// Surviving keys live when it became available: (key, value, deadline as the first
        /// expired wall instant, as in `RedisKeySet`).
        keys: Vec<(String, String, Option<WallTime>)>,
    },
    /// Raft replica: applied the committed entry at log `index` (of `term`), whose command has
    /// the 64-bit digest `digest` (state machine safety: every replica applies the same
    /// command at an index).
    RaftApplied {
        /// Log index (1-based).
        index: u64,
        /// The entry's term.
        term: u64,
        /// FNV-1a digest of the entry's command.
        digest: u64,
    },
    /// Raft replica: applying a committed `Acquire` created the lock key `lock` for `holder`
    /// at create revision `revision` (its fencing token). Every replica that applies the entry
    /// says so; the first marks the commit.
    RaftKeyCreated {
        /// Lock key.
        lock: String,
        /// The client whose acquisition created the key.
        holder: NodeId,
        /// The key's create revision: the fencing token.
        revision: u64,
        /// For a key an etcd `Mutex` put: the lock's name (the key's prefix without its
        /// trailing `/`). The lock is held by the owner of the first-created key under the
        /// prefix, not by every key's owner.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mutex: Option<String>,
    },
    /// Raft replica: applying a committed lease revocation (release, or expiry decided by the
    /// leader) deleted the lock key `lock` created at `revision`.
    RaftKeyDeleted {
        /// Lock key.
        lock: String,
        /// The deleted key's create revision.
        revision: u64,
        /// `true` if its lease expired, `false` if its holder released it.
        expired: bool,
    },
    /// Redis instance: it is a replica of `primary` (observed once, when it starts). The
    /// checkers' truth takes a primary and its replicas as one lock server whose value is
    /// the current primary's (docs/truth.md, "Replication").
    RedisReplicaOf {
        /// The primary it replicates.
        primary: NodeId,
    },
    /// Redis instance: the failover rule promoted this replica to primary in place of
    /// `primary` (Sentinel's `+switch-master`).
    RedisPromoted {
        /// The primary it replaces.
        primary: NodeId,
    },
    /// Storage accepted a write.
    WriteAccepted {
        /// The client whose write it was.
        writer: NodeId,
        /// The writer's request id of the write (its `WriteSent`'s `req`); 0 in traces
        /// written before the field existed.
        #[serde(default)]
        req: u64,
        /// Its fencing token, if it carried one.
        token: Option<u64>,
        /// Job id (idempotent work).
        job: Option<u64>,
        /// `false` if the write was a duplicate of an already-applied job (no effect).
        applied: bool,
    },
    /// Storage rejected a write.
    WriteRejected {
        /// The client whose write it was.
        writer: NodeId,
        /// Its token, if any.
        token: Option<u64>,
        /// Highest token accepted so far.
        highest: Option<u64>,
        /// Why, in words ("stale token", "no fencing token").
        reason: String,
    },
}

impl Observation for Obs {
    fn kind(&self) -> &'static str {
        match self {
            Obs::LeaderClaim { .. } => "leader_claim",
            Obs::LeaderStepDown { .. } => "leader_step_down",
            Obs::ElectionStarted => "election_started",
            Obs::LeaderKnown { .. } => "leader_known",
            Obs::LockRequested { .. } => "lock_requested",
            Obs::LockAcquired { .. } => "lock_acquired",
            Obs::LockRenewed { .. } => "lock_renewed",
            Obs::LockFailed { .. } => "lock_failed",
            Obs::LockReleased { .. } => "lock_released",
            Obs::LockLost { .. } => "lock_lost",
            Obs::LockBeliefPastDeadline { .. } => "lock_belief_past_deadline",
            Obs::ValidityChecked { .. } => "validity_checked",
            Obs::WriteSent { .. } => "write_sent",
            Obs::LeaseGranted { .. } => "lease_granted",
            Obs::LeaseRenewed { .. } => "lease_renewed",
            Obs::LeaseFreed { .. } => "lease_freed",
            Obs::RedisKeySet { .. } => "redis_key_set",
            Obs::RedisKeyExpiry { .. } => "redis_key_expiry",
            Obs::RedisKeyDeleted { .. } => "redis_key_deleted",
            Obs::RedisRestarted { .. } => "redis_restarted",
            Obs::RaftApplied { .. } => "raft_applied",
            Obs::RaftKeyCreated { .. } => "raft_key_created",
            Obs::RaftKeyDeleted { .. } => "raft_key_deleted",
            Obs::RedisReplicaOf { .. } => "redis_replica_of",
            Obs::RedisPromoted { .. } => "redis_promoted",
            Obs::WriteAccepted { .. } => "write_accepted",
            Obs::WriteRejected { .. } => "write_rejected",
            Obs::SharedTokenRelease { .. } => "shared_token_release",
        }
    }
}

/// How the checkers read the observations of a node whose role is written outside this crate
/// ([`crate::custom`]): as those of the built-in role it stands in for (docs/truth.md). Beliefs come from clients and leaders, truth from lock
/// servers, judged writes from storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgedAs {
    /// A lock client, as a `worker`: its `lock_*`, `validity_checked` and `write_sent`
    /// observations are beliefs.
    LockClient,
    /// A lock server, as a `lease_service`: its `lease_granted` / `lease_renewed` /
    /// `lease_freed` observations are the truth of who holds a lock.
    LockServer,
    /// A leader-election participant, as a `lease_leader`: its `leader_claim`s are judged.
    Leader,
    /// Storage, as `storage`: its `write_accepted` / `write_rejected` are judged.
    Storage,
    /// Nothing it observes is judged.
    Other,
}

/// Every observation kind name, for validating trigger names in scenario files.
pub const OBSERVATION_KINDS: &[&str] = &[
    "leader_claim",
    "leader_step_down",
    "election_started",
    "leader_known",
    "lock_requested",
    "lock_acquired",
    "lock_renewed",
    "lock_failed",
    "lock_released",
    "lock_lost",
    "lock_belief_past_deadline",
    "validity_checked",
    "write_sent",
    "lease_granted",
    "lease_renewed",
    "lease_freed",
    "redis_key_set",
    "redis_key_expiry",
    "redis_key_deleted",
    "redis_restarted",
    "raft_applied",
    "raft_key_created",
    "raft_key_deleted",
    "redis_replica_of",
    "redis_promoted",
    "write_accepted",
    "write_rejected",
    "shared_token_release",
];

impl Obs {
    /// The worker thread that made this claim (workers with `threads` > 1), if any.
    pub fn thread(&self) -> Option<u32> {
        match self {
            Obs::LockRequested { thread, .. }
            | Obs::LockAcquired { thread, .. }
            | Obs::LockRenewed { thread, .. }
            | Obs::LockFailed { thread, .. }
            | Obs::LockReleased { thread, .. }
            | Obs::LockLost { thread, .. }
            | Obs::LockBeliefPastDeadline { thread, .. }
            | Obs::ValidityChecked { thread, .. }
            | Obs::WriteSent { thread, .. }
            | Obs::SharedTokenRelease { thread, .. } => thread.map(NonZeroU32::get),
            _ => None,
        }
    }

    /// Stamps the worker thread on a claim that carries one (no effect on the others).
    pub fn set_thread(&mut self, t: Option<u32>) {
        let t = t.map(|t| NonZeroU32::new(t).expect("worker threads are numbered from 1"));
        match self {
            Obs::LockRequested { thread, .. }
            | Obs::LockAcquired { thread, .. }
            | Obs::LockRenewed { thread, .. }
            | Obs::LockFailed { thread, .. }
            | Obs::LockReleased { thread, .. }
            | Obs::LockLost { thread, .. }
            | Obs::LockBeliefPastDeadline { thread, .. }
            | Obs::ValidityChecked { thread, .. }
            | Obs::WriteSent { thread, .. }
            | Obs::SharedTokenRelease { thread, .. } => *thread = t,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Obs;
    use splitbrain_engine::Observed;

    /// A run keeps tens of thousands of observations: the largest kinds (a lock acquired, a
    /// shared token's release) take 72 bytes and the thread, a 4-byte number that is never 0,
    /// sits beside the kind (an `Option<u32>` thread would make `Obs` 88 bytes).
    #[test]
    fn an_observation_is_eighty_bytes() {
        assert_eq!(std::mem::size_of::<Obs>(), 80);
        assert_eq!(std::mem::size_of::<Observed<Obs>>(), 96);
    }

    /// A claim's thread is written and read as before: a number, absent for none.
    #[test]
    fn a_thread_reads_back_as_written() {
        let mut o = Obs::LockReleased {
            lock: "l".to_string(),
            thread: None,
        };
        assert_eq!(
            serde_json::to_string(&o).unwrap(),
            r#"{"obs":"lock_released","lock":"l"}"#
        );
        o.set_thread(Some(2));
        let json = serde_json::to_string(&o).unwrap();
        assert_eq!(json, r#"{"obs":"lock_released","lock":"l","thread":2}"#);
        let back: Obs = serde_json::from_str(&json).unwrap();
        assert_eq!((back.thread(), back), (Some(2), o));
    }
}
