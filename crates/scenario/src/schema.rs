//! The scenario file format (JSON), version 1. Every field is documented with its unit and
//! default; unknown fields are rejected. `splitbrain schema` prints the JSON Schema generated
//! from these types.

use crate::duration::{Dur, SignedDur};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A whole run: network, nodes, faults, what to check and what to expect.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Path or URL of the JSON Schema, for editors (ignored by splitbrain).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Format version; must be 1.
    pub splitbrain: u32,
    /// Short name (used in traces, reports and chart titles).
    pub name: String,
    /// What the scenario sets up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The lesson it teaches, in one or two sentences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lesson: Option<String>,
    /// Run seed (default 0); `--seed` overrides it.
    #[serde(default)]
    pub seed: u64,
    /// Simulated length of the run (true time). At most 24 h.
    pub duration: Dur,
    /// Default link model and per-link overrides (default: 1 ms fixed delay, no loss, FIFO).
    #[serde(default)]
    pub network: NetworkSpec,
    /// Nodes by name, in file order (node ids follow this order). A node with `count: k`
    /// expands to `name1` .. `namek`.
    pub nodes: indexmap::IndexMap<String, NodeSpec>,
    /// Faults at true times or at protocol points.
    #[serde(default)]
    pub faults: Vec<FaultSpec>,
    /// A random fault generator drawn from the seed (its own stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nemesis: Option<NemesisSpec>,
    /// Invariants to check (names as in DESIGN.md).
    #[serde(default)]
    pub check: Vec<String>,
    /// Parameters of the liveness checks.
    #[serde(default)]
    pub check_params: CheckParams,
    /// Expected outcome per invariant. Without it, the run passes iff nothing is violated.
    #[serde(default)]
    pub expect: BTreeMap<String, Expectation>,
    /// Bounds on the run.
    #[serde(default)]
    pub limits: LimitsSpec,
    /// The true-time window the lesson is about: `report` draws the lesson's chart and opens
    /// its browser view on it (default: the whole run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<ChartWindow>,
}

/// A true-time window of a run, for charts.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChartWindow {
    /// Start (true time, e.g. "1s").
    pub from: Dur,
    /// End (true time, e.g. "1.4s"); after `from`, at most the run's `duration`.
    pub to: Dur,
}

/// Expected outcome of one invariant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Expectation {
    /// No violation.
    Holds,
    /// At least one violation.
    Violated,
}

/// Parameters of the liveness checks.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckParams {
    /// `eventual_leader`: time after the last fault by which one leader must be agreed
    /// (default 5 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<Dur>,
    /// `lock_progress`: longest allowed gap between acquisitions while a majority of lock
    /// servers is up (default 10 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Dur>,
}

/// Bounds on one run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// Most events processed (default 5,000,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_events: Option<u64>,
}

/// A delay distribution. Exactly one key: `{"fixed": "1ms"}`, `{"uniform": ["1ms", "5ms"]}`,
/// `{"normal": {"mean": "5ms", "sd": "1ms"}}` (truncated at 0), `{"exponential": "2ms"}`
/// (mean), `{"lognormal": {"median": "2ms", "sigma": 0.5}}`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum DelaySpec {
    /// Always this delay.
    Fixed(Dur),
    /// Uniform between the two bounds, inclusive.
    Uniform([Dur; 2]),
    /// Normal with mean and standard deviation, truncated at 0.
    Normal {
        /// Mean.
        mean: Dur,
        /// Standard deviation.
        sd: Dur,
    },
    /// Exponential with this mean.
    Exponential(Dur),
    /// Log-normal with this median and shape.
    Lognormal {
        /// Median.
        median: Dur,
        /// Shape (standard deviation of the underlying normal), dimensionless.
        sigma: f64,
    },
}

/// A rare extra delay.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpikeSpec {
    /// Probability per message, 0..=1.
    pub probability: f64,
    /// The extra delay.
    pub delay: DelaySpec,
}

/// The network's default link model plus overrides.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    /// Delay of every message (default `{"fixed": "1ms"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<DelaySpec>,
    /// Optional rare spike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spike: Option<SpikeSpec>,
    /// Loss probability per message, 0..=1 (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// Duplication probability per message, 0..=1 (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate: Option<f64>,
    /// FIFO links: no overtaking (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fifo: Option<bool>,
    /// Per-link overrides (directed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkSpec>,
}

/// An override of one directed link; unset fields follow the default model.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Sender node.
    pub from: String,
    /// Receiver node.
    pub to: String,
    /// Delay on this link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<DelaySpec>,
    /// Loss probability, 0..=1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// Also apply to the reverse direction (default false).
    #[serde(default)]
    pub both_ways: bool,
}

/// A node's clocks.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockSpec {
    /// Monotonic clock rate error, ppm (default 0; within ±500,000).
    #[serde(default)]
    pub drift_ppm: i64,
    /// Wall clock reading at true time 0 (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<SignedDur>,
}

/// One node (or a group of like nodes) and its role.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum NodeSpec {
    /// A bully election participant.
    Bully(BullySpec),
    /// The lease service (a single authoritative lock service).
    LeaseService(LeaseServiceSpec),
    /// A lease-based leader.
    LeaseLeader(LeaseLeaderSpec),
    /// A Redis instance.
    Redis(RedisSpec),
    /// Fenced (or unfenced) storage.
    Storage(StorageSpec),
    /// A worker: acquire, work, check validity, write, release.
    Worker(WorkerSpec),
}

/// Bully node parameters (local monotonic durations).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BullySpec {
    /// Expand into `count` nodes named `<name>1..<name>count` (default: one node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// Wait for an ANSWER before claiming leadership (default 50 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_timeout: Option<Dur>,
    /// Wait for a COORDINATOR after an ANSWER before restarting the election (default 300 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinator_timeout: Option<Dur>,
    /// Leader heartbeat period (default 100 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_every: Option<Dur>,
    /// Silence from the leader after which a follower starts an election (default 300 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_timeout: Option<Dur>,
    /// Start an election at time 0 (default true). With `false`, the highest bully node
    /// starts as the agreed leader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_election: Option<bool>,
}

/// Lease service parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeaseServiceSpec {
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// First fencing token issued (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token: Option<u64>,
}

/// Lease-based leader parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeaseLeaderSpec {
    /// Expand into `count` nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// The lease service node.
    pub service: String,
    /// Lease name (default "leader").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<String>,
    /// Lease TTL (default 10 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<Dur>,
    /// Renewal period (default 3 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_every: Option<Dur>,
    /// Stop believing this long before the local deadline (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_margin: Option<Dur>,
    /// Retry period while not leader (default 1 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_every: Option<Dur>,
    /// Relinquish when renewal fails (default true; false is the classic bug).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_on_renew_failure: Option<bool>,
    /// Storage node the leader writes to while it believes it leads (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_to: Option<String>,
    /// Period of those writes (default 1 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_every: Option<Dur>,
}

/// Redis persistence mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PersistenceSpec {
    /// Nothing survives a restart (default).
    #[default]
    None,
    /// AOF with fsync every second: a crash loses the last second of writes.
    AofEverysec,
    /// AOF with fsync on every write: a crash loses nothing.
    AofAlways,
}

/// Redis instance parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedisSpec {
    /// Expand into `count` nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// What survives a crash (default none).
    #[serde(default)]
    pub persistence: PersistenceSpec,
    /// After a restart, refuse service for this long (the distlock page's delayed restart;
    /// default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_delay: Option<Dur>,
}

/// Storage parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StorageSpec {
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// Reject writes whose token is below the highest accepted (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fencing: Option<bool>,
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
    /// lease: stop believing this long before the local deadline (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_margin: Option<Dur>,
    /// lease: relinquish when a renewal fails (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_on_renew_failure: Option<bool>,
    /// redis: the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// redis: release method (default compare_and_delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<ReleaseSpec>,
    /// redlock: the instances (node names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<Vec<String>>,
    /// redlock: per-instance reply timeout (default 50 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout: Option<Dur>,
    /// redlock: attempts before giving up a round (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_count: Option<u32>,
    /// redlock: retry after a uniform delay up to this (default 200 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_delay_max: Option<Dur>,
    /// redlock: clock drift factor (default 0.01, as the reference clients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_drift_factor: Option<f64>,
    /// redlock: parallel or sequential requests (default parallel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RedlockModeSpec>,
    /// redlock: check `validity > 0` before claiming the lock (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validity_check: Option<bool>,
    /// redlock: when the start time is taken (default before_requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<StartTimeSpec>,
    /// redlock: extend the hold this often while working (default: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extend_every: Option<Dur>,
    /// redlock: OK replies needed (default: a majority of `instances`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<u32>,
}

/// A protocol point: "when `node` reports its `nth` observation of kind `observed`".
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WhenSpec {
    /// Whose observations count.
    pub node: String,
    /// Observation kind, e.g. "validity_checked", "lock_acquired", "leader_claim".
    pub observed: String,
    /// Which occurrence (default 1: the first).
    #[serde(default = "one")]
    pub nth: u32,
}

fn one() -> u32 {
    1
}

/// A one-way block.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockSpec {
    /// Sender side.
    pub from: String,
    /// Receiver side.
    pub to: String,
}

/// One fault: when (`at` a true time, or `when` a protocol point plus `after`), and exactly one
/// action: `crash`, `restart`, `pause` (+ `for`), `partition`, `block`, `cut`, `heal`,
/// `clock_step` (+ `by`), `drift` (+ `ppm`), or `loss`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// True time at which to apply it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Dur>,
    /// Protocol point that triggers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<WhenSpec>,
    /// Delay after the protocol point (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Dur>,
    /// Crash this node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash: Option<String>,
    /// Restart this (crashed) node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart: Option<String>,
    /// Pause this node (stop-the-world) for `for`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<String>,
    /// Length of a pause.
    #[serde(default, rename = "for", skip_serializing_if = "Option::is_none")]
    pub for_: Option<Dur>,
    /// Partition into these groups (nodes in no group reach everyone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<Vec<Vec<String>>>,
    /// Cut one direction of a link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<BlockSpec>,
    /// Cut these links both ways (pairs of node names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<Vec<[String; 2]>>,
    /// Remove every partition, block and cut (`"heal": true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heal: Option<bool>,
    /// Step this node's wall clock by `by`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_step: Option<String>,
    /// Size of a clock step ("+20s", "-5s").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<SignedDur>,
    /// Change this node's drift to `ppm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<String>,
    /// New drift, ppm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ppm: Option<i64>,
    /// Set the loss probability of every link (0..=1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
}

/// Bounds of a nemesis fault kind.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RangeSpec {
    /// Shortest.
    pub min: Dur,
    /// Longest.
    pub max: Dur,
}

/// A random fault generator. Each enabled kind is drawn with equal weight.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NemesisSpec {
    /// Nodes it may target (default: every node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<String>>,
    /// Mean gap between faults (exponential).
    pub mean_interval: Dur,
    /// No fault before this (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Dur>,
    /// No fault at or after this (default: the duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Dur>,
    /// At most this many faults (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_faults: Option<u32>,
    /// Pauses of this length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<RangeSpec>,
    /// Crashes with this downtime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash: Option<RangeSpec>,
    /// Two-sided partitions of this length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<RangeSpec>,
    /// Wall-clock steps up to this size either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_step: Option<Dur>,
}
