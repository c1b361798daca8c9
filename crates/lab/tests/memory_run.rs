//! Memory against run length while a run is simulated (issue 11 §4): recording observations
//! must not hold a second copy of them. Measured in heap bytes with a counting allocator (this
//! file is its own test binary, with one test, so nothing else allocates meanwhile), so the
//! figures are the same on every machine.
//!
//! Lesson 15 (Redlock, minority partition) run for 3,000 s records 31,895 observations of 96
//! bytes. When the engine kept them in a `Vec`, growing it held the old buffer and the new at
//! once: the run's heap peaked 1.2 MB above where it ended (and the CLI's allocator kept the
//! pages of every freed buffer resident). The engine's `ObsLog` allocates each chunk once and
//! never copies it: the peak is now 408 B above the end.

use peak_alloc::PeakAlloc;
use splitbrain_engine::{Observed, SimTime};
use splitbrain_lab::vary::{plan_with, Setting};
use splitbrain_protocols::Obs;
use splitbrain_scenario::build::build;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

const LESSON: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scenarios/15-redlock-minority-partition.json"
);

#[test]
fn a_long_run_peaks_at_most_a_little_above_the_heap_it_ends_with() {
    let src = std::fs::read_to_string(LESSON).expect("lesson 15 is readable");
    let set: Setting = "duration=3000s".parse().expect("a setting");
    let plan = plan_with(LESSON, &src, &[set]).expect("lesson 15 validates");
    let mut sim = build(&plan, plan.scenario.seed);
    let end = SimTime(plan.scenario.duration.0.as_nanos());
    HEAP.reset_peak_usage();
    sim.run_until(end).expect("lesson 15 runs to its end");
    let (peak, after) = (HEAP.peak_usage(), HEAP.current_usage());
    let observations = sim.observations().len();
    let obs_bytes = observations * std::mem::size_of::<Observed<Obs>>();
    let over = peak - after;
    eprintln!(
        "{observations} observations ({obs_bytes} B); heap at the end {after} B, peak {peak} B \
         ({over} B above)"
    );
    assert!(observations > 30_000, "{observations} observations");
    // The observations are most of the heap; the peak above the end is the event queue's and
    // the actors' churn, a small fraction of them (it was half of them).
    assert!(
        over * 8 < obs_bytes,
        "the run's heap peaked {over} B above its end, more than 1/8 of its {obs_bytes} B of \
         observations"
    );
}
