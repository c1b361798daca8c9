//! Lease knobs of issue 14 from scenario files: the belief policy's alias and its located
//! errors, the service's `grants` and `lock_delay`, the leader's `start_after` and
//! `request_timeout`.

use splitbrain_engine::{Recorder, SimTime};
use splitbrain_scenario::{build, load_str};

fn repo_file(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

/// The run's trace lines without the header (the scenario text differs).
fn trace(src: &str) -> Vec<String> {
    let plan = load_str("inline.json", src).unwrap();
    let mut sim = build(&plan, 0);
    sim.set_recorder(Recorder::hash_only().keep_lines());
    sim.run_until(SimTime(15_000_000_000)).unwrap();
    sim.take_recorder()
        .unwrap()
        .finish()
        .unwrap()
        .lines
        .unwrap()
}

fn err(src: &str) -> String {
    load_str("inline.json", src).unwrap_err().to_string()
}

#[test]
fn stop_on_renew_failure_is_an_alias_of_on_renew_failure() {
    let src = repo_file("07a-lease-renewal-ignored.json");
    let migrated = src.replace(
        r#""stop_on_renew_failure": false"#,
        r#""on_renew_failure": "keep_believing""#,
    );
    assert_ne!(src, migrated);
    assert_eq!(trace(&src), trace(&migrated));
    let src = repo_file("07b-lease-renewal-respected.json");
    let explicit = src.replace(
        r#""stop_on_renew_failure": true"#,
        r#""on_renew_failure": "stop_at_deadline""#,
    );
    assert_ne!(src, explicit);
    assert_eq!(trace(&src), trace(&explicit));
}

#[test]
fn belief_policy_errors_are_located() {
    let src = repo_file("07a-lease-renewal-ignored.json");
    let both = src.replacen(
        r#""stop_on_renew_failure": false"#,
        r#""stop_on_renew_failure": false, "on_renew_failure": "until_denied""#,
        1,
    );
    let e = err(&both);
    assert!(
        e.contains("nodes.leader-a.stop_on_renew_failure") && e.contains("not both"),
        "{e}"
    );
    let no_grace = src.replacen(
        r#""stop_on_renew_failure": false"#,
        r#""on_renew_failure": "grace""#,
        1,
    );
    let e = err(&no_grace);
    assert!(
        e.contains("nodes.leader-a.on_renew_failure") && e.contains("needs `grace`"),
        "{e}"
    );
    let stray = src.replacen(r#""stop_on_renew_failure": false"#, r#""grace": "2s""#, 1);
    assert!(err(&stray).contains("`grace` goes with"));
    let zero = src.replacen(
        r#""stop_on_renew_failure": false"#,
        r#""renew_attempts": 0"#,
        1,
    );
    assert!(err(&zero).contains("renew_attempts must be at least 1"));
    let typo = src.replacen(
        r#""stop_on_renew_failure": false"#,
        r#""on_renew_failure": "until_deny""#,
        1,
    );
    assert!(err(&typo).contains("until_denied"), "{}", err(&typo));
}

/// With a 5 s grace both leaders of lesson 07b overlap for the grace; leader-a steps down at
/// its deadline + 5 s.
#[test]
fn grace_reaches_the_leader_from_a_file() {
    let src = repo_file("07b-lease-renewal-respected.json");
    let grace = src.replacen(
        r#""stop_on_renew_failure": true"#,
        r#""on_renew_failure": "grace", "grace": "5s""#,
        1,
    );
    let (a, b) = (trace(&src), trace(&grace));
    let step_down = |lines: &[String]| {
        lines
            .iter()
            .find(|l| l.contains("leader_step_down"))
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["t"].as_u64().unwrap()
            })
            .unwrap()
    };
    assert_eq!(step_down(&b) - step_down(&a), 5_000_000_000);
}
