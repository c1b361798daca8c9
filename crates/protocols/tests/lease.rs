//! Lease service, lease client and lease-based leader, pinned exactly (1 ms fixed delays, no
//! drift unless stated): fencing tokens, expiry, renewal, restart, partitions, the classic
//! "keeps believing after renewals fail" bug.

use splitbrain_engine::{ClockConfig, Fault, NetRule, NodeId, Sim, SimDuration, SimTime};
use splitbrain_protocols::lease::{
    LeaseLeader, LeaseLeaderConfig, LeaseService, RenewFailure, ServiceConfig,
};
use splitbrain_protocols::storage::{FencedStorage, StorageConfig};
use splitbrain_protocols::{Node, Obs};

const MS: u64 = 1_000_000;

fn ms(n: u64) -> SimTime {
    SimTime(n * MS)
}

/// One line per observation: true time, node name, the observation as JSON.
fn render(sim: &Sim<Node>, filter: impl Fn(&Obs) -> bool) -> Vec<String> {
    sim.observations()
        .iter()
        .filter(|o| filter(&o.obs))
        .map(|o| {
            format!(
                "{} {} {}",
                o.t,
                sim.names()[o.node.index()],
                serde_json::to_string(&o.obs).expect("serialisable")
            )
        })
        .collect()
}

struct Setup {
    sim: Sim<Node>,
    service: NodeId,
    leaders: Vec<NodeId>,
    storage: Option<NodeId>,
}

/// A service (first token 33) and `n` leaders configured by `tweak(i, cfg)`.
fn leaders(
    n: usize,
    storage: Option<bool>,
    tweak: impl Fn(usize, &mut LeaseLeaderConfig),
) -> Setup {
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
    let storage = storage.map(|fencing| {
        sim.add_node(
            "storage",
            Node::Storage(FencedStorage::new(StorageConfig { fencing })),
            clock,
        )
    });
    let leaders = (0..n)
        .map(|i| {
            let mut cfg = LeaseLeaderConfig::new(service);
            cfg.write_to = storage;
            tweak(i, &mut cfg);
            sim.add_node(
                &format!("leader-{}", i + 1),
                Node::LeaseLeader(LeaseLeader::new(cfg)),
                clock,
            )
        })
        .collect();
    Setup {
        sim,
        service,
        leaders,
        storage,
    }
}

fn run(s: &mut Setup, until_ms: u64) {
    s.sim.run_until(ms(until_ms)).expect("bounded run");
}

fn is_service(o: &Obs) -> bool {
    matches!(
        o,
        Obs::LeaseGranted { .. } | Obs::LeaseRenewed { .. } | Obs::LeaseFreed { .. }
    )
}

fn is_leadership(o: &Obs) -> bool {
    matches!(
        o,
        Obs::LeaderClaim { .. } | Obs::LeaderStepDown { .. } | Obs::LockLost { .. }
    )
}

fn granted_tokens(sim: &Sim<Node>) -> Vec<u64> {
    sim.observations()
        .iter()
        .filter_map(|o| match o.obs {
            Obs::LeaseGranted { token, .. } => Some(token),
            _ => None,
        })
        .collect()
}

/// The belief policy of the old `stop_on_renew_failure` switch: `true` stops at the
/// deadline, `false` is the classic bug.
fn policy(stop_on_renew_failure: bool) -> RenewFailure {
    if stop_on_renew_failure {
        RenewFailure::StopAtDeadline
    } else {
        RenewFailure::KeepBelieving
    }
}

fn no_renewal(_: usize, c: &mut LeaseLeaderConfig) {
    c.client.renew_every = None;
}

/// Two leaders without renewal: leader-1 gets 33 at 0.001; it believes until its send time
/// (0) + ttl = 10.000 and the service frees it at 0.001 + 10 s = 10.001 (timer-exact).
/// leader-2, denied every 1.002 s, asks at 1.002 * 10 = 10.020: 34. leader-1 retries 1 s
/// after losing (11.000, then every 1.002 s) and is denied until 34 expires at 20.021; both
/// ask at 21.020, leader-2's request is first in line: 35.
#[test]
fn tokens_strictly_increase_across_expiry_and_regrant() {
    let mut s = leaders(2, None, no_renewal);
    run(&mut s, 25_000);
    assert_eq!(
        render(&s.sim, |o| is_service(o) || is_leadership(o)),
        [
            r#"0.001 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":33,"ttl_ns":10000000000}"#,
            r#"0.002 s leader-1 {"obs":"leader_claim","term":33}"#,
            r#"10.000 s leader-1 {"obs":"lock_lost","lock":"leader","reason":"local deadline passed without renewal"}"#,
            r#"10.000 s leader-1 {"obs":"leader_step_down","term":33}"#,
            r#"10.001 s locks {"obs":"lease_freed","lease":"leader","holder":1,"token":33,"expired":true}"#,
            r#"10.021 s locks {"obs":"lease_granted","lease":"leader","holder":2,"token":34,"ttl_ns":10000000000}"#,
            r#"10.022 s leader-2 {"obs":"leader_claim","term":34}"#,
            r#"20.020 s leader-2 {"obs":"lock_lost","lock":"leader","reason":"local deadline passed without renewal"}"#,
            r#"20.020 s leader-2 {"obs":"leader_step_down","term":34}"#,
            r#"20.021 s locks {"obs":"lease_freed","lease":"leader","holder":2,"token":34,"expired":true}"#,
            r#"21.021 s locks {"obs":"lease_granted","lease":"leader","holder":2,"token":35,"ttl_ns":10000000000}"#,
            r#"21.022 s leader-2 {"obs":"leader_claim","term":35}"#,
        ]
    );
    // Every denied attempt is reported: leader-2 at 1.002 * k for k = 0..=9 (ten times), never
    // after; leader-1 at 11.000 + 1.002 * j for j = 0..=10 (up to 21.020, where leader-2 is
    // first in line) and at 22.022, 23.024, 24.026: fourteen times.
    let failed = |n: NodeId| {
        s.sim
            .observations()
            .iter()
            .filter(|o| o.node == n && matches!(o.obs, Obs::LockFailed { .. }))
            .count()
    };
    assert_eq!(failed(s.leaders[1]), 10);
    assert_eq!(failed(s.leaders[0]), 14);
    let Node::LeaseService(svc) = s.sim.actor(s.service) else {
        unreachable!()
    };
    assert_eq!(svc.next_token(), 36);
}

/// The token counter is durable, grants are not: the service crashes at 2 s holding grant 33
/// for leader-1 and restarts at 3 s with an empty table. leader-2's attempt sent at 2.004 is
/// dropped at the dead service, times out at 2.504 (500 ms), and its retry at 3.504 gets 34,
/// never 33 again, while leader-1 still believes until 10.000 (the restart's lesson: grants
/// are volatile, only fencing orders the two holders).
#[test]
fn tokens_keep_increasing_across_a_service_restart() {
    let mut s = leaders(2, None, no_renewal);
    s.sim
        .schedule_fault(ms(2_000), Fault::Crash { node: s.service });
    s.sim
        .schedule_fault(ms(3_000), Fault::Restart { node: s.service });
    run(&mut s, 12_000);
    assert_eq!(
        render(&s.sim, |o| is_service(o) || is_leadership(o)),
        [
            r#"0.001 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":33,"ttl_ns":10000000000}"#,
            r#"0.002 s leader-1 {"obs":"leader_claim","term":33}"#,
            r#"3.505 s locks {"obs":"lease_granted","lease":"leader","holder":2,"token":34,"ttl_ns":10000000000}"#,
            r#"3.506 s leader-2 {"obs":"leader_claim","term":34}"#,
            r#"10.000 s leader-1 {"obs":"lock_lost","lock":"leader","reason":"local deadline passed without renewal"}"#,
            r#"10.000 s leader-1 {"obs":"leader_step_down","term":33}"#,
        ]
    );
    // The grant to leader-1 died with the crash: no expiry is ever reported for it.
    let Node::LeaseService(svc) = s.sim.actor(s.service) else {
        unreachable!()
    };
    assert_eq!(svc.next_token(), 35);
    assert_eq!(svc.grant("leader").map(|g| g.token), Some(34));
}

/// A renewing holder keeps the lease: renewals are sent every 3 s from the grant's arrival
/// (3.002, 6.002, ...), the service renews at 3.003, 6.003, ..., and the client's new belief
/// deadline (observed when the reply lands, 3.004) is measured from the renewal's **send**
/// time: 3.002 + 10 s = 13.002.
#[test]
fn renewal_by_the_holder_extends_and_others_stay_denied() {
    let mut s = leaders(2, None, |_, _| {});
    run(&mut s, 10_000);
    assert_eq!(granted_tokens(&s.sim), [33]);
    let renewals: Vec<SimTime> = s
        .sim
        .observations()
        .iter()
        .filter(|o| matches!(o.obs, Obs::LeaseRenewed { token: 33, .. }))
        .map(|o| o.t)
        .collect();
    assert_eq!(renewals, [ms(3_003), ms(6_003), ms(9_003)]);
    let belief: Vec<String> = render(&s.sim, |o| matches!(o, Obs::LockRenewed { .. }));
    assert_eq!(
        belief,
        [
            r#"3.004 s leader-1 {"obs":"lock_renewed","lock":"leader","token":33,"valid_until_local":13002000000}"#,
            r#"6.004 s leader-1 {"obs":"lock_renewed","lock":"leader","token":33,"valid_until_local":16002000000}"#,
            r#"9.004 s leader-1 {"obs":"lock_renewed","lock":"leader","token":33,"valid_until_local":19002000000}"#,
        ]
    );
}

/// A safety margin moves the belief deadline earlier by exactly the margin:
/// send time 0 + ttl 10 s - margin 0.5 s = 9.500 s true (zero drift); the service still frees
/// the grant at 10.001.
#[test]
fn lock_lost_at_send_time_plus_ttl_minus_margin() {
    let mut s = leaders(1, None, |_, c| {
        c.client.renew_every = None;
        c.client.safety_margin = SimDuration::from_millis(500);
    });
    run(&mut s, 10_500);
    assert_eq!(
        render(&s.sim, |o| is_service(o)
            || is_leadership(o)
            || matches!(o, Obs::LockAcquired { .. })),
        [
            r#"0.001 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":33,"ttl_ns":10000000000}"#,
            r#"0.002 s leader-1 {"obs":"lock_acquired","lock":"leader","token":33,"value":"33","valid_until_local":9500000000}"#,
            r#"0.002 s leader-1 {"obs":"leader_claim","term":33}"#,
            r#"9.500 s leader-1 {"obs":"lock_lost","lock":"leader","reason":"local deadline passed without renewal"}"#,
            r#"9.500 s leader-1 {"obs":"leader_step_down","term":33}"#,
            r#"10.001 s locks {"obs":"lease_freed","lease":"leader","holder":1,"token":33,"expired":true}"#,
        ]
    );
}

/// With a drifting clock the deadline is local: leader-1's clock runs 10% fast (+100_000 ppm),
/// so its 10 s local deadline comes at 10 / 1.1 s = 9.090909091 s true (first true ns whose
/// reading reaches 10 s), before the service (no drift) frees the grant at 10.001. Its retry,
/// 1 s local later, goes out at exactly 10.000 true and reaches the service at 10.001, the
/// instant the grant expires: the expiry timer (scheduled first) runs first, then token 2.
#[test]
fn deadline_is_on_the_clients_own_clock() {
    let mut sim = Sim::<Node>::new(1);
    let service = sim.add_node(
        "locks",
        Node::LeaseService(LeaseService::new(ServiceConfig::default())),
        ClockConfig::default(),
    );
    let mut cfg = LeaseLeaderConfig::new(service);
    cfg.client.renew_every = None;
    sim.add_node(
        "leader-1",
        Node::LeaseLeader(LeaseLeader::new(cfg)),
        ClockConfig {
            drift_ppm: 100_000,
            wall_offset_ns: 0,
            ..ClockConfig::default()
        },
    );
    sim.run_until(ms(10_500)).expect("bounded run");
    let lost: Vec<SimTime> = sim
        .observations()
        .iter()
        .filter(|o| matches!(o.obs, Obs::LockLost { .. }))
        .map(|o| o.t)
        .collect();
    assert_eq!(lost, [SimTime(9_090_909_091)]);
    assert_eq!(
        render(&sim, is_service),
        [
            r#"0.001 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":1,"ttl_ns":10000000000}"#,
            r#"10.001 s locks {"obs":"lease_freed","lease":"leader","holder":1,"token":1,"expired":true}"#,
            r#"10.001 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":2,"ttl_ns":10000000000}"#,
        ]
    );
}

/// leader-1 is cut off from the service at 20 s. Its renewals go out at 3.002 + 3k s; the last
/// one to get through was sent at 18.002, so:
/// - correct client (`stop_on_renew_failure: true`): renewals at 21.002 and 24.002 time out
///   silently and it loses the lease at exactly 18.002 + 10 = 28.002 s, just before the
///   service frees it at 18.003 + 10 = 28.003; leader-2 takes over with 34;
/// - buggy client (`false`): every timed-out renewal (at send + 500 ms) extends its own belief
///   to send + 10 s; it never emits `LockLost`, so two leaders claim at once from 28.x on.
fn partitioned(stop_on_renew_failure: bool) -> Setup {
    let mut s = leaders(2, None, |i, c| {
        if i == 0 {
            c.client.on_renew_failure = policy(stop_on_renew_failure);
        }
    });
    let (a, b) = (s.leaders[0], s.service);
    s.sim.schedule_fault(
        ms(20_000),
        Fault::Network {
            rule: NetRule::Cut { a, b },
        },
    );
    run(&mut s, 40_000);
    s
}

#[test]
fn correct_client_loses_the_lease_at_its_deadline_under_a_partition() {
    let s = partitioned(true);
    let l1 = s.leaders[0];
    let lost: Vec<String> = render(&s.sim, |o| {
        matches!(
            o,
            Obs::LockLost { .. } | Obs::LeaderStepDown { .. } | Obs::LeaseFreed { .. }
        )
    });
    assert_eq!(
        lost,
        [
            r#"28.002 s leader-1 {"obs":"lock_lost","lock":"leader","reason":"local deadline passed without renewal"}"#,
            r#"28.002 s leader-1 {"obs":"leader_step_down","term":33}"#,
            r#"28.003 s locks {"obs":"lease_freed","lease":"leader","holder":1,"token":33,"expired":true}"#,
        ]
    );
    assert_eq!(granted_tokens(&s.sim), [33, 34]);
    let Node::LeaseLeader(l) = s.sim.actor(l1) else {
        unreachable!()
    };
    assert_eq!(l.term(), None);
}

#[test]
fn buggy_client_keeps_believing_under_a_partition() {
    let s = partitioned(false);
    let l1 = s.leaders[0];
    assert!(!s.sim.observations().iter().any(
        |o| o.node == l1 && matches!(o.obs, Obs::LockLost { .. } | Obs::LeaderStepDown { .. })
    ));
    // Its belief after the cut: renewal sent at 21.002 times out at 21.502 and pushes the
    // deadline to 31.002; then 24.002 -> 34.002, and so on every 3 s.
    let self_extended: Vec<String> = render(&s.sim, |o| matches!(o, Obs::LockRenewed { .. }))
        .into_iter()
        .filter(|l| l.starts_with("21.") || l.starts_with("24."))
        .collect();
    assert_eq!(
        self_extended,
        [
            r#"21.502 s leader-1 {"obs":"lock_renewed","lock":"leader","token":33,"valid_until_local":31002000000}"#,
            r#"24.502 s leader-1 {"obs":"lock_renewed","lock":"leader","token":33,"valid_until_local":34002000000}"#,
        ]
    );
    // Meanwhile the service expired 33 and leader-2 claims 34: two leaders at once.
    assert_eq!(granted_tokens(&s.sim), [33, 34]);
    let terms: Vec<Option<u64>> = s
        .leaders
        .iter()
        .map(|&n| match s.sim.actor(n) {
            Node::LeaseLeader(l) => l.term(),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(terms, [Some(33), Some(34)]);
}

/// A denied renewal (the restarted service forgot the grant) ends a correct client's belief at
/// once; the buggy client carries on. Service down 4 s to 5 s; leader-1's renewal sent at
/// 6.002 is denied at 6.003 and the reply lands at 6.004.
#[test]
fn denied_renewal_loses_at_once_unless_buggy() {
    for stop in [true, false] {
        let mut s = leaders(1, None, |_, c| c.client.on_renew_failure = policy(stop));
        s.sim
            .schedule_fault(ms(4_000), Fault::Crash { node: s.service });
        s.sim
            .schedule_fault(ms(5_000), Fault::Restart { node: s.service });
        run(&mut s, 7_000);
        let after: Vec<String> = render(&s.sim, |o| {
            matches!(
                o,
                Obs::LockLost { .. } | Obs::LockRenewed { .. } | Obs::LeaderStepDown { .. }
            )
        })
        .into_iter()
        .filter(|l| l.starts_with("6."))
        .collect();
        if stop {
            assert_eq!(
                after,
                [
                    r#"6.004 s leader-1 {"obs":"lock_lost","lock":"leader","reason":"renewal denied"}"#,
                    r#"6.004 s leader-1 {"obs":"leader_step_down","term":33}"#,
                ]
            );
        } else {
            assert_eq!(
                after,
                [
                    r#"6.004 s leader-1 {"obs":"lock_renewed","lock":"leader","token":33,"valid_until_local":16002000000}"#
                ]
            );
        }
    }
}

/// The leader that keeps acting: leader-1 (buggy) is cut off from the service but not from
/// the storage, and writes every second with its token. Unfenced storage accepts 33, then 34,
/// then 33 again (the `no_two_accepted_writers` violation); fenced storage rejects every 33
/// after the first 34.
#[test]
fn buggy_leader_keeps_writing_and_only_fencing_stops_it() {
    for fencing in [false, true] {
        let mut s = leaders(2, Some(fencing), |i, c| {
            if i == 0 {
                c.client.on_renew_failure = RenewFailure::KeepBelieving;
            }
        });
        let (a, b) = (s.leaders[0], s.service);
        s.sim.schedule_fault(
            ms(20_000),
            Fault::Network {
                rule: NetRule::Cut { a, b },
            },
        );
        run(&mut s, 35_000);
        // Accepted (token, writer) in acceptance order, runs collapsed.
        let mut accepted: Vec<(u64, NodeId)> = Vec::new();
        let mut rejected = 0;
        for o in s.sim.observations() {
            match o.obs {
                Obs::WriteAccepted { writer, token, .. } => {
                    let e = (token.expect("leaders write with their token"), writer);
                    if accepted.last() != Some(&e) {
                        accepted.push(e);
                    }
                }
                Obs::WriteRejected { ref reason, .. } => {
                    assert_eq!(reason, "stale token");
                    rejected += 1;
                }
                _ => {}
            }
        }
        let (l1, l2) = (s.leaders[0], s.leaders[1]);
        if fencing {
            assert_eq!(accepted, [(33, l1), (34, l2)]);
            assert!(rejected > 0);
        } else {
            assert_eq!(accepted[..3], [(33, l1), (34, l2), (33, l1)]);
            assert_eq!(rejected, 0);
        }
        let Node::Storage(st) = s.sim.actor(s.storage.expect("storage")) else {
            unreachable!()
        };
        assert_eq!(st.highest(), Some(34));
    }
}

/// A leader that crashes and restarts re-acquires at once (3.000): the service replaces its
/// still-live grant 33 with a new one, so its second claim has a greater term (34).
#[test]
fn a_restarted_leader_claims_a_greater_term() {
    let mut s = leaders(1, None, |_, _| {});
    let l1 = s.leaders[0];
    s.sim.schedule_fault(ms(2_000), Fault::Crash { node: l1 });
    s.sim.schedule_fault(ms(3_000), Fault::Restart { node: l1 });
    run(&mut s, 5_000);
    assert_eq!(
        render(&s.sim, |o| is_service(o) || is_leadership(o)),
        [
            r#"0.001 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":33,"ttl_ns":10000000000}"#,
            r#"0.002 s leader-1 {"obs":"leader_claim","term":33}"#,
            r#"3.001 s locks {"obs":"lease_freed","lease":"leader","holder":1,"token":33,"expired":false}"#,
            r#"3.001 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":34,"ttl_ns":10000000000}"#,
            r#"3.002 s leader-1 {"obs":"leader_claim","term":34}"#,
        ]
    );
}

/// A request timeout shorter than the round trip (1 ms < 2 ms): the attempt fails at 0.001,
/// the grant's reply lands at 0.002 for an abandoned request, and the client hands the lease
/// straight back (freed at 0.003) instead of leaving it to expire 10 s later.
#[test]
fn a_late_grant_is_released_at_once() {
    let mut s = leaders(1, None, |_, c| {
        c.client.request_timeout = SimDuration::from_millis(1);
    });
    run(&mut s, 1_500);
    assert_eq!(
        render(&s.sim, |o| is_service(o)
            || !matches!(o, Obs::LockRequested { .. })),
        [
            r#"0.001 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":33,"ttl_ns":10000000000}"#,
            r#"0.001 s leader-1 {"obs":"lock_failed","lock":"leader","reason":"timeout"}"#,
            r#"0.003 s locks {"obs":"lease_freed","lease":"leader","holder":1,"token":33,"expired":false}"#,
            r#"1.002 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":34,"ttl_ns":10000000000}"#,
            r#"1.002 s leader-1 {"obs":"lock_failed","lock":"leader","reason":"timeout"}"#,
            r#"1.004 s locks {"obs":"lease_freed","lease":"leader","holder":1,"token":34,"expired":false}"#,
        ]
    );
}
