//! Narration order: a follower's "accepts X as leader" is told after X's claim when both
//! happen at the same instant (regression: lesson 02 told four acceptances before the claim).

use splitbrain_engine::Recorder;
use splitbrain_report::{narrate, NarrationOptions};
use splitbrain_scenario::{execute, load_file};
use std::path::PathBuf;

#[test]
fn acceptances_of_a_leader_come_after_its_claim() {
    for lesson in [
        "02-bully-worst-case.json",
        "03-bully-partition-split-brain.json",
    ] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios")
            .join(lesson);
        let plan = load_file(&path).unwrap();
        let r = execute(
            &plan,
            plan.scenario.seed,
            Some(Recorder::hash_only().keep_events()),
        )
        .unwrap();
        let events = r.trace.as_ref().unwrap().kept.as_deref().unwrap();
        let opts = NarrationOptions {
            hide_kinds: vec!["HEARTBEAT".into()],
            ..Default::default()
        };
        let text = narrate(&r.record.names, events, &opts);
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
