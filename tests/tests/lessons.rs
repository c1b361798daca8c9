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

#[test]
fn the_clock_step_lesson_tells_when_the_key_expires_early() {
    use splitbrain_report::{derived_facts, narrate, NarrationOptions};
    let plan = load_file(&repo().join("scenarios/13-redlock-clock-step.json")).unwrap();
    let r = execute(
        &plan,
        plan.scenario.seed,
        Some(Recorder::hash_only().keep_events()),
    )
    .unwrap();
    let events = r.trace.as_ref().and_then(|t| t.kept.as_deref()).unwrap();
    let opts = NarrationOptions {
        facts: derived_facts(&r.record),
        effects: r.record.fault_effects.clone(),
        ..Default::default()
    };
    let story = narrate(&r.record.names, events, &opts);
    let step = story
        .find("1.000 s  redis-c's wall clock STEPS +20.000 s")
        .expect("the step is told");
    let expiry = story
        .find("1.000 s  redis-c: key lock (client-1's lock) EXPIRES by redis-c's own wall clock")
        .expect("the early expiry is told");
    assert!(step < expiry, "the expiry follows the step that caused it");
}

/// Issue 11 §4: a run that keeps only the observations its checks read (`Keep::Checked`,
/// what `check`, `sweep` and a plain `run` use) judges every lesson, and the coverage
/// designs, over several seeds exactly as a run that keeps them all: the same verdicts,
/// the same evidence citing the same observation indices, the same metrics.
#[test]
fn keeping_only_what_the_checks_read_changes_no_report() {
    use splitbrain_scenario::{execute_keeping, Keep};
    let mut files = lessons();
    let mut designs: Vec<PathBuf> = ["safe", "planted", "inert"]
        .iter()
        .flat_map(|d| std::fs::read_dir(repo().join("tests/coverage").join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    designs.sort();
    files.extend(designs);
    let mut left_out = 0;
    for f in &files {
        let plan = load_file(f).unwrap_or_else(|e| panic!("{e}"));
        for seed in [plan.scenario.seed, 1, 2, 3] {
            let all = execute_keeping(&plan, seed, None, Keep::All).unwrap();
            let checked = execute_keeping(&plan, seed, None, Keep::Checked).unwrap();
            let json = |r: &splitbrain_scenario::RunResult| {
                serde_json::to_string_pretty(&r.report).unwrap()
            };
            assert_eq!(json(&all), json(&checked), "{} seed {seed}", f.display());
            assert_eq!(all.untriggered, checked.untriggered, "{}", f.display());
            assert_eq!(all.record.horizon(), checked.record.horizon());
            let (n, kept) = (
                checked.record.observations.len(),
                checked.record.observations.kept(),
            );
            assert_eq!(n, all.record.observations.len());
            left_out += n - kept;
        }
    }
    assert!(left_out > 0, "some observations were left out");
}

/// A `when` naming a kind its node's role never observes is refused while the file is read
/// (the fault would silently never happen), so each role's list ([`Role::observations`])
/// must hold every kind its protocol makes: every observation of every lesson and every
/// coverage design, over a few seeds, is in its node's list.
#[test]
fn every_observation_a_node_makes_is_one_its_role_lists() {
    use splitbrain_engine::Observation;
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "json")
                && !p.to_string_lossy().ends_with(".compare.json")
            {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&repo().join("scenarios"), &mut files);
    walk(&repo().join("tests/coverage"), &mut files);
    files.sort();
    let mut seen = std::collections::BTreeSet::new();
    for f in &files {
        let plan = load_file(f).unwrap_or_else(|e| panic!("{e}"));
        for n in &plan.nodes {
            for kind in n.spec.role().observations() {
                assert!(
                    splitbrain_protocols::OBSERVATION_KINDS.contains(kind),
                    "a {} lists `{kind}`, which is no observation kind",
                    n.spec.role_name()
                );
            }
        }
        for seed in 0..3 {
            let r = execute(&plan, seed, None).unwrap();
            for o in r.record.observations.iter() {
                let spec = &plan.nodes[o.node.0 as usize].spec;
                let kind = o.obs.kind();
                assert!(
                    spec.role().observations().contains(&kind),
                    "{} seed {seed}: a {} observed `{kind}`, which its role does not list",
                    f.display(),
                    spec.role_name()
                );
                seen.insert((spec.role_name(), kind));
            }
        }
    }
    // The lessons make most kinds; the test is not vacuous.
    assert!(seen.len() >= 40, "{seen:?}");
}

/// Every scenario file under `scenarios/` (lessons and comparison designs), sorted.
fn all_scenarios() -> Vec<PathBuf> {
    let mut v = Vec::new();
    let mut dirs = vec![repo().join("scenarios")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "json")
                && !p.to_string_lossy().ends_with(".compare.json")
            {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}

/// Regression: the Redlock design's page in the comparison (drawn at the file's own seed)
/// showed a run where nothing went wrong while its lesson said "two accepted writers". A file
/// that expects an invariant to be violated at some rate draws a seed that violates it.
#[test]
fn a_file_that_expects_violations_draws_a_seed_that_shows_one() {
    let mut checked = 0;
    for f in all_scenarios() {
        let plan = load_file(&f).unwrap_or_else(|e| panic!("{e}"));
        let claimed: Vec<&String> = plan
            .scenario
            .expect_rate
            .iter()
            .filter(|(_, r)| r.violated_at_least.is_some_and(|x| x > 0.0))
            .map(|(name, _)| name)
            .collect();
        if claimed.is_empty() {
            continue;
        }
        let r = execute(&plan, plan.scenario.seed, None).unwrap();
        for name in claimed {
            checked += 1;
            assert_eq!(
                r.report.verdict(name).map(|v| v.outcome()),
                Some(Outcome::Violated),
                "{}: seed {} does not show {name} violated, which its lesson claims",
                f.display(),
                plan.scenario.seed
            );
        }
    }
    assert!(
        checked >= 2,
        "the comparison's Redlock designs went missing"
    );
}
