//! Belief policies of lease clients (issue 14), pinned exactly on the partition of lease.rs:
//! leader-1 is cut from the service at 20 s; its last renewal to get through was sent at
//! 18.002, so its local deadline is 28.002 and the service frees 33 at 28.003; renewals sent
//! at 21.002, 24.002, ... time out 500 ms later. Also `renew_attempts` and the leader's
//! `start_after` and `request_timeout`.

use splitbrain_engine::{
    ClockConfig, Fault, NetRule, NodeId, Recorder, Sim, SimDuration, SimTime, TraceEvent,
};
use splitbrain_protocols::lease::{
    LeaseLeader, LeaseLeaderConfig, LeaseService, RenewFailure, ServiceConfig,
};
use splitbrain_protocols::{Node, Obs};

const MS: u64 = 1_000_000;

fn ms(n: u64) -> SimTime {
    SimTime(n * MS)
}

/// A service (first token 33) and two leaders; leader-1 configured by `tweak`, cut from the
/// service from 20 s to `heal_ms`.
fn run(tweak: impl Fn(&mut LeaseLeaderConfig), heal_ms: u64, until_ms: u64) -> Sim<Node> {
    let mut sim = Sim::<Node>::new(1);
    let clock = ClockConfig::default();
    let service = sim.add_node(
        "locks",
        Node::LeaseService(LeaseService::new(ServiceConfig {
            first_token: 33,
            ..ServiceConfig::default()
        })),
        clock,
    );
    let mut ids = Vec::new();
    for i in 0..2 {
        let mut c = LeaseLeaderConfig::new(service);
        if i == 0 {
            tweak(&mut c);
        }
        ids.push(sim.add_node(
            &format!("leader-{}", i + 1),
            Node::LeaseLeader(LeaseLeader::new(c)),
            clock,
        ));
    }
    let a = ids[0];
    sim.schedule_fault(
        ms(20_000),
        Fault::Network {
            rule: NetRule::Cut { a, b: service },
        },
    );
    sim.schedule_fault(ms(heal_ms), Fault::Heal);
    sim.run_until(ms(until_ms)).unwrap();
    sim
}

/// leader-1's `LockLost` and `LeaderStepDown` observations.
fn losses(sim: &Sim<Node>) -> Vec<String> {
    sim.observations()
        .iter()
        .filter(|o| o.node == NodeId(1))
        .filter(|o| matches!(o.obs, Obs::LockLost { .. } | Obs::LeaderStepDown { .. }))
        .map(|o| format!("{} {}", o.t, serde_json::to_string(&o.obs).unwrap()))
        .collect()
}

/// Send times of the renewals leader-1 sent, in ms (from a traced rerun of `run`).
fn renewals_sent(tweak: impl Fn(&mut LeaseLeaderConfig), heal_ms: u64, until_ms: u64) -> Vec<u64> {
    let mut sim = run(tweak, heal_ms, 0);
    sim.set_recorder(Recorder::hash_only().keep_events());
    sim.run_until(ms(until_ms)).unwrap();
    let events = sim.take_recorder().unwrap().finish().unwrap().kept.unwrap();
    events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::Send {
                t,
                from: NodeId(1),
                kind,
                ..
            } if kind == "LEASE_RENEW" => Some(t.0 / MS),
            _ => None,
        })
        .collect()
}

#[test]
fn stop_at_deadline_is_the_default_and_loses_at_the_deadline() {
    let sim = run(|_| {}, 60_000, 40_000);
    assert_eq!(
        losses(&sim),
        [
            r#"28.002 s {"obs":"lock_lost","lock":"leader","reason":"local deadline passed without renewal"}"#,
            r#"28.002 s {"obs":"leader_step_down","term":33}"#,
        ]
    );
}

#[test]
fn grace_keeps_believing_for_the_grace_after_the_deadline() {
    let sim = run(
        |c| c.client.on_renew_failure = RenewFailure::Grace(SimDuration::from_secs(5)),
        60_000,
        40_000,
    );
    assert_eq!(
        losses(&sim),
        [
            r#"33.002 s {"obs":"lock_lost","lock":"leader","reason":"grace after the local deadline passed"}"#,
            r#"33.002 s {"obs":"leader_step_down","term":33}"#,
        ]
    );
}

/// Cut until 35 s: every renewal times out and the deadline ends nothing; the renewal sent at
/// 36.002 reaches the service, which freed 33 long ago: denied at 36.003, lost at 36.004.
#[test]
fn until_denied_believes_until_the_service_says_no() {
    let sim = run(
        |c| c.client.on_renew_failure = RenewFailure::UntilDenied,
        35_000,
        40_000,
    );
    assert_eq!(
        losses(&sim),
        [
            r#"36.004 s {"obs":"lock_lost","lock":"leader","reason":"renewal denied"}"#,
            r#"36.004 s {"obs":"leader_step_down","term":33}"#,
        ]
    );
}

/// Two failed renewals (timed out at 21.502 and 24.502) and the client stops renewing, yet
/// believes on with no deadline: no loss ever, and no renewal after 24.002.
#[test]
fn renew_attempts_gives_up_renewing_but_keeps_the_belief() {
    let tweak = |c: &mut LeaseLeaderConfig| c.client.renew_attempts = Some(2);
    let sim = run(tweak, 35_000, 60_000);
    assert_eq!(losses(&sim), Vec::<String>::new());
    let sent = renewals_sent(tweak, 35_000, 60_000);
    assert_eq!(sent.last(), Some(&24_002));
    assert_eq!(sent.len(), 8); // 3.002, 6.002, ..., 24.002
}

/// `start_after` delays the first acquisition; `request_timeout` bounds each request.
#[test]
fn a_leader_starts_after_start_after_and_times_out_after_request_timeout() {
    let sim = run(
        |c| {
            c.start_after = SimDuration::from_secs(2);
            c.client.request_timeout = SimDuration::from_millis(100);
        },
        60_000,
        1_000,
    );
    // leader-2 got the lease at 0.001; leader-1 has not asked yet.
    assert!(!sim.observations().iter().any(|o| o.node == NodeId(1)));
    let sim = run(
        |c| {
            c.start_after = SimDuration::from_secs(2);
            c.client.request_timeout = SimDuration::from_millis(100);
        },
        60_000,
        3_000,
    );
    let l1: Vec<String> = sim
        .observations()
        .iter()
        .filter(|o| o.node == NodeId(1))
        .map(|o| format!("{} {}", o.t, serde_json::to_string(&o.obs).unwrap()))
        .collect();
    assert_eq!(
        l1[..2],
        [
            r#"2.000 s {"obs":"lock_requested","lock":"leader","servers":[0]}"#.to_string(),
            r#"2.002 s {"obs":"lock_failed","lock":"leader","reason":"denied: held by another client"}"#.to_string(),
        ]
    );
    // Cut from the service at 20 s, its next attempt times out exactly 100 ms after it asked.
    let sim = run(
        |c| {
            c.start_after = SimDuration::from_secs(2);
            c.client.request_timeout = SimDuration::from_millis(100);
        },
        60_000,
        22_000,
    );
    let obs: Vec<_> = sim
        .observations()
        .iter()
        .filter(|o| o.node == NodeId(1))
        .collect();
    let i = obs
        .iter()
        .position(|o| matches!(&o.obs, Obs::LockFailed { reason, .. } if reason == "timeout"))
        .expect("a timed-out attempt");
    assert!(matches!(obs[i - 1].obs, Obs::LockRequested { .. }));
    assert_eq!(obs[i].t.0 - obs[i - 1].t.0, 100 * MS);
}
