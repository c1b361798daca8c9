//! Evidence: the facts of a run (an observation, a fault, a fact the checker derived) that
//! prove part of a violation, each with the true time and node it concerns. The timeline,
//! the truth models and the verdicts all speak of it.

use serde::Serialize;
use splitbrain_engine::SimTime;

/// Where a piece of evidence comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Index into `RunRecord::observations`.
    Observation(usize),
    /// Index into `RunRecord::faults`.
    Fault(usize),
    /// Derived by the checker (e.g. a Redis key expiring by a reconstructed wall clock).
    Derived,
}

/// One fact that proves (part of) a violation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// True time of the fact.
    pub t: SimTime,
    /// The node it concerns.
    pub node: String,
    /// The fact in a few words.
    pub text: String,
    /// Where it comes from.
    pub source: Source,
}
