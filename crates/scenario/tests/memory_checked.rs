//! Memory against run length of a run that is only checked (issue 11 §4: "checkers and
//! metrics consume observations as they happen and keep only what they need"). Measured in
//! heap bytes with a counting allocator (this file is its own test binary, with one test, so
//! nothing else allocates meanwhile): the figures are the same on every machine.

use peak_alloc::PeakAlloc;
use splitbrain_protocols::Obs;
use splitbrain_scenario::vary::{plan_with, Setting};
use splitbrain_scenario::{execute_keeping, Keep};

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

const LESSON: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scenarios/15-redlock-minority-partition.json"
);

/// The heap's peak above its level before the run, while lesson 15 runs for `duration` and
/// is checked, keeping `keep`; and the observations kept, of all.
fn peak_of(duration: &str, keep: Keep) -> (usize, usize, usize) {
    let src = std::fs::read_to_string(LESSON).expect("lesson 15 is readable");
    let set: Setting = format!("duration={duration}").parse().expect("a setting");
    let plan = plan_with(LESSON, &src, &[set]).expect("lesson 15 validates");
    let before = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let r = execute_keeping(&plan, plan.scenario.seed, None, keep).expect("no I/O");
    assert!(r.matches(), "lesson 15 meets its expectations");
    let peak = HEAP.peak_usage() - before;
    eprintln!(
        "{duration} {keep:?}: {} of {} observations kept; heap peak {peak} B",
        r.record.observations.kept(),
        r.record.observations.len()
    );
    let failed = r
        .record
        .observations
        .iter()
        .filter(|o| matches!(o.obs, Obs::LockFailed { .. } | Obs::ValidityChecked { .. }))
        .count();
    assert!(
        keep == Keep::All || failed == 0,
        "{failed} attempts' reports kept"
    );
    (
        peak,
        r.record.observations.kept(),
        r.record.observations.len(),
    )
}

/// Lesson 15 run for 3,000 s records 31,895 observations; a run that keeps them all peaks at
/// 6.67 MB of heap. Kept only as the checks read them, 20,482 remain (no `LockFailed`, no
/// `ValidityChecked`, one `LockRequested` per wait) and the run peaks at 5.36 MB: what still
/// grows with the run is the Redis instances' key reports (13,709) and the truth built from
/// them (2.2 MB), which the checkers read after the run.
#[test]
fn a_checked_run_keeps_only_what_its_checks_read() {
    let (all_peak, all_kept, all_n) = peak_of("3000s", Keep::All);
    let (peak, kept, n) = peak_of("3000s", Keep::Checked);
    eprintln!("peak {peak} B of {all_peak} B");
    assert_eq!((all_kept, all_n), (n, n), "keeping all keeps all");
    assert!(kept * 3 < n * 2, "{kept} of {n} observations kept");
    assert!(
        peak * 100 < all_peak * 85,
        "a checked run peaked at {peak} B, keeping all {all_peak} B"
    );
}
