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
