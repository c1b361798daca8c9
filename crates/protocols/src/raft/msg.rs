//! Raft's wire vocabulary: the two RPCs of the paper (Figure 2), the lock service's client
//! requests and replies, the log entry and its command, and the replica's timers.
//!
//! Client replies are sent only by a leader, and only once the answer is linearizable: a
//! `Granted` / `Released` after the request's entry committed and was applied, a `KeptAlive`
//! after a ReadIndex round (Ongaro's thesis §6.4) confirmed the leader still leads.

use super::znode::{SessionId, ZkEventType, ZkOp, ZkResult};
use serde::{Deserialize, Serialize};
use splitbrain_engine::{Message, NodeId, SimDuration};

/// A Raft term (§5.1): a logical clock, starting at 0, that only grows.
pub type Term = u64;
/// A position in the replicated log, 1-based; 0 means "before the first entry" (§5.3).
pub type LogIndex = u64;
/// An etcd-style lease id: the log index of the entry that created the lease (unique and
/// identical on every replica; etcd draws lease ids on the leader instead).
pub type LeaseId = u64;

/// A command of the lock store's replicated state machine ([`super::store::LockStore`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "op")]
pub enum Command {
    /// The no-op a new leader appends at the start of its term, so that it can commit entries
    /// of earlier terms and serve ReadIndex reads (Raft §5.4.2, §8; thesis §6.4).
    Noop,
    /// etcd `LeaseGrant(ttl)` then `Txn(If(CreateRevision(lock) == 0), Then(Put(lock, lease)))`
    /// in one entry: a lease is created and attached to the lock key only if the key is absent.
    Acquire {
        /// The client that asked (the key's owner if granted).
        client: NodeId,
        /// The client's request id (a retry with the same id is answered the same way).
        req: u64,
        /// The lock key.
        lock: String,
        /// The lease's TTL, ns of the leader's monotonic clock.
        ttl: SimDuration,
    },
    /// etcd `LeaseRevoke(lease)` by its holder: the lease and every key attached go.
    Release {
        /// The client that asked.
        client: NodeId,
        /// The client's request id.
        req: u64,
        /// The lease to revoke.
        lease: LeaseId,
    },
    /// The leader found `lease` expired on its clock (etcd: the lessor's expiry loop proposes
    /// `LeaseRevoke`): the lease and every key attached go.
    ExpireLease {
        /// The expired lease.
        lease: LeaseId,
    },
    /// etcd `LeaseGrant(ttl)` alone (a concurrency `Session`'s lease): a lease with id = the
    /// entry's log index, no key.
    LeaseGrant {
        /// The client that asked.
        client: NodeId,
        /// The client's request id.
        req: u64,
        /// The lease's TTL, ns of the leader's monotonic clock.
        ttl: SimDuration,
    },
    /// The transaction of etcd's `concurrency.Mutex` (`tryAcquire`, client/v3/concurrency/
    /// mutex.go at v3.5.0): `Txn(If(CreateRevision(key) == 0), Then(Put(key, "",
    /// WithLease(lease)), Get(prefix, WithFirstCreate())), Else(Get(key), Get(prefix,
    /// WithFirstCreate())))`. A put under a lease that does not exist fails the whole txn
    /// (etcd `ErrLeaseNotFound`) and changes nothing.
    MutexTxn {
        /// The client that asked.
        client: NodeId,
        /// The client's request id.
        req: u64,
        /// The key to create (`prefix` + the lease id in hex).
        key: String,
        /// The lease to attach it to.
        lease: LeaseId,
        /// The prefix whose first-created key owns the lock.
        prefix: String,
    },
    /// etcd `Range`, served linearizably: the keys from `key` (every key under it if `prefix`),
    /// those with create revision at most `max_create_revision` (0: no bound), sorted by
    /// `order`, at most `limit` of them (0: all).
    Range {
        /// The client that asked.
        client: NodeId,
        /// The client's request id.
        req: u64,
        /// The key, or the prefix.
        key: String,
        /// True for every key starting with `key` (etcd `WithPrefix`).
        prefix: bool,
        /// Only keys created at or before this revision (etcd `WithMaxCreateRev`); 0: all.
        max_create_revision: u64,
        /// The order of the result.
        order: RangeOrder,
        /// At most this many keys (etcd `WithLimit`); 0: all.
        limit: u64,
    },
    /// etcd `DeleteRange` of one key (what `Mutex.Unlock` sends).
    Delete {
        /// The client that asked.
        client: NodeId,
        /// The client's request id.
        req: u64,
        /// The key.
        key: String,
    },
    /// ZooKeeper `createSession` with the timeout the leader negotiated: a session (id = the
    /// entry's log index) and the store lease that carries its expiry.
    ZkCreateSession {
        /// The client that asked.
        client: NodeId,
        /// The client's request id.
        req: u64,
        /// The negotiated session timeout, ns of the leader's monotonic clock.
        timeout: SimDuration,
    },
    /// One ZooKeeper API operation of `session` ([`super::znode::ZnodeTree::apply`]).
    Zk {
        /// The client that asked.
        client: NodeId,
        /// The client's request id.
        req: u64,
        /// The session.
        session: SessionId,
        /// The operation.
        call: ZkOp,
    },
}

/// The order of a [`Command::Range`] result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RangeOrder {
    /// By key, ascending (etcd's default).
    Key,
    /// By create revision, ascending (etcd `WithFirstCreate` with limit 1).
    FirstCreate,
    /// By create revision, descending (etcd `WithLastCreate` with limit 1).
    LastCreate,
}

impl RangeOrder {
    fn code(self) -> u8 {
        match self {
            RangeOrder::Key => 0,
            RangeOrder::FirstCreate => 1,
            RangeOrder::LastCreate => 2,
        }
    }
}

/// One key of a range result, as etcd's `mvccpb.KeyValue` reports it (value left out: the
/// recipes never read it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kv {
    /// The key.
    pub key: String,
    /// Its create revision.
    pub create_revision: u64,
    /// Its last modification's revision.
    pub mod_revision: u64,
    /// Its lease (0: none).
    pub lease: LeaseId,
}

impl Command {
    /// A stable 64-bit FNV-1a digest of the command, for state-machine safety checks that keep
    /// only `(index, digest)` per replica.
    pub fn digest(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for b in bytes {
                h ^= u64::from(*b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        };
        match self {
            Command::Noop => eat(b"noop"),
            Command::Acquire {
                client,
                req,
                lock,
                ttl,
            } => {
                eat(b"acquire");
                eat(&client.0.to_le_bytes());
                eat(&req.to_le_bytes());
                eat(&(lock.len() as u64).to_le_bytes());
                eat(lock.as_bytes());
                eat(&ttl.0.to_le_bytes());
            }
            Command::Release { client, req, lease } => {
                eat(b"release");
                eat(&client.0.to_le_bytes());
                eat(&req.to_le_bytes());
                eat(&lease.to_le_bytes());
            }
            Command::ExpireLease { lease } => {
                eat(b"expire_lease");
                eat(&lease.to_le_bytes());
            }
            Command::LeaseGrant { client, req, ttl } => {
                eat(b"lease_grant");
                eat(&client.0.to_le_bytes());
                eat(&req.to_le_bytes());
                eat(&ttl.0.to_le_bytes());
            }
            Command::MutexTxn {
                client,
                req,
                key,
                lease,
                prefix,
            } => {
                eat(b"mutex_txn");
                eat(&client.0.to_le_bytes());
                eat(&req.to_le_bytes());
                eat(&(key.len() as u64).to_le_bytes());
                eat(key.as_bytes());
                eat(&lease.to_le_bytes());
                eat(&(prefix.len() as u64).to_le_bytes());
                eat(prefix.as_bytes());
            }
            Command::Range {
                client,
                req,
                key,
                prefix,
                max_create_revision,
                order,
                limit,
            } => {
                eat(b"range");
                eat(&client.0.to_le_bytes());
                eat(&req.to_le_bytes());
                eat(&(key.len() as u64).to_le_bytes());
                eat(key.as_bytes());
                eat(&[u8::from(*prefix), order.code()]);
                eat(&max_create_revision.to_le_bytes());
                eat(&limit.to_le_bytes());
            }
            Command::Delete { client, req, key } => {
                eat(b"delete");
                eat(&client.0.to_le_bytes());
                eat(&req.to_le_bytes());
                eat(&(key.len() as u64).to_le_bytes());
                eat(key.as_bytes());
            }
            Command::ZkCreateSession {
                client,
                req,
                timeout,
            } => {
                eat(b"zk_create_session");
                eat(&client.0.to_le_bytes());
                eat(&req.to_le_bytes());
                eat(&timeout.0.to_le_bytes());
            }
            Command::Zk {
                client,
                req,
                session,
                call: op,
            } => {
                eat(b"zk");
                eat(&client.0.to_le_bytes());
                eat(&req.to_le_bytes());
                eat(&session.to_le_bytes());
                let (code, path, a, b) = match op {
                    ZkOp::Create {
                        path,
                        ephemeral,
                        sequential,
                    } => (1u8, path, i64::from(*ephemeral), i64::from(*sequential)),
                    ZkOp::Delete { path, version } => (2, path, i64::from(*version), 0),
                    ZkOp::Exists { path, watch } => (3, path, i64::from(*watch), 0),
                    ZkOp::GetData { path, watch } => (4, path, i64::from(*watch), 0),
                    ZkOp::GetChildren { path, watch } => (5, path, i64::from(*watch), 0),
                };
                eat(&[code]);
                eat(&(path.len() as u64).to_le_bytes());
                eat(path.as_bytes());
                eat(&a.to_le_bytes());
                eat(&b.to_le_bytes());
            }
        }
        h
    }
}

/// One log entry: a command and the term in which a leader created it (§5.3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The leader's term when the entry was appended.
    pub term: Term,
    /// The state machine command.
    pub command: Command,
}

/// Everything a Raft replica and its lock clients send.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum RaftMsg {
    /// Candidate -> replica: vote for me in `term` (§5.2, Figure 2 "RequestVote RPC").
    RequestVote {
        /// The candidate's term.
        term: Term,
        /// Index of the candidate's last log entry (§5.4.1).
        last_log_index: LogIndex,
        /// Term of the candidate's last log entry (§5.4.1).
        last_log_term: Term,
    },
    /// Replica -> candidate: the answer to `RequestVote`.
    RequestVoteResponse {
        /// The voter's current term, for the candidate to update itself.
        term: Term,
        /// True means the candidate received the vote.
        vote_granted: bool,
    },
    /// Leader -> follower: replicate entries, and heartbeat (§5.3, Figure 2 "AppendEntries").
    AppendEntries {
        /// The leader's term.
        term: Term,
        /// Index of the entry just before `entries`.
        prev_log_index: LogIndex,
        /// Term of the entry at `prev_log_index` (0 if `prev_log_index` is 0).
        prev_log_term: Term,
        /// Entries to store (empty for a heartbeat).
        entries: Vec<Entry>,
        /// The leader's commit index.
        leader_commit: LogIndex,
        /// The leader's broadcast round, echoed in the response: a majority of echoes of round
        /// `seq` proves the leader still led after the round began (ReadIndex, thesis §6.4;
        /// etcd carries it as the heartbeat's `Context`).
        seq: u64,
    },
    /// Follower -> leader: the answer to `AppendEntries`.
    AppendEntriesResponse {
        /// The follower's current term.
        term: Term,
        /// True if the follower's log matched `prev_log_index`/`prev_log_term`.
        success: bool,
        /// On success, the index of the last entry now known to match the leader's log; on
        /// failure, the follower's last log index (a hint so the leader backs up quickly,
        /// the optimization sketched at the end of §5.3).
        match_index: LogIndex,
        /// The `seq` of the `AppendEntries` answered.
        seq: u64,
    },
    /// Client -> replica: create the lock key `lock` with a new lease of `ttl` if absent.
    Acquire {
        /// Client request id, echoed in the reply.
        req: u64,
        /// The lock key.
        lock: String,
        /// Lease TTL, ns.
        ttl: SimDuration,
    },
    /// Client -> replica: keep `lease` alive (etcd `LeaseKeepAlive`).
    KeepAlive {
        /// Client request id.
        req: u64,
        /// The lease.
        lease: LeaseId,
    },
    /// Client -> replica: revoke `lease`, releasing the lock attached to it.
    Release {
        /// Client request id.
        req: u64,
        /// The lease.
        lease: LeaseId,
    },
    /// Leader -> client: the lock is yours. `revision` (the key's create revision) is the
    /// fencing token: it grows with every grant, across leader changes.
    Granted {
        /// Request id of the `Acquire`.
        req: u64,
        /// The lock key.
        lock: String,
        /// The key's create revision: the fencing token.
        revision: u64,
        /// The lease the key is attached to.
        lease: LeaseId,
        /// The lease's TTL, ns.
        ttl: SimDuration,
    },
    /// Leader -> client: the key exists (someone else holds the lock).
    Denied {
        /// Request id of the `Acquire`.
        req: u64,
        /// The lock key.
        lock: String,
        /// The holder's create revision.
        held_revision: u64,
    },
    /// Leader -> client: the keepalive was confirmed by a ReadIndex round; the lease lives at
    /// least `ttl` from when the client sent the request.
    KeptAlive {
        /// Request id of the `KeepAlive`.
        req: u64,
        /// The lease.
        lease: LeaseId,
        /// The lease's TTL, ns.
        ttl: SimDuration,
    },
    /// Leader -> client: the lease does not exist (expired, revoked, or being revoked).
    LeaseNotFound {
        /// Request id.
        req: u64,
        /// The lease.
        lease: LeaseId,
    },
    /// Leader -> client: the lease is revoked; `freed` tells whether a lock key went with it.
    Released {
        /// Request id of the `Release`.
        req: u64,
        /// The lease.
        lease: LeaseId,
        /// True if the lease existed and was revoked by this request.
        freed: bool,
    },
    /// Client -> replica: grant a lease of `ttl` (etcd `LeaseGrant`, a `Session`'s start).
    LeaseGrant {
        /// Client request id.
        req: u64,
        /// Lease TTL, ns.
        ttl: SimDuration,
    },
    /// Client -> replica: the `Mutex` transaction ([`Command::MutexTxn`]).
    MutexTxn {
        /// Client request id.
        req: u64,
        /// The key to create.
        key: String,
        /// Its lease.
        lease: LeaseId,
        /// The lock's prefix.
        prefix: String,
    },
    /// Client -> replica: a linearizable range read ([`Command::Range`]).
    Range {
        /// Client request id.
        req: u64,
        /// The key, or the prefix.
        key: String,
        /// True for every key under `key`.
        prefix: bool,
        /// Only keys created at or before this revision; 0: all.
        max_create_revision: u64,
        /// The result's order.
        order: RangeOrder,
        /// At most this many; 0: all.
        limit: u64,
    },
    /// Client -> replica: delete one key ([`Command::Delete`]).
    Delete {
        /// Client request id.
        req: u64,
        /// The key.
        key: String,
    },
    /// Client -> replica: tell me when the key `key` created at `create_revision` is deleted
    /// (etcd `Watch(key, WithRev(rev))` waiting for a DELETE event, as `waitDelete` in
    /// client/v3/concurrency/key.go does). The leader answers at once (`WatchPending` or
    /// `WatchFired`) and, while it leads, pushes `WatchFired` when it applies the deletion;
    /// the client re-sends the registration every request timeout, which stands for the watch
    /// stream's liveness (a watch on a member that is gone is re-established elsewhere).
    WatchDelete {
        /// Client request id.
        req: u64,
        /// The key.
        key: String,
        /// Its create revision (a deleted key with this create revision never comes back).
        create_revision: u64,
    },
    /// Leader -> client: the lease is granted.
    LeaseGranted {
        /// Request id of the `LeaseGrant`.
        req: u64,
        /// The lease id.
        lease: LeaseId,
        /// Its TTL, ns.
        ttl: SimDuration,
    },
    /// Leader -> client: the `MutexTxn` committed.
    TxnResult {
        /// Request id.
        req: u64,
        /// The store revision after the txn (etcd's response header revision).
        revision: u64,
        /// True if the compare held and the key was put.
        succeeded: bool,
        /// The key's create revision (new or existing).
        key_create_revision: u64,
        /// The first-created key under the prefix, if any.
        owner: Option<Kv>,
    },
    /// Leader -> client: the result of a `Range`.
    RangeResult {
        /// Request id.
        req: u64,
        /// The store revision the read saw (etcd's header revision).
        revision: u64,
        /// The keys.
        kvs: Vec<Kv>,
    },
    /// Leader -> client: the `Delete` committed.
    DeleteResult {
        /// Request id.
        req: u64,
        /// The store revision after it.
        revision: u64,
        /// How many keys went (0 or 1).
        deleted: u64,
    },
    /// Leader -> client: the watched key still exists; the watch is registered.
    WatchPending {
        /// Request id of the `WatchDelete`.
        req: u64,
    },
    /// Leader -> client: the watched key is gone.
    WatchFired {
        /// Request id of the `WatchDelete`.
        req: u64,
        /// The key.
        key: String,
    },
    /// Client -> replica: open a ZooKeeper session, asking for `timeout` (the leader
    /// negotiates it within `[2, 20] x tickTime`). Pings are [`RaftMsg::KeepAlive`] on the
    /// session's lease, closing is [`RaftMsg::Release`] of it.
    ZkConnect {
        /// Client request id.
        req: u64,
        /// The requested session timeout, ns.
        timeout: SimDuration,
    },
    /// Client -> replica: one ZooKeeper API operation of `session`.
    ZkRequest {
        /// Client request id.
        req: u64,
        /// The session.
        session: SessionId,
        /// The operation.
        op: ZkOp,
    },
    /// Leader -> client: the session is open.
    ZkConnected {
        /// Request id of the `ZkConnect`.
        req: u64,
        /// The session id.
        session: SessionId,
        /// The negotiated timeout, ns.
        timeout: SimDuration,
        /// The zxid of the `createSession`.
        zxid: u64,
    },
    /// Leader -> client: the answer to a `ZkRequest`, with the last zxid applied.
    ZkReply {
        /// Request id.
        req: u64,
        /// The zxid of the write, or the last zxid applied for a read (the reply header's).
        zxid: u64,
        /// The answer.
        result: ZkResult,
    },
    /// Leader -> client: a watch the client's session set was triggered (one-shot).
    ZkWatchEvent {
        /// The session that set the watch.
        session: SessionId,
        /// The watched path.
        path: String,
        /// What happened.
        event: ZkEventType,
    },
    /// Non-leader -> client: ask the leader instead (`None` when this replica knows none).
    Redirect {
        /// Request id.
        req: u64,
        /// The leader of this replica's current term, if it knows it.
        leader_hint: Option<NodeId>,
    },
    /// Pre-candidate -> replica: would you vote for me in `term` (the sender's term + 1)?
    /// Nobody changes its term for it (Ongaro's thesis §9.6; etcd-io/raft `MsgPreVote`).
    PreVote {
        /// The term the sender would campaign in: its current term + 1.
        term: Term,
        /// Index of the sender's last log entry (§5.4.1).
        last_log_index: LogIndex,
        /// Term of the sender's last log entry (§5.4.1).
        last_log_term: Term,
    },
    /// Replica -> pre-candidate: the answer to `PreVote` (etcd-io/raft `MsgPreVoteResp`).
    PreVoteResponse {
        /// The request's term when granted; the voter's own term when refused (raft.go
        /// `Step`: a refusal carries `r.Term`, so a pre-candidate behind learns the term).
        term: Term,
        /// True means the sender would get this vote.
        vote_granted: bool,
    },
}

impl RaftMsg {
    /// A short stable name of the message's kind, as traces and charts show it.
    pub fn kind(&self) -> &'static str {
        match self {
            RaftMsg::RequestVote { .. } => "REQUEST_VOTE",
            RaftMsg::RequestVoteResponse { .. } => "VOTE",
            RaftMsg::AppendEntries { .. } => "APPEND_ENTRIES",
            RaftMsg::AppendEntriesResponse { .. } => "APPEND_ACK",
            RaftMsg::Acquire { .. } => "RAFT_ACQUIRE",
            RaftMsg::KeepAlive { .. } => "RAFT_KEEPALIVE",
            RaftMsg::Release { .. } => "RAFT_RELEASE",
            RaftMsg::Granted { .. } => "RAFT_GRANTED",
            RaftMsg::Denied { .. } => "RAFT_DENIED",
            RaftMsg::KeptAlive { .. } => "RAFT_KEPT_ALIVE",
            RaftMsg::LeaseNotFound { .. } => "RAFT_LEASE_NOT_FOUND",
            RaftMsg::Released { .. } => "RAFT_RELEASED",
            RaftMsg::Redirect { .. } => "RAFT_REDIRECT",
            RaftMsg::LeaseGrant { .. } => "ETCD_LEASE_GRANT",
            RaftMsg::MutexTxn { .. } => "ETCD_MUTEX_TXN",
            RaftMsg::Range { .. } => "ETCD_RANGE",
            RaftMsg::Delete { .. } => "ETCD_DELETE",
            RaftMsg::WatchDelete { .. } => "ETCD_WATCH_DELETE",
            RaftMsg::LeaseGranted { .. } => "ETCD_LEASE_GRANTED",
            RaftMsg::TxnResult { .. } => "ETCD_TXN_RESULT",
            RaftMsg::RangeResult { .. } => "ETCD_RANGE_RESULT",
            RaftMsg::DeleteResult { .. } => "ETCD_DELETE_RESULT",
            RaftMsg::WatchPending { .. } => "ETCD_WATCH_PENDING",
            RaftMsg::WatchFired { .. } => "ETCD_WATCH_FIRED",
            RaftMsg::PreVote { .. } => "PRE_VOTE",
            RaftMsg::PreVoteResponse { .. } => "PRE_VOTE_RESP",
            RaftMsg::ZkConnect { .. } => "ZK_CONNECT",
            RaftMsg::ZkRequest { op, .. } => match op {
                ZkOp::Create { .. } => "ZK_CREATE",
                ZkOp::Delete { .. } => "ZK_DELETE",
                ZkOp::Exists { .. } => "ZK_EXISTS",
                ZkOp::GetData { .. } => "ZK_GET_DATA",
                ZkOp::GetChildren { .. } => "ZK_GET_CHILDREN",
            },
            RaftMsg::ZkConnected { .. } => "ZK_CONNECTED",
            RaftMsg::ZkReply { .. } => "ZK_REPLY",
            RaftMsg::ZkWatchEvent { .. } => "ZK_WATCH_EVENT",
        }
    }
}

impl Message for RaftMsg {
    fn kind(&self) -> &'static str {
        RaftMsg::kind(self)
    }
}

/// A replica's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RaftTimer {
    /// Follower or candidate: no leader heard from for a whole election timeout (§5.2).
    Election,
    /// Leader: time to send heartbeats (§5.2).
    Heartbeat,
    /// Leader: time to look for expired leases (etcd's lessor loop).
    LeaseCheck,
    /// Leader with CheckQuorum: time to check that a majority was heard from since the last
    /// check (etcd-io/raft `MsgCheckQuorum`, every election timeout).
    CheckQuorum,
}
