//! The scenario file format (JSON), version 2 (`crate::format`: what each version means). Every field is documented with its unit and
//! default; unknown fields are rejected. `splitbrain schema` prints the JSON Schema generated
//! from these types. Each role's node spec lives with its role, in `roles/`.

use crate::duration::{Dur, SignedDur, UnixTime};
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
    /// Format version: 2 (the current), or 1, read with version 1's meaning
    /// (`docs/format-changelog.md`; `splitbrain migrate FILE` rewrites a file to the current).
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
    /// What every node's wall clock reads at true time 0, before its own `clock.offset`: a
    /// Unix time as an RFC 3339 UTC timestamp (default `"2026-01-01T00:00:00Z"`, Unix
    /// 1767225600 s). Real servers read about 1.7e12 ms, so a backward clock step of seconds
    /// leaves Redis's `SET .. PX` valid; a wall clock near 1970 would make Redis reject it
    /// (`now_ms + ttl <= 0`: `ERR invalid expire time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_clock_start: Option<UnixTime>,
    /// Default link model and per-link overrides (default: 1 ms fixed delay, no loss, FIFO).
    #[serde(default)]
    pub network: NetworkSpec,
    /// Nodes by name, in file order (node ids follow this order). A node with `count: k`
    /// expands to `name1` .. `namek`.
    #[serde(deserialize_with = "unique_keys::nodes")]
    pub nodes: indexmap::IndexMap<String, NodeSpec>,
    /// Faults at true times or at protocol points (at most 10,000).
    #[serde(default, deserialize_with = "bounded::faults")]
    #[schemars(length(max = "crate::limits::MAX_FAULTS"))]
    pub faults: Vec<FaultSpec>,
    /// Handling times of messages (Coulouris's Tprocess; default none: every message is
    /// handled the instant it arrives). The first rule that matches a message's receiver and
    /// kind gives its handling time. At most 10,000 rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = "crate::limits::MAX_RULES"))]
    pub processing: Vec<ProcessingSpec>,
    /// A random fault generator drawn from the seed (its own stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nemesis: Option<NemesisSpec>,
    /// Invariants to check (names as in docs/design.md, "Invariants"; at most 100 entries). Absent or empty: the
    /// names in `expect` and `expect_rate`, else every invariant the file's roles can apply to.
    #[serde(default)]
    #[schemars(length(max = "crate::limits::MAX_CHECKS"))]
    pub check: Vec<String>,
    /// Parameters of the liveness checks.
    #[serde(default)]
    pub check_params: CheckParams,
    /// Expected outcome per invariant. A checked invariant without an entry is expected to
    /// hold, exactly as if `"holds"` were written: inconclusive or vacuous is a mismatch.
    #[serde(default, deserialize_with = "unique_keys::btree_map")]
    pub expect: BTreeMap<String, Expectation>,
    /// Expected violation rate per invariant, for properties that are probabilistic by
    /// nature: `{"lock_progress": {"violated_at_most": 0.01}}`. Judged over a seed sweep with
    /// the 95% Wilson score interval: the expectation fails when the interval's lower bound
    /// is above `violated_at_most` or its upper bound below `violated_at_least`. `sweep`
    /// judges it over its `--seeds`; `check` runs the sweep over `rate_seeds`. A single run
    /// (`run`) does not judge it. An invariant has `expect` or `expect_rate`, not both.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "unique_keys::btree_map"
    )]
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
    /// End (true time, e.g. "1.4s"); after `from`, at most the run's `duration`. A
    /// `--set`/`--vary` that makes `duration` shorter than `to` clamps `to` to it (and a
    /// window starting at or after the end becomes the whole run).
    pub to: Dur,
    /// Message kinds the lesson is about (e.g. a storm of ELECTIONs): the browser view opens
    /// with them ticked even when they are bulk traffic, which otherwise starts unticked. At
    /// most 100 entries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = "crate::limits::MAX_CHECKS"))]
    pub shown_kinds: Vec<String>,
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
    /// (default 5 s). 0 s is allowed: it claims the last fault disturbed no leadership (a
    /// follower restarted, a partition that did not cut the leader healed); with no fault it
    /// demands a leader at 0 s, which no election gives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<Dur>,
    /// `lock_progress`: longest allowed time between acquisitions during which a majority of
    /// lock servers is up, some client waits for the lock and nobody validly holds it
    /// (default 10 s); greater than zero (0 s would make every instant of waiting a
    /// violation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Dur>,
    /// `leader_available`: longest allowed time with no leader after the first claim
    /// (default 2 s); greater than zero (0 s would make every election a violation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_gap: Option<Dur>,
}

impl CheckParams {
    /// The value the file gives the invariant parameter `name`
    /// ([`ParamDef::name`](splitbrain_check::ParamDef::name)), if any.
    pub fn get(&self, name: &str) -> Option<splitbrain_engine::SimDuration> {
        match name {
            "settle" => self.settle.map(|d| d.0),
            "window" => self.window.map(|d| d.0),
            "max_gap" => self.max_gap.map(|d| d.0),
            _ => None,
        }
    }
}

/// Bounds on one run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// Most events processed (default 5,000,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_events: Option<u64>,
    /// Most events queued at once: messages in flight, pending timers and faults (default
    /// 20,000,000, about 2 GB). It bounds the run's memory, which `max_events` does not:
    /// 10,000 bully nodes that all start an election queue 49,995,000 ELECTIONs before the
    /// first event runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_in_flight: Option<u64>,
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
    /// Per-link overrides (directed; at most 10,000).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = "crate::limits::MAX_RULES"))]
    pub links: Vec<LinkSpec>,
    /// Per-kind rules: delay, drop or duplicate only the messages of one kind on a link
    /// (default none; at most 10,000). The first rule that matches a message applies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = "crate::limits::MAX_RULES"))]
    pub messages: Vec<MessageRuleSpec>,
}

/// A handling time (Coulouris's Tprocess, T = 2 Ttrans + Tprocess): a node handles one
/// message at a time, like a single-threaded event loop, and a matching message occupies its
/// receiver for `time` of true time from the moment the receiver is free; the handler runs,
/// and its replies leave, at the end. Whatever arrives meanwhile (messages, due timers) waits
/// in arrival order. Timers take no handling time. A pause freezes a handling under way (the
/// rest runs after the pause); a crash drops it. Example: `{"node": "n5", "kind": "ELECTION",
/// "time": "2ms"}`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessingSpec {
    /// Receiving node or nodes (default: every node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeSet>,
    /// Message kind, as traces name it (default: every kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Handling time of each matching message (true time; clocks do not slow a CPU).
    pub time: Dur,
}

/// A rule for the messages of one kind, e.g. only ANSWER from n5 to n4, 40 ms late:
/// `{"kind": "ANSWER", "from": "n5", "to": "n4", "delay": {"fixed": "40ms"}}`. It acts after
/// the link's own model, at send time: a message the link did not lose is dropped with
/// probability `drop`, duplicated with probability `duplicate`, and each copy arrives `delay`
/// later than the link's delay (FIFO links stay FIFO, so later messages on that link queue
/// behind a delayed one).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageRuleSpec {
    /// The message kind as traces name it (`ELECTION`, `ANSWER`, `COORDINATOR`, `HEARTBEAT`,
    /// `LEASE_RENEW`, `LEASE_RENEWED`, `SET`, `REPLY`, `WRITE`, ...).
    pub kind: String,
    /// Sender (default: any node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Receiver (default: any node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Extra delay of each matching message, on top of the link's (default none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<DelaySpec>,
    /// Drop probability of a matching message, 0..=1 (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop: Option<f64>,
    /// Duplication probability of a matching message, 0..=1 (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate: Option<f64>,
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
    /// Observation kind, e.g. "validity_checked", "lock_acquired", "leader_claim": one that
    /// `node`'s role makes (a worker never observes "lease_granted"; its lease service does).
    pub observed: String,
    /// Which occurrence (default 1: the first).
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub nth: u32,
}

fn one() -> u32 {
    1
}

/// One side of a one-way block: a node name (`"n7"`) or a group of node names
/// (`["n5", "n6", "n7"]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum NodeSet {
    /// One node.
    One(String),
    /// A group of nodes (at most 10,000, the node limit).
    Group(#[schemars(length(max = "crate::limits::MAX_NODES"))] Vec<String>),
}

impl NodeSet {
    /// The node names, in file order.
    pub fn names(&self) -> &[String] {
        match self {
            NodeSet::One(n) => std::slice::from_ref(n),
            NodeSet::Group(g) => g,
        }
    }
}

/// `n7`, or `{n5,n6,n7}` for a group, as fault descriptions print it.
impl std::fmt::Display for NodeSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeSet::One(n) => f.write_str(n),
            NodeSet::Group(g) => write!(f, "{{{}}}", g.join(",")),
        }
    }
}

impl<'de> Deserialize<'de> for NodeSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = NodeSet;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a node name or a list of node names")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<NodeSet, E> {
                Ok(NodeSet::One(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<NodeSet, A::Error> {
                let mut out = Vec::new();
                while let Some(n) = a.next_element::<String>()? {
                    out.push(n);
                }
                Ok(NodeSet::Group(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// A one-way block: every link from a node of `from` to a node of `to` is cut, the reverse
/// direction stays open. Written as an object (`{"from": "n7", "to": "n1"}`, or with groups:
/// `{"from": ["n5", "n6", "n7"], "to": ["n1", "n2"]}`) or as a pair `[from, to]`
/// (`["n7", "n1"]`, `[["n5", "n6"], ["n1"]]`). A group block applies as one block per
/// (sender, receiver) pair, all at the same instant.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockSpec {
    /// Sender side: a node or a group.
    pub from: NodeSet,
    /// Receiver side: a node or a group.
    pub to: NodeSet,
}

/// The object form of [`BlockSpec`], for the schema only.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct BlockObject {
    /// Sender side: a node or a group.
    from: NodeSet,
    /// Receiver side: a node or a group.
    to: NodeSet,
}

impl JsonSchema for BlockSpec {
    fn schema_name() -> String {
        "BlockSpec".into()
    }
    fn json_schema(g: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        use schemars::schema::{
            ArrayValidation, InstanceType, Schema, SchemaObject, SingleOrVec, SubschemaValidation,
        };
        let side = g.subschema_for::<NodeSet>();
        let pair = SchemaObject {
            instance_type: Some(SingleOrVec::Single(Box::new(InstanceType::Array))),
            array: Some(Box::new(ArrayValidation {
                items: Some(SingleOrVec::Vec(vec![side.clone(), side])),
                min_items: Some(2),
                max_items: Some(2),
                ..Default::default()
            })),
            ..Default::default()
        };
        let mut o = SchemaObject {
            subschemas: Some(Box::new(SubschemaValidation {
                one_of: Some(vec![g.subschema_for::<BlockObject>(), pair.into()]),
                ..Default::default()
            })),
            ..Default::default()
        };
        o.metadata().description = Some(
            "A one-way block: every link from a node of `from` to a node of `to` is cut; the \
             reverse stays open. `{\"from\": \"n7\", \"to\": \"n1\"}`, groups \
             `{\"from\": [\"n5\", \"n6\"], \"to\": [\"n1\"]}`, or the pair `[from, to]`."
                .into(),
        );
        Schema::Object(o)
    }
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
    /// Partition into these groups (nodes in no group reach everyone; at most 10,000 groups
    /// of at most 10,000 names, the node limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = "crate::limits::MAX_NODES"),
        inner(length(max = "crate::limits::MAX_NODES"))
    )]
    pub partition: Option<Vec<Vec<String>>>,
    /// Cut one direction of a link, or every link from one group to another (one way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<BlockSpec>,
    /// Cut these links both ways (pairs of node names; at most 10,000 pairs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = "crate::limits::MAX_RULES"))]
    pub cut: Option<Vec<[String; 2]>>,
    /// Remove every partition, block and cut (`"heal": true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heal: Option<bool>,
    /// Remove one partition with exactly these groups (as written in its `partition`),
    /// leaving every other rule in force: how the nemesis heals the partition it drew, as
    /// `shrink` and `--explicit` write it out. Errors: groups that repeat no `partition` fault
    /// of the file, node for node and in the same order. Limits as `partition`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = "crate::limits::MAX_NODES"),
        inner(length(max = "crate::limits::MAX_NODES"))
    )]
    pub heal_partition: Option<Vec<Vec<String>>>,
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
    /// Nodes it may target (default: every node; at most 10,000, the node limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = "crate::limits::MAX_NODES"))]
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
    #[schemars(range(min = 1, max = "crate::limits::MAX_FAULTS"))]
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
    /// `-drift_ppm..=drift_ppm` ppm from then on (100000 is 10%; at most 900,000: -900,000 is
    /// a clock at 0.1x).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_ppm: Option<u32>,
}

/// Maps whose keys must be unique. JSON allows a key twice and serde keeps the last value
/// silently: a second `"client-1"` in `nodes` would replace the first node without a word.
mod unique_keys {
    use serde::de::{Deserialize, Deserializer, Error, MapAccess, Visitor};
    use std::collections::BTreeMap;
    use std::fmt;
    use std::marker::PhantomData;

    /// Reads a JSON object into an `IndexMap` (file order), refusing a repeated key.
    pub fn index_map<'de, D, V>(d: D) -> Result<indexmap::IndexMap<String, V>, D::Error>
    where
        D: Deserializer<'de>,
        V: Deserialize<'de>,
    {
        d.deserialize_map(Unique(usize::MAX, PhantomData))
    }

    /// Reads the `nodes` object like [`index_map`], stopping at the first key past
    /// [`crate::limits::MAX_NODES`] (each key is at least one node): a file of millions of
    /// nodes is refused when the limit is passed, not after it is all held in memory.
    pub fn nodes<'de, D, V>(d: D) -> Result<indexmap::IndexMap<String, V>, D::Error>
    where
        D: Deserializer<'de>,
        V: Deserialize<'de>,
    {
        d.deserialize_map(Unique(crate::limits::MAX_NODES, PhantomData))
    }

    /// An object with unique keys, at most `.0` of them.
    struct Unique<V>(usize, PhantomData<V>);
    impl<'de, V: Deserialize<'de>> Visitor<'de> for Unique<V> {
        type Value = indexmap::IndexMap<String, V>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object `{...}`")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = indexmap::IndexMap::new();
            while let Some(key) = map.next_key::<String>()? {
                if out.contains_key(&key) {
                    return Err(A::Error::custom(format!(
                        "`{key}` is defined twice in this object: the second would silently \
                             replace the first"
                    )));
                }
                if out.len() == self.0 {
                    return Err(A::Error::custom(super::bounded::past_node_limit(&key)));
                }
                let value = map.next_value()?;
                out.insert(key, value);
            }
            Ok(out)
        }
    }

    /// Reads a JSON object into a `BTreeMap`, refusing a repeated key.
    pub fn btree_map<'de, D, V>(d: D) -> Result<BTreeMap<String, V>, D::Error>
    where
        D: Deserializer<'de>,
        V: Deserialize<'de>,
    {
        Ok(index_map(d)?.into_iter().collect())
    }
}

/// Lists and maps with a limit on their length, read by visitors that stop at the first entry
/// past it, so a 190 MB file of faults is never held whole in memory (which would abort the
/// process) before validation counts them. The visitor's error names the entry past the limit;
/// [`bounded::past_limit`] turns it into the path and words `load.rs` reports.
pub mod bounded {
    use crate::limits::{MAX_FAULTS, MAX_NODES};
    use crate::locate::Seg;
    use serde::de::{Deserialize, Deserializer, Error, IgnoredAny, SeqAccess, Visitor};
    use std::fmt;

    /// The visitor's words for the node key `key` past [`MAX_NODES`].
    const NODE_SUFFIX: &str = "` is past the node limit";
    /// The visitor's words for an element of `faults` past [`MAX_FAULTS`].
    const FAULTS: &str = "an element of `faults` past the fault limit";

    /// The error of the node key `key`, one past [`MAX_NODES`].
    pub(super) fn past_node_limit(key: &str) -> String {
        format!("`{key}{NODE_SUFFIX}")
    }

    /// The step to add to the error's path (serde names the list or map, not the entry) and
    /// the message, when `message` is a limit visitor's.
    pub fn past_limit(message: &str) -> Option<(Seg, String)> {
        if message == FAULTS {
            return Some((
                Seg::Index(MAX_FAULTS),
                format!("too many faults: the limit is {MAX_FAULTS}"),
            ));
        }
        let key = message.strip_prefix('`')?.strip_suffix(NODE_SUFFIX)?;
        Some((
            Seg::Key(key.to_string()),
            format!("too many nodes: the limit is {MAX_NODES}"),
        ))
    }

    /// Whether `src` is JSON whose `faults` and `nodes` are within their limits (their entries
    /// skipped unread, in constant memory): checked before a `--set` edit holds the whole file
    /// as a JSON tree, which a file of millions of faults does not fit in.
    pub fn readable(src: &str) -> bool {
        #[derive(serde::Deserialize)]
        struct Lists {
            #[serde(default, rename = "faults", deserialize_with = "faults")]
            _faults: Vec<IgnoredAny>,
            #[serde(
                default,
                rename = "nodes",
                deserialize_with = "super::unique_keys::nodes"
            )]
            _nodes: indexmap::IndexMap<String, IgnoredAny>,
        }
        serde_json::from_str::<Lists>(src).is_ok()
    }

    /// Reads `faults`, refusing it at its element past [`MAX_FAULTS`] (skipped unread).
    pub fn faults<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de>,
    {
        struct Bounded<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Bounded<T> {
            type Value = Vec<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a list of faults (at most {MAX_FAULTS})")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
                let mut out = Vec::new();
                while out.len() < MAX_FAULTS {
                    match seq.next_element()? {
                        Some(f) => out.push(f),
                        None => return Ok(out),
                    }
                }
                match seq.next_element::<IgnoredAny>()? {
                    Some(_) => Err(A::Error::custom(FAULTS)),
                    None => Ok(out),
                }
            }
        }
        d.deserialize_seq(Bounded(std::marker::PhantomData))
    }
}
