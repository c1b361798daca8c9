//! Sweeps: results independent of the thread count, in seed order; shards merge into exactly
//! the unsharded results; `--vary` edits keep node order and report bad paths.

use splitbrain_check::Outcome;
use splitbrain_lab::sweep::{
    merge_results, parse_results, results_jsonl, run_jobs, Job, SeedLine, SweepHeader,
};
use splitbrain_lab::vary::{vary_plans, Vary};
use splitbrain_scenario::schema::Scenario;
use splitbrain_scenario::seeds::{seeds_of, SeedRange, Shard};
use splitbrain_scenario::{load_str, Plan};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Lesson 01 (five bully nodes) plus a nemesis of crashes and partitions, so that seeds differ
/// in outcome as well as in trace.
fn bully_with_nemesis() -> String {
    let src = std::fs::read_to_string(repo().join("scenarios/01-bully-leader-crash.json")).unwrap();
    let mut s: Scenario = serde_json::from_str(&src).unwrap();
    s.nemesis = Some(
        serde_json::from_value(serde_json::json!({
            "mean_interval": "2s",
            "end": "6s",
            "crash": { "min": "200ms", "max": "2s" },
            "partition": { "min": "300ms", "max": "2s" }
        }))
        .unwrap(),
    );
    serde_json::to_string_pretty(&s).unwrap()
}

fn plan(src: &str) -> Plan {
    load_str("bully-nemesis.json", src).unwrap_or_else(|e| panic!("{e}"))
}

fn sweep(plans: &[Plan], values: &[String], seeds: &[u64], threads: usize) -> Vec<SeedLine> {
    let jobs: Vec<Job> = (0..plans.len())
        .flat_map(|plan| seeds.iter().map(move |&seed| Job { plan, seed }))
        .collect();
    run_jobs(plans, values, &jobs, threads, true, &|_| {}).unwrap()
}

#[test]
fn results_do_not_depend_on_the_thread_count_and_come_in_seed_order() {
    let p = plan(&bully_with_nemesis());
    let range: SeedRange = "0..50".parse().unwrap();
    let seeds = seeds_of(range, None);
    let one = sweep(std::slice::from_ref(&p), &[], &seeds, 1);
    let two = sweep(std::slice::from_ref(&p), &[], &seeds, 2);
    let header = SweepHeader::new(&p.scenario, range, None, None);
    assert_eq!(results_jsonl(&header, &one), results_jsonl(&header, &two));
    assert_eq!(
        one.iter().map(|l| l.seed).collect::<Vec<_>>(),
        (0..50).collect::<Vec<_>>()
    );
    // The nemesis makes seeds differ: different traces, and some but not all violate.
    let hashes: std::collections::BTreeSet<&str> =
        one.iter().filter_map(|l| l.hash.as_deref()).collect();
    assert!(hashes.len() > 40, "{} distinct traces", hashes.len());
    let violated = one
        .iter()
        .filter(|l| l.outcomes.values().any(|o| *o == Outcome::Violated))
        .count();
    assert!(violated > 0 && violated < 50, "{violated} of 50 violated");
}

#[test]
fn a_sweep_without_hashes_gives_the_same_lines_and_run_s_trace_hash_with_them() {
    let p = plan(&bully_with_nemesis());
    let seeds: Vec<u64> = (0..20).collect();
    let jobs: Vec<Job> = seeds.iter().map(|&seed| Job { plan: 0, seed }).collect();
    let hashed = run_jobs(std::slice::from_ref(&p), &[], &jobs, 1, true, &|_| {}).unwrap();
    let counted = run_jobs(std::slice::from_ref(&p), &[], &jobs, 1, false, &|_| {}).unwrap();
    for (h, c) in hashed.iter().zip(&counted) {
        // Counting builds no event, yet counts exactly the events the hashed run recorded.
        assert_eq!(c.hash, None);
        assert_eq!(
            &SeedLine {
                hash: None,
                ..h.clone()
            },
            c
        );
        // The hash is the one `run` reports for that seed.
        let r = splitbrain_scenario::execute(
            &p,
            h.seed,
            Some(splitbrain_engine::Recorder::hash_only()),
        )
        .unwrap();
        let t = r.trace.unwrap();
        assert_eq!(h.hash.as_deref(), Some(format!("{:016x}", t.hash).as_str()));
        assert_eq!(h.events, t.events);
    }
    // The results file says whether its lines carry hashes; merge refuses to mix the two.
    let range: SeedRange = "0..20".parse().unwrap();
    let plain = SweepHeader::new(&p.scenario, range, None, None);
    let with = plain.clone().with_trace_hashes(true);
    let text = results_jsonl(&plain, &counted);
    assert!(!text.contains("\"hash\""), "{text}");
    assert!(results_jsonl(&with, &hashed)
        .lines()
        .next()
        .unwrap()
        .contains("\"trace_hashes\":true"));
    let shard = |k: u64, h: &SweepHeader, lines: &[SeedLine]| {
        let h = SweepHeader {
            shard: Some(Shard { k, n: 2 }.to_string()),
            ..h.clone()
        };
        let mine: Vec<SeedLine> = lines.iter().filter(|l| l.seed % 2 == k).cloned().collect();
        results_jsonl(&h, &mine)
    };
    let err = merge_results(&[
        ("a".into(), shard(0, &plain, &counted)),
        ("b".into(), shard(1, &with, &hashed)),
    ])
    .unwrap_err();
    assert!(err.to_string().contains("--hash"), "{err}");
    assert_eq!(
        merge_results(&[
            ("a".into(), shard(0, &with, &hashed)),
            ("b".into(), shard(1, &with, &hashed)),
        ])
        .unwrap(),
        results_jsonl(&with, &hashed)
    );
}

#[test]
fn merged_shards_equal_the_unsharded_sweep_byte_for_byte() {
    let p = plan(&bully_with_nemesis());
    let range: SeedRange = "3..40".parse().unwrap();
    let whole = results_jsonl(
        &SweepHeader::new(&p.scenario, range, None, None),
        &sweep(std::slice::from_ref(&p), &[], &seeds_of(range, None), 2),
    );
    let shard_file = |k: u64| {
        let shard = Shard { k, n: 3 };
        let text = results_jsonl(
            &SweepHeader::new(&p.scenario, range, None, Some(shard)),
            &sweep(
                std::slice::from_ref(&p),
                &[],
                &seeds_of(range, Some(shard)),
                1,
            ),
        );
        (format!("results-{k}.jsonl"), text)
    };
    // Any order of the inputs.
    let files = vec![shard_file(2), shard_file(0), shard_file(1)];
    assert_eq!(merge_results(&files).unwrap(), whole);
    assert_eq!(parse_results("whole", &whole).unwrap().lines.len(), 37);

    // A missing or repeated shard, or a shard of another sweep, is refused.
    let err = merge_results(&files[..2]).unwrap_err().to_string();
    assert!(err.contains("missing shard(s): 1/3"), "{err}");
    let err = merge_results(&[files[0].clone(), files[0].clone(), files[1].clone()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("appears twice"), "{err}");
    let other = plan(&bully_with_nemesis().replace("\"10s\"", "\"11s\""));
    let foreign = results_jsonl(
        &SweepHeader::new(&other.scenario, range, None, Some(Shard { k: 1, n: 3 })),
        &[],
    );
    let err = merge_results(&[
        files[0].clone(),
        files[1].clone(),
        ("foreign.jsonl".into(), foreign),
    ])
    .unwrap_err()
    .to_string();
    assert!(err.contains("not from the same sweep"), "{err}");
}

#[test]
fn vary_sweeps_shard_and_merge_too() {
    let src = bully_with_nemesis();
    let vary: Vary = "nemesis.mean_interval=500ms,5s".parse().unwrap();
    let plans = vary_plans("bully.json", &src, &vary).unwrap();
    let range: SeedRange = "0..12".parse().unwrap();
    let vh = || {
        Some(splitbrain_lab::sweep::VaryHeader {
            path: vary.path.clone(),
            values: vary.values.clone(),
        })
    };
    let base = plan(&src);
    let whole = results_jsonl(
        &SweepHeader::new(&base.scenario, range, vh(), None),
        &sweep(&plans, &vary.values, &seeds_of(range, None), 2),
    );
    let files: Vec<(String, String)> = (0..2)
        .map(|k| {
            let s = Shard { k, n: 2 };
            let text = results_jsonl(
                &SweepHeader::new(&base.scenario, range, vh(), Some(s)),
                &sweep(&plans, &vary.values, &seeds_of(range, Some(s)), 1),
            );
            (format!("r{k}"), text)
        })
        .collect();
    assert_eq!(merge_results(&files).unwrap(), whole);
    // More faults at the shorter interval.
    let r = parse_results("whole", &whole).unwrap();
    let faults = |v: &str| -> u64 {
        r.lines
            .iter()
            .filter(|l| l.value.as_deref() == Some(v))
            .map(|l| l.metrics.faults)
            .sum()
    };
    assert!(faults("500ms") > faults("5s"));
}

#[test]
fn vary_keeps_node_order_and_reports_bad_values() {
    let src =
        std::fs::read_to_string(repo().join("scenarios/05-lease-gc-pause-unfenced.json")).unwrap();
    let vary: Vary = "nodes.client-1.clock.drift_ppm=0,100000".parse().unwrap();
    let plans = vary_plans("05.json", &src, &vary).unwrap();
    let names: Vec<&str> = plans[1].nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["locks", "storage", "client-1", "client-2"]);
    match &plans[1].scenario.nodes["client-1"] {
        splitbrain_scenario::schema::NodeSpec::Worker(w) => assert_eq!(w.clock.drift_ppm, 100_000),
        other => panic!("{other:?}"),
    }
    // A value out of range fails validation, located in the edited text.
    let bad: Vary = "nodes.client-1.clock.drift_ppm=2000001".parse().unwrap();
    let err = vary_plans("05.json", &src, &bad).unwrap_err().to_string();
    assert!(err.contains("drift_ppm must be within"), "{err}");
    assert!(
        err.contains("05.json [nodes.client-1.clock.drift_ppm=2000001]"),
        "{err}"
    );
    // A misspelt key is an unknown field; a bad index is a path error.
    let typo: Vary = "nodes.client-1.clock.drift=1".parse().unwrap();
    let err = vary_plans("05.json", &src, &typo).unwrap_err().to_string();
    // The whole message: the echoed path always contains "drift", so only the exact
    // "unknown field" sentence, located in the edited text, shows the right error (issue 17
    // item 7).
    assert_eq!(
        err,
        "05.json [nodes.client-1.clock.drift=1]:43:18: nodes.client-1.clock.drift: unknown \
         field `drift`, expected `drift_ppm` or `offset`"
    );
    let idx: Vary = "faults.3.for=1s".parse().unwrap();
    let err = vary_plans("05.json", &src, &idx).unwrap_err().to_string();
    assert!(err.contains("index 3 is out of range"), "{err}");
}
