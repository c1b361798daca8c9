//! Protocol-point triggers: a fault lands exactly `delay` after the n-th observation of a kind.

mod common;

use common::*;
use splitbrain_engine::{Fault, NodeId, SimDuration, SimTime, Trigger};

const W: NodeId = NodeId(0);

/// A worker that checks at 10 ms and writes 1 ms after each check, 3 rounds, 10 ms apart:
/// checks at 10, 21, 32 ms and writes at 11, 22, 33 ms when nothing interferes.
fn worker() -> splitbrain_engine::Sim<Probe> {
    sim_of(
        1,
        vec![("w", Probe::new(vec![(ms(10), Tm::Check { rounds: 3 })]))],
    )
}

fn pause(secs: u64) -> Fault {
    Fault::Pause {
        node: W,
        duration: SimDuration::from_secs(secs),
    }
}

#[test]
fn without_a_trigger_the_worker_runs_its_schedule() {
    let mut sim = worker();
    sim.run_until(SimTime::MAX).unwrap();
    let times: Vec<u64> = observed(&sim).iter().map(|o| o.0).collect();
    assert_eq!(
        times,
        [10, 11, 21, 22, 32, 33].map(|m| m * 1_000_000).to_vec()
    );
}

#[test]
fn a_pause_lands_between_the_second_check_and_its_write() {
    let mut sim = worker();
    sim.add_trigger(Trigger {
        node: W,
        kind: "checked".into(),
        nth: 2,
        delay: SimDuration::from_micros(500),
        fault: pause(40),
    });
    sim.run_until(SimTime::MAX).unwrap();
    // Check 2 at 21 ms; pause at 21.5 ms for 40 s; the write due at 22 ms runs at resume,
    // 40.0215 s, and reads its clock there; round 3 follows 10 ms later.
    let resume = 40_021_500_000;
    assert_eq!(
        observed(&sim),
        vec![
            (10_000_000, 0, Obs::Checked { mono: 10_000_000 }),
            (11_000_000, 0, Obs::Wrote { mono: 11_000_000 }),
            (21_000_000, 0, Obs::Checked { mono: 21_000_000 }),
            (resume, 0, Obs::Wrote { mono: resume }),
            (
                resume + 10_000_000,
                0,
                Obs::Checked {
                    mono: resume + 10_000_000
                }
            ),
            (
                resume + 11_000_000,
                0,
                Obs::Wrote {
                    mono: resume + 11_000_000
                }
            ),
        ]
    );
    assert_eq!(sim.applied_faults(), &[(SimTime(21_500_000), pause(40))]);
}

#[test]
fn a_zero_delay_trigger_applies_right_after_the_reporting_handler() {
    // The pause is applied at 10 ms, after the handler that reported the first check and
    // before the write it armed for 11 ms.
    let mut sim = worker();
    sim.add_trigger(Trigger {
        node: W,
        kind: "checked".into(),
        nth: 1,
        delay: SimDuration::ZERO,
        fault: pause(1),
    });
    sim.run_until(SimTime::MAX).unwrap();
    assert_eq!(sim.applied_faults(), &[(SimTime(10_000_000), pause(1))]);
    assert_eq!(
        observed(&sim)[1],
        (
            1_010_000_000,
            0,
            Obs::Wrote {
                mono: 1_010_000_000
            }
        )
    );
}

#[test]
fn a_trigger_fires_once_and_only_on_its_node_and_kind() {
    let mut sim = sim_of(
        1,
        vec![
            ("w", Probe::new(vec![(ms(10), Tm::Check { rounds: 3 })])),
            ("v", Probe::new(vec![(ms(1), Tm::Check { rounds: 3 })])),
        ],
    );
    let on = |node, kind: &str, nth| Trigger {
        node,
        kind: kind.into(),
        nth,
        delay: SimDuration::ZERO,
        fault: Fault::Crash { node },
    };
    sim.add_trigger(on(W, "wrote", 3)); // fires at 33 ms
    sim.add_trigger(on(W, "checked", 4)); // never: only 3 checks
    sim.add_trigger(on(NodeId(1), "restarted", 1)); // never: nobody restarts
    sim.run_until(SimTime::MAX).unwrap();
    assert_eq!(
        sim.applied_faults(),
        &[(SimTime(33_000_000), Fault::Crash { node: W })]
    );
}
