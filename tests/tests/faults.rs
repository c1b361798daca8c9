//! Fault and network knobs of issue 14, end to end from a scenario file: clock rates from 0.1x
//! to 3x, one-way blocks between groups, per-kind network rules and processing time. Each test
//! pins the knob's exact effect.

use splitbrain_engine::{NetRule, NodeId, SimTime};
use splitbrain_scenario::{build, load_str, Plan};

fn plan(src: &str) -> Plan {
    load_str("inline.json", src).unwrap()
}

fn load_err(src: &str) -> String {
    load_str("inline.json", src).unwrap_err().to_string()
}

/// Five bully nodes that never start an election on their own, and `faults`.
fn bully5(faults: &str) -> String {
    format!(
        r#"{{"splitbrain": 1, "name": "t", "duration": "4s",
            "nodes": {{"n": {{"role": "bully", "count": 5, "start_election": false}}}},
            "faults": {faults}}}"#
    )
}

fn n(i: u32) -> NodeId {
    NodeId(i)
}

#[test]
fn clock_rates_from_a_tenth_to_three_times_are_accepted_and_nothing_beyond() {
    let with = |ppm: i64| {
        format!(
            r#"{{"splitbrain": 1, "name": "t", "duration": "4s",
                "nodes": {{"a": {{"role": "bully", "clock": {{"drift_ppm": {ppm}}}}}}}}}"#
        )
    };
    for ok in [-900_000, 2_000_000] {
        let p = plan(&with(ok));
        let mut sim = build(&p, 0);
        sim.run_until(SimTime(1_000_000_000)).unwrap();
        // The node's monotonic clock reads rate x 1 s after one true second.
        let expect = (1_000_000 + ok) as u64 * 1_000;
        assert_eq!(sim.clock(n(0)).mono(SimTime(1_000_000_000)).0, expect);
    }
    for bad in [-900_001, 2_000_001] {
        let e = load_err(&with(bad));
        assert!(
            e.contains("drift_ppm must be within -900000..=2000000"),
            "{e}"
        );
    }
    let e = load_err(&bully5(r#"[{"at": "1s", "drift": "n1", "ppm": 2000001}]"#));
    assert!(e.contains("ppm must be within -900000..=2000000"), "{e}");
}

#[test]
fn a_group_block_is_one_block_per_pair_and_the_pair_form_still_parses() {
    let p = plan(&bully5(
        r#"[{"at": "1s", "block": {"from": ["n4", "n5"], "to": ["n1", "n2", "n3"]}},
            {"at": "2s", "block": ["n1", "n5"]},
            {"at": "3s", "block": [["n1"], ["n4", "n5"]]}]"#,
    ));
    let mut sim = build(&p, 0);
    let block = |a: u32, b: u32| NetRule::Block {
        from: n(a),
        to: n(b),
    };
    sim.run_until(SimTime(1_500_000_000)).unwrap();
    assert_eq!(
        sim.network().rules(),
        [
            block(3, 0),
            block(3, 1),
            block(3, 2),
            block(4, 0),
            block(4, 1),
            block(4, 2)
        ]
    );
    // One way only: n1..n3 no longer hear n4 and n5, n4 and n5 still hear everyone.
    assert!(sim.network().is_cut(n(4), n(0)) && !sim.network().is_cut(n(0), n(4)));
    assert!(!sim.network().is_cut(n(3), n(4)));
    sim.run_until(SimTime(3_500_000_000)).unwrap();
    assert_eq!(
        &sim.network().rules()[6..],
        [block(0, 4), block(0, 3), block(0, 4)]
    );
}

#[test]
fn a_block_within_one_group_or_to_an_unknown_node_is_a_located_error() {
    let e = load_err(&bully5(
        r#"[{"at": "1s", "block": {"from": ["n4", "n5"], "to": ["n5"]}}]"#,
    ));
    assert!(
        e.contains("faults[0].block") && e.contains("`n5`") && e.contains("cannot be blocked"),
        "{e}"
    );
    let e = load_err(&bully5(
        r#"[{"at": "1s", "block": {"from": ["n4", "n9"], "to": "n1"}}]"#,
    ));
    assert!(e.contains("faults[0].block.from[1]"), "{e}");
    let e = load_err(&bully5(
        r#"[{"at": "1s", "block": {"from": 3, "to": "n1"}}]"#,
    ));
    assert!(e.contains("a node name or a list of node names"), "{e}");
}

/// The events of `plan`'s run with `seed` until `until` ns.
fn events(plan: &Plan, seed: u64, until: u64) -> Vec<splitbrain_scenario::Event> {
    let mut sim = build(plan, seed);
    sim.set_recorder(splitbrain_engine::Recorder::hash_only().keep_events());
    sim.run_until(SimTime(until)).unwrap();
    sim.take_recorder().unwrap().finish().unwrap().kept.unwrap()
}

/// `(kind, from, to, sent at, delivered at)` of a delivered message.
type Delivery = (String, u32, u32, u64, u64);

/// Every delivered message, and the kinds of the dropped ones.
fn deliveries(evs: &[splitbrain_scenario::Event]) -> (Vec<Delivery>, Vec<String>) {
    use splitbrain_engine::TraceEvent;
    let mut sent = std::collections::BTreeMap::new();
    let (mut out, mut dropped) = (Vec::new(), Vec::new());
    for e in evs {
        match e {
            TraceEvent::Send {
                t,
                from,
                to,
                id,
                kind,
                ..
            } => {
                sent.insert(*id, (kind.clone(), from.0, to.0, t.0));
            }
            TraceEvent::Deliver { t, id, .. } => {
                let (k, f, to, s) = sent[id].clone();
                out.push((k, f, to, s, t.0));
            }
            TraceEvent::Drop { id, .. } => dropped.push(sent[id].0.clone()),
            _ => {}
        }
    }
    (out, dropped)
}

/// Five bully nodes electing at start, with `messages` rules on a 1 ms fixed network.
fn bully5_rules(messages: &str, extra: &str) -> String {
    format!(
        r#"{{"splitbrain": 1, "name": "t", "duration": "4s",
            "network": {{"delay": {{"fixed": "1ms"}}, "messages": {messages}}},
            "nodes": {{"n": {{"role": "bully", "count": 5}}}}{extra}}}"#
    )
}

#[test]
fn a_message_rule_delays_only_its_kind_on_its_link() {
    let p = plan(&bully5_rules(
        r#"[{"kind": "ANSWER", "from": "n5", "to": "n4", "delay": {"fixed": "40ms"}}]"#,
        "",
    ));
    let (ds, dropped) = deliveries(&events(&p, 0, 2_000_000_000));
    assert!(dropped.is_empty());
    let late: Vec<_> = ds
        .iter()
        .filter(|d| d.0 == "ANSWER" && d.1 == 4 && d.2 == 3)
        .collect();
    assert!(!late.is_empty(), "n5 answers n4's election");
    // Exactly 1 ms link + 40 ms for ANSWER n5 -> n4; FIFO makes later n5 -> n4 messages
    // queue behind it, and every other message takes its 1 ms.
    for d in &ds {
        if d.0 == "ANSWER" && d.1 == 4 && d.2 == 3 {
            assert_eq!(d.4 - d.3, 41_000_000, "{d:?}");
        } else if !(d.1 == 4 && d.2 == 3) {
            assert_eq!(d.4 - d.3, 1_000_000, "{d:?}");
        }
    }
}

#[test]
fn a_message_rule_drops_only_its_kind() {
    let p = plan(&bully5_rules(
        r#"[{"kind": "ELECTION", "from": "n1", "drop": 1}]"#,
        "",
    ));
    let (ds, dropped) = deliveries(&events(&p, 0, 2_000_000_000));
    assert!(!dropped.is_empty() && dropped.iter().all(|k| k == "ELECTION"));
    assert!(!ds.iter().any(|d| d.0 == "ELECTION" && d.1 == 0));
    assert!(ds.iter().any(|d| d.0 == "ELECTION" && d.1 == 1));
    // A misspelt kind is a located error with a suggestion.
    let e = load_err(&bully5_rules(r#"[{"kind": "ANSWR", "drop": 1}]"#, ""));
    assert!(
        e.contains("network.messages[0].kind") && e.contains("did you mean `ANSWER`"),
        "{e}"
    );
    let e = load_err(&bully5_rules(r#"[{"kind": "ANSWER"}]"#, ""));
    assert!(e.contains("needs `delay`, `drop` or `duplicate`"), "{e}");
}

#[test]
fn every_message_kind_of_the_lessons_is_listed_for_validation() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    // Lessons, and the designs in the folders beside them (the comparison's); manifests
    // (`*.compare.json`) are not scenarios.
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            paths.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            paths.push(path);
        }
    }
    paths.retain(|p| p.extension().is_some_and(|x| x == "json"));
    paths.retain(|p| !p.to_string_lossy().ends_with(".compare.json"));
    for path in paths {
        let plan = splitbrain_scenario::load_file(&path).unwrap();
        let r = splitbrain_scenario::execute(&plan, plan.scenario.seed, None).unwrap();
        for kind in r.stats.messages.keys() {
            assert!(
                splitbrain_protocols::MESSAGE_KINDS.contains(kind),
                "{kind} in {path:?}"
            );
        }
    }
}

#[test]
fn processing_time_delays_handling_at_its_node_only() {
    let src = r#"{"splitbrain": 1, "name": "t", "duration": "4s",
        "network": {"delay": {"fixed": "1ms"}},
        "nodes": {"n": {"role": "bully", "count": 5}},
        "processing": [{"node": ["n5"], "kind": "ELECTION", "time": "10ms"}]}"#;
    let (ds, _) = deliveries(&events(&plan(src), 0, 2_000_000_000));
    let first = ds
        .iter()
        .find(|d| d.0 == "ELECTION" && d.2 == 4)
        .expect("n5 gets an ELECTION");
    // 1 ms on the link, then 10 ms of handling: the handler runs 11 ms after the send.
    assert_eq!(first.4 - first.3, 11_000_000);
    // Its ANSWER leaves when the handler runs.
    let answer = ds
        .iter()
        .find(|d| d.0 == "ANSWER" && d.1 == 4 && d.2 == first.1)
        .unwrap();
    assert_eq!(answer.3, first.4);
    // Elsewhere, handling is immediate.
    for d in ds.iter().filter(|d| d.2 != 4) {
        assert_eq!(d.4 - d.3, 1_000_000, "{d:?}");
    }
    // Without the rule, the trace is the one of a plain run: no cost, no change.
    let plain = src.replace(r#""time": "10ms""#, r#""time": "0ms""#);
    let without = src.replace(
        r#",
        "processing": [{"node": ["n5"], "kind": "ELECTION", "time": "10ms"}]"#,
        "",
    );
    assert_eq!(
        events(&plan(&plain), 0, 2_000_000_000),
        events(&plan(&without), 0, 2_000_000_000)
    );
}

/// Issue 17 item 4: a nemesis heal ends only the partition the nemesis drew. The scenario
/// partitions `{n1} | {n2..n5}` from 1 s and heals at 3.5 s; the nemesis partitions `n4` from
/// `n5` for 100-200 ms at a time between 1.1 s and 3 s. Just after each nemesis heal, the
/// explicit partition is still in force (before the fix, every heal removed every rule, so n1
/// could talk to the others again from the first nemesis heal on); after 3.5 s nothing is.
#[test]
fn a_nemesis_heal_leaves_the_scenarios_own_partition() {
    let p = plan(
        r#"{"splitbrain": 1, "name": "t", "duration": "4s",
            "nodes": {"n": {"role": "bully", "count": 5, "start_election": false}},
            "faults": [{"at": "1s", "partition": [["n1"], ["n2", "n3", "n4", "n5"]]},
                       {"at": "3.5s", "heal": true}],
            "nemesis": {"targets": ["n4", "n5"], "mean_interval": "300ms", "start": "1.1s",
                        "end": "3s", "partition": {"min": "100ms", "max": "200ms"}}}"#,
    );
    let explicit = NetRule::Partition {
        groups: vec![vec![n(0)], vec![n(1), n(2), n(3), n(4)]],
    };
    let seed = 0;
    // The nemesis draws only partitions: every other fault it draws is a partition's heal.
    let heals: Vec<SimTime> = splitbrain_scenario::build::nemesis_schedule(&p, seed)
        .into_iter()
        .filter(|(_, f)| !matches!(f, splitbrain_engine::Fault::Network { .. }))
        .map(|(t, _)| t)
        .collect();
    assert!(heals.len() >= 2, "{heals:?}");
    let mut sim = build(&p, seed);
    for h in heals {
        sim.run_until(SimTime(h.0 + 1)).unwrap();
        assert!(
            sim.network().rules().contains(&explicit),
            "after the nemesis heal at {h}: {:?}",
            sim.network().rules()
        );
        assert!(
            sim.network().is_cut(n(0), n(1)),
            "after the nemesis heal at {h}"
        );
    }
    sim.run_until(SimTime(3_500_000_001)).unwrap();
    assert_eq!(sim.network().rules(), &[][..]);
}

/// Regression (new-user pass): a crash and a restart of the leader at the same instant. The
/// restarted n5 claims leadership at that instant and every node accepts it, but the checkers
/// merged observations before faults at a tie, so its claim was closed by the crash that came
/// before it: `eventual_leader` was VIOLATED ("no live node claims leadership at the end").
/// Faults now keep their place among the observations, as the run had them.
#[test]
fn a_claim_between_a_crash_and_a_restart_at_one_instant_is_the_restarted_nodes() {
    use splitbrain_scenario::{execute_keeping, Keep};
    let src = r#"{"splitbrain": 1, "name": "t", "duration": "10s",
        "network": {"delay": {"fixed": "1ms"}},
        "nodes": {"n": {"role": "bully", "count": 5}},
        "check": ["eventual_leader"],
        "faults": [{"at": "2s", "crash": "n5"}, {"at": "2s", "restart": "n5"}]}"#;
    let p = plan(src);
    for keep in [Keep::All, Keep::Checked] {
        let r = execute_keeping(&p, 0, None, keep).unwrap();
        let v = r.report.verdict("eventual_leader").unwrap();
        assert!(matches!(v, splitbrain_check::Verdict::Holds), "{v:?}");
    }
}
