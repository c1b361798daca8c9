//! Message ids in the trace: the engine keeps a message's id beside its slot only while the
//! recorder builds events, so these pin that every delivery and drop still names its send.

mod common;

use common::{at_ms, ms, run_traced, sim_of, Probe, Tm};
use splitbrain_engine::{Recorder, Sim, SimTime, TraceEvent};
use std::collections::BTreeMap;

fn gossips(n: usize) -> Vec<(String, Probe)> {
    (0..n)
        .map(|i| {
            (
                format!("p{i}"),
                Probe::new(vec![(ms(1), Tm::Gossip { rounds: 400 })]),
            )
        })
        .collect()
}

/// A simulation of `n` gossiping probes.
fn gossip_sim(n: usize) -> Sim<Probe> {
    let probes = gossips(n);
    sim_of(
        7,
        probes
            .iter()
            .map(|(n, p)| (n.as_str(), p.clone()))
            .collect(),
    )
}

/// Thousands of messages, many in flight at once, so slots are freed and reused many times:
/// each delivery names the id of a send on the same link, and each id is delivered once.
#[test]
fn every_delivery_names_its_send() {
    let mut sim = gossip_sim(6);
    let events = run_traced(&mut sim, at_ms(5_000));
    let mut sent = BTreeMap::new();
    let mut delivered = BTreeMap::new();
    for ev in &events {
        match ev {
            TraceEvent::Send { from, to, id, .. } => {
                assert!(
                    sent.insert(*id, (*from, *to)).is_none(),
                    "id {id} sent twice"
                );
            }
            TraceEvent::Deliver { from, to, id, .. } => {
                assert_eq!(sent.get(id), Some(&(*from, *to)), "delivery of id {id}");
                *delivered.entry(*id).or_insert(0) += 1;
            }
            _ => {}
        }
    }
    assert!(sent.len() > 2_000, "only {} sends", sent.len());
    assert!(
        delivered.len() > 2_000,
        "only {} deliveries",
        delivered.len()
    );
    assert!(delivered.values().all(|&c| c == 1));
    // Ids are the send order: 0, 1, 2, ...
    assert!(sent.keys().copied().eq(0..sent.len() as u64));
}

/// A recorder that builds events, set while messages sent without one are in flight, would
/// have no ids for them: refused with a message that says what to do.
#[test]
#[should_panic(expected = "set the recorder before the first event")]
fn a_recorder_set_mid_run_is_refused() {
    let mut sim = gossip_sim(3);
    // Just after the first gossip round (at 1 ms): its messages are on their way.
    sim.run_until(SimTime(at_ms(1).0 + 1))
        .expect("within bounds");
    sim.set_recorder(Recorder::hash_only());
}

/// Three probes, each sending one message to the next (p0 -> p1 -> p2 -> p0) in `on_start`.
fn ring_sending_at_start() -> Sim<Probe> {
    let start = |i: u32| {
        (
            format!("p{i}"),
            Probe::new(vec![]).sending_at_start(vec![((i + 1) % 3, i)]),
        )
    };
    let probes: Vec<_> = (0..3).map(start).collect();
    sim_of(
        7,
        probes
            .iter()
            .map(|(n, p)| (n.as_str(), p.clone()))
            .collect(),
    )
}

/// Before the first event every message keeps its id, so a recorder set after the actors'
/// `on_start` (a `run_until` of time 0) names the messages they sent.
#[test]
fn a_recorder_set_after_start_names_the_start_messages() {
    let mut sim = ring_sending_at_start();
    sim.run_until(SimTime::ZERO).expect("within bounds");
    let events = run_traced(&mut sim, at_ms(100));
    let delivered: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::Deliver { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(delivered.len(), 3);
    assert_eq!(
        delivered
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>(),
        (0..3).collect()
    );
}

/// A count-only recorder builds no event, so it may be set at any time.
#[test]
fn a_count_only_recorder_may_be_set_mid_run() {
    let mut sim = gossip_sim(3);
    sim.run_until(at_ms(50)).expect("within bounds");
    sim.set_recorder(Recorder::count_only());
    sim.run_until(at_ms(500)).expect("within bounds");
    let summary = sim.take_recorder().expect("set").finish().expect("no I/O");
    assert!(summary.events > 100, "{}", summary.events);
}

/// A run that said it records no trace keeps no ids even for the messages sent at its start,
/// so a recorder that builds events, set after the start, is refused rather than left
/// without them.
#[test]
#[should_panic(expected = "set the recorder before the first event")]
fn a_recorder_after_record_no_trace_is_refused_while_start_messages_fly() {
    let mut sim = ring_sending_at_start();
    sim.record_no_trace();
    sim.run_until(SimTime::ZERO).expect("within bounds");
    sim.set_recorder(Recorder::hash_only());
}
