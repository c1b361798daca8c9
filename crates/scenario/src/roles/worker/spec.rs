//! The worker's file spec: one flat struct whose lock-specific fields apply to the chosen
//! `lock` only (the lock modules beside this file check and map them).

pub use super::redis::{OnRefreshFailureSpec, RefreshSpec};
use crate::duration::Dur;
use crate::role::{BeliefFields, ClockSpec, RenewFailureSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The delay before a Redis or Redlock client's retry (one policy type for both clients,
/// `protocols::retry::RetryPolicy`); every random draw comes from the worker's RNG stream.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "policy", rename_all = "snake_case", deny_unknown_fields)]
pub enum RetrySpec {
    /// Uniform in `0..=max` (the default, max 200 ms): the distlock page's "retry after a
    /// random delay".
    Uniform {
        /// Longest delay.
        max: Dur,
    },
    /// `delay` plus a jitter uniform in `-jitter..=+jitter` (at least 0): node-redlock's
    /// `retryDelay` + `retryJitter` (`retryDelay + floor((random * 2 - 1) * retryJitter)`),
    /// redlock-rb's `retry_delay` / `retry_jitter`. Jitter default 0 (no draw).
    Fixed {
        /// Base delay (node-redlock `retryDelay`).
        delay: Dur,
        /// Jitter bound (node-redlock `retryJitter`; default 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        jitter: Option<Dur>,
    },
    /// Capped exponential backoff, no randomness: retry `k` waits `min(cap, base * 2^(k-1))`
    /// (redsync's `WithRetryDelayFunc` with a doubling function).
    Exponential {
        /// First retry's delay.
        base: Dur,
        /// Longest delay.
        cap: Dur,
    },
}

/// How a Redlock worker checks validity: a boolean (kept from earlier files: `true` is
/// `"local_deadline"`, `false` is `"off"`) or one of the named modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    untagged,
    expecting = "expected true, false, \"local_deadline\", \"quorum_count\" or \"off\""
)]
pub enum ValidityCheckSpec {
    /// `true` = `"local_deadline"`, `false` = `"off"`.
    Bool(bool),
    /// A named mode.
    Mode(ValidityCheckMode),
}

/// The named validity-check modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ValidityCheckMode {
    /// `validity > 0` at acquisition, the local deadline before writing (default).
    LocalDeadline,
    /// `validity > 0` at acquisition, then count the instances still holding the value.
    QuorumCount,
    /// No `validity > 0` test at acquisition (a bug); the local deadline before writing.
    Off,
}

impl ValidityCheckSpec {
    /// The named mode (`true` -> local_deadline, `false` -> off).
    pub fn mode(self) -> ValidityCheckMode {
        match self {
            ValidityCheckSpec::Bool(true) => ValidityCheckMode::LocalDeadline,
            ValidityCheckSpec::Bool(false) => ValidityCheckMode::Off,
            ValidityCheckSpec::Mode(m) => m,
        }
    }
}

/// Which lock a worker uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LockKind {
    /// The lease service (`service`).
    Lease,
    /// One Redis instance (`instance`).
    Redis,
    /// Redlock over several instances (`instances`).
    Redlock,
    /// The Raft-replicated lock service (`replicas`).
    Raft,
    /// etcd's `concurrency` Session + Mutex over the Raft-replicated store (`replicas`).
    EtcdMutex,
    /// ZooKeeper's lock recipe (Curator / kazoo) over the Raft group as an ensemble
    /// (`replicas`).
    Zookeeper,
}

impl LockKind {
    /// Every lock kind, in the order of the schema.
    pub const ALL: [LockKind; 6] = [
        LockKind::Lease,
        LockKind::Redis,
        LockKind::Redlock,
        LockKind::Raft,
        LockKind::EtcdMutex,
        LockKind::Zookeeper,
    ];

    /// The kind's name in files (`"lock": "redlock"`).
    pub fn name(self) -> &'static str {
        match self {
            LockKind::Lease => "lease",
            LockKind::Redis => "redis",
            LockKind::Redlock => "redlock",
            LockKind::Raft => "raft",
            LockKind::EtcdMutex => "etcd_mutex",
            LockKind::Zookeeper => "zookeeper",
        }
    }
}

/// How a Redis lock client releases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReleaseSpec {
    /// The release script: delete only if the value is ours (default).
    CompareAndDelete,
    /// Plain DEL: can delete another client's lock (unsafe, for teaching).
    Delete,
}

/// When the Redlock client takes its start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StartTimeSpec {
    /// Before the first request (correct; default).
    BeforeRequests,
    /// After the replies (a bug: elapsed time is lost).
    AfterReplies,
    /// Before the first request of the acquisition's first attempt, kept across retries (a
    /// published client bug: the failed attempts and retry delays count as elapsed, so a
    /// retried acquisition is believed for less than it holds or given up with validity <= 0).
    FirstAttempt,
}

/// Whether a worker's threads share one lock object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LockObjectSpec {
    /// Each thread's token is its own (default; redis-py `Lock(thread_local=True)`).
    ThreadLocal,
    /// One token field shared by the node's threads (redis-py `Lock(thread_local=False)`
    /// used from several threads: a second acquisition overwrites the token the first
    /// holder releases with, so its release deletes the second holder's key).
    Shared,
}

/// How the Redlock client contacts the instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RedlockModeSpec {
    /// All at once (node-redlock; default).
    Parallel,
    /// One after another (redlock-rb).
    Sequential,
}

/// Worker parameters. Lock-specific fields apply to the chosen `lock` only.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkerSpec {
    /// Expand into `count` nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = "crate::limits::MAX_NODES"))]
    pub count: Option<u32>,
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// The lock it uses.
    pub lock: LockKind,
    /// Storage node it writes to.
    pub storage: String,
    /// Lock name (lease name or Redis key; default "lock").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Lock TTL (default 10 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<Dur>,
    /// Local work between acquiring and checking validity (default 2 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_time: Option<Dur>,
    /// Pause between rounds (default 1 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_time: Option<Dur>,
    /// From the validity check to sending the write (default 1 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_delay: Option<Dur>,
    /// Start this late (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_after: Option<Dur>,
    /// Stop after this many rounds (default: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub rounds: Option<u32>,
    /// Writes carry job ids so storage applies each job once (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// lease: the lease service node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// lease: renewal period while working (default: no renewal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_every: Option<Dur>,
    /// lease, raft: stop believing this long before the local deadline (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_margin: Option<Dur>,
    /// lease: older alias of `on_renew_failure`: true is "stop_at_deadline", false is
    /// "keep_believing" (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_on_renew_failure: Option<bool>,
    /// lease: what the client believes while renewals fail (default "stop_at_deadline").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_renew_failure: Option<RenewFailureSpec>,
    /// lease: with `on_renew_failure: "grace"`, how long to believe after the local deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace: Option<Dur>,
    /// lease: stop renewing after this many consecutive failed renewals, yet keep believing
    /// with no deadline until release (a watchdog that dies quietly; default: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub renew_attempts: Option<u32>,
    /// redis: the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// redis: release method (default compare_and_delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<ReleaseSpec>,
    /// redis: how `extend_every` and `watchdog` refresh the hold (default extend_if_owner:
    /// the compare-and-PEXPIRE script of redis-py `Lock.extend` / Redisson; `reset`: a plain
    /// `SET key value PX ttl` that re-takes a key another client holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh: Option<RefreshSpec>,
    /// redis: what the client believes after a refresh fails (0 reply, error, no reply within
    /// `request_timeout`): stop_believing (default, LockLost at once), until_deadline (keep
    /// the current validity), keep_believing (renew the belief anyway: the bug).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_refresh_failure: Option<OnRefreshFailureSpec>,
    /// redis: Redisson-style lock watchdog: refresh every ttl/3 of the client's clock while it
    /// believes it holds (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watchdog: Option<bool>,
    /// redlock: the instances (node names; at most 10,000, the node limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = "crate::limits::MAX_NODES"))]
    pub instances: Option<Vec<String>>,
    /// redlock: per-instance reply timeout (default 50 ms); redis and lease: reply timeout
    /// (default 500 ms); raft: wait before trying the next replica (default 200 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout: Option<Dur>,
    /// redis and redlock: ATTEMPTS per acquisition before giving up a round, the first one
    /// included, as node-redlock documents its `retryCount` and redlock-rb its `retry_count`
    /// (redlock default 3: at most 2 retries; redis default 1: no retry, as redis-py's
    /// `Lock.acquire(blocking=False)`; more attempts are redis-py's blocking loop bounded by
    /// attempts). The same value is sent on every attempt of one acquisition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub retry_count: Option<u32>,
    /// redis and redlock: retry after a uniform delay in `0..=` this (default 200 ms);
    /// shorthand for `retry: {"policy": "uniform", "max": ..}` (give one or the other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_delay_max: Option<Dur>,
    /// redis and redlock: the delay before each retry (default `{"policy": "uniform", "max":
    /// "200ms"}`; redis-py's `sleep=0.1` is `{"policy": "fixed", "delay": "100ms"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetrySpec>,
    /// redis and redlock: clock drift factor, a fraction of the TTL in [0, 1); validity is
    /// `ttl - elapsed - (ttl * factor + 2 ms)` with a factor > 0. Default 0.01 for redlock
    /// (node-redlock `driftFactor`, redlock-rb), 0 for redis (no margin: the distlock page's
    /// single-instance client and redis-py believe for the whole TTL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_drift_factor: Option<f64>,
    /// redlock: parallel or sequential requests (default parallel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RedlockModeSpec>,
    /// redlock: how validity is checked. `"local_deadline"` (default; `true` means the same):
    /// at acquisition require `validity > 0`, and before writing the worker checks the local
    /// deadline. `"off"` (`false`): claim the lock even with `validity <= 0` (a bug).
    /// `"quorum_count"`: check before writing by asking the instances (`GET`) and counting
    /// those still holding the value, ignoring the local deadline (a published bug: a reply
    /// read just before the key expired arrives after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validity_check: Option<ValidityCheckSpec>,
    /// redlock: when the start time is taken: `before_requests` (default, per attempt),
    /// `after_replies`, `first_attempt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<StartTimeSpec>,
    /// redis and redlock: extend the hold this often while working (default: never; redis
    /// uses `refresh`, redlock the extend script on every instance with a quorum).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extend_every: Option<Dur>,
    /// redlock: OK replies needed (default: a majority of `instances`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub quorum: Option<u32>,
    /// redis: threads running the worker loop in this node, each with its own lock client,
    /// timers and beliefs (default 1; observations carry `thread`, 1-based, when above 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub threads: Option<u32>,
    /// redis: whether the threads share one lock object: "thread_local" (default, redis-py
    /// `Lock(thread_local=True)`) or "shared" (redis-py `Lock(thread_local=False)`: one token
    /// field, so a thread that acquires overwrites the token another thread releases with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_object: Option<LockObjectSpec>,
    /// raft, etcd_mutex, zookeeper: the replicas of the Raft lock service (node names; for
    /// zookeeper the ensemble's servers), tried in this order (at most 10,000, the node limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = "crate::limits::MAX_NODES"))]
    pub replicas: Option<Vec<String>>,
    /// etcd_mutex: after waiting, `Lock` reads its own key and fails with
    /// `ErrSessionExpired` if it is gone (etcd v3.5.0 on, the fix of etcd issue #11456;
    /// default true). false: etcd v3.4.3's `Lock`, which reports success to a waiter whose
    /// session expired while it waited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recheck_own_key: Option<bool>,
    /// etcd_mutex: what the holder does when its session ends: "stop" (default: believe the
    /// lock until the session's `Done`) or "ignore" (never consult the session; hold until
    /// released).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_session_done: Option<OnSessionDoneSpec>,
    /// zookeeper: the lock node's name starts with the client's GUID, and after a create whose
    /// reply was lost with the connection the recipe finds its node by it (Curator's
    /// `withProtection()`, kazoo's `Lock`; default true). false: the create is retried, and a
    /// create the ensemble applied leaves an orphan node that blocks the lock while the
    /// session lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protection: Option<bool>,
    /// zookeeper: what the holder does when the connection is SUSPENDED: "give_up" (default:
    /// stop believing at once, Curator's advice) or "hold_until_lost" (keep the lock until
    /// Curator's LOST, a session timeout after SUSPENDED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_suspended: Option<OnSuspendedSpec>,
}

/// What a ZooKeeper lock holder does when the connection is SUSPENDED.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnSuspendedSpec {
    /// Stop believing at once; delete the node once reconnected.
    GiveUp,
    /// Keep the lock through SUSPENDED until LOST.
    HoldUntilLost,
}

/// What an etcd mutex holder does when its session ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnSessionDoneSpec {
    /// Stop believing at the session's `Done` (keepalive deadline or lease not found).
    Stop,
    /// Never consult the session: the lock is believed until released.
    Ignore,
}

impl WorkerSpec {
    /// The lease client's belief policy fields.
    pub fn belief(&self) -> BeliefFields {
        BeliefFields {
            on_renew_failure: self.on_renew_failure,
            grace: self.grace,
            renew_attempts: self.renew_attempts,
            stop_on_renew_failure: self.stop_on_renew_failure,
        }
    }
}
