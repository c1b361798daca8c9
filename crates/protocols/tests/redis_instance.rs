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

/// `is_available` reads the restart delay: false from the restart (6 s) until 26 s.
#[test]
fn an_instance_is_unavailable_during_its_restart_delay() {
    let mut s = setup(RedisInstanceConfig {
        restart_delay: SimDuration::from_secs(20),
        ..Default::default()
    });
    let redis = s.redis;
    s.sim
        .schedule_fault(ms(5_000), Fault::Crash { node: redis });
    s.sim
        .schedule_fault(ms(6_000), Fault::Restart { node: redis });
    let available = |s: &Setup| match s.sim.actor(redis) {
        Node::RedisInstance(r) => r.is_available(),
        _ => unreachable!("node 0 is the instance"),
    };
    s.run(ms(1_000));
    assert!(available(&s));
    match s.sim.actor(redis) {
        Node::RedisInstance(r) => {
            assert_eq!(r.config().restart_delay, SimDuration::from_secs(20))
        }
        _ => unreachable!(),
    }
    for (t, expect) in [(6_001, false), (25_999, false), (26_001, true)] {
        s.run(ms(t));
        assert_eq!(available(&s), expect, "at {t} ms");
    }
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

/// A scripted client beside the instance actor: it sends raw commands at given true times
/// (perfect clocks), so the truth observations of `GET`, `PTTL`, `PEXPIRE` and plain `SET`
/// can be pinned (the lock clients send only their own commands). Its own small composition:
/// message, timer and durable wrappers over the instance's types.
mod scripted {
    use serde::Serialize;
    use splitbrain_engine::{Actor, Context, Message, NodeId, SimDuration};
    use splitbrain_protocols::redis::Reply;
    use splitbrain_protocols::redis_instance::{
        InstanceTimer, RedisDurable, RedisInstance, RedisMsg,
    };
    use splitbrain_protocols::{Obs, Role, Wraps};

    #[derive(Clone, Debug, Serialize)]
    pub struct M(pub RedisMsg);
    impl Message for M {
        fn kind(&self) -> &'static str {
            self.0.kind()
        }
    }
    impl From<RedisMsg> for M {
        fn from(m: RedisMsg) -> Self {
            M(m)
        }
    }
    impl Wraps<RedisMsg> for M {
        fn into_part(self) -> Option<RedisMsg> {
            Some(self.0)
        }
        fn part(&self) -> Option<&RedisMsg> {
            Some(&self.0)
        }
        fn part_mut(&mut self) -> Option<&mut RedisMsg> {
            Some(&mut self.0)
        }
    }

    #[derive(Clone, Debug, Serialize)]
    pub enum T {
        Inst(InstanceTimer),
        /// Send the script's `n`-th command.
        Send(usize),
    }
    impl From<InstanceTimer> for T {
        fn from(t: InstanceTimer) -> Self {
            T::Inst(t)
        }
    }
    impl Wraps<InstanceTimer> for T {
        fn into_part(self) -> Option<InstanceTimer> {
            match self {
                T::Inst(t) => Some(t),
                T::Send(_) => None,
            }
        }
        fn part(&self) -> Option<&InstanceTimer> {
            match self {
                T::Inst(t) => Some(t),
                T::Send(_) => None,
            }
        }
        fn part_mut(&mut self) -> Option<&mut InstanceTimer> {
            match self {
                T::Inst(t) => Some(t),
                T::Send(_) => None,
            }
        }
    }

    #[derive(Clone, Debug, Default)]
    pub struct D(pub RedisDurable);
    impl From<RedisDurable> for D {
        fn from(d: RedisDurable) -> Self {
            D(d)
        }
    }
    impl Wraps<RedisDurable> for D {
        fn into_part(self) -> Option<RedisDurable> {
            Some(self.0)
        }
        fn part(&self) -> Option<&RedisDurable> {
            Some(&self.0)
        }
        fn part_mut(&mut self) -> Option<&mut RedisDurable> {
            Some(&mut self.0)
        }
    }

    /// The instance, or a client with its script (true ms, command) and the replies it got
    /// (request id = index in the script).
    #[derive(Clone, Debug)]
    pub enum A {
        Redis(RedisInstance),
        Client {
            redis: NodeId,
            script: Vec<(u64, Vec<String>)>,
            replies: Vec<(usize, Reply)>,
        },
    }

    impl Actor for A {
        type Msg = M;
        type Timer = T;
        type Obs = Obs;
        type Durable = D;

        fn on_start(&mut self, ctx: &mut Context<'_, Self>) {
            match self {
                A::Redis(r) => r.on_start(ctx),
                A::Client { script, .. } => {
                    for (i, (at_ms, _)) in script.iter().enumerate() {
                        ctx.set_timer(SimDuration::from_millis(*at_ms), T::Send(i));
                    }
                }
            }
        }
        fn on_message(&mut self, ctx: &mut Context<'_, Self>, from: NodeId, msg: M) {
            match self {
                A::Redis(r) => r.on_message(ctx, from, msg),
                A::Client { replies, .. } => {
                    if let RedisMsg::Reply { req, reply } = msg.0 {
                        replies.push((req as usize, reply));
                    }
                }
            }
        }
        fn on_timer(&mut self, ctx: &mut Context<'_, Self>, timer: T) {
            match (self, timer) {
                (A::Redis(r), t) => r.on_timer(ctx, t),
                (A::Client { redis, script, .. }, T::Send(i)) => {
                    let args = script[i].1.clone();
                    ctx.send(
                        *redis,
                        M(RedisMsg::Command {
                            req: i as u64,
                            args: args.into(),
                        }),
                    );
                }
                (A::Client { .. }, T::Inst(_)) => {}
            }
        }
        fn on_restart(&mut self, ctx: &mut Context<'_, Self>, durable: &D) {
            if let A::Redis(r) = self {
                r.on_restart(ctx, durable);
            }
        }
    }
}

use splitbrain_protocols::redis::Reply;

/// Runs the instance (node 0, `persistence`) and a client (node 1) sending `script` (true ms,
/// command words) until `until_ms`; returns the sim.
fn scripted(
    persistence: Persistence,
    script: &[(u64, &[&str])],
    until_ms: u64,
) -> Sim<scripted::A> {
    let mut sim = Sim::<scripted::A>::new(1);
    let redis = sim.add_node(
        "redis",
        scripted::A::Redis(RedisInstance::new(RedisInstanceConfig {
            persistence,
            ..Default::default()
        })),
        ClockConfig::default(),
    );
    let script = script
        .iter()
        .map(|(t, a)| (*t, a.iter().map(|s| s.to_string()).collect()))
        .collect();
    sim.add_node(
        "client",
        scripted::A::Client {
            redis,
            script,
            replies: Vec::new(),
        },
        ClockConfig::default(),
    );
    sim.run_until(ms(until_ms)).expect("bounded run");
    sim
}

fn replies(sim: &Sim<scripted::A>) -> Vec<(usize, Reply)> {
    match sim.actor(NodeId(1)) {
        scripted::A::Client { replies, .. } => replies.clone(),
        scripted::A::Redis(_) => unreachable!("node 1 is the client"),
    }
}

fn instance_truth(sim: &Sim<scripted::A>) -> Vec<(SimTime, Obs)> {
    sim.observations()
        .iter()
        .filter(|o| o.node == NodeId(0))
        .map(|o| (o.t, o.obs.clone()))
        .collect()
}

fn deleted(key: &str) -> Obs {
    Obs::RedisKeyDeleted {
        key: key.to_string(),
    }
}

/// Keys "a", "b", "c" are set with PX 100 at wall 0.001 s (deadline 101 ms, first expired
/// wall instant 102 ms). At 0.501 s, long expired, `GET a`, `PTTL b` and `PEXPIRE c 1000`
/// each find its key expired and delete it (Redis's lazy expiry on access): one
/// `redis_key_deleted` per key, at the access. `GET never` (a key never stored) reports
/// nothing. Nothing is reported between the deadline and the access: the truth model expires
/// the key by the instance's wall clock itself.
#[test]
fn an_expired_key_found_on_access_is_reported_deleted_and_a_missing_one_is_not() {
    let sim = scripted(
        Persistence::None,
        &[
            (0, &["SET", "a", "1", "PX", "100"]),
            (0, &["SET", "b", "1", "PX", "100"]),
            (0, &["SET", "c", "1", "PX", "100"]),
            (500, &["GET", "a"]),
            (500, &["PTTL", "b"]),
            (500, &["PEXPIRE", "c", "1000"]),
            (500, &["GET", "never"]),
        ],
        1_000,
    );
    let set = |k: &str| (ms(1), key_set(k, "1", 102_000_000));
    assert_eq!(
        instance_truth(&sim),
        vec![
            set("a"),
            set("b"),
            set("c"),
            (ms(501), deleted("a")),
            (ms(501), deleted("b")),
            (ms(501), deleted("c")),
        ]
    );
    let mut r = replies(&sim);
    r.sort_by_key(|(i, _)| *i);
    assert_eq!(
        r[3..],
        [
            (3, Reply::Nil),
            (4, Reply::Integer(-2)),
            (5, Reply::Integer(0)),
            (6, Reply::Nil)
        ]
    );
    match sim.actor(NodeId(0)) {
        scripted::A::Redis(r) => {
            assert!(r.instance().keyspace().is_empty());
            assert!(r.is_available());
            assert_eq!(r.config().persistence, Persistence::None);
        }
        _ => unreachable!(),
    }
}

/// A live key: `SET d v1` at 0.001 s (no expiry), `SET d v2` at 0.101 s overwrites it (a new
/// value: `redis_key_set`), `SET d v2` again at 0.201 s changes nothing (no observation),
/// `PEXPIRE d 5000` at 0.301 s gives it a deadline (5,301 ms: first expired instant 5.302 s,
/// `redis_key_expiry`), `PEXPIRE d 5000` at 0.401 s moves it (5.402 s), `GET d` and `PTTL d`
/// read it at 0.501 s (nothing; PTTL 4,900 ms), and `PEXPIRE d 100` at 0.601 s moves it earlier (0.702 s).
#[test]
fn overwrite_and_pexpire_of_a_live_key_are_reported_and_reads_are_not() {
    let sim = scripted(
        Persistence::None,
        &[
            (0, &["SET", "d", "v1"]),
            (100, &["SET", "d", "v2"]),
            (200, &["SET", "d", "v2"]),
            (300, &["PEXPIRE", "d", "5000"]),
            (400, &["PEXPIRE", "d", "5000"]),
            (500, &["GET", "d"]),
            (500, &["PTTL", "d"]),
            (600, &["PEXPIRE", "d", "100"]),
        ],
        650,
    );
    let expiry = |ns: i64| Obs::RedisKeyExpiry {
        key: "d".to_string(),
        deadline_wall: Some(WallTime(ns)),
    };
    let set = |v: &str| Obs::RedisKeySet {
        key: "d".to_string(),
        value: v.to_string(),
        deadline_wall: None,
    };
    assert_eq!(
        instance_truth(&sim),
        vec![
            (ms(1), set("v1")),
            (ms(101), set("v2")),
            (ms(301), expiry(5_302_000_000)),
            (ms(401), expiry(5_402_000_000)),
            (ms(601), expiry(702_000_000)),
        ]
    );
    let mut r = replies(&sim);
    r.sort_by_key(|(i, _)| *i);
    assert_eq!(
        r[5..7],
        [
            (5, Reply::Bulk("v2".to_string())),
            (6, Reply::Integer(4_900))
        ]
    );
}

/// Replication ships what changed and only that: a primary (node 0), a replica of it (node 2,
/// 1 ms replication delay, no failover) and a client. `SET k v` at 0.100 s is one replicated
/// write; three `GET k` at 0.200..0.400 s change nothing and ship nothing. The replica ends
/// with `k = v`, and the primary sent exactly one `REPL` message.
#[test]
fn only_a_keyspace_change_is_replicated_and_it_carries_the_key() {
    use splitbrain_protocols::redis_instance::ReplicaConfig;
    let mut sim = Sim::<scripted::A>::new(1);
    let primary = sim.add_node(
        "redis",
        scripted::A::Redis(RedisInstance::new(RedisInstanceConfig::default())),
        ClockConfig::default(),
    );
    let words = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    sim.add_node(
        "client",
        scripted::A::Client {
            redis: primary,
            script: vec![
                (100, words(&["SET", "k", "v"])),
                (200, words(&["GET", "k"])),
                (300, words(&["GET", "k"])),
                (400, words(&["GET", "k"])),
            ],
            replies: Vec::new(),
        },
        ClockConfig::default(),
    );
    let replica = sim.add_node(
        "replica",
        scripted::A::Redis(RedisInstance::new(RedisInstanceConfig {
            replica_of: Some(ReplicaConfig {
                primary,
                delay: [SimDuration::from_millis(1); 2],
                down_after: None,
                notify: Vec::new(),
            }),
            ..Default::default()
        })),
        ClockConfig::default(),
    );
    sim.run_until(ms(1_000)).expect("bounded run");
    assert_eq!(sim.stats().messages["REPL"].sent, 1);
    let scripted::A::Redis(r) = sim.actor(replica) else {
        unreachable!("node 2 is the replica")
    };
    let keys: Vec<(String, String)> = r
        .instance()
        .keyspace()
        .iter()
        .map(|(k, e)| (k.to_string(), e.value.clone()))
        .collect();
    assert_eq!(keys, [("k".to_string(), "v".to_string())]);
}
