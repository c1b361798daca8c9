//! The CLI contract: exit codes, located errors for broken scenario files, atomic outputs.

mod book;
mod common;

use common::{code, repo, splitbrain};
use std::path::Path;

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

/// Regression: the reproduce line pasted the file's path as it is, so a path with a space or
/// a quote (`my scen's.json`) broke the command; `run`'s line and `sweep`'s per-seed lines
/// now quote it for a POSIX shell, as `--set` values already were, and the quoted command
/// runs the same file.
#[test]
fn reproduce_commands_quote_a_path_for_the_shell() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("my scen's.json");
    std::fs::copy(
        repo().join("scenarios/03-bully-partition-split-brain.json"),
        &f,
    )
    .unwrap();
    let fp = f.to_str().unwrap();
    let quoted = format!("'{}'", fp.replace('\'', r"'\''"));
    let o = splitbrain(&["run", fp]);
    let out = String::from_utf8(o.stdout).unwrap();
    let line = format!("reproduce splitbrain run {quoted} --seed ");
    assert!(out.contains(&line), "{out}");
    let o = splitbrain(&["sweep", fp, "--seeds", "0..3", "--jobs", "1"]);
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains(&format!("seed 0        splitbrain run {quoted} --seed 0")),
        "{out}"
    );
    // And so does `check`'s list of runs not as expected (a rate over seeds 0..3 that
    // every run violates).
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    v["rate_seeds"] = "0..3".into();
    v["expect_rate"] = serde_json::json!({"single_leader": {"violated_at_most": 0.0}});
    v["expect"] = serde_json::json!({"eventual_leader": "violated"});
    std::fs::write(&f, v.to_string()).unwrap();
    let o = splitbrain(&["check", fp]);
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains(&format!("e.g.: splitbrain run {quoted} --seed 0;")),
        "{out}"
    );
    // The shell reads the quoted word back as the path.
    let sh = std::process::Command::new("sh")
        .args(["-c", &format!("printf %s {quoted}")])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(sh.stdout).unwrap(), fp);
}

/// Regression: after `run --set`, the reproduce line quoted the file and its settings as one
/// word (`splitbrain run 'scenarios/01-bully-leader-crash.json --set duration=15s' --seed 1`,
/// "no such file"), and the `scenario` line showed the same label. The line now runs as
/// printed, and gives the same run.
#[test]
fn the_reproduce_line_after_set_runs_as_printed() {
    let o = splitbrain(&[
        "run",
        "scenarios/01-bully-leader-crash.json",
        "--set",
        "duration=15s",
        "--set",
        "description=a b",
        "--seed",
        "1",
    ]);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(
        out.contains("scenario  bully-leader-crash (scenarios/01-bully-leader-crash.json)\n"),
        "{out}"
    );
    assert!(
        out.contains("set       --set duration=15s --set 'description=a b'\n"),
        "{out}"
    );
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("reproduce "))
        .expect("a reproduce line");
    assert_eq!(
        line,
        "splitbrain run scenarios/01-bully-leader-crash.json --seed 1 --set duration=15s \
         --set 'description=a b'"
    );
    // The shell runs the line as printed, to the same summary.
    let bin = env!("CARGO_BIN_EXE_splitbrain");
    let sh = std::process::Command::new("sh")
        .args([
            "-c",
            &format!("{bin}{}", line.strip_prefix("splitbrain").unwrap()),
        ])
        .current_dir(repo())
        .output()
        .unwrap();
    assert_eq!(
        code(&sh),
        code(&o),
        "{}",
        String::from_utf8_lossy(&sh.stderr)
    );
    assert_eq!(String::from_utf8(sh.stdout).unwrap(), out);
    // `--json` names the file and lists the settings apart.
    let o = splitbrain(&[
        "run",
        "scenarios/01-bully-leader-crash.json",
        "--set",
        "duration=15s",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["file"], "scenarios/01-bully-leader-crash.json");
    assert_eq!(v["settings"], serde_json::json!(["duration=15s"]));
    assert_eq!(
        v["reproduce"],
        "splitbrain run scenarios/01-bully-leader-crash.json --seed 1 --set duration=15s"
    );
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
    // A user's report: `report` printed MISMATCH and exited 1 where `check` said BOUND, 3.
    let o = splitbrain(&["check", bounded.to_str().unwrap()]);
    assert_eq!(code(&o), 3);
    let out = tmp.path().join("rep");
    let o = splitbrain(&[
        "report",
        bounded.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let rc = code(&o);
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert_eq!(rc, 3, "{stdout}");
    assert!(stdout.starts_with("BOUND "), "{stdout}");
    assert!(
        stdout.contains("event limit reached: 20 events"),
        "{stdout}"
    );
    assert!(!stdout.contains("MISMATCH"), "{stdout}");
    // A user's report: a sweep said only "3 hit a bound"; it names the limit and the hint.
    let o = splitbrain(&["sweep", bounded.to_str().unwrap(), "--seeds", "0..3"]);
    let rc = code(&o);
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert_eq!(rc, 3, "{stdout}");
    assert!(
        stdout.contains(
            "bound     3 runs hit max_events; first, seed 0: event limit reached: 20 events"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("(raise max_events or shorten the run)"),
        "{stdout}"
    );
}

/// Regression: a run that hit a bound before its lesson's chart window started made `run
/// --trace t.jsonl --chart c.svg` exit 2 blaming the chart window, hid the STOPPED report and
/// left the trace behind. A bound is exit 3 with its message whatever outputs were asked
/// for: the outputs are drawn over what ran, or, when one cannot be drawn at all, none is
/// written.
#[test]
fn a_bound_is_exit_3_whatever_outputs_were_asked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(repo().join("scenarios/02-bully-worst-case.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    // The window starts at 1.3 s; 50 events end the run at 1 s.
    v["limits"] = serde_json::json!({ "max_events": 50 });
    let f = tmp.path().join("bounded.json");
    std::fs::write(&f, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (trace, chart, view) = (
        tmp.path().join("t.jsonl"),
        tmp.path().join("c.svg"),
        tmp.path().join("v.html"),
    );
    let o = splitbrain(&[
        "run",
        f.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--chart",
        chart.to_str().unwrap(),
        "--view",
        view.to_str().unwrap(),
    ]);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(code(&o), 3, "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains("STOPPED   event limit reached: 50 events"),
        "{out}"
    );
    assert!(
        out.contains(
            "note      the lesson's chart window starts at 1.300 s, after the run stopped"
        ),
        "{out}"
    );
    // Each output is whole: the trace ends with its `end` record and replays.
    assert!(std::fs::read_to_string(&chart)
        .unwrap()
        .ends_with("</svg>\n"));
    assert!(std::fs::read_to_string(&view).unwrap().contains("</html>"));
    let o = splitbrain(&["replay", trace.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stdout));
    // A window the user asks for after the bound cannot be drawn: no output at all, exit 3.
    for p in [&trace, &chart, &view] {
        std::fs::remove_file(p).unwrap();
    }
    let o = splitbrain(&[
        "run",
        f.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--chart",
        chart.to_str().unwrap(),
        "--from",
        "1.2s",
    ]);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(code(&o), 3, "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains("STOPPED   event limit reached: 50 events"),
        "{out}"
    );
    assert!(
        out.contains("note      no output written: --from 1.200 s"),
        "{out}"
    );
    assert!(!trace.exists() && !chart.exists());
    // A --from past the file's duration is refused before the run (exit 2), nothing written.
    let o = splitbrain(&[
        "run",
        "scenarios/02-bully-worst-case.json",
        "--trace",
        trace.to_str().unwrap(),
        "--chart",
        chart.to_str().unwrap(),
        "--from",
        "9s",
    ]);
    assert_eq!(code(&o), 2);
    assert!(!trace.exists() && !chart.exists());
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

/// Writes `v` as `name` in `dir` and returns its path.
fn write_json(dir: &std::path::Path, name: &str, v: &serde_json::Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    p.to_str().unwrap().to_string()
}

/// Issue 10 section 2: `expect_rate` is judged over the sweep the file names (`rate_seeds`)
/// with the 95% Wilson interval; `check` runs it and `sweep` judges it too.
#[test]
fn check_and_sweep_judge_rate_expectations_by_the_wilson_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let src =
        std::fs::read_to_string(repo().join("scenarios/05-lease-gc-pause-unfenced.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    // Lesson 05 violates exclusive_holders on every seed: 20/20, CI [83.89%, 100%].
    v["expect"]
        .as_object_mut()
        .unwrap()
        .remove("exclusive_holders");
    v["rate_seeds"] = "0..20".into();
    v["expect_rate"] = serde_json::json!({"exclusive_holders": {"violated_at_most": 0.5}});
    let too_high = write_json(tmp.path(), "too-high.json", &v);
    let o = splitbrain(&["check", &too_high]);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains(
            "rate exclusive_holders violated 20/20, 95% CI [83.89%, 100.00%]; expected at \
             most 50.00%: MISMATCH"
        ),
        "{out}"
    );
    assert!(
        out.contains("[sweep 0..20: 20 of 20 runs matched]"),
        "{out}"
    );
    let o = splitbrain(&["sweep", &too_high, "--seeds", "0..20"]);
    assert_eq!(code(&o), 1);

    // At least 90%: the upper bound (100%) is not below it.
    v["expect_rate"] = serde_json::json!({"exclusive_holders": {"violated_at_least": 0.9}});
    let ok = write_json(tmp.path(), "ok.json", &v);
    let o = splitbrain(&["check", &ok]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(code(&splitbrain(&["sweep", &ok, "--seeds", "0..20"])), 0);
    // A single run does not judge a rate: it matches.
    assert_eq!(code(&splitbrain(&["run", &ok])), 0);
}

/// Regression (new-user pass): a `violated_at_least` claim passed with 0 violations over 3
/// seeds, the interval too wide to reject it, and `check` and `sweep` said only "ok"; a rate
/// over runs that held vacuously did not say so. The exit codes stay: the claim is not
/// rejected.
#[test]
fn an_at_least_rate_that_too_few_seeds_cannot_reject_is_warned_about() {
    let tmp = tempfile::tempdir().unwrap();
    let src =
        std::fs::read_to_string(repo().join("scenarios/06-lease-gc-pause-fenced.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    // Lesson 06 never accepts two writers: 0 of 3, CI [0, 56.15%] still reaches 50%.
    v["expect"]
        .as_object_mut()
        .unwrap()
        .remove("no_two_accepted_writers");
    v["rate_seeds"] = "0..3".into();
    v["expect_rate"] = serde_json::json!({"no_two_accepted_writers": {"violated_at_least": 0.5}});
    let f = write_json(tmp.path(), "weak.json", &v);
    let warning = "warning: `violated_at_least` 50.00% passes only because 3 runs cannot \
                   reject it; 0 of 3 runs violated";
    let o = splitbrain(&["check", &f]);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(code(&o), 0, "{out}");
    assert!(out.contains(warning), "{out}");
    let o = splitbrain(&["sweep", &f, "--seeds", "0..3"]);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(code(&o), 0, "{out}");
    assert!(out.contains(warning), "{out}");
    // Enough seeds reject it: no warning, a mismatch.
    let o = splitbrain(&["sweep", &f, "--seeds", "0..10"]);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(code(&o), 1, "{out}");
    assert!(!out.contains("warning"), "{out}");

    // A client that crashes before it writes: `no_two_accepted_writers` holds vacuously on
    // every seed, and the rate line says how many runs that was.
    let v = serde_json::json!({
        "splitbrain": 1,
        "name": "nothing-written",
        "duration": "5s",
        "nodes": {
            "locks": {"role": "lease_service"},
            "storage": {"role": "storage"},
            "client-1": {"role": "worker", "lock": "lease", "service": "locks",
                         "storage": "storage", "ttl": "10s", "work_time": "10s"}
        },
        "faults": [{"at": "1s", "crash": "client-1"}],
        "check": ["no_two_accepted_writers"],
        "rate_seeds": "0..4",
        "expect_rate": {"no_two_accepted_writers": {"violated_at_most": 0.5}}
    });
    let f = write_json(tmp.path(), "vacuous-rate.json", &v);
    let o = splitbrain(&["check", &f]);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(
        out.contains(
            "rate no_two_accepted_writers violated 0/4 (4 vacuous, counted as holds), 95% CI"
        ),
        "{out}"
    );
    // Without the vacuous runs no run decided: the judgement rests on them.
    assert!(
        out.contains(
            "warning: 4 of 4 runs held vacuously and count as holds; without them the \
             judgement would be MISMATCH"
        ),
        "{out}"
    );
}

/// Issue 10 section 3: an expected `holds` whose premise never occurred is a mismatch unless
/// the file says `"vacuous_ok": true`; the text and JSON say `holds (vacuous: ...)`; an
/// invariant without an `expect` entry shows `holds` as expected; a `when` fault that never
/// fired is reported; the table's got column is wide enough for a vacuous note.
#[test]
fn vacuous_passes_and_untriggered_faults_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let v = serde_json::json!({
        "splitbrain": 1,
        "name": "nothing-written",
        "duration": "5s",
        "nodes": {
            "locks": {"role": "lease_service"},
            "storage": {"role": "storage"},
            "client-1": {"role": "worker", "lock": "lease", "service": "locks",
                         "storage": "storage", "ttl": "10s", "work_time": "10s"}
        },
        "faults": [
            {"at": "1s", "crash": "client-1"},
            {"when": {"node": "client-1", "observed": "lock_renewed", "nth": 1},
             "pause": "client-1", "for": "1s"}
        ],
        "check": ["no_two_accepted_writers", "exclusive_holders"],
        "expect": {"no_two_accepted_writers": "holds"}
    });
    let f = write_json(tmp.path(), "vacuous.json", &v);
    let o = splitbrain(&["run", &f]);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains(
            "no_two_accepted_writers   holds     holds (vacuous: the storage accepted no write)  MISMATCH"
        ),
        "{out}"
    );
    // The got column widens to its longest text (it ran into the mark: `write)MISMATCH`).
    assert!(
        out.contains(&format!(
            "exclusive_holders         holds     {:<48}ok",
            "holds"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "  invariant                 expected  {:<48}\n",
            "got"
        )),
        "{out}"
    );
    assert!(
        out.contains(
            "note      fault 2, pause client-1 for 1.000 s when lock_renewed #1: never triggered"
        ),
        "{out}"
    );
    let o = splitbrain(&["run", &f, "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        j["expectations"][1]["vacuous"],
        "the storage accepted no write"
    );
    assert_eq!(j["results"][1]["vacuous"], "the storage accepted no write");
    assert_eq!(
        j["untriggered"][0],
        "fault 2, pause client-1 for 1.000 s when lock_renewed #1: never triggered"
    );
    let o = splitbrain(&["check", &f]);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(code(&o), 1);
    assert!(
        out.contains(
            "no_two_accepted_writers: expected holds, got holds (vacuous: the storage accepted no write)"
        ),
        "{out}"
    );

    let mut ok = v.clone();
    ok["vacuous_ok"] = true.into();
    let f = write_json(tmp.path(), "vacuous-ok.json", &ok);
    assert_eq!(code(&splitbrain(&["check", &f])), 0);
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
    for (format, file, name) in [
        ("chrome", "t.json", "(Chrome trace, "),
        ("shiviz", "t.log", "(ShiViz log, "),
    ] {
        let o = splitbrain(&["export", &p("t.jsonl"), "--format", format, "-o", &p(file)]);
        assert_eq!(
            code(&o),
            0,
            "{format}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        // Regression: the format was told as "Shiviz" (the tool is ShiViz).
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains(name), "{out}");
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

/// Regression (new-user pass): an invariant in `check` without an `expect` entry passed while
/// inconclusive or vacuous (`ok inc.json [single_leader=violated,
/// eventual_leader=inconclusive]`, exit 0), although the README says it "is expected to
/// hold" and writing `"holds"` gave MISMATCH, exit 1. Now both are judged alike.
#[test]
fn a_checked_invariant_without_an_expect_entry_is_judged_as_an_explicit_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(repo().join("scenarios/03-bully-partition-split-brain.json"))
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    // 7 s is before the last fault (6 s) plus the 5 s settle: eventual_leader is inconclusive.
    v["duration"] = "7s".into();
    v["expect"] = serde_json::json!({"single_leader": "violated"});
    let implicit = write_json(tmp.path(), "inc.json", &v);
    v["expect"]["eventual_leader"] = "holds".into();
    let explicit = write_json(tmp.path(), "inc-explicit.json", &v);
    for f in [&implicit, &explicit] {
        let o = splitbrain(&["check", f]);
        let out = String::from_utf8(o.stdout.clone()).unwrap();
        assert_eq!(code(&o), 1, "{out}");
        assert!(
            out.contains(&format!(
                "MISMATCH  {f}  [single_leader=violated, eventual_leader: expected holds, got \
                 inconclusive]"
            )),
            "{out}"
        );
        assert!(out.contains("0 passed, 1 failed"), "{out}");
        let o = splitbrain(&["run", f]);
        let out = String::from_utf8(o.stdout.clone()).unwrap();
        assert_eq!(code(&o), 1, "{out}");
        assert!(
            out.contains("eventual_leader           holds     inconclusive  MISMATCH"),
            "{out}"
        );
    }

    // A vacuous holds: a bully run accepts no write.
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    v["check"]
        .as_array_mut()
        .unwrap()
        .push("no_two_accepted_writers".into());
    let vacuous = write_json(tmp.path(), "vac.json", &v);
    let o = splitbrain(&["check", &vacuous]);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains(
            "no_two_accepted_writers: expected holds, got holds (vacuous: the storage accepted \
             no write)"
        ),
        "{out}"
    );
    v["vacuous_ok"] = true.into();
    let vacuous_ok = write_json(tmp.path(), "vac-ok.json", &v);
    assert_eq!(code(&splitbrain(&["check", &vacuous_ok])), 0);
}

/// Regression (new-user pass): a run stopped at its event limit showed the row `single_leader
/// holds inconclusive ok` and `"matches": true` in `--json`, yet printed `outcome NOT as
/// expected` and exited 3. The row, the JSON and the outcome now come from one rule.
#[test]
fn a_bounded_runs_rows_json_and_outcome_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(repo().join("scenarios/01-bully-leader-crash.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    v.as_object_mut().unwrap().remove("expect");
    v["limits"] = serde_json::json!({ "max_events": 100 });
    let f = write_json(tmp.path(), "bounded.json", &v);
    let o = splitbrain(&["run", &f]);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(code(&o), 3, "{out}");
    assert!(
        out.contains("single_leader             holds     inconclusive  MISMATCH"),
        "{out}"
    );
    assert!(!out.contains("inconclusive  ok"), "{out}");
    assert!(
        out.contains("outcome   NOT as expected: the run stopped at a bound before its duration"),
        "{out}"
    );
    let o = splitbrain(&["run", &f, "--json"]);
    assert_eq!(code(&o), 3);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["as_expected"], false);
    for e in j["expectations"].as_array().unwrap() {
        assert_eq!(e["got"], "inconclusive", "{e}");
        assert_eq!(e["matches"], false, "{e}");
    }
}

/// A user's report: the report index said "`exclusive_holders` holds" where the lesson's
/// page said "holds (vacuous: ...)". The index says vacuous too.
#[test]
fn the_report_index_marks_a_vacuous_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let src =
        std::fs::read_to_string(repo().join("scenarios/08-redis-lock-contention.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    v["faults"] = serde_json::json!([{"at": "1ns", "crash": "redis"}]);
    v["duration"] = serde_json::json!("5s");
    v["check"] = serde_json::json!(["exclusive_holders"]);
    v["expect"] = serde_json::json!({});
    v["vacuous_ok"] = serde_json::json!(true);
    let f = write_json(tmp.path(), "down.json", &v);
    let out = tmp.path().join("out");
    let o = splitbrain(&["report", &f, "-o", out.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let index = std::fs::read_to_string(out.join("README.md")).unwrap();
    let says = "`exclusive_holders` holds (vacuous: no client ever acquired a lock)";
    assert!(index.contains(says), "{index}");
    let page = std::fs::read_to_string(out.join("redis-lock-contention.md")).unwrap();
    assert!(
        page.contains("holds (vacuous: no client ever acquired a lock)"),
        "{page}"
    );
}

/// `check --junit FILE`: one test case per scenario file with its outcome, counts a CI system
/// reads, and hostile text (a file name and an error quoting markup) escaped into well-formed
/// XML; the report is written even when the check fails, and is the same bytes every time.
#[test]
fn check_writes_a_junit_report_ci_systems_read() {
    use quick_xml::events::Event;
    let dir = tempfile::tempdir().unwrap();
    let lesson =
        std::fs::read_to_string(repo().join("scenarios/01-bully-leader-crash.json")).unwrap();
    let wrong = lesson.replace(
        "\"single_leader\": \"holds\"",
        "\"single_leader\": \"violated\"",
    );
    assert_ne!(
        wrong, lesson,
        "the lesson states single_leader's expectation"
    );
    let mismatch = dir.path().join("mismatch.json");
    std::fs::write(&mismatch, wrong).unwrap();
    let hostile = dir.path().join("a<b&\"c\u{1}.json");
    std::fs::write(&hostile, "{\"name\": \"<script>alert(1)</script>\", ").unwrap();
    let report = dir.path().join("report.xml");
    let args = [
        "check",
        "scenarios/01-bully-leader-crash.json",
        mismatch.to_str().unwrap(),
        hostile.to_str().unwrap(),
        "--junit",
        report.to_str().unwrap(),
    ];
    let o = splitbrain(&args);
    assert_eq!(code(&o), 2, "an invalid file is bad input");
    let xml = std::fs::read_to_string(&report).unwrap();
    assert!(!xml.contains("<script>") && !xml.contains('\u{1}'), "{xml}");
    let mut reader = quick_xml::Reader::from_str(&xml);
    let (mut cases, mut children, mut suite) = (Vec::new(), Vec::new(), None);
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Eof => break,
            Event::Start(e) => {
                let attr = |k: &str| {
                    e.try_get_attribute(k).unwrap().map(|a| {
                        a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .unwrap()
                            .to_string()
                    })
                };
                match e.name().as_ref() {
                    b"testsuite" => suite = Some([attr("tests"), attr("failures"), attr("errors")]),
                    b"testcase" => cases.push(attr("name").unwrap()),
                    b"failure" | b"error" | b"skipped" => {
                        children.push(String::from_utf8(e.name().as_ref().to_vec()).unwrap())
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let some = |s: &str| Some(s.to_string());
    assert_eq!(suite, Some([some("3"), some("1"), some("1")]));
    assert_eq!(cases.len(), 3);
    assert_eq!(cases[0], "scenarios/01-bully-leader-crash.json");
    assert!(cases[2].contains("a<b&\"c\u{FFFD}.json"), "{cases:?}");
    assert_eq!(children, ["failure", "error"]);
    let again = splitbrain(&args);
    assert_eq!(code(&again), 2);
    assert_eq!(
        std::fs::read_to_string(&report).unwrap(),
        xml,
        "same files, same bytes"
    );
}

/// `splitbrain run FILE --narrate | head -1`: the reader takes one line and closes the pipe;
/// the next write fails with `BrokenPipe`, which ends the command quietly with the status a
/// SIGPIPE would give (141), no panic message nor error on stderr. The narration (about
/// 170 KB) is larger than a pipe's buffer, so the write that fails comes after the close.
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_splitbrain"))
        .args([
            "run",
            // A story (150 kB) longer than a pipe's buffer.
            "scenarios/25c-etcd-mutex-gc-pause-fenced.json",
            "--narrate",
        ])
        .current_dir(repo())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(
        !first.is_empty(),
        "one line was read before the pipe closed"
    );
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 141);
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
}

/// Scenario text is data in every output a person reads: a lesson and description holding
/// markup, a terminal escape, a bidi override and line breaks reach the terminal as one line
/// with the controls written as escapes, and the report's markdown page and index with HTML's
/// characters as entities (a book passes raw HTML through).
#[test]
fn hostile_scenario_text_is_shown_as_text_in_the_terminal_and_in_reports() {
    let dir = tempfile::tempdir().unwrap();
    let src =
        std::fs::read_to_string(repo().join("scenarios/05-lease-gc-pause-unfenced.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    let hostile = "<script>alert(1)</script>\u{1b}[31mRED\u{1b}[0m\u{202e}evil\nline <img src=x onerror=alert(1)> | &";
    v["lesson"] = hostile.into();
    v["description"] = hostile.into();
    v["$schema"] = "x".into();
    let file = dir.path().join("hostile.json");
    std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let o = splitbrain(&["run", file.to_str().unwrap()]);
    assert_eq!(code(&o), 0);
    let out = String::from_utf8(o.stdout).unwrap();
    let line = out.lines().find(|l| l.starts_with("lesson")).unwrap();
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{202e}'),
        "{out}"
    );
    assert!(
        line.contains("\\u{1b}[31mRED") && line.contains("\\u{202e}evil line"),
        "{line}"
    );
    let rep = dir.path().join("rep");
    let o = splitbrain(&[
        "report",
        file.to_str().unwrap(),
        "-o",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    for page in ["lease-gc-pause-unfenced.md", "README.md"] {
        let md = std::fs::read_to_string(rep.join(page)).unwrap();
        assert!(
            !md.contains("<script>") && !md.contains("<img"),
            "{page}: {md}"
        );
        assert!(!md.contains('\u{1b}') && !md.contains('\u{202e}'), "{page}");
        assert!(
            md.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{page}: {md}"
        );
    }
}

/// `--width PX` sets a chart's width (a slide's 1280 px); it is refused without a chart to
/// apply to, and below 600 px, where the lanes' labels no longer fit.
#[test]
fn chart_width_sets_the_image_width() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("slide.png");
    let o = splitbrain(&[
        "run",
        "scenarios/05-lease-gc-pause-unfenced.json",
        "--width",
        "1280",
        "--chart",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&png).unwrap();
    // A PNG's IHDR chunk starts at byte 16 with the width, big-endian.
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 1280);
    let o = splitbrain(&[
        "run",
        "scenarios/05-lease-gc-pause-unfenced.json",
        "--width",
        "1280",
    ]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--width applies to --chart"));
    let o = splitbrain(&[
        "run",
        "scenarios/05-lease-gc-pause-unfenced.json",
        "--width",
        "100",
        "--chart",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 2);
}

/// Hostile scenario text through every output `report` writes (the SVG chart, the browser
/// view page, the markdown pages and index): a lesson sentence and description of markup
/// (`<img onerror>`, `<script>`) and bidi and control characters never reach any of them as
/// markup or raw controls; a node name holding them is refused with a located error (names
/// are `[A-Za-z0-9._-]`), its text escaped in the message.
#[test]
fn hostile_scenario_text_reaches_no_output_as_markup() {
    let dir = tempfile::tempdir().unwrap();
    let src =
        std::fs::read_to_string(repo().join("scenarios/06-lease-gc-pause-fenced.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&src).unwrap();
    let hostile = "<img src=x onerror=alert(1)><script>alert(2)</script>\u{202e}\u{2066}bidi\u{1b}[2J\u{7}\u{0}end";
    v["lesson"] = hostile.into();
    v["description"] = hostile.into();
    v["$schema"] = "x".into();
    let file = dir.path().join("hostile.json");
    std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let rep = dir.path().join("rep");
    let o = splitbrain(&[
        "report",
        file.to_str().unwrap(),
        "-o",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let mut seen = Vec::new();
    for e in std::fs::read_dir(&rep).unwrap() {
        let p = e.unwrap().path();
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue; // a PNG
        };
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        for bad in [
            "<img",
            "<script>alert",
            "\u{202e}",
            "\u{2066}",
            "\u{1b}",
            "\u{7}",
            "\u{0}",
        ] {
            assert!(!text.contains(bad), "{name} holds {bad:?}");
        }
        seen.push(name);
    }
    seen.sort();
    assert!(
        [
            "hostile-lease-gc-pause-fenced.svg",
            "README.md",
            "lease-gc-pause-fenced.html",
            "lease-gc-pause-fenced.md",
            "lease-gc-pause-fenced.svg"
        ]
        .iter()
        .filter(|n| seen.iter().any(|s| s == *n))
        .count()
            >= 4,
        "the chart, view and pages were written: {seen:?}"
    );
    // The view page opened from a run of the file (`run --view`) likewise.
    let page = dir.path().join("view.html");
    let o = splitbrain(&[
        "run",
        file.to_str().unwrap(),
        "--view",
        page.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("<img") && !html.contains("<script>alert") && !html.contains('\u{202e}')
    );
    // A node name of markup is refused where it stands, escaped in the message.
    let mut named = v.clone();
    let nodes = named["nodes"].as_object_mut().unwrap();
    let spec = nodes.remove("client-2").unwrap();
    nodes.insert("<img src=x onerror=alert(1)>\u{202e}".into(), spec);
    let bad = dir.path().join("named.json");
    std::fs::write(&bad, serde_json::to_string_pretty(&named).unwrap()).unwrap();
    let o = splitbrain(&["run", bad.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("named.json:"), "{err}");
    assert!(!err.contains('\u{202e}'), "{err}");
}

/// A run with a nemesis says in one line that it is one seed, and how to sweep it; a run
/// without one does not.
#[test]
fn a_run_with_a_nemesis_says_it_is_one_seed_and_how_to_sweep() {
    let o = splitbrain(&["run", "scenarios/23-compare/lease-fencing.json"]);
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("sweep ")).collect();
    assert_eq!(
        lines,
        [
            "sweep     one run is one seed of the nemesis's random faults; its rate over 1000: \
          splitbrain sweep scenarios/23-compare/lease-fencing.json --seeds 0..1000 --out \
          results.jsonl"
        ],
        "{out}"
    );
    let o = splitbrain(&["run", "scenarios/06-lease-gc-pause-fenced.json"]);
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(!out.contains("one run is one seed"), "{out}");
}
