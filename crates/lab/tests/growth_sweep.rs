//! Memory against seed count in a sweep: a sweep hands each run's line on as the runs end
//! (to the results file and the tallies) and holds at most one chunk of lines, so its heap
//! does not grow with the number of seeds. Measured in heap bytes with a counting allocator
//! (this file is its own test binary, with one test, so nothing else allocates meanwhile):
//! the same figures on every machine.
//!
//! When the sweep collected every line before printing, 8x the seeds held 8x the lines (the
//! CLI's sweep of lesson 12 peaked at 31 MB for 10,000 seeds and 237 MB for 100,000).

use peak_alloc::PeakAlloc;
use splitbrain_lab::sweep::{run_jobs_streaming, Job, StatsTally};
use splitbrain_lab::vary::plan_with;
use splitbrain_scenario::seeds::{seeds_iter, SeedRange};

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

const LESSON: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scenarios/12-redlock-gc-pause.json"
);

/// Jobs run at once in this test (the CLI runs 4096): small, so a few chunks are quick.
const CHUNK: usize = 32;

/// The heap's peak above its level before a streaming sweep of lesson 12 over `seeds` seeds
/// on two threads, tallied as `sweep` tallies, and the tally's violation count.
fn peak_of(seeds: u64) -> (usize, u64) {
    let src = std::fs::read_to_string(LESSON).expect("lesson 12 is readable");
    let plan = plan_with(LESSON, &src, &[]).expect("lesson 12 validates");
    let range = SeedRange {
        start: 0,
        last: seeds - 1,
    };
    let jobs = seeds_iter(range, None).map(|seed| Job { plan: 0, seed });
    let before = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let mut tally = StatsTally::new(3);
    let mut written = 0usize;
    run_jobs_streaming(
        std::slice::from_ref(&plan),
        &[],
        jobs,
        2,
        false,
        &|_| {},
        CHUNK,
        |_, line| {
            // What `sweep --out` writes, dropped at once as a file writer does.
            written += serde_json::to_string(&line)
                .expect("a line serialises")
                .len();
            tally.add(&line);
            Ok(())
        },
    )
    .expect("the sweep runs");
    let peak = HEAP.peak_usage() - before;
    let violated = tally.finish().iter().map(|s| s.violated).sum();
    assert!(written > 0);
    (peak, violated)
}

#[test]
fn a_sweeps_heap_does_not_grow_with_its_seeds() {
    let (small, _) = peak_of(4 * CHUNK as u64);
    let (large, violated) = peak_of(32 * CHUNK as u64);
    eprintln!(
        "lesson 12, {} -> {} seeds (8x): heap peak above the start {small} B -> {large} B \
         ({:.2}x); {violated} violations tallied",
        4 * CHUNK,
        32 * CHUNK,
        large as f64 / small as f64
    );
    // Flat is 1x (one run and one chunk of lines either way); holding every line is ~8x.
    assert!(
        large * 2 < small * 3,
        "8x the seeds peaked at {large} B against {small} B"
    );
}
