//! A lock client's belief ends at its local deadline even when its clock's rate changes
//! during the hold.
//!
//! The engine used to convert a timer's local duration into a true instant when the timer was
//! set and keep that instant: after a drift change that slowed the client's clock, its
//! `Deadline` timer fired while the local clock still read before the deadline, and the
//! handlers, which ignored the early firing and set no new timer, never reported `LockLost`.
//! The handlers now re-arm for the rest of the local time on an early firing, and the engine
//! now re-schedules pending timers on a drift change (`Fault::SetDrift`), so the timer fires
//! at the deadline itself; these tests pin the end result either way.
//!
//! Setup for every lock kind: 1 ms links, perfect clocks except the client's, which runs at
//! true rate until `CHANGE` (5 s) and at half rate from then on (drift -500,000 ppm). TTL 10 s,
//! work 30 s (so the worker holds without renewal until the belief ends), no renewal, one round.
//! With `V` the local deadline the client reports in `LockAcquired`, the client's clock reads
//! `5 s + (t - 5 s) / 2` after the change, so the belief must end at true `5 s + 2 (V - 5 s)`.

use splitbrain_engine::{ClockConfig, Fault, NodeId, Sim, SimDuration, SimTime};
use splitbrain_protocols::lease::{LeaseClientConfig, LeaseService, ServiceConfig};
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::redis_instance::{RedisInstance, RedisInstanceConfig};
use splitbrain_protocols::redis_lock::RedisLockConfig;
use splitbrain_protocols::redlock::RedlockConfig;
use splitbrain_protocols::storage::{FencedStorage, StorageConfig};
use splitbrain_protocols::worker::{Worker, WorkerConfig};
use splitbrain_protocols::{Node, Obs};

/// True instant of the drift change, ns.
const CHANGE: u64 = 5_000_000_000;

/// Which lock client the worker drives.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Lease,
    Redis,
    Redlock,
}

/// Runs one worker of `kind` whose clock changes to `drift_ppm` at `CHANGE`, for 60 s;
/// returns the true instant its belief began, its local deadline, and the instants of its
/// `LockLost` observations.
fn run(kind: Kind, drift_ppm: i64) -> (SimTime, u64, Vec<SimTime>) {
    let mut sim = Sim::<Node>::new(5);
    let clock = ClockConfig::default();
    let storage = sim.add_node(
        "storage",
        Node::Storage(FencedStorage::new(StorageConfig { fencing: false })),
        clock,
    );
    let lock = match kind {
        Kind::Lease => {
            let svc = sim.add_node(
                "locks",
                Node::LeaseService(LeaseService::new(ServiceConfig::default())),
                clock,
            );
            LockConfig::Lease(LeaseClientConfig::new(svc, "lock"))
        }
        Kind::Redis => {
            let r = sim.add_node(
                "redis",
                Node::RedisInstance(RedisInstance::new(RedisInstanceConfig::default())),
                clock,
            );
            LockConfig::Redis(RedisLockConfig::new(r, "lock"))
        }
        Kind::Redlock => {
            let rs: Vec<NodeId> = (1..=3)
                .map(|i| {
                    sim.add_node(
                        &format!("r{i}"),
                        Node::RedisInstance(RedisInstance::new(RedisInstanceConfig::default())),
                        clock,
                    )
                })
                .collect();
            LockConfig::Redlock(RedlockConfig::new(rs, "lock"))
        }
    };
    let mut cfg = WorkerConfig::new(lock, storage);
    cfg.work_time = SimDuration::from_secs(30);
    cfg.rounds = Some(1);
    let client = sim.add_node("client", Node::Worker(Worker::new(cfg)), clock);
    sim.schedule_fault(
        SimTime(CHANGE),
        Fault::SetDrift {
            node: client,
            drift_ppm,
        },
    );
    sim.run_until(SimTime(60_000_000_000)).unwrap();
    let mine = || sim.observations().iter().filter(|o| o.node == client);
    let (acquired, until) = mine()
        .find_map(|o| match &o.obs {
            Obs::LockAcquired {
                valid_until_local, ..
            } => Some((o.t, valid_until_local.0)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{kind:?}: the client never acquired"));
    let lost = mine()
        .filter(|o| matches!(o.obs, Obs::LockLost { .. }))
        .map(|o| o.t)
        .collect();
    (acquired, until, lost)
}

/// The clock slows to half rate mid-hold: the belief ends exactly when the local clock reaches
/// the deadline, `5 s + 2 (V - 5 s)` true.
#[test]
fn slowed_clock_loses_the_lock_at_its_local_deadline() {
    let wrong: Vec<String> = [Kind::Lease, Kind::Redis, Kind::Redlock]
        .into_iter()
        .filter_map(|kind| {
            let (acquired, until, lost) = run(kind, -500_000);
            assert!(
                acquired.0 < CHANGE && until > CHANGE,
                "{kind:?}: change mid-hold"
            );
            let expected = vec![SimTime(CHANGE + 2 * (until - CHANGE))];
            (lost != expected).then(|| format!("{kind:?}: lost at {lost:?}, expected {expected:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Control: at constant rate (a drift change to 0 ppm changes nothing) the belief ends at
/// the deadline itself, `V` true.
#[test]
fn unchanged_clock_loses_the_lock_at_its_deadline() {
    for kind in [Kind::Lease, Kind::Redis, Kind::Redlock] {
        let (_, until, lost) = run(kind, 0);
        assert_eq!(lost, vec![SimTime(until)], "{kind:?}");
    }
}
