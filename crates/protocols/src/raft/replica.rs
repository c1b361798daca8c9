//! One Raft replica of the lock service, as a pure state machine over [`RaftEnv`].
//!
//! Raft as published (Ongaro & Ousterhout, "In Search of an Understandable Consensus
//! Algorithm (Extended Version)", 2014, Figure 2; Ongaro's thesis, 2014, §6.4 for reads):
//! - **Terms and roles** (§5.1): any message with a higher term makes the receiver adopt it
//!   and become a follower; a message with a lower term is rejected.
//! - **Election** (§5.2): a follower that hears no leader for a randomized election timeout
//!   (drawn from its own random stream, measured on its own monotonic clock) becomes a
//!   candidate, votes for itself and asks every replica; a replica grants at most one vote per
//!   term, only to a candidate whose log is at least as up-to-date (§5.4.1); a majority wins.
//! - **Replication** (§5.3): the leader appends client commands and sends AppendEntries with
//!   the consistency check; followers truncate conflicting suffixes; heartbeats are empty
//!   AppendEntries.
//! - **Commit** (§5.4.2): the leader commits an entry only of its own term once a majority
//!   stores it (earlier entries commit with it); it appends a no-op when elected (§8).
//! - **Optional election rules** (off by default, as in etcd-io/raft's `Config`): PreVote
//!   (thesis §9.6) and CheckQuorum (thesis §6.2), as etcd-io/raft's raft.go implements them
//!   (see [`RaftConfig::pre_vote`], [`RaftConfig::check_quorum`]); and the planted Figure 8
//!   bug, committing an earlier term's entry by counting replicas ([`CommitRule`]).
//! - **Optional lease reads** (thesis §6.4.1; etcd-io/raft `ReadOnlyLeaseBased`, off by
//!   default): a leader whose heartbeat round a majority acknowledged answers keepalives at
//!   once for a while, trusting a bound on clock drift ([`ReadOnlyOption`]).
//! - **Durability** (Figure 2): `currentTerm`, `votedFor` and the log are persisted before the
//!   replica sends anything that depends on them; a restart rebuilds from them alone.
//!
//! **The lock service on top (etcd's behaviour).** `Acquire` and `Release` go through the log;
//! the client gets its answer only after the entry committed and the leader applied it, so a
//! deposed leader in a minority never grants. `KeepAlive` is not logged (as in etcd, whose
//! `LeaseRenew` first calls `ensureLeadership`, a linearizable read): it is confirmed by a
//! **ReadIndex round** (thesis §6.4): the leader notes the next broadcast round `seq`, sends
//! AppendEntries to everyone, and confirms once a majority of the current term has answered
//! that round and an entry of its term is committed. A deposed leader never gets that
//! majority, so it never confirms.
//!
//! **Lease expiry** is leader-local, volatile state, as in etcd's lessor: a lease's expiry is
//! set to `now + TTL` when the leader applies its grant or confirms a keepalive; followers keep
//! no expiry ("forever", etcd `Demote`). Every `lease_check_interval` the leader proposes
//! [`Command::ExpireLease`] for each lease past its expiry; the lock key goes when that entry
//! is applied. A new leader re-arms every lease to `now + lease_promote_extend + TTL` (etcd
//! `lessor.Promote(extend)`, `extend` = election timeout; etcd without lease checkpoints uses
//! the full TTL, not the remaining one). **Effect on takeover:** after the holder dies, its lock
//! is freed no sooner than `TTL` after its last confirmed keepalive, and if the leader changes
//! in between, no sooner than `extend + TTL` after the new leader took over: a leader change
//! can delay takeover by up to a whole TTL plus one election timeout.
//!
//! **Why a holder's belief is safe** (modulo clock rates, which the client's safety margin
//! absorbs): a client counts its TTL from when it *sent* the request. The serving leader sets
//! the expiry at or after receiving it; any later leader was elected by a majority that
//! includes a replica which had acknowledged the serving leader's round after the request
//! arrived, so it took over later still and arms the lease at `takeover + extend + TTL`. No
//! leader therefore commits `ExpireLease` before the client's own deadline has passed.

use super::config::{CommitRule, RaftConfig, ReadOnlyOption};
use super::env::{RaftDurable, RaftEnv, RaftObs};
use super::log::RaftLog;
use super::msg::{Command, Entry, LeaseId, LogIndex, RaftMsg, RaftTimer, Term};
use super::store::{ApplyResult, LockStore};
use splitbrain_engine::{LocalTime, NodeId, SimDuration};
use std::collections::{BTreeMap, BTreeSet};

/// A replica's role (§5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Passive: answers leaders and candidates.
    Follower,
    /// Asking for votes in its term.
    Candidate,
    /// Handles clients and replicates the log.
    Leader,
}

/// A keepalive waiting for its ReadIndex round.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PendingRead {
    /// The broadcast round that must be acknowledged by a majority.
    seq: u64,
    client: NodeId,
    req: u64,
    lease: LeaseId,
}

/// A registered watch for a key's deletion (leader-local, dropped when the leader steps down:
/// the client re-registers wherever the leader is).
#[derive(Clone, Debug, PartialEq, Eq)]
struct PendingWatch {
    client: NodeId,
    req: u64,
    key: String,
    create_revision: u64,
}

/// One replica. `H` is the environment's timer handle type.
#[derive(Clone, Debug)]
pub struct RaftReplica<H> {
    id: NodeId,
    cfg: RaftConfig,
    peers: Vec<NodeId>,
    // Persistent state (Figure 2).
    term: Term,
    voted_for: Option<NodeId>,
    log: RaftLog,
    // Volatile state.
    role: Role,
    leader: Option<NodeId>,
    commit_index: LogIndex,
    last_applied: LogIndex,
    store: LockStore,
    votes: BTreeSet<NodeId>,
    // Volatile leader state.
    next_index: BTreeMap<NodeId, LogIndex>,
    match_index: BTreeMap<NodeId, LogIndex>,
    acked_seq: BTreeMap<NodeId, u64>,
    seq: u64,
    pending_reads: Vec<PendingRead>,
    lease_expiry: BTreeMap<LeaseId, LocalTime>,
    revoking: BTreeSet<LeaseId>,
    watches: Vec<PendingWatch>,
    election_timer: Option<H>,
    heartbeat_timer: Option<H>,
    lease_timer: Option<H>,
    // PreVote and CheckQuorum (volatile; unused unless their knobs are on).
    /// The pre-votes granted for `term + 1` while pre-campaigning (etcd `StatePreCandidate`).
    pre_votes: Option<BTreeSet<NodeId>>,
    /// When this replica last heard the leader of its term (local monotonic time).
    leader_contact: Option<LocalTime>,
    /// Leader: the peers heard from since the last quorum check (etcd `RecentActive`).
    recent_active: BTreeSet<NodeId>,
    quorum_timer: Option<H>,
    // Lease reads (volatile leader state; unused unless `read_only` is `LeaseBased`).
    /// Leader: when each heartbeat round not yet acknowledged by a majority was sent (local
    /// monotonic time), by round `seq`.
    round_start: BTreeMap<u64, LocalTime>,
    /// Leader: until when (local monotonic time, exclusive) it answers reads without a round.
    lease_until: Option<LocalTime>,
}

impl<H: Copy> RaftReplica<H> {
    /// A fresh replica `id` of the group `cfg` (term 0, empty log). Panics if `cfg` does not
    /// validate or does not list `id`: the scenario layer validates first.
    pub fn new(id: NodeId, cfg: RaftConfig) -> Self {
        if let Err(e) = cfg.validate() {
            panic!("invalid Raft config: {e}");
        }
        assert!(
            cfg.replicas.contains(&id),
            "replica {id} is not in its group"
        );
        let mut peers: Vec<NodeId> = cfg.replicas.iter().copied().filter(|p| *p != id).collect();
        peers.sort();
        RaftReplica {
            id,
            cfg,
            peers,
            term: 0,
            voted_for: None,
            log: RaftLog::new(),
            role: Role::Follower,
            leader: None,
            commit_index: 0,
            last_applied: 0,
            store: LockStore::new(),
            votes: BTreeSet::new(),
            next_index: BTreeMap::new(),
            match_index: BTreeMap::new(),
            acked_seq: BTreeMap::new(),
            seq: 0,
            pending_reads: Vec::new(),
            lease_expiry: BTreeMap::new(),
            revoking: BTreeSet::new(),
            watches: Vec::new(),
            election_timer: None,
            heartbeat_timer: None,
            lease_timer: None,
            pre_votes: None,
            leader_contact: None,
            recent_active: BTreeSet::new(),
            quorum_timer: None,
            round_start: BTreeMap::new(),
            lease_until: None,
        }
    }

    /// This replica's id.
    pub fn id(&self) -> NodeId {
        self.id
    }
    /// Its current role.
    pub fn role(&self) -> Role {
        self.role
    }
    /// Its current term.
    pub fn term(&self) -> Term {
        self.term
    }
    /// Whom it voted for in the current term.
    pub fn voted_for(&self) -> Option<NodeId> {
        self.voted_for
    }
    /// The leader of its current term, if known.
    pub fn leader_hint(&self) -> Option<NodeId> {
        self.leader
    }
    /// Highest index known committed.
    pub fn commit_index(&self) -> LogIndex {
        self.commit_index
    }
    /// Highest index applied to the store.
    pub fn last_applied(&self) -> LogIndex {
        self.last_applied
    }
    /// The log.
    pub fn log(&self) -> &RaftLog {
        &self.log
    }
    /// The lock store (the applied prefix of the log).
    pub fn store(&self) -> &LockStore {
        &self.store
    }
    /// The durable state as it should be persisted now.
    pub fn durable(&self) -> RaftDurable {
        RaftDurable {
            current_term: self.term,
            voted_for: self.voted_for,
            log: self.log.entries().to_vec(),
        }
    }

    /// First start: a follower of term 0 with an election timer.
    pub fn on_start<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        env.observe(RaftObs::BecameFollower {
            term: self.term,
            leader: None,
        });
        self.reset_election_timer(env);
    }

    /// Restart after a crash: everything but `durable` is gone (pending timers too).
    pub fn on_restart<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E, durable: &RaftDurable) {
        *self = RaftReplica::new(self.id, self.cfg.clone());
        self.term = durable.current_term;
        self.voted_for = durable.voted_for;
        self.log = RaftLog::from_entries(durable.log.clone());
        env.observe(RaftObs::Restarted {
            term: self.term,
            log_len: self.log.last_index(),
        });
        env.observe(RaftObs::BecameFollower {
            term: self.term,
            leader: None,
        });
        self.reset_election_timer(env);
    }

    /// A timer came due.
    pub fn on_timer<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E, timer: RaftTimer) {
        match timer {
            RaftTimer::Election => {
                self.election_timer = None;
                if self.role != Role::Leader {
                    if self.cfg.pre_vote {
                        self.start_pre_vote(env);
                    } else {
                        self.start_election(env);
                    }
                }
            }
            RaftTimer::Heartbeat => {
                self.heartbeat_timer = None;
                if self.role == Role::Leader {
                    self.broadcast_append(env);
                    self.heartbeat_timer =
                        Some(env.set_timer(self.cfg.heartbeat_interval, RaftTimer::Heartbeat));
                }
            }
            RaftTimer::LeaseCheck => {
                self.lease_timer = None;
                if self.role == Role::Leader {
                    self.check_leases(env);
                    self.lease_timer =
                        Some(env.set_timer(self.cfg.lease_check_interval, RaftTimer::LeaseCheck));
                }
            }
            RaftTimer::CheckQuorum => {
                self.quorum_timer = None;
                if self.role == Role::Leader {
                    self.check_quorum(env);
                }
            }
        }
    }

    /// A message arrived from `from`.
    pub fn on_message<E: RaftEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        from: NodeId,
        msg: RaftMsg,
    ) {
        match msg {
            RaftMsg::RequestVote {
                term,
                last_log_index,
                last_log_term,
            } => self.on_request_vote(env, from, term, last_log_index, last_log_term),
            RaftMsg::RequestVoteResponse { term, vote_granted } => {
                self.on_vote(env, from, term, vote_granted)
            }
            RaftMsg::PreVote {
                term,
                last_log_index,
                last_log_term,
            } => self.on_pre_vote(env, from, term, last_log_index, last_log_term),
            RaftMsg::PreVoteResponse { term, vote_granted } => {
                self.on_pre_vote_response(env, from, term, vote_granted)
            }
            RaftMsg::AppendEntries {
                term,
                prev_log_index,
                prev_log_term,
                entries,
                leader_commit,
                seq,
            } => self.on_append(
                env,
                from,
                term,
                prev_log_index,
                prev_log_term,
                &entries,
                leader_commit,
                seq,
            ),
            RaftMsg::AppendEntriesResponse {
                term,
                success,
                match_index,
                seq,
            } => self.on_append_response(env, from, term, success, match_index, seq),
            RaftMsg::Acquire { req, lock, ttl } => {
                if self.redirect(env, from, req) {
                    return;
                }
                self.propose(
                    env,
                    Command::Acquire {
                        client: from,
                        req,
                        lock,
                        ttl,
                    },
                );
            }
            RaftMsg::Release { req, lease } => {
                if self.redirect(env, from, req) {
                    return;
                }
                self.propose(
                    env,
                    Command::Release {
                        client: from,
                        req,
                        lease,
                    },
                );
            }
            RaftMsg::KeepAlive { req, lease } => self.on_keepalive(env, from, req, lease),
            RaftMsg::LeaseGrant { req, ttl } => {
                if self.redirect(env, from, req) {
                    return;
                }
                self.propose(
                    env,
                    Command::LeaseGrant {
                        client: from,
                        req,
                        ttl,
                    },
                );
            }
            RaftMsg::MutexTxn {
                req,
                key,
                lease,
                prefix,
            } => {
                if self.redirect(env, from, req) {
                    return;
                }
                self.propose(
                    env,
                    Command::MutexTxn {
                        client: from,
                        req,
                        key,
                        lease,
                        prefix,
                    },
                );
            }
            RaftMsg::Range {
                req,
                key,
                prefix,
                max_create_revision,
                order,
                limit,
            } => {
                if self.redirect(env, from, req) {
                    return;
                }
                self.propose(
                    env,
                    Command::Range {
                        client: from,
                        req,
                        key,
                        prefix,
                        max_create_revision,
                        order,
                        limit,
                    },
                );
            }
            RaftMsg::Delete { req, key } => {
                if self.redirect(env, from, req) {
                    return;
                }
                self.propose(
                    env,
                    Command::Delete {
                        client: from,
                        req,
                        key,
                    },
                );
            }
            RaftMsg::WatchDelete {
                req,
                key,
                create_revision,
            } => {
                if self.redirect(env, from, req) {
                    return;
                }
                self.watches.retain(|w| !(w.client == from && w.key == key));
                let w = PendingWatch {
                    client: from,
                    req,
                    key,
                    create_revision,
                };
                if self.watch_fired(&w) {
                    env.send(from, RaftMsg::WatchFired { req, key: w.key });
                } else {
                    self.watches.push(w);
                    env.send(from, RaftMsg::WatchPending { req });
                }
            }
            RaftMsg::ZkConnect { req, timeout } => {
                if self.redirect(env, from, req) {
                    return;
                }
                // ZooKeeperServer.processConnectRequest: the timeout is clamped to
                // [minSessionTimeout, maxSessionTimeout], by default [2, 20] x tickTime; the
                // leader's session check runs every tickTime, here its lease check interval.
                let tick = self.cfg.lease_check_interval;
                let timeout = SimDuration(super::znode::negotiate_timeout(timeout.0, tick.0));
                self.propose(
                    env,
                    Command::ZkCreateSession {
                        client: from,
                        req,
                        timeout,
                    },
                );
            }
            RaftMsg::ZkRequest { req, session, op } => {
                if self.redirect(env, from, req) {
                    return;
                }
                // Every request touches its session, as a ping does (ZooKeeper's
                // `SessionTracker.touchSession` on each request the leader receives).
                if let Some(l) = self.store.lease(session) {
                    let until = env.mono_now().saturating_add(l.ttl);
                    if !self.revoking.contains(&session) {
                        if let Some(e) = self.lease_expiry.get_mut(&session) {
                            *e = (*e).max(until);
                        }
                    }
                }
                self.propose(
                    env,
                    Command::Zk {
                        client: from,
                        req,
                        session,
                        call: op,
                    },
                );
            }
            // Replies are for clients; a replica ignores them.
            RaftMsg::ZkConnected { .. }
            | RaftMsg::ZkReply { .. }
            | RaftMsg::ZkWatchEvent { .. } => {}
            RaftMsg::LeaseGranted { .. }
            | RaftMsg::TxnResult { .. }
            | RaftMsg::RangeResult { .. }
            | RaftMsg::DeleteResult { .. }
            | RaftMsg::WatchPending { .. }
            | RaftMsg::WatchFired { .. }
            | RaftMsg::Granted { .. }
            | RaftMsg::Denied { .. }
            | RaftMsg::KeptAlive { .. }
            | RaftMsg::LeaseNotFound { .. }
            | RaftMsg::Released { .. }
            | RaftMsg::Redirect { .. } => {}
        }
    }

    // ---- elections (§5.2, §5.4.1) ----

    fn election_timeout<E: RaftEnv<TimerHandle = H>>(&self, env: &mut E) -> SimDuration {
        let (lo, hi) = (
            self.cfg.election_timeout_min.0,
            self.cfg.election_timeout_max.0,
        );
        let span = u128::from(hi - lo) + 1;
        let x = u128::from(env.rng_u64());
        SimDuration(lo + ((x * span) >> 64) as u64)
    }

    fn reset_election_timer<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        if let Some(t) = self.election_timer.take() {
            env.cancel_timer(t);
        }
        let after = self.election_timeout(env);
        self.election_timer = Some(env.set_timer(after, RaftTimer::Election));
    }

    /// Writes the term and vote to stable storage (the log did not change).
    fn persist<E: RaftEnv<TimerHandle = H>>(&self, env: &mut E) {
        let d = env.durable_mut();
        d.current_term = self.term;
        d.voted_for = self.voted_for;
    }

    /// Writes the term, vote and the log from index `from` on (the entries that changed) to
    /// stable storage: what stable storage holds past `from - 1` is replaced, so a
    /// truncation and the append after it are one write. Costs the entries from `from` on,
    /// not the whole log.
    fn persist_log_from<E: RaftEnv<TimerHandle = H>>(&self, env: &mut E, from: LogIndex) {
        let d = env.durable_mut();
        d.current_term = self.term;
        d.voted_for = self.voted_for;
        // Stable storage holds the log up to `from - 1` (it was written after every earlier
        // change); `min` keeps the write whole should it hold less.
        let keep = ((from.max(1) - 1) as usize).min(d.log.len());
        d.log.truncate(keep);
        d.log.extend_from_slice(&self.log.entries()[keep..]);
    }

    fn start_election<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        self.pre_votes = None;
        self.term += 1;
        self.role = Role::Candidate;
        self.leader = None;
        self.voted_for = Some(self.id);
        self.votes = BTreeSet::from([self.id]);
        self.persist(env);
        env.observe(RaftObs::BecameCandidate { term: self.term });
        env.observe(RaftObs::Voted {
            term: self.term,
            candidate: self.id,
        });
        self.reset_election_timer(env);
        let msg = RaftMsg::RequestVote {
            term: self.term,
            last_log_index: self.log.last_index(),
            last_log_term: self.log.last_term(),
        };
        for &p in &self.peers {
            env.send(p, msg.clone());
        }
        if self.votes.len() >= self.cfg.quorum() {
            self.become_leader(env);
        }
    }

    /// Adopts `term` (if higher) and becomes a follower of `leader`.
    fn become_follower<E: RaftEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        term: Term,
        leader: Option<NodeId>,
    ) {
        assert!(term >= self.term, "terms never go back");
        let changed_term = term > self.term;
        let led = self.term;
        if changed_term {
            self.term = term;
            self.voted_for = None;
            self.persist(env);
        }
        let was = self.role;
        let leader_changed = self.leader != leader;
        self.pre_votes = None;
        self.role = Role::Follower;
        self.leader = leader;
        if was == Role::Leader {
            env.observe(RaftObs::SteppedDown { term: led });
            // etcd `lessor.Demote`: a follower keeps no expiries; pending reads are dropped
            // (their clients time out and retry elsewhere).
            for t in [
                self.heartbeat_timer.take(),
                self.lease_timer.take(),
                self.quorum_timer.take(),
            ]
            .into_iter()
            .flatten()
            {
                env.cancel_timer(t);
            }
            self.pending_reads.clear();
            self.watches.clear();
            self.lease_expiry.clear();
            self.revoking.clear();
            self.round_start.clear();
            self.lease_until = None;
        }
        if changed_term || was != Role::Follower || (leader_changed && leader.is_some()) {
            env.observe(RaftObs::BecameFollower { term, leader });
        }
        if self.election_timer.is_none() {
            self.reset_election_timer(env);
        }
    }

    fn on_request_vote<E: RaftEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        from: NodeId,
        term: Term,
        last_log_index: LogIndex,
        last_log_term: Term,
    ) {
        if term > self.term && self.in_lease(env) {
            return;
        }
        if term > self.term {
            self.become_follower(env, term, None);
        }
        let grant = term == self.term
            && (self.voted_for.is_none() || self.voted_for == Some(from))
            && self
                .log
                .candidate_is_up_to_date(last_log_index, last_log_term);
        if grant {
            if self.voted_for != Some(from) {
                self.voted_for = Some(from);
                self.persist(env);
                env.observe(RaftObs::Voted {
                    term: self.term,
                    candidate: from,
                });
            }
            self.reset_election_timer(env);
        }
        env.send(
            from,
            RaftMsg::RequestVoteResponse {
                term: self.term,
                vote_granted: grant,
            },
        );
    }

    fn on_vote<E: RaftEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        from: NodeId,
        term: Term,
        granted: bool,
    ) {
        if term > self.term {
            self.become_follower(env, term, None);
            return;
        }
        if self.role != Role::Candidate || term != self.term || !granted {
            return;
        }
        self.votes.insert(from);
        if self.votes.len() >= self.cfg.quorum() {
            self.become_leader(env);
        }
    }

    fn become_leader<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        self.role = Role::Leader;
        self.leader = Some(self.id);
        if let Some(t) = self.election_timer.take() {
            env.cancel_timer(t);
        }
        env.observe(RaftObs::BecameLeader { term: self.term });
        if self.cfg.check_quorum {
            // etcd `becomeLeader` -> `reset`: every peer starts inactive; the first check is
            // one election timeout from now.
            self.recent_active.clear();
            self.quorum_timer =
                Some(env.set_timer(self.cfg.election_timeout_min, RaftTimer::CheckQuorum));
        }
        // A new term's lease starts from its own rounds only.
        self.round_start.clear();
        self.lease_until = None;
        let next = self.log.last_index() + 1;
        for &p in &self.peers {
            self.next_index.insert(p, next);
            self.match_index.insert(p, 0);
            self.acked_seq.insert(p, 0);
        }
        // etcd `lessor.Promote(extend)`: every known lease lives `extend + TTL` from now.
        let now = env.mono_now();
        let extend = self.cfg.lease_promote_extend;
        self.lease_expiry = self
            .store
            .leases()
            .values()
            .map(|l| (l.id, now.saturating_add(extend.saturating_add(l.ttl))))
            .collect();
        env.observe(RaftObs::LeasesPromoted {
            term: self.term,
            leases: self.lease_expiry.len(),
            extend,
        });
        self.heartbeat_timer =
            Some(env.set_timer(self.cfg.heartbeat_interval, RaftTimer::Heartbeat));
        self.lease_timer =
            Some(env.set_timer(self.cfg.lease_check_interval, RaftTimer::LeaseCheck));
        // The no-op of §8: commits the earlier terms' entries and enables ReadIndex.
        self.propose(env, Command::Noop);
    }

    // ---- PreVote and CheckQuorum (thesis §9.6, §6.2; etcd-io/raft raft.go) ----

    /// etcd-io/raft raft.go `Step`, `inLease`: with CheckQuorum, a leader, and a follower that
    /// heard its leader less than one `election_timeout_min` ago, ignore (Pre)Vote requests of
    /// a higher term. Always false without CheckQuorum.
    fn in_lease<E: RaftEnv<TimerHandle = H>>(&self, env: &mut E) -> bool {
        if !self.cfg.check_quorum || self.leader.is_none() {
            return false;
        }
        if self.role == Role::Leader {
            return true;
        }
        let now = env.mono_now();
        self.leader_contact
            .is_some_and(|c| now.saturating_since(c) < self.cfg.election_timeout_min)
    }

    /// etcd-io/raft `becomePreCandidate` + `campaign(campaignPreElection)`: no term change,
    /// no vote recorded; ask every replica for a pre-vote for `term + 1`.
    fn start_pre_vote<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        self.leader = None;
        self.pre_votes = Some(BTreeSet::from([self.id]));
        self.reset_election_timer(env);
        if self.cfg.quorum() <= 1 {
            self.start_election(env);
            return;
        }
        let msg = RaftMsg::PreVote {
            term: self.term + 1,
            last_log_index: self.log.last_index(),
            last_log_term: self.log.last_term(),
        };
        for &p in &self.peers {
            env.send(p, msg.clone());
        }
    }

    /// etcd-io/raft raft.go `Step` for `MsgPreVote`: never changes this replica's term or vote;
    /// a request of a lower term is refused with this term; otherwise granted when
    /// the request is for a future term (or this replica could vote in its own term) and the
    /// sender's log is at least as up-to-date (§5.4.1). Ignored while `in_lease`.
    fn on_pre_vote<E: RaftEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        from: NodeId,
        term: Term,
        last_log_index: LogIndex,
        last_log_term: Term,
    ) {
        if term > self.term && self.in_lease(env) {
            return;
        }
        let can_vote = term > self.term
            || (term == self.term
                && (self.voted_for == Some(from)
                    || (self.voted_for.is_none() && self.leader.is_none())));
        let grant = can_vote
            && self
                .log
                .candidate_is_up_to_date(last_log_index, last_log_term);
        env.send(
            from,
            RaftMsg::PreVoteResponse {
                term: if grant { term } else { self.term },
                vote_granted: grant,
            },
        );
    }

    /// etcd-io/raft `stepCandidate` for `MsgPreVoteResp`: a refusal of a higher term makes
    /// this replica a follower of that term (raft.go `Step`); a majority of grants for
    /// `term + 1` starts the real election.
    fn on_pre_vote_response<E: RaftEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        from: NodeId,
        term: Term,
        granted: bool,
    ) {
        if term > self.term && !granted {
            self.become_follower(env, term, None);
            return;
        }
        if !granted || term != self.term + 1 {
            return;
        }
        let Some(votes) = self.pre_votes.as_mut() else {
            return;
        };
        votes.insert(from);
        if votes.len() >= self.cfg.quorum() {
            self.start_election(env);
        }
    }

    /// etcd-io/raft `stepLeader` for `MsgCheckQuorum` (`checkQuorumActive`): step down unless a
    /// majority (this leader included) was heard from since the last check; then forget who
    /// was heard and check again one `election_timeout_min` later.
    fn check_quorum<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        if 1 + self.recent_active.len() < self.cfg.quorum() {
            let term = self.term;
            self.become_follower(env, term, None);
            return;
        }
        self.recent_active.clear();
        self.quorum_timer =
            Some(env.set_timer(self.cfg.election_timeout_min, RaftTimer::CheckQuorum));
    }

    // ---- replication (§5.3, §5.4.2) ----

    /// Non-leaders answer client requests with a redirect; returns true if it did.
    fn redirect<E: RaftEnv<TimerHandle = H>>(&self, env: &mut E, client: NodeId, req: u64) -> bool {
        if self.role == Role::Leader {
            return false;
        }
        env.send(
            client,
            RaftMsg::Redirect {
                req,
                leader_hint: self.leader,
            },
        );
        true
    }

    fn propose<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E, command: Command) {
        debug_assert_eq!(self.role, Role::Leader);
        let index = self.log.push(Entry {
            term: self.term,
            command,
        });
        self.persist_log_from(env, index);
        env.observe(RaftObs::Appended {
            from: index,
            to: index,
            term: self.term,
        });
        self.broadcast_append(env);
        self.advance_commit(env);
    }

    fn broadcast_append<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        self.seq += 1;
        if self.cfg.read_only == ReadOnlyOption::LeaseBased {
            self.round_start.insert(self.seq, env.mono_now());
        }
        for i in 0..self.peers.len() {
            let p = self.peers[i];
            self.send_append(env, p);
        }
    }

    fn send_append<E: RaftEnv<TimerHandle = H>>(&self, env: &mut E, to: NodeId) {
        let next = self.next_index[&to];
        let prev = next - 1;
        let prev_term = self
            .log
            .term_at(prev)
            .expect("next_index never passes the leader's log end + 1");
        env.send(
            to,
            RaftMsg::AppendEntries {
                term: self.term,
                prev_log_index: prev,
                prev_log_term: prev_term,
                entries: self.log.slice_from(next, self.cfg.max_entries_per_append),
                leader_commit: self.commit_index,
                seq: self.seq,
            },
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn on_append<E: RaftEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        from: NodeId,
        term: Term,
        prev: LogIndex,
        prev_term: Term,
        entries: &[Entry],
        leader_commit: LogIndex,
        seq: u64,
    ) {
        if term < self.term {
            env.send(
                from,
                RaftMsg::AppendEntriesResponse {
                    term: self.term,
                    success: false,
                    match_index: self.log.last_index(),
                    seq,
                },
            );
            return;
        }
        assert!(
            !(self.role == Role::Leader && term == self.term),
            "two leaders in term {term}: {} and {from} (Election Safety broken)",
            self.id
        );
        if term > self.term || self.role != Role::Follower || self.leader != Some(from) {
            self.become_follower(env, term, Some(from));
        }
        if self.cfg.check_quorum {
            self.leader_contact = Some(env.mono_now());
        }
        self.reset_election_timer(env);
        if !self.log.matches(prev, prev_term) {
            env.send(
                from,
                RaftMsg::AppendEntriesResponse {
                    term: self.term,
                    success: false,
                    match_index: self.log.last_index().min(prev.saturating_sub(1)),
                    seq,
                },
            );
            return;
        }
        let out = self.log.append_from(prev, entries);
        if let Some(from) = out.truncated_from {
            assert!(
                from > self.commit_index || self.cfg.commit_rule == CommitRule::CountReplicas,
                "a committed entry was truncated (Leader Completeness broken)"
            );
            env.observe(RaftObs::Truncated { from });
        }
        if let Some((a, b)) = out.appended {
            // A truncation is always followed by an append from the same index, so this one
            // write covers both.
            self.persist_log_from(env, a);
            env.observe(RaftObs::Appended {
                from: a,
                to: b,
                term: self.log.last_term(),
            });
        }
        let new_commit = leader_commit.min(out.last_new_index);
        if new_commit > self.commit_index {
            self.commit_index = new_commit;
            env.observe(RaftObs::CommitAdvanced {
                commit_index: new_commit,
            });
            self.apply(env);
        }
        env.send(
            from,
            RaftMsg::AppendEntriesResponse {
                term: self.term,
                success: true,
                match_index: out.last_new_index,
                seq,
            },
        );
    }

    fn on_append_response<E: RaftEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        from: NodeId,
        term: Term,
        success: bool,
        match_index: LogIndex,
        seq: u64,
    ) {
        if term > self.term {
            self.become_follower(env, term, None);
            return;
        }
        if self.role != Role::Leader || term != self.term {
            return;
        }
        let Some(acked) = self.acked_seq.get_mut(&from) else {
            return;
        };
        if self.cfg.check_quorum {
            self.recent_active.insert(from);
        }
        *acked = (*acked).max(seq);
        if self.cfg.read_only == ReadOnlyOption::LeaseBased {
            self.extend_lease();
        }
        let matched = self.match_index[&from];
        if success {
            if match_index > matched {
                self.match_index.insert(from, match_index);
                let next = self.next_index[&from].max(match_index + 1);
                self.next_index.insert(from, next);
                self.advance_commit(env);
                if next <= self.log.last_index() {
                    self.send_append(env, from);
                }
            }
        } else {
            let next = self.next_index[&from];
            let backed = (next - 1).min(match_index + 1).max(matched + 1).max(1);
            if backed < next {
                self.next_index.insert(from, backed);
                self.send_append(env, from);
            }
        }
        self.check_reads(env);
    }

    /// Figure 2, "Rules for Servers, Leaders": the highest N > commitIndex stored by a
    /// majority with `log[N].term == currentTerm` becomes the commit index (§5.4.2). Under
    /// [`CommitRule::CountReplicas`] the term test is skipped (Figure 8's planted bug).
    fn advance_commit<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        if self.role != Role::Leader {
            return;
        }
        let mut n = self.log.last_index();
        while n > self.commit_index {
            if self.cfg.commit_rule == CommitRule::CurrentTerm
                && self.log.term_at(n) != Some(self.term)
            {
                // Terms never fall along the log: every entry below is older still.
                break;
            }
            let stored = 1 + self.match_index.values().filter(|m| **m >= n).count();
            if stored >= self.cfg.quorum() {
                self.commit_index = n;
                env.observe(RaftObs::CommitAdvanced { commit_index: n });
                self.apply(env);
                self.check_reads(env);
                return;
            }
            n -= 1;
        }
    }

    // ---- the state machine and its clients ----

    fn apply<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        while self.last_applied < self.commit_index {
            self.last_applied += 1;
            let index = self.last_applied;
            let entry = self
                .log
                .get(index)
                .expect("committed entries exist")
                .clone();
            env.observe(RaftObs::Applied {
                index,
                term: entry.term,
                digest: entry.command.digest(),
            });
            let result = self.store.apply(index, &entry.command);
            self.zk_changes(env);
            match &result {
                ApplyResult::Granted {
                    client,
                    lock,
                    revision,
                    lease,
                    fresh: true,
                    ..
                } => env.observe(RaftObs::KeyCreated {
                    lock: lock.clone(),
                    owner: *client,
                    revision: *revision,
                    lease: *lease,
                    mutex: None,
                }),
                ApplyResult::Txn {
                    client,
                    created: Some(c),
                    ..
                } => env.observe(RaftObs::KeyCreated {
                    lock: c.key.clone(),
                    owner: *client,
                    revision: c.revision,
                    lease: c.lease,
                    mutex: Some(
                        c.mutex_prefix
                            .strip_suffix('/')
                            .unwrap_or(&c.mutex_prefix)
                            .to_string(),
                    ),
                }),
                ApplyResult::Deleted { deleted, .. } => {
                    for (lock, revision) in deleted {
                        env.observe(RaftObs::KeyDeleted {
                            lock: lock.clone(),
                            revision: *revision,
                            expired: false,
                        });
                    }
                }
                ApplyResult::Released { deleted, .. } | ApplyResult::Expired { deleted, .. } => {
                    let expired = matches!(result, ApplyResult::Expired { .. });
                    for (lock, revision) in deleted {
                        env.observe(RaftObs::KeyDeleted {
                            lock: lock.clone(),
                            revision: *revision,
                            expired,
                        });
                    }
                }
                _ => {}
            }
            if self.role != Role::Leader {
                continue;
            }
            // Only entries of the current term were proposed by this leader; replies to earlier
            // terms' requests are left to the client's retry (answered idempotently).
            let reply = entry.term == self.term;
            match result {
                ApplyResult::Noop => {}
                ApplyResult::Granted {
                    client,
                    req,
                    lock,
                    revision,
                    lease,
                    ttl,
                    fresh,
                } => {
                    if fresh {
                        // etcd `lessor.Grant` on the primary: `refresh(0)`.
                        let now = env.mono_now();
                        self.lease_expiry.insert(lease, now.saturating_add(ttl));
                    }
                    if reply {
                        env.observe(RaftObs::Granted {
                            client,
                            lock: lock.clone(),
                            revision,
                            lease,
                            ttl,
                            fresh,
                        });
                        env.send(
                            client,
                            RaftMsg::Granted {
                                req,
                                lock,
                                revision,
                                lease,
                                ttl,
                            },
                        );
                    }
                }
                ApplyResult::Denied {
                    client,
                    req,
                    lock,
                    held_revision,
                } => {
                    if reply {
                        env.send(
                            client,
                            RaftMsg::Denied {
                                req,
                                lock,
                                held_revision,
                            },
                        );
                    }
                }
                ApplyResult::Released {
                    client,
                    req,
                    lease,
                    freed,
                    deleted,
                } => {
                    self.forget_lease(env, lease, deleted, false);
                    if reply {
                        env.send(client, RaftMsg::Released { req, lease, freed });
                    }
                }
                ApplyResult::Expired { lease, deleted, .. } => {
                    self.forget_lease(env, lease, deleted, true);
                }
                ApplyResult::LeaseGranted {
                    client,
                    req,
                    lease,
                    ttl,
                } => {
                    // etcd `lessor.Grant` on the primary: `refresh(0)`.
                    let now = env.mono_now();
                    self.lease_expiry.insert(lease, now.saturating_add(ttl));
                    if reply {
                        env.send(client, RaftMsg::LeaseGranted { req, lease, ttl });
                    }
                }
                ApplyResult::Txn {
                    client,
                    req,
                    revision,
                    succeeded,
                    key_create_revision,
                    owner,
                    ..
                } => {
                    if reply {
                        env.send(
                            client,
                            RaftMsg::TxnResult {
                                req,
                                revision,
                                succeeded,
                                key_create_revision,
                                owner,
                            },
                        );
                    }
                }
                ApplyResult::TxnLeaseNotFound { client, req, lease } => {
                    if reply {
                        env.send(client, RaftMsg::LeaseNotFound { req, lease });
                    }
                }
                ApplyResult::Range {
                    client,
                    req,
                    revision,
                    kvs,
                } => {
                    if reply {
                        env.send(client, RaftMsg::RangeResult { req, revision, kvs });
                    }
                }
                ApplyResult::ZkSession {
                    client,
                    req,
                    session,
                    timeout,
                    zxid,
                } => {
                    // SessionTrackerImpl.addSession on the leader: the session expires
                    // `timeout` from now unless a ping comes.
                    let now = env.mono_now();
                    self.lease_expiry
                        .insert(session, now.saturating_add(timeout));
                    if reply {
                        env.send(
                            client,
                            RaftMsg::ZkConnected {
                                req,
                                session,
                                timeout,
                                zxid,
                            },
                        );
                    }
                }
                ApplyResult::Zk {
                    client,
                    req,
                    zxid,
                    result,
                } => {
                    if reply {
                        env.send(client, RaftMsg::ZkReply { req, zxid, result });
                    }
                }
                ApplyResult::Deleted {
                    client,
                    req,
                    revision,
                    deleted,
                } => {
                    if reply {
                        env.send(
                            client,
                            RaftMsg::DeleteResult {
                                req,
                                revision,
                                deleted: deleted.len() as u64,
                            },
                        );
                    }
                }
            }
        }
        if self.role == Role::Leader && !self.watches.is_empty() {
            self.fire_watches(env);
        }
    }

    /// Reports the ZooKeeper tree's contender nodes created and deleted by the entry just
    /// applied (every replica, as for etcd keys) and, on the leader, sends the watch events it
    /// triggered to the sessions' clients (a follower drops them: the leader tells).
    fn zk_changes<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        use super::znode::TreeChange;
        for c in self.store.zk_mut().take_changes() {
            match c {
                TreeChange::Created {
                    path,
                    parent,
                    czxid,
                    session,
                } => {
                    let owner = self.store.zk_client(session).unwrap_or(NodeId(u32::MAX));
                    env.observe(RaftObs::KeyCreated {
                        lock: path,
                        owner,
                        revision: czxid,
                        lease: session,
                        mutex: Some(parent.trim_start_matches('/').to_string()),
                    });
                }
                TreeChange::Deleted {
                    path,
                    czxid,
                    expired,
                } => env.observe(RaftObs::KeyDeleted {
                    lock: path,
                    revision: czxid,
                    expired,
                }),
            }
        }
        let fired = self.store.zk_mut().take_fired();
        if self.role != Role::Leader {
            return;
        }
        for w in fired {
            if let Some(client) = self.store.zk_client(w.session) {
                env.send(
                    client,
                    RaftMsg::ZkWatchEvent {
                        session: w.session,
                        path: w.path,
                        event: w.event,
                    },
                );
            }
        }
    }

    /// True if the watched key is gone from the applied store
    /// ([`LockStore::deleted_since_created`]).
    fn watch_fired(&self, w: &PendingWatch) -> bool {
        self.store.deleted_since_created(&w.key, w.create_revision)
    }

    /// Pushes `WatchFired` for every registered watch whose key is gone.
    fn fire_watches<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        let (fired, waiting): (Vec<PendingWatch>, Vec<PendingWatch>) =
            std::mem::take(&mut self.watches)
                .into_iter()
                .partition(|w| self.watch_fired(w));
        self.watches = waiting;
        for w in fired {
            env.send(
                w.client,
                RaftMsg::WatchFired {
                    req: w.req,
                    key: w.key,
                },
            );
        }
    }

    fn forget_lease<E: RaftEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        lease: LeaseId,
        deleted: Vec<(String, u64)>,
        expired: bool,
    ) {
        self.lease_expiry.remove(&lease);
        self.revoking.remove(&lease);
        for (lock, revision) in deleted {
            env.observe(RaftObs::LockFreed {
                lock,
                revision,
                lease,
                expired,
            });
        }
    }

    /// Thesis §6.4.1: the newest round a majority (this leader included) acknowledged was sent
    /// at `start`, so no follower of that majority grants a vote to anyone else before
    /// `start + election_timeout_min` on its own clock; the lease runs to
    /// [`RaftConfig::leader_lease`] after `start` on this leader's clock. Rounds at or below
    /// that one are forgotten.
    fn extend_lease(&mut self) {
        let need = self.cfg.quorum() - 1;
        if need == 0 {
            return;
        }
        let mut acks: Vec<u64> = self.acked_seq.values().copied().collect();
        acks.sort_unstable_by(|a, b| b.cmp(a));
        let Some(&seq) = acks.get(need - 1) else {
            return;
        };
        if let Some(&start) = self.round_start.get(&seq) {
            let until = start.saturating_add(self.cfg.leader_lease());
            self.lease_until = Some(self.lease_until.map_or(until, |u| u.max(until)));
        }
        self.round_start = self.round_start.split_off(&(seq + 1));
    }

    /// True if this leader answers a read now without a round: `read_only` is `LeaseBased`,
    /// its lease has not run out on its clock, and an entry of its term is committed
    /// (etcd-io/raft `committedEntryInCurrentTerm`, which holds back every read until then).
    fn leased<E: RaftEnv<TimerHandle = H>>(&self, env: &mut E) -> bool {
        self.cfg.read_only == ReadOnlyOption::LeaseBased
            && self.role == Role::Leader
            && self.log.term_at(self.commit_index) == Some(self.term)
            && self.lease_until.is_some_and(|u| env.mono_now() < u)
    }

    /// A keepalive is a read (etcd's `LeaseRenew` first calls `ensureLeadership`): under a
    /// valid leader lease it is answered at once, with no round (etcd-io/raft
    /// `sendMsgReadIndexResponse`, `ReadOnlyLeaseBased`); otherwise it waits for the next
    /// broadcast round (ReadIndex, `ReadOnlySafe`). Non-leaders redirect.
    fn on_keepalive<E: RaftEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        from: NodeId,
        req: u64,
        lease: LeaseId,
    ) {
        if self.redirect(env, from, req) {
            return;
        }
        let leased = self.leased(env);
        self.pending_reads.push(PendingRead {
            seq: if leased { self.seq } else { self.seq + 1 },
            client: from,
            req,
            lease,
        });
        if !leased {
            self.broadcast_append(env);
        }
        self.check_reads(env);
    }

    /// Confirms the keepalives whose ReadIndex round a majority of this term acknowledged, once
    /// an entry of this term is committed (thesis §6.4 steps 1–2; the leader applies as it
    /// commits, so step 3–4 hold at once), and under a valid leader lease every pending one.
    fn check_reads<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        if self.role != Role::Leader
            || self.pending_reads.is_empty()
            || self.log.term_at(self.commit_index) != Some(self.term)
        {
            return;
        }
        let quorum = self.cfg.quorum();
        let leased = self.leased(env);
        let acked = &self.acked_seq;
        let (ready, waiting): (Vec<PendingRead>, Vec<PendingRead>) =
            std::mem::take(&mut self.pending_reads)
                .into_iter()
                .partition(|r| {
                    leased || 1 + acked.values().filter(|s| **s >= r.seq).count() >= quorum
                });
        self.pending_reads = waiting;
        let now = env.mono_now();
        for r in ready {
            let live = !self.revoking.contains(&r.lease)
                && self.lease_expiry.get(&r.lease).is_some_and(|e| *e > now);
            match self.store.lease(r.lease) {
                Some(l) if live => {
                    let ttl = l.ttl;
                    self.lease_expiry.insert(r.lease, now.saturating_add(ttl));
                    env.observe(RaftObs::KeptAlive {
                        client: r.client,
                        lease: r.lease,
                        ttl,
                    });
                    env.send(
                        r.client,
                        RaftMsg::KeptAlive {
                            req: r.req,
                            lease: r.lease,
                            ttl,
                        },
                    );
                }
                _ => env.send(
                    r.client,
                    RaftMsg::LeaseNotFound {
                        req: r.req,
                        lease: r.lease,
                    },
                ),
            }
        }
    }

    /// The leader's expiry loop: proposes `ExpireLease` for each lease past its expiry.
    fn check_leases<E: RaftEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        let now = env.mono_now();
        let expired: Vec<LeaseId> = self
            .lease_expiry
            .iter()
            .filter(|(id, e)| **e <= now && !self.revoking.contains(id))
            .map(|(id, _)| *id)
            .collect();
        for lease in expired {
            self.revoking.insert(lease);
            self.propose(env, Command::ExpireLease { lease });
        }
    }
}
