//! The single-instance Redis lock client, pinned exactly (1 ms fixed delays, perfect clocks):
//! contention, release by compare-and-delete versus plain DEL, values from the RNG stream.
//!
//! Worker timing (work 2 s, think 1 s, write delay 1 ms): a holder that acquires with the reply
//! at `a` checks at `a + 2 s`, writes at `a + 2.001 s` (accepted at `a + 2.002 s`), and releases on
//! the ack at `a + 2.003 s`; the release reaches the instance at `a + 2.004 s`.

use splitbrain_engine::{ClockConfig, NodeId, Observation, RngStream, Sim, SimDuration, SimTime};
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::redis_instance::{RedisInstance, RedisInstanceConfig};
use splitbrain_protocols::redis_lock::{RedisLockConfig, Release};
use splitbrain_protocols::storage::{FencedStorage, StorageConfig};
use splitbrain_protocols::worker::{Worker, WorkerConfig};
use splitbrain_protocols::{Node, Obs};

const MS: u64 = 1_000_000;
const SEED: u64 = 3;

fn ms(n: u64) -> SimTime {
    SimTime(n * MS)
}

struct Setup {
    sim: Sim<Node>,
    redis: NodeId,
    storage: NodeId,
}

fn setup() -> Setup {
    let mut sim = Sim::<Node>::new(SEED);
    let redis = sim.add_node(
        "redis",
        Node::RedisInstance(RedisInstance::new(RedisInstanceConfig::default())),
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
    fn worker(
        &mut self,
        name: &str,
        ttl: SimDuration,
        release: Release,
        start: SimDuration,
    ) -> NodeId {
        let mut lock = RedisLockConfig::new(self.redis, "lock");
        lock.ttl = ttl;
        lock.release = release;
        let mut cfg = WorkerConfig::new(LockConfig::Redis(lock), self.storage);
        cfg.start_after = start;
        cfg.rounds = Some(1);
        self.sim
            .add_node(name, Node::Worker(Worker::new(cfg)), ClockConfig::default())
    }

    /// One line per observation of the given kinds: "time node kind detail".
    fn log(&self, kinds: &[&str]) -> Vec<String> {
        self.sim
            .observations()
            .iter()
            .filter(|o| kinds.contains(&o.obs.kind()))
            .map(|o| {
                let who = &self.sim.names()[o.node.index()];
                let what = match &o.obs {
                    Obs::LockAcquired {
                        value,
                        valid_until_local,
                        token,
                        ..
                    } => {
                        assert_eq!(*token, None, "Redis issues no fencing token");
                        format!("acquired {value} until {}", SimTime(valid_until_local.0))
                    }
                    Obs::LockFailed { reason, .. } => format!("failed: {reason}"),
                    Obs::LockLost { reason, .. } => format!("lost: {reason}"),
                    Obs::LockReleased { .. } => "released".to_string(),
                    Obs::RedisKeySet { value, .. } => format!("SET {value}"),
                    Obs::RedisKeyDeleted { .. } => "DEL".to_string(),
                    Obs::WriteAccepted { writer, .. } => {
                        format!("accepted {}", self.sim.names()[writer.index()])
                    }
                    other => format!("{other:?}"),
                };
                format!("{} {who} {what}", o.t)
            })
            .collect()
    }
}

/// The value a worker node draws for its `n`-th acquisition (from 1): the `n`-th draw of its
/// stream (each acquisition draws one value, nothing else draws).
fn nth_value(name: &str, n: usize) -> String {
    let mut rng = RngStream::new(SEED, &format!("actor/{name}"));
    let draws: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    format!("{:016x}", draws[n - 1])
}

fn first_value(name: &str) -> String {
    nth_value(name, 1)
}

/// client-1 holds from 0.002 s to its release at 2.005 s (the script deletes at 2.006);
/// client-2 is refused for its tries at 1.000 and 2.002 (SETs land at 1.001 and 2.003, while
/// the key is held) and gets the lock with its third try at 3.004.
#[test]
fn contention_then_hand_over_on_release() {
    let mut s = setup();
    let ten = SimDuration::from_secs(10);
    s.worker(
        "client-1",
        ten,
        Release::CompareAndDelete,
        SimDuration::ZERO,
    );
    s.worker(
        "client-2",
        ten,
        Release::CompareAndDelete,
        SimDuration::from_secs(1),
    );
    s.sim.run_until(ms(10_000)).expect("bounded");
    // client-2's third acquisition draws its third value.
    let (v1, v2) = (first_value("client-1"), nth_value("client-2", 3));
    let nil = "failed: held by another client (SET NX replied nil)";
    assert_eq!(
        s.log(&[
            "lock_acquired",
            "lock_failed",
            "lock_released",
            "redis_key_set",
            "redis_key_deleted",
            "write_accepted"
        ]),
        vec![
            format!("0.001 s redis SET {v1}"),
            format!("0.002 s client-1 acquired {v1} until 10.000 s"),
            format!("1.002 s client-2 {nil}"),
            "2.004 s storage accepted client-1".to_string(),
            format!("2.004 s client-2 {nil}"),
            "2.005 s client-1 released".to_string(),
            "2.006 s redis DEL".to_string(),
            format!("3.005 s redis SET {v2}"),
            format!("3.006 s client-2 acquired {v2} until 13.004 s"),
            "5.008 s storage accepted client-2".to_string(),
            "5.009 s client-2 released".to_string(),
            "5.010 s redis DEL".to_string(),
        ]
    );
    let m = &s.sim.stats().messages;
    assert_eq!((m["SET"].sent, m["EVAL"].sent, m["REPLY"].sent), (4, 2, 6));
}

/// client-1's TTL (1 s) is shorter than its work (2 s): its key expires at 1.002 s, client-2
/// takes the lock at 1.5 s, and client-1 releases at its check (2.002 s) anyway. client-3
/// tries at 2.5 s, while client-2 still believes it holds the lock (until 11.500 s).
fn expired_holder_releases(release: Release) -> Setup {
    let mut s = setup();
    s.worker(
        "client-1",
        SimDuration::from_secs(1),
        release,
        SimDuration::ZERO,
    );
    let ten = SimDuration::from_secs(10);
    s.worker("client-2", ten, release, SimDuration::from_millis(1_500));
    s.worker("client-3", ten, release, SimDuration::from_millis(2_500));
    s.sim.run_until(ms(3_000)).expect("bounded");
    s
}

#[test]
fn compare_and_delete_does_not_delete_another_clients_lock() {
    let s = expired_holder_releases(Release::CompareAndDelete);
    let (v1, v2) = (first_value("client-1"), first_value("client-2"));
    assert_eq!(
        s.log(&[
            "lock_acquired",
            "lock_lost",
            "lock_failed",
            "redis_key_set",
            "redis_key_deleted"
        ]),
        vec![
            format!("0.001 s redis SET {v1}"),
            format!("0.002 s client-1 acquired {v1} until 1.000 s"),
            "1.000 s client-1 lost: TTL passed by the local clock".to_string(),
            format!("1.501 s redis SET {v2}"),
            format!("1.502 s client-2 acquired {v2} until 11.500 s"),
            // client-1's release script at 2.003 finds client-2's value: nothing deleted.
            "2.502 s client-3 failed: held by another client (SET NX replied nil)".to_string(),
        ]
    );
}

#[test]
fn plain_del_deletes_another_clients_lock() {
    let s = expired_holder_releases(Release::Delete);
    let (v1, v2, v3) = (
        first_value("client-1"),
        first_value("client-2"),
        first_value("client-3"),
    );
    assert_eq!(
        s.log(&[
            "lock_acquired",
            "lock_lost",
            "lock_failed",
            "redis_key_set",
            "redis_key_deleted"
        ]),
        vec![
            format!("0.001 s redis SET {v1}"),
            format!("0.002 s client-1 acquired {v1} until 1.000 s"),
            "1.000 s client-1 lost: TTL passed by the local clock".to_string(),
            format!("1.501 s redis SET {v2}"),
            format!("1.502 s client-2 acquired {v2} until 11.500 s"),
            // client-1's DEL at 2.003 deletes client-2's key ...
            "2.003 s redis DEL".to_string(),
            // ... so client-3 gets the lock while client-2 still believes it holds it.
            format!("2.501 s redis SET {v3}"),
            format!("2.502 s client-3 acquired {v3} until 12.500 s"),
        ]
    );
}
