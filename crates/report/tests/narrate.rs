//! Narration tells what happened, not what a client believes happened (issue 10, section 4),
//! in the order it happened (issue 16: a follower's "accepts X as leader" comes after X's
//! claim when both happen at the same instant).

use splitbrain_engine::Recorder;
use splitbrain_report::{derived_facts, narrate, NarrationOptions};
use splitbrain_scenario::{execute, load_file};
use std::path::PathBuf;

fn story(file: &str) -> String {
    story_hiding(file, &[])
}

/// The narration of a lesson's own seed, without the message kinds in `hide`.
fn story_hiding(file: &str, hide: &[&str]) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(file);
    let plan = load_file(&path).unwrap();
    let r = execute(
        &plan,
        plan.scenario.seed,
        Some(Recorder::hash_only().keep_events()),
    )
    .unwrap();
    let events = r.trace.as_ref().unwrap().kept.as_deref().unwrap();
    let opts = NarrationOptions {
        facts: derived_facts(&r.record),
        hide_kinds: hide.iter().map(|k| k.to_string()).collect(),
        ..Default::default()
    };
    narrate(&r.record.names, events, &opts)
}

/// Lesson 07a: leader-a's LEASE_RENEW is dropped at 3.003 s and times out at 3.502 s; the
/// client carries on (`stop_on_renew_failure: false`). That is a failed renewal, not
/// "leader-a renews".
#[test]
fn a_renewal_that_timed_out_is_told_as_a_failed_renewal() {
    let s = story("07a-lease-renewal-ignored.json");
    assert!(
        s.contains(
            "3.502 s  leader-a's renewal of \"leader\" FAILED (its request timed out), but \
             leader-a carries on as if renewed: believes it valid until local 7.002 s"
        ),
        "{s}"
    );
    assert!(
        !s.contains("leader-a renews \"leader\", now valid until local 7.002 s"),
        "{s}"
    );
}

/// Lesson 09: a plain DEL removes another client's value; the story says whose.
#[test]
fn a_deleted_key_says_whose_value_it_held() {
    let s = story("09-redis-lock-plain-del.json");
    let deleted: Vec<&str> = s.lines().filter(|l| l.contains("lock deleted")).collect();
    assert!(!deleted.is_empty(), "{s}");
    for l in &deleted {
        assert!(l.contains("'s value ") || l.contains("(value "), "{l}");
    }
}

/// Regression: lesson 02 told four acceptances before the claim they accept.
#[test]
fn acceptances_of_a_leader_come_after_its_claim() {
    for lesson in [
        "02-bully-worst-case.json",
        "03-bully-partition-split-brain.json",
    ] {
        let text = story_hiding(lesson, &["HEARTBEAT"]);
        let mut claimed: Vec<String> = Vec::new();
        let mut accepts = 0;
        for line in text.lines() {
            if let Some(i) = line.find(" claims LEADERSHIP") {
                claimed.push(line[..i].split_whitespace().last().unwrap().to_string());
            }
            if let Some(rest) = line.split_once(" accepts ").map(|x| x.1) {
                let leader = rest.split_whitespace().next().unwrap();
                assert!(
                    claimed.iter().any(|c| c == leader),
                    "{lesson}: {line} before {leader} claims:\n{text}"
                );
                accepts += 1;
            }
        }
        assert!(accepts >= 4, "{lesson}");
    }
}

/// Regression: a fault that changed nothing was told as if it had: "n5 is PAUSED for 2.000 s
/// (stop-the-world; it cannot tell)" of n5, down since its crash; "network healed" with
/// nothing to heal; the summary counted them as "3 faults applied"; the chart drew a pause
/// band on the crashed node's lane, and a pause cut short by a crash ran to its nominal end.
/// The engine's rule (`splitbrain_check::applied`) tells them now.
#[test]
fn a_fault_without_effect_is_told_as_such() {
    use splitbrain_report::chart_model::BandKind;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/01-bully-leader-crash.json");
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    s["faults"] = serde_json::json!([
        { "at": "3s", "pause": "n4", "for": "4s" },
        { "at": "4s", "crash": "n4" },
        { "at": "5s", "crash": "n5" },
        { "at": "6s", "pause": "n5", "for": "2s" },
        { "at": "7s", "heal": true },
    ]);
    let plan = splitbrain_scenario::load_str("idle.json", &s.to_string()).unwrap();
    let r = execute(&plan, 1, Some(Recorder::hash_only().keep_events())).unwrap();
    let events = r.trace.as_ref().unwrap().kept.as_deref().unwrap();
    let story = narrate(&r.record.names, events, &NarrationOptions::default());
    assert!(
        story.contains("6.000 s  pause (2.000 s) of n5 has NO EFFECT: n5 is down"),
        "{story}"
    );
    assert!(!story.contains("n5 is PAUSED"), "{story}");
    assert!(
        story.contains("7.000 s  heal has NO EFFECT: there is nothing to heal"),
        "{story}"
    );
    assert!(
        story.contains("3.000 s  n4 is PAUSED for 4.000 s"),
        "{story}"
    );
    let summary = splitbrain_report::summary_text(&r, "idle.json", None);
    assert!(
        summary.contains("5 faults applied (2 had no effect)"),
        "{summary}"
    );
    let m = splitbrain_report::model_of_run(&r);
    let lane = |n: &str| m.lanes.iter().position(|l| l.name == n).unwrap();
    let paused: Vec<_> = m
        .bands
        .iter()
        .filter(|b| b.kind == BandKind::Paused)
        .map(|b| (b.lane, b.from.0, b.to.0))
        .collect();
    assert_eq!(
        paused,
        [(lane("n4"), 3_000_000_000, 4_000_000_000)],
        "n4's pause ends at its crash; n5 is never paused"
    );
    let view = splitbrain_report::view_of_run(&r, None);
    let html = view.html();
    assert!(html.contains("pause (2.000 s) of n5 has NO EFFECT"));
}
