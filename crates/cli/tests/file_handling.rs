//! Regressions from a new-user pass over the CLI's file handling: outputs never replace what
//! is not a regular file, never an input nor each other; non-regular inputs are refused before
//! they are opened; an empty folder does not pass `check`; the largest seed can be swept; a
//! huge `--vary` grid is refused up front.

mod common;

use common::{code, repo, splitbrain};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const LESSON: &str = "scenarios/06-lease-gc-pause-fenced.json";
const SWEPT: &str = "scenarios/03-bully-partition-split-brain.json";

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A copy of the lesson in `dir`, as `name`.
fn scenario_in(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::copy(repo().join(LESSON), &p).unwrap();
    p
}

/// Makes a FIFO at `p` with the system's `mkfifo`; false when there is none (the test skips).
fn mkfifo(p: &Path) -> bool {
    Command::new("mkfifo")
        .arg(p)
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `splitbrain ARGS`, killed after 60 s: a FIFO input used to block the read forever.
fn splitbrain_or_hang(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_splitbrain"))
        .args(args)
        .current_dir(repo())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Polls, 1200 x 50 ms (the OS clock is banned by clippy.toml).
    let mut polls = 0;
    while child.try_wait().unwrap().is_none() {
        polls += 1;
        if polls > 1200 {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("splitbrain {args:?} hung (still running after 60 s)");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// Regression: `run s.json --trace s.json` overwrote the scenario, and `--trace X --chart X`
/// kept only one of the two outputs; both are refused before the run, with exit 2.
#[test]
fn an_output_that_is_an_input_or_another_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario_in(dir.path(), "s.json");
    let before = std::fs::read(&s).unwrap();
    let sp = s.to_str().unwrap();
    let o = splitbrain(&["run", sp, "--trace", sp]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "cannot write {sp}: --trace is the same file as the input {sp}"
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&s).unwrap(), before, "the scenario survives");
    assert!(stdout(&o).is_empty(), "nothing ran");

    // The same file by another spelling (`sub/../s.json`) is the same file.
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let other = dir.path().join("sub/../s.json");
    let o = splitbrain(&["run", sp, "--view", other.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("is the same file as the input"));
    assert_eq!(std::fs::read(&s).unwrap(), before);

    let t = dir.path().join("t.svg");
    let tp = t.to_str().unwrap();
    let o = splitbrain(&["run", sp, "--trace", tp, "--chart", tp]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "cannot write {tp}: --trace and --chart name the same file"
        )),
        "{}",
        stderr(&o)
    );
    assert!(!t.exists(), "refused before anything was written");

    // `shrink -o` onto its own input and `sweep --out` onto the scenario are refused too.
    let o = splitbrain(&["shrink", sp, "-o", sp]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("is the same file as the input"));
    let o = splitbrain(&["sweep", sp, "--seeds", "0..2", "--out", sp]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("is the same file as the input"));
    assert_eq!(std::fs::read(&s).unwrap(), before);
}

/// Regression: a hard link to the scenario was not the scenario (`run s.json --trace
/// hard.jsonl` ran and exited 0), nor were two hard-linked outputs one file: files that
/// exist are compared by device and inode too, so both are refused with exit 2.
#[cfg(unix)]
#[test]
fn a_hard_link_to_an_input_or_another_output_is_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario_in(dir.path(), "s.json");
    let before = std::fs::read(&s).unwrap();
    let sp = s.to_str().unwrap();
    let hard = dir.path().join("hard.jsonl");
    std::fs::hard_link(&s, &hard).unwrap();
    let hp = hard.to_str().unwrap();
    let o = splitbrain(&["run", sp, "--trace", hp]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "cannot write {hp}: --trace is the same file as the input {sp}"
        )),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty(), "nothing ran");
    assert_eq!(std::fs::read(&s).unwrap(), before);
    let o = splitbrain(&["sweep", sp, "--seeds", "0..2", "--out", hp]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("is the same file as the input"));

    let t = dir.path().join("t.svg");
    std::fs::write(&t, "old").unwrap();
    let t2 = dir.path().join("t2.jsonl");
    std::fs::hard_link(&t, &t2).unwrap();
    let o = splitbrain(&[
        "run",
        sp,
        "--chart",
        t.to_str().unwrap(),
        "--trace",
        t2.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--trace and --chart name the same file"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&t).unwrap(), b"old");
}

/// Regression: a FIFO or socket at an output path was replaced by a plain file (as root,
/// `--trace /dev/full` turned the device into one). Refused with exit 2; it stays.
#[cfg(unix)]
#[test]
fn an_output_path_that_is_a_fifo_or_socket_is_refused_and_left_alone() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let s = scenario_in(dir.path(), "s.json");
    let sp = s.to_str().unwrap();

    let sock = dir.path().join("out.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let o = splitbrain(&["run", sp, "--trace", sock.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "cannot write {}: it is a socket, not a regular file",
            sock.display()
        )),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::symlink_metadata(&sock)
        .unwrap()
        .file_type()
        .is_socket());

    let fifo = dir.path().join("out.jsonl");
    if !mkfifo(&fifo) {
        eprintln!("skipped the FIFO case: no mkfifo");
        return;
    }
    let o = splitbrain(&["run", sp, "--trace", fifo.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("it is a FIFO (named pipe), not a regular file"),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    // A link to the FIFO is refused as well.
    let link = dir.path().join("link.svg");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let o = splitbrain(&["run", sp, "--chart", link.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("it is a symbolic link to") && stderr(&o).contains("a FIFO"),
        "{}",
        stderr(&o)
    );
}

/// Regression: `--trace link.jsonl` replaced the symbolic link with a regular file. The link
/// survives; its target gets the trace.
#[cfg(unix)]
#[test]
fn an_output_through_a_symlink_replaces_the_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario_in(dir.path(), "s.json");
    let sp = s.to_str().unwrap();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    let target = dir.path().join("real/trace.jsonl");
    std::fs::write(&target, "old\n").unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink("real/trace.jsonl", &link).unwrap();
    let o = splitbrain(&["run", sp, "--trace", link.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("real/trace.jsonl")
    );
    let written = std::fs::read_to_string(&target).unwrap();
    assert!(written.starts_with("{\""), "{written}");
    assert!(written.lines().count() > 10);
    let strays: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .chain(std::fs::read_dir(dir.path().join("real")).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(strays.is_empty(), "{strays:?}");

    // A link to the input is the input.
    let to_input = dir.path().join("input-link.jsonl");
    std::os::unix::fs::symlink(&s, &to_input).unwrap();
    let before = std::fs::read(&s).unwrap();
    let o = splitbrain(&["run", sp, "--trace", to_input.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("is the same file as the input"));
    assert_eq!(std::fs::read(&s).unwrap(), before);
}

/// Regression: a FIFO as input (`run x.json`, or `check DIR` with a FIFO named *.json) blocked
/// the read forever; so did `compare` and `coverage`, which skipped the per-command check
/// (the one JSON reader refuses it now). Refused before opening, with exit 2.
#[cfg(unix)]
#[test]
fn a_fifo_input_is_refused_instead_of_read_forever() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("x.json");
    if !mkfifo(&fifo) {
        eprintln!("skipped: no mkfifo");
        return;
    }
    let fp = fifo.to_str().unwrap();
    let s = scenario_in(dir.path(), "s.json");
    let sp = s.to_str().unwrap();
    // A manifest naming the FIFO as a design.
    let manifest = dir.path().join("m.compare.json");
    std::fs::write(
        &manifest,
        r#"{"splitbrain_compare": 1, "name": "m", "title": "t", "lesson": "l", "seeds": "0..2",
  "designs": [{"file": "s.json", "label": "a"}, {"file": "x.json", "label": "b"}]}"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let outp = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", fp], "the scenario"),
        (vec!["run", fp, "--set", "seed=1"], "the scenario"),
        (vec!["sweep", fp, "--seeds", "0..2"], "the scenario"),
        (vec!["shrink", fp], "the scenario"),
        (vec!["check", fp], "the scenario"),
        (vec!["report", fp, "-o", outp], "the scenario"),
        (vec!["compare", fp, sp, "--seeds", "0..2"], "the scenario"),
        (vec!["compare", sp, fp, "--seeds", "0..2"], "the scenario"),
        (vec!["replay", fp], "the trace"),
        (vec!["merge", fp, "-o", outp], "the results file"),
    ];
    for (args, what) in cases {
        let o = splitbrain_or_hang(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "{fp}: cannot read {what}: it is a FIFO (named pipe), not a regular file"
            )),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    let o = splitbrain_or_hang(&["compare", manifest.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "designs[1].file: cannot read the design's scenario {fp}: it is a FIFO (named pipe), \
             not a regular file"
        )),
        "{}",
        stderr(&o)
    );
    // A coverage folder holding it (made last: `check DIR` would find it).
    let cov = dir.path().join("cov");
    std::fs::create_dir_all(cov.join("safe")).unwrap();
    std::os::unix::fs::symlink(&fifo, cov.join("safe/x.json")).unwrap();
    let cp = cov.to_str().unwrap();
    let o = splitbrain_or_hang(&["coverage", cp, "--seeds", "0..2", "-o", outp]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "{cp}/safe/x.json: cannot read the scenario: it is a FIFO (named pipe), not a \
             regular file"
        )),
        "{}",
        stderr(&o)
    );
}

/// Regression: `check` of an empty (or mistyped, all-other-files) folder printed
/// `0 passed, 0 failed` and exited 0, so CI passed.
#[test]
fn check_of_a_folder_without_scenarios_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let dp = dir.path().to_str().unwrap();
    let o = splitbrain(&["check", dp]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert_eq!(
        stderr(&o),
        format!("error: {dp} holds no scenario files (*.json)\n")
    );
    std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
    let o = splitbrain(&["check", dp, LESSON]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(stderr(&o).contains("holds no scenario files"));
}

/// Regression: `sweep --seeds 18446744073709551615` said "a range can reach at most seed
/// 18446744073709551614" although `run --seed 18446744073709551615` ran.
#[test]
fn the_largest_seed_can_be_swept() {
    for (seeds, n) in [
        ("18446744073709551615", "1 seed,"),
        ("18446744073709551614..=18446744073709551615", "2 seeds,"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.jsonl");
        let o = splitbrain(&[
            "sweep",
            SWEPT,
            "--seeds",
            seeds,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(code(&o) == 0 || code(&o) == 1, "{seeds}: {}", stderr(&o));
        assert!(
            stdout(&o).contains(&format!(": {n}")),
            "{seeds}: {}",
            stdout(&o)
        );
        if n.starts_with("1 ") {
            assert!(stdout(&o).contains("1 seed, 1 job\n"), "{}", stdout(&o));
            assert!(stdout(&o).contains("speed     1 run in "), "{}", stdout(&o));
        }
        let results = std::fs::read_to_string(&out).unwrap();
        assert!(
            results.contains("\"seed\":18446744073709551615"),
            "{results}"
        );
        // The results file's range parses back: merge takes the one shard.
        let merged = dir.path().join("m.jsonl");
        let o = splitbrain(&[
            "merge",
            out.to_str().unwrap(),
            "-o",
            merged.to_str().unwrap(),
        ]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        // Regression: "1 seeds", "1 jobs", "merged 1 files".
        assert!(
            stdout(&o).contains(&format!("merged    1 file: {} run", &n[..1])),
            "{}",
            stdout(&o)
        );
        assert!(!stdout(&o).contains("1 files"), "{}", stdout(&o));
    }
}

/// Regression: the 10,000,000-run cap applied per seed range, so 16 `--vary` combinations
/// over 1,000,000 seeds built 16,000,000 jobs (and a larger grid aborted out of memory, exit
/// 134). The whole grid is counted up front.
#[test]
fn a_vary_grid_over_the_run_cap_is_refused_up_front() {
    let o = splitbrain(&[
        "sweep",
        SWEPT,
        "--seeds",
        "0..1000000",
        "--vary",
        "faults.1.at=2s,3s,4s,5s",
        "--vary",
        "nodes.n.failure_timeout=300ms,400ms,500ms,1s",
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "error: this sweep holds 16000000 runs (16 --vary combinations x 1000000 seeds): at \
         most 10000000 runs in one sweep; narrow --vary or --seeds\n"
    );
    // A grid whose combinations alone overflow u64 is refused by the count, not built.
    let values = (0..100)
        .map(|i| format!("{}ms", 300 + i))
        .collect::<Vec<_>>()
        .join(",");
    let vary = format!("nodes.n.failure_timeout={values}");
    let mut args = vec!["sweep", SWEPT, "--seeds", "0..2"];
    for _ in 0..10 {
        args.push("--vary");
        args.push(&vary);
    }
    let o = splitbrain(&args);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("this sweep holds more than 18446744073709551615 runs"),
        "{}",
        stderr(&o)
    );
}

/// Regression: the output checks of `run` and `sweep` were missing from the other commands
/// that write files. `compare -o d` next to a design named `d/compare.json` overwrote it with
/// the table; `coverage -o` onto a design overwrote it with the report; `report` wrote the page
/// of a scenario named `README` where the index then went, and met a FIFO among its outputs
/// only after writing the files before it. Each is refused with exit 2 before any run.
#[test]
fn compare_coverage_and_report_refuse_an_output_onto_an_input_or_another_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = scenario_in(d, "compare.json");
    let b = scenario_in(d, "b.json");
    let before = std::fs::read(&a).unwrap();
    let (ap, bp, dp) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        d.to_str().unwrap(),
    );
    let o = splitbrain(&[
        "compare", ap, bp, "--label", "a", "--label", "b", "--seeds", "0..2", "-o", dp,
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "cannot write {ap}: the table (JSON) is the same file as the input {ap} (an input)"
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&a).unwrap(), before);
    assert!(!d.join("compare.csv").exists(), "nothing written");

    let cov = d.join("cov");
    std::fs::create_dir_all(cov.join("safe")).unwrap();
    let design = cov.join("safe/lease-fenced.json");
    std::fs::copy(
        repo().join("tests/coverage/safe/lease-fenced.json"),
        &design,
    )
    .unwrap();
    let before = std::fs::read(&design).unwrap();
    let dsp = design.to_str().unwrap();
    let o = splitbrain(&[
        "coverage",
        cov.to_str().unwrap(),
        "--seeds",
        "0..2",
        "-o",
        dsp,
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "cannot write {dsp}: -o is the same file as the input {dsp} (a design)"
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&design).unwrap(), before);

    let readme = d.join("readme.json");
    let src = std::fs::read_to_string(&a).unwrap();
    let renamed = |name: &str| {
        let v: serde_json::Value = serde_json::from_str(&src).unwrap();
        let mut v = v;
        v["name"] = serde_json::Value::String(name.into());
        serde_json::to_string(&v).unwrap()
    };
    std::fs::write(&readme, renamed("README")).unwrap();
    let out = d.join("out");
    let outp = out.to_str().unwrap();
    let o = splitbrain(&["report", readme.to_str().unwrap(), "-o", outp]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "cannot write {outp}/README.md: the index and the page of \"README\""
        )),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists(), "nothing written");

    #[cfg(unix)]
    {
        let fifo_out = d.join("fifo-out");
        std::fs::create_dir_all(&fifo_out).unwrap();
        if !mkfifo(&fifo_out.join("f.md")) {
            eprintln!("skipped the FIFO case: no mkfifo");
            return;
        }
        let f = d.join("f.json");
        std::fs::write(&f, renamed("f")).unwrap();
        let fop = fifo_out.to_str().unwrap();
        let o = splitbrain_or_hang(&["report", f.to_str().unwrap(), "-o", fop]);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "cannot write {fop}/f.md: it is a FIFO (named pipe), not a regular file"
            )),
            "{}",
            stderr(&o)
        );
        assert!(
            !fifo_out.join("f.svg").exists(),
            "nothing written before the refusal"
        );
    }
}

/// Regression: a command refused with exit 2 after it started its outputs left their new
/// folders behind (`run --trace newdir1/t.jsonl --view bad.txt`, `sweep --vary` with a bad
/// value and `--out newdir3/r.jsonl`). Folders are made only for what is written.
#[test]
fn a_refused_command_leaves_no_new_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = |p: &str| dir.path().join(p).to_str().unwrap().to_string();
    let o = splitbrain(&[
        "run",
        LESSON,
        "--trace",
        &d("newdir1/deeper/t.jsonl"),
        "--view",
        &d("bad.txt"),
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let o = splitbrain(&[
        "sweep",
        LESSON,
        "--seeds",
        "0..3",
        "--vary",
        "nodes.client-1.ttl=abc",
        "--out",
        &d("newdir3/r.jsonl"),
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // A written output still gets its folders.
    let o = splitbrain(&["run", LESSON, "--trace", &d("newdir4/t.jsonl")]);
    assert!(code(&o) <= 1, "{}", stderr(&o));
    assert!(dir.path().join("newdir4/t.jsonl").is_file());
}

/// Regression (new-user pass): `sweep s.json --out /dev/stdout | cat` said "it is a symbolic
/// link to a file that does not exist"; stdout is a pipe (the link resolves to no path, but
/// to a FIFO), and that is what is said.
#[cfg(target_os = "linux")]
#[test]
fn an_output_onto_a_piped_stdout_says_it_is_a_pipe() {
    // `output()` gives the child a pipe as its stdout.
    let o = splitbrain(&["sweep", SWEPT, "--seeds", "0..2", "--out", "/dev/stdout"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "cannot write /dev/stdout: it is a symbolic link to a FIFO (named pipe), not a \
             regular file"
        ),
        "{}",
        stderr(&o)
    );
}

/// Regression: a trailing slash after a file (`splitbrain replay t.jsonl/`) said only the OS's
/// "Not a directory (os error 20)" (`check` and `compare` said "no such file", `coverage` "no
/// scenario files in safe/ or planted/"); every command taking a path now says which file is
/// in the way, in the words of the other read errors, exit 2.
#[test]
fn a_trailing_slash_after_a_file_is_said_in_words_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario_in(dir.path(), "s.json");
    let m = dir.path().join("m.compare.json");
    std::fs::copy(
        repo().join("scenarios/23-compare/lock-designs.compare.json"),
        &m,
    )
    .unwrap();
    let t = dir.path().join("t.jsonl");
    let r = dir.path().join("r.jsonl");
    let (s, m, t, r) = (
        s.to_str().unwrap(),
        m.to_str().unwrap(),
        t.to_str().unwrap(),
        r.to_str().unwrap(),
    );
    assert_eq!(code(&splitbrain(&["run", s, "--trace", t])), 0);
    assert_eq!(
        code(&splitbrain(&["sweep", s, "--seeds", "0..2", "--out", r])),
        0
    );
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (svg, html, json, merged, md, rep) = (
        out("c.svg"),
        out("v.html"),
        out("e.json"),
        out("m.jsonl"),
        out("c.md"),
        out("rep"),
    );
    let (s_, m_, t_, r_) = (
        format!("{s}/"),
        format!("{m}/"),
        format!("{t}/"),
        format!("{r}/"),
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", &s_], s),
        (vec!["check", &s_], s),
        (vec!["sweep", &s_, "--seeds", "1"], s),
        (vec!["shrink", &s_], s),
        (vec!["replay", &t_], t),
        (vec!["chart", &t_, "-o", &svg], t),
        (vec!["view", &t_, "-o", &html], t),
        (vec!["export", &t_, "-o", &json, "--format", "chrome"], t),
        (vec!["merge", &r_, "--out", &merged], r),
        (vec!["compare", &s_, s, "--seeds", "1"], s),
        (vec!["compare", &m_], m),
        (vec!["report", &s_, "-o", &rep], s),
        (vec!["coverage", &s_, "--out", &md], s),
    ];
    for (args, file) in cases {
        let o = splitbrain(&args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(
            err.contains(&format!(
                "{file} is a file, not a folder (the path ends in /)"
            )),
            "{args:?}: {err}"
        );
        assert!(!err.contains("os error"), "{args:?}: {err}");
    }
}

/// Regression: an output path ending in / (`sweep --out d/`) was not refused until the rename
/// at the end, after every seed had run, with the OS's "Not a directory (os error 20)" (found
/// by a new user: `sweep --seeds 0..300`, `coverage`, `shrink` did all their work first).
/// Every command whose output is a file refuses it before any work, in words, exit 2, and
/// leaves nothing behind (`chart` and `view` already refused it by its missing extension;
/// `compare -o` and `report -o` name folders).
#[test]
fn an_output_path_ending_in_a_slash_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario_in(dir.path(), "s.json");
    let t = dir.path().join("t.jsonl");
    let r = dir.path().join("r.jsonl");
    let (s, t, r) = (
        s.to_str().unwrap(),
        t.to_str().unwrap(),
        r.to_str().unwrap(),
    );
    assert_eq!(code(&splitbrain(&["run", s, "--trace", t])), 0);
    assert_eq!(
        code(&splitbrain(&["sweep", s, "--seeds", "0..2", "--out", r])),
        0
    );
    let before: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    let out = dir.path().join("out").to_str().unwrap().to_string() + "/";
    let deeper = dir.path().join("no/such").to_str().unwrap().to_string() + "/";
    let cov = repo().join("tests/coverage").to_str().unwrap().to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec!["run", s, "--trace", &out],
        vec!["run", s, "--trace", &deeper],
        vec!["sweep", s, "--seeds", "0..300", "--out", &out],
        vec!["shrink", s, "-o", &out],
        vec!["export", t, "-o", &out, "--format", "chrome"],
        vec!["merge", r, "--out", &out],
        vec!["coverage", &cov, "--seeds", "0..100", "--out", &out],
    ];
    for args in cases {
        let o = splitbrain(&args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(
            err.contains("the path ends in /, so it names a folder, not a file"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("os error"), "{args:?}: {err}");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            before.len(),
            "{args:?} left something behind"
        );
    }
}

/// Regression: `check DIR` read the table `compare -o DIR` wrote there as a scenario
/// ("INVALID ... unknown field `seeds`", exit 2). splitbrain's own JSON outputs found in a
/// folder (a `compare -o` table, a Chrome trace export, a `run --json` summary) are named and
/// skipped, as manifests are; a broken scenario is still INVALID, and a folder holding only
/// outputs is still "no scenario files".
#[test]
fn check_of_a_folder_skips_and_names_the_json_files_commands_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for f in ["lease-fencing.json", "raft-fencing.json"] {
        std::fs::copy(repo().join("scenarios/23-compare").join(f), d.join(f)).unwrap();
    }
    let ds = d.to_str().unwrap();
    let (a, b) = (d.join("lease-fencing.json"), d.join("raft-fencing.json"));
    let o = splitbrain(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--seeds",
        "0..2",
        "-o",
        ds,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let table = d.join("compare.json");
    assert!(table.is_file(), "compare -o wrote its JSON table");
    let o = splitbrain(&["run", a.to_str().unwrap(), "--json"]);
    std::fs::write(d.join("summary.json"), &o.stdout).unwrap();

    let o = splitbrain(&["check", ds]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(
        out.contains(&format!(
            "skipped   {}  [a comparison's results table (`splitbrain compare -o`): not a scenario]",
            table.display()
        )),
        "{out}"
    );
    assert!(
        out.contains("summary.json  [a run summary (`splitbrain run --json`)"),
        "{out}"
    );
    assert!(out.contains("2 passed, 0 failed"), "{out}");

    // A broken scenario is not an output: still INVALID, exit 2.
    std::fs::write(d.join("typo.json"), "{\"splitbrain\": 1, \"nmae\": \"x\"}").unwrap();
    let o = splitbrain(&["check", ds]);
    assert_eq!(code(&o), 2);
    assert!(stdout(&o).contains("INVALID"), "{}", stdout(&o));

    // Outputs only: nothing to check is still an error, saying what was skipped.
    let only = d.join("only");
    std::fs::create_dir(&only).unwrap();
    std::fs::copy(&table, only.join("t.json")).unwrap();
    let o = splitbrain(&["check", only.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("holds no scenario files (*.json) (1 JSON file(s) skipped"),
        "{}",
        stderr(&o)
    );
}

/// Regression (new-user pass): `check DIR` read a `sweep --out` results file named `*.json`
/// (JSON Lines: a header line, then a line per seed) as a broken scenario (INVALID, exit 2),
/// though it skips splitbrain's other outputs; and its summary line did not count the
/// skipped files.
#[test]
fn check_of_a_folder_skips_sweep_results_and_traces_and_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let lesson = d.join("01.json");
    std::fs::copy(repo().join("scenarios/01-bully-leader-crash.json"), &lesson).unwrap();
    let l = lesson.to_str().unwrap();
    let results = d.join("results.json");
    let o = splitbrain(&[
        "sweep",
        l,
        "--seeds",
        "0..3",
        "--out",
        results.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let trace = d.join("trace.json");
    let o = splitbrain(&["run", l, "--trace", trace.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = splitbrain(&["check", d.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(
        out.contains(
            "results.json  [a sweep's results (`splitbrain sweep --out`): not a scenario]"
        ),
        "{out}"
    );
    assert!(
        out.contains("trace.json  [a trace (`splitbrain run --trace`): not a scenario]"),
        "{out}"
    );
    assert!(
        out.contains("1 passed, 0 failed, 2 skipped (not scenarios)"),
        "{out}"
    );
}

/// Regression (data loss): an output path through a folder that did not exist yet
/// (`run s.json --trace newdir/../s.json`) was compared as given, so it passed the guard; the
/// tool then made `newdir` and `newdir/..` landed on the input, which became a trace. Every
/// command that writes now refuses it with exit 2 before any work, input unchanged.
#[test]
fn an_output_through_a_missing_folder_back_onto_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |rel: &str| d.join(rel).to_str().unwrap().to_string();
    let s = scenario_in(d, "s.json");
    let sp = p("s.json");
    let t = d.join("t.jsonl");
    let o = splitbrain(&["run", &sp, "--trace", t.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // The same trace under names a chart and a page would write.
    std::fs::copy(&t, d.join("t.svg")).unwrap();
    std::fs::copy(&t, d.join("t.html")).unwrap();
    // A scenario named like a page `report` writes, and a design `coverage` reads.
    let mut named_f: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&s).unwrap()).unwrap();
    named_f["name"] = "f".into();
    std::fs::write(d.join("f.md"), serde_json::to_string(&named_f).unwrap()).unwrap();
    std::fs::copy(&s, d.join("compare.json")).unwrap();
    std::fs::create_dir_all(d.join("cov/safe")).unwrap();
    std::fs::copy(
        repo().join("tests/coverage/safe/lease-fenced.json"),
        d.join("cov/safe/lease-fenced.json"),
    )
    .unwrap();

    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "run".into(),
                sp.clone(),
                "--trace".into(),
                p("nd1/../s.json"),
            ],
            "s.json",
        ),
        (
            vec![
                "sweep".into(),
                sp.clone(),
                "--seeds".into(),
                "0..3".into(),
                "--out".into(),
                p("nd2/../s.json"),
            ],
            "s.json",
        ),
        (
            vec!["shrink".into(), sp.clone(), "-o".into(), p("nd3/../s.json")],
            "s.json",
        ),
        (
            vec![
                "export".into(),
                p("t.jsonl"),
                "--format".into(),
                "chrome".into(),
                "-o".into(),
                p("nd4/../t.jsonl"),
            ],
            "t.jsonl",
        ),
        (
            vec!["chart".into(), p("t.svg"), "-o".into(), p("nd5/../t.svg")],
            "t.svg",
        ),
        (
            vec!["view".into(), p("t.html"), "-o".into(), p("nd6/../t.html")],
            "t.html",
        ),
        (
            vec!["report".into(), p("f.md"), "-o".into(), p("nd7/..")],
            "f.md",
        ),
        (
            vec![
                "compare".into(),
                p("compare.json"),
                sp.clone(),
                "--label".into(),
                "a".into(),
                "--label".into(),
                "b".into(),
                "--seeds".into(),
                "0..2".into(),
                "-o".into(),
                p("nd8/.."),
            ],
            "compare.json",
        ),
        (
            vec![
                "coverage".into(),
                p("cov"),
                "--seeds".into(),
                "0..2".into(),
                "-o".into(),
                p("nd9/../cov/safe/lease-fenced.json"),
            ],
            "cov/safe/lease-fenced.json",
        ),
    ];
    for (args, input) in &cases {
        let before = std::fs::read(d.join(input)).unwrap();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = splitbrain(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("is the same file as the input"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert_eq!(
            std::fs::read(d.join(input)).unwrap(),
            before,
            "{args:?} overwrote {input}"
        );
    }
    let made: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("nd"))
        .collect();
    assert!(made.is_empty(), "no folder left behind: {made:?}");

    // Two outputs naming one file through a missing folder.
    let q = p("q.svg");
    let o = splitbrain(&["run", &sp, "--trace", &q, "--chart", &p("qd/../q.svg")]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--trace and --chart name the same file"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("q.svg").exists() && !d.join("qd").exists());

    // A missing folder that is really walked into still works: `nd/x/../t2.jsonl` is `nd/t2.jsonl`.
    let o = splitbrain(&["run", &sp, "--trace", &p("ndok/x/../t2.jsonl")]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(d.join("ndok/t2.jsonl").is_file());
}

/// Regression (new-user pass): a FIFO named *.json inside a folder stopped the whole `check
/// DIR` (exit 2, one error, nothing checked). It is listed as INVALID, never opened, and the
/// rest is checked; the exit is still 2 (an invalid file). A FIFO named on the command line
/// is still refused up front (`a_fifo_input_is_refused_instead_of_read_forever`).
#[cfg(unix)]
#[test]
fn a_fifo_in_a_folder_is_listed_invalid_and_the_rest_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let chk = dir.path().join("chk");
    std::fs::create_dir(&chk).unwrap();
    let fifo = chk.join("fifo.json");
    if !mkfifo(&fifo) {
        eprintln!("skipped: no mkfifo");
        return;
    }
    let s = scenario_in(&chk, "s.json");
    let o = splitbrain_or_hang(&["check", chk.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(&format!(
            "INVALID   {fp}\n{fp}: cannot read the scenario: it is a FIFO (named pipe), not a \
             regular file",
            fp = fifo.display()
        )),
        "{out}"
    );
    assert!(out.contains(&format!("ok        {}", s.display())), "{out}");
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    assert!(out.contains("1 invalid scenario file(s)"), "{out}");
    // A folder holding only a FIFO is not "holds no scenario files": the FIFO is told.
    std::fs::remove_file(&s).unwrap();
    let o = splitbrain_or_hang(&["check", chk.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    assert!(
        stdout(&o).contains("it is a FIFO (named pipe)"),
        "{}",
        stdout(&o)
    );
}
