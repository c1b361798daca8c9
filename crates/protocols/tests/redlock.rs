//! The Redlock client, pinned exactly: five instances `r1..r5`, 1 ms fixed delays unless
//! stated, perfect clocks, TTL 10,000 ms, drift factor 0.01 (so drift = 100 + 2 = 102 ms),
//! per-instance timeout 50 ms. Workers hold for 2 s of work, one round.
//!
//! The validity rule (distlock page): `validity = ttl - elapsed - drift`; the belief ends at
//! `now + validity = start + ttl - drift = start + 9,898 ms`, whatever the elapsed time, when
//! the start is taken before the requests.

use splitbrain_engine::{
    ClockConfig, DelayDist, Fault, LinkModel, NetRule, NodeId, Observation, RngStream, Sim,
    SimDuration, SimTime, WallTime,
};
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::redis_instance::{RedisInstance, RedisInstanceConfig};
use splitbrain_protocols::redlock::{RedlockConfig, RedlockMode, StartTime};
use splitbrain_protocols::storage::{FencedStorage, StorageConfig};
use splitbrain_protocols::worker::{Worker, WorkerConfig};
use splitbrain_protocols::{Node, Obs};

const MS: u64 = 1_000_000;
const SEED: u64 = 11;

fn ms(n: u64) -> SimTime {
    SimTime(n * MS)
}

struct Setup {
    sim: Sim<Node>,
    instances: Vec<NodeId>,
    storage: NodeId,
}

fn setup() -> Setup {
    let mut sim = Sim::<Node>::new(SEED);
    let instances = (1..=5)
        .map(|i| {
            sim.add_node(
                &format!("r{i}"),
                Node::RedisInstance(RedisInstance::new(RedisInstanceConfig::default())),
                ClockConfig::default(),
            )
        })
        .collect();
    let storage = sim.add_node(
        "storage",
        Node::Storage(FencedStorage::new(StorageConfig { fencing: false })),
        ClockConfig::default(),
    );
    Setup {
        sim,
        instances,
        storage,
    }
}

impl Setup {
    fn client(&mut self, name: &str, tweak: impl FnOnce(&mut RedlockConfig)) -> NodeId {
        let mut lock = RedlockConfig::new(self.instances.clone(), "lock");
        tweak(&mut lock);
        let mut cfg = WorkerConfig::new(LockConfig::Redlock(lock), self.storage);
        cfg.rounds = Some(1);
        self.sim
            .add_node(name, Node::Worker(Worker::new(cfg)), ClockConfig::default())
    }

    fn crash_at_start(&mut self, which: &[usize]) {
        for &i in which {
            let node = self.instances[i];
            self.sim
                .schedule_fault(SimTime::ZERO, Fault::Crash { node });
        }
    }

    fn run(&mut self, until: SimTime) {
        self.sim.run_until(until).expect("bounded run");
    }

    /// `node`'s observations of the given kinds, with their true times.
    fn of(&self, node: NodeId, kinds: &[&str]) -> Vec<(SimTime, Obs)> {
        self.sim
            .observations()
            .iter()
            .filter(|o| o.node == node && kinds.contains(&o.obs.kind()))
            .map(|o| (o.t, o.obs.clone()))
            .collect()
    }

    fn times(&self, node: NodeId, kind: &str) -> Vec<SimTime> {
        self.of(node, &[kind]).into_iter().map(|(t, _)| t).collect()
    }

    fn acquired(&self, node: NodeId) -> Vec<(SimTime, SimTime)> {
        self.of(node, &["lock_acquired"])
            .into_iter()
            .map(|(t, o)| match o {
                Obs::LockAcquired {
                    valid_until_local,
                    token,
                    ..
                } => {
                    assert_eq!(token, None, "Redlock issues no fencing token");
                    (t, SimTime(valid_until_local.0))
                }
                _ => unreachable!(),
            })
            .collect()
    }

    fn failures(&self, node: NodeId) -> Vec<(SimTime, String)> {
        self.of(node, &["lock_failed"])
            .into_iter()
            .map(|(t, o)| match o {
                Obs::LockFailed { reason, .. } => (t, reason),
                _ => unreachable!(),
            })
            .collect()
    }

    /// The deadlines (first expired wall instants) of every key set, in instance order.
    fn deadlines(&self) -> Vec<i64> {
        self.sim
            .observations()
            .iter()
            .filter_map(|o| match o.obs {
                Obs::RedisKeySet {
                    deadline_wall: Some(WallTime(d)),
                    ..
                } => Some(d),
                _ => None,
            })
            .collect()
    }

    fn sent(&self, kind: &str) -> u64 {
        self.sim.stats().messages.get(kind).map_or(0, |k| k.sent)
    }
}

/// Parallel, 1 ms each way: every reply is in at 2 ms, elapsed 2 ms, validity
/// 10,000 - 2 - 102 = 9,896 ms, belief until 2 + 9,896 = 9,898 ms.
#[test]
fn validity_is_ttl_minus_elapsed_minus_102_ms() {
    let mut s = setup();
    let c = s.client("client-1", |_| {});
    s.run(ms(1_000));
    assert_eq!(s.times(c, "lock_requested"), vec![SimTime::ZERO]);
    assert_eq!(s.acquired(c), vec![(ms(2), ms(2 + 9_896))]);
    assert_eq!(s.deadlines(), vec![10_002 * MS as i64; 5]);
    assert_eq!((s.sent("SET"), s.sent("REPLY")), (5, 5));
}

/// Sequential (redlock-rb): r1..r5 in turn, 2 ms each: SETs land at 1, 3, 5, 7, 9 ms, the last
/// reply at 10 ms; validity 10,000 - 10 - 102 = 9,888 ms, belief until 9,898 ms.
#[test]
fn sequential_asks_one_instance_after_another() {
    let mut s = setup();
    let c = s.client("client-1", |l| l.mode = RedlockMode::Sequential);
    s.run(ms(1_000));
    let set_times: Vec<SimTime> = s
        .sim
        .observations()
        .iter()
        .filter(|o| o.obs.kind() == "redis_key_set")
        .map(|o| o.t)
        .collect();
    assert_eq!(set_times, vec![ms(1), ms(3), ms(5), ms(7), ms(9)]);
    assert_eq!(s.acquired(c), vec![(ms(10), ms(10 + 9_888))]);
}

/// Sequential with r2 and r4 down: each costs its 50 ms timeout. r1 answers at 2, r2 times
/// out at 52, r3 answers at 54, r4 times out at 104, r5 answers at 106: 3 of 5 OK, elapsed
/// 106 ms, validity 9,792 ms, belief until 9,898 ms.
#[test]
fn sequential_pays_the_timeout_of_each_dead_instance() {
    let mut s = setup();
    s.crash_at_start(&[1, 3]);
    let c = s.client("client-1", |l| l.mode = RedlockMode::Sequential);
    s.run(ms(1_000));
    assert_eq!(s.acquired(c), vec![(ms(106), ms(106 + 9_792))]);
}

/// r3, r4, r5 are down: every attempt gets 2 of 5 OK and fails when the timeouts fire (50 ms
/// after its start), unlocks all five instances, and retries after a uniform delay in
/// 0..=200 ms drawn from the client's stream (after its value). Three attempts, then the
/// worker is told `Failed`.
#[test]
fn a_minority_of_oks_fails_unlocks_all_and_retries() {
    let mut s = setup();
    s.crash_at_start(&[2, 3, 4]);
    let c = s.client("client-1", |_| {});
    s.run(ms(1_000));

    let mut rng = RngStream::new(SEED, "actor/client-1");
    let _value = rng.next_u64();
    let d1 = rng.uniform_inclusive(0, 200 * MS);
    let d2 = rng.uniform_inclusive(0, 200 * MS);
    let starts = [0, 50 * MS + d1, 100 * MS + d1 + d2];
    assert_eq!(s.times(c, "lock_requested"), starts.map(SimTime).to_vec());
    assert_eq!(
        s.failures(c),
        starts
            .map(|t| (SimTime(t + 50 * MS), "2 of 5 OK, quorum 3".to_string()))
            .to_vec()
    );
    assert_eq!(s.acquired(c), vec![]);
    // Each attempt: 5 SETs, 2 replies, then the release script to all five.
    assert_eq!((s.sent("SET"), s.sent("EVAL")), (15, 15));
    // r1 held the value for 49 ms of each attempt: set at +1 ms, deleted at +51 ms.
    let r1: Vec<(SimTime, &str)> = s
        .of(s.instances[0], &["redis_key_set", "redis_key_deleted"])
        .into_iter()
        .map(|(t, o)| (t, o.kind()))
        .collect();
    let expected: Vec<(SimTime, &str)> = starts
        .iter()
        .flat_map(|&t| {
            [
                (SimTime(t + MS), "redis_key_set"),
                (SimTime(t + 51 * MS), "redis_key_deleted"),
            ]
        })
        .collect();
    assert_eq!(r1, expected);
}

/// Sequential over slow links (30 ms each way): SETs land at 30, 90, 150, 210, 270 ms, the
/// last reply at 300 ms. The keys' first expired instants are 10,031 / 10,091 / 10,151 /
/// 10,211 / 10,271 ms, so a majority (3 of 5) holds the value until 10,151 ms.
fn slow_sequential(start_time: StartTime) -> (Setup, NodeId) {
    let mut s = setup();
    let c = s.client("client-1", |l| {
        l.mode = RedlockMode::Sequential;
        l.request_timeout = SimDuration::from_millis(100);
        l.start_time = start_time;
    });
    let slow = LinkModel {
        delay: DelayDist::Fixed(SimDuration::from_millis(30)),
        ..LinkModel::default()
    };
    for &r in &s.instances.clone() {
        s.sim.network_mut().set_link(c, r, slow.clone());
        s.sim.network_mut().set_link(r, c, slow.clone());
    }
    s.run(ms(1_000));
    (s, c)
}

#[test]
fn start_time_after_replies_overstates_validity_past_the_majoritys_keys() {
    let (good, c) = slow_sequential(StartTime::BeforeRequests);
    let majority_until = {
        let mut d = good.deadlines();
        d.sort();
        assert_eq!(
            d,
            [10_031, 10_091, 10_151, 10_211, 10_271].map(|m| m * MS as i64)
        );
        SimTime(d[2] as u64)
    };
    // Correct: elapsed 300 ms, validity 9,598 ms, belief until 9,898 ms < 10,151 ms.
    assert_eq!(good.acquired(c), vec![(ms(300), ms(300 + 9_598))]);
    assert!(good.acquired(c)[0].1 < majority_until);

    // Bug: elapsed counted as 0, validity 9,898 ms, belief until 10,198 ms: 47 ms past the
    // instant the majority's keys are gone.
    let (bad, c) = slow_sequential(StartTime::AfterReplies);
    assert_eq!(bad.acquired(c), vec![(ms(300), ms(300 + 9_898))]);
    assert_eq!(
        bad.acquired(c)[0].1.saturating_since(majority_until),
        SimDuration::from_millis(47)
    );
}

/// client-1 reaches only r1, r2; client-2 only r3, r4, r5 (cut links). Both attempts end at
/// their timeouts (50 ms).
fn split(quorum: Option<usize>) -> (Setup, NodeId, NodeId) {
    let mut s = setup();
    let c1 = s.client("client-1", |l| l.quorum = quorum);
    let c2 = s.client("client-2", |l| l.quorum = quorum);
    let r = s.instances.clone();
    for (c, cut) in [(c1, &r[2..]), (c2, &r[..2])] {
        for &i in cut {
            s.sim.network_mut().add_rule(NetRule::Cut { a: c, b: i });
        }
    }
    s.run(ms(1_000));
    (s, c1, c2)
}

#[test]
fn a_quorum_below_a_majority_lets_two_clients_hold_at_once() {
    // Majority (3): only client-2 gets the lock.
    let (s, c1, c2) = split(None);
    assert_eq!(s.acquired(c2), vec![(ms(50), ms(9_898))]);
    assert_eq!(s.acquired(c1), vec![]);
    assert_eq!(
        s.failures(c1)[0],
        (ms(50), "2 of 5 OK, quorum 3".to_string())
    );

    // Quorum 2 of 5: both believe from 50 ms.
    let (s, c1, c2) = split(Some(2));
    assert_eq!(s.acquired(c1), vec![(ms(50), ms(9_898))]);
    assert_eq!(s.acquired(c2), vec![(ms(50), ms(9_898))]);
}

/// Extension (distlock page, "making the algorithm more reliable: extending the lock"): work
/// of 20 s under a 10 s TTL, extending every 5 s. Each extension goes to all five instances at
/// 5.002 s, 10.002 s, 15.002 s and is in at +2 ms, so each new belief ends at
/// `start + ttl - drift` = 5.002 + 9.898 = 14.900 s, then 19.900 s, then 24.900 s; the check at
/// 20.002 s finds the lock valid and the write goes out. Without extension the hold ends at
/// 9.898 s and the check fails.
#[test]
fn extending_a_redlock_keeps_a_long_job_valid() {
    let run = |extend: Option<SimDuration>| {
        let mut s = setup();
        let lock = RedlockConfig::new(s.instances.clone(), "lock");
        let mut cfg = WorkerConfig::new(LockConfig::Redlock(lock), s.storage);
        cfg.rounds = Some(1);
        cfg.work_time = SimDuration::from_secs(20);
        cfg.extend_every = extend;
        let c = s.sim.add_node(
            "client-1",
            Node::Worker(Worker::new(cfg)),
            ClockConfig::default(),
        );
        s.run(ms(30_000));
        let renewed: Vec<(SimTime, SimTime)> = s
            .of(c, &["lock_renewed"])
            .into_iter()
            .map(|(t, o)| match o {
                Obs::LockRenewed {
                    valid_until_local, ..
                } => (t, SimTime(valid_until_local.0)),
                _ => unreachable!(),
            })
            .collect();
        let checked: Vec<bool> = s
            .of(c, &["validity_checked"])
            .into_iter()
            .map(|(_, o)| matches!(o, Obs::ValidityChecked { valid: true, .. }))
            .collect();
        (
            s.acquired(c),
            renewed,
            checked,
            s.sent("EVAL"),
            s.times(c, "write_sent"),
        )
    };
    let (acquired, renewed, checked, evals, writes) = run(Some(SimDuration::from_secs(5)));
    assert_eq!(acquired, vec![(ms(2), ms(9_898))]);
    assert_eq!(
        renewed,
        vec![
            (ms(5_004), ms(14_900)),
            (ms(10_004), ms(19_900)),
            (ms(15_004), ms(24_900))
        ]
    );
    assert_eq!(checked, vec![true]);
    assert_eq!(writes, vec![ms(20_003)]);
    // 3 extensions + the release, each on 5 instances.
    assert_eq!(evals, 4 * 5);

    let (acquired, renewed, checked, _, writes) = run(None);
    assert_eq!(acquired, vec![(ms(2), ms(9_898))]);
    assert!(renewed.is_empty());
    assert_eq!(checked, vec![false]);
    assert!(writes.is_empty());
}
