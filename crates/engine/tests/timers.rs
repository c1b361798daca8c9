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

// A timer fires when the node's monotonic clock reaches its deadline (set time + duration on
// that clock), whatever the rate does meanwhile: a drift change re-schedules the node's
// pending timers (`Fault::SetDrift`). Before, a timer kept the true instant computed with the
// rate in force when it was set, and fired at the monotonic time the old rate promised.

/// A drift-free node `p` with `plan`, whose drift becomes `drift_ppm` at 10 ms true.
fn drift_change_at_10ms(drift_ppm: i64, plan: Vec<(SimDuration, Tm)>) -> Sim<Probe> {
    let mut sim = sim_of(1, vec![("p", Probe::new(plan))]);
    sim.schedule_fault(at_ms(10), Fault::SetDrift { node: A, drift_ppm });
    sim
}

#[test]
fn a_timer_set_before_the_clock_speeds_up_fires_at_its_monotonic_deadline() {
    // 100 ms local set at 0 at drift 0: the deadline is mono 100 ms. From 10 ms the clock runs
    // at 1.5x: mono(t) = 10 ms + floor(1.5 (t - 10 ms)) reaches 100 ms at t = 10 ms +
    // 90 ms / 1.5 = 70 ms exactly (it fired at 100 ms true, mono 145 ms, before the fix).
    let mut sim = drift_change_at_10ms(500_000, vec![(ms(100), Tm::Mark(1))]);
    sim.run_until(at_ms(200)).unwrap();
    assert_eq!(
        observed(&sim),
        vec![(
            70_000_000,
            0,
            Obs::Fired {
                n: 1,
                mono: 100_000_000
            }
        )]
    );
    assert_eq!(sim.clock(A).mono(SimTime(69_999_999)).0, 99_999_998);
    // The entry at 100 ms the drift change replaced is skipped as stale.
    assert_eq!(sim.stats().stale_timers, 1);
}

#[test]
fn a_timer_set_before_the_clock_slows_down_fires_at_its_monotonic_deadline() {
    // From 10 ms the clock runs at 0.5x: 90 ms local left take 180 ms true, so the timer fires
    // at 190 ms (it fired at 100 ms true, mono 55 ms, before the fix).
    let mut sim = drift_change_at_10ms(-500_000, vec![(ms(100), Tm::Mark(1))]);
    sim.run_until(at_ms(300)).unwrap();
    assert_eq!(
        observed(&sim),
        vec![(
            190_000_000,
            0,
            Obs::Fired {
                n: 1,
                mono: 100_000_000
            }
        )]
    );
    assert_eq!(sim.clock(A).mono(SimTime(189_999_999)).0, 99_999_999);
}

#[test]
fn a_wall_clock_step_moves_no_monotonic_timer() {
    // Steps of +50 s at 5 ms and -80 s at 20 ms move the wall clock only: Mark(1) (100 ms
    // local, drift 0 throughout) fires at 100 ms. Mark(2) also lives through a drift change to
    // 2x at 10 ms between the steps: it fires when mono reaches 100 ms, 10 ms + 90 ms / 2 =
    // 55 ms, steps or not.
    let mut sim = sim_of(1, vec![("p", Probe::new(vec![(ms(100), Tm::Mark(1))]))]);
    sim.schedule_fault(
        at_ms(5),
        Fault::ClockStep {
            node: A,
            delta_ns: 50_000_000_000,
        },
    );
    sim.schedule_fault(
        at_ms(20),
        Fault::ClockStep {
            node: A,
            delta_ns: -80_000_000_000,
        },
    );
    sim.run_until(at_ms(200)).unwrap();
    assert_eq!(
        observed(&sim),
        vec![(
            100_000_000,
            0,
            Obs::Fired {
                n: 1,
                mono: 100_000_000
            }
        )]
    );
    assert_eq!(sim.clock(A).steps_ns(), -30_000_000_000);

    let mut sim = drift_change_at_10ms(1_000_000, vec![(ms(100), Tm::Mark(2))]);
    for (at, delta_ns) in [(5, 50_000_000_000), (20, -80_000_000_000)] {
        sim.schedule_fault(at_ms(at), Fault::ClockStep { node: A, delta_ns });
    }
    sim.run_until(at_ms(200)).unwrap();
    assert_eq!(
        observed(&sim),
        vec![(
            55_000_000,
            0,
            Obs::Fired {
                n: 2,
                mono: 100_000_000
            }
        )]
    );
}

#[test]
fn a_cancelled_timer_stays_cancelled_and_a_moved_one_can_still_be_cancelled() {
    // armed[0] Mark(1) 100 ms, cancelled by armed[1] at 5 ms, before the drift change to 1.5x
    // at 10 ms. armed[2] Mark(2) 100 ms, cancelled by armed[3] (local 40 ms: true 10 + 30 /
    // 1.5 = 30 ms) after the change moved it: the change bumped its slot's generation, and
    // its `TimerId` must still name it. armed[4] Mark(3) 100 ms fires at 70 ms.
    let mut sim = drift_change_at_10ms(
        500_000,
        vec![
            (ms(100), Tm::Mark(1)),
            (ms(5), Tm::Cancel(0)),
            (ms(100), Tm::Mark(2)),
            (ms(40), Tm::Cancel(2)),
            (ms(100), Tm::Mark(3)),
        ],
    );
    let events = run_traced(&mut sim, at_ms(200));
    assert_eq!(
        observed(&sim),
        vec![(
            70_000_000,
            0,
            Obs::Fired {
                n: 3,
                mono: 100_000_000
            }
        )]
    );
    let timers: Vec<(u64, Tm)> = events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::Timer { t, timer, .. } => Some((t.0, timer.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        timers,
        vec![
            (5_000_000, Tm::Cancel(0)),
            (30_000_000, Tm::Cancel(2)),
            (70_000_000, Tm::Mark(3)),
        ]
    );
    // Stale: Mark(1)'s entry (cancelled); the old entries of Cancel(2), Mark(2) and Mark(3)
    // (moved); Mark(2)'s new entry (cancelled).
    assert_eq!(sim.stats().stale_timers, 5);
}

/// Timers moved to the same true instant run in the order they were set, which is neither
/// their deadline order nor their slot order here; the run is the same event for event.
#[test]
fn timers_moved_to_one_instant_run_in_set_order_and_the_run_is_deterministic() {
    // Mark(5) fires at 1 ms, freeing slot 0. At 2 ms the Do handler (slot 1, freed before it
    // runs) arms Mark(1) for 98 ms (deadline mono 100 ms, slot 1), then Mark(2) for
    // 97.999999 ms (deadline 99.999999 ms, slot 0). At 10 ms the clock goes to 3x: mono(t) =
    // 10 ms + 3 (t - 10 ms) reaches both deadlines at t = 40 ms (90 ms / 3, and
    // ceil(89.999999 ms / 3)). Before the fix they fired at 99.999999 ms and 100 ms.
    let run = || {
        let mut sim = drift_change_at_10ms(
            2_000_000,
            vec![
                (ms(1), Tm::Mark(5)),
                (
                    ms(2),
                    Tm::Do(vec![
                        Tm::Arm {
                            n: 1,
                            after_ns: 98_000_000,
                        },
                        Tm::Arm {
                            n: 2,
                            after_ns: 97_999_999,
                        },
                    ]),
                ),
            ],
        );
        let events = run_traced(&mut sim, at_ms(200));
        (observed(&sim), events)
    };
    let (obs, events) = run();
    assert_eq!(
        obs,
        vec![
            (
                1_000_000,
                0,
                Obs::Fired {
                    n: 5,
                    mono: 1_000_000
                }
            ),
            (
                40_000_000,
                0,
                Obs::Fired {
                    n: 1,
                    mono: 100_000_000
                }
            ),
            (
                40_000_000,
                0,
                Obs::Fired {
                    n: 2,
                    mono: 100_000_000
                }
            ),
        ]
    );
    let (obs_again, events_again) = run();
    assert_eq!(obs, obs_again);
    assert_eq!(format!("{events:?}"), format!("{events_again:?}"));
}

#[test]
fn a_moved_timer_whose_deadline_passes_in_a_pause_runs_at_resume_once() {
    // Pause 5..80 ms. Mark(1) (100 ms local) is moved to 70 ms by the change to 1.5x at 10 ms,
    // inside the pause: it queues and runs at 80 ms (before the fix it fired at 100 ms).
    // Mark(2) (50 ms local, due at 50 ms under drift 0 before the change, 10 + 40 / 1.5 =
    // 36.666667 ms after it) queues too, and runs first: it came due first. A second change at
    // 75 ms, back to drift 0, leaves both where they are: their deadlines were reached.
    let mut sim =
        drift_change_at_10ms(500_000, vec![(ms(100), Tm::Mark(1)), (ms(50), Tm::Mark(2))]);
    sim.schedule_fault(
        at_ms(5),
        Fault::Pause {
            node: A,
            duration: ms(75),
        },
    );
    sim.schedule_fault(
        at_ms(75),
        Fault::SetDrift {
            node: A,
            drift_ppm: 0,
        },
    );
    sim.run_until(at_ms(300)).unwrap();
    // mono = 10 + 1.5 * 65 = 107.5 ms at the second change (75 ms), then 5 ms more at 1x.
    assert_eq!(
        observed(&sim),
        vec![
            (
                80_000_000,
                0,
                Obs::Fired {
                    n: 2,
                    mono: 112_500_000
                }
            ),
            (
                80_000_000,
                0,
                Obs::Fired {
                    n: 1,
                    mono: 112_500_000
                }
            ),
        ]
    );
    assert_eq!(sim.stats().timers_fired, 2);
}

/// The engine keeps timers' deadlines only once a drift change is scheduled (so W1, which
/// has none, pays nothing): a drift change scheduled through the API after a timer was set
/// leaves that timer at its instant, and moves the timers set after it was scheduled.
#[test]
fn a_drift_change_scheduled_mid_run_moves_only_timers_set_after_it_was_scheduled() {
    let mut sim = sim_of(
        1,
        vec![(
            "p",
            Probe::new(vec![
                (ms(100), Tm::Mark(1)),
                (
                    ms(5),
                    Tm::Arm {
                        n: 2,
                        after_ns: 95_000_000,
                    },
                ),
            ]),
        )],
    );
    sim.run_until(at_ms(1)).unwrap();
    sim.schedule_fault(
        at_ms(10),
        Fault::SetDrift {
            node: A,
            drift_ppm: 500_000,
        },
    );
    sim.run_until(at_ms(200)).unwrap();
    assert_eq!(
        observed(&sim),
        vec![
            (
                70_000_000,
                0,
                Obs::Fired {
                    n: 2,
                    mono: 100_000_000
                }
            ),
            (
                100_000_000,
                0,
                Obs::Fired {
                    n: 1,
                    mono: 145_000_000
                }
            ),
        ]
    );
}
