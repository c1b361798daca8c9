//! Replay: every lesson's trace replays identically; an altered trace is caught at the first
//! altered event; a trace of another format is refused with a clear error.

use splitbrain_engine::{Divergence, Recorder};
use splitbrain_scenario::replay::{replay, ReplayError};
use splitbrain_scenario::TraceFileError;
use splitbrain_scenario::{execute, load_file, TraceHeader};
use std::path::{Path, PathBuf};

fn lessons() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

/// The trace `splitbrain run FILE --trace` writes: header line, then one event a line.
fn trace_of(path: &Path) -> (String, u64, u64) {
    let plan = load_file(path).unwrap();
    let seed = plan.scenario.seed;
    let r = execute(&plan, seed, Some(Recorder::hash_only().keep_lines())).unwrap();
    let t = r.trace.unwrap();
    let mut text = TraceHeader::new(&plan, seed).line();
    text.push('\n');
    for l in t.lines.unwrap() {
        text.push_str(&l);
        text.push('\n');
    }
    (text, t.events, t.hash)
}

#[test]
fn every_lesson_trace_replays_identically() {
    let files = lessons();
    assert!(files.len() >= 8);
    for f in files {
        let (text, events, hash) = trace_of(&f);
        let r = replay(&f.display().to_string(), &text).unwrap();
        assert!(
            r.divergence.is_none(),
            "{}: {:?}",
            f.display(),
            r.divergence
        );
        assert_eq!(
            (r.replayed_events, r.hash),
            (events, hash),
            "{}",
            f.display()
        );
        assert_eq!(r.recorded_events as u64, events);
        assert!(r.other_version.is_none());
        assert_eq!(r.header_edited, None, "{}", f.display());
    }
}

#[test]
fn an_altered_trace_is_caught_at_the_first_altered_event() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/03-bully-partition-split-brain.json");
    let (text, events, _) = trace_of(&f);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Event 100 is line 101 (line 0 is the header): move it one nanosecond later.
    let original = lines[101].clone();
    let v: serde_json::Value = serde_json::from_str(&original).unwrap();
    let t = v["t"].as_u64().unwrap();
    lines[101] = original.replacen(&format!("\"t\":{t}"), &format!("\"t\":{}", t + 1), 1);
    assert_ne!(lines[101], original);
    // Also damage a later event: only the first difference is reported.
    lines[300] = lines[300].replace("\"ev\"", "\"ev\" ");
    let r = replay("altered.jsonl", &(lines.join("\n") + "\n")).unwrap();
    match r.divergence {
        Some(Divergence::Event {
            index,
            first,
            second,
        }) => {
            assert_eq!(index, 100);
            assert_eq!(first.as_deref(), Some(lines[101].as_str()));
            assert_eq!(second.as_deref(), Some(original.as_str()));
        }
        other => panic!("expected a divergence at event 100, got {other:?}"),
    }

    // A truncated trace (no closing `end` record) is refused, naming its last line.
    let cut: Vec<&str> = text.lines().take(51).collect();
    let err = replay("truncated.jsonl", &(cut.join("\n") + "\n")).unwrap_err();
    assert!(
        matches!(
            err,
            ReplayError::Trace {
                source: TraceFileError::Truncated { line: 51 },
                ..
            }
        ),
        "{err}"
    );
    let _ = events;
}

#[test]
fn traces_of_another_format_or_not_traces_are_refused() {
    let f =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/05-lease-gc-pause-unfenced.json");
    let (text, _, _) = trace_of(&f);
    let future = text.replacen("\"splitbrain_trace\":1", "\"splitbrain_trace\":2", 1);
    let err = replay("future.jsonl", &future).unwrap_err();
    assert!(matches!(
        err,
        ReplayError::Trace {
            source: TraceFileError::Incompatible { found: 2, .. },
            ..
        }
    ));
    assert!(
        err.to_string().contains("reads trace format 1 only"),
        "{err}"
    );
    let err = replay("x.jsonl", "{\"hello\": 1}\n").unwrap_err();
    assert!(
        matches!(
            err,
            ReplayError::Trace {
                source: TraceFileError::NotATrace { line: 1, .. },
                ..
            }
        ),
        "{err}"
    );
    assert!(matches!(
        replay("e.jsonl", "").unwrap_err(),
        ReplayError::Trace {
            source: TraceFileError::Empty,
            ..
        }
    ));
    // Another splitbrain version of the same format replays, with a note.
    let older = text.replacen("\"version\":\"0.1.0\"", "\"version\":\"0.0.9\"", 1);
    let r = replay("older.jsonl", &older).unwrap();
    assert!(r.divergence.is_none());
    assert_eq!(r.other_version.as_deref(), Some("0.0.9"));
}
