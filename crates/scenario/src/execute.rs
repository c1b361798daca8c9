//! Running a validated plan: build, run to the duration (or a bound), check, compare with the
//! file's expectation. Shared by `run`, `check`, `sweep`, `report` and `shrink`.

use crate::build::{build, clock_of};
use crate::plan::Plan;
use crate::schema::{Expectation, Scenario};
use serde::{Deserialize, Serialize};
use splitbrain_check::{check, CheckReport, CheckSpec, Invariant, Outcome, RunRecord, Verdict};
use splitbrain_engine::{EventOf, Recorder, SimError, SimTime, Stats, TraceSummary, TRACE_FORMAT};
use splitbrain_protocols::Node;

/// A trace event of a splitbrain run.
pub type Event = EventOf<Node>;

/// The first line of a JSON Lines trace: everything needed to replay or chart it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceHeader {
    /// Trace format version ([`TRACE_FORMAT`]).
    pub splitbrain_trace: u32,
    /// Version of splitbrain that wrote it.
    pub version: String,
    /// Scenario name.
    pub name: String,
    /// Run seed.
    pub seed: u64,
    /// Node names by id.
    pub nodes: Vec<String>,
    /// The scenario itself, so the trace replays and charts without the file.
    pub scenario: Scenario,
}

impl TraceHeader {
    /// The header of a run of `plan` with `seed`.
    pub fn new(plan: &Plan, seed: u64) -> Self {
        TraceHeader {
            splitbrain_trace: TRACE_FORMAT,
            version: env!("CARGO_PKG_VERSION").to_string(),
            name: plan.scenario.name.clone(),
            seed,
            nodes: plan.nodes.iter().map(|n| n.name.clone()).collect(),
            scenario: plan.scenario.clone(),
        }
    }
}

/// One invariant's expected and actual outcome.
#[derive(Clone, Debug, Serialize)]
pub struct ExpectationResult {
    /// Invariant name.
    pub invariant: &'static str,
    /// What the file expects (`None`: nothing written; then anything but a violation passes).
    pub expected: Option<Expectation>,
    /// What the run gave.
    pub got: Outcome,
    /// Whether they agree.
    pub matches: bool,
}

/// Everything one run produced.
pub struct RunResult {
    /// Scenario name.
    pub name: String,
    /// The seed it ran with.
    pub seed: u64,
    /// Observations, faults and clocks, for the checkers and charts.
    pub record: RunRecord,
    /// Verdicts and metrics.
    pub report: CheckReport,
    /// Engine counters.
    pub stats: Stats,
    /// Set if the run stopped at a bound before its duration.
    pub bound: Option<SimError>,
    /// The recorder's output, if one was given.
    pub trace: Option<TraceSummary<Event>>,
    /// Expected vs actual per checked invariant.
    pub expectations: Vec<ExpectationResult>,
}

impl RunResult {
    /// True if every checked invariant matched its expectation and no bound was hit.
    pub fn matches(&self) -> bool {
        self.bound.is_none() && self.expectations.iter().all(|e| e.matches)
    }
}

/// The invariants a scenario checks: `check`, else the keys of `expect`, else all eight;
/// with `check_params` applied.
pub fn check_spec(s: &Scenario) -> CheckSpec {
    let names: Vec<String> = if !s.check.is_empty() {
        s.check.clone()
    } else if !s.expect.is_empty() {
        s.expect.keys().cloned().collect()
    } else {
        Invariant::NAMES.iter().map(|n| n.to_string()).collect()
    };
    let invariants = names
        .iter()
        .filter_map(|n| Invariant::from_name(n))
        .map(|inv| match inv {
            Invariant::EventualLeader { settle } => Invariant::EventualLeader {
                settle: s.check_params.settle.map_or(settle, |d| d.0),
            },
            Invariant::LockProgress { window } => Invariant::LockProgress {
                window: s.check_params.window.map_or(window, |d| d.0),
            },
            other => other,
        })
        .collect();
    CheckSpec::new(invariants)
}

/// Runs `plan` with `seed`, recording into `recorder` if given.
pub fn execute(
    plan: &Plan,
    seed: u64,
    recorder: Option<Recorder<Event>>,
) -> std::io::Result<RunResult> {
    let mut sim = build(plan, seed);
    if let Some(r) = recorder {
        sim.set_recorder(r);
    }
    let end = SimTime(plan.scenario.duration.0.as_nanos());
    let bound = sim.run_until(end).err();
    sim.record_end(bound.is_none());
    let trace = match sim.take_recorder() {
        Some(r) => Some(r.finish()?),
        None => None,
    };
    let clocks = plan
        .nodes
        .iter()
        .map(|n| clock_of(&plan.scenario, &n.spec))
        .collect();
    let record_end = if bound.is_none() { end } else { sim.now() };
    let record = RunRecord::from_sim(&sim, clocks, record_end);
    let spec = check_spec(&plan.scenario);
    let mut report = check(&record, &spec);
    if let Some(b) = &bound {
        // A run cut short proves violations it saw, but not that anything holds.
        for r in &mut report.results {
            if r.verdict.outcome() == Outcome::Holds {
                r.verdict = Verdict::Inconclusive {
                    reason: format!("the run stopped early ({b}), so it cannot show this holds"),
                };
            }
        }
    }
    let expectations = report
        .results
        .iter()
        .map(|r| {
            let got = r.verdict.outcome();
            let expected = plan.scenario.expect.get(r.name).copied();
            let matches = match expected {
                Some(Expectation::Holds) => got == Outcome::Holds,
                Some(Expectation::Violated) => got == Outcome::Violated,
                None => got != Outcome::Violated,
            };
            ExpectationResult {
                invariant: r.name,
                expected,
                got,
                matches,
            }
        })
        .collect();
    Ok(RunResult {
        name: plan.scenario.name.clone(),
        seed,
        record,
        report,
        stats: sim.stats().clone(),
        bound,
        trace,
        expectations,
    })
}
