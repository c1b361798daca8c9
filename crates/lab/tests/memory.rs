//! Memory against run length (issue 11 §4): what the checkers build beside a run's record
//! must not outgrow the record. Measured in heap bytes with a counting allocator (this file is
//! its own test binary, with one test, so nothing else allocates meanwhile), not in wall time
//! or RSS, so the figures are the same on every machine.
//!
//! Lesson 15 (Redlock, minority partition) at 300 s and at 3,000 s of simulated time: ten
//! times the observations. Before the truth kept its facts as references (`Fact`) and the
//! merged steps became an iterator, judging the 3,000 s run needed more heap than the record
//! itself (every Redis key piece carried its evidence sentences, and the key pieces were
//! copied for the replication view); now the checkers' extra heap grows by less than the
//! record does.

use peak_alloc::PeakAlloc;
use splitbrain_check::{check, RunRecord};
use splitbrain_engine::SimTime;
use splitbrain_lab::vary::{plan_with, Setting};
use splitbrain_scenario::build::{build, clock_of};
use splitbrain_scenario::check_spec;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

const LESSON: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scenarios/15-redlock-minority-partition.json"
);

/// Heap bytes of one run of lesson 15 lasting `duration`: `(record, checkers)`, the bytes
/// the record holds once the simulation is dropped, and the most the checkers (every
/// invariant of the lesson and the metrics) allocate beyond it at any instant.
fn heap_of(duration: &str) -> (usize, usize, usize) {
    let src = std::fs::read_to_string(LESSON).expect("lesson 15 is readable");
    let set: Setting = format!("duration={duration}").parse().expect("a setting");
    let plan = plan_with(LESSON, &src, &[set]).expect("lesson 15 validates");
    let before = HEAP.current_usage();
    let mut sim = build(&plan, plan.scenario.seed);
    let end = SimTime(plan.scenario.duration.0.as_nanos());
    sim.run_until(end).expect("lesson 15 runs to its end");
    let clocks = plan
        .nodes
        .iter()
        .map(|n| clock_of(&plan.scenario, &n.spec))
        .collect();
    let roles = plan
        .nodes
        .iter()
        .map(|n| n.spec.role().checked_as())
        .collect();
    let record = RunRecord::from_sim(&mut sim, roles, clocks, end);
    drop(sim);
    let with_record = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let report = check(&record, &check_spec(&plan.scenario));
    let checkers = HEAP.peak_usage() - with_record;
    assert!(report
        .results
        .iter()
        .all(|r| r.verdict.violations().is_empty()));
    (with_record - before, checkers, record.observations.len())
}

#[test]
fn the_checkers_need_less_heap_than_the_record_as_runs_grow() {
    let (record_short, checkers_short, obs_short) = heap_of("300s");
    let (record_long, checkers_long, obs_long) = heap_of("3000s");
    // The premise: ten times the simulated time is about ten times the observations.
    assert!(
        obs_long > 8 * obs_short,
        "{obs_short} -> {obs_long} observations"
    );
    let record_growth = record_long - record_short;
    let checkers_growth = checkers_long.saturating_sub(checkers_short);
    eprintln!(
        "record {record_short} -> {record_long} B, checkers {checkers_short} -> \
         {checkers_long} B, observations {obs_short} -> {obs_long}"
    );
    assert!(
        checkers_growth < record_growth,
        "the checkers' extra heap grew by {checkers_growth} B from 300 s to 3000 s, more than \
         the record's {record_growth} B"
    );
}
