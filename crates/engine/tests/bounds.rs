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
        ..Limits::default()
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
        ..Limits::default()
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
        ..Limits::default()
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
        ..Limits::default()
    });
    // Events at 0 (the send) and at 1..=49 ms; the one at 50 ms is not before `end`.
    assert_eq!(sim.run_until(at_ms(50)), Ok(()));
    assert_eq!(sim.events_processed(), 50);
    assert_eq!(sim.now(), at_ms(50));
}

/// Four probes that each send `sends` pings to the next from `on_start`.
fn senders_at_start(sends: u32) -> splitbrain_engine::Sim<Probe> {
    let nodes = (0..4u32)
        .map(|i| {
            let to = (i + 1) % 4;
            let p = Probe::default().sending_at_start((0..sends).map(|n| (to, n)).collect());
            (["a", "b", "c", "d"][i as usize], p)
        })
        .collect();
    sim_of(1, nodes)
}

#[test]
fn the_start_stops_at_the_in_flight_limit_before_every_node_has_sent() {
    // Each start queues 10 pings; with a bound of 15 the second start crosses it, so the
    // third and fourth nodes never start and no event runs.
    let mut sim = senders_at_start(10);
    sim.set_limits(Limits {
        max_in_flight: 15,
        ..Limits::default()
    });
    assert_eq!(
        sim.run_until(SimTime::MAX),
        Err(SimError::InFlightLimit {
            limit: 15,
            queued: 20,
            at: SimTime::ZERO
        })
    );
    assert_eq!(sim.events_processed(), 0);
    // Even a run asked to end at once reports the bound instead of a run that ended.
    assert!(sim.run_until(SimTime::ZERO).is_err());
    assert_eq!(sim.events_processed(), 0);
}

#[test]
fn a_run_within_the_in_flight_limit_runs_to_its_end() {
    // 40 pings in flight at most: a bound of exactly 40 lets the run finish.
    let mut sim = senders_at_start(10);
    sim.set_limits(Limits {
        max_in_flight: 40,
        ..Limits::default()
    });
    assert_eq!(sim.run_until(SimTime::MAX), Ok(()));
    assert_eq!(sim.events_processed(), 40);
}

#[test]
fn a_queue_grown_by_an_event_stops_at_the_in_flight_limit() {
    // One timer at 1 ms sends 5,000 pings at once. The bound is asked before every 1,024th
    // event: at event 0 one timer is queued; at event 1,024 the timer and 1,023 deliveries
    // have run, and 3,977 pings are still queued, more than 2,000.
    let burst = (0..5_000).map(|n| Tm::Send { to: 1, n }).collect();
    let a = Probe::new(vec![(ms(1), Tm::Do(burst))]);
    let mut sim = sim_of(1, vec![("a", a), ("b", Probe::default())]);
    sim.set_limits(Limits {
        max_in_flight: 2_000,
        ..Limits::default()
    });
    let err = sim.run_until(SimTime::MAX).unwrap_err();
    assert!(
        matches!(
            err,
            SimError::InFlightLimit {
                limit: 2_000,
                queued: 3_977,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(sim.events_processed(), 1_024);
    assert!(err
        .to_string()
        .starts_with("in-flight limit reached: 3977 events queued at true time "));
    // The same burst under a bound of 5,000 runs to its end.
    let burst = (0..5_000).map(|n| Tm::Send { to: 1, n }).collect();
    let a = Probe::new(vec![(ms(1), Tm::Do(burst))]);
    let mut sim = sim_of(1, vec![("a", a), ("b", Probe::default())]);
    sim.set_limits(Limits {
        max_in_flight: 5_000,
        ..Limits::default()
    });
    assert_eq!(sim.run_until(SimTime::MAX), Ok(()));
    assert_eq!(sim.events_processed(), 5_001);
}
