//! Work against run length on Raft: an append must cost the entries appended, so the work of
//! lesson 21a (three Raft replicas, two workers taking turns on a lock) grows linearly with
//! simulated time. Judged by the bytes and blocks allocated while the simulation runs, counted
//! by a wrapping allocator (this file is its own test binary, with one test, so nothing else
//! allocates meanwhile): the same figures on every machine, and no seconds.
//!
//! When every persist copied the replica's whole log, the allocations grew with the square
//! of the log: 4x the simulated time (150 s -> 600 s) allocated 8.2x the bytes (8.1x the blocks). Now 4.5x (the short run's start, an
//! election and the first grants, weighs a little more per second).

use splitbrain_engine::SimTime;
use splitbrain_lab::vary::{plan_with, Setting};
use splitbrain_scenario::build::build;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const LESSON: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scenarios/21a-raft-crashes.json"
);

/// Bytes and blocks allocated while lesson 21a is simulated for `duration` (built before).
fn allocated(duration: &str) -> (usize, usize) {
    let src = std::fs::read_to_string(LESSON).expect("lesson 21a is readable");
    let set: Setting = format!("duration={duration}").parse().expect("a setting");
    let plan = plan_with(LESSON, &src, &[set]).expect("lesson 21a validates");
    let mut sim = build(&plan, plan.scenario.seed);
    let end = SimTime(plan.scenario.duration.0.as_nanos());
    let region = Region::new(GLOBAL);
    sim.run_until(end).expect("lesson 21a runs to its end");
    let stats = region.change();
    (stats.bytes_allocated, stats.allocations)
}

#[test]
fn raft_work_grows_linearly_with_simulated_time() {
    let (short_bytes, short_blocks) = allocated("150s");
    let (long_bytes, long_blocks) = allocated("600s");
    let bytes = long_bytes as f64 / short_bytes as f64;
    let blocks = long_blocks as f64 / short_blocks as f64;
    eprintln!(
        "lesson 21a, 150 s -> 600 s simulated (4x): bytes allocated {short_bytes} -> \
         {long_bytes} ({bytes:.2}x), blocks {short_blocks} -> {long_blocks} ({blocks:.2}x)"
    );
    // Linear is 4x; a generous bound that a copy of the log per append (8.2x) breaks.
    assert!(
        bytes < 6.0,
        "4x the simulated time allocated {bytes:.2}x the bytes"
    );
    assert!(
        blocks < 6.0,
        "4x the simulated time allocated {blocks:.2}x the blocks"
    );
}
