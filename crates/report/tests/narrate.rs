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
        effects: r.record.fault_effects.clone(),
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
    let opts = NarrationOptions {
        effects: r.record.fault_effects.clone(),
        ..Default::default()
    };
    let story = narrate(&r.record.names, events, &opts);
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
    let summary = splitbrain_report::summary_text(&r, "idle.json", &[], None);
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

/// Lesson 01 with `faults` in place of its own, run at seed 1: the story, the summary, the
/// verdicts and the `run --json` summary.
fn lesson_01_with(faults: serde_json::Value) -> (String, String, String, serde_json::Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/01-bully-leader-crash.json");
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    s["faults"] = faults;
    let plan = splitbrain_scenario::load_str("l01.json", &s.to_string()).unwrap();
    let r = execute(&plan, 1, Some(Recorder::hash_only().keep_events())).unwrap();
    let events = r.trace.as_ref().unwrap().kept.as_deref().unwrap();
    let opts = NarrationOptions {
        effects: r.record.fault_effects.clone(),
        ..Default::default()
    };
    let story = narrate(&r.record.names, events, &opts);
    let summary = splitbrain_report::summary_text(&r, "l01.json", &[], None);
    let verdicts = format!("{:?}", r.report.results);
    let json = serde_json::from_str(&splitbrain_report::summary_json(&r, "l01.json", &[])).unwrap();
    (story, summary, verdicts, json)
}

/// Regression: lesson 01 plus a 0 s wall clock step at 9.6 s gave MISMATCH (eventual_leader
/// inconclusive: the step, which changes nothing, was its "last fault"). Neither did a drift
/// change to the drift in force, a loss change to the loss every link has, or a partition
/// or one-way block equal to one in force count as having no effect.
#[test]
fn changes_to_what_is_in_force_are_told_as_without_effect() {
    let (story, summary, verdicts, json) = lesson_01_with(serde_json::json!([
        { "at": "2s", "crash": "n5" },
        { "at": "9.6s", "clock_step": "n1", "by": "0s" },
    ]));
    assert!(
        story.contains("9.600 s  n1's wall clock step has NO EFFECT: it is a step of 0 s"),
        "{story}"
    );
    assert!(
        summary.contains("2 faults applied (1 had no effect)"),
        "{summary}"
    );
    assert!(!verdicts.contains("Inconclusive"), "{verdicts}");
    // `run --json` counts them as the text does.
    assert_eq!(json["faults_applied"], 2);
    assert_eq!(json["faults_without_effect"], 1);
    let (story, summary, _, _) = lesson_01_with(serde_json::json!([
        { "at": "2s", "crash": "n5" },
        { "at": "3s", "drift": "n1", "ppm": 0 },
        { "at": "3.1s", "loss": 0 },
        { "at": "3.2s", "partition": [["n1"], ["n2", "n3", "n4"]] },
        { "at": "3.3s", "partition": [["n1"], ["n2", "n3", "n4"]] },
        { "at": "3.4s", "block": { "from": "n2", "to": "n3" } },
        { "at": "3.5s", "block": { "from": "n2", "to": "n3" } },
        { "at": "4s", "heal": true },
    ]));
    for line in [
        "3.000 s  n1's clock drift change to 0 ppm has NO EFFECT: n1's clock is already at that drift",
        "3.100 s  message loss set to 0.000% has NO EFFECT: every link is already at that loss",
        "3.300 s  network PARTITION {n1} | {n2,n3,n4} has NO EFFECT: it is already in force",
        "3.500 s  link n2 -> n3 blocked (one way) has NO EFFECT: it is already in force",
    ] {
        assert!(story.contains(line), "{line}\n{story}");
    }
    assert!(
        !story.contains("3.200 s  network PARTITION {n1} | {n2,n3,n4} has NO"),
        "{story}"
    );
    assert!(
        summary.contains("8 faults applied (4 had no effect)"),
        "{summary}"
    );
    assert!(
        summary.contains("the one-way block at 3.500 s had no effect: it was already in force"),
        "{summary}"
    );
}

/// Regression: a pause of a paused node that runs past its pause only moves the resume later,
/// but the story told it as a fresh pause and the resume as "after a 5.000 s pause" where
/// the node had been stopped since the first pause.
#[test]
fn a_pause_extended_is_told_as_an_extension() {
    let (story, _, _, _) = lesson_01_with(serde_json::json!([
        { "at": "2s", "pause": "n5", "for": "3s" },
        { "at": "4s", "pause": "n5", "for": "4s" },
    ]));
    assert!(
        story.contains(
            "4.000 s  n5's pause (since 2.000 s) is EXTENDED by a 4.000 s pause: \
             it now ends at 8.000 s instead of 5.000 s"
        ),
        "{story}"
    );
    assert!(
        story.contains("8.000 s  n5 resumes after a 6.000 s pause"),
        "{story}"
    );
    assert!(!story.contains("after a 4.000 s pause"), "{story}");
}

/// Regression (new-user pass): a message dropped by a one-way block was told as "dropped:
/// partition".
#[test]
fn a_drop_by_a_one_way_block_says_so() {
    let (story, _, _, _) = lesson_01_with(serde_json::json!([
        { "at": "1s", "block": { "from": "n5", "to": "n1" } },
        { "at": "3s", "heal": true },
        { "at": "4s", "partition": [["n5"], ["n1", "n2", "n3", "n4"]] },
    ]));
    // Heartbeats are folded; each fold says why its drops were dropped.
    let folded = |from: &str| -> String {
        story
            .lines()
            .find(|l| l.trim_start().starts_with(from) && l.contains("[folded]"))
            .unwrap_or_else(|| panic!("no fold at {from}:\n{story}"))
            .to_string()
    };
    let block = folded("1.");
    assert!(block.contains("dropped: one-way block"), "{block}");
    assert!(!block.contains("dropped: partition"), "{block}");
    // The partition after the heal is told as one.
    let line = story
        .lines()
        .find(|l| l.contains("[folded]") && l.contains("dropped: partition"))
        .unwrap_or_else(|| panic!("{story}"));
    assert!(!line.contains("one-way"), "{line}");
}

/// Regression (new-user pass): the chart drew a partition already in force a second time and
/// a mark for a 0 s wall clock step; neither changed anything.
#[test]
fn the_chart_draws_no_fault_that_changed_nothing() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/01-bully-leader-crash.json");
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    s["faults"] = serde_json::json!([
        { "at": "2s", "partition": [["n5"], ["n1", "n2", "n3", "n4"]] },
        { "at": "3s", "partition": [["n5"], ["n1", "n2", "n3", "n4"]] },
        { "at": "4s", "clock_step": "n1", "by": "0s" },
        { "at": "5s", "clock_step": "n2", "by": "1s" },
        { "at": "6s", "heal": true },
    ]);
    let plan = splitbrain_scenario::load_str("c.json", &s.to_string()).unwrap();
    let r = execute(&plan, 1, Some(Recorder::hash_only().keep_events())).unwrap();
    let m = splitbrain_report::model_of_run(&r);
    assert_eq!(m.net.len(), 1, "one partition, from 2 s to 6 s");
    assert_eq!(m.marks.len(), 1, "one clock step mark, n2's");
}

/// Regression (new-user pass): after a paused bully leader resumed, each follower was told
/// twice accepting it ("n2 accepts n5 as leader" for its HEARTBEAT, again for its
/// COORDINATOR). An acceptance is told when the belief changes: once per follower here, and
/// again only after the follower believed another leader.
#[test]
fn an_acceptance_is_told_once_per_change_of_belief() {
    let (story, ..) = lesson_01_with(serde_json::json!([
        {"at": "3s", "pause": "n5", "for": "2s"}
    ]));
    let after: Vec<&str> = story
        .lines()
        .filter(|l| {
            let t: f64 = l.split_whitespace().next().unwrap().parse().unwrap_or(0.0);
            t >= 5.0
        })
        .collect();
    for n in ["n1", "n2", "n3", "n4"] {
        let told = after
            .iter()
            .filter(|l| l.ends_with(&format!("{n} accepts n5 as leader")))
            .count();
        assert_eq!(told, 1, "{n} told {told} times:\n{story}");
    }
    // Each follower's beliefs in order: n5, then n4 (elected in the pause), then n5 again.
    for n in ["n1", "n2", "n3"] {
        let beliefs: Vec<&str> = story
            .lines()
            .filter_map(|l| l.split(&format!("{n} accepts ")).nth(1))
            .collect();
        assert_eq!(
            beliefs,
            ["n5 as leader", "n4 as leader", "n5 as leader"],
            "{story}"
        );
    }
}

/// Regression (new-user pass, session 9): the view's step list still had a step for each
/// repeated acceptance of the same leader (a follower's HEARTBEAT after its COORDINATOR),
/// after the narration told only changes. The view's steps now follow the same rule: each
/// follower's acceptances of n5 after the pause are one step, as in the narration.
#[test]
fn the_view_steps_through_an_acceptance_once_per_change_of_belief() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/01-bully-leader-crash.json");
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    s["faults"] = serde_json::json!([{"at": "3s", "pause": "n5", "for": "2s"}]);
    let plan = splitbrain_scenario::load_str("l01.json", &s.to_string()).unwrap();
    let r = execute(&plan, 1, Some(Recorder::hash_only().keep_events())).unwrap();
    let view = splitbrain_report::view_of_run(&r, None);
    for n in ["n1", "n2", "n3", "n4"] {
        let steps: Vec<u64> = view
            .steps
            .iter()
            .filter(|st| st.t >= 5_000_000_000 && st.text == format!("{n} accepts n5 as leader"))
            .map(|st| st.t)
            .collect();
        assert_eq!(steps.len(), 1, "{n}'s acceptances of n5 at {steps:?}");
    }
    // Each follower's beliefs in order: n5, then n4 (elected in the pause), then n5 again.
    for n in ["n1", "n2", "n3"] {
        let beliefs: Vec<&str> = view
            .steps
            .iter()
            .filter_map(|st| st.text.strip_prefix(&format!("{n} accepts ")))
            .collect();
        assert_eq!(beliefs, ["n5 as leader", "n4 as leader", "n5 as leader"]);
    }
}

/// Regression (new-user pass): a Redis instance's `ERR invalid expire time` reply was never
/// told: a Redlock client counts it only as a missing OK ("1 of 3 OK, quorum 2"). With the
/// wall clocks at the Unix epoch, r1 and r2 stepped 20 s back refuse every `SET .. PX 10000`;
/// the instance says what it refused and why, and `--hide REPLY` keeps the refusal.
#[test]
fn a_redis_error_reply_is_told_as_a_refusal() {
    let src = r#"{
      "splitbrain": 1, "name": "epoch-redlock", "duration": "3s",
      "wall_clock_start": "1970-01-01T00:00:00Z",
      "network": { "delay": { "fixed": "1ms" } },
      "nodes": {
        "r": { "role": "redis", "count": 3 },
        "storage": { "role": "storage", "fencing": false },
        "client-1": { "role": "worker", "lock": "redlock", "instances": ["r1", "r2", "r3"],
                      "storage": "storage", "ttl": "10s", "rounds": 1, "start_after": "2s" }
      },
      "faults": [ { "at": "1s", "clock_step": "r1", "by": "-20s" },
                  { "at": "1s", "clock_step": "r2", "by": "-20s" } ],
      "check": ["exclusive_holders"], "vacuous_ok": true
    }"#;
    let plan = splitbrain_scenario::load_str("epoch.json", src).unwrap();
    let r = execute(&plan, 0, Some(Recorder::hash_only().keep_events())).unwrap();
    let events = r.trace.as_ref().unwrap().kept.as_deref().unwrap();
    for hide in [vec![], vec!["REPLY".to_string()]] {
        let opts = NarrationOptions {
            hide_kinds: hide,
            ..Default::default()
        };
        let story = narrate(&r.record.names, events, &opts);
        for who in ["r1", "r2"] {
            assert!(
                story.contains(&format!(
                    "2.001 s  {who} REFUSES a SET of client-1: ERR invalid expire time in 'set' \
                     command"
                )),
                "{story}"
            );
        }
        assert!(!story.contains("r3 REFUSES"), "{story}");
    }
}

/// Lesson 22: redis-a crashes at 0.150 s with client-1's key in memory. The story says the
/// key is lost with the crash and tells no expiry of it at 10.102 s (the truth's rule that
/// a down instance goes on counting for its value is about votes, not what it holds).
#[test]
fn a_crashed_instances_key_is_told_lost_not_expired() {
    let s = story("22-redis-failover-async-replication.json");
    assert!(
        s.contains("0.150 s  redis-a: key lock (client-1's lock) is LOST with the crash"),
        "{s}"
    );
    assert!(
        !s.lines()
            .any(|l| l.contains("redis-a: key lock") && l.contains("EXPIRES")),
        "{s}"
    );
}

/// A validity check the lock client answers (Redlock's quorum count) or a belief that
/// outlasts its deadline can be valid past the deadline: the story does not call a deadline
/// that passed 7.036 s ago "7.036 s left".
#[test]
fn a_check_valid_past_its_deadline_says_the_deadline_passed() {
    use splitbrain_protocols::Obs;
    let say = |valid: bool, remaining_ns: i64| {
        splitbrain_report::describe_obs(
            &[],
            "client-1",
            &Obs::ValidityChecked {
                thread: None,
                lock: "lock".to_string(),
                valid,
                remaining_ns,
            },
        )
    };
    let s = say(true, -7_036_000_000);
    assert!(!s.contains("7.036 s left"), "{s}");
    assert!(s.contains("deadline passed 7.036 s ago"), "{s}");
    assert!(say(true, 5_000_000).contains("still valid, 0.005 s left"));
    let s = say(false, 2_000_000_000);
    assert!(!s.contains("EXPIRED"), "{s}");
    assert!(s.contains("NOT valid"), "{s}");
    assert!(say(false, -1_000_000).contains("EXPIRED 0.001 s ago"));
}

/// A lease client that stops renewing after `renew_attempts` failures, or believes past its
/// deadline, says so in the story.
#[test]
fn a_belief_past_its_deadline_is_told() {
    use splitbrain_engine::LocalTime;
    use splitbrain_protocols::Obs;
    let s = splitbrain_report::describe_obs(
        &[],
        "client-1",
        &Obs::LockBeliefPastDeadline {
            thread: None,
            lock: "lock".to_string(),
            until_local: None,
            reason: "stopped renewing after 2 failed renewal(s) (renew_attempts), believes it \
                     holds with no deadline"
                .to_string(),
        },
    );
    assert!(
        s.contains(
            "client-1 goes on believing it holds \"lock\" with NO deadline: stopped renewing"
        ),
        "{s}"
    );
    let s = splitbrain_report::describe_obs(
        &[],
        "client-1",
        &Obs::LockBeliefPastDeadline {
            thread: None,
            lock: "lock".to_string(),
            until_local: Some(LocalTime(6_000_000_000)),
            reason: "grace".to_string(),
        },
    );
    assert!(s.contains("until local 6.000 s"), "{s}");
}

/// One rule for times everywhere: the story writes an event at 2.2525 s as a verdict does,
/// rounded half up to 2.253 s (`splitbrain_check::fmt_secs`), not cut to 2.252 s.
#[test]
fn the_story_rounds_times_as_verdicts_do() {
    use splitbrain_engine::{Fault, NodeId, SimTime, TraceEvent};
    let t = SimTime(2_252_500_000);
    let events: Vec<splitbrain_report::narrate::Event> = vec![TraceEvent::Fault {
        t,
        fault: Fault::Crash { node: NodeId(0) },
    }];
    let s = narrate(&["n1".to_string()], &events, &NarrationOptions::default());
    assert_eq!(splitbrain_check::fmt_secs(t, 3), "2.253 s");
    assert!(s.contains("2.253 s  n1 CRASHES"), "{s}");
}

/// A message is told once: lesson 05's client-2 sends LEASE_ACQUIRE and observes its request
/// in one step, and the story says both on one line instead of an arrow line and then a
/// "requests" line.
#[test]
fn each_message_is_told_once() {
    let s = story("05-lease-gc-pause-unfenced.json");
    assert!(
        s.contains("1.000 s  client-2 requests lock \"lock\"  [LEASE_ACQUIRE -> locks]"),
        "{s}"
    );
    assert!(!s.contains("client-2 -> locks  LEASE_ACQUIRE"), "{s}");
    // A step without an observation still tells its sends, one line each.
    let s = story_hiding("03-bully-partition-split-brain.json", &["HEARTBEAT"]);
    assert!(
        s.lines()
            .any(|l| l.contains(" -> ") && l.contains("ELECTION")),
        "{s}"
    );
}

/// Heartbeats are folded as the chart folds them: lesson 03 told about 800 HEARTBEAT lines
/// one by one (874 lines in all); each run of them is one line that says how many.
#[test]
fn heartbeats_are_folded_into_one_line_per_run() {
    let s = story("03-bully-partition-split-brain.json");
    assert!(s.lines().count() < 200, "{} lines:\n{s}", s.lines().count());
    assert!(
        !s.lines().any(|l| l.ends_with("  HEARTBEAT")),
        "an unfolded heartbeat:\n{s}"
    );
    let folded: Vec<&str> = s.lines().filter(|l| l.contains("[folded]")).collect();
    assert!(!folded.is_empty(), "{s}");
    assert!(
        folded
            .iter()
            .any(|l| l.contains(" HEARTBEAT message(s) until ")),
        "{folded:?}"
    );
    // Lesson 21b: Raft's APPEND_ENTRIES and their APPEND_ACKs (3,561 lines unfolded).
    let s = story("21b-raft-leader-minority-partition.json");
    assert!(s.lines().count() < 600, "{} lines", s.lines().count());
}

/// A storage's reply to a write it rejected says so: lesson 06's storage rejects client-1's
/// stale token, and its WRITE_ACK is not told as a plain acknowledgement.
#[test]
fn a_rejected_write_is_not_told_as_a_plain_ack() {
    let s = story("06-lease-gc-pause-fenced.json");
    let rejects: Vec<&str> = s.lines().filter(|l| l.contains("REJECTS")).collect();
    assert!(!rejects.is_empty(), "{s}");
    for l in &rejects {
        assert!(
            l.contains("[WRITE_ACK (write REJECTED) -> client-1]"),
            "{l}"
        );
    }
    assert!(
        !s.lines().any(|l| l.ends_with("WRITE_ACK")
            && s.contains("REJECTS")
            && l.contains("-> client-1")
            && !l.contains("REJECTED")),
        "{s}"
    );
}

/// A fault step's cause names the fault: which pause, of which node, at what time (lesson
/// 05's pause of client-1 at 2.002 s), not only "the scenario's fault plan".
#[test]
fn a_fault_steps_cause_names_the_fault() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/05-lease-gc-pause-unfenced.json");
    let plan = load_file(&path).unwrap();
    let r = execute(
        &plan,
        plan.scenario.seed,
        Some(Recorder::hash_only().keep_events()),
    )
    .unwrap();
    let view = splitbrain_report::view_of_run(&r, None);
    let causes: Vec<&str> = view
        .steps
        .iter()
        .filter(|st| st.what == "fault")
        .filter_map(|st| st.cause.as_deref())
        .collect();
    assert_eq!(
        causes,
        [
            "the scenario's fault plan (or its nemesis), at 2.002 s: client-1 is PAUSED for \
          15.000 s (stop-the-world; it cannot tell)"
        ]
    );
    // The wall column's one style (milliseconds) is the page script's: tests/view_browser.rs
    // reads it in a browser.
}

/// A violation's causes are the faults on its causal past (the run's happens-before graph):
/// three lease leaders at one lease service; the link between two leaders, which never talk
/// to each other, is cut at 2 s, and the service crashes at 10 s and stays down, so no
/// leader holds the lease at the end. The service's crash is behind the `eventual_leader`
/// violation (the leaders' renewals to it are lost); the cut carries no message and is no
/// cause. Read from the node set alone, the crash of a node that is no leader was missed and
/// the cut was named.
#[test]
fn a_violation_is_caused_by_the_faults_on_its_causal_past() {
    let scenario = r#"{
      "splitbrain": 2,
      "name": "lease-service-crash",
      "seed": 1,
      "duration": "30s",
      "network": { "delay": { "fixed": "1ms" } },
      "nodes": {
        "locks": { "role": "lease_service" },
        "leader": { "role": "lease_leader", "count": 3, "service": "locks", "ttl": "5s",
                    "renew_every": "1s", "retry_every": "500ms" }
      },
      "faults": [
        { "at": "2s", "cut": [["leader2", "leader3"]] },
        { "at": "10s", "crash": "locks" }
      ],
      "check": ["eventual_leader"]
    }"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lease-service-crash.json");
    std::fs::write(&path, scenario).unwrap();
    let plan = load_file(&path).unwrap();
    let r = execute(&plan, 1, Some(Recorder::hash_only().keep_events())).unwrap();
    let v = &r.report.verdict("eventual_leader").unwrap().violations()[0];
    assert_eq!(v.faults, vec!["locks crashed at 10.000 s".to_string()]);
}

/// A violation whose causal past holds no fault keeps the faults the checker named: in
/// lesson 22 Sentinel's promotion of redis-b after redis-a's crash is no message of the run,
/// so no path leads from the crash to the clients, yet the crash is the cause.
#[test]
fn a_violation_with_no_fault_on_its_causal_past_keeps_the_named_faults() {
    let plan = load_file(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/22-redis-failover-async-replication.json"),
    )
    .unwrap();
    let r = execute(
        &plan,
        plan.scenario.seed,
        Some(Recorder::hash_only().keep_events()),
    )
    .unwrap();
    let faults: Vec<String> = r
        .report
        .results
        .iter()
        .flat_map(|x| x.verdict.violations())
        .flat_map(|v| v.faults.clone())
        .collect();
    assert!(
        faults.iter().any(|f| f.starts_with("redis-a crashed")),
        "{faults:?}"
    );
}
