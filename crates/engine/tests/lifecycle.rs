//! Node lifecycle: crash, restart, stop-the-world pause.

mod common;

use common::*;
use splitbrain_engine::{
    DelayDist, DropReason, Fault, LinkModel, NodeId, SimDuration, SimTime, TraceEvent,
};

const A: NodeId = NodeId(0);
const B: NodeId = NodeId(1);

/// a -> b takes 10 ms; b crashes at 20 ms and restarts at 25 ms.
fn crash_restart_sim() -> splitbrain_engine::Sim<Probe> {
    let a = Probe::new(vec![
        (ms(5), Tm::Send { to: 1, n: 1 }), // arrives 15: before the crash, delivered
        (ms(12), Tm::Send { to: 1, n: 2 }), // arrives 22: b is down
        (ms(18), Tm::Send { to: 1, n: 3 }), // arrives 28: in flight across the crash
        (ms(21), Tm::Send { to: 1, n: 4 }), // sent while down, arrives 31 after the restart
    ]);
    let mut b = Probe::new(vec![
        (ms(1), Tm::Persist(7)),
        (ms(3), Tm::Persist(9)),
        (ms(4), Tm::Mark(1)),
        (ms(22), Tm::Mark(2)), // due while down
        (ms(40), Tm::Mark(3)), // due after the restart: still cancelled by the crash
    ]);
    b.restart_plan = vec![(ms(5), Tm::Mark(100))];
    let mut sim = sim_of(1, vec![("a", a), ("b", b)]);
    sim.network_mut().set_link(
        A,
        B,
        LinkModel {
            delay: DelayDist::Fixed(ms(10)),
            ..LinkModel::default()
        },
    );
    sim.schedule_fault(at_ms(20), Fault::Crash { node: B });
    sim.schedule_fault(at_ms(25), Fault::Restart { node: B });
    sim
}

#[test]
fn crash_drops_in_flight_cancels_timers_and_restart_sees_only_durable_state() {
    let mut sim = crash_restart_sim();
    let events = run_traced(&mut sim, at_ms(100));

    let b_obs: Vec<_> = observed(&sim).into_iter().filter(|o| o.1 == 1).collect();
    assert_eq!(
        b_obs,
        vec![
            (
                4_000_000,
                1,
                Obs::Fired {
                    n: 1,
                    mono: 4_000_000
                }
            ),
            (
                15_000_000,
                1,
                Obs::Got {
                    from: 0,
                    n: 1,
                    mono: 15_000_000
                }
            ),
            // Persisted 7 then 9: the restart sees the last one and nothing else.
            (25_000_000, 1, Obs::Restarted { durable: 9 }),
            // Only the timer armed by on_restart fires; Mark(2) and Mark(3) died with the crash.
            (
                30_000_000,
                1,
                Obs::Fired {
                    n: 100,
                    mono: 30_000_000
                }
            ),
            // Sent after the crash, so not in flight at crash time; b is up when it lands.
            (
                31_000_000,
                1,
                Obs::Got {
                    from: 0,
                    n: 4,
                    mono: 31_000_000
                }
            ),
        ]
    );
    assert_eq!(
        fates(&events),
        vec![
            (0, 1, 1, Fate::Delivered(15_000_000)),
            (0, 1, 2, Fate::Dropped(22_000_000, DropReason::NodeDown)),
            (0, 1, 3, Fate::Dropped(28_000_000, DropReason::Crashed)),
            (0, 1, 4, Fate::Delivered(31_000_000)),
        ]
    );
    let stats = sim.stats();
    assert_eq!(stats.stale_timers, 2, "Mark(2) and Mark(3) were skipped");
    // a: 4 sends; b: 2 persists, Mark(1), Mark(100).
    assert_eq!(stats.timers_fired, 8);
    assert_eq!(stats.drops.get(&DropReason::NodeDown), Some(&1));
    assert_eq!(stats.drops.get(&DropReason::Crashed), Some(&1));
    // The volatile counter restarted from zero: Mark(100) and Ping 4 since the restart.
    assert_eq!(sim.actor(B).volatile, 2);
    assert!(sim.is_up(B));
    assert!(!events.iter().any(|e| matches!(
        e,
        TraceEvent::Timer {
            timer: Tm::Mark(2 | 3),
            ..
        }
    )));
}

#[test]
fn crash_and_restart_are_idempotent() {
    let b = Probe::new(vec![(ms(30), Tm::Mark(1))]);
    let mut sim = sim_of(1, vec![("a", Probe::default()), ("b", b)]);
    // Restarting a node that is up does nothing (no on_restart, its timers survive).
    sim.schedule_fault(at_ms(5), Fault::Restart { node: B });
    sim.schedule_fault(at_ms(10), Fault::Crash { node: B });
    sim.schedule_fault(at_ms(11), Fault::Crash { node: B });
    sim.schedule_fault(at_ms(20), Fault::Restart { node: B });
    sim.run_until(at_ms(50)).unwrap();
    assert_eq!(
        observed(&sim),
        vec![(20_000_000, 1, Obs::Restarted { durable: 0 })]
    );
    assert_eq!(sim.applied_faults().len(), 4);
}

/// p is paused from 10 ms to 5.010 s. s sends to p during the pause, and once more so that the
/// message lands exactly at the resume instant (scheduled after the pause began).
#[test]
fn pause_queues_arrivals_and_due_timers_and_runs_them_in_order_at_resume() {
    let resume = 5_010_000_000u64;
    let p = Probe::new(vec![
        (ms(5), Tm::Mark(0)),
        (ms(2_000), Tm::Mark(1)),
        // Set at start, due exactly at the resume instant: older than the resume, so it is
        // queued with the rest and runs in arrival order.
        (SimDuration(resume), Tm::Mark(2)),
    ]);
    let s = Probe::new(vec![
        (ms(1_000), Tm::Send { to: 0, n: 1 }), // arrives 1.001 s
        (ms(3_000), Tm::Send { to: 0, n: 2 }), // arrives 3.001 s
        (ms(5_009), Tm::Send { to: 0, n: 3 }), // arrives 5.010 s, scheduled after the pause
    ]);
    let mut sim = sim_of(1, vec![("p", p), ("s", s)]);
    sim.schedule_fault(
        at_ms(10),
        Fault::Pause {
            node: A,
            duration: SimDuration::from_secs(5),
        },
    );
    let events = run_traced(&mut sim, at_ms(6_000));
    assert_eq!(
        observed(&sim),
        vec![
            (
                5_000_000,
                0,
                Obs::Fired {
                    n: 0,
                    mono: 5_000_000
                }
            ),
            // Everything ran at the resume instant, in arrival order; the clock kept running
            // through the pause (mono read 5 ms before, 5.010 s after).
            (
                resume,
                0,
                Obs::Got {
                    from: 1,
                    n: 1,
                    mono: resume
                }
            ),
            (resume, 0, Obs::Fired { n: 1, mono: resume }),
            (
                resume,
                0,
                Obs::Got {
                    from: 1,
                    n: 2,
                    mono: resume
                }
            ),
            (resume, 0, Obs::Fired { n: 2, mono: resume }),
            // Newer than the resume: after the queued batch.
            (
                resume,
                0,
                Obs::Got {
                    from: 1,
                    n: 3,
                    mono: resume
                }
            ),
        ]
    );
    // The trace shows the resume before the queued handlers.
    let resume_at = events
        .iter()
        .position(|e| matches!(e, TraceEvent::Resume { node: A, .. }))
        .expect("resume recorded");
    assert_eq!(events[resume_at].time(), SimTime(resume));
    let first_queued = events
        .iter()
        .position(|e| matches!(e, TraceEvent::Deliver { to: A, id: 0, .. }))
        .unwrap();
    assert!(resume_at < first_queued);
    // Nothing was dropped: a pause is not a crash.
    assert!(sim.stats().drops.is_empty());
}

#[test]
fn a_paused_node_reads_the_pause_on_its_clocks() {
    // p marks at 1 s; paused 1.0005 s -> 6.0005 s; its next mark (due 2 s) runs at resume.
    let p = Probe::new(vec![(ms(1_000), Tm::Mark(1)), (ms(2_000), Tm::Mark(2))]);
    let mut sim = sim_of(3, vec![("p", p)]);
    sim.schedule_fault(
        SimTime(1_000_500_000),
        Fault::Pause {
            node: A,
            duration: SimDuration::from_secs(5),
        },
    );
    sim.run_until(at_ms(10_000)).unwrap();
    assert_eq!(
        observed(&sim),
        vec![
            (
                1_000_000_000,
                0,
                Obs::Fired {
                    n: 1,
                    mono: 1_000_000_000
                }
            ),
            (
                6_000_500_000,
                0,
                Obs::Fired {
                    n: 2,
                    mono: 6_000_500_000
                }
            ),
        ]
    );
}

#[test]
fn overlapping_pauses_extend_to_the_later_end() {
    let p = Probe::new(vec![(ms(2), Tm::Mark(1))]);
    let mut sim = sim_of(1, vec![("p", p)]);
    let pause = |ms_: u64| Fault::Pause {
        node: A,
        duration: ms(ms_),
    };
    sim.schedule_fault(at_ms(1), pause(10)); // until 11 ms
    sim.schedule_fault(at_ms(5), pause(2)); // until 7 ms: inside, does not shorten
    sim.schedule_fault(at_ms(8), pause(10)); // until 18 ms: extends
    sim.run_until(at_ms(50)).unwrap();
    assert_eq!(
        observed(&sim),
        vec![(
            18_000_000,
            0,
            Obs::Fired {
                n: 1,
                mono: 18_000_000
            }
        )]
    );
}

/// Regression: a crash during a pause lost the queued messages without a trace event, so a
/// checker saw a send with neither a delivery nor a drop.
#[test]
fn crash_during_pause_drops_queued_messages_as_crashed() {
    let p = Probe::new(vec![(ms(3), Tm::Mark(1))]);
    let s = Probe::new(vec![(ms(1), Tm::Send { to: 0, n: 1 })]); // arrives 2 ms
    let mut sim = sim_of(1, vec![("p", p), ("s", s)]);
    sim.schedule_fault(
        at_ms(1),
        Fault::Pause {
            node: A,
            duration: ms(10),
        },
    );
    sim.schedule_fault(at_ms(5), Fault::Crash { node: A });
    sim.schedule_fault(at_ms(6), Fault::Restart { node: A });
    let events = run_traced(&mut sim, at_ms(50));
    assert_eq!(
        fates(&events),
        vec![(1, 0, 1, Fate::Dropped(5_000_000, DropReason::Crashed))]
    );
    // The queued timer died with the crash; the old resume (11 ms) does nothing.
    assert_eq!(
        observed(&sim),
        vec![(6_000_000, 0, Obs::Restarted { durable: 0 })]
    );
    assert_eq!(sim.stats().stale_timers, 1);
    assert!(!events
        .iter()
        .any(|e| matches!(e, TraceEvent::Resume { .. })));
}

#[test]
fn nodes_are_found_by_name_and_names_are_unique() {
    let sim = sim_of(1, vec![("a", Probe::default()), ("b", Probe::default())]);
    assert_eq!(sim.node_id("b"), Some(B));
    assert_eq!(sim.node_id("c"), None);
    let dup = std::panic::catch_unwind(|| {
        sim_of(1, vec![("a", Probe::default()), ("a", Probe::default())])
    });
    assert!(dup.is_err(), "a duplicate name must be refused");
}
