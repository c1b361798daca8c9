//! Reviewed snapshots of each lesson's summary and the start of its narration.

use splitbrain_engine::Recorder;
use splitbrain_report::{derived_facts, narrate, summary_text, NarrationOptions};
use splitbrain_scenario::{execute, load_file};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn lesson_summaries_and_narrations() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for f in files {
        let stem = f.file_stem().unwrap().to_str().unwrap().to_string();
        let rel = format!("scenarios/{stem}.json");
        let plan = load_file(&f).unwrap();
        let r = execute(
            &plan,
            plan.scenario.seed,
            Some(Recorder::hash_only().keep_events()),
        )
        .unwrap();
        let events = r.trace.as_ref().and_then(|t| t.kept.as_deref()).unwrap();
        let opts = NarrationOptions {
            // Raft's replication traffic too (heartbeats are empty AppendEntries).
            hide_kinds: vec![
                "HEARTBEAT".into(),
                "APPEND_ENTRIES".into(),
                "APPEND_ACK".into(),
            ],
            max_lines: Some(40),
            facts: derived_facts(&r.record),
            effects: r.record.fault_effects.clone(),
            ..Default::default()
        };
        let story = narrate(&r.record.names, events, &opts);
        let text = format!(
            "{}\n--- narration (first 40 lines, heartbeats hidden) ---\n{story}",
            summary_text(&r, &rel, &[], plan.scenario.lesson.as_deref())
        );
        insta::assert_snapshot!(stem, text);
    }
}
