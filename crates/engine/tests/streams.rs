//! Seeded streams: each actor draws from its own stream, whatever else is in the run.

mod common;

use common::*;
use splitbrain_engine::{DelayDist, LinkModel, Network, RngStream, Sim, SimDuration, SimTime};

fn gossiper() -> Probe {
    Probe::new(vec![(ms(1), Tm::Gossip { rounds: 20 })])
}

/// A gossip run over `names` with a random network (so the "net" stream is busy too).
fn gossip(seed: u64, names: &[&str]) -> Sim<Probe> {
    let mut sim = sim_of(seed, names.iter().map(|&n| (n, gossiper())).collect());
    *sim.network_mut() = Network::new(LinkModel {
        delay: DelayDist::Uniform {
            lo: SimDuration::from_micros(100),
            hi: ms(3),
        },
        loss_ppm: 100_000,
        ..LinkModel::default()
    });
    sim
}

/// The draws node `name` reported, in order.
fn draws_of(sim: &Sim<Probe>, name: &str) -> Vec<(u32, u64)> {
    let id = sim.node_id(name).expect("node exists");
    sim.observations()
        .iter()
        .filter(|o| o.node == id)
        .filter_map(|o| match o.obs {
            Obs::Drew {
                payload, delay_ns, ..
            } => Some((payload, delay_ns)),
            _ => None,
        })
        .collect()
}

#[test]
fn adding_an_actor_leaves_every_other_actors_draws_unchanged() {
    let mut small = gossip(11, &["a", "b"]);
    small.run_until(SimTime::MAX).unwrap();
    // "x" is inserted between a and b: b's node id changes, its stream does not.
    let mut big = gossip(11, &["a", "x", "b"]);
    big.run_until(SimTime::MAX).unwrap();
    for name in ["a", "b"] {
        let (s, b) = (draws_of(&small, name), draws_of(&big, name));
        assert_eq!(s.len(), 20);
        assert_eq!(s, b, "draws of {name} changed when x was added");
    }
    // x itself draws from its own stream.
    assert_ne!(draws_of(&big, "x"), draws_of(&big, "a"));
}

#[test]
fn an_actors_stream_is_the_named_stream_of_the_run_seed() {
    let mut sim = gossip(11, &["a", "b"]);
    sim.run_until(SimTime::MAX).unwrap();
    // Each round draws peer, payload, delay: three next_u64 from "actor/a".
    let mut r = RngStream::new(11, "actor/a");
    let expected: Vec<(u32, u64)> = (0..20)
        .map(|_| {
            r.next_u64(); // the peer
            let payload = r.next_u64() as u32;
            let delay = r.uniform_inclusive(1_000_000, 5_000_000);
            (payload, delay)
        })
        .collect();
    assert_eq!(draws_of(&sim, "a"), expected);
}

#[test]
fn the_network_stream_does_not_depend_on_actor_draws() {
    // Same sends, but the senders draw different amounts: the delays the network picks for
    // them do not change.
    let sender = |extra_draws: u32| {
        let mut plan = vec![];
        for _ in 0..extra_draws {
            plan.push((SimDuration(1), Tm::Draw));
        }
        plan.push((ms(1), Tm::Send { to: 1, n: 1 }));
        plan.push((ms(2), Tm::Send { to: 1, n: 2 }));
        Probe::new(plan)
    };
    let arrivals = |extra| {
        let mut sim = sim_of(3, vec![("s", sender(extra)), ("r", Probe::default())]);
        *sim.network_mut() = Network::new(LinkModel {
            delay: DelayDist::Uniform {
                lo: SimDuration(1),
                hi: ms(100),
            },
            fifo: false,
            ..LinkModel::default()
        });
        sim.run_until(SimTime::MAX).unwrap();
        observed(&sim)
            .iter()
            .filter(|o| matches!(o.2, Obs::Got { .. }))
            .map(|o| o.0)
            .collect::<Vec<_>>()
    };
    let base = arrivals(0);
    assert_eq!(base.len(), 2);
    assert_eq!(base, arrivals(3));
    let mut net = RngStream::new(3, "net");
    let d1 = net.uniform_inclusive(1, 100_000_000);
    let d2 = net.uniform_inclusive(1, 100_000_000);
    let mut expected = vec![1_000_000 + d1, 2_000_000 + d2];
    expected.sort_unstable();
    assert_eq!(base, expected);
}
