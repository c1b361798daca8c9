//! A sweep's runs ([`execute_outcomes`]) put no violation in words; everything a sweep line
//! reads is what a full check ([`execute_keeping`]) gives: every outcome, every violation's
//! window and nodes, vacuity, expectations and metrics.

use splitbrain_check::Verdict;
use splitbrain_scenario::{execute_keeping, execute_outcomes, load_str, Keep};

/// Compares the two on `seeds` of `lesson`; returns the violations seen.
fn same_outcomes(lesson: &str, seeds: std::ops::Range<u64>) -> usize {
    let path = format!("{}/../../scenarios/{lesson}", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).expect("the lesson is readable");
    let plan = load_str(&path, &src).unwrap_or_else(|e| panic!("{e}"));
    let mut violations = 0;
    for seed in seeds {
        let full = execute_keeping(&plan, seed, None, Keep::Checked).expect("no I/O");
        let bare = execute_outcomes(&plan, seed, None, Keep::Checked).expect("no I/O");
        assert_eq!(full.matches(), bare.matches(), "{lesson} seed {seed}");
        assert_eq!(
            full.report.metrics, bare.report.metrics,
            "{lesson} seed {seed}"
        );
        assert_eq!(full.report.results.len(), bare.report.results.len());
        for (f, b) in full.report.results.iter().zip(&bare.report.results) {
            assert_eq!((f.name, &f.vacuous), (b.name, &b.vacuous));
            assert_eq!(
                f.verdict.outcome(),
                b.verdict.outcome(),
                "{} seed {seed}",
                f.name
            );
            if let Verdict::Inconclusive { .. } = f.verdict {
                assert_eq!(f.verdict, b.verdict);
            }
            let windows = |v: &Verdict| -> Vec<_> {
                v.violations()
                    .iter()
                    .map(|v| (v.invariant, v.from, v.to, v.nodes.clone()))
                    .collect()
            };
            assert_eq!(
                windows(&f.verdict),
                windows(&b.verdict),
                "{} seed {seed}",
                f.name
            );
            violations += f.verdict.violations().len();
        }
    }
    violations
}

#[test]
fn a_sweep_run_judges_as_a_full_check_does() {
    // Lesson 12 violates `holder_writes_only` (the one invariant whose words differ) on
    // every seed; lesson 15 holds.
    assert!(same_outcomes("12-redlock-gc-pause.json", 0..30) >= 90);
    assert_eq!(same_outcomes("15-redlock-minority-partition.json", 0..3), 0);
    // Writes accepted while another client truly held the lock (its holder is a node of the
    // violation).
    for lesson in [
        "05-lease-gc-pause-unfenced.json",
        "13-redlock-clock-step.json",
        "09-redis-lock-plain-del.json",
    ] {
        assert!(same_outcomes(lesson, 0..20) > 0, "{lesson}");
    }
}
