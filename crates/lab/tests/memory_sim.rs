//! The simulation's own heap against run length (issue 11 §4): with every observation left
//! out, what lesson 15's simulation holds must not grow with simulated time. Measured in heap
//! bytes with a counting allocator (this file is its own test binary, with one test, so
//! nothing else allocates meanwhile), so the figures are the same on every machine.
//!
//! The event queue's bucket 0 kept every entry served from it while entries were inserted
//! before its last one: the simulation held 250 KB at 300 s, 850 KB at 3,000 s and 1.77 MB at
//! 30,000 s. It now holds 120 KB, 200 KB and 260 KB (what still grows is counters and the
//! storage's set of applied job ids).

use peak_alloc::PeakAlloc;
use splitbrain_engine::{NodeId, ObsFilter, SimTime};
use splitbrain_lab::vary::{plan_with, Setting};
use splitbrain_protocols::Obs;
use splitbrain_scenario::build::build;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

const LESSON: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scenarios/15-redlock-minority-partition.json"
);

/// Keeps no observation.
struct Nothing;

impl ObsFilter<Obs> for Nothing {
    fn keep(&mut self, _t: SimTime, _node: NodeId, _obs: &Obs) -> bool {
        false
    }
}

/// The heap's peak above its level before the run, while lesson 15 is built and run for
/// `duration` keeping no observation.
fn peak_of(duration: &str) -> usize {
    let src = std::fs::read_to_string(LESSON).expect("lesson 15 is readable");
    let set: Setting = format!("duration={duration}").parse().expect("a setting");
    let plan = plan_with(LESSON, &src, &[set]).expect("lesson 15 validates");
    let before = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let mut sim = build(&plan, plan.scenario.seed);
    sim.set_obs_filter(Box::new(Nothing));
    let end = SimTime(plan.scenario.duration.0.as_nanos());
    sim.run_until(end).expect("lesson 15 runs to its end");
    let peak = HEAP.peak_usage() - before;
    eprintln!("{duration}: simulation heap peak {peak} B");
    peak
}

#[test]
fn the_simulation_does_not_grow_with_run_length() {
    let short = peak_of("300s");
    let long = peak_of("3000s");
    let longer = peak_of("30000s");
    // Ten times the run: less than twice the heap (it was 3.4 times); a hundred times: less
    // than three times (it was 7 times).
    assert!(long < 2 * short, "300 s: {short} B, 3,000 s: {long} B");
    assert!(longer < 3 * short, "300 s: {short} B, 30,000 s: {longer} B");
}
