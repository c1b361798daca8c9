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
