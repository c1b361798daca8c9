//! The CLI contract of `sweep`, `merge`, `replay` and `shrink`: outputs, exit codes, files.

mod common;

use common::{code, splitbrain};
use std::path::Path;
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

const LESSON: &str = "scenarios/03-bully-partition-split-brain.json";

#[test]
fn sweep_files_are_identical_for_any_jobs_and_shards_merge_into_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let o1 = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..12",
        "--jobs",
        "1",
        "--out",
        &p("j1.jsonl"),
    ]);
    assert_eq!(code(&o1), 0, "{}", stdout(&o1));
    let out = stdout(&o1);
    assert!(out.contains("single_leader"), "{out}");
    assert!(out.contains("12/12"), "{out}");
    assert!(
        out.contains(&format!("splitbrain run {LESSON} --seed 0")),
        "the failing seed comes with its command: {out}"
    );
    assert!(out.contains("runs/s"), "{out}");
    let o2 = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..12",
        "--jobs",
        "2",
        "--out",
        &p("j2.jsonl"),
    ]);
    assert_eq!(code(&o2), 0);
    let j1 = std::fs::read(p("j1.jsonl")).unwrap();
    assert_eq!(j1, std::fs::read(p("j2.jsonl")).unwrap());
    assert_eq!(
        j1.iter().filter(|b| **b == b'\n').count(),
        13,
        "header + 12 runs"
    );

    for k in 0..3 {
        let shard = format!("{k}/3");
        let o = splitbrain(&[
            "sweep",
            LESSON,
            "--seeds",
            "0..12",
            "--shard",
            &shard,
            "--out",
            &p(&format!("s{k}.jsonl")),
        ]);
        assert_eq!(code(&o), 0);
        assert!(stdout(&o).contains("4 seeds"));
    }
    let o = splitbrain(&[
        "merge",
        &p("s2.jsonl"),
        &p("s0.jsonl"),
        &p("s1.jsonl"),
        "-o",
        &p("merged.jsonl"),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(p("merged.jsonl")).unwrap(), j1);
    let o = splitbrain(&[
        "merge",
        &p("s0.jsonl"),
        &p("s1.jsonl"),
        "-o",
        &p("bad.jsonl"),
    ]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing shard(s): 2/3"));
    assert!(!Path::new(&p("bad.jsonl")).exists());
}

#[test]
fn sweep_hash_gives_each_line_the_trace_hash_run_prints() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let sweep = |out: &str, hash: bool| {
        let mut args = vec!["sweep", LESSON, "--seeds", "0..3", "--out", out];
        if hash {
            args.push("--hash");
        }
        let o = splitbrain(&args);
        assert_eq!(code(&o), 0, "{}", stdout(&o));
        std::fs::read_to_string(out).unwrap()
    };
    let plain = sweep(&p("plain.jsonl"), false);
    let hashed = sweep(&p("hashed.jsonl"), true);
    assert!(
        !plain.contains("\"hash\"") && !plain.contains("trace_hashes"),
        "{plain}"
    );
    let header: serde_json::Value = serde_json::from_str(hashed.lines().next().unwrap()).unwrap();
    assert_eq!(header["trace_hashes"], true);
    // Seed 1's line carries the hash `run --seed 1` prints, and otherwise equals the plain line.
    let line: serde_json::Value = serde_json::from_str(hashed.lines().nth(2).unwrap()).unwrap();
    let run = stdout(&splitbrain(&["run", LESSON, "--seed", "1"]));
    let hash = line["hash"].as_str().unwrap();
    assert!(run.contains(&format!("hash {hash}")), "{hash} not in {run}");
    let mut without = line.clone();
    without.as_object_mut().unwrap().remove("hash");
    let plain_line: serde_json::Value =
        serde_json::from_str(plain.lines().nth(2).unwrap()).unwrap();
    assert_eq!(without, plain_line);
    // A hash is only written to a results file.
    let o = splitbrain(&["sweep", LESSON, "--seeds", "0..3", "--hash"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn vary_prints_rates_per_value_draws_the_chart_and_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("p.svg").display().to_string();
    let o = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..4",
        "--vary",
        "faults.1.at=2.1s,4s",
        "--chart",
        &svg,
    ]);
    // The file expects single_leader violated; with the heal at 2.1 s it holds: a mismatch.
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("P(violation) by faults.1.at"), "{out}");
    assert!(
        out.contains(&format!(
            "splitbrain run {LESSON} --seed 0 --set faults.1.at=4s"
        )),
        "{out}"
    );
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg") && chart.contains("single_leader"));

    let bad = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..4",
        "--vary",
        "faults.9.at=1s",
    ]);
    assert_eq!(code(&bad), 2);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("out of range"));
    let bad = splitbrain(&["sweep", LESSON, "--seeds", "0..4", "--vary", "duration=0s"]);
    assert_eq!(code(&bad), 2);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("duration must be greater than zero"));
    let bad = splitbrain(&["sweep", LESSON, "--seeds", "0..4", "--chart", &svg]);
    assert_eq!(code(&bad), 2);
    let bad = splitbrain(&["sweep", LESSON, "--seeds", "4..4"]);
    assert_eq!(code(&bad), 2);
}

/// Regression (issue 16): a failing varied seed's reproduce line was another one-seed sweep;
/// it is a `run` with the varied values applied, and that run violates the same invariant.
#[test]
fn a_grid_sweep_draws_heat_maps_and_its_reproduce_lines_are_runs() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("grid.png").display().to_string();
    let results = dir.path().join("grid.jsonl").display().to_string();
    let o = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..3",
        "--vary",
        "faults.1.at=2.1s,4s",
        "--vary",
        "nodes.n.failure_timeout=300ms,1s",
        "--chart",
        &png,
        "--out",
        &results,
    ]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains("P(violation) by faults.1.at \u{00d7} nodes.n.failure_timeout"),
        "{out}"
    );
    assert!(
        out.contains("faults.1.at = 4s, nodes.n.failure_timeout = 300ms"),
        "{out}"
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    let header = std::fs::read_to_string(&results).unwrap();
    assert!(
        header.contains(r#""path":"faults.1.at,nodes.n.failure_timeout""#),
        "{header}"
    );
    // Every printed reproduce line runs, with its values, to a violation.
    let repro = out
        .lines()
        .find_map(|l| {
            l.trim()
                .split_once("splitbrain run ")
                .map(|x| x.1.to_string())
        })
        .expect("a failing seed with its command");
    assert!(repro.contains("--set faults.1.at="), "{repro}");
    let args: Vec<&str> = repro.split_whitespace().collect();
    let mut run = vec!["run"];
    run.extend(args);
    let r = splitbrain(&run);
    let text = stdout(&r);
    assert!(
        text.contains("single_leader") && text.contains("VIOLATED"),
        "{text}"
    );
    assert!(
        text.contains("reproduce splitbrain run ") && text.contains("--set "),
        "{text}"
    );

    let bad = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..2",
        "--vary",
        "faults.1.at=1s,2s",
        "--vary",
        "seed=1,2",
        "--vary",
        "duration=9s,10s",
        "--chart",
        &png,
    ]);
    assert_eq!(code(&bad), 2, "three parameters have no chart");
    let bad = splitbrain(&["run", LESSON, "--set", "faults.9.at=1s"]);
    assert_eq!(code(&bad), 2);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("out of range"));
}

#[test]
fn find_threshold_brackets_the_crossing_deterministically() {
    let args = [
        "sweep",
        LESSON,
        "--seeds",
        "0..4",
        "--find-threshold",
        "faults.1.at=2s..4s",
        "--invariant",
        "single_leader",
        "--steps",
        "4",
    ];
    let o = splitbrain(&args);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains("threshold faults.1.at crosses 50.00% between "),
        "{out}"
    );
    assert!(out.contains("  below   0.00% at "), "{out}");
    assert!(out.contains("  above   100.00% at "), "{out}");
    // Two ends plus four midpoints.
    assert_eq!(out.matches("  probe   ").count(), 6, "{out}");
    let again = stdout(&splitbrain(&args));
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("speed"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&out), strip(&again));
    let bad = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..2",
        "--find-threshold",
        "faults.1.at=4s..2s",
    ]);
    assert_eq!(code(&bad), 2);
    let bad = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..2",
        "--find-threshold",
        "faults.1.at=2s..4s",
    ]);
    assert_eq!(
        code(&bad),
        2,
        "two invariants are checked: --invariant names one"
    );
}

/// Regression: `--find-threshold` exited 1 ("a probe failed") when its probes stopped at the
/// event bound; a bound is exit 3 with its message, as in every other sweep.
#[test]
fn find_threshold_probes_that_hit_a_bound_exit_3() {
    let tmp = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(common::repo().join(LESSON)).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    v["limits"] = serde_json::json!({ "max_events": 100 });
    let f = tmp.path().join("bounded.json");
    std::fs::write(&f, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let o = splitbrain(&[
        "sweep",
        f.to_str().unwrap(),
        "--seeds",
        "0..3",
        "--find-threshold",
        "faults.1.at=2s..4s",
        "--invariant",
        "single_leader",
    ]);
    let out = stdout(&o);
    assert_eq!(code(&o), 3, "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains(
            "bound     3 probe runs hit max_events; first, seed 0 (value 2s): event limit \
             reached: 100 events"
        ),
        "{out}"
    );
    assert!(
        out.contains("threshold none: a probe could not be measured"),
        "{out}"
    );
}

/// Regression: `merge` accepted a results line with an invented invariant name, or one that
/// lacked an invariant every other run has, and counted it. Both are refused, located (file,
/// line), exit 2, and nothing is written.
#[test]
fn merge_refuses_an_unknown_or_missing_invariant() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("r.jsonl");
    let o = splitbrain(&[
        "sweep",
        "scenarios/01-bully-leader-crash.json",
        "--seeds",
        "0..3",
        "--out",
        r.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0);
    let text = std::fs::read_to_string(&r).unwrap();
    let edit = |f: &dyn Fn(&mut serde_json::Value)| -> String {
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        let mut v: serde_json::Value = serde_json::from_str(&lines[2]).unwrap();
        f(&mut v);
        lines[2] = v.to_string();
        lines.join("\n") + "\n"
    };
    let invented = edit(&|v| {
        let held = v["outcomes"]["single_leader"].take();
        v["outcomes"]
            .as_object_mut()
            .unwrap()
            .remove("single_leader");
        v["outcomes"]["single_leaderz"] = held;
    });
    let lacking = edit(&|v| {
        v["outcomes"]
            .as_object_mut()
            .unwrap()
            .remove("single_leader");
    });
    let none = edit(&|v| v["outcomes"] = serde_json::json!({}));
    let out = tmp.path().join("m.jsonl");
    for (text, says) in [
        (
            invented,
            "line 3: seed 1: `single_leaderz` is not an invariant splitbrain checks; did you \
             mean `single_leader`?",
        ),
        (
            lacking,
            "line 3: seed 1 lacks the outcome of single_leader, unlike line 2 (the first run): \
             every run of a sweep checks the same invariants",
        ),
        (none, "line 3: seed 1 has no invariant outcome"),
    ] {
        let f = tmp.path().join("bad.jsonl");
        std::fs::write(&f, text).unwrap();
        let o = splitbrain(&["merge", f.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert_eq!(code(&o), 2);
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.contains(says), "{err}");
        assert!(!out.exists());
    }
    let o = splitbrain(&["merge", r.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code(&o), 0);
}

/// Regression: node names with a `.` (valid in a file) could not be addressed by `--set`,
/// `--vary` or `--find-threshold`; a quoted path segment addresses them in all three, and the
/// reproduce line quotes it for the shell.
#[test]
fn a_node_name_with_a_dot_is_addressed_by_a_quoted_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("dots.json");
    std::fs::write(
        &f,
        r#"{"splitbrain": 1, "name": "dots", "seed": 1, "duration": "10s",
  "nodes": {"db.1": {"role": "bully"}, "db.2": {"role": "bully"}, "db.3": {"role": "bully"}},
  "faults": [{"at": "2s", "crash": "db.3"}],
  "check": ["single_leader"]}"#,
    )
    .unwrap();
    let f = f.to_str().unwrap();
    let path = r#"nodes."db.1".clock.drift_ppm"#;
    let o = splitbrain(&["run", f, "--set", &format!("{path}=100")]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains(&format!("--seed 1 --set '{path}=100'")),
        "{out}"
    );
    let o = splitbrain(&[
        "sweep",
        f,
        "--seeds",
        "0..2",
        "--vary",
        &format!("{path}=0,100"),
    ]);
    assert_eq!(
        code(&o),
        0,
        "{}{}",
        stdout(&o),
        String::from_utf8_lossy(&o.stderr)
    );
    let o = splitbrain(&[
        "sweep",
        f,
        "--seeds",
        "0..2",
        "--find-threshold",
        &format!("{path}=0..1000"),
        "--steps",
        "1",
    ]);
    let out = stdout(&o);
    assert_eq!(
        out.matches("  probe   ").count(),
        2,
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = splitbrain(&["run", f, "--set", "nodes.db.1.clock.drift_ppm=100"]);
    assert_eq!(code(&o), 2);
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains(r#"quote it in the path, `nodes."db.1".clock.drift_ppm`"#),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn replay_proves_a_trace_and_names_the_first_difference() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let t = trace.display().to_string();
    assert_eq!(code(&splitbrain(&["run", LESSON, "--trace", &t])), 0);
    let o = splitbrain(&["replay", &t]);
    assert_eq!(code(&o), 0);
    assert!(
        stdout(&o).contains("identical 1675 events"),
        "{}",
        stdout(&o)
    );

    let text = std::fs::read_to_string(&trace).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let altered = lines[8].replace("\"ev\":", "\"ev\" :");
    lines[8] = &altered;
    std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
    let o = splitbrain(&["replay", &t]);
    assert_eq!(code(&o), 1);
    assert!(
        stdout(&o).contains("DIVERGES  at event 7 (line 9 of the file)"),
        "{}",
        stdout(&o)
    );

    std::fs::write(
        &trace,
        text.replacen("\"splitbrain_trace\":1", "\"splitbrain_trace\":7", 1),
    )
    .unwrap();
    let o = splitbrain(&["replay", &t]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("trace format 7"));

    // Regression: an edit of the header line that leaves the run as it was (a letter of the
    // description, the expectation, the embedded scenario's own seed) replayed as
    // "identical"; the header's digest tells it.
    let header = text.lines().next().unwrap();
    for (from, to) in [
        ("Five bully", "Five bullz"),
        (
            "\"single_leader\":\"violated\"",
            "\"single_leader\":\"holds\"",
        ),
        ("\"seed\":3,\"duration\"", "\"seed\":4,\"duration\""),
    ] {
        assert!(header.contains(from), "{from}: {header}");
        std::fs::write(&trace, text.replacen(from, to, 1)).unwrap();
        let o = splitbrain(&["replay", &t]);
        assert_eq!(code(&o), 1, "{from}: {}", stdout(&o));
        assert!(
            stdout(&o).contains("DIVERGES  at the header (line 1 of the file): its digest is "),
            "{from}: {}",
            stdout(&o)
        );
    }
}

/// Regression (new-user pass): a line that is not a trace event (`[[[1]]]`, a 200,000-deep
/// nesting, an event with a huge unknown kind) was reported as `DIVERGES at event 0`, exit 1,
/// with the whole line printed. It is a broken file: exit 2, located as `chart` says it, and
/// a long quoted input is cut.
#[test]
fn replay_refuses_a_line_that_is_not_a_trace_event_located_and_short() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let t = trace.display().to_string();
    assert_eq!(code(&splitbrain(&["run", LESSON, "--trace", &t])), 0);
    let text = std::fs::read_to_string(&trace).unwrap();
    let deep = "[".repeat(200_000) + &"]".repeat(200_000);
    let huge_kind = format!("{{\"ev\":\"{}\"}}", "x".repeat(100_000));
    for bad in ["[[[1]]]", "{\"hello\": 1}", &deep, &huge_kind] {
        let mut lines: Vec<&str> = text.lines().collect();
        lines.insert(1, bad);
        std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
        let o = splitbrain(&["replay", &t]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{}\n{err}", stdout(&o));
        assert!(
            err.contains(&format!("{t}: line 2: not a trace event: ")),
            "{err}"
        );
        assert!(!stdout(&o).contains("DIVERGES"), "{}", stdout(&o));
        assert!(err.len() < 1_000, "{} bytes: {err}", err.len());
    }
}

#[test]
fn shrink_writes_a_scenario_that_runs_as_expected() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("min.json").display().to_string();
    let o = splitbrain(&[
        "shrink",
        LESSON,
        "--seed",
        "3",
        "-o",
        &out,
        "--invariant",
        "single_leader",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let s = stdout(&o);
    assert!(
        s.contains("before") && s.contains("after") && s.contains("verified"),
        "{s}"
    );
    let o = splitbrain(&["run", &out]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert!(stdout(&o).contains("single_leader"));
}

/// Regression (new-user pass): a seed that violates nothing was exit 2, "bad input", with
/// `error: seed 1: no checked invariant is violated (...); nothing to shrink`. The file and
/// flags are valid; the run is not the failing one asked for: exit 1 (README), a plain note.
#[test]
fn shrink_of_a_seed_that_violates_nothing_is_exit_1_with_a_plain_note() {
    let o = splitbrain(&["shrink", "scenarios/01-bully-leader-crash.json"]);
    assert_eq!(code(&o), 1);
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        err.lines().next().unwrap(),
        "nothing to shrink: seed 1 violates no invariant (single_leader=holds, \
         eventual_leader=holds)"
    );
    assert!(err.contains("`splitbrain sweep scenarios/01-bully-leader-crash.json --seeds 0..1000` lists failing seeds"), "{err}");
    let o = splitbrain(&[
        "shrink",
        LESSON,
        "--seed",
        "3",
        "--invariant",
        "eventual_leader",
    ]);
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with(
        "nothing to shrink: seed 3 does not violate eventual_leader (eventual_leader="
    ));
}

/// Regression: a file that cannot be shrunk was exit 1, "internal error while shrinking", the
/// code of "nothing to shrink". Here the file's 9,999 faults and the nemesis's draws together
/// pass the 10,000-fault limit, so the scenario with the nemesis made explicit does not
/// validate: that is the input's doing, exit 2, and it says so. (A genuine internal error is
/// exit 4: see `exit::tests`.)
#[test]
fn shrink_of_a_file_whose_explicit_faults_pass_the_limit_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let src =
        std::fs::read_to_string(common::repo().join("tests/coverage/planted/bully-crashes.json"))
            .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    v.as_object_mut().unwrap().remove("$schema");
    let fault = serde_json::json!({"at": "29999ms", "clock_step": "node1", "by": "+1ns"});
    v["faults"] = serde_json::Value::Array(vec![fault; 9_999]);
    let file = dir.path().join("over.json");
    std::fs::write(&file, serde_json::to_string(&v).unwrap()).unwrap();
    let f = file.to_str().unwrap();
    // The file itself runs, and seed 0 violates.
    assert_eq!(code(&splitbrain(&["run", f, "--seed", "0"])), 1);
    let o = splitbrain(&["shrink", f, "--seed", "0", "--max-runs", "3"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.starts_with("error: cannot shrink seed 0: the scenario with the nemesis's "),
        "{err}"
    );
    assert!(
        err.contains("made explicit does not validate: ")
            && err.contains("faults[10000]: too many faults: the limit is 10000"),
        "{err}"
    );
}

/// A sweep killed with SIGTERM while it writes `--out` exits 130 and leaves neither the
/// results file nor its temporary file (one was left behind before: a fresh user's finding).
#[test]
fn an_interrupted_sweep_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_splitbrain"))
        .args([
            "sweep",
            "scenarios/12-redlock-gc-pause.json",
            "--seeds",
            "0..5000000",
        ])
        .arg("--out")
        .arg(&out)
        .current_dir(common::repo())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let tmp_files = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .count()
    };
    // Wait until the sweep has opened its temporary file (it does so before the first seed).
    let mut waited = 0;
    while tmp_files() == 0 {
        assert!(
            waited < 600,
            "the sweep never opened its temporary output file"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    }
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_eq!(tmp_files(), 0, "a temporary file was left behind");
    assert!(!out.exists(), "an unfinished results file appeared");
}

/// Regression (new-user pass): `--seeds 0..=5` (end included) was accepted but documented in
/// one command's `--help` only: every command that takes `--seeds` says so, and it runs the end.
#[test]
fn an_inclusive_seed_range_is_documented_and_runs_its_end() {
    for cmd in ["sweep", "compare", "coverage"] {
        let o = splitbrain(&[cmd, "--help"]);
        assert_eq!(code(&o), 0, "{cmd}");
        let help = stdout(&o);
        assert!(
            help.contains("A..=B (B included: 0..=999 is the same 1000)"),
            "{cmd}: {help}"
        );
    }
    let o = splitbrain(&["sweep", LESSON, "--seeds", "0..=2", "--jobs", "1"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).contains("3 of 3 runs"), "{}", stdout(&o));
}

/// Regression (new-user pass): `replay` of a scenario file said "line 1: not a splitbrain trace
/// header: not JSON: EOF while parsing an object": it says what the file is and suggests `run`.
#[test]
fn replay_of_a_scenario_says_it_is_a_scenario_and_suggests_run() {
    for cmd in ["replay", "chart"] {
        let mut args = vec![cmd, LESSON];
        if cmd == "chart" {
            args.extend(["-o", "/nonexistent-never-written.svg"]);
        }
        let o = splitbrain(&args);
        assert_eq!(code(&o), 2, "{cmd}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!(
                "error: {LESSON}: this is a scenario file, not a trace: `splitbrain run` runs it \
                 (with `--trace OUT.jsonl` it records the trace that replay, chart, view and \
                 export read)\n"
            ),
            "{cmd}"
        );
    }
}

/// Regression (new-user pass): with `limits.max_events=100` every run is inconclusive, and
/// `sweep` printed `single_leader 0/5 0.00% [0.00%, 43.45%] (5 inconclusive)`, as if five
/// runs had shown it holds. A rate is over the runs that decided; none did: n/a.
#[test]
fn a_sweep_rate_leaves_inconclusive_runs_out_and_says_na_when_none_decided() {
    let tmp = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(common::repo().join("scenarios/01-bully-leader-crash.json"))
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    v["limits"] = serde_json::json!({ "max_events": 100 });
    let f = tmp.path().join("bounded.json");
    std::fs::write(&f, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let out = tmp.path().join("r.jsonl");
    let o = splitbrain(&[
        "sweep",
        f.to_str().unwrap(),
        "--seeds",
        "0..5",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(code(&o), 3, "{text}");
    assert!(
        text.contains(
            "single_leader                          0/0       n/a  n/a  (5 inconclusive)"
        ),
        "{text}"
    );
    assert!(!text.contains("43.45%"), "{text}");
    let o = splitbrain(&[
        "merge",
        out.to_str().unwrap(),
        "-o",
        tmp.path().join("m.jsonl").to_str().unwrap(),
    ]);
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(
        text.contains(
            "single_leader                          0/0       n/a  n/a  (5 inconclusive)"
        ),
        "{text}"
    );
}

/// Regression: a `--vary` value at which every run was inconclusive (here each stops at a
/// 10-event bound) was drawn as a 0% point, looking like safety, though the table said n/a. It
/// is drawn as missing, with a caption saying why; and a value given twice is refused.
#[test]
fn sweep_chart_draws_an_undecided_value_as_missing_and_refuses_a_repeated_value() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("c.svg");
    let o = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..2",
        "--vary",
        "limits.max_events=10,1000000",
        "--chart",
        chart.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 3, "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.contains("n/a"), "{svg}");
    assert!(svg.contains("no run decided at that value (every run inconclusive)"));
    assert_eq!(
        svg.matches("<circle").count(),
        2,
        "one dot per invariant of the decided value"
    );
    let o = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..2",
        "--vary",
        "faults.0.for=5s,5s",
    ]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("--vary lists `5s` twice: give each value once"));
}

/// A user's report: lesson 08 with its only Redis instance down from 1 ns acquires nothing;
/// `sweep` and `merge` printed `exclusive_holders 0/4 0.00%` with no word that every run held
/// vacuously (the results file says so). The tables count vacuous runs as they count
/// inconclusive ones.
#[test]
fn sweep_and_merge_count_vacuous_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let src =
        std::fs::read_to_string(common::repo().join("scenarios/08-redis-lock-contention.json"))
            .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    v["faults"] = serde_json::json!([{"at": "1ns", "crash": "redis"}]);
    v["duration"] = serde_json::json!("5s");
    v["check"] = serde_json::json!(["exclusive_holders"]);
    v["expect"] = serde_json::json!({});
    v["vacuous_ok"] = serde_json::json!(true);
    let f = tmp.path().join("down.json");
    std::fs::write(&f, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let out = tmp.path().join("r.jsonl");
    let o = splitbrain(&[
        "sweep",
        f.to_str().unwrap(),
        "--seeds",
        "0..4",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    assert_eq!(code(&o), 0, "{text}");
    let row = |text: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with("exclusive_holders"))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string()
    };
    assert!(row(&text).starts_with("  exclusive_holders                      0/4     0.00%  ["));
    assert!(row(&text).ends_with("]  (4 vacuous)"), "{text}");
    let o = splitbrain(&[
        "merge",
        out.to_str().unwrap(),
        "-o",
        tmp.path().join("m.jsonl").to_str().unwrap(),
    ]);
    let merged = stdout(&o);
    assert_eq!(row(&merged), row(&text), "{merged}");
}

/// Regression (new-user pass): `--find-threshold name=1..9` set the scenario's name to "1",
/// "5", "9", probed a rate that never moved and exited 1; `--level` (and `--invariant`,
/// `--steps`) without `--find-threshold` were silently ignored. Both are refused (exit 2).
#[test]
fn find_threshold_refuses_text_and_its_options_need_it() {
    let err = |o: &Output| String::from_utf8_lossy(&o.stderr).to_string();
    let o = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..2",
        "--find-threshold",
        "name=1..9",
        "--invariant",
        "single_leader",
    ]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(
        err(&o).contains("the file holds text (\"bully-partition-split-brain\") at `name`"),
        "{}",
        err(&o)
    );
    assert!(!stdout(&o).contains("probe"), "{}", stdout(&o));
    for extra in [
        ["--level", "0.2"],
        ["--steps", "3"],
        ["--invariant", "single_leader"],
    ] {
        let mut args = vec!["sweep", LESSON, "--seeds", "0..2"];
        args.extend_from_slice(&extra);
        let o = splitbrain(&args);
        assert_eq!(code(&o), 2, "{extra:?}: {}", err(&o));
        assert!(err(&o).contains("--find-threshold"), "{}", err(&o));
    }
}

/// Regression (new-user pass): `--find-threshold seed=1..3` bisected the file's `seed`, which
/// every run replaces with one of `--seeds`: both ends ran the same runs and it reported
/// "threshold none" (exit 1) with no word of why; `--vary seed=1,2` ran the same seeds twice
/// under two labels, `--vary rate_seeds` changed nothing, `--show` with `--find-threshold`
/// listed nothing, and `run --seed 3 --set seed=7` ran seed 3. Each is refused (exit 2)
/// before any run.
#[test]
fn a_flag_that_another_overrides_is_refused() {
    let err = |o: &Output| String::from_utf8_lossy(&o.stderr).to_string();
    let cases: [(&[&str], &str); 6] = [
        (
            &["--find-threshold", "seed=1..3", "--invariant", "single_leader"],
            "--find-threshold seed: every run's seed is one of --seeds",
        ),
        (&["--vary", "seed=1,2"], "--vary seed: every run's seed is one of --seeds"),
        (
            &["--vary", "rate_seeds=0..5"],
            "--vary rate_seeds: sweep judges `expect_rate` over --seeds",
        ),
        (
            &["--find-threshold", "faults.0.at=1s..2s", "--show", "5"],
            "cannot be used with '--show <N>'",
        ),
        (
            &["--vary", "faults.0.at=1s,2s", "--vary", "faults.0={\"at\": \"3s\", \"partition\": [[\"n1\"], [\"n2\", \"n3\", \"n4\", \"n5\"]]}"],
            "`faults.0.at` is inside `faults.0`, which is set too",
        ),
        (&["--vary", "faults.0.at=1s,2s"], ""),
    ];
    for (extra, refusal) in cases {
        let mut args = vec!["sweep", LESSON, "--seeds", "0..2"];
        args.extend_from_slice(extra);
        let o = splitbrain(&args);
        if refusal.is_empty() {
            // The same path alone runs.
            assert_eq!(code(&o), 0, "{extra:?}: {}", err(&o));
            continue;
        }
        assert_eq!(code(&o), 2, "{extra:?}: {}", err(&o));
        assert!(err(&o).contains(refusal), "{extra:?}: {}", err(&o));
        assert!(!stdout(&o).contains("probe"), "{}", stdout(&o));
    }
    let o = splitbrain(&["run", LESSON, "--seed", "3", "--set", "seed=7"]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(
        err(&o).contains("--set seed=7 and --seed 3 both give the run's seed: give one"),
        "{}",
        err(&o)
    );
}

/// Regression: after a mistyped flag clap's usage line listed the flag it suggested as if it
/// were required (`sweep FILE --set x=1` printed `Usage: splitbrain sweep --seeds <A..B>
/// --steps <N> <FILE>`; `run FILE --sed 3` printed `run --seed <SEED> <FILE>`).
#[test]
fn the_usage_after_a_wrong_flag_shows_only_what_is_required() {
    let o = splitbrain(&["sweep", LESSON, "--set", "x=1"]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("Usage: splitbrain sweep [OPTIONS] --seeds <A..B> <FILE>\n"),
        "{err}"
    );
    assert!(!err.contains("--steps <N>"), "{err}");
    let o = splitbrain(&["run", LESSON, "--sed", "3"]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("Usage: splitbrain run [OPTIONS] <FILE>\n"),
        "{err}"
    );
}
