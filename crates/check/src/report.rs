//! What a check found: the verdict on each invariant checked, with the run's metrics.

use crate::invariant::Invariant;
use crate::metrics::Metrics;
use crate::verdict::Verdict;
use serde::Serialize;

/// The verdict on one invariant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InvariantResult {
    /// The invariant's name.
    pub name: &'static str,
    /// The invariant with its parameters.
    pub invariant: Invariant,
    /// The verdict.
    pub verdict: Verdict,
    /// For a `holds` whose premise never occurred (no write accepted, no leader claimed, no
    /// lock acquired): the missing premise in words ([`crate::vacuity::vacuous`]). Such a
    /// pass shows nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vacuous: Option<String>,
}

/// Everything `check` found: one result per requested invariant (canonical order) and the
/// run's metrics.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckReport {
    /// Per invariant, in canonical order.
    pub results: Vec<InvariantResult>,
    /// Counters and durations of the run.
    pub metrics: Metrics,
}

impl CheckReport {
    /// The verdict on the invariant called `name`, if it was checked.
    pub fn verdict(&self, name: &str) -> Option<&Verdict> {
        self.results
            .iter()
            .find(|r| r.name == name)
            .map(|r| &r.verdict)
    }
}
