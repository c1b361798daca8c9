//! Kubernetes-style lease records and client-go-style candidates, pinned exactly (1 ms fixed
//! delays, no drift): compare-and-swap on the version, the leader's renewal cycle and its
//! step-down at `renew_deadline`, and the candidate's judging of expiry.

use splitbrain_engine::{ClockConfig, Fault, NetRule, NodeId, Sim, SimDuration, SimTime};
use splitbrain_protocols::lease_record::{
    CandidateConfig, JudgeBy, LeaseCandidate, LeaseRecordStore,
};
use splitbrain_protocols::{Node, Obs};

const MS: u64 = 1_000_000;

fn ms(n: u64) -> SimTime {
    SimTime(n * MS)
}

/// Tunes one candidate's config.
type Tweak = Box<dyn Fn(&mut CandidateConfig)>;

fn setup(configs: Vec<(ClockConfig, Tweak)>) -> Sim<Node> {
    let mut sim = Sim::<Node>::new(1);
    let record = sim.add_node(
        "lease",
        Node::LeaseRecord(LeaseRecordStore::new()),
        ClockConfig::default(),
    );
    for (i, (clock, tweak)) in configs.into_iter().enumerate() {
        let mut c = CandidateConfig::new(record);
        tweak(&mut c);
        sim.add_node(
            &format!("c{}", i + 1),
            Node::LeaseCandidate(LeaseCandidate::new(c)),
            clock,
        );
    }
    sim
}

fn claims(sim: &Sim<Node>) -> Vec<String> {
    sim.observations()
        .iter()
        .filter(|o| matches!(o.obs, Obs::LeaderClaim { .. } | Obs::LeaderStepDown { .. }))
        .map(|o| {
            format!(
                "{} {} {}",
                o.t,
                sim.names()[o.node.index()],
                serde_json::to_string(&o.obs).unwrap()
            )
        })
        .collect()
}

fn record_version(sim: &Sim<Node>) -> u64 {
    match sim.actor(NodeId(0)) {
        Node::LeaseRecord(r) => r.record().version,
        _ => unreachable!(),
    }
}

/// Both read version 0 at 0.001 and both write at 0.002; c1's update lands first (it was
/// sent first) and makes version 1, c2's conflicts. c1 claims term 1 at 0.004 and renews
/// every 2 s + 4 ms (Get, Update): versions 2, 3, ... c2 never sees the record unchanged
/// for 15 s.
#[test]
fn compare_and_swap_makes_one_leader_and_renewals_bump_the_version() {
    let mut sim = setup(vec![
        (ClockConfig::default(), Box::new(|_| {})),
        (ClockConfig::default(), Box::new(|_| {})),
    ]);
    sim.run_until(ms(30_000)).unwrap();
    assert_eq!(
        claims(&sim),
        [r#"0.004 s c1 {"obs":"leader_claim","term":1}"#]
    );
    // Renewals complete at 0.004 + k * 2.004 s: 15 of them by 30 s (k = 0..=14).
    assert_eq!(record_version(&sim), 15);
}

/// c1 leads alone; its renewals complete at 0.004 + k * 2.004 s. Cut from the record at
/// 9 s, its last successful renewal is at 8.020; it steps down exactly renew_deadline (10 s)
/// later, at 18.020.
#[test]
fn the_leader_steps_down_at_its_renew_deadline() {
    let mut sim = setup(vec![(ClockConfig::default(), Box::new(|_| {}))]);
    sim.schedule_fault(
        ms(9_000),
        Fault::Network {
            rule: NetRule::Cut {
                a: NodeId(0),
                b: NodeId(1),
            },
        },
    );
    sim.run_until(ms(30_000)).unwrap();
    assert_eq!(
        claims(&sim),
        [
            r#"0.004 s c1 {"obs":"leader_claim","term":1}"#,
            r#"18.020 s c1 {"obs":"leader_step_down","term":1}"#,
        ]
    );
}

/// c2 (lease_duration 2 s, retry 1 s, renew deadline 1.5 s) judging by its own duration
/// takes c1's lease although c1 (15 s / 10 s / 8 s) renews every 8 s; judging by the record's
/// stored 15 s it never does.
#[test]
fn judging_by_its_own_short_duration_takes_a_held_lease() {
    for (judge, two_leaders) in [(JudgeBy::Own, true), (JudgeBy::Record, false)] {
        let mut sim = setup(vec![
            (
                ClockConfig::default(),
                Box::new(|c: &mut CandidateConfig| c.retry_period = SimDuration::from_secs(8)),
            ),
            (
                ClockConfig::default(),
                Box::new(move |c: &mut CandidateConfig| {
                    c.lease_duration = SimDuration::from_secs(2);
                    c.renew_deadline = SimDuration::from_millis(1_500);
                    c.retry_period = SimDuration::from_secs(1);
                    c.judge_by = judge;
                }),
            ),
        ]);
        sim.run_until(ms(20_000)).unwrap();
        let c2_claimed = sim
            .observations()
            .iter()
            .any(|o| o.node == NodeId(2) && matches!(o.obs, Obs::LeaderClaim { .. }));
        assert_eq!(c2_claimed, two_leaders, "{judge:?}");
    }
}

/// As above, but c1's clock drops to half rate at 9 s (drift -500,000 ppm), after its last
/// renewal at 8.020. Its renew-deadline timer was set for 10 s of local time, which the engine
/// turned into the true instant 18.020 at 8.020; it fires there while c1's clock reads only
/// 5.49 s since the renewal. c1 must wait for the rest and step down when its own clock reaches
/// the deadline: local 18.020 = 9 + (t - 9) / 2, so t = 27.040. Before the fix the early
/// firing set no new timer and c1 never stepped down.
#[test]
fn the_leader_steps_down_at_its_local_renew_deadline_after_its_clock_slows() {
    let mut sim = setup(vec![(ClockConfig::default(), Box::new(|_| {}))]);
    sim.schedule_fault(
        ms(9_000),
        Fault::Network {
            rule: NetRule::Cut {
                a: NodeId(0),
                b: NodeId(1),
            },
        },
    );
    sim.schedule_fault(
        ms(9_000),
        Fault::SetDrift {
            node: NodeId(1),
            drift_ppm: -500_000,
        },
    );
    sim.run_until(ms(40_000)).unwrap();
    assert_eq!(
        claims(&sim),
        [
            r#"0.004 s c1 {"obs":"leader_claim","term":1}"#,
            r#"27.040 s c1 {"obs":"leader_step_down","term":1}"#,
        ]
    );
}
