//! Running a validated plan: build, run to the duration (or a bound), check, compare with the
//! file's expectation. Shared by `run`, `check`, `sweep`, `report` and `shrink`.

use crate::applies::check_spec;
use crate::build::{build, clock_of};
use crate::plan::Plan;
use crate::schema::{Expectation, Scenario};
use serde::{Deserialize, Serialize};
use splitbrain_check::{check, CheckReport, ObsNeeds, Outcome, RunRecord, Verdict};
use splitbrain_engine::{EventOf, Recorder, SimError, SimTime, Stats, TraceSummary, TRACE_FORMAT};
use splitbrain_protocols::Node;

/// A trace event of a splitbrain run.
pub type Event = EventOf<Node>;

/// FNV-1a 64 of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

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
    /// FNV-1a 64 ([`fnv1a`]) of the header line as written without this field,
    /// 16 hex digits, so `replay` notices an edit of the header (a changed description or
    /// expectation leaves the run, and so every event line, as it was). Written last: the line
    /// is the rest of the header, then `,"digest":"..."}`. A checksum against accidents, not
    /// a signature. `None` in a header built in memory ([`TraceHeader::new`]);
    /// [`TraceHeader::line`] writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
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
            digest: None,
        }
    }

    /// The header as the trace's first line (without its newline), ending with its
    /// [`TraceHeader::digest`].
    pub fn line(&self) -> String {
        let bare = TraceHeader {
            digest: None,
            ..self.clone()
        };
        let text = serde_json::to_string(&bare).expect("a trace header serialises");
        let digest = format!("{:016x}", fnv1a(text.as_bytes()));
        let line = serde_json::to_string(&TraceHeader {
            digest: Some(digest),
            ..bare
        })
        .expect("a trace header serialises");
        debug_assert!(line.starts_with(&text[..text.len() - 1]));
        line
    }

    /// Checks that the header line `line` (as read, without its newline) is the one a run
    /// wrote: it ends with its digest, and the digest is that of the rest of the line. The
    /// error says what is wrong, in words.
    pub fn check_line(line: &str) -> Result<(), String> {
        const KEY: &str = ",\"digest\":\"";
        let body = line.strip_suffix("\"}").and_then(|l| {
            let at = l.rfind(KEY)?;
            Some((&l[..at], &l[at + KEY.len()..]))
        });
        let Some((rest, digest)) = body else {
            return Err("it does not end with the digest a run writes there \
                        (`,\"digest\":\"...\"}`)"
                .into());
        };
        let want = format!("{:016x}", fnv1a(format!("{rest}}}").as_bytes()));
        if digest != want {
            return Err(format!(
                "its digest is {digest}, but the rest of the line hashes to {want}: the header \
                 was edited after the run wrote it"
            ));
        }
        Ok(())
    }
}

/// One invariant's expected and actual outcome.
#[derive(Clone, Debug, Serialize)]
pub struct ExpectationResult {
    /// Invariant name.
    pub invariant: &'static str,
    /// What the file expects (`None`: nothing written; then it is expected to hold, exactly as
    /// if `"holds"` were written: see [`expectation_met`]).
    pub expected: Option<Expectation>,
    /// Whether the file expects a violation rate instead (`expect_rate`): a single run then
    /// always matches; the sweep judges the rate.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rate: bool,
    /// What the run gave.
    pub got: Outcome,
    /// For a `holds` whose premise never occurred, the missing premise in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vacuous: Option<String>,
    /// Whether they agree ([`expectation_met`]). An expected `holds` (written or implied)
    /// that was vacuous or inconclusive does not match; a vacuous one does when the file says
    /// `"vacuous_ok": true`.
    pub matches: bool,
}

impl ExpectationResult {
    /// What is expected, in words: `holds`, `violated`, `a rate` (judged by a sweep); an
    /// invariant without an `expect` entry is expected to hold.
    pub fn expected_text(&self) -> &'static str {
        match (self.expected, self.rate) {
            (_, true) => "a rate",
            (Some(Expectation::Violated), _) => "violated",
            _ => "holds",
        }
    }

    /// What the run gave, in words: `holds`, `holds (vacuous: ...)`, `violated`,
    /// `inconclusive`.
    pub fn got_text(&self) -> String {
        match (&self.got, &self.vacuous) {
            (Outcome::Holds, Some(why)) => format!("holds (vacuous: {why})"),
            (o, _) => format!("{o:?}").to_lowercase(),
        }
    }
}

/// Whether one invariant's outcome meets what the file expects: the one rule behind every
/// `ok` / `MISMATCH` row, `run --json`'s `matches` and a run's outcome. `expected` is the
/// file's `expect` entry; without one the invariant is expected to hold (README: "A checked
/// invariant without an `expect` entry is expected to hold"), exactly as if `"holds"` were
/// written. `rate`: the file states an `expect_rate` for it instead, which one run cannot
/// judge (its sweep does), so one run always meets it. An expected `holds` is met only by
/// `holds`, neither by `inconclusive` nor, unless `vacuous_ok`, by a vacuous `holds`
/// (`vacuous`: its premise never occurred); an expected `violated` only by `violated`.
pub fn expectation_met(
    expected: Option<Expectation>,
    rate: bool,
    got: Outcome,
    vacuous: bool,
    vacuous_ok: bool,
) -> bool {
    if rate {
        return true;
    }
    match expected.unwrap_or(Expectation::Holds) {
        Expectation::Holds => got == Outcome::Holds && (!vacuous || vacuous_ok),
        Expectation::Violated => got == Outcome::Violated,
    }
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
    /// The file's `when` faults that never applied, in words ("fault 2, pause client-1 when
    /// lock_renewed #1: never triggered"): a fault whose protocol point never occurred shows
    /// nothing about the scenario it was written for.
    pub untriggered: Vec<String>,
}

impl RunResult {
    /// True if every checked invariant matched its expectation and no bound was hit.
    pub fn matches(&self) -> bool {
        self.bound.is_none() && self.expectations.iter().all(|e| e.matches)
    }
}

/// The `when` faults of `plan` that did not apply in the run `record`: the protocol point
/// never occurred (fewer than `nth` observations of its kind by its node), or it occurred
/// but the `after` delay ran past the end of the run. Numbered from 1 in file order.
pub fn untriggered(plan: &Plan, record: &RunRecord) -> Vec<String> {
    use splitbrain_engine::Observation;
    let mut out = Vec::new();
    for (i, f) in plan.scenario.faults.iter().enumerate() {
        let Some(w) = &f.when else { continue };
        let Some(node) = record.node_id(&w.node) else {
            continue;
        };
        let seen: Vec<SimTime> = record
            .observations
            .iter()
            .filter(|o| o.node == node && o.obs.kind() == w.observed)
            .map(|o| o.t)
            .collect();
        let what = format!(
            "fault {}, {} when {} #{}",
            i + 1,
            describe_action(f),
            w.observed,
            w.nth
        );
        match seen.get(w.nth as usize - 1) {
            None => out.push(format!("{what}: never triggered")),
            Some(&t) => {
                let at = t.saturating_add(
                    f.after
                        .map_or(splitbrain_engine::SimDuration::ZERO, |d| d.0),
                );
                if at >= record.end {
                    out.push(format!(
                        "{what}: triggered at {t}, but the run ended before it applied at {at}"
                    ));
                }
            }
        }
    }
    out
}

/// A fault's action in a few words ("pause client-1 for 15.000 s").
fn describe_action(f: &crate::schema::FaultSpec) -> String {
    if let Some(n) = &f.crash {
        format!("crash {n}")
    } else if let Some(n) = &f.restart {
        format!("restart {n}")
    } else if let Some(n) = &f.pause {
        match f.for_ {
            Some(d) => format!("pause {n} for {}", d.0),
            None => format!("pause {n}"),
        }
    } else if let Some(g) = &f.partition {
        let groups: Vec<String> = g.iter().map(|g| format!("{{{}}}", g.join(","))).collect();
        format!("partition {}", groups.join(" | "))
    } else if let Some(b) = &f.block {
        format!("block {} -> {}", b.from, b.to)
    } else if let Some(c) = &f.cut {
        let links: Vec<String> = c.iter().map(|[a, b]| format!("{a}-{b}")).collect();
        format!("cut {}", links.join(", "))
    } else if f.heal.is_some() {
        "heal".to_string()
    } else if let Some(g) = &f.heal_partition {
        let groups: Vec<String> = g.iter().map(|g| format!("{{{}}}", g.join(","))).collect();
        format!("heal partition {}", groups.join(" | "))
    } else if let Some(n) = &f.clock_step {
        format!("clock step of {n}")
    } else if let Some(n) = &f.drift {
        format!("drift of {n}")
    } else if f.loss.is_some() {
        "loss".to_string()
    } else {
        "fault".to_string()
    }
}

/// Which observations a run keeps in its [`RunResult::record`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Every observation: for charts, views, narration's facts and comparisons.
    All,
    /// Only those the checkers, the metrics and the report read ([`ObsNeeds`]): the others
    /// are counted by kind. Verdicts, evidence (which cites observations by their index among
    /// all of them) and metrics are the same as with [`Keep::All`]; the record's memory grows
    /// far less with the run's length.
    Checked,
}

/// Runs `plan` with `seed`, recording into `recorder` if given; the record keeps every
/// observation.
pub fn execute(
    plan: &Plan,
    seed: u64,
    recorder: Option<Recorder<Event>>,
) -> std::io::Result<RunResult> {
    execute_keeping(plan, seed, recorder, Keep::All)
}

/// [`execute`], keeping the observations `keep` names.
///
/// Long because one run is one sequence (build, run, record, check, compare with the expectation),
/// kept together so the hot path reads straight.
pub fn execute_keeping(
    plan: &Plan,
    seed: u64,
    recorder: Option<Recorder<Event>>,
    keep: Keep,
) -> std::io::Result<RunResult> {
    execute_with(plan, seed, recorder, keep, true)
}

/// [`execute_keeping`] for a caller that reads only outcomes, violation windows, vacuity,
/// expectations and metrics (a sweep's line): the violations are not put in words
/// ([`splitbrain_check::check_outcomes`]); everything else is as [`execute_keeping`] gives.
pub fn execute_outcomes(
    plan: &Plan,
    seed: u64,
    recorder: Option<Recorder<Event>>,
    keep: Keep,
) -> std::io::Result<RunResult> {
    execute_with(plan, seed, recorder, keep, false)
}

/// [`execute_keeping`], putting violations in words if `words`.
fn execute_with(
    plan: &Plan,
    seed: u64,
    recorder: Option<Recorder<Event>>,
    keep: Keep,
    words: bool,
) -> std::io::Result<RunResult> {
    let mut sim = build(plan, seed);
    match recorder {
        Some(r) => sim.set_recorder(r),
        None => sim.record_no_trace(),
    }
    let mut key_log = None;
    if keep == Keep::Checked {
        // `untriggered` reads every observation of a kind a `when` fault names.
        let when = plan
            .scenario
            .faults
            .iter()
            .filter_map(|f| f.when.as_ref().map(|w| w.observed.clone()));
        let mut needs = ObsNeeds::new(when);
        // The Redis instances' key reports are kept compactly beside the record.
        key_log = Some(needs.key_log());
        sim.set_obs_filter(Box::new(needs));
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
    let roles = plan
        .nodes
        .iter()
        .map(|n| n.spec.role().checked_as())
        .collect();
    let mut record = RunRecord::from_sim(&mut sim, roles, clocks, record_end);
    record.elections = crate::build::elections(plan);
    let stats = sim.stats();
    // The simulation (its event queue, actors and message store) is freed before the
    // checkers build their truth, which can then reuse its memory.
    drop(sim);
    if let Some(keys) = key_log {
        record.redis_keys = std::mem::take(&mut *keys.borrow_mut());
    }
    let spec = check_spec(&plan.scenario);
    let mut report = if words {
        check(&record, &spec)
    } else {
        splitbrain_check::check_outcomes(&record, &spec)
    };
    // With the run's events kept, a violation's causes are the faults on its causal past.
    if let Some(events) = trace.as_ref().and_then(|t| t.kept.as_deref()) {
        splitbrain_check::causes::causes_from_trace(&mut report, &record, events);
    }
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
            let rate = plan.scenario.expect_rate.contains_key(r.name);
            let matches = expectation_met(
                expected,
                rate,
                got,
                r.vacuous.is_some(),
                plan.scenario.vacuous_ok,
            );
            ExpectationResult {
                invariant: r.name,
                expected,
                rate,
                got,
                vacuous: r.vacuous.clone(),
                matches,
            }
        })
        .collect();
    let untriggered = untriggered(plan, &record);
    Ok(RunResult {
        untriggered,
        name: plan.scenario.name.clone(),
        seed,
        record,
        report,
        stats,
        bound,
        trace,
        expectations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTCOMES: [Outcome; 3] = [Outcome::Holds, Outcome::Violated, Outcome::Inconclusive];

    /// An invariant in `check` without an `expect` entry "is expected to hold" (README),
    /// exactly as an explicit `"holds"`: inconclusive or a vacuous pass is a mismatch, not a
    /// pass (`None => got != Violated` would pass them).
    #[test]
    fn no_expect_entry_is_judged_exactly_as_an_explicit_holds() {
        for got in OUTCOMES {
            for vacuous in [false, true] {
                for vacuous_ok in [false, true] {
                    assert_eq!(
                        expectation_met(None, false, got, vacuous, vacuous_ok),
                        expectation_met(Some(Expectation::Holds), false, got, vacuous, vacuous_ok),
                        "{got:?} vacuous={vacuous} vacuous_ok={vacuous_ok}"
                    );
                }
            }
        }
        assert!(!expectation_met(
            None,
            false,
            Outcome::Inconclusive,
            false,
            false
        ));
        assert!(!expectation_met(None, false, Outcome::Holds, true, false));
        assert!(expectation_met(None, false, Outcome::Holds, true, true));
        assert!(expectation_met(None, false, Outcome::Holds, false, false));
        assert!(!expectation_met(
            None,
            false,
            Outcome::Violated,
            false,
            false
        ));
    }

    #[test]
    fn a_violation_meets_only_violated_and_a_rate_is_left_to_the_sweep() {
        for got in OUTCOMES {
            assert_eq!(
                expectation_met(Some(Expectation::Violated), false, got, false, false),
                got == Outcome::Violated
            );
            for expected in [None, Some(Expectation::Holds), Some(Expectation::Violated)] {
                assert!(expectation_met(expected, true, got, true, false));
            }
        }
    }

    /// The invariants a file checks when it names none, for `nodes` (a JSON object's body).
    fn implied(nodes: &str, rest: &str) -> Vec<String> {
        let src = format!(
            r#"{{"splitbrain": 1, "name": "t", "seed": 1, "duration": "10s", "nodes": {{{nodes}}}{rest}}}"#
        );
        let plan = crate::load_str("t.json", &src).unwrap_or_else(|e| panic!("{e}"));
        check_spec(&plan.scenario)
            .in_report_order()
            .iter()
            .map(|i| i.name().to_string())
            .collect()
    }

    /// A file that names no invariant checks those its roles can apply to: a file of bully
    /// nodes without `check` or `expect` is not checked against the eight invariants about
    /// locks, writes and Raft, MISMATCHes (vacuous or inconclusive) no bully run can meet.
    #[test]
    fn a_file_naming_no_invariant_checks_those_its_roles_apply_to() {
        let bully = r#""n": {"role": "bully", "count": 3}"#;
        let leader = ["single_leader", "eventual_leader", "single_leader_per_term"];
        assert_eq!(implied(bully, ""), leader);
        assert_eq!(implied(bully, r#", "check": [], "expect": {}"#), leader);
        let redis = r#""redis": {"role": "redis"}, "storage": {"role": "storage", "fencing": false},
            "c": {"role": "worker", "lock": "redis", "instance": "redis", "storage": "storage"}"#;
        assert_eq!(
            implied(redis, ""),
            [
                "exclusive_holders",
                "holder_writes_only",
                "no_two_accepted_writers",
                "lock_progress",
                "validity_within_truth"
            ]
        );
        let lease = r#""locks": {"role": "lease_service"}, "storage": {"role": "storage"},
            "c": {"role": "worker", "lock": "lease", "service": "locks", "storage": "storage",
                  "idempotent": true}"#;
        assert_eq!(
            implied(lease, ""),
            [
                "exclusive_holders",
                "holder_writes_only",
                "no_two_accepted_writers",
                "fencing_monotonic",
                "lock_progress",
                "exactly_once_effects",
                "validity_within_truth"
            ]
        );
        let leaders = r#""locks": {"role": "lease_service"},
            "l": {"role": "lease_leader", "service": "locks", "count": 2}"#;
        assert_eq!(
            implied(leaders, ""),
            [
                "single_leader",
                "eventual_leader",
                "exclusive_holders",
                "lock_progress",
                "validity_within_truth",
                "single_leader_per_term"
            ]
        );
        // `expect` and `expect_rate` name what is checked when `check` does not.
        assert_eq!(
            implied(
                bully,
                r#", "expect": {"eventual_leader": "holds"},
                    "expect_rate": {"single_leader": {"violated_at_most": 0.5}}"#
            ),
            ["single_leader", "eventual_leader"]
        );
    }
}
