//! `splitbrain migrate`: a format 1 lesson rewritten in place or into OUT, running as before
//! (same trace hash); a current file left as it is; a file that cannot be migrated is exit 2
//! with its located problem and leaves no output.

mod common;

use common::{code, repo, splitbrain};

const V1: &str = "tests/format/v1/03-bully-partition-split-brain.json";

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The trace hash `run` prints for `file` at its own seed.
fn hash_of(file: &str) -> String {
    let o = splitbrain(&["run", file]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    let line = out.lines().find(|l| l.starts_with("trace")).unwrap();
    line.rsplit(' ').next().unwrap().to_string()
}

#[test]
fn a_format_1_file_is_migrated_in_place_and_runs_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("old.json");
    std::fs::copy(repo().join(V1), &file).unwrap();
    let f = file.to_str().unwrap();
    let before = hash_of(f);
    let o = splitbrain(&["migrate", f]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("format 1 -> 2"), "{}", stdout(&o));
    assert!(stdout(&o).contains("note      nodes.n: "), "{}", stdout(&o));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"splitbrain\": 2"), "{text}");
    assert!(text.contains("\"answer_at_timeout\": \"late\""), "{text}");
    assert_eq!(hash_of(f), before);
    // Current now: a second migrate leaves it as it is.
    let o = splitbrain(&["migrate", f]);
    assert_eq!(code(&o), 0);
    assert!(
        stdout(&o).contains("already format 2; unchanged"),
        "{}",
        stdout(&o)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn migrate_writes_into_out_and_leaves_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sub/new.json");
    let o = splitbrain(&["migrate", V1, "-o", out.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(hash_of(out.to_str().unwrap()), hash_of(V1));
    let input = std::fs::read_to_string(repo().join(V1)).unwrap();
    assert!(input.contains("\"splitbrain\": 1"));
}

#[test]
fn a_file_that_cannot_be_migrated_is_exit_2_located_with_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        "{\"splitbrain\": 1, \"name\": \"x\", \"duration\": \"1s\",\n\"nodes\": {\"n\": {\"role\": \"bully\", \"cuont\": 2}}}\n",
    )
    .unwrap();
    let out = dir.path().join("out.json");
    let o = splitbrain(&[
        "migrate",
        bad.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.json:2:"), "{err}");
    assert!(err.contains("cuont"), "{err}");
    assert!(!out.exists());
}
