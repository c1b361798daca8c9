//! The CLI contract of `compare`: the table and its files do not depend on `--jobs`, bad
//! input is exit 2 with the reason, and `report` writes a page for a comparison manifest.

mod common;

use common::{code, repo, splitbrain};

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

const MANIFEST: &str = "scenarios/23-compare/lock-designs.compare.json";
const LEASE: &str = "scenarios/23-compare/lease-fencing.json";
const REDLOCK: &str = "scenarios/23-compare/redlock.json";

#[test]
fn the_table_and_its_files_are_the_same_for_any_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let run = |jobs: &str, out: &str| {
        let out = dir.path().join(out);
        let o = splitbrain(&[
            "compare",
            MANIFEST,
            "--seeds",
            "0..3",
            "--jobs",
            jobs,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code(&o), 0, "{}", text(&o.stderr));
        (text(&o.stdout), out)
    };
    let (one, d1) = run("1", "one");
    let (two, d2) = run("2", "two");
    let table = |s: &str| {
        s.lines()
            .skip_while(|l| !l.starts_with("runs (seeds)"))
            .take(9)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(table(&one), table(&two));
    assert!(one.contains("P(two accepted writers)") && one.contains("Raft + fencing"));
    for ext in ["json", "csv", "md", "svg", "png"] {
        let name = format!("compare-lock-designs.{ext}");
        let a = std::fs::read(d1.join(&name)).unwrap();
        assert!(!a.is_empty(), "{name}");
        assert_eq!(a, std::fs::read(d2.join(&name)).unwrap(), "{name}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d1.join("compare-lock-designs.json")).unwrap())
            .unwrap();
    assert_eq!(json["seeds"], "0..3");
    assert_eq!(json["rows"].as_array().unwrap().len(), 4);
    assert_eq!(json["rows"][0]["label"], "lease + fencing");
    assert_eq!(json["rows"][0]["runs"], 3);
    // Fencing: no stale write is ever accepted.
    assert_eq!(json["rows"][0]["two_accepted_writers"]["k"], 0);
    assert_eq!(json["rows"][3]["two_accepted_writers"]["k"], 0);
    // Idempotent work: no job takes effect twice.
    assert_eq!(json["rows"][2]["duplicate_effect"]["k"], 0);
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&d1)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".splitbrain-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn scenario_files_take_labels_and_print_the_table() {
    let o = splitbrain(&[
        "compare", LEASE, REDLOCK, "--seeds", "0..2", "--label", "L", "--label", "R",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with('L') && l.trim_end().ends_with('R'))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(header.starts_with(' '));
    assert!(out.contains("Wilson score"), "{out}");
}

#[test]
fn bad_input_is_exit_2_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.compare.json");
    std::fs::write(
        &broken,
        "{\n  \"splitbrain_compare\": 1,\n  \"name\": \"x\",\n  \"title\": \"x\",\n  \"lesson\": \"x\",\n  \"seeds\": \"0..2\",\n  \"desings\": []\n}\n",
    )
    .unwrap();
    let one = dir.path().join("one.compare.json");
    std::fs::write(
        &one,
        format!(
            r#"{{"splitbrain_compare": 1, "name": "x", "title": "x", "lesson": "x", "seeds": "0..2",
               "designs": [{{"file": "{}", "label": "a"}}]}}"#,
            repo().join(LEASE).display()
        ),
    )
    .unwrap();
    // Regression (fresh-user pass): a manifest named "../evil" wrote its five files one
    // folder above `-o DIR`, and an empty label headed a blank column.
    let manifest = |name: &str, label: &str| {
        format!(
            r#"{{"splitbrain_compare": 1, "name": "{name}", "title": "x", "lesson": "x", "seeds": "0..2",
               "designs": [{{"file": "{}", "label": "{label}"}}, {{"file": "{}", "label": "b"}}]}}"#,
            repo().join(LEASE).display(),
            repo().join(REDLOCK).display()
        )
    };
    let escape = dir.path().join("escape.compare.json");
    std::fs::write(&escape, manifest("../evil", "a")).unwrap();
    let blank = dir.path().join("blank.compare.json");
    std::fs::write(&blank, manifest("x", " ")).unwrap();
    let out = dir.path().join("out");
    let escape_out = splitbrain(&[
        "compare",
        escape.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&escape_out), 2, "{}", text(&escape_out.stderr));
    assert!(!dir.path().join("evil.json").exists());
    // Regression (new-user pass): `"seeds": 5` said only "expected a string".
    let number = dir.path().join("number.compare.json");
    std::fs::write(
        &number,
        "{\"splitbrain_compare\": 1, \"name\": \"x\", \"title\": \"x\", \"lesson\": \"x\",\n \"seeds\": 5, \"designs\": []}\n",
    )
    .unwrap();
    let number = number.to_str().unwrap();
    let broken = broken.to_str().unwrap();
    let one = one.to_str().unwrap();
    let escape = escape.to_str().unwrap();
    let blank = blank.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["compare", LEASE, "--seeds", "0..2"], "two or more"),
        // Regression (new-user pass): one file without the suffix said only "needs two or
        // more scenario files", even when the file was a manifest.
        (
            vec!["compare", LEASE, "--seeds", "0..2"],
            "lease-fencing.json: one scenario file is one design",
        ),
        (
            vec!["compare", "tests/broken/manifest-without-suffix.json"],
            "tests/broken/manifest-without-suffix.json: this is a comparison manifest, but its \
             file name does not end in .compare.json, so it would be read as a scenario: rename \
             it manifest-without-suffix.compare.json",
        ),
        (
            vec![
                "compare",
                LEASE,
                "tests/broken/manifest-without-suffix.json",
                "--seeds",
                "0..2",
            ],
            "rename it manifest-without-suffix.compare.json",
        ),
        (vec!["compare", LEASE, REDLOCK], "--seeds A..B is required"),
        (
            vec!["compare", LEASE, REDLOCK, "--seeds", "0..2", "--label", "a"],
            "1 --label for 2 scenario files",
        ),
        (
            vec!["compare", LEASE, LEASE, "--seeds", "0..2"],
            "two designs are labelled",
        ),
        (
            vec![
                "compare", LEASE, REDLOCK, "--seeds", "0..2", "--label", "a", "--label", " ",
            ],
            "a label cannot be empty",
        ),
        (
            vec!["compare", LEASE, "nope.json", "--seeds", "0..2"],
            "nope.json: no such file",
        ),
        (vec!["compare", MANIFEST, LEASE], "not both"),
        (vec!["compare", broken], "broken.compare.json:7:"),
        (
            vec!["compare", number],
            "number.compare.json:2:11: seeds: expected a seed range as a string in quotes: \
             \"0..5\" (5 seeds, 0 to 4), \"0..=5\" (0 to 5 included) or \"5\" (seed 5 alone); \
             found the integer 5",
        ),
        (
            vec!["compare", one],
            "designs: a comparison needs at least two designs",
        ),
        (
            vec!["compare", escape],
            "name: comparison name \"../evil\" may use only",
        ),
        (
            vec!["compare", blank],
            "designs[0].label: a label cannot be empty",
        ),
        (vec!["compare", LEASE, REDLOCK, "--seeds", "5..5"], "empty"),
        (
            vec!["compare", LEASE, REDLOCK, "--seeds", "0..2", "--jobs", "0"],
            "--jobs must be at least 1",
        ),
    ];
    for (args, want) in cases {
        let o = splitbrain(&args);
        let err = text(&o.stderr);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// Regression (new-user pass): a manifest's rule errors had no line and column
/// (`x.compare.json: designs.1.label: ...`), a missing design file named neither the manifest
/// nor its field (`nope.json: cannot read the scenario`), serde's location was printed twice
/// (`:10:1: .: missing field `title` at line 10 column 1`), the required fields were not named,
/// and text after the closing brace was ignored.
#[test]
fn manifest_errors_are_located_like_scenario_errors() {
    let dir = tempfile::tempdir().unwrap();
    for f in [LEASE, REDLOCK] {
        let name = std::path::Path::new(f).file_name().unwrap();
        std::fs::copy(repo().join(f), dir.path().join(name)).unwrap();
    }
    let good = r#"{
  "splitbrain_compare": 1,
  "name": "x",
  "title": "x",
  "lesson": "x",
  "seeds": "0..2",
  "designs": [
    { "file": "lease-fencing.json", "label": "a" },
    { "file": "redlock.json", "label": "b" }
  ]
}
"#;
    let nope = dir.path().join("nope.json");
    let cases = [
        (
            "blank",
            good.replace(r#""label": "b""#, r#""label": " ""#),
            ":9:40: designs[1].label: a label cannot be empty: it heads the design's column"
                .to_string(),
        ),
        (
            "twice",
            good.replace(r#""label": "b""#, r#""label": "a""#),
            ":9:40: designs[1].label: the label \"a\" is used twice (designs[0] has it): each \
             design's column needs its own"
                .to_string(),
        ),
        (
            "missing",
            good.replace("redlock.json", "nope.json"),
            format!(
                ":9:15: designs[1].file: cannot read the design's scenario {}: no such file (a \
                 design's file is relative to the manifest's folder)",
                nope.display()
            ),
        ),
        (
            "untitled",
            good.replace("  \"title\": \"x\",\n", ""),
            ":10:1: (root): missing field `title`: a comparison manifest needs \
             `splitbrain_compare` (1), `name`, `title`, `lesson`, `seeds` and `designs` (each \
             `{\"file\", \"label\"}`); `description` and `differ_on_purpose` are optional (see \
             docs/compare-manifest.md)"
                .to_string(),
        ),
        (
            "format",
            good.replace("\"splitbrain_compare\": 1", "\"splitbrain_compare\": 2"),
            ":2:25: splitbrain_compare: format 2 is not known: expected 1".to_string(),
        ),
        (
            "seeds",
            good.replace("0..2", "0..x"),
            ":6:12: seeds: expected a seed range like 0..10000 (end excluded), 0..=9999 (end \
             included) or one seed, found `0..x`"
                .to_string(),
        ),
        (
            "typo",
            good.replace(r#""label": "b""#, r#""lable": "b""#),
            ":9:40: designs[1].lable: unknown field `lable`, expected `file` or `label`; did you \
             mean `label`?"
                .to_string(),
        ),
        (
            "trailing",
            format!("{good}}}\n"),
            ":12:1: (after the comparison manifest): unexpected text after the comparison \
             manifest's closing brace: a file holds one JSON object"
                .to_string(),
        ),
    ];
    for (name, body, want) in cases {
        let path = dir.path().join(format!("{name}.compare.json"));
        std::fs::write(&path, body).unwrap();
        let o = splitbrain(&["compare", path.to_str().unwrap()]);
        let err = text(&o.stderr);
        assert_eq!(code(&o), 2, "{name}: {err}");
        assert_eq!(
            err.lines().next().unwrap_or(""),
            format!("error: {}{want}", path.display()),
            "{name}"
        );
        assert!(o.stdout.is_empty(), "{name}: nothing ran");
    }
    // A design whose scenario is invalid: the scenario's located error, then where the
    // manifest names it.
    std::fs::copy(
        repo().join("tests/broken/zero-ttl.json"),
        dir.path().join("zero-ttl.json"),
    )
    .unwrap();
    let path = dir.path().join("invalid.compare.json");
    std::fs::write(&path, good.replace("redlock.json", "zero-ttl.json")).unwrap();
    let o = splitbrain(&["compare", path.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        text(&o.stderr),
        format!(
            "error: {}:18:14: nodes.client-1.ttl: ttl must be greater than zero\n  (named by \
             {}:9:15: designs[1].file)\n",
            dir.path().join("zero-ttl.json").display(),
            path.display()
        )
    );
}

#[test]
fn report_writes_a_page_per_comparison_manifest_and_check_skips_it() {
    let dir = tempfile::tempdir().unwrap();
    let lessons = dir.path().join("lessons");
    std::fs::create_dir_all(&lessons).unwrap();
    std::fs::copy(
        repo().join("scenarios/02-bully-worst-case.json"),
        lessons.join("02.json"),
    )
    .unwrap();
    std::fs::write(
        lessons.join("two.compare.json"),
        format!(
            r#"{{"splitbrain_compare": 1, "name": "two-designs", "title": "Two designs",
               "lesson": "What two designs show.", "seeds": "0..2",
               "designs": [{{"file": "{}", "label": "lease"}}, {{"file": "{}", "label": "redlock"}}]}}"#,
            repo().join(LEASE).display(),
            repo().join(REDLOCK).display()
        ),
    )
    .unwrap();
    let o = splitbrain(&["check", lessons.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}{}", text(&o.stdout), text(&o.stderr));
    let out = dir.path().join("out");
    let o = splitbrain(&[
        "report",
        lessons.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}{}", text(&o.stdout), text(&o.stderr));
    let page = std::fs::read_to_string(out.join("two-designs.md")).unwrap();
    assert!(page.starts_with("# Two designs\n\nWhat two designs show."));
    assert!(page.contains("| measure | lease | redlock |"), "{page}");
    assert!(page.contains("## What they do not mean"));
    assert!(page.contains("![comparison chart](two-designs.svg)"));
    assert!(out.join("two-designs.svg").exists() && out.join("two-designs.csv").exists());
    let index = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(index.contains("## Comparisons") && index.contains("[Two designs](two-designs.md)"));
}

/// Regression: a design that is not a lock design (a bully election) was measured and showed
/// "P(two accepted writers) 0.0%", a vacuous zero passing for safety. It is refused, exit 2,
/// before any run: given as a file, and named by a manifest (located at its `file`).
#[test]
fn a_design_without_a_lock_client_is_refused() {
    let bully = "scenarios/01-bully-leader-crash.json";
    let o = splitbrain(&["compare", bully, REDLOCK, "--seeds", "0..2"]);
    assert_eq!(code(&o), 2, "{}", text(&o.stdout));
    assert!(o.stdout.is_empty(), "nothing runs: {}", text(&o.stdout));
    assert_eq!(
        text(&o.stderr),
        format!(
            "error: {bully} is not a lock design: it has no lock client (no node with \"role\": \
             \"worker\" or \"lease_leader\"), so it acquires no lock and writes nothing, and its \
             rates would be zeros that show nothing\n"
        )
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(repo().join(REDLOCK), dir.path().join("redlock.json")).unwrap();
    std::fs::copy(repo().join(bully), dir.path().join("bully.json")).unwrap();
    let manifest = dir.path().join("m.compare.json");
    std::fs::write(
        &manifest,
        r#"{"splitbrain_compare": 1, "name": "m", "title": "t", "lesson": "l", "seeds": "0..2",
  "designs": [{"file": "redlock.json", "label": "a"}, {"file": "bully.json", "label": "b"}]}"#,
    )
    .unwrap();
    let m = manifest.to_str().unwrap();
    let o = splitbrain(&["compare", m]);
    assert_eq!(code(&o), 2);
    let err = text(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "error: {m}:2:64: designs[1].file: the design's scenario {} is not a lock design",
            dir.path().join("bully.json").display()
        )),
        "{err}"
    );
}

/// A user's report: a `lease_leader` design (README lists it as a lock client, and a writer
/// with `write_to`) was refused as "not a lock design". It is measured.
#[test]
fn a_lease_leader_design_is_a_lock_design() {
    // The two files share nothing beyond being lock designs: a manifest says so.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(repo().join(REDLOCK), dir.path().join("redlock.json")).unwrap();
    std::fs::copy(
        repo().join("scenarios/04-lease-leader-failover.json"),
        dir.path().join("leaders.json"),
    )
    .unwrap();
    let manifest = dir.path().join("m.compare.json");
    std::fs::write(
        &manifest,
        r#"{"splitbrain_compare": 1, "name": "m", "title": "t", "lesson": "l", "seeds": "0..2",
  "differ_on_purpose": ["duration", "network", "nemesis", "faults", "workload"],
  "designs": [{"file": "leaders.json", "label": "lease-leader-failover"},
              {"file": "redlock.json", "label": "r"}]}"#,
    )
    .unwrap();
    let o = splitbrain(&["compare", manifest.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(
        !text(&o.stderr).contains("not a lock design"),
        "{}",
        text(&o.stderr)
    );
    assert!(
        text(&o.stdout).contains("lease-leader-failover"),
        "{}",
        text(&o.stdout)
    );
}

/// Regression (new-user pass): the number of designs had no limit; a manifest's is 100, and
/// scenario files on the command line are held to it too (exit 2, before anything runs).
#[test]
fn more_designs_than_the_limit_are_refused() {
    let mut args = vec!["compare"];
    args.extend(std::iter::repeat(LEASE).take(101));
    args.extend(["--seeds", "0..2"]);
    let o = splitbrain(&args);
    assert_eq!(code(&o), 2);
    assert!(
        text(&o.stderr).contains("101 scenario files: a comparison takes at most 100 designs"),
        "{}",
        text(&o.stderr)
    );
}

/// Regression: `compare` accepted designs whose nemesis, workload or network differed (a 2 s
/// vs 5 s nemesis, 3 vs 5 workers) without a word, and the page said "same workload and
/// nemesis". Scenario files that differ there are refused (exit 2, saying what differs); a
/// manifest refuses them at the design's `file` unless `differ_on_purpose` names the part,
/// and then the output and the page say what differs.
#[test]
fn designs_that_differ_beyond_the_lock_are_refused_unless_the_manifest_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "lease-fencing.json",
        "redlock.json",
        "redlock-idempotent.json",
        "raft-fencing.json",
    ] {
        std::fs::copy(
            repo().join("scenarios/23-compare").join(f),
            dir.path().join(f),
        )
        .unwrap();
    }
    let redlock = dir.path().join("redlock.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&redlock).unwrap()).unwrap();
    v["nemesis"]["mean_interval"] = "5s".into();
    v["nodes"]["client"]["count"] = 5.into();
    std::fs::write(&redlock, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let lease = dir.path().join("lease-fencing.json");
    let o = splitbrain(&[
        "compare",
        lease.to_str().unwrap(),
        redlock.to_str().unwrap(),
        "--seeds",
        "0..2",
    ]);
    assert_eq!(code(&o), 2);
    let err = text(&o.stderr);
    assert!(
        err.contains(r#"compare-redlock differs from compare-lease-fencing in nemesis: nemesis.mean_interval: "2s" vs "5s""#),
        "{err}"
    );
    assert!(
        err.contains("in workload: 3 lock clients (client1, client2, client3) vs 5 (client1, client2, client3, client4, client5)"),
        "{err}"
    );
    assert!(
        err.contains(r#""differ_on_purpose": ["nemesis", "workload"]"#),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "nothing ran");

    let manifest = std::fs::read_to_string(repo().join(MANIFEST)).unwrap();
    let m = dir.path().join("m.compare.json");
    std::fs::write(&m, &manifest).unwrap();
    let o = splitbrain(&["compare", m.to_str().unwrap(), "--seeds", "0..2"]);
    assert_eq!(code(&o), 2);
    let err = text(&o.stderr);
    assert!(
        err.contains(":10:15: designs[1].file: the design's scenario "),
        "{err}"
    );
    assert!(
        err.contains(r#"say so with "differ_on_purpose": ["nemesis"]"#),
        "{err}"
    );

    let allowed = manifest.replacen(
        "\"seeds\":",
        "\"differ_on_purpose\": [\"nemesis\", \"workload\"],\n  \"seeds\":",
        1,
    );
    std::fs::write(&m, &allowed).unwrap();
    let out = dir.path().join("out");
    let o = splitbrain(&[
        "compare",
        m.to_str().unwrap(),
        "--seeds",
        "0..2",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("differs   Redlock differs from lease + fencing in nemesis"),
        "{}",
        text(&o.stdout)
    );
    let page = std::fs::read_to_string(out.join("compare-lock-designs.md")).unwrap();
    assert!(!page.contains("same workload and nemesis"), "{page}");
    assert!(
        page.contains("What differs besides the lock, on purpose:"),
        "{page}"
    );
    // A part named but not differing, or not a part, is refused where it is named.
    let stale = manifest.replacen(
        "\"seeds\":",
        "\"differ_on_purpose\": [\"network\"],\n  \"seeds\":",
        1,
    );
    let same = dir.path().join("same.compare.json");
    std::fs::write(
        &same,
        stale.replace("redlock.json", "redlock-idempotent.json"),
    )
    .unwrap();
    let o = splitbrain(&["compare", same.to_str().unwrap(), "--seeds", "0..2"]);
    assert_eq!(code(&o), 2);
    assert!(
        text(&o.stderr).contains("differ_on_purpose[0]: the designs do not differ in `network`"),
        "{}",
        text(&o.stderr)
    );
    // The lesson's own manifest shares everything, and its page says so.
    let o = splitbrain(&["compare", MANIFEST, "--seeds", "0..1"]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains("differs "));
}
