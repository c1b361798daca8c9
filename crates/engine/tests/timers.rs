//! Timers: cancellation, slot reuse, and conversion of local durations under clock drift.

mod common;

use common::*;
use splitbrain_engine::{ClockConfig, Fault, NodeId, Sim, SimDuration, SimTime, TraceEvent};

const A: NodeId = NodeId(0);

#[test]
fn a_cancelled_timer_never_fires_and_costs_no_handler() {
    // armed[0] = Mark(1) at 10 ms, armed[1] = Cancel(0) at 5 ms.
    let p = Probe::new(vec![(ms(10), Tm::Mark(1)), (ms(5), Tm::Cancel(0))]);
    let mut sim = sim_of(1, vec![("p", p)]);
    let events = run_traced(&mut sim, at_ms(50));
    assert!(observed(&sim).is_empty());
    assert!(!events.iter().any(|e| matches!(
        e,
        TraceEvent::Timer {
            timer: Tm::Mark(1),
            ..
        }
    )));
    let s = sim.stats();
    assert_eq!(s.timers_fired, 1, "only the Cancel handler ran");
    assert_eq!(s.stale_timers, 1);
    assert_eq!(
        s.events, 2,
        "the skipped entry still counts as a processed event"
    );
}

#[test]
fn reusing_a_cancelled_slot_does_not_resurrect_the_old_timer() {
    // armed[0] = Mark(1) at 10 ms. At 2 ms one handler cancels it and arms Mark(2) for +20 ms
    // (22 ms): the new timer takes the slot just freed. The stale 10 ms entry must not fire
    // Mark(2) early, and cancelling armed[0] again at 6 ms must not touch the slot's new owner.
    let p = Probe::new(vec![
        (ms(10), Tm::Mark(1)),
        (
            ms(2),
            Tm::Do(vec![
                Tm::Cancel(0),
                Tm::Arm {
                    n: 2,
                    after_ns: 20_000_000,
                },
            ]),
        ),
        (ms(6), Tm::Cancel(0)),
    ]);
    let mut sim = sim_of(1, vec![("p", p)]);
    sim.run_until(at_ms(50)).unwrap();
    assert_eq!(
        observed(&sim),
        vec![(
            22_000_000,
            0,
            Obs::Fired {
                n: 2,
                mono: 22_000_000
            }
        )]
    );
    let s = sim.stats();
    assert_eq!(s.stale_timers, 1);
    // Mark(1)'s entry at 10 ms, then 3 handlers and Mark(2).
    assert_eq!((s.events, s.timers_fired), (4, 3));
}

#[test]
fn cancelling_a_fired_timer_does_not_cancel_the_slots_next_owner() {
    // armed[0] = Mark(1) fires at 1 ms; the same handler arms Mark(2) for +10 ms, which takes
    // the slot Mark(1) just left. Cancel(0) at 3 ms names the fired timer: a no-op.
    let p = Probe::new(vec![
        (
            ms(1),
            Tm::Do(vec![
                Tm::Mark(1),
                Tm::Arm {
                    n: 2,
                    after_ns: 10_000_000,
                },
            ]),
        ),
        (ms(3), Tm::Cancel(0)),
    ]);
    let mut sim = sim_of(1, vec![("p", p)]);
    sim.run_until(at_ms(50)).unwrap();
    assert_eq!(
        observed(&sim),
        vec![
            (
                1_000_000,
                0,
                Obs::Fired {
                    n: 1,
                    mono: 1_000_000
                }
            ),
            (
                11_000_000,
                0,
                Obs::Fired {
                    n: 2,
                    mono: 11_000_000
                }
            ),
        ]
    );
    assert_eq!(sim.stats().stale_timers, 0);
}

/// Regression: a timer that came due during a pause was taken out of its slot when it was
/// queued, so cancelling it from an earlier queued handler had no effect and it fired anyway.
#[test]
fn a_timer_cancelled_while_queued_in_a_pause_never_fires() {
    // p: armed[0] = Mark(1) due 20 ms. s sends CancelTimer(0) arriving at 15 ms. p is paused
    // 10..30 ms, so both queue: the cancel (arrived first) runs first at 30 ms.
    let p = Probe::new(vec![(ms(20), Tm::Mark(1)), (ms(21), Tm::Mark(2))]);
    let s = Probe::new(vec![(
        ms(14),
        Tm::SendMsg {
            to: 0,
            msg: Msg::CancelTimer(0),
        },
    )]);
    let mut sim = sim_of(1, vec![("p", p), ("s", s)]);
    sim.schedule_fault(
        at_ms(10),
        Fault::Pause {
            node: A,
            duration: ms(20),
        },
    );
    let events = run_traced(&mut sim, at_ms(50));
    assert_eq!(
        observed(&sim),
        vec![(
            30_000_000,
            0,
            Obs::Fired {
                n: 2,
                mono: 30_000_000
            }
        )]
    );
    assert!(!events.iter().any(|e| matches!(
        e,
        TraceEvent::Timer {
            timer: Tm::Mark(1),
            ..
        }
    )));
    assert_eq!(sim.stats().stale_timers, 1);
}

fn drifting(drift_ppm: i64, plan: Vec<(SimDuration, Tm)>) -> Sim<Probe> {
    let mut sim = Sim::new(1);
    sim.add_node(
        "p",
        Probe::new(plan),
        ClockConfig {
            drift_ppm,
            wall_offset_ns: 0,
            ..ClockConfig::default()
        },
    );
    sim
}

#[test]
fn a_fast_clock_fires_a_one_second_local_timer_early_rounded_up() {
    // mono(t) = floor(t * 1.1). The first true ns with mono >= 1e9 is ceil(1e9 / 1.1) =
    // 909_090_910 (mono there is floor(1_000_000_001.0) = 1_000_000_001; one ns earlier it is
    // 999_999_999).
    let mut sim = drifting(100_000, vec![(SimDuration::from_secs(1), Tm::Mark(1))]);
    sim.run_until(SimTime(2_000_000_000)).unwrap();
    assert_eq!(
        observed(&sim),
        vec![(
            909_090_910,
            0,
            Obs::Fired {
                n: 1,
                mono: 1_000_000_001
            }
        )]
    );
    assert_eq!(sim.clock(A).mono(SimTime(909_090_909)).0, 999_999_999);
}

#[test]
fn a_slow_clock_fires_late_and_chained_timers_accumulate_from_the_local_reading() {
    // -100_000 ppm: mono(t) = floor(0.9 t). 1 s local = ceil(1e9 / 0.9) = 1_111_111_112 true
    // ns (mono 1_000_000_000 after flooring 1_000_000_000.8).
    let mut sim = drifting(-100_000, vec![(SimDuration::from_secs(1), Tm::Mark(1))]);
    sim.run_until(SimTime(2_000_000_000)).unwrap();
    assert_eq!(
        observed(&sim),
        vec![(
            1_111_111_112,
            0,
            Obs::Fired {
                n: 1,
                mono: 1_000_000_000
            }
        )]
    );
}
