//! Odd inputs a new user gives the CLI (found by trying to break it): each is accepted or gets
//! a clear exit-2 error, never a panic, an abort or a silently different run. Scenario-file
//! errors have their fixtures in `tests/broken/`; these are the ones a fixture cannot show.

mod common;

use common::{code, repo, splitbrain};
use std::path::Path;
use std::process::Output;

const LESSON: &str = "scenarios/06-lease-gc-pause-fenced.json";

/// Regression: a file saved with a UTF-8 byte order mark (Notepad, some Windows editors) was
/// refused as "(syntax): expected value" at 1:1, though it is the same scenario.
#[test]
fn a_byte_order_mark_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(repo().join(LESSON)).unwrap();
    let bom = dir.path().join("bom.json");
    std::fs::write(&bom, format!("\u{feff}{src}")).unwrap();
    let bom = bom.to_str().unwrap();
    let plain = splitbrain(&["run", LESSON]);
    for args in [
        vec!["run", bom],
        vec!["run", bom, "--set", "seed=7"],
        vec!["sweep", bom, "--seeds", "7"],
    ] {
        let o = splitbrain(&args);
        assert_eq!(
            code(&o),
            0,
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        if args.len() == 2 {
            let hash = |o: &Output| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .find(|l| l.starts_with("trace "))
                    .map(str::to_string)
            };
            assert_eq!(hash(&o), hash(&plain), "the same run, event for event");
        }
    }
}

/// Regression: `--seeds 0..18446744073709551615` allocated every seed up front and aborted
/// with "memory allocation failed" (a signal, no exit code); the same range in a file's
/// `rate_seeds` did it to `check`.
#[test]
fn a_seed_range_too_large_to_hold_is_exit_2_before_anything_runs() {
    let o = splitbrain(&["sweep", LESSON, "--seeds", "0..18446744073709551615"]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("holds 18446744073709551615 seeds: at most 10000000 in one range"),
        "{err}"
    );
    // The limit itself is allowed (parsing only: the range is not run here).
    let o = splitbrain(&["sweep", LESSON, "--seeds", "0..10000001"]);
    assert_eq!(code(&o), 2);

    let dir = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join(LESSON)).unwrap()).unwrap();
    v["expect_rate"] = serde_json::json!({ "fencing_monotonic": { "violated_at_most": 0.0 } });
    v["expect"]
        .as_object_mut()
        .unwrap()
        .remove("fencing_monotonic");
    v["rate_seeds"] = "0..18446744073709551615".into();
    let f = dir.path().join("huge-rate-seeds.json");
    std::fs::write(&f, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let o = splitbrain(&["check", f.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stdout));
    let out = String::from_utf8_lossy(&o.stdout) + String::from_utf8_lossy(&o.stderr);
    assert!(out.contains("rate_seeds"), "{out}");
}

/// Regression: `run --set nodes.client1.ttl=5s` (the node is `client-1`) added a node
/// `client1` with no role and failed with "missing field `role`" at a line of the edited text
/// the user never saw.
#[test]
fn set_on_a_node_that_does_not_exist_names_the_node() {
    let o = splitbrain(&["run", LESSON, "--set", "nodes.client1.ttl=5s"]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(
        err,
        "error: --set/--vary path `nodes.client1.ttl`: the file has no node `client1` in \
         `nodes`; did you mean `client-1`?\n"
    );
    let o = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..2",
        "--vary",
        "nodes.client-3.ttl=5s,6s",
    ]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("no node `client-3`"));
}

/// Regression: `sweep --out DIR` ran every seed and only then failed to rename its result
/// onto the folder; `report -o FILE` (a file where the folder goes) exited 1, the code of a
/// mismatch, instead of 2.
#[test]
fn an_output_path_that_is_a_folder_or_a_file_in_the_way_is_exit_2_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().to_str().unwrap();
    let o = splitbrain(&["sweep", LESSON, "--seeds", "0..50", "--out", folder]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains(&format!("cannot write {folder}: it is a folder")),
        "{err}"
    );
    assert!(
        !err.contains("runs ("),
        "the sweep ran before checking: {err}"
    );
    for args in [
        vec!["run", LESSON, "--trace", folder],
        vec!["shrink", LESSON, "-o", folder, "--max-runs", "5"],
    ] {
        let o = splitbrain(&args);
        assert_eq!(code(&o), 2, "{args:?}");
    }

    let file = dir.path().join("a-file");
    std::fs::write(&file, "keep me").unwrap();
    let o = splitbrain(&["report", LESSON, "-o", file.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
    // Regression: it said "entity already exists".
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("a-file: it is a file (-o names the folder to write)"),
        "{err}"
    );

    // A file where a folder of the output path goes is named as such (it read "cannot create
    // the folder ...: entity already exists": a fresh user's finding).
    let under = file.join("r.jsonl");
    let o = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..5",
        "--out",
        under.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains(&format!("{} is a file, not a folder", file.display())),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
}

/// Regression (new-user pass): `run scenarios` said "cannot read the scenario: Is a directory
/// (os error 21)".
#[test]
fn a_folder_given_as_a_scenario_says_so_and_points_at_check() {
    let o = splitbrain(&["run", "scenarios"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "error: scenarios: cannot read the scenario: it is a folder, not a scenario file \
         (`splitbrain check scenarios` runs every scenario in a folder)\n"
    );
    let o = splitbrain(&["run", "no/such/file.json"]);
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "error: no/such/file.json: cannot read the scenario: no such file\n"
    );
}

/// Regression (new-user pass): trace inputs gave the OS's words where scenarios get
/// friendly ones: `replay scenarios` and `chart scenarios -o a.svg` said "Is a directory (os
/// error 21)", a missing trace "No such file or directory (os error 2)".
#[test]
fn a_folder_or_missing_trace_is_told_as_for_a_scenario() {
    for args in [
        vec!["replay", "scenarios"],
        vec!["chart", "scenarios", "-o", "a.svg"],
        vec!["export", "scenarios", "--format", "chrome", "-o", "a.json"],
        vec!["view", "scenarios", "-o", "a.html"],
    ] {
        let o = splitbrain(&args);
        assert_eq!(code(&o), 2, "{args:?}");
        assert_eq!(
            String::from_utf8(o.stderr).unwrap(),
            "error: scenarios: cannot read the trace: it is a folder, not a file\n",
            "{args:?}"
        );
    }
    let o = splitbrain(&["replay", "no/such/t.jsonl"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "error: no/such/t.jsonl: cannot read the trace: no such file\n"
    );
}

/// Regression (new-user pass): `--seed 18446744073709551616` said "number too large to fit
/// in target type", `--seed -1` "unexpected argument", and a seed range past u64 read as a
/// malformed range: each now says a seed is an integer in 0..=18446744073709551615.
#[test]
fn a_seed_past_u64_says_what_a_seed_is() {
    let want = "a seed is an integer in 0..=18446744073709551615";
    for args in [
        vec!["run", LESSON, "--seed", "18446744073709551616"],
        vec!["run", LESSON, "--seed", "-1"],
        vec!["shrink", LESSON, "--seed", "1.5"],
        vec!["sweep", LESSON, "--seeds", "0..18446744073709551616"],
    ] {
        let o = splitbrain(&args);
        assert_eq!(code(&o), 2, "{args:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}: nothing ran");
    }
}

/// Regression (new-user pass): `--trace /proc/x.jsonl` said "cannot create a file in /proc:
/// entity not found": the folder exists and refuses new files, and that is what is said.
#[cfg(target_os = "linux")]
#[test]
fn a_folder_that_refuses_new_files_is_named_with_the_reason() {
    let o = splitbrain(&["run", LESSON, "--trace", "/proc/x.jsonl"]);
    assert_eq!(code(&o), 2);
    assert!(o.stdout.is_empty(), "nothing ran");
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "error: cannot write /proc/x.jsonl: the folder /proc cannot be written: it accepts no \
         new files\n"
    );
    let o = splitbrain(&["run", LESSON, "--trace", "/proc/a/b/x.jsonl"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "error: cannot write /proc/a/b/x.jsonl: cannot create the folder /proc/a/b: the folder \
         /proc cannot be written: it accepts no new files\n"
    );
}

/// Regression: `chart --hide HEARTBEATS` (a typo) drew every heartbeat without a word.
#[test]
fn hide_names_a_message_kind() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let t = trace.to_str().unwrap();
    let o = splitbrain(&["run", "scenarios/01-bully-leader-crash.json", "--trace", t]);
    assert_eq!(code(&o), 0);
    let svg = dir.path().join("c.svg");
    let svg = svg.to_str().unwrap();
    let o = splitbrain(&["chart", t, "-o", svg, "--hide", "HEARTBEATS"]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("unknown message kind `HEARTBEATS`; did you mean `HEARTBEAT`?"),
        "{err}"
    );
    assert!(!Path::new(svg).exists());
    // Any case names a kind, as the chart and the narration match it.
    let o = splitbrain(&["chart", t, "-o", svg, "--hide", "heartbeat,ELECTION"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
}

/// Regression: `view --from 12s --to 4s` wrote a page without a word (chart refused it), and
/// `run --trace T --view V --from 12s --to 4s` wrote the trace before finding the window bad.
#[test]
fn a_window_that_ends_before_it_starts_is_exit_2_with_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let html = dir.path().join("v.html");
    let (t, h) = (trace.to_str().unwrap(), html.to_str().unwrap());
    let o = splitbrain(&[
        "run", LESSON, "--trace", t, "--view", h, "--from", "12s", "--to", "4s",
    ]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("--from 12.000 s must be before --to 4.000 s"));
    assert!(!trace.exists() && !html.exists());

    let o = splitbrain(&["run", LESSON, "--trace", t]);
    assert_eq!(code(&o), 0);
    let o = splitbrain(&["view", t, "-o", h, "--from", "12s", "--to", "4s"]);
    assert_eq!(code(&o), 2);
    assert!(!html.exists());

    // A window past the run's end (40 s): the message quotes what was given, not a --to
    // clamped to the end ("--from 100.000 s must be before --to 40.000 s").
    let svg = dir.path().join("c.svg");
    let o = splitbrain(&[
        "chart",
        t,
        "-o",
        svg.to_str().unwrap(),
        "--from",
        "100s",
        "--to",
        "200s",
    ]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("--from 100.000 s is not before the end of the run (40.000 s)"),
        "{err}"
    );
    assert!(!svg.exists());
}

/// Regression: `view --from 100s` on a 40 s run wrote a page of the whole run without a word,
/// where `chart` refuses the same window; `run --view` did the same.
#[test]
fn view_refuses_a_from_past_the_runs_end_as_chart_does() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let html = dir.path().join("v.html");
    let (t, h) = (trace.to_str().unwrap(), html.to_str().unwrap());
    assert_eq!(code(&splitbrain(&["run", LESSON, "--trace", t])), 0);
    let want = "--from 100.000 s is not before the end of the run (40.000 s): nothing to draw";
    for args in [
        vec!["view", t, "-o", h, "--from", "100s"],
        vec!["view", t, "-o", h, "--from", "40s", "--to", "200s"],
        vec!["run", LESSON, "--view", h, "--from", "100s"],
    ] {
        let o = splitbrain(&args);
        assert_eq!(code(&o), 2, "{args:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        let want = want.replace(
            "100.000",
            if args.contains(&"40s") {
                "40.000"
            } else {
                "100.000"
            },
        );
        assert!(err.contains(&want), "{args:?}: {err}");
        assert!(!html.exists(), "{args:?}");
    }
    // A window that starts before the end is kept (its end clamped to the run's).
    let o = splitbrain(&["view", t, "-o", h, "--from", "39s", "--to", "200s"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(html.exists());
}

/// Regression: `check DIR` where DIR holds links back to itself (`self -> .`, `again -> DIR`)
/// walked 2^40 paths and never ended; `report` too.
#[cfg(unix)]
#[test]
fn check_does_not_follow_folder_links_while_walking() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("scenarios/02-bully-worst-case.json"),
        dir.path().join("02.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(".", dir.path().join("self")).unwrap();
    std::os::unix::fs::symlink(dir.path(), dir.path().join("again")).unwrap();
    let o = splitbrain(&["check", dir.path().to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("1 passed, 0 failed"), "{out}");
}

/// Regression: `sweep` read its file with a plain read, so a file that is not UTF-8 got an
/// error with no line or column, while `run` and `check` located the bad byte.
#[test]
fn sweep_locates_a_byte_that_is_not_utf8_as_run_does() {
    let file = "tests/broken/not-utf8.json";
    let run = splitbrain(&["run", file]);
    let sweep = splitbrain(&["sweep", file, "--seeds", "0..2"]);
    assert_eq!((code(&run), code(&sweep)), (2, 2));
    let first = |o: &Output| {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        first(&sweep).contains("not-utf8.json:4:17"),
        "{}",
        first(&sweep)
    );
    assert_eq!(first(&sweep), first(&run));
}

/// Regression: a scenario of millions of faults (a 190 MB file) was read whole before the
/// fault limit was checked, and the process aborted out of memory. The reader stops at the
/// first fault past the limit, with or without `--set`; here the text after it is not even
/// JSON, and the error is still the limit's, located.
#[test]
fn a_file_past_the_fault_limit_is_refused_where_the_limit_is_passed() {
    let dir = tempfile::tempdir().unwrap();
    let fault = r#"{"at": "1s", "crash": "a"}"#;
    let src = format!(
        "{{\"splitbrain\": 1, \"name\": \"many\", \"duration\": \"2s\",\n\
         \"nodes\": {{\"a\": {{\"role\": \"bully\"}}}},\n\"faults\": [\n{}\n, not json",
        vec![fault; 50_000].join(",\n")
    );
    let file = dir.path().join("many.json");
    std::fs::write(&file, src).unwrap();
    let file = file.to_str().unwrap();
    for args in [
        vec!["run", file],
        vec!["run", file, "--set", "seed=3"],
        vec!["sweep", file, "--seeds", "1"],
    ] {
        let o = splitbrain(&args);
        assert_eq!(code(&o), 2, "{args:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(
            err.contains("many.json:10004:1: faults[10000]: too many faults: the limit is 10000"),
            "{args:?}: {err}"
        );
    }
}

/// Regression: `--set duration=30000000000` was sent as the string "30000000000" (the file has
/// a string there) and refused for its missing unit, though a file may write a duration as
/// integer nanoseconds. An integer where the file has a duration is that number now: the same
/// run as `--set duration=30s`.
#[test]
fn set_takes_an_integer_duration_as_nanoseconds() {
    let hash = |o: &Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .find(|l| l.starts_with("trace "))
            .map(str::to_string)
    };
    let ns = splitbrain(&["run", LESSON, "--set", "duration=30000000000"]);
    assert_eq!(code(&ns), 0, "{}", String::from_utf8_lossy(&ns.stderr));
    let s = splitbrain(&["run", LESSON, "--set", "duration=30s"]);
    assert_eq!(code(&s), 0);
    assert!(hash(&ns).is_some());
    assert_eq!(hash(&ns), hash(&s), "the same run");
    // --vary types its values the same way.
    let o = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..1",
        "--vary",
        "duration=30000000000,40s",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
}

/// Regression: drawing flags that nothing uses were silently ignored (`run --from 5s` with no
/// chart or view, `run --json --narrate` dropped the narration, `sweep --log-x` with no chart).
#[test]
fn flags_that_nothing_would_use_are_refused() {
    for (args, says) in [
        (
            vec!["run", LESSON, "--from", "5s"],
            "--from/--to applies to --chart or --view, and none is given",
        ),
        (
            vec!["run", LESSON, "--clocks"],
            "--clocks applies to --chart",
        ),
        (
            vec!["run", LESSON, "--hide", "HEARTBEAT"],
            "--hide applies to --chart or --narrate",
        ),
        (
            vec!["run", LESSON, "--json", "--narrate"],
            "cannot be used with",
        ),
        (
            vec!["sweep", LESSON, "--seeds", "0..2", "--log-x"],
            "--chart",
        ),
    ] {
        let o = splitbrain(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // Used, they are accepted.
    let o = splitbrain(&["run", LESSON, "--narrate", "--hide", "HEARTBEAT"]);
    assert_eq!(code(&o), 0);
}

/// Regression: with `--set`, the edited file was pretty-printed before validation, so errors
/// named lines the user's file does not have (`:39:14` in a one-line file). The new value now
/// takes the old one's place in the text: the error is on the file's own line.
#[test]
fn a_set_error_points_into_the_users_own_lines() {
    let dir = tempfile::tempdir().unwrap();
    let one_line = dir.path().join("one.json");
    let text =
        std::fs::read_to_string(repo().join("scenarios/05-lease-gc-pause-unfenced.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    std::fs::write(&one_line, serde_json::to_string(&v).unwrap()).unwrap();
    let f = one_line.to_str().unwrap();
    let o = splitbrain(&["run", f, "--set", "nodes.client-1.ttl=abc"]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{f} [nodes.client-1.ttl=abc]:1:")),
        "{err}"
    );
    assert!(err.contains("nodes.client-1.ttl"), "{err}");

    // A key the file lacks is put in the user's text too: still line 1.
    let o = splitbrain(&["run", f, "--set", "check_params.settle=abc"]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{f} [check_params.settle=abc]:1:")),
        "{err}"
    );

    // A key given twice is refused with or without settings (which copy an edit replaced
    // decided whether it was: `--set duration=7s` ran, `=6s`, the last copy's value, did not).
    let dup = dir.path().join("dup.json");
    std::fs::write(
        &dup,
        text.replacen("\"duration\":", "\"duration\": \"5s\", \"duration\":", 1),
    )
    .unwrap();
    for set in ["duration=7s", "seed=3"] {
        let o = splitbrain(&["run", dup.to_str().unwrap(), "--set", set]);
        assert_eq!(code(&o), 2, "{set}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("given twice"),
            "{set}"
        );
    }
}

/// Regression (new-user pass): `--set` values were read more loosely than a file: a list where
/// an object goes ran (serde read it field by field), a key given twice kept its last copy.
#[test]
fn set_values_are_read_as_strictly_as_a_file() {
    let err = |o: &Output| String::from_utf8_lossy(&o.stderr).to_string();
    let o = splitbrain(&["run", LESSON, "--set", r#"network=[{"fixed":"5s"}]"#]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(
        err(&o).contains("network: expected an object `{...}`, found a list `[...]`"),
        "{}",
        err(&o)
    );
    let twice = r#"network={"delay":{"fixed":"5s"},"delay":{"fixed":"6s"}}"#;
    let o = splitbrain(&["run", LESSON, "--set", twice]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(
        err(&o).contains("the key `delay` is given twice in one object: give each key once"),
        "{}",
        err(&o)
    );
}

/// Regression (new-user pass): `--vary` split inside lists and objects, took `"40s"` and
/// `40s` as two values, and `--find-threshold` refused a duration beside integer ns, which
/// `--vary` accepts.
#[test]
fn vary_and_find_threshold_read_values_as_set_does() {
    let err = |o: &Output| String::from_utf8_lossy(&o.stderr).to_string();
    let sweep = |extra: &[&str]| {
        let mut args = vec!["sweep", LESSON, "--seeds", "0..1"];
        args.extend_from_slice(extra);
        splitbrain(&args)
    };
    let o = sweep(&[
        "--vary",
        r#"network.delay={"fixed":"1ms"},{"uniform":["1ms","2ms"]}"#,
    ]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(r#"{"uniform":["1ms","2ms"]}"#), "{out}");
    let o = sweep(&["--vary", r#"duration="40s",40s"#]);
    assert_eq!(code(&o), 2);
    assert!(err(&o).contains("the same value"), "{}", err(&o));
    let o = sweep(&[
        "--find-threshold",
        "duration=30s..40000000000",
        "--invariant",
        "exclusive_holders",
        "--steps",
        "0",
    ]);
    assert_ne!(code(&o), 2, "{}", err(&o));
}

/// Regression (new-user pass): `--set duration=1.2s` on a file whose chart window ends at
/// 1.305 s was refused ("chart window ends after the run") though no chart was drawn; the
/// window is now fitted into the shorter run.
#[test]
fn a_shorter_duration_set_fits_the_files_chart_window() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("c.svg");
    let file = "scenarios/02-bully-worst-case.json";
    let o = splitbrain(&["run", file, "--set", "duration=1.2s"]);
    assert_ne!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    let o = splitbrain(&[
        "run",
        file,
        "--set",
        "duration=1.302s",
        "--chart",
        svg.to_str().unwrap(),
    ]);
    assert_ne!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(svg.exists());
    // A window the settings give themselves is still checked.
    let o = splitbrain(&[
        "run",
        file,
        "--set",
        "duration=1.2s",
        "--set",
        "chart.to=2s",
    ]);
    assert_eq!(code(&o), 2);
}

/// Regression (new-user pass): a file of bully nodes with neither `check` nor `expect` (or
/// `"check": []` and `"expect": {}`) was checked against every invariant: `run` and `check`
/// reported 8 MISMATCHes from invariants about locks, writes and Raft that no bully run can
/// meet, and `sweep` matched on no seed. It checks the invariants its roles can apply to.
#[test]
fn a_file_naming_no_invariant_is_checked_only_against_what_its_roles_can_break() {
    let dir = tempfile::tempdir().unwrap();
    let bully = r#"{"splitbrain": 1, "name": "bully-only", "seed": 1, "duration": "12s",
        "nodes": {"n": {"role": "bully", "count": 5}},
        "faults": [{"at": "2s", "crash": "n5"}]CHECK}"#;
    for (name, check) in [
        ("absent.json", ""),
        ("empty.json", r#", "check": [], "expect": {}"#),
    ] {
        let f = dir.path().join(name);
        std::fs::write(&f, bully.replace("CHECK", check)).unwrap();
        let f = f.to_str().unwrap();
        let o = splitbrain(&["run", f]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(code(&o), 0, "{out}");
        let checked: Vec<&str> = out
            .lines()
            .filter(|l| l.ends_with(" ok") || l.ends_with("MISMATCH"))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert_eq!(
            checked,
            ["single_leader", "eventual_leader", "single_leader_per_term"],
            "{out}"
        );
        let o = splitbrain(&["check", f]);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stdout));
        let o = splitbrain(&["sweep", f, "--seeds", "0..4"]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(code(&o), 0, "{out}");
        assert!(out.contains("4 of 4 runs matched"), "{out}");
        assert!(!out.contains("lock_progress"), "{out}");
    }
}

/// Regression (new-user pass): `chart --from -1s` was read by clap as an unknown flag `-1`
/// ("unexpected argument '-1' found ... use '-- -1'"), and `--from=-1s` said only "expected a
/// duration like ...". A negative time reaches the parser, which says what a file's `"-1s"`
/// gets: "a duration cannot be negative".
#[test]
fn a_negative_time_on_the_command_line_is_named_as_negative() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let trace = trace.to_str().unwrap();
    let svg = dir.path().join("c.svg");
    let svg = svg.to_str().unwrap();
    let html = dir.path().join("v.html");
    let html = html.to_str().unwrap();
    assert_eq!(code(&splitbrain(&["run", LESSON, "--trace", trace])), 0);
    let negative = "a duration cannot be negative: \"-1s\"";
    for args in [
        vec!["chart", trace, "-o", svg, "--from", "-1s"],
        vec!["chart", trace, "-o", svg, "--from=-1s"],
        vec!["chart", trace, "-o", svg, "--to", "-1s"],
        vec!["view", trace, "-o", html, "--from", "-1s"],
        vec!["view", trace, "-o", html, "--to=-1s"],
        vec!["run", LESSON, "--chart", svg, "--from", "-1s"],
    ] {
        let o = splitbrain(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(negative), "{args:?}: {err}");
        assert!(!Path::new(svg).exists() && !Path::new(html).exists());
    }
    // The file reader's words for the same value.
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join(LESSON)).unwrap()).unwrap();
    v["chart"] = serde_json::json!({"from": "-1s", "to": "5s"});
    let f = dir.path().join("negative-window.json");
    std::fs::write(&f, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let o = splitbrain(&["run", f.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!("chart.from: {negative}")),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Regression (new-user pass): as `--from -1s` was, a negative number given to a numeric flag
/// was read by clap as an unknown flag (`--level -0.5`: "unexpected argument '-0' found ...
/// use '-- -0'"). Each reaches its parser, whose refusal names the flag and the value.
#[test]
fn a_negative_number_given_to_a_numeric_flag_is_refused_by_its_parser() {
    let bully = "scenarios/03-bully-partition-split-brain.json";
    let threshold = [
        "--find-threshold",
        "faults.0.at=1s..2s",
        "--invariant",
        "single_leader",
    ];
    let cases: [(Vec<&str>, &str); 8] = [
        (
            [
                &["sweep", bully, "--seeds", "0..2"][..],
                &threshold,
                &["--level", "-0.5"],
            ]
            .concat(),
            "--level -0.5 is not a rate in 0..=1",
        ),
        (
            [
                &["sweep", bully, "--seeds", "0..2"][..],
                &threshold,
                &["--steps", "-1"],
            ]
            .concat(),
            "invalid value '-1' for '--steps <N>'",
        ),
        (
            vec!["sweep", bully, "--seeds", "-1..5"],
            "invalid value '-1..5' for '--seeds <A..B>'",
        ),
        (
            vec!["sweep", bully, "--seeds", "0..2", "--jobs", "-1"],
            "invalid value '-1' for '--jobs <N>'",
        ),
        (
            vec!["sweep", bully, "--seeds", "0..2", "--show", "-1"],
            "invalid value '-1' for '--show <N>'",
        ),
        (
            vec![
                "compare",
                "scenarios/23-compare/lock-designs.compare.json",
                "--seeds",
                "-3..4",
            ],
            "invalid value '-3..4' for '--seeds <A..B>'",
        ),
        (
            vec!["coverage", "--seeds", "-1..3"],
            "invalid value '-1..3' for '--seeds <A..B>'",
        ),
        (
            vec!["shrink", bully, "--seed", "7", "--max-runs", "-5"],
            "invalid value '-5' for '--max-runs <N>'",
        ),
    ];
    for (args, said) in cases {
        let o = splitbrain(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    }
}

/// Regression: spaces around a duration (`"work_time": " 2s"`) or a seed range (`--seeds
/// " 0..3"`) were trimmed and accepted, while every other malformed value is refused; both
/// are refused now, located, with exit 2.
#[test]
fn spaces_in_a_duration_or_a_seed_range_are_refused() {
    let text = std::fs::read_to_string(repo().join(LESSON)).unwrap();
    assert!(text.contains("\"work_time\": \"2s\""));
    let dir = tempfile::tempdir().unwrap();
    for bad in [" 2s", "2s "] {
        let f = dir.path().join("s.json");
        std::fs::write(
            &f,
            text.replacen(
                "\"work_time\": \"2s\"",
                &format!("\"work_time\": \"{bad}\""),
                1,
            ),
        )
        .unwrap();
        let o = splitbrain(&["run", f.to_str().unwrap()]);
        assert_eq!(code(&o), 2, "{bad:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(
            err.contains("work_time: a duration has no spaces around it: write \"2s\""),
            "{err}"
        );
        assert!(err.contains("s.json:"), "located: {err}");
    }
    for bad in [" 0..3", "0..3 ", "0 ..3"] {
        let o = splitbrain(&["sweep", LESSON, "--seeds", bad]);
        assert_eq!(code(&o), 2, "{bad:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(
            err.contains("a seed range has no spaces: write `0..3`"),
            "{err}"
        );
    }
}

/// Regression: an error about a negative value dropped its minus sign: `--set
/// 'faults.1.by="-5000"'` (a clock step with no unit) said `duration "5000" has no unit`.
#[test]
fn an_error_about_a_negative_value_keeps_its_sign() {
    let o = splitbrain(&[
        "run",
        "scenarios/13-redlock-clock-step.json",
        "--set",
        r#"faults.1.by="-5000""#,
    ]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains(r#"faults[1].by: duration "-5000" has no unit: write "-5000ms", "-5000s""#),
        "{err}"
    );
}
