//! The Raft lock service through the engine, pinned exactly (1 ms fixed delays, no drift,
//! no loss): the messages of one election and of one acquisition.

use splitbrain_engine::{
    DelayDist, KindCounts, LinkModel, Network, NodeId, Sim, SimDuration, SimTime,
};
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::raft::{RaftClientConfig, RaftConfig, RaftNode};
use splitbrain_protocols::storage::{FencedStorage, StorageConfig};
use splitbrain_protocols::worker::{Worker, WorkerConfig};
use splitbrain_protocols::{Node, Obs};
use std::collections::BTreeMap;

const MS: u64 = 1_000_000;

fn ms(n: u64) -> SimTime {
    SimTime(n * MS)
}

/// Five replicas (ids 0..4): replica 0's election timeout is exactly 150 ms, the others'
/// exactly 400 ms, so replica 0 wins term 1 at 152 ms; one worker (id 6) asks for the lock at
/// 1,010 ms, leader first; storage is id 5.
fn build() -> Sim<Node> {
    let mut sim = Sim::<Node>::new(1);
    *sim.network_mut() = Network::new(LinkModel {
        delay: DelayDist::Fixed(SimDuration::from_millis(1)),
        ..LinkModel::default()
    });
    let replicas: Vec<NodeId> = (0..5).map(NodeId).collect();
    for i in 0..5u32 {
        let mut cfg = RaftConfig::with_replicas(replicas.clone());
        let t = SimDuration::from_millis(if i == 0 { 150 } else { 400 });
        cfg.election_timeout_min = t;
        cfg.election_timeout_max = t;
        let id = sim.add_node(
            &format!("raft-{}", i + 1),
            Node::Raft(RaftNode::new(cfg)),
            Default::default(),
        );
        assert_eq!(id, NodeId(i));
    }
    let storage = sim.add_node(
        "storage",
        Node::Storage(FencedStorage::new(StorageConfig { fencing: true })),
        Default::default(),
    );
    let lock = LockConfig::Raft(RaftClientConfig {
        replicas,
        lock: "lock".into(),
        ttl: SimDuration::from_secs(10),
        safety_margin: SimDuration::ZERO,
        request_timeout: SimDuration::from_millis(200),
        first_req: 1,
    });
    let mut w = WorkerConfig::new(lock, storage);
    w.start_after = SimDuration::from_millis(1_010);
    w.rounds = Some(1);
    sim.add_node("client-1", Node::Worker(Worker::new(w)), Default::default());
    sim
}

fn sent(sim: &Sim<Node>) -> BTreeMap<String, u64> {
    sim.stats()
        .messages
        .iter()
        .map(|(k, v): (&&str, &KindCounts)| (k.to_string(), v.sent))
        .collect()
}

fn diff(after: &BTreeMap<String, u64>, before: &BTreeMap<String, u64>) -> Vec<(String, u64)> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, v)| *v > 0)
        .collect()
}

fn pairs(p: &[(&str, u64)]) -> Vec<(String, u64)> {
    p.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// One election: 4 RequestVote, 4 votes; the winner's no-op: 4 AppendEntries, 4 acks. The
/// winner claims term 1 when the second vote arrives (a majority of 5 with its own).
#[test]
fn one_election_sends_sixteen_messages() {
    let mut sim = build();
    sim.run_until(ms(160)).expect("bounded");
    assert_eq!(
        diff(&sent(&sim), &BTreeMap::new()),
        pairs(&[
            ("APPEND_ACK", 4),
            ("APPEND_ENTRIES", 4),
            ("REQUEST_VOTE", 4),
            ("VOTE", 4)
        ])
    );
    let claims: Vec<(SimTime, NodeId, u64)> = sim
        .observations()
        .iter()
        .filter_map(|o| match o.obs {
            Obs::LeaderClaim { term } => Some((o.t, o.node, term)),
            _ => None,
        })
        .collect();
    assert_eq!(claims, vec![(ms(152), NodeId(0), 1)]);
    // The no-op (index 1) is applied by the leader at the second ack (154 ms), by the
    // followers at the next heartbeat (202 ms + 1 ms).
    sim.run_until(ms(210)).expect("bounded");
    let applied: Vec<(SimTime, NodeId)> = sim
        .observations()
        .iter()
        .filter(|o| matches!(o.obs, Obs::RaftApplied { index: 1, .. }))
        .map(|o| (o.t, o.node))
        .collect();
    assert_eq!(
        applied,
        vec![
            (ms(154), NodeId(0)),
            (ms(203), NodeId(1)),
            (ms(203), NodeId(2)),
            (ms(203), NodeId(3)),
            (ms(203), NodeId(4)),
        ]
    );
}

/// One acquisition through the leader: the request, 4 AppendEntries carrying it, 4 acks, and
/// the grant once a majority stored it: 10 messages, granted 4 ms after it was asked with
/// create revision 2 (the fencing token).
#[test]
fn one_acquisition_sends_ten_messages() {
    let mut sim = build();
    sim.run_until(ms(1_009)).expect("bounded");
    let before = sent(&sim);
    sim.run_until(ms(1_015)).expect("bounded");
    assert_eq!(
        diff(&sent(&sim), &before),
        pairs(&[
            ("APPEND_ACK", 4),
            ("APPEND_ENTRIES", 4),
            ("RAFT_ACQUIRE", 1),
            ("RAFT_GRANTED", 1)
        ])
    );
    let got: Vec<(SimTime, Option<u64>)> = sim
        .observations()
        .iter()
        .filter_map(|o| match &o.obs {
            Obs::LockAcquired { token, .. } => Some((o.t, *token)),
            _ => None,
        })
        .collect();
    assert_eq!(got, vec![(ms(1_014), Some(2))]);
    let created: Vec<(SimTime, NodeId, u64)> = sim
        .observations()
        .iter()
        .filter_map(|o| match &o.obs {
            Obs::RaftKeyCreated { revision, .. } => Some((o.t, o.node, *revision)),
            _ => None,
        })
        .collect();
    assert_eq!(created, vec![(ms(1_013), NodeId(0), 2)]);
}
