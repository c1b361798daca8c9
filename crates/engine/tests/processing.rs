//! Processing time (Coulouris's Tprocess): a node handles one message at a time, each for its
//! handling time; what reaches a busy node waits in arrival order; a pause freezes a handling
//! under way; a crash drops it. Exact times pinned.

mod common;

use common::*;
use splitbrain_engine::{DropReason, Fault, NodeId, Processing, SimDuration};

const B: NodeId = NodeId(1);

fn pings(times_ms: &[u64]) -> Probe {
    Probe::new(
        times_ms
            .iter()
            .enumerate()
            .map(|(i, t)| {
                (
                    ms(*t),
                    Tm::Send {
                        to: 1,
                        n: i as u32 + 1,
                    },
                )
            })
            .collect(),
    )
}

fn every_ping_takes(d: SimDuration) -> Processing {
    Processing {
        rules: vec![(Some("PING".into()), d)],
    }
}

/// a sends pings at 0, 2 and 3 ms (1 ms link); b handles each in 5 ms. They arrive at 1, 3
/// and 4 ms and are handled one after another: done at 6, 11 and 16 ms.
#[test]
fn messages_wait_for_a_busy_node_and_take_their_handling_time() {
    let mut b = Probe::new(vec![(ms(7), Tm::Mark(1))]);
    b.bounce = false;
    let mut sim = sim_of(1, vec![("a", pings(&[0, 2, 3])), ("b", b)]);
    sim.set_processing(B, every_ping_takes(ms(5)));
    let events = run_traced(&mut sim, at_ms(100));
    let f: Vec<_> = fates(&events).into_iter().map(|x| x.3).collect();
    assert_eq!(
        f,
        [
            Fate::Delivered(6_000_000),
            Fate::Delivered(11_000_000),
            Fate::Delivered(16_000_000)
        ]
    );
    // The timer due at 7 ms (while ping 2 is handled, 6..11) queues behind ping 3 (arrived at
    // 4 ms): it runs at 16 ms, when ping 3 is done; timers take no handling time.
    let b_obs: Vec<_> = observed(&sim).into_iter().filter(|o| o.1 == 1).collect();
    assert_eq!(b_obs.last().unwrap().0, 16_000_000);
    assert!(matches!(b_obs.last().unwrap().2, Obs::Fired { n: 1, .. }));
}

#[test]
fn zero_or_unmatched_processing_time_changes_nothing() {
    let run = |p: Option<Processing>| {
        let mut sim = sim_of(1, vec![("a", pings(&[0, 2, 3])), ("b", Probe::default())]);
        if let Some(p) = p {
            sim.set_processing(B, p);
        }
        let events = run_traced(&mut sim, at_ms(100));
        serde_json::to_string(&events).unwrap()
    };
    let plain = run(None);
    assert_eq!(plain, run(Some(every_ping_takes(SimDuration::ZERO))));
    assert_eq!(
        plain,
        run(Some(Processing {
            rules: vec![(Some("CANCEL".into()), ms(5))]
        }))
    );
}

/// A pause at 3 ms freezes ping 1's handling (1..6 ms: 2 ms done, 3 ms left) until 10 ms:
/// it is done at 13 ms; ping 2 (arrived at 4 ms, during the pause) then takes 13..18 ms.
#[test]
fn a_pause_freezes_the_handling_under_way() {
    let mut sim = sim_of(1, vec![("a", pings(&[0, 3])), ("b", Probe::default())]);
    sim.set_processing(B, every_ping_takes(ms(5)));
    sim.schedule_fault(
        at_ms(3),
        Fault::Pause {
            node: B,
            duration: ms(7),
        },
    );
    let events = run_traced(&mut sim, at_ms(100));
    let f: Vec<_> = fates(&events).into_iter().map(|x| x.3).collect();
    assert_eq!(
        f,
        [Fate::Delivered(13_000_000), Fate::Delivered(18_000_000)]
    );
}

/// A crash at 3 ms drops the ping being handled and the one queued behind it as `crashed`.
#[test]
fn a_crash_drops_the_handling_under_way() {
    let mut sim = sim_of(1, vec![("a", pings(&[0, 1, 20])), ("b", Probe::default())]);
    sim.set_processing(B, every_ping_takes(ms(5)));
    sim.schedule_fault(at_ms(3), Fault::Crash { node: B });
    sim.schedule_fault(at_ms(10), Fault::Restart { node: B });
    let events = run_traced(&mut sim, at_ms(100));
    let f: Vec<_> = fates(&events).into_iter().map(|x| x.3).collect();
    assert_eq!(
        f,
        [
            Fate::Dropped(3_000_000, DropReason::Crashed),
            Fate::Dropped(3_000_000, DropReason::Crashed),
            Fate::Delivered(26_000_000)
        ]
    );
}
