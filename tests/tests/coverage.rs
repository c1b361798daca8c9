//! The checker coverage harness (issue 10 §6) on a small slice: every safe design of
//! `tests/coverage/safe` shows no violation, every planted bug of `tests/coverage/planted` is
//! caught at least once while its fixed twin is not, and the report does not depend on the
//! thread count. The full sweep (`splitbrain coverage`) writes `docs/checker-coverage.md`.

use splitbrain_lab::coverage::{load_designs, measure, render, DesignKind, DesignResult};
use splitbrain_scenario::seeds::SeedRange;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("coverage")
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Seeds of the slice: enough that every planted bug is caught at least once (the rarest
/// catches about a third of the seeds), few enough for a debug build.
const SLICE: SeedRange = SeedRange { start: 0, last: 19 };

fn describe(r: &DesignResult) -> String {
    let stats: Vec<String> = r
        .stats
        .iter()
        .map(|s| {
            format!(
                "{} {}/{} (seeds {:?})",
                s.name, s.violated, s.runs, s.first_seeds
            )
        })
        .collect();
    let twin = r.twin.as_ref().map(|(t, caught)| {
        let t: Vec<String> = t
            .iter()
            .map(|s| {
                format!(
                    "{} {}/{} (seeds {:?})",
                    s.name, s.violated, s.runs, s.first_seeds
                )
            })
            .collect();
        format!("; with the fix: caught {caught}: {}", t.join(", "))
    });
    format!(
        "{}: caught {}/{}, bound hit {}: {}{}",
        r.design.file,
        r.caught,
        r.runs,
        r.bounded,
        stats.join(", "),
        twin.unwrap_or_default()
    )
}

#[test]
fn no_false_alarms_and_every_planted_bug_caught_on_a_slice() {
    let designs = load_designs(&dir()).expect("the coverage folder loads");
    assert!(designs.iter().any(|d| d.kind == DesignKind::Safe));
    assert!(designs.iter().any(|d| d.kind == DesignKind::Planted));
    let results = measure(&designs, SLICE, threads(), &|_| {}).expect("runs");
    let mut bad = Vec::new();
    for r in &results {
        assert_eq!(r.bounded, 0, "{}", describe(r));
        match r.design.kind {
            DesignKind::Safe => {
                // No false alarm, and no vacuous pass: the premise occurred on every seed.
                if r.caught != 0 || r.vacuous.values().any(|v| *v > 0) {
                    bad.push(format!("false alarm or vacuous: {}", describe(r)));
                }
            }
            DesignKind::Planted => {
                let twin_clean = r.twin.as_ref().map_or(true, |(_, c)| *c == 0);
                if r.caught == 0 || !twin_clean {
                    bad.push(format!("not caught, or its fix is: {}", describe(r)));
                }
            }
            DesignKind::Inert => {}
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_report_is_the_same_bytes_for_any_thread_count() {
    let designs = load_designs(&dir()).expect("the coverage folder loads");
    let seeds = SeedRange { start: 7, last: 8 };
    let one = measure(&designs, seeds, 1, &|_| {}).unwrap();
    let many = measure(&designs, seeds, threads().max(2), &|_| {}).unwrap();
    let a = render(&one, seeds, "cmd");
    assert_eq!(a, render(&many, seeds, "cmd"));
    assert!(a.contains("## False alarms: safe designs"));
    assert!(a.contains("| redis-plain-del |"), "{a}");
    // Regression: the planted table had a column per invariant (13 columns of unbreakable
    // names and "4447 44.47% [43.50%, 45.45%]" cells), wider than any page. Every table row
    // now has at most 7 cells and fits in 120 characters.
    for line in a.lines().filter(|l| l.starts_with('|')) {
        assert!(line.matches('|').count() <= 8, "{line}");
        assert!(
            line.chars().count() <= 120,
            "{} chars: {line}",
            line.chars().count()
        );
    }
    assert!(
        a.contains("- the fix: `nodes.client.release=compare_and_delete`"),
        "{a}"
    );
}

#[test]
fn a_violated_safe_design_and_an_uncaught_planted_one_fail() {
    // The planted plain-DEL variant filed as safe must fail; its fixed twin filed as planted
    // (never caught) must fail too.
    let designs = load_designs(&dir()).expect("the coverage folder loads");
    let mut del = designs
        .iter()
        .find(|d| d.file == "planted/redis-plain-del.json")
        .expect("the plain-DEL variant")
        .clone();
    let (_, twin) = del.fix.take().expect("it has a fix");
    del.kind = DesignKind::Safe;
    let fixed = splitbrain_lab::coverage::Design {
        kind: DesignKind::Planted,
        file: "planted/fixed.json".into(),
        plan: twin,
        fix: None,
    };
    let seeds = SeedRange { start: 0, last: 2 };
    let r = measure(&[del, fixed], seeds, threads(), &|_| {}).unwrap();
    assert!(r[0].caught > 0 && !r[0].passes(), "{}", describe(&r[0]));
    assert!(r[1].caught == 0 && !r[1].passes(), "{}", describe(&r[1]));
    let doc = render(&r, seeds, "cmd");
    assert!(doc.contains("**FAIL**"), "{doc}");
}
