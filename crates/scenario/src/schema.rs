//! The scenario file format (JSON), version 1. Every field is documented with its unit and
//! default; unknown fields are rejected. `splitbrain schema` prints the JSON Schema generated
//! from these types. Each role's node spec lives with its role, in `roles/`.

use crate::duration::{Dur, SignedDur};
pub use crate::role::ClockSpec;
pub use crate::roles::NodeSpec;
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
    /// Expected violation rate per invariant, for properties that are probabilistic by
    /// nature: `{"lock_progress": {"violated_at_most": 0.01}}`. Judged over a seed sweep with
    /// the 95% Wilson score interval: the expectation fails when the interval's lower bound
    /// is above `violated_at_most` or its upper bound below `violated_at_least`. `sweep`
    /// judges it over its `--seeds`; `check` runs the sweep over `rate_seeds`. A single run
    /// (`run`) does not judge it. An invariant has `expect` or `expect_rate`, not both.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub expect_rate: BTreeMap<String, RateExpectation>,
    /// The seeds `check` sweeps to judge `expect_rate`: `"A..B"` (B excluded) or `"A..=B"`
    /// (default `"0..1000"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_seeds: Option<String>,
    /// Accept an expected `holds` that is vacuous (its premise never occurred: no write
    /// accepted, no leader claimed, no lock acquired or requested, no job id written). By
    /// default such a `holds` is a mismatch: it shows nothing (default `false`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub vacuous_ok: bool,
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

/// Bounds on the violation rate of one invariant over a seed sweep (fractions in `[0, 1]`;
/// at least one bound).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateExpectation {
    /// Highest acceptable violation rate: fails when the 95% Wilson interval's lower bound
    /// is above it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub violated_at_most: Option<f64>,
    /// Lowest acceptable violation rate: fails when the 95% Wilson interval's upper bound is
    /// below it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub violated_at_least: Option<f64>,
}

/// Parameters of the liveness checks.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckParams {
    /// `eventual_leader`: time after the last fault by which one leader must be agreed
    /// (default 5 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<Dur>,
    /// `lock_progress`: longest allowed time between acquisitions during which a majority of
    /// lock servers is up, some client waits for the lock and nobody validly holds it
    /// (default 10 s).
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
    /// Drift changes: a node's monotonic clock rate error becomes a uniform value in
    /// `-drift_ppm..=drift_ppm` ppm from then on (100000 is 10%; at most 500,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_ppm: Option<u32>,
}
