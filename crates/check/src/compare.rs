//! What one run of a lock design shows, for `splitbrain compare`: the seed's
//! "choose a design" question as data. Pure functions of a [`RunRecord`], independent of the
//! invariants the scenario file happens to check, so every design is measured the same way.
//!
//! Definitions (true time, ns):
//! - **two accepted writers**: `no_two_accepted_writers` is violated (the storage accepted a
//!   write of an earlier holder after a later holder's).
//! - **duplicate effect**: one unit of work took effect twice. With job ids (idempotent work)
//!   a job applied twice (`exactly_once_effects` violated); without job ids, two writes by
//!   different clients that both took effect (`WriteAccepted { applied: true }`) although the
//!   holds they were sent under overlapped in true time: both clients ran the critical
//!   section at once and both runs changed the resource.
//! - **no progress**: `lock_progress` with the given window is violated.
//! - **time to acquire**: from a client's first `LockRequested` after it last held the lock
//!   (or started, or restarted) to its next `LockAcquired`; retries and back-off count.
//!   Requests still waiting at the end of the run are censored (counted apart, not averaged).
//! - **takeover**: from a crash or pause of a client that believed it held a lock, to the
//!   next `LockAcquired` of that lock by another client; none before the end: censored.
//! - **lock messages**: every message sent except the storage's `WRITE` / `WRITE_ACK`, which
//!   every design sends alike.

use crate::invariants::progress::lock_progress;
use crate::invariants::writes::{exactly_once_effects, no_two_accepted_writers};
use crate::run::RunRecord;
use crate::sent::{SentUnder, Start};
use crate::timeline::{leader_beliefs, lock_beliefs, Belief, End};
use crate::verdict::Outcome;
use splitbrain_engine::{Fault, NodeId, SimDuration, SimTime};
use splitbrain_protocols::Obs;
use std::collections::BTreeMap;

/// Message kinds of the protected resource, left out of the lock's message count.
pub const STORAGE_KINDS: [&str; 2] = ["WRITE", "WRITE_ACK"];

/// The measurements of one run of one design.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DesignSample {
    /// `no_two_accepted_writers`'s outcome: violated when the storage accepted a stale
    /// holder's write after a newer holder's.
    pub two_accepted_writers: Outcome,
    /// Some work took effect twice (see the module docs).
    pub duplicate_effect: bool,
    /// `lock_progress`'s outcome (violated: no progress within the window).
    pub no_progress: Outcome,
    /// Request-to-acquisition times, true ns, in observation order.
    pub acquire_ns: Vec<u64>,
    /// Requests still waiting at the end of the run.
    pub acquire_censored: u64,
    /// Failure-to-takeover times, true ns, in fault order.
    pub takeover_ns: Vec<u64>,
    /// Holder failures with no takeover before the end of the run.
    pub takeover_censored: u64,
    /// `LockAcquired` observations.
    pub acquisitions: u64,
    /// Messages sent, storage traffic excluded.
    pub lock_messages: u64,
}

/// Measures one run. `window` is `lock_progress`'s bound on a stall, true ns.
pub fn design_sample(record: &RunRecord, window: SimDuration) -> DesignSample {
    let (acquire_ns, acquire_censored) = acquire_times(record);
    let (takeover_ns, takeover_censored) = takeover_times(record);
    DesignSample {
        two_accepted_writers: no_two_accepted_writers(record).outcome(),
        duplicate_effect: duplicate_effect(record),
        no_progress: lock_progress(record, window).outcome(),
        acquire_ns,
        acquire_censored,
        takeover_ns,
        takeover_censored,
        acquisitions: record
            .observations
            .iter()
            .filter(|o| matches!(o.obs, Obs::LockAcquired { .. }))
            .count() as u64,
        lock_messages: record
            .messages
            .iter()
            .filter(|(k, _)| !STORAGE_KINDS.contains(&k.as_str()))
            .map(|(_, c)| c.sent)
            .sum(),
    }
}

/// Whether some work took effect twice: a job applied twice, or two applied writes without
/// job ids by different clients sent under holds that overlapped in true time.
pub fn duplicate_effect(record: &RunRecord) -> bool {
    if exactly_once_effects(record).outcome() == Outcome::Violated {
        return true;
    }
    let sent = SentUnder::new(record);
    let locks = lock_beliefs(record);
    let leaders = leader_beliefs(record);
    // The belief a write's hold began: the writer's belief interval containing its start.
    let hold_of = |start: Start| -> Option<&Belief> {
        let (list, j) = match start {
            Start::Acquired(j) => (&locks, j),
            Start::Claimed(j) => (&leaders, j),
            Start::Unknown => return None,
        };
        let o = &record.observations[j];
        list.iter()
            .find(|b| b.node == o.node && b.from <= o.t && o.t < b.to)
    };
    let applied: Vec<(NodeId, &Belief)> = record
        .observations
        .iter_indexed()
        .filter_map(|(i, o)| match o.obs {
            Obs::WriteAccepted {
                writer,
                job: None,
                applied: true,
                ..
            } => hold_of(sent.of(record, i)).map(|b| (writer, b)),
            _ => None,
        })
        .collect();
    applied.iter().enumerate().any(|(k, (w1, b1))| {
        applied[k + 1..]
            .iter()
            .any(|(w2, b2)| w1 != w2 && b1.from < b2.to && b2.from < b1.to)
    })
}

/// Request-to-acquisition times and the number of requests still waiting at the end.
fn acquire_times(record: &RunRecord) -> (Vec<u64>, u64) {
    let mut waiting: BTreeMap<NodeId, SimTime> = BTreeMap::new();
    let mut out = Vec::new();
    // Observations and crashes in true-time order (a crash ends the wait: the restarted
    // process asks anew).
    let mut faults = record.faults.iter().peekable();
    for o in &record.observations {
        while let Some((t, f)) = faults.peek() {
            if *t > o.t {
                break;
            }
            if let Fault::Crash { node } = f {
                waiting.remove(node);
            }
            faults.next();
        }
        match &o.obs {
            Obs::LockRequested { .. } => {
                waiting.entry(o.node).or_insert(o.t);
            }
            Obs::LockAcquired { .. } => {
                if let Some(from) = waiting.remove(&o.node) {
                    out.push(o.t.saturating_since(from).0);
                }
            }
            _ => {}
        }
    }
    (out, waiting.len() as u64)
}

/// Failure-to-takeover times and the number of failures without a takeover.
fn takeover_times(record: &RunRecord) -> (Vec<u64>, u64) {
    let beliefs = lock_beliefs(record);
    let mut out = Vec::new();
    let mut censored = 0;
    // A fault that changed nothing (a pause of a node already paused past its end) is no
    // failure: the holder failed once, at the first pause (as the engine recorded it).
    for ((t, f), effect) in record.faults.iter().zip(&record.fault_effects) {
        let node = match f {
            Fault::Crash { node } | Fault::Pause { node, .. } if effect.idle.is_none() => *node,
            _ => continue,
        };
        // A belief open at the failure (a crash closes it at that very instant).
        let Some(held) = beliefs.iter().find(|b| {
            b.node == node
                && b.from <= *t
                && (*t < b.to || (*t == b.to && matches!(b.end, End::Crash(_))))
        }) else {
            continue;
        };
        let next = record.observations.iter().find(|o| {
            o.t >= *t
                && o.node != node
                && matches!(&o.obs, Obs::LockAcquired { lock, .. } if *lock == held.key)
        });
        match next {
            Some(o) => out.push(o.t.saturating_since(*t).0),
            None => censored += 1,
        }
    }
    (out, censored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use splitbrain_engine::{KindCounts, LocalTime};

    fn acq(token: u64) -> Obs {
        Obs::LockAcquired {
            lock: "L".to_string(),
            token: Some(token),
            value: format!("v{token}"),
            valid_until_local: LocalTime(0),
            thread: None,
        }
    }
    fn req() -> Obs {
        Obs::LockRequested {
            lock: "L".to_string(),
            servers: vec![id(0)],
            thread: None,
        }
    }
    fn sent(req: u64) -> Obs {
        Obs::WriteSent {
            req,
            token: None,
            job: None,
            thread: None,
        }
    }
    fn accepted(writer: u32, req: u64, job: Option<u64>, applied: bool) -> Obs {
        Obs::WriteAccepted {
            writer: id(writer),
            req,
            token: None,
            job,
            applied,
        }
    }
    fn released() -> Obs {
        Obs::LockReleased {
            lock: "L".to_string(),
            thread: None,
        }
    }
    const NODES: [(&str, crate::run::Role); 4] = [
        ("locks", LeaseService),
        ("storage", Storage),
        ("c1", Worker),
        ("c2", Worker),
    ];

    /// The Redlock story: c1 is paused holding the lock past its expiry, c2 acquires and
    /// writes, c1 wakes and writes: both writes took effect under overlapping beliefs.
    fn paused_holder(c1_applied: bool) -> RunRecord {
        Builder::new(&NODES)
            .obs(ms(0), 2, req())
            .obs(ms(10), 2, acq(1))
            .fault(ms(1_000), pause(2, 10_000))
            .obs(ms(2_000), 3, req())
            .obs(ms(5_500), 3, acq(2))
            .obs(ms(6_000), 3, sent(1))
            .obs(ms(6_001), 1, accepted(3, 1, None, true))
            .obs(ms(6_002), 3, released())
            .obs(ms(11_000), 2, sent(1))
            .obs(ms(11_001), 1, accepted(2, 1, None, c1_applied))
            .obs(ms(11_002), 2, released())
            .end(ms(20_000))
            .build()
    }

    #[test]
    fn a_paused_holder_is_taken_over_and_both_writes_take_effect() {
        let mut r = paused_holder(true);
        r.messages.insert(
            "SET".to_string(),
            KindCounts {
                sent: 6,
                delivered: 6,
                dropped: 0,
                duplicated: 0,
            },
        );
        r.messages.insert(
            "WRITE".to_string(),
            KindCounts {
                sent: 2,
                delivered: 2,
                dropped: 0,
                duplicated: 0,
            },
        );
        let s = design_sample(&r, SimDuration::from_millis(10_000));
        assert_eq!(s.two_accepted_writers, Outcome::Violated);
        assert!(s.duplicate_effect);
        assert_ne!(s.no_progress, Outcome::Violated);
        assert_eq!(s.acquire_ns, vec![10_000_000, 3_500_000_000]);
        assert_eq!(s.acquire_censored, 0);
        // Paused at 1 s, c2 acquires at 5.5 s.
        assert_eq!(s.takeover_ns, vec![4_500_000_000]);
        assert_eq!(s.takeover_censored, 0);
        assert_eq!(s.acquisitions, 2);
        assert_eq!(s.lock_messages, 6);
    }

    /// A second pause of the paused holder within the first (no effect: the engine keeps the
    /// later end) is no second failure with its own takeover time.
    #[test]
    fn a_pause_without_effect_is_no_second_failure() {
        let mut r = paused_holder(true);
        r.faults.push((ms(2_000), pause(2, 1_000)));
        r.faults.sort_by_key(|(t, _)| *t);
        r.fault_effects = crate::testkit::fault_effects(&r);
        let s = design_sample(&r, SimDuration::from_millis(10_000));
        assert_eq!(s.takeover_ns, vec![4_500_000_000]);
        assert_eq!(s.takeover_censored, 0);
    }

    #[test]
    fn a_second_write_without_effect_is_no_duplicate() {
        assert!(!duplicate_effect(&paused_holder(false)));
    }

    #[test]
    fn writes_under_disjoint_holds_are_no_duplicate() {
        let r = Builder::new(&NODES)
            .obs(ms(10), 2, acq(1))
            .obs(ms(20), 2, sent(1))
            .obs(ms(21), 1, accepted(2, 1, None, true))
            .obs(ms(22), 2, released())
            .obs(ms(30), 3, acq(2))
            .obs(ms(40), 3, sent(1))
            .obs(ms(41), 1, accepted(3, 1, None, true))
            .end(ms(100))
            .build();
        assert!(!duplicate_effect(&r));
    }

    #[test]
    fn a_job_applied_twice_is_a_duplicate() {
        let r = Builder::new(&NODES)
            .obs(ms(10), 2, acq(1))
            .obs(ms(21), 1, accepted(2, 1, Some(1), true))
            .obs(ms(22), 2, released())
            .obs(ms(30), 3, acq(2))
            .obs(ms(41), 1, accepted(3, 1, Some(1), true))
            .end(ms(100))
            .build();
        assert!(duplicate_effect(&r));
    }

    #[test]
    fn a_crashed_holder_never_taken_over_and_a_waiter_at_the_end_are_censored() {
        let r = Builder::new(&NODES)
            .obs(ms(0), 2, req())
            .obs(ms(5), 2, acq(1))
            .obs(ms(6), 3, req())
            .fault(ms(50), crash(2))
            .end(ms(100))
            .build();
        let s = design_sample(&r, SimDuration::from_millis(10_000));
        assert_eq!((s.takeover_ns.clone(), s.takeover_censored), (vec![], 1));
        assert_eq!((s.acquire_ns, s.acquire_censored), (vec![5_000_000], 1));
    }

    #[test]
    fn a_failure_of_a_client_holding_nothing_is_not_a_takeover() {
        let r = Builder::new(&NODES)
            .obs(ms(5), 2, acq(1))
            .obs(ms(6), 2, released())
            .fault(ms(50), pause(3, 10))
            .fault(ms(60), pause(2, 10))
            .obs(ms(70), 3, acq(2))
            .end(ms(100))
            .build();
        let s = design_sample(&r, SimDuration::from_millis(10_000));
        assert_eq!((s.takeover_ns, s.takeover_censored), (vec![], 0));
    }
}
