//! etcd's Session + Mutex over the Raft-replicated store, through the engine (1 ms fixed
//! delays, no drift, no loss): the requests one uncontended and one contended `Lock` make, and
//! a waiter whose session expires while it waits (etcd issue #11456) under v3.4.3's `Lock`
//! and under the fixed one.

use splitbrain_engine::{
    DelayDist, Fault, KindCounts, LinkModel, Network, NodeId, Sim, SimDuration, SimTime,
};
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::raft::{EtcdMutexConfig, OnSessionDone, RaftConfig, RaftNode};
use splitbrain_protocols::storage::{FencedStorage, StorageConfig};
use splitbrain_protocols::worker::{Worker, WorkerConfig};
use splitbrain_protocols::{Node, Obs};
use std::collections::BTreeMap;

const MS: u64 = 1_000_000;

fn ms(n: u64) -> SimTime {
    SimTime(n * MS)
}

/// Three replicas (ids 0..2, replica 0 leads from 152 ms), storage (id 3), and one etcd mutex
/// worker per `(start_after ms, work_time ms)` (ids 4..), session TTL 5 s.
fn build(workers: &[(u64, u64)], recheck_own_key: bool) -> Sim<Node> {
    let mut sim = Sim::<Node>::new(1);
    *sim.network_mut() = Network::new(LinkModel {
        delay: DelayDist::Fixed(SimDuration::from_millis(1)),
        ..LinkModel::default()
    });
    let replicas: Vec<NodeId> = (0..3).map(NodeId).collect();
    for i in 0..3u32 {
        let mut cfg = RaftConfig::with_replicas(replicas.clone());
        let t = SimDuration::from_millis(if i == 0 { 150 } else { 400 });
        cfg.election_timeout_min = t;
        cfg.election_timeout_max = t;
        sim.add_node(
            &format!("raft-{}", i + 1),
            Node::Raft(RaftNode::new(cfg)),
            Default::default(),
        );
    }
    let storage = sim.add_node(
        "storage",
        Node::Storage(FencedStorage::new(StorageConfig { fencing: false })),
        Default::default(),
    );
    for (i, (start, work)) in workers.iter().enumerate() {
        let lock = LockConfig::EtcdMutex(EtcdMutexConfig {
            replicas: replicas.clone(),
            lock: "lock".into(),
            ttl: SimDuration::from_secs(5),
            request_timeout: SimDuration::from_millis(200),
            recheck_own_key,
            on_session_done: OnSessionDone::Ignore,
        });
        let mut w = WorkerConfig::new(lock, storage);
        w.start_after = SimDuration::from_millis(*start);
        w.work_time = SimDuration::from_millis(*work);
        w.rounds = Some(1);
        sim.add_node(
            &format!("client-{}", i + 1),
            Node::Worker(Worker::new(w)),
            Default::default(),
        );
    }
    sim
}

fn sent(sim: &Sim<Node>) -> BTreeMap<String, u64> {
    sim.stats()
        .messages
        .iter()
        .filter(|(k, _)| k.starts_with("ETCD_") || k.starts_with("RAFT_"))
        .map(|(k, v): (&&str, &KindCounts)| (k.to_string(), v.sent))
        .collect()
}

fn pairs(p: &[(&str, u64)]) -> BTreeMap<String, u64> {
    p.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// Uncontended: `NewSession` (Grant, then keepalives), `Lock` (one txn: the key is the
/// prefix's first), `Unlock` (Delete) and `Session.Close` (Revoke); each request answered once.
#[test]
fn an_uncontended_lock_is_grant_txn_delete_revoke() {
    let mut sim = build(&[(1_000, 2_000)], true);
    sim.run_until(ms(5_000)).expect("bounded");
    let s = sent(&sim);
    // Keepalives: one at once, then every TTL/3 after each answer while the session lives.
    let keepalives = s["RAFT_KEEPALIVE"];
    assert!((1..=3).contains(&keepalives), "{keepalives} keepalives");
    assert_eq!(
        s.into_iter()
            .filter(|(k, _)| !k.contains("KEEPALIVE") && !k.contains("KEPT_ALIVE"))
            .collect::<BTreeMap<_, _>>(),
        pairs(&[
            ("ETCD_DELETE", 1),
            ("ETCD_DELETE_RESULT", 1),
            ("ETCD_LEASE_GRANT", 1),
            ("ETCD_LEASE_GRANTED", 1),
            ("ETCD_MUTEX_TXN", 1),
            ("ETCD_TXN_RESULT", 1),
            ("RAFT_RELEASE", 1),
            ("RAFT_RELEASED", 1),
        ])
    );
}

/// Contended: the second client's `Lock` is the txn, `waitDeletes`' read (the first key),
/// a watch on it, the read again once it fired (nothing left below its own key), and the
/// fixed `Lock`'s read of its own key.
#[test]
fn a_waiter_reads_watches_reads_and_rechecks() {
    let mut sim = build(&[(1_000, 2_000), (1_500, 500)], true);
    sim.run_until(ms(8_000)).expect("bounded");
    let s = sent(&sim);
    assert_eq!(s["ETCD_MUTEX_TXN"], 2);
    assert_eq!(s["ETCD_RANGE"], 3);
    // The watch is re-registered every request timeout while it waits (1.5 s to 3 s).
    assert!(s["ETCD_WATCH_DELETE"] >= 1);
    // Each registration is answered pending; the deletion is pushed when applied.
    assert_eq!(s["ETCD_WATCH_DELETE"], s["ETCD_WATCH_PENDING"]);
    assert_eq!(s["ETCD_WATCH_FIRED"], 1);
    assert_eq!(s["ETCD_DELETE"], 2);
    let acquired: Vec<(NodeId, Option<u64>)> = sim
        .observations()
        .iter()
        .filter_map(|o| match &o.obs {
            Obs::LockAcquired { token, .. } => Some((o.node, *token)),
            _ => None,
        })
        .collect();
    // Tokens are the keys' create revisions: client-1's key at 2, client-2's at 3.
    assert_eq!(acquired, vec![(NodeId(4), Some(2)), (NodeId(5), Some(3))]);
}

/// client-1 holds from 1 s for 8 s; client-2 waits from 2 s and is paused 3 s..11 s, so its
/// session's lease (TTL 5 s) expires and its key goes; client-3 waits from 4 s and holds when
/// client-1 unlocks. Under v3.4.3's `Lock` client-2 wakes and is told it holds the lock; under
/// the fixed `Lock` it reads its own key, finds it gone, and fails (its worker tries again
/// later with a new session, and gets the lock after client-3).
fn expired_waiter(recheck_own_key: bool) -> Vec<(NodeId, String)> {
    let mut sim = build(
        &[(1_000, 8_000), (2_000, 4_000), (4_000, 4_000)],
        recheck_own_key,
    );
    sim.schedule_fault(
        ms(3_000),
        Fault::Pause {
            node: NodeId(5),
            duration: SimDuration::from_secs(8),
        },
    );
    sim.run_until(ms(20_000)).expect("bounded");
    sim.observations()
        .iter()
        .filter_map(|o| match &o.obs {
            Obs::LockAcquired { .. } => Some((o.node, "acquired".to_string())),
            Obs::LockFailed { reason, .. } => Some((o.node, format!("failed: {reason}"))),
            _ => None,
        })
        .collect()
}

#[test]
fn v3_4_3_tells_an_expired_waiter_it_holds_the_lock() {
    assert_eq!(
        expired_waiter(false),
        vec![
            (NodeId(4), "acquired".to_string()),
            (NodeId(6), "acquired".to_string()),
            (NodeId(5), "acquired".to_string()),
        ]
    );
}

#[test]
fn the_fixed_lock_fails_an_expired_waiter() {
    assert_eq!(
        expired_waiter(true),
        vec![
            (NodeId(4), "acquired".to_string()),
            (NodeId(6), "acquired".to_string()),
            (NodeId(5), "failed: mutex: session is expired".to_string()),
            (NodeId(5), "acquired".to_string()),
        ]
    );
}
