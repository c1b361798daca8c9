//! The bully actor on the engine, with exact counts (stateright style: the algorithm on a
//! synchronous-enough network fixes every number, so the tests pin them).
//!
//! Every test builds a `Sim<Node>` of five `Node::Bully` nodes named `n1`..`n5` (engine ids
//! 0..4; `n(k)` maps the textbook's node `k` to its id) on a fixed 1 ms, loss-free network.
//! Defaults unless a test says otherwise: answer 50 ms, coordinator 300 ms, heartbeat 100 ms,
//! failure timeout 300 ms. When node 5 is the agreed leader it claims term 1 at t = 0 and
//! heartbeats at 0.1 s, 0.2 s, ...; followers hear each beat 1 ms later.

use splitbrain_engine::{
    DelayDist, Fault, KindCounts, LinkModel, NetRule, Network, NodeId, SimDuration, SimTime,
};
use splitbrain_protocols::bully::{BullyConfig, BullyNode, BullyPhase, BullyVariant};
use splitbrain_protocols::{Node, Obs};

type Sim = splitbrain_engine::Sim<Node>;

/// The textbook's node `k` (1-based) is engine node `k - 1`.
fn n(k: u32) -> NodeId {
    NodeId(k - 1)
}

fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

/// True time `x` µs.
fn at_us(x: u64) -> SimTime {
    SimTime(x * 1_000)
}

/// Five bully nodes; `config(k)` tailors node `k`'s config (peers are filled in).
fn build(config: impl Fn(u32) -> BullyConfig) -> Sim {
    let mut sim = Sim::new(1);
    *sim.network_mut() = Network::new(LinkModel {
        delay: DelayDist::Fixed(ms(1)),
        ..LinkModel::default()
    });
    let peers: std::sync::Arc<[NodeId]> = (1..=5).map(n).collect();
    for k in 1..=5 {
        let cfg = BullyConfig {
            peers: peers.clone(),
            ..config(k)
        };
        let id = sim.add_node(
            &format!("n{k}"),
            Node::Bully(BullyNode::new(cfg)),
            Default::default(),
        );
        assert_eq!(id, n(k));
    }
    sim
}

/// Node 5 is the agreed leader at t = 0; node `k` has failure timeout `failure_ms(k)`.
fn agreed_on_5(failure_ms: impl Fn(u32) -> u64) -> impl Fn(u32) -> BullyConfig {
    move |k| BullyConfig {
        start_election_on_start: false,
        initial_leader: Some(n(5)),
        failure_timeout: ms(failure_ms(k)),
        ..BullyConfig::default()
    }
}

fn bully(sim: &Sim, k: u32) -> &BullyNode {
    match sim.actor(n(k)) {
        Node::Bully(b) => b,
        other => panic!("n{k} is not a bully node: {other:?}"),
    }
}

fn counts(sim: &Sim, kind: &str) -> KindCounts {
    sim.stats().messages.get(kind).copied().unwrap_or_default()
}

/// (sent, delivered, dropped) of a message kind.
fn sdd(sim: &Sim, kind: &str) -> (u64, u64, u64) {
    let c = counts(sim, kind);
    (c.sent, c.delivered, c.dropped)
}

/// Leadership claims as (true µs, node k, term).
fn claims(sim: &Sim) -> Vec<(u64, u32, u64)> {
    sim.observations()
        .iter()
        .filter_map(|o| match o.obs {
            Obs::LeaderClaim { term } => Some((o.t.0 / 1_000, o.node.0 + 1, term)),
            _ => None,
        })
        .collect()
}

/// Step-downs as (true µs, node k, term).
fn step_downs(sim: &Sim) -> Vec<(u64, u32, u64)> {
    sim.observations()
        .iter()
        .filter_map(|o| match o.obs {
            Obs::LeaderStepDown { term } => Some((o.t.0 / 1_000, o.node.0 + 1, term)),
            _ => None,
        })
        .collect()
}

/// Elections started as (true µs, node k).
fn elections(sim: &Sim) -> Vec<(u64, u32)> {
    sim.observations()
        .iter()
        .filter(|o| o.obs == Obs::ElectionStarted)
        .map(|o| (o.t.0 / 1_000, o.node.0 + 1))
        .collect()
}

/// The live nodes that believe they are leader, as k.
fn live_leaders(sim: &Sim) -> Vec<u32> {
    (1..=5)
        .filter(|&k| sim.is_up(n(k)) && bully(sim, k).is_leader())
        .collect()
}

/// Every live node's belief, as k (0 for none).
fn beliefs(sim: &Sim) -> Vec<u32> {
    (1..=5)
        .filter(|&k| sim.is_up(n(k)))
        .map(|k| bully(sim, k).leader().map_or(0, |l| l.0 + 1))
        .collect()
}

/// Node 5 crashes at 1.05 s, just after its beat of 1.0 s (heard at 1.001 s), so every
/// follower's detector deadline is 1.001 + its failure timeout.
const CRASH_5_US: u64 = 1_050_000;

#[test]
fn node4_detects_first_best_case() {
    // Node 4 suspects at 1.301 s; the others (1 s timeout) would only at 2.001 s, and node 4's
    // COORDINATOR reaches them long before.
    let mut sim = build(agreed_on_5(|k| if k == 4 { 300 } else { 1_000 }));
    sim.schedule_fault(at_us(CRASH_5_US), Fault::Crash { node: n(5) });
    sim.run_until(SimTime(3_000_000_000)).unwrap();

    assert_eq!(elections(&sim), vec![(1_301_000, 4)]);
    // 4's only higher peer is 5: one ELECTION, dropped at the dead node, so no ANSWER.
    assert_eq!(sdd(&sim, "ELECTION"), (1, 0, 1));
    assert_eq!(sdd(&sim, "ANSWER"), (0, 0, 0));
    // After 50 ms without an ANSWER, 4 claims term 2 (its term was raised to 5's term 1 by
    // the heartbeats) and sends COORDINATOR to its 3 lower peers: the textbook's best case
    // of N-2 = 3 messages (Coulouris §15.3: "to all processes with lower identifiers").
    assert_eq!(sdd(&sim, "COORDINATOR"), (3, 3, 0));
    assert_eq!(claims(&sim), vec![(0, 5, 1), (1_351_000, 4, 2)]);
    assert_eq!(step_downs(&sim), vec![]);
    assert_eq!(live_leaders(&sim), vec![4]);
    assert_eq!(beliefs(&sim), vec![4, 4, 4, 4]);
}

#[test]
fn node1_detects_first_worst_case() {
    // Node 1 suspects at 1.301 s; the others' detectors (1 s) never fire.
    let mut sim = build(agreed_on_5(|k| if k == 1 { 300 } else { 1_000 }));
    sim.schedule_fault(at_us(CRASH_5_US), Fault::Crash { node: n(5) });
    sim.run_until(SimTime(3_000_000_000)).unwrap();

    // 1.301: 1 sends ELECTION to 2, 3, 4, 5. 1.302: 2, 3 and 4 (idle) each ANSWER 1 and start
    // their own election: 2 -> {3,4,5}, 3 -> {4,5}, 4 -> {5}. ELECTIONs: 4+3+2+1 = 10 sent;
    // the 4 to node 5 are dropped, 6 delivered.
    assert_eq!(
        elections(&sim),
        vec![
            (1_301_000, 1),
            (1_302_000, 2),
            (1_302_000, 3),
            (1_302_000, 4)
        ]
    );
    assert_eq!(sdd(&sim, "ELECTION"), (10, 6, 4));
    // Every delivered ELECTION is answered: 2,3,4 -> 1 at 1.302; 3,4 -> 2 and 4 -> 3 at 1.303
    // (those receivers are already electing, so they answer without a new election).
    assert_eq!(sdd(&sim, "ANSWER"), (6, 6, 0));
    // 4 hears no ANSWER and claims at 1.302 + 50 ms; one COORDINATOR to each lower peer
    // (1, 2, 3 were waiting for it).
    assert_eq!(sdd(&sim, "COORDINATOR"), (3, 3, 0));
    assert_eq!(claims(&sim), vec![(0, 5, 1), (1_352_000, 4, 2)]);
    assert_eq!(live_leaders(&sim), vec![4]);
    assert_eq!(beliefs(&sim), vec![4, 4, 4, 4]);
    for k in 1..=4 {
        assert_eq!(bully(&sim, k).phase(), BullyPhase::Idle);
    }
}

#[test]
fn partition_gives_two_leaders_heal_gives_one() {
    let mut sim = build(agreed_on_5(|_| 300));
    sim.schedule_fault(
        at_us(CRASH_5_US),
        Fault::Network {
            rule: NetRule::Partition {
                groups: vec![vec![n(1), n(2)], vec![n(3), n(4), n(5)]],
            },
        },
    );
    // Heal at 2.5005 s, while 5's beat of 2.5 s is in flight: a link is judged at delivery
    // time (docs/design.md, "The network"), so that beat gets through at 2.501 s.
    sim.schedule_fault(at_us(2_500_500), Fault::Heal);

    sim.run_until(at_us(2_500_000)).unwrap();
    // Both 1 and 2 suspect at 1.301 s (their last beat from 5 was heard at 1.001 s). 1's
    // ELECTION reaches 2, which is electing and only answers; 2's ELECTIONs all hit the cut.
    // 2 claims at 1.351 s: two leaders, one per side, at the same true instant.
    assert_eq!(elections(&sim), vec![(1_301_000, 1), (1_301_000, 2)]);
    assert_eq!(sdd(&sim, "ELECTION"), (4 + 3, 1, 6));
    assert_eq!(sdd(&sim, "ANSWER"), (1, 1, 0));
    // 2 tells its one lower peer.
    assert_eq!(sdd(&sim, "COORDINATOR"), (1, 1, 0));
    assert_eq!(claims(&sim), vec![(0, 5, 1), (1_351_000, 2, 2)]);
    assert_eq!(live_leaders(&sim), vec![2, 5]);
    assert_eq!(beliefs(&sim), vec![2, 2, 5, 5, 5]);

    sim.run_until(SimTime(4_000_000_000)).unwrap();
    // After the heal, 5's beat of 2.5 s reaches 1 and 2 at 2.501 s: a HEARTBEAT from a node
    // higher than the leader they follow is accepted like a COORDINATOR, so 2 steps down and
    // everyone follows 5, without a new election. 2's own beats are ignored by 3, 4, 5.
    assert_eq!(step_downs(&sim), vec![(2_501_000, 2, 2)]);
    assert_eq!(elections(&sim).len(), 2);
    assert_eq!(claims(&sim).len(), 2);
    assert_eq!(live_leaders(&sim), vec![5]);
    assert_eq!(beliefs(&sim), vec![5, 5, 5, 5, 5]);
}

#[test]
fn restarted_higher_node_bullies_its_way_back_with_a_higher_term() {
    let mut sim = build(agreed_on_5(|_| 300));
    sim.schedule_fault(at_us(CRASH_5_US), Fault::Crash { node: n(5) });
    sim.schedule_fault(at_us(3_000_500), Fault::Restart { node: n(5) });

    sim.run_until(at_us(3_000_000)).unwrap();
    // All four survivors suspect at 1.301 s, in id order, and elect at once:
    // ELECTION 4+3+2+1 = 10 (4 dropped at 5), every delivered one answered (6), 4 wins.
    assert_eq!(elections(&sim).len(), 4);
    assert_eq!(sdd(&sim, "ELECTION"), (10, 6, 4));
    assert_eq!(sdd(&sim, "ANSWER"), (6, 6, 0));
    assert_eq!(claims(&sim), vec![(0, 5, 1), (1_351_000, 4, 2)]);
    assert_eq!(bully(&sim, 5).term(), 1);
    assert_eq!(live_leaders(&sim), vec![4]);

    sim.run_until(SimTime(4_000_000_000)).unwrap();
    // 5 restarts with only its durable term (1). Its election has no higher peer, so it
    // claims term 2 at once: greater than its own previous claim (the durable counter at
    // work; with a volatile counter it would claim term 1 again). Its COORDINATOR makes 4
    // step down 1 ms later. Terms are per-node claim counters, so 4's term 2 and 5's term 2
    // coexist: 5 never heard of 4's claim.
    assert_eq!(
        claims(&sim),
        vec![(0, 5, 1), (1_351_000, 4, 2), (3_000_500, 5, 2)]
    );
    assert_eq!(step_downs(&sim), vec![(3_001_500, 4, 2)]);
    assert_eq!(elections(&sim).len(), 5);
    assert_eq!(sdd(&sim, "ELECTION"), (10, 6, 4));
    // 4's claim to 1, 2, 3, then 5's to 1, 2, 3, 4.
    assert_eq!(sdd(&sim, "COORDINATOR"), (3 + 4, 7, 0));
    assert_eq!(live_leaders(&sim), vec![5]);
    assert_eq!(beliefs(&sim), vec![5, 5, 5, 5, 5]);
    assert_eq!(bully(&sim, 5).term(), 2);
}

#[test]
fn restarted_node_term_exceeds_every_term_it_claimed_before() {
    // Node 5 claims, crashes, restarts and claims again, three times: its terms go 1, 2, 3,
    // 4 although every restart wipes its volatile state.
    let mut sim = build(agreed_on_5(|_| 300));
    for i in 0..3u64 {
        let base = 1_000_000 + i * 2_000_000;
        sim.schedule_fault(at_us(base + 50_000), Fault::Crash { node: n(5) });
        sim.schedule_fault(at_us(base + 1_000_500), Fault::Restart { node: n(5) });
    }
    sim.run_until(SimTime(8_000_000_000)).unwrap();
    let terms_of_5: Vec<u64> = claims(&sim)
        .into_iter()
        .filter(|&(_, k, _)| k == 5)
        .map(|(_, _, term)| term)
        .collect();
    assert_eq!(terms_of_5, vec![1, 2, 3, 4]);
    assert_eq!(live_leaders(&sim), vec![5]);
}

#[test]
fn election_at_start_textbook() {
    // Everyone elects at t = 0 (the default). 5 has no higher peer and claims term 1 at once,
    // telling 1..4. At 1 ms the ELECTIONs of 1..4 reach it while it is the sitting leader: it
    // answers each and starts no election (their term, 0, is below its claim: its COORDINATOR
    // is already on the way). The ELECTIONs 2, 3 and 4 receive at 1 ms are answered; the
    // receivers are still electing (5's COORDINATOR arrives at the same instant, after them),
    // so no one elects twice.
    let mut sim = build(|_| BullyConfig::default());
    sim.run_until(SimTime(1_000_000_000)).unwrap();
    assert_eq!(sdd(&sim, "ELECTION"), (4 + 3 + 2 + 1, 10, 0));
    assert_eq!(sdd(&sim, "ANSWER"), (10, 10, 0));
    assert_eq!(sdd(&sim, "COORDINATOR"), (4, 4, 0));
    assert_eq!(elections(&sim).len(), 5);
    assert_eq!(claims(&sim), vec![(0, 5, 1)]);
    assert_eq!(step_downs(&sim), vec![]);
    assert_eq!(live_leaders(&sim), vec![5]);
    assert_eq!(beliefs(&sim), vec![5, 5, 5, 5, 5]);
}

#[test]
fn election_at_start_literal_rule() {
    // The literal reading: at 1 ms the ELECTIONs of 1..4 reach 5 while it is an idle leader:
    // it answers each and elects again, winning at once each time (terms 2..5), and each time
    // it tells all 4 others.
    let mut sim = build(|_| BullyConfig {
        variant: BullyVariant::Literal,
        ..BullyConfig::default()
    });
    sim.run_until(SimTime(1_000_000_000)).unwrap();
    assert_eq!(sdd(&sim, "ELECTION"), (4 + 3 + 2 + 1, 10, 0));
    assert_eq!(sdd(&sim, "ANSWER"), (10, 10, 0));
    assert_eq!(sdd(&sim, "COORDINATOR"), (5 * 4, 20, 0));
    assert_eq!(
        claims(&sim),
        vec![
            (0, 5, 1),
            (1_000, 5, 2),
            (1_000, 5, 3),
            (1_000, 5, 4),
            (1_000, 5, 5)
        ]
    );
    assert_eq!(step_downs(&sim).len(), 4);
    assert_eq!(live_leaders(&sim), vec![5]);
    assert_eq!(beliefs(&sim), vec![5, 5, 5, 5, 5]);
}

#[test]
fn answer_without_coordinator_restarts_the_election() {
    // Node 1 suspects at 1.301 s; 2, 3 and 4 answer it at 1.302 s and then all crash at
    // 1.3025 s, before any of them can claim. Node 1 waits the coordinator timeout (300 ms
    // from the first ANSWER at 1.303 s), elects again at 1.603 s, hears nobody and claims at
    // 1.653 s.
    let mut sim = build(agreed_on_5(|k| if k == 1 { 300 } else { 1_000 }));
    sim.schedule_fault(at_us(CRASH_5_US), Fault::Crash { node: n(5) });
    for k in 2..=4 {
        sim.schedule_fault(at_us(1_302_500), Fault::Crash { node: n(k) });
    }
    sim.run_until(SimTime(3_000_000_000)).unwrap();
    assert_eq!(
        elections(&sim),
        vec![
            (1_301_000, 1),
            (1_302_000, 2),
            (1_302_000, 3),
            (1_302_000, 4),
            (1_603_000, 1)
        ]
    );
    // 4 + 3 + 2 + 1 in the first round (only 1's three to live nodes delivered), 4 more in the
    // second, all to dead nodes.
    assert_eq!(sdd(&sim, "ELECTION"), (14, 3, 11));
    assert_eq!(sdd(&sim, "ANSWER"), (3, 3, 0));
    // 1 has no lower peer to tell.
    assert_eq!(sdd(&sim, "COORDINATOR"), (0, 0, 0));
    assert_eq!(claims(&sim), vec![(0, 5, 1), (1_653_000, 1, 2)]);
    assert_eq!(live_leaders(&sim), vec![1]);
}
