//! Bounds: every run ends, with a typed error at the event or simulated-time limit.

mod common;

use common::*;
use splitbrain_engine::{DelayDist, Limits, LinkModel, Network, SimDuration, SimError, SimTime};

#[test]
fn a_zero_ns_timer_loop_hits_the_event_limit() {
    let mut sim = sim_of(
        1,
        vec![("spin", Probe::new(vec![(SimDuration::ZERO, Tm::Spin)]))],
    );
    sim.set_limits(Limits {
        max_events: 1_000,
        max_time: SimTime::MAX,
    });
    assert_eq!(
        sim.run_until(SimTime::MAX),
        Err(SimError::EventLimit {
            limit: 1_000,
            at: SimTime::ZERO
        })
    );
    assert_eq!(sim.events_processed(), 1_000);
    // Asking again does not run past the bound.
    assert!(sim.run_until(SimTime::MAX).is_err());
    assert_eq!(sim.events_processed(), 1_000);
}

fn ping_pong(delay: SimDuration) -> splitbrain_engine::Sim<Probe> {
    let a = Probe {
        bounce: true,
        ..Probe::new(vec![(SimDuration::ZERO, Tm::Send { to: 1, n: 0 })])
    };
    let b = Probe {
        bounce: true,
        ..Probe::default()
    };
    let mut sim = sim_of(1, vec![("a", a), ("b", b)]);
    *sim.network_mut() = Network::new(LinkModel {
        delay: DelayDist::Fixed(delay),
        ..LinkModel::default()
    });
    sim
}

#[test]
fn a_ping_pong_pair_hits_the_time_limit() {
    // The send timer at 0, then one delivery per ms: the delivery at exactly max_time (1 s)
    // still runs, the one at 1.001 s would cross the bound.
    let mut sim = ping_pong(ms(1));
    sim.set_limits(Limits {
        max_events: u64::MAX,
        max_time: SimTime(1_000_000_000),
    });
    assert_eq!(
        sim.run_until(SimTime::MAX),
        Err(SimError::TimeLimit {
            limit: SimTime(1_000_000_000),
            next: SimTime(1_001_000_000)
        })
    );
    assert_eq!(sim.events_processed(), 1_001);
    assert_eq!(sim.now(), SimTime(1_000_000_000));
}

#[test]
fn a_zero_delay_ping_pong_hits_the_event_limit() {
    let mut sim = ping_pong(SimDuration::ZERO);
    sim.set_limits(Limits {
        max_events: 10_000,
        max_time: SimTime(1_000_000_000),
    });
    assert_eq!(
        sim.run_until(SimTime::MAX),
        Err(SimError::EventLimit {
            limit: 10_000,
            at: SimTime::ZERO
        })
    );
}

#[test]
fn a_run_within_its_bounds_ends_at_the_requested_time() {
    let mut sim = ping_pong(ms(1));
    sim.set_limits(Limits {
        max_events: 100,
        max_time: SimTime(1_000_000_000),
    });
    // Events at 0 (the send) and at 1..=49 ms; the one at 50 ms is not before `end`.
    assert_eq!(sim.run_until(at_ms(50)), Ok(()));
    assert_eq!(sim.events_processed(), 50);
    assert_eq!(sim.now(), at_ms(50));
}
