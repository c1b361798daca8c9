//! Kubernetes-style lease records and client-go-style candidates, pinned exactly (1 ms fixed
//! delays, no drift): compare-and-swap on the version, the leader's renewal cycle and its
//! step-down (client-go's `retry_period + renew_deadline` after its last renewal, or
//! `renew_deadline` by the knob), a hung renew, and the candidate's judging of expiry.

use splitbrain_engine::{ClockConfig, Fault, NetRule, NodeId, Sim, SimDuration, SimTime};
use splitbrain_protocols::lease_record::{
    CandidateConfig, JudgeBy, LeaseCandidate, LeaseRecordStore, StepDownAfter, StepDownCheck,
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
/// sent first) and makes version 1, c2's conflicts. c1 claims term 1 at 0.004, renews at once
/// (client-go's `renew` starts its first round right after `acquire`): version 2 at 0.008;
/// then every 2 s + 4 ms (Get, Update): versions 3, 4, ... c2 never sees the record unchanged
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
    // The acquisition, then renewals at 0.008 + k * 2.004 s: 15 of them by 30 s (k = 0..=14).
    assert_eq!(record_version(&sim), 16);
}

/// Cuts c1 (alone) from the record at 9 s.
fn cut_at_9s(sim: &mut Sim<Node>) {
    sim.schedule_fault(
        ms(9_000),
        Fault::Network {
            rule: NetRule::Cut {
                a: NodeId(0),
                b: NodeId(1),
            },
        },
    );
}

/// c1 leads alone; its renewals complete at 0.008 + k * 2.004 s. Cut from the record at 9 s,
/// its last successful renewal is at 8.024. client-go's renew loop waits retry_period (2 s)
/// before its next round and that round gives up after renew_deadline (10 s): c1 steps down
/// 12 s after its last renewal, at 20.024, not `renew_deadline` (10 s) after it.
#[test]
fn the_leader_steps_down_retry_period_plus_renew_deadline_after_its_last_renewal() {
    let mut sim = setup(vec![(ClockConfig::default(), Box::new(|_| {}))]);
    cut_at_9s(&mut sim);
    sim.run_until(ms(30_000)).unwrap();
    assert_eq!(
        claims(&sim),
        [
            r#"0.004 s c1 {"obs":"leader_claim","term":1}"#,
            r#"20.024 s c1 {"obs":"leader_step_down","term":1}"#,
        ]
    );
}

/// A hung renew (kubernetes PR #65094): with no client-side timeout that matters (100 s),
/// c1's first attempt after the cut (10.024) never returns. Judged by a timer (the default,
/// client-go since the PR: the round's context ends the request), c1 steps down at its
/// deadline, 20.024; judged only between attempts (`wait.Poll` before the PR), never.
#[test]
fn a_hung_renew_steps_down_only_when_judged_by_a_timer() {
    for (check, want) in [
        (
            StepDownCheck::Timer,
            vec![r#"20.024 s c1 {"obs":"leader_step_down","term":1}"#],
        ),
        (StepDownCheck::BetweenAttempts, vec![]),
    ] {
        let mut sim = setup(vec![(
            ClockConfig::default(),
            Box::new(move |c: &mut CandidateConfig| {
                c.request_timeout = SimDuration::from_secs(100);
                c.step_down_check = check;
            }),
        )]);
        cut_at_9s(&mut sim);
        sim.run_until(ms(60_000)).unwrap();
        let mut all = vec![r#"0.004 s c1 {"obs":"leader_claim","term":1}"#];
        all.extend(want);
        assert_eq!(claims(&sim), all, "{check:?}");
    }
}

/// Judged between attempts with attempts that end (a 1.5 s request timeout): the deadline
/// (20.024) passes between attempts (the one of 17.024 failed at 18.524, the next is at
/// 20.524), so c1 steps down then, as with a timer.
#[test]
fn judged_between_attempts_a_leader_steps_down_when_no_attempt_runs() {
    let mut sim = setup(vec![(
        ClockConfig::default(),
        Box::new(|c: &mut CandidateConfig| {
            c.request_timeout = SimDuration::from_millis(1_500);
            c.step_down_check = StepDownCheck::BetweenAttempts;
        }),
    )]);
    cut_at_9s(&mut sim);
    sim.run_until(ms(30_000)).unwrap();
    assert_eq!(
        claims(&sim),
        [
            r#"0.004 s c1 {"obs":"leader_claim","term":1}"#,
            r#"20.024 s c1 {"obs":"leader_step_down","term":1}"#,
        ]
    );
}

/// `StepDownAfter::RenewDeadline` (format 1's model): no renewal at once after acquiring, so
/// renewals complete at 0.004 + k * 2.004 s; the last before the cut is at 8.020 and c1 steps
/// down exactly renew_deadline (10 s) later, at 18.020.
#[test]
fn the_leader_steps_down_at_its_renew_deadline() {
    let mut sim = setup(vec![(
        ClockConfig::default(),
        Box::new(|c: &mut CandidateConfig| c.step_down_after = StepDownAfter::RenewDeadline),
    )]);
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

/// As the client-go case, but c1's clock drops to half rate at 9 s (drift -500,000 ppm), after
/// its last renewal at 8.024. Its deadline timer was set for 12 s of local time, which the
/// engine turned into the true instant 20.024 at 8.024; it fires there while c1's clock reads
/// only 6.49 s since the renewal. c1 must wait for the rest and step down when its own clock
/// reaches the deadline: local 20.024 = 9 + (t - 9) / 2, so t = 31.048. Before the fix the
/// early firing set no new timer and c1 never stepped down.
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
            r#"31.048 s c1 {"obs":"leader_step_down","term":1}"#,
        ]
    );
}
