//! The CLI contract: exit codes, located errors for broken scenario files, atomic outputs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn splitbrain(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_splitbrain"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the binary runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally")
}

#[test]
fn every_broken_file_gets_its_located_error_and_exit_2() {
    let dir = repo().join("tests/broken");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "the broken-file folder went missing");
    for f in files {
        let rel = f
            .strip_prefix(repo())
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let expected = std::fs::read_to_string(f.with_extension("err")).unwrap();
        let o = splitbrain(&["run", &rel]);
        assert_eq!(code(&o), 2, "{rel}");
        let stderr = String::from_utf8(o.stderr).unwrap();
        assert_eq!(stderr, format!("error: {expected}"), "{rel}");
        assert!(o.stdout.is_empty(), "{rel}: nothing half-run");
    }
}

#[test]
fn a_lesson_that_matches_its_expectation_exits_0_and_prints_how_to_reproduce() {
    let o = splitbrain(&["run", "scenarios/06-lease-gc-pause-fenced.json"]);
    assert_eq!(code(&o), 0);
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains("reproduce splitbrain run scenarios/06-lease-gc-pause-fenced.json --seed 7"),
        "{out}"
    );
    assert!(out.contains("exclusive_holders"));
}

#[test]
fn a_wrong_expectation_exits_1_and_a_bound_exits_3() {
    let tmp = tempfile::tempdir().unwrap();
    let src =
        std::fs::read_to_string(repo().join("scenarios/06-lease-gc-pause-fenced.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    v["expect"]["exclusive_holders"] = "holds".into();
    let wrong = tmp.path().join("wrong.json");
    std::fs::write(&wrong, serde_json::to_string(&v).unwrap()).unwrap();
    let o = splitbrain(&["run", wrong.to_str().unwrap()]);
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8(o.stdout).unwrap().contains("MISMATCH"));
    let o = splitbrain(&["check", wrong.to_str().unwrap()]);
    assert_eq!(code(&o), 1);

    v["limits"] = serde_json::json!({ "max_events": 20 });
    let bounded = tmp.path().join("bounded.json");
    std::fs::write(&bounded, serde_json::to_string(&v).unwrap()).unwrap();
    let o = splitbrain(&["run", bounded.to_str().unwrap()]);
    assert_eq!(code(&o), 3);
    assert!(String::from_utf8(o.stdout)
        .unwrap()
        .contains("event limit reached: 20 events"));
}

#[test]
fn usage_errors_and_missing_files_exit_2() {
    assert_eq!(code(&splitbrain(&["run"])), 2);
    assert_eq!(code(&splitbrain(&["frobnicate"])), 2);
    let o = splitbrain(&["run", "no/such/file.json"]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("no/such/file.json: cannot read the scenario"));
    assert_eq!(code(&splitbrain(&["check", "no/such/folder"])), 2);
}

#[test]
fn the_trace_is_written_whole_or_not_at_all() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("run.jsonl");
    let o = splitbrain(&[
        "run",
        "scenarios/02-bully-worst-case.json",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0);
    let text = std::fs::read_to_string(&trace).unwrap();
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["name"], "bully-worst-case");
    assert_eq!(header["seed"], 1);
    assert!(lines.all(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["t"].is_u64()));
    // Only the finished file is left in the folder: no temporary files.
    let names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("run.jsonl")]);
    // A bad scenario writes no trace at all.
    let bad = tmp.path().join("bad.jsonl");
    let o = splitbrain(&[
        "run",
        "tests/broken/zero-ttl.json",
        "--trace",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 2);
    assert!(!bad.exists());
}

#[test]
fn json_summary_is_machine_readable() {
    let o = splitbrain(&["run", "scenarios/05-lease-gc-pause-unfenced.json", "--json"]);
    assert_eq!(code(&o), 0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["scenario"], "lease-gc-pause-unfenced");
    assert_eq!(v["as_expected"], true);
    assert!(v["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["name"] == "no_two_accepted_writers"));
}

#[test]
fn schema_is_json_with_the_scenario_fields() {
    let o = splitbrain(&["schema"]);
    assert_eq!(code(&o), 0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for field in [
        "splitbrain",
        "name",
        "duration",
        "nodes",
        "faults",
        "expect",
    ] {
        assert!(v["properties"][field].is_object(), "{field}");
    }
}

#[test]
fn the_committed_schema_file_is_current() {
    let o = splitbrain(&["schema"]);
    let committed = std::fs::read_to_string(repo().join("splitbrain.schema.json")).unwrap();
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        committed,
        "splitbrain.schema.json is stale: run `splitbrain schema > splitbrain.schema.json`"
    );
}

#[test]
fn view_and_export_of_a_saved_trace_match_the_live_run() {
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    let o = splitbrain(&[
        "run",
        "scenarios/05-lease-gc-pause-unfenced.json",
        "--trace",
        &p("t.jsonl"),
        "--view",
        &p("live.html"),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let o = splitbrain(&["view", &p("t.jsonl"), "-o", &p("saved.html")]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let live = std::fs::read(p("live.html")).unwrap();
    assert_eq!(
        live,
        std::fs::read(p("saved.html")).unwrap(),
        "one model, one page"
    );
    let html = String::from_utf8(live).unwrap();
    assert!(html.contains("<script type=\"application/json\" id=\"model\">"));
    assert!(
        !html.contains("http://") || !html.contains("src=\"http"),
        "no network"
    );
    for (format, file) in [("chrome", "t.json"), ("shiviz", "t.log")] {
        let o = splitbrain(&["export", &p("t.jsonl"), "--format", format, "-o", &p(file)]);
        assert_eq!(
            code(&o),
            0,
            "{format}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let chrome: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("t.json")).unwrap()).unwrap();
    assert!(chrome["traceEvents"].as_array().unwrap().len() > 50);
    let o = splitbrain(&["view", &p("t.jsonl"), "-o", &p("x.svg")]);
    assert_eq!(code(&o), 2, "a view must be .html");
}

/// One rule for every command's outputs: missing parent folders are created; a folder that
/// cannot be made is exit 2 naming the user's path, never a temporary file's name; a sweep
/// checks its outputs before running any seed.
#[test]
fn every_command_creates_missing_output_folders_and_names_the_users_path_when_it_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    let lesson = "scenarios/05-lease-gc-pause-unfenced.json";
    let trace = p("a/b/t.jsonl");
    let cases: Vec<Vec<String>> = vec![
        vec!["run".into(), lesson.into(), "--trace".into(), trace.clone()],
        vec!["run".into(), lesson.into(), "--chart".into(), p("c/c.svg")],
        vec!["run".into(), lesson.into(), "--view".into(), p("d/v.html")],
        vec!["chart".into(), trace.clone(), "-o".into(), p("e/x.png")],
        vec!["view".into(), trace.clone(), "-o".into(), p("f/x.html")],
        vec![
            "export".into(),
            trace.clone(),
            "--format".into(),
            "shiviz".into(),
            "-o".into(),
            p("g/x.log"),
        ],
        vec![
            "sweep".into(),
            lesson.into(),
            "--seeds".into(),
            "0..2".into(),
            "--out".into(),
            p("h/r.jsonl"),
        ],
        vec![
            "shrink".into(),
            lesson.into(),
            "-o".into(),
            p("i/m.json"),
            "--max-runs".into(),
            "20".into(),
        ],
    ];
    for args in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = splitbrain(&args);
        assert!(
            code(&o) == 0 || code(&o) == 1,
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = args[args.len() - 1 - usize::from(args[0] == "shrink") * 2];
        assert!(Path::new(out).is_file(), "{args:?} wrote {out}");
    }
    // A folder that cannot be created: a file stands where it would be.
    std::fs::write(p("file"), "x").unwrap();
    for args in [
        vec!["run", lesson, "--trace", "FILE/x/t.jsonl"],
        vec!["run", lesson, "--chart", "FILE/x/c.svg"],
        vec![
            "sweep",
            lesson,
            "--seeds",
            "0..50",
            "--out",
            "FILE/x/r.jsonl",
        ],
    ] {
        let user = p("file") + "/x/" + args[args.len() - 1].rsplit('/').next().unwrap();
        let mut args = args.clone();
        let last = args.len() - 1;
        args[last] = &user;
        let o = splitbrain(&args);
        assert_eq!(code(&o), 2, "{args:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.contains(&format!("cannot write {user}")), "{err}");
        assert!(
            !err.contains(".splitbrain-"),
            "internal temporary name leaked: {err}"
        );
        assert!(
            !err.contains("runs ("),
            "{args:?}: the sweep ran before checking: {err}"
        );
    }
}

/// Regression (issue 16): lesson 02's point, ten ELECTION messages in a few milliseconds, was
/// one vertical line on a 5 s chart. A lesson names its window; report, chart and view use it.
#[test]
fn a_lesson_chart_zooms_to_the_window_the_lesson_names() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let o = splitbrain(&["report", "scenarios/02-bully-worst-case.json", "-o", out]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(dir.path().join("bully-worst-case.svg")).unwrap();
    assert!(
        svg.contains("true time 1.300 s \u{2013} 1.305 s of a 5.000 s run"),
        "the chart's window"
    );
    let html = std::fs::read_to_string(dir.path().join("bully-worst-case.html")).unwrap();
    assert!(
        html.contains("\"window\":[1300000000,1305000000]"),
        "the view opens on it"
    );
    // Its ELECTION arrows are in colour, not the faint grey of background traffic.
    assert!(svg.contains("\nELECTION\n"), "ELECTION in the legend");
    assert!(!svg.contains("ELECTION (most frequent, faint)"));
    // --from/--to still win.
    let o = splitbrain(&[
        "run",
        "scenarios/02-bully-worst-case.json",
        "--chart",
        &format!("{out}/c.svg"),
        "--from",
        "0s",
        "--to",
        "2s",
    ]);
    assert_eq!(code(&o), 0);
    let svg = std::fs::read_to_string(dir.path().join("c.svg")).unwrap();
    assert!(svg.contains("true time 0.000 s \u{2013} 2.000 s"));
}
