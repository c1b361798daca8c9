//! The lease service's knobs of issue 14, pinned exactly (1 ms fixed delays, no drift):
//! durable grants across a restart (ZooKeeper sessions, etcd leases) and the lock delay
//! (Consul sessions).

use splitbrain_engine::{ClockConfig, Fault, NodeId, Sim, SimDuration, SimTime};
use splitbrain_protocols::lease::{
    Grants, LeaseLeader, LeaseLeaderConfig, LeaseService, ServiceConfig,
};
use splitbrain_protocols::{Node, Obs};

const MS: u64 = 1_000_000;

fn ms(n: u64) -> SimTime {
    SimTime(n * MS)
}

/// A service (first token 33, `cfg` otherwise) and two leaders that never renew.
fn setup(cfg: ServiceConfig) -> (Sim<Node>, NodeId) {
    let mut sim = Sim::<Node>::new(1);
    let clock = ClockConfig::default();
    let service = sim.add_node(
        "locks",
        Node::LeaseService(LeaseService::new(ServiceConfig {
            first_token: 33,
            ..cfg
        })),
        clock,
    );
    for i in 0..2 {
        let mut c = LeaseLeaderConfig::new(service);
        c.client.renew_every = None;
        sim.add_node(
            &format!("leader-{}", i + 1),
            Node::LeaseLeader(LeaseLeader::new(c)),
            clock,
        );
    }
    (sim, service)
}

fn render(sim: &Sim<Node>) -> Vec<String> {
    sim.observations()
        .iter()
        .filter(|o| {
            matches!(
                o.obs,
                Obs::LeaseGranted { .. }
                    | Obs::LeaseFreed { .. }
                    | Obs::LeaderClaim { .. }
                    | Obs::LeaderStepDown { .. }
            )
        })
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

/// The service is down from 2 s to 3 s. Durable: the restart restores leader-1's grant 33
/// with a full TTL from 3.000 (observed as granted again, live until 13.000), so leader-2
/// (retrying every 1.002 s from 3.504) is denied throughout. leader-1 steps down at its own
/// deadline (10.000) and asks again at 11.000: as the holder it gets its grant replaced by 34
/// (33 freed, not expired). Forgetful (lesson 10's shape, `tokens_keep_increasing_across_a_
/// service_restart` in lease.rs): leader-2 gets 34 at 3.505 while leader-1 still believes.
#[test]
fn durable_grants_survive_a_restart_with_a_full_ttl() {
    let (mut sim, service) = setup(ServiceConfig {
        grants: Grants::Durable,
        ..ServiceConfig::default()
    });
    sim.schedule_fault(ms(2_000), Fault::Crash { node: service });
    sim.schedule_fault(ms(3_000), Fault::Restart { node: service });
    sim.run_until(ms(16_000)).unwrap();
    assert_eq!(
        render(&sim),
        [
            r#"0.001 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":33,"ttl_ns":10000000000}"#,
            r#"0.002 s leader-1 {"obs":"leader_claim","term":33}"#,
            r#"3.000 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":33,"ttl_ns":10000000000}"#,
            r#"10.000 s leader-1 {"obs":"leader_step_down","term":33}"#,
            r#"11.001 s locks {"obs":"lease_freed","lease":"leader","holder":1,"token":33,"expired":false}"#,
            r#"11.001 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":34,"ttl_ns":10000000000}"#,
            r#"11.002 s leader-1 {"obs":"leader_claim","term":34}"#,
        ]
    );
}

/// Lock delay 5 s: 33 expires at 10.001, and every acquire before 15.001 (service clock) is
/// denied ("lock delay"); leader-1's retry arriving at 15.009 is the first granted (34).
/// Without the delay leader-2 gets 34 at 10.021 (`tokens_strictly_increase_across_expiry_and_
/// regrant` in lease.rs).
#[test]
fn lock_delay_holds_an_expired_lease_back() {
    let (mut sim, _) = setup(ServiceConfig {
        lock_delay: SimDuration::from_secs(5),
        ..ServiceConfig::default()
    });
    sim.run_until(ms(16_000)).unwrap();
    assert_eq!(
        render(&sim),
        [
            r#"0.001 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":33,"ttl_ns":10000000000}"#,
            r#"0.002 s leader-1 {"obs":"leader_claim","term":33}"#,
            r#"10.000 s leader-1 {"obs":"leader_step_down","term":33}"#,
            r#"10.001 s locks {"obs":"lease_freed","lease":"leader","holder":1,"token":33,"expired":true}"#,
            r#"15.009 s locks {"obs":"lease_granted","lease":"leader","holder":1,"token":34,"ttl_ns":10000000000}"#,
            r#"15.010 s leader-1 {"obs":"leader_claim","term":34}"#,
        ]
    );
}
