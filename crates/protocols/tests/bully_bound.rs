//! The textbook bound on the bully's messages, pinned for N = 5, 10, 50 and 100.
//!
//! Every run: N bully nodes (defaults: answer 50 ms, coordinator 300 ms, heartbeat 100 ms,
//! failure timeout 300 ms), every node starts an election at t = 0, the leader (the highest
//! node) crashes at 1 s, the run ends at 3 s. Counts are taken separately for the first
//! election (before the crash) and the re-election (after it), without heartbeats. The
//! published bound (Garcia-Molina 1982; Coulouris et al. §15.3) for one election: at most
//! N(N-1)/2 ELECTION messages, as many ANSWERs, and one COORDINATOR to each lower node (at
//! most N-1). The literal reading ([`BullyVariant::Literal`]) is run beside it for contrast.

use splitbrain_engine::{
    DelayDist, Fault, KindCounts, LinkModel, Network, NodeId, Sim, SimDuration, SimTime,
};
use splitbrain_protocols::bully::{BullyConfig, BullyNode, BullyVariant};
use splitbrain_protocols::{Node, Obs};
use std::collections::BTreeMap;
use std::sync::Arc;

const CRASH: SimTime = SimTime(1_000_000_000);
const END: SimTime = SimTime(3_000_000_000);

/// Messages sent per kind, elections started and claims, in one stretch of a run.
#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
struct Cost {
    election: u64,
    answer: u64,
    coordinator: u64,
    elections_started: u64,
    claims: u64,
}

fn sent(m: &BTreeMap<&'static str, KindCounts>, kind: &str) -> u64 {
    m.get(kind).map_or(0, |c| c.sent)
}

/// (first election, re-election after the leader's crash), and the leader at the end.
fn run(n: u32, delay: DelayDist, variant: BullyVariant) -> (Cost, Cost, Vec<NodeId>) {
    let mut sim: Sim<Node> = Sim::new(1);
    *sim.network_mut() = Network::new(LinkModel {
        delay,
        ..LinkModel::default()
    });
    let peers: Arc<[NodeId]> = (0..n).map(NodeId).collect();
    for i in 0..n {
        let cfg = BullyConfig {
            peers: peers.clone(),
            variant,
            ..BullyConfig::default()
        };
        sim.add_node(
            &format!("n{}", i + 1),
            Node::Bully(BullyNode::new(cfg)),
            Default::default(),
        );
    }
    sim.schedule_fault(
        CRASH,
        Fault::Crash {
            node: NodeId(n - 1),
        },
    );
    sim.run_until(CRASH).unwrap();
    let before = sim.stats().messages.clone();
    sim.run_until(END).unwrap();
    let after = sim.stats().messages.clone();
    let mut costs = [Cost::default(); 2];
    for o in sim.observations() {
        let c = &mut costs[usize::from(o.t > CRASH)];
        match o.obs {
            Obs::ElectionStarted => c.elections_started += 1,
            Obs::LeaderClaim { .. } => c.claims += 1,
            _ => {}
        }
    }
    for (i, k) in ["ELECTION", "ANSWER", "COORDINATOR"].iter().enumerate() {
        let (b, a) = (sent(&before, k), sent(&after, k));
        for (c, v) in costs.iter_mut().zip([b, a - b]) {
            *[&mut c.election, &mut c.answer, &mut c.coordinator][i] = v;
        }
    }
    let leaders = (0..n)
        .map(NodeId)
        .filter(|&id| sim.is_up(id))
        .filter_map(|id| match sim.actor(id) {
            Node::Bully(b) => b.leader(),
            _ => None,
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    (costs[0], costs[1], leaders)
}

fn fixed() -> DelayDist {
    DelayDist::Fixed(SimDuration::from_millis(1))
}

fn uniform() -> DelayDist {
    DelayDist::Uniform {
        lo: SimDuration::from_millis(1),
        hi: SimDuration::from_millis(3),
    }
}

fn within_bound(n: u32, c: Cost) {
    let n = u64::from(n);
    assert!(c.election <= n * (n - 1) / 2, "{c:?}");
    assert!(c.answer <= c.election, "{c:?}");
    assert!(c.coordinator < n, "{c:?}");
    assert_eq!(c.claims, 1, "{c:?}");
    assert!(c.elections_started <= n, "{c:?}");
}

/// The textbook counts for `n` nodes: the first election costs exactly the bound (every node
/// elects once, every ELECTION reaches a live node and is answered, the highest node tells
/// the N-1 others); the re-election too, less the N-1 ANSWERs the dead leader cannot send and
/// with one COORDINATOR fewer (the winner has N-2 lower nodes).
fn textbook(n: u32, delay: DelayDist) {
    let (first, again, leaders) = run(n, delay, BullyVariant::Textbook);
    let m = u64::from(n);
    let bound = m * (m - 1) / 2;
    assert_eq!(
        first,
        Cost {
            election: bound,
            answer: bound,
            coordinator: m - 1,
            elections_started: m,
            claims: 1,
        }
    );
    assert_eq!(
        again,
        Cost {
            election: bound,
            answer: bound - (m - 1),
            coordinator: m - 2,
            elections_started: m - 1,
            claims: 1,
        }
    );
    within_bound(n, first);
    within_bound(n, again);
    assert_eq!(leaders, vec![NodeId(n - 2)]);
}

#[test]
fn textbook_5_fixed_and_uniform() {
    textbook(5, fixed());
    textbook(5, uniform());
}

#[test]
fn textbook_10_fixed_and_uniform() {
    textbook(10, fixed());
    textbook(10, uniform());
}

#[test]
fn textbook_50_fixed_and_uniform() {
    textbook(50, fixed());
    textbook(50, uniform());
}

#[test]
fn textbook_100_fixed_and_uniform() {
    textbook(100, fixed());
    textbook(100, uniform());
}

/// The literal reading on the same runs: the sitting leader re-claims on every late ELECTION
/// and tells everyone each time, so the first election costs many times the bound.
#[test]
fn literal_reading_exceeds_the_bound() {
    let (first, _, leaders) = run(5, fixed(), BullyVariant::Literal);
    assert_eq!(
        first,
        Cost {
            election: 10,
            answer: 10,
            coordinator: 20,
            elections_started: 9,
            claims: 5,
        }
    );
    assert_eq!(leaders, vec![NodeId(3)]);
    let (first, again, leaders) = run(10, uniform(), BullyVariant::Literal);
    assert_eq!(
        first,
        Cost {
            election: 218,
            answer: 218,
            coordinator: 630,
            elections_started: 139,
            claims: 70,
        }
    );
    // 630 COORDINATORs against the bound's 9; ELECTIONs beyond N(N-1)/2 = 45.
    assert!(first.coordinator > 50 * 9 && first.election > 45);
    // The re-election after the crash happens to stay calm here (the detectors fire 300 ms
    // after the last beat, all within 2 ms): the storm needs late ELECTIONs.
    assert_eq!(again.claims, 1);
    assert_eq!(leaders, vec![NodeId(8)]);
}
