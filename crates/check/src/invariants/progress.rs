//! `lock_progress`: liveness of the lock service.

use super::names;
use crate::run::{Role, RunRecord};
use crate::timeline::{describe_faults, obs_evidence, overlaps, Liveness};
use crate::verdict::{Evidence, Source, Verdict, Violation};
use splitbrain_engine::{NodeId, SimDuration, SimTime};
use splitbrain_protocols::Obs;
use std::collections::BTreeSet;

/// `lock_progress { window }` (DESIGN.md): "while a majority of lock servers is up and
/// reachable, some client acquires the lock within every `window`". Lock servers are the
/// run's `LeaseService` and `RedisInstance` nodes (one lease service is 1 of 1); up/down comes
/// from `Crash` / `Restart` faults only (pauses and partitions are not counted). Within every
/// true-time interval in which a majority is up, the gaps between its start, each
/// `LockAcquired` or `LockRenewed` (any client, any lock: a renewal re-acquires the lease, so
/// a leader that keeps its lease is progress) and its end (at most the end of the run) must
/// not be longer than `window` (true ns). Reports the first longer gap. A run without lock servers
/// is `Inconclusive`.
pub fn lock_progress(record: &RunRecord, window: SimDuration) -> Verdict {
    let servers = record.nodes_where(Role::is_lock_server);
    if servers.is_empty() {
        return Verdict::Inconclusive {
            reason: "the run has no lock servers".to_string(),
        };
    }
    let majority = servers.len() / 2 + 1;
    let live = Liveness::new(record);
    let end = record.end;
    let mut up: Vec<(SimTime, SimTime)> = Vec::new();
    for &s in &servers {
        let mut from = SimTime::ZERO;
        for &(crash, restart, _) in live.down(s) {
            up.push((from, crash.min(end)));
            from = restart;
        }
        up.push((from, end));
    }
    let acquisitions: Vec<(SimTime, usize)> = record
        .observations
        .iter()
        .enumerate()
        .filter(|(_, o)| matches!(o.obs, Obs::LockAcquired { .. } | Obs::LockRenewed { .. }))
        .map(|(i, o)| (o.t, i))
        .collect();
    for span in overlaps(&up, majority) {
        // Gap boundaries: the span's start, each acquisition in it, the span's end.
        let mut prev: (SimTime, Option<usize>) = (span.from, None);
        let inside = acquisitions
            .iter()
            .filter(|(t, _)| span.from <= *t && *t < span.to)
            .map(|&(t, i)| (t, Some(i)));
        for next in inside.chain(std::iter::once((span.to, None))) {
            let gap = next.0.saturating_since(prev.0);
            if gap > window {
                return Verdict::Violated(vec![violation(
                    record, &servers, majority, window, span.from, prev, next,
                )]);
            }
            prev = next;
        }
    }
    Verdict::Holds
}

fn violation(
    record: &RunRecord,
    servers: &[NodeId],
    majority: usize,
    window: SimDuration,
    span_from: SimTime,
    prev: (SimTime, Option<usize>),
    next: (SimTime, Option<usize>),
) -> Violation {
    let (from, to) = (prev.0, next.0);
    let mut evidence: Vec<Evidence> = Vec::new();
    match prev.1 {
        Some(i) => evidence.push(obs_evidence(record, i)),
        None => evidence.push(Evidence {
            t: span_from,
            node: "lock servers".to_string(),
            text: format!("a majority ({majority} of {}) is up", servers.len()),
            source: Source::Derived,
        }),
    }
    if let Some(i) = next.1 {
        evidence.push(obs_evidence(record, i));
    }
    let server_set: BTreeSet<NodeId> = servers.iter().copied().collect();
    let mut relevant = server_set.clone();
    relevant.extend(record.nodes_where(|r| matches!(r, Role::Worker | Role::LeaseLeader)));
    Violation {
        invariant: "lock_progress",
        from,
        to,
        nodes: names(record, &server_set),
        summary: format!(
            "no lock acquired for {} while a majority ({majority} of {}) of lock servers was \
             up (window {window})",
            to.saturating_since(from),
            servers.len()
        ),
        evidence,
        faults: describe_faults(record, &relevant, to),
    }
}

#[cfg(test)]
mod tests {
    use super::lock_progress;
    use crate::testkit::*;
    use crate::verdict::{Outcome, Verdict};
    use splitbrain_engine::{LocalTime, SimDuration};
    use splitbrain_protocols::Obs;

    const WINDOW: SimDuration = SimDuration::from_secs(10);

    fn acquired() -> Obs {
        Obs::LockAcquired {
            lock: "lock".to_string(),
            token: None,
            value: String::new(),
            valid_until_local: LocalTime(0),
        }
    }
    fn redis3() -> Builder {
        Builder::new(&[
            ("redis-a", RedisInstance),
            ("redis-b", RedisInstance),
            ("redis-c", RedisInstance),
            ("client-1", Worker),
        ])
    }

    #[test]
    fn steady_acquisitions_hold() {
        let mut b = redis3();
        for s in 0..6 {
            b = b.obs(ms(1_000 + s * 9_000), 3, acquired());
        }
        let r = b.end(ms(50_000)).build();
        assert_eq!(lock_progress(&r, WINDOW), Verdict::Holds);
    }

    #[test]
    fn the_first_long_gap_is_reported() {
        let r = redis3()
            .obs(ms(1_000), 3, acquired())
            .obs(ms(5_000), 3, acquired())
            .obs(ms(20_000), 3, acquired())
            .fault(ms(30_000), crash(0))
            .end(ms(60_000))
            .build();
        let v = match lock_progress(&r, WINDOW) {
            Verdict::Violated(v) => v,
            other => panic!("{other:?}"),
        };
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].from, v[0].to), (ms(5_000), ms(20_000)));
        assert_eq!(
            v[0].summary,
            "no lock acquired for 15.000 s while a majority (2 of 3) of lock servers was up \
             (window 10.000 s)"
        );
        assert_eq!(v[0].nodes, vec!["redis-a", "redis-b", "redis-c"]);
        assert!(v[0].faults.is_empty());
    }

    #[test]
    fn a_crashed_majority_is_not_a_violation() {
        // Two of three instances are down 5 s..30 s: no majority, no obligation.
        let r = redis3()
            .obs(ms(1_000), 3, acquired())
            .obs(ms(4_000), 3, acquired())
            .fault(ms(5_000), crash(0))
            .fault(ms(5_000), crash(1))
            .fault(ms(30_000), restart(0))
            .obs(ms(31_000), 3, acquired())
            .obs(ms(39_000), 3, acquired())
            .fault(ms(45_000), restart(1))
            .end(ms(45_000))
            .build();
        assert_eq!(lock_progress(&r, WINDOW), Verdict::Holds);
        // One crash leaves a majority: the 4 s..31 s gap counts.
        let r = redis3()
            .obs(ms(1_000), 3, acquired())
            .obs(ms(4_000), 3, acquired())
            .fault(ms(5_000), crash(0))
            .obs(ms(31_000), 3, acquired())
            .end(ms(35_000))
            .build();
        let v = crate::testkit::violations(lock_progress(&r, WINDOW));
        assert_eq!((v[0].from, v[0].to), (ms(4_000), ms(31_000)));
        assert_eq!(v[0].faults, vec!["redis-a crashed at 5.000 s"]);
    }

    #[test]
    fn a_lease_service_is_one_of_one_and_the_run_end_closes_the_last_gap() {
        let lease = || {
            Builder::new(&[("locks", LeaseService), ("client-1", Worker)]).obs(
                ms(1_000),
                1,
                acquired(),
            )
        };
        let r = lease()
            .fault(ms(2_000), crash(0))
            .fault(ms(40_000), restart(0))
            .obs(ms(41_000), 1, acquired())
            .end(ms(50_000))
            .build();
        assert_eq!(lock_progress(&r, WINDOW), Verdict::Holds);
        let r = lease().end(ms(50_000)).build();
        let v = crate::testkit::violations(lock_progress(&r, WINDOW));
        assert_eq!((v[0].from, v[0].to), (ms(1_000), ms(50_000)));
        // Restarted service with no acquisition afterwards: the gap starts at the restart.
        let r = lease()
            .fault(ms(2_000), crash(0))
            .fault(ms(40_000), restart(0))
            .end(ms(55_000))
            .build();
        let v = crate::testkit::violations(lock_progress(&r, WINDOW));
        assert_eq!((v[0].from, v[0].to), (ms(40_000), ms(55_000)));
        assert_eq!(
            texts(&v[0].evidence),
            vec!["40.000 s lock servers: a majority (1 of 1) is up"]
        );
    }

    #[test]
    fn no_lock_servers_is_inconclusive() {
        let r = Builder::new(&[("n1", Bully)]).end(ms(1_000)).build();
        assert_eq!(lock_progress(&r, WINDOW).outcome(), Outcome::Inconclusive);
    }
}
