//! Verdicts and violations: the checkers' output, plain data (STYLE: violations are data).

use crate::metrics::Metrics;
use crate::spec::Invariant;
use serde::{Deserialize, Serialize};
use splitbrain_engine::SimTime;
use std::fmt;

/// The verdict on one invariant for one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The invariant holds over the whole run.
    Holds,
    /// The invariant is violated; each violation is a window with its evidence.
    Violated(Vec<Violation>),
    /// The run cannot decide it (e.g. it ends before the last fault plus `settle`).
    Inconclusive {
        /// Why, in words.
        reason: String,
    },
}

/// A verdict without its details, as scenario files write expectations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// See [`Verdict::Holds`].
    Holds,
    /// See [`Verdict::Violated`].
    Violated,
    /// See [`Verdict::Inconclusive`].
    Inconclusive,
}

impl Verdict {
    /// The outcome without details.
    pub fn outcome(&self) -> Outcome {
        match self {
            Verdict::Holds => Outcome::Holds,
            Verdict::Violated(_) => Outcome::Violated,
            Verdict::Inconclusive { .. } => Outcome::Inconclusive,
        }
    }
    /// The violations (empty unless violated).
    pub fn violations(&self) -> &[Violation] {
        match self {
            Verdict::Violated(v) => v,
            _ => &[],
        }
    }
    /// `Holds` for no violations, `Violated` otherwise.
    pub(crate) fn from_violations(v: Vec<Violation>) -> Verdict {
        if v.is_empty() {
            Verdict::Holds
        } else {
            Verdict::Violated(v)
        }
    }
}

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

/// One violation of one invariant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The invariant's name (e.g. `"single_leader"`).
    pub invariant: &'static str,
    /// Start of the violating window, true time (equal to `to` for a single instant).
    pub from: SimTime,
    /// End of the violating window, true time (exclusive for windows, equal to `from` for an
    /// instant).
    pub to: SimTime,
    /// Names of the nodes involved, sorted.
    pub nodes: Vec<String>,
    /// One sentence saying what went wrong.
    pub summary: String,
    /// The observations (and derived facts) that prove it, in true-time order.
    pub evidence: Vec<Evidence>,
    /// Faults that touched the involved nodes or the network and started before the window
    /// ended, in words, in the order they were applied.
    pub faults: Vec<String>,
}

impl Violation {
    /// The violating window in words, in one style for every invariant and lesson:
    /// `at 6.003 s` for an instant, `2.253 s \u{2013} 6.002 s` for a window; see [`fmt_window`].
    pub fn window(&self) -> String {
        fmt_window(self.from, self.to)
    }
}

/// A true-time window in one unit style: seconds with millisecond decimals (`2.253 s`), the
/// same number of decimals at both ends, with more (µs, then ns) only where milliseconds
/// would make the two ends equal. An instant (`from == to`) is `at T`.
pub fn fmt_window(from: SimTime, to: SimTime) -> String {
    if from == to {
        return format!("at {}", fmt_secs_fixed(from, 3));
    }
    let decimals = [3usize, 6, 9]
        .into_iter()
        .find(|d| fmt_secs_fixed(from, *d) != fmt_secs_fixed(to, *d))
        .unwrap_or(9);
    format!(
        "{} \u{2013} {}",
        fmt_secs_fixed(from, decimals),
        fmt_secs_fixed(to, decimals)
    )
}

/// `t` in seconds with exactly `decimals` (3, 6 or 9) decimals, rounded half up.
fn fmt_secs_fixed(t: SimTime, decimals: usize) -> String {
    let unit = 10u64.pow(9 - decimals.min(9) as u32);
    let q = t.0 / unit + u64::from(t.0 % unit >= unit.div_ceil(2));
    let per_sec = 1_000_000_000 / unit;
    format!("{}.{:0w$} s", q / per_sec, q % per_sec, w = decimals)
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} violated {}: {}",
            self.invariant,
            self.window(),
            self.summary
        )?;
        for e in &self.evidence {
            writeln!(f, "  {:>12}  {}: {}", e.t.to_string(), e.node, e.text)?;
        }
        for x in &self.faults {
            writeln!(f, "  fault: {x}")?;
        }
        Ok(())
    }
}

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

#[cfg(test)]
mod window_tests {
    use super::fmt_window;
    use splitbrain_engine::SimTime;

    /// Regression (issue 16): lesson 03 printed `2.252760180 s – 6.001600041 s` (ns) where
    /// other lessons print `10.020 s – 12.023 s` (ms): one style now, finer only when needed.
    #[test]
    fn windows_print_in_one_unit_style() {
        assert_eq!(
            fmt_window(SimTime(2_252_760_180), SimTime(6_001_600_041)),
            "2.253 s \u{2013} 6.002 s"
        );
        assert_eq!(
            fmt_window(SimTime(10_020_000_000), SimTime(12_023_000_000)),
            "10.020 s \u{2013} 12.023 s"
        );
        assert_eq!(
            fmt_window(SimTime(6_003_000_000), SimTime(6_003_000_000)),
            "at 6.003 s"
        );
        // Ends a few µs apart keep both ends apart, with the same decimals.
        assert_eq!(
            fmt_window(SimTime(1_300_000_000), SimTime(1_300_004_000)),
            "1.300000 s \u{2013} 1.300004 s"
        );
        assert_eq!(
            fmt_window(SimTime(1), SimTime(2)),
            "0.000000001 s \u{2013} 0.000000002 s"
        );
    }
}
