//! Shrinking: the canary (the GC-paused unfenced writer, lesson 05) buried under unrelated
//! faults and a nemesis shrinks to a scenario with fewer faults that still violates, the same
//! file every time; the nemesis made explicit replays the original run exactly.

use serde_json::json;
use splitbrain_check::Verdict;
use splitbrain_engine::Recorder;
use splitbrain_scenario::schema::Scenario;
use splitbrain_scenario::shrink::{explicit, shrink, ShrinkError, ShrinkOptions};
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
