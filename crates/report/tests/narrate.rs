//! Narration tells what happened, not what a client believes happened (issue 10, section 4).

use splitbrain_engine::Recorder;
use splitbrain_report::{derived_facts, narrate, NarrationOptions};
use splitbrain_scenario::{execute, load_file};
use std::path::PathBuf;

fn story(file: &str) -> String {
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
