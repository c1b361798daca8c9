//! Shrinking: the canary (the GC-paused unfenced writer, lesson 05) buried under unrelated
//! faults and a nemesis shrinks to a scenario with fewer faults that still violates, the same
//! file every time; the nemesis made explicit replays the original run exactly.

use serde_json::json;
use splitbrain_check::Verdict;
use splitbrain_engine::Recorder;
use splitbrain_lab::shrink::{explicit, shrink, starting_point, ShrinkError, ShrinkOptions};
use splitbrain_scenario::schema::Scenario;
use splitbrain_scenario::{execute, load_str, Plan};
use std::path::Path;

/// Lesson 05 plus noise: pauses, a partition and a clock step of other nodes, after the
/// interesting part, and a nemesis pausing and partitioning client-2 and the lock service.
fn canary() -> Plan {
    let f =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/05-lease-gc-pause-unfenced.json");
    let src = std::fs::read_to_string(f).unwrap();
    // The typed scenario keeps the node order (node ids follow it).
    let mut s: Scenario = serde_json::from_str(&src).unwrap();
    s.name = "canary-with-noise".into();
    for extra in [
        json!({ "at": "20s", "pause": "client-2", "for": "1s" }),
        json!({ "at": "25s", "partition": [["client-2"], ["locks", "storage", "client-1"]] }),
        json!({ "at": "26s", "heal": true }),
        json!({ "at": "30s", "pause": "locks", "for": "2s" }),
        json!({ "at": "33s", "clock_step": "storage", "by": "+5s" }),
    ] {
        s.faults.push(serde_json::from_value(extra).unwrap());
    }
    s.nemesis = Some(
        serde_json::from_value(json!({
            "targets": ["client-2", "locks"],
            "mean_interval": "3s",
            "start": "18s",
            "pause": { "min": "100ms", "max": "2s" },
            "partition": { "min": "500ms", "max": "3s" }
        }))
        .unwrap(),
    );
    let text = serde_json::to_string_pretty(&s).unwrap();
    let plan = load_str("canary.json", &text).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = plan.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["locks", "storage", "client-1", "client-2"]);
    plan
}

const SEED: u64 = 3;

fn violates(text: &str, invariant: &str) -> bool {
    let plan = load_str("shrunk.json", text).unwrap_or_else(|e| panic!("{e}"));
    let r = execute(&plan, plan.scenario.seed, None).unwrap();
    matches!(r.report.verdict(invariant), Some(Verdict::Violated(_)))
}

#[test]
fn the_nemesis_made_explicit_replays_the_same_run() {
    let plan = canary();
    let original = execute(&plan, SEED, Some(Recorder::hash_only())).unwrap();
    let s = explicit(&plan, SEED);
    assert!(s.nemesis.is_none());
    assert!(
        s.faults.len() > plan.scenario.faults.len() + 3,
        "the nemesis drew faults"
    );
    // The nemesis' partitions end by their own heals, not by a heal of every rule (issue 17).
    let heals: Vec<_> = s.faults.iter().filter(|f| f.heal.is_some()).collect();
    assert_eq!(heals.len(), 1, "only the file's own heal at 26 s");
    assert!(s.faults.iter().any(|f| f.heal_partition.is_some()));
    let text = serde_json::to_string_pretty(&s).unwrap();
    let p2 = load_str("explicit.json", &text).unwrap();
    let again = execute(&p2, SEED, Some(Recorder::hash_only())).unwrap();
    assert_eq!(again.trace.unwrap().hash, original.trace.unwrap().hash);
}

#[test]
fn the_canary_shrinks_to_fewer_faults_that_still_violate_and_deterministically() {
    let plan = canary();
    let opts = ShrinkOptions {
        seed: SEED,
        invariant: Some("no_two_accepted_writers".into()),
        max_runs: 500,
    };
    let a = shrink(&plan, &opts).unwrap();
    assert!(a.before.nemesis && a.nemesis_faults > 3);
    assert!(!a.after.nemesis && a.scenario.nemesis.is_none());
    assert!(a.after.faults < plan.scenario.faults.len(), "{:?}", a.after);
    // The GC pause between the validity check and the write is all that matters.
    assert_eq!(a.scenario.faults.len(), 1, "{}", a.text);
    assert_eq!(a.scenario.faults[0].pause.as_deref(), Some("client-1"));
    assert!(a.after.duration < a.before.duration);
    assert!(a.after.events < a.before.events);
    assert!(violates(&a.text, "no_two_accepted_writers"));
    assert_eq!(a.scenario.seed, SEED, "the file replays without --seed");
    // Same input, same output, byte for byte.
    let b = shrink(&plan, &opts).unwrap();
    assert_eq!(a.text, b.text);
    assert_eq!(a.runs, b.runs);
}

#[test]
fn the_default_invariant_is_the_first_violated_and_the_budget_is_respected() {
    let plan = canary();
    let a = shrink(
        &plan,
        &ShrinkOptions {
            seed: SEED,
            invariant: None,
            max_runs: 10,
        },
    )
    .unwrap();
    assert_eq!(a.invariant, "exclusive_holders");
    assert!(a.runs <= 10);
    assert!(violates(&a.text, "exclusive_holders"));
}

#[test]
fn nothing_to_shrink_is_an_error() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/01-bully-leader-crash.json");
    let plan = splitbrain_scenario::load_file(&f).unwrap();
    let err = shrink(
        &plan,
        &ShrinkOptions {
            seed: 1,
            invariant: None,
            max_runs: 50,
        },
    )
    .unwrap_err();
    assert!(matches!(err, ShrinkError::NothingViolated { .. }), "{err}");
    let err = shrink(
        &plan,
        &ShrinkOptions {
            seed: 1,
            invariant: Some("fencing_monotonic".into()),
            max_runs: 50,
        },
    )
    .unwrap_err();
    assert!(matches!(err, ShrinkError::NotChecked { .. }), "{err}");
}

fn load(rel: &str) -> Plan {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    splitbrain_scenario::load_file(&f).unwrap_or_else(|e| panic!("{e}"))
}

/// Every file with a nemesis, lessons and checker-coverage files alike: for a few seeds, the
/// nemesis made explicit replays the nemesis run event for event (same trace hash: faults are
/// recorded the same whether the nemesis or the fault list applied them) and has the same
/// verdicts. So does shrink's starting point for each checked invariant, and it validates
/// (before the fix, a file with `expect_rate` gave a starting point with both `expect` and
/// `expect_rate` on one invariant, which did not validate).
#[test]
fn the_nemesis_made_explicit_replays_every_nemesis_file() {
    let mut files = Vec::new();
    for dir in [
        "scenarios/23-compare",
        "tests/coverage/planted",
        "tests/coverage/inert",
        "tests/coverage/safe",
    ] {
        let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
        let mut names: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .filter(|p| !p.to_string_lossy().ends_with(".compare.json"))
            .collect();
        names.sort();
        files.extend(names);
    }
    let mut checked = 0;
    for f in &files {
        let plan = splitbrain_scenario::load_file(f).unwrap_or_else(|e| panic!("{e}"));
        if plan.scenario.nemesis.is_none() {
            continue;
        }
        for seed in [0, 15] {
            let original = execute(&plan, seed, Some(Recorder::hash_only())).unwrap();
            let s = explicit(&plan, seed);
            let text = splitbrain_lab::shrink::pretty(&s);
            let p2 = load_str("explicit.json", &text)
                .unwrap_or_else(|e| panic!("{}: seed {seed}: {e}", f.display()));
            let again = execute(&p2, seed, Some(Recorder::hash_only())).unwrap();
            let verdicts = |r: &splitbrain_scenario::RunResult| {
                r.report
                    .results
                    .iter()
                    .map(|x| (x.name, x.verdict.outcome()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                verdicts(&again),
                verdicts(&original),
                "{} seed {seed}",
                f.display()
            );
            assert_eq!(again.record.faults.len(), original.record.faults.len());
            let hash = original.trace.as_ref().unwrap().hash;
            assert_eq!(
                again.trace.unwrap().hash,
                hash,
                "{} seed {seed}",
                f.display()
            );
            // Shrink's starting point (the explicit scenario checking one invariant, expecting
            // it violated) validates for every checked invariant and replays the same run.
            for r in &original.report.results {
                let start = starting_point(&plan, seed, r.name);
                let text = splitbrain_lab::shrink::pretty(&start);
                let p3 = load_str("start.json", &text).unwrap_or_else(|e| {
                    panic!("{} seed {seed} keeping {}: {e}", f.display(), r.name)
                });
                let run = execute(&p3, seed, Some(Recorder::hash_only())).unwrap();
                assert_eq!(
                    run.report.verdict(r.name).map(Verdict::outcome),
                    Some(r.verdict.outcome()),
                    "{} seed {seed}: {}",
                    f.display(),
                    r.name
                );
                assert_eq!(run.trace.unwrap().hash, hash, "{} seed {seed}", f.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 2 * 20, "{checked} runs compared");
}

/// The new-user bug: lesson 23's Redlock files carry `expect_rate` on the invariant shrink
/// keeps; the starting scenario added `expect` beside it, failed validation, and shrink called
/// that "does not violate" (an internal error, exit 1) for every violating seed.
#[test]
fn a_file_with_a_rate_expectation_shrinks() {
    for (file, seed) in [
        ("scenarios/23-compare/redlock.json", 15),
        ("scenarios/23-compare/redlock.json", 18),
        ("scenarios/23-compare/redlock-idempotent.json", 15),
    ] {
        let plan = load(file);
        assert!(
            !plan.scenario.expect_rate.is_empty(),
            "{file} has a rate expectation"
        );
        let a = shrink(
            &plan,
            &ShrinkOptions {
                seed,
                invariant: None,
                max_runs: 30,
            },
        )
        .unwrap_or_else(|e| panic!("{file} seed {seed}: {e}"));
        assert_eq!(a.invariant, "no_two_accepted_writers");
        assert!(a.scenario.expect_rate.is_empty() && a.scenario.rate_seeds.is_none());
        assert!(a.after.faults <= a.before.faults + a.nemesis_faults);
        assert!(violates(&a.text, "no_two_accepted_writers"), "{}", a.text);
    }
}

/// Regression: shrink's "events" column counted the trace's records (a send, a delivery, an
/// observation... each one line), not the events the run processed that `run` prints as
/// "N events processed": the same run read as two sizes.
#[test]
fn shrink_counts_the_events_run_prints() {
    let plan = canary();
    let opts = ShrinkOptions {
        seed: SEED,
        invariant: Some("no_two_accepted_writers".into()),
        max_runs: 60,
    };
    let s = shrink(&plan, &opts).unwrap();
    let before = execute(&plan, SEED, Some(Recorder::hash_only())).unwrap();
    assert_eq!(s.before.events, before.stats.events);
    assert_ne!(
        before.stats.events,
        before.trace.unwrap().events,
        "the two counts differ, so the test tells them apart"
    );
    let shrunk = load_str("shrunk.json", &s.text).unwrap();
    let after = execute(&shrunk, SEED, None).unwrap();
    assert_eq!(s.after.events, after.stats.events);
}
