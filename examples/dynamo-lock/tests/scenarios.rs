//! The example's scenario files run as their `expect` says, through the registry a user's
//! binary has; the built-in roles alone refuse them with a located error.

use dynamo_lock::roles;
use splitbrain_engine::Recorder;
use splitbrain_scenario::{execute, load_file};
use std::path::PathBuf;

fn scenario(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
}

/// Runs `name` with its own seed and gives each checked invariant's outcome.
fn outcomes(name: &str) -> Vec<(String, String)> {
    let plan = roles().load_file(&scenario(name)).unwrap();
    let r = execute(&plan, plan.scenario.seed, None).unwrap();
    assert!(r.matches(), "{name}: not as expected: {:?}", r.expectations);
    r.expectations
        .iter()
        .map(|e| (e.invariant.to_string(), e.got_text()))
        .collect()
}

#[test]
fn the_paused_holder_writes_after_the_takeover_when_storage_does_not_fence() {
    let got = outcomes("gc-pause.json");
    for inv in [
        "holder_writes_only",
        "no_two_accepted_writers",
        "fencing_monotonic",
    ] {
        assert!(
            got.iter().any(|(i, o)| i == inv && o == "violated"),
            "{inv}: {got:?}"
        );
    }
}

#[test]
fn fenced_storage_refuses_the_stale_record_version() {
    let got = outcomes("gc-pause-fenced.json");
    for inv in [
        "holder_writes_only",
        "no_two_accepted_writers",
        "fencing_monotonic",
    ] {
        assert!(
            got.iter().any(|(i, o)| i == inv && o.starts_with("holds")),
            "{inv}: {got:?}"
        );
    }
}

#[test]
fn a_run_of_a_registered_role_is_deterministic() {
    let plan = roles().load_file(&scenario("gc-pause.json")).unwrap();
    let hash = |seed| {
        let r = execute(&plan, seed, Some(Recorder::hash_only())).unwrap();
        r.trace.unwrap().hash
    };
    assert_eq!(hash(3), hash(3));
}

#[test]
fn the_built_in_roles_alone_name_the_unknown_role_where_it_is_written() {
    let e = load_file(&scenario("gc-pause.json"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("nodes.table.role: unknown name `dynamo_lock_table`, expected one of `bully`"),
        "{e}"
    );
}

#[test]
fn a_misspelt_field_of_a_registered_role_is_located_with_a_suggestion() {
    let src = std::fs::read_to_string(scenario("gc-pause.json"))
        .unwrap()
        .replace(
            "\"heartbeat_period\": \"3s\",\n      \"work_time\": \"2s\"\n    },\n    \"client-2\"",
            "\"heartbeat_perod\": \"3s\",\n      \"work_time\": \"2s\"\n    },\n    \"client-2\"",
        );
    let e = roles().load_str("g.json", &src).unwrap_err().to_string();
    assert!(
        e.contains("nodes.client-1.heartbeat_perod: unknown field `heartbeat_perod`")
            && e.contains("did you mean `heartbeat_period`?"),
        "{e}"
    );
}

#[test]
fn a_reference_to_a_node_of_the_wrong_role_is_refused() {
    let src = std::fs::read_to_string(scenario("gc-pause.json"))
        .unwrap()
        .replacen("\"table\": \"table\"", "\"table\": \"storage\"", 1);
    let e = roles().load_str("g.json", &src).unwrap_err().to_string();
    assert!(
        e.contains(
            "nodes.client-1.table: node `storage` is a storage, expected a dynamo_lock_table"
        ),
        "{e}"
    );
}
