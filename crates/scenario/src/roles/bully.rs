//! The `bully` role: a bully election participant (file spec, validation, actor).

use crate::checker::NodeCheck;
use crate::duration::{or, Dur};
use crate::role::clock_and_count;
use crate::role::{ClockSpec, Role};
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use splitbrain_protocols::bully::{AnswerAtTimeout, BullyConfig, BullyNode, BullyVariant};
use splitbrain_protocols::Node;

/// Bully node parameters (local monotonic durations).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BullySpec {
    /// Expand into `count` nodes named `<name>1..<name>count` (default: one node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = "crate::limits::MAX_NODES"))]
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
    /// Which reading of the published rules (default `textbook`; its default was `literal` in
    /// the first releases of format 1, before versions were kept). `textbook`: Garcia-Molina
    /// (1982) and Coulouris et al. §15.3 as published: a sitting leader answers an ELECTION
    /// without re-electing itself, an ELECTION sent before the current leader's claim starts
    /// no election, the winner tells the lower nodes; one failure costs at most N(N-1)/2
    /// ELECTIONs and N-1 COORDINATORs. `literal`: every ELECTION from a lower node makes an
    /// idle receiver elect, the sitting leader included, and the winner tells every node: late
    /// ELECTIONs re-elect the leader and restart followers (an election storm).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<BullyVariantSpec>,
    /// Follow a node higher than this one and than its leader when its HEARTBEAT arrives, as
    /// if its COORDINATOR had (an extension no textbook rule has: it merges the two sides of a
    /// healed partition without an election). Default `false` (a leader is learnt from
    /// COORDINATOR only); `true` in format 1 files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopt_on_heartbeat: Option<bool>,
    /// An ANSWER that arrives at the very instant the answer timer ends: `in_time` (the
    /// default: it took exactly T = 2 Ttrans + Tprocess, within Coulouris's bound, so the node
    /// does not claim) or `late` (the timer runs first and the node claims; the default in
    /// format 1 files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_at_timeout: Option<AnswerAtTimeoutSpec>,
}

/// Whether an ANSWER at the answer timer's instant is in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnswerAtTimeoutSpec {
    /// In time (Coulouris's bound is inclusive; the default).
    InTime,
    /// Late: the timer wins (format 1's default).
    Late,
}

/// The reading of the bully rules a node follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BullyVariantSpec {
    /// As published (the default): bounded messages per failure.
    Textbook,
    /// The storm-prone literal reading.
    Literal,
}

impl Role for BullySpec {
    fn checked_as(&self) -> splitbrain_check::Role {
        splitbrain_check::Role::Bully
    }

    clock_and_count!();

    fn validate(&self, v: &mut NodeCheck<'_, '_>) {
        for (f, d) in [
            ("answer_timeout", self.answer_timeout),
            ("coordinator_timeout", self.coordinator_timeout),
            ("heartbeat_every", self.heartbeat_every),
            ("failure_timeout", self.failure_timeout),
        ] {
            v.positive(f, d);
        }
    }

    /// A bully's peers are every bully node of the scenario, itself included.
    fn observations(&self) -> &'static [&'static str] {
        &[
            "leader_claim",
            "leader_step_down",
            "election_started",
            "leader_known",
        ]
    }

    fn node(&self, roster: &Roster) -> Node {
        let d = BullyConfig::default();
        let defaults = roster.defaults();
        let peers = roster.shared_ids_of("bully");
        let start_election = self.start_election.unwrap_or(true);
        Node::Bully(BullyNode::new(BullyConfig {
            initial_leader: if start_election {
                None
            } else {
                peers.iter().max().copied()
            },
            peers,
            answer_timeout: or(self.answer_timeout, d.answer_timeout),
            coordinator_timeout: or(self.coordinator_timeout, d.coordinator_timeout),
            heartbeat_every: or(self.heartbeat_every, d.heartbeat_every),
            failure_timeout: or(self.failure_timeout, d.failure_timeout),
            start_election_on_start: start_election,
            variant: match self.variant {
                None | Some(BullyVariantSpec::Textbook) => BullyVariant::Textbook,
                Some(BullyVariantSpec::Literal) => BullyVariant::Literal,
            },
            adopt_on_heartbeat: self
                .adopt_on_heartbeat
                .unwrap_or(defaults.bully_adopt_on_heartbeat),
            answer_at_timeout: match self.answer_at_timeout {
                Some(AnswerAtTimeoutSpec::InTime) => AnswerAtTimeout::InTime,
                Some(AnswerAtTimeoutSpec::Late) => AnswerAtTimeout::Late,
                None if defaults.bully_answer_at_timeout_in_time => AnswerAtTimeout::InTime,
                None => AnswerAtTimeout::Late,
            },
        }))
    }
}
