//! The Redis instance actor, pinned exactly (1 ms fixed delays, perfect clocks unless
//! stated): the expiry boundary through the actor to the nanosecond, wall-clock steps,
//! persistence across a crash and restart, and the delayed restart.
//!
//! Clients are workers with single-instance Redis locks (`SET key value NX PX ttl`), since
//! they are the actors that send commands; a worker with a long `work_time` just holds.

use splitbrain_engine::{ClockConfig, Fault, NodeId, Sim, SimDuration, SimTime, WallTime};
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::redis::Persistence;
use splitbrain_protocols::redis_instance::{RedisInstance, RedisInstanceConfig};
use splitbrain_protocols::redis_lock::RedisLockConfig;
use splitbrain_protocols::storage::{FencedStorage, StorageConfig};
use splitbrain_protocols::worker::{Worker, WorkerConfig};
use splitbrain_protocols::{Node, Obs};

const MS: u64 = 1_000_000;

fn ms(n: u64) -> SimTime {
    SimTime(n * MS)
}

struct Setup {
    sim: Sim<Node>,
    redis: NodeId,
    storage: NodeId,
}

fn setup(cfg: RedisInstanceConfig) -> Setup {
    let mut sim = Sim::<Node>::new(1);
    let redis = sim.add_node(
        "redis",
        Node::RedisInstance(RedisInstance::new(cfg)),
        ClockConfig::default(),
    );
    let storage = sim.add_node(
        "storage",
        Node::Storage(FencedStorage::new(StorageConfig { fencing: false })),
        ClockConfig::default(),
    );
    Setup {
        sim,
        redis,
        storage,
    }
}

impl Setup {
    /// A worker that acquires `key` (ttl `ttl_ms`) after `start_after` and then holds it for
    /// a minute of "work".
    fn holder(&mut self, name: &str, key: &str, ttl_ms: u64, start_after: SimDuration) -> NodeId {
        let mut lock = RedisLockConfig::new(self.redis, key);
        lock.ttl = SimDuration::from_millis(ttl_ms);
        let mut cfg = WorkerConfig::new(LockConfig::Redis(lock), self.storage);
        cfg.start_after = start_after;
        cfg.work_time = SimDuration::from_secs(60);
        cfg.rounds = Some(1);
        self.sim
            .add_node(name, Node::Worker(Worker::new(cfg)), ClockConfig::default())
    }

    fn run(&mut self, until: SimTime) {
        self.sim.run_until(until).expect("bounded run");
    }

    /// The instance's truth observations: (true time, observation).
    fn truth(&self) -> Vec<(SimTime, Obs)> {
        self.sim
            .observations()
            .iter()
            .filter(|o| o.node == self.redis)
            .map(|o| (o.t, o.obs.clone()))
            .collect()
    }

    /// `node`'s observations of the given kinds, with their true times.
    fn of(&self, node: NodeId, kinds: &[&str]) -> Vec<(SimTime, Obs)> {
        use splitbrain_engine::Observation;
        self.sim
            .observations()
            .iter()
            .filter(|o| o.node == node && kinds.contains(&o.obs.kind()))
            .map(|o| (o.t, o.obs.clone()))
            .collect()
    }

    fn value_of(&self, node: NodeId) -> String {
        self.sim
            .observations()
            .iter()
            .find_map(|o| match &o.obs {
                Obs::LockAcquired { value, .. } if o.node == node => Some(value.clone()),
                _ => None,
            })
            .expect("acquired")
    }
}

fn key_set(key: &str, value: &str, deadline_ns: i64) -> Obs {
    Obs::RedisKeySet {
        key: key.to_string(),
        value: value.to_string(),
        deadline_wall: Some(WallTime(deadline_ns)),
    }
}

/// A key set with PX 30,000 is gone for SET NX once the instance's wall clock passes the
/// deadline, and still there one nanosecond before.
///
/// client-1's SET arrives at wall 0.001 s: deadline 1 + 30,000 = 30,001 ms, alive through the
/// whole millisecond 30,001 (Redis expires at `now_ms > deadline_ms`), so the first expired
/// wall instant is 30.002 s: the observed `deadline_wall`. client-2's SET NX arrives one
/// nanosecond before it (nil), client-3's exactly at it (OK).
#[test]
fn px_30000_expires_at_the_first_wall_instant_past_the_deadline() {
    let mut s = setup(RedisInstanceConfig::default());
    let c1 = s.holder("client-1", "lock", 30_000, SimDuration::ZERO);
    let c2 = s.holder("client-2", "lock", 30_000, SimDuration(30_001 * MS - 1));
    let c3 = s.holder("client-3", "lock", 30_000, SimDuration(30_001 * MS));
    s.run(ms(30_500));

    let v1 = s.value_of(c1);
    let v3 = s.value_of(c3);
    assert_eq!(
        s.truth(),
        vec![
            (ms(1), key_set("lock", &v1, 30_002_000_000)),
            (ms(30_002), key_set("lock", &v3, 60_003_000_000)),
        ]
    );
    assert_eq!(
        s.of(c2, &["lock_failed", "lock_acquired"]),
        vec![(
            SimTime(30_003 * MS - 1),
            Obs::LockFailed {
                thread: None,
                lock: "lock".into(),
                reason: "held by another client (SET NX replied nil)".into()
            }
        )]
    );
    assert_eq!(s.of(c3, &["lock_acquired"]).len(), 1);
    assert_eq!(s.of(c3, &["lock_acquired"])[0].0, ms(30_003));
    // client-1 stopped believing at its own deadline (0 + 30 s), before the key expired.
    assert_eq!(
        s.of(c1, &["lock_lost"]),
        vec![(
            ms(30_000),
            Obs::LockLost {
                thread: None,
                lock: "lock".into(),
                reason: "TTL passed by the local clock".into()
            }
        )]
    );
}

/// A forward step of the instance's wall clock expires its keys early (Redis keeps absolute
/// wall deadlines): +20 s at 5 s makes the 30 s key expire at true time 10.002 s.
#[test]
fn a_wall_clock_step_expires_a_key_early() {
    let mut s = setup(RedisInstanceConfig::default());
    let c1 = s.holder("client-1", "lock", 30_000, SimDuration::ZERO);
    let c2 = s.holder("client-2", "lock", 30_000, SimDuration(10_001 * MS - 1));
    let c3 = s.holder("client-3", "lock", 30_000, SimDuration(10_001 * MS));
    let redis = s.redis;
    s.sim.schedule_fault(
        ms(5_000),
        Fault::ClockStep {
            node: redis,
            delta_ns: 20_000 * MS as i64,
        },
    );
    s.run(ms(10_500));
    let v1 = s.value_of(c1);
    let v3 = s.value_of(c3);
    // client-3's SET at true 10.002 s reads wall 30.002 s; its key lives until wall 60.003 s.
    assert_eq!(
        s.truth(),
        vec![
            (ms(1), key_set("lock", &v1, 30_002_000_000)),
            (ms(10_002), key_set("lock", &v3, 60_003_000_000)),
        ]
    );
    assert_eq!(s.of(c2, &["lock_failed"]).len(), 1);
    assert_eq!(s.of(c2, &["lock_acquired"]), vec![]);
    // client-1 still believes: its monotonic clock did not step.
    assert_eq!(s.of(c1, &["lock_lost"]), vec![]);
}

/// Key "a" is written at 0.001 s (before the first fsync tick at 1 s), key "b" at 2.501 s
/// (after the tick at 2 s); the instance crashes at 2.900 s and restarts at 3 s.
fn crash_and_restart(persistence: Persistence) -> Vec<(SimTime, Obs)> {
    let mut s = setup(RedisInstanceConfig {
        persistence,
        restart_delay: SimDuration::ZERO,
        ..Default::default()
    });
    s.holder("client-1", "a", 30_000, SimDuration::ZERO);
    s.holder("client-2", "b", 30_000, SimDuration::from_millis(2_500));
    let redis = s.redis;
    s.sim
        .schedule_fault(ms(2_900), Fault::Crash { node: redis });
    s.sim
        .schedule_fault(ms(3_000), Fault::Restart { node: redis });
    s.run(ms(3_500));
    s.truth()
}

fn survivors(truth: &[(SimTime, Obs)]) -> Vec<(String, Option<WallTime>)> {
    let restarted: Vec<_> = truth
        .iter()
        .filter_map(|(t, o)| match o {
            Obs::RedisRestarted { keys } => Some((*t, keys.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(restarted.len(), 1);
    assert_eq!(restarted[0].0, ms(3_000), "back at once without a delay");
    restarted[0]
        .1
        .iter()
        .map(|(k, _, d)| (k.clone(), *d))
        .collect()
}

#[test]
fn persistence_across_a_crash() {
    let a = ("a".to_string(), Some(WallTime(30_002_000_000)));
    let b = ("b".to_string(), Some(WallTime(32_502_000_000)));
    // none: nothing survives.
    assert_eq!(survivors(&crash_and_restart(Persistence::None)), vec![]);
    // aof_always: every write survives, with its absolute deadline.
    assert_eq!(
        survivors(&crash_and_restart(Persistence::AofAlways)),
        vec![a.clone(), b]
    );
    // aof_everysec: the last second is lost ("b" came after the 2 s fsync).
    assert_eq!(
        survivors(&crash_and_restart(Persistence::AofEverysec)),
        vec![a]
    );
}

/// Persistence none, a key held by client-1 (ttl 30 s); the instance crashes at 5 s and
/// restarts at 6 s. client-2 tries from 7 s (request timeout 500 ms, think 1 s: every 1.5 s).
fn restart_story(restart_delay: SimDuration) -> (Setup, NodeId) {
    let mut s = setup(RedisInstanceConfig {
        persistence: Persistence::None,
        restart_delay,
        ..Default::default()
    });
    s.holder("client-1", "lock", 30_000, SimDuration::ZERO);
    let c2 = s.holder("client-2", "lock", 30_000, SimDuration::from_secs(7));
    let redis = s.redis;
    s.sim
        .schedule_fault(ms(5_000), Fault::Crash { node: redis });
    s.sim
        .schedule_fault(ms(6_000), Fault::Restart { node: redis });
    s.run(ms(30_000));
    (s, c2)
}

#[test]
fn an_empty_restart_hands_a_held_lock_to_a_second_client() {
    let (s, c2) = restart_story(SimDuration::ZERO);
    // Back at once and empty: client-2's first SET NX (7.001 s) succeeds while client-1 still
    // believes it holds the lock (until 30 s).
    assert_eq!(s.of(c2, &["lock_acquired"])[0].0, ms(7_002));
    assert_eq!(s.of(c2, &["lock_failed"]), vec![]);
}

#[test]
fn a_delayed_restart_stays_silent_until_the_delay_passes() {
    let (s, c2) = restart_story(SimDuration::from_secs(20));
    let v1 = s.value_of(NodeId(2));
    let v2 = s.value_of(c2);
    // Available at 6 + 20 = 26 s, empty; client-2's 14th attempt (26.5 s) gets the lock.
    assert_eq!(
        s.truth(),
        vec![
            (ms(1), key_set("lock", &v1, 30_002_000_000)),
            (ms(26_000), Obs::RedisRestarted { keys: vec![] }),
            (ms(26_501), key_set("lock", &v2, 56_502_000_000)),
        ]
    );
    let failed = s.of(c2, &["lock_failed"]);
    assert_eq!(failed.len(), 13);
    for (k, (t, o)) in failed.iter().enumerate() {
        assert_eq!(*t, ms(7_500 + 1_500 * k as u64));
        assert_eq!(
            *o,
            Obs::LockFailed {
                thread: None,
                lock: "lock".into(),
                reason: "no reply within 500 ms".into()
            }
        );
    }
    assert_eq!(s.of(c2, &["lock_acquired"])[0].0, ms(26_502));
    // 15 SETs (1 + 14), 2 replies: the 13 sent while it was down or silent got none.
    let m = &s.sim.stats().messages;
    assert_eq!(m["SET"].sent, 15);
    assert_eq!(m["REPLY"].sent, 2);
}
