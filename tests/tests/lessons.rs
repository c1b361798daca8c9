//! Every lesson in `scenarios/` matches its expectation (through the same code path as
//! `splitbrain check`), runs identically twice, and the canary keeps failing.

use splitbrain_check::Outcome;
use splitbrain_engine::Recorder;
use splitbrain_scenario::{execute, load_file};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every lesson file, sorted.
pub fn lessons() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_lesson_matches_its_expectation() {
    let files = lessons();
    assert!(files.len() >= 8, "the lesson library went missing");
    let mut failures = Vec::new();
    for f in &files {
        let plan = load_file(f).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !plan.scenario.expect.is_empty(),
            "{}: every lesson states its expectation",
            f.display()
        );
        assert!(
            plan.scenario.lesson.is_some(),
            "{}: every lesson says what it teaches",
            f.display()
        );
        let r = execute(&plan, plan.scenario.seed, None).unwrap();
        if !r.matches() {
            failures.push(format!("{}: {:?}", f.display(), r.expectations));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn every_lesson_runs_twice_to_the_same_trace_hash() {
    for f in lessons() {
        let plan = load_file(&f).unwrap();
        let hash = |seed| {
            let r = execute(&plan, seed, Some(Recorder::hash_only())).unwrap();
            let t = r.trace.unwrap();
            (t.hash, t.events)
        };
        let a = hash(plan.scenario.seed);
        assert_eq!(a, hash(plan.scenario.seed), "{}", f.display());
        assert!(a.1 > 0);
    }
}

#[test]
fn canary_the_unfenced_gc_pause_is_caught() {
    // If the checkers ever stop catching the stale write of the paused holder, this fails.
    let plan = load_file(&repo().join("scenarios/05-lease-gc-pause-unfenced.json")).unwrap();
    let r = execute(&plan, plan.scenario.seed, None).unwrap();
    for inv in [
        "no_two_accepted_writers",
        "fencing_monotonic",
        "holder_writes_only",
    ] {
        assert_eq!(
            r.report.verdict(inv).map(|v| v.outcome()),
            Some(Outcome::Violated),
            "{inv}"
        );
    }
}

#[test]
fn canary_the_redlock_gc_pause_is_caught() {
    // Redlock has no fencing token: the paused holder's late write must always be caught.
    let plan = load_file(&repo().join("scenarios/12-redlock-gc-pause.json")).unwrap();
    let r = execute(&plan, plan.scenario.seed, None).unwrap();
    for inv in [
        "no_two_accepted_writers",
        "holder_writes_only",
        "exclusive_holders",
    ] {
        assert_eq!(
            r.report.verdict(inv).map(|v| v.outcome()),
            Some(Outcome::Violated),
            "{inv}"
        );
    }
}
