//! Metrics of a run: counters and durations over true time.

use crate::run::{Role, RunRecord};
use crate::timeline::{for_each_belief, leader_beliefs, steps, uncovered_ns, Belief, Change, Step};
use serde::Serialize;
use splitbrain_engine::{Fault, SimTime};
use splitbrain_protocols::Obs;
use std::collections::BTreeMap;

/// Counters of one message kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MessageCounts {
    /// Sent by an actor.
    pub sent: u64,
    /// Handled by a receiver (duplicates count twice).
    pub delivered: u64,
    /// Dropped (loss, partition, node down, crash).
    pub dropped: u64,
    /// Extra copies the network made (duplication); left out of JSON when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub duplicated: u64,
    /// Neither delivered nor dropped when the run ended: `sent + duplicated - delivered -
    /// dropped`; left out of JSON when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub in_flight: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How long the run took to elect a new leader after a leader crashed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ElectionAfterCrash {
    /// The leader that crashed.
    pub leader: String,
    /// When it crashed, true ns.
    pub crashed_at_ns: u64,
    /// The new leader: a node that already believed it led at the crash (it claimed while
    /// the leader was paused or cut off), else the next node to claim after it, if any did.
    pub new_leader: Option<String>,
    /// When it claimed, true ns (before the crash if it already led).
    pub elected_at_ns: Option<u64>,
    /// `elected_at_ns - crashed_at_ns`, true ns (0 if it already led).
    pub took_ns: Option<u64>,
}

/// Counters and durations of one run. Durations are true nanoseconds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Metrics {
    /// Per message kind.
    pub messages: BTreeMap<String, MessageCounts>,
    /// `ElectionStarted` observations.
    pub elections_started: u64,
    /// `LeaderClaim`s by a different node than the previous claim (the first claim is not a
    /// change).
    pub leader_changes: u64,
    /// True time of the first `LeaderClaim`, ns (none if nobody claimed).
    pub first_leader_ns: Option<u64>,
    /// For each crash of a node that believed it was leader: the time to the next claim.
    pub elections_after_leader_crash: Vec<ElectionAfterCrash>,
    /// `LockAcquired` observations.
    pub acquisitions: u64,
    /// `LockFailed` observations (failed attempts).
    pub failed_attempts: u64,
    /// `WriteAccepted` observations (applied or not).
    pub writes_accepted: u64,
    /// `WriteRejected` observations.
    pub writes_rejected: u64,
    /// True time in `[0, end)` during which no node believed it was leader, ns; none if the
    /// run has no leader-election participants and no claims.
    pub no_leader_ns: Option<u64>,
    /// True time in `[0, end)` during which no lock was validly held, ns: no hold of the
    /// servers' truth ([`crate::Truth`]: a lease grant, a Redis value on a majority of its
    /// lock's instances, a Raft lock key), so the lock was free for a new client: its
    /// availability. None if the run has no lock servers and no acquisitions.
    pub no_valid_hold_ns: Option<u64>,
    /// True time in `[0, end)` during which no client believed it held any lock, ns (its
    /// `LockAcquired` to its release, loss or crash): a belief, which can outlive the hold
    /// (a paused holder) or start after it; none as for `no_valid_hold_ns`.
    pub no_believed_holder_ns: Option<u64>,
}

/// Whether the run has locks to measure: a lock server with a client that can take a lock
/// from it (a worker, or a lease-based leader, whose leadership is a lease or a Raft lock
/// key), or some acquisition. Raft replicas alone are a replicated log nobody locks with:
/// "time with no valid hold" would be the whole run and mean nothing.
fn has_locks(record: &RunRecord) -> bool {
    let clients = record
        .roles
        .iter()
        .any(|r| matches!(r, Role::Worker | Role::LeaseLeader));
    (clients && !record.nodes_where(Role::is_lock_server).is_empty())
        || record
            .observations
            .iter()
            .any(|o| matches!(o.obs, Obs::LockAcquired { .. }))
        || record.observations.skipped("lock_acquired") > 0
}

/// [`Metrics::no_valid_hold_ns`] from the run's truth (built from the same record), or none
/// for a run without locks.
pub(crate) fn no_valid_hold_ns(record: &RunRecord, uncovered: impl FnOnce() -> u64) -> Option<u64> {
    has_locks(record).then(uncovered)
}

/// True time in `[0, record.end)` covered by none of the holds over `spans` (`(from, to)`
/// of each, as [`Truth::all`](crate::Truth::all) orders them), ns.
pub(crate) fn uncovered_by_holds(
    record: &RunRecord,
    spans: impl Iterator<Item = (SimTime, SimTime)>,
) -> u64 {
    let spans: Vec<(SimTime, SimTime)> = spans.collect();
    uncovered_ns(&spans, SimTime::ZERO, record.end)
}

/// Computes the run's [`Metrics`] (building the truth for `no_valid_hold_ns`).
pub fn metrics(record: &RunRecord) -> Metrics {
    let no_valid_hold = no_valid_hold_ns(record, || {
        let clocks = crate::WallClocks::new(record);
        let truth = crate::Truth::new(record, &clocks);
        uncovered_by_holds(record, truth.all().map(|h| (h.from, h.to)))
    });
    metrics_with(record, no_valid_hold)
}

/// Each crash of a node that believed it led, with who claimed leadership next and how
/// long after: a node that already believed it led at the crash (0 s), else the first
/// `LeaderClaim` after it. `leaders` are the run's leader beliefs ([`leader_beliefs`]).
fn elections_after_leader_crash(record: &RunRecord, leaders: &[Belief]) -> Vec<ElectionAfterCrash> {
    let mut after_crash = Vec::new();
    // The merged steps are listed only when some leader crashed (the next claim after it is
    // searched for in them).
    let leader_crashed = record.faults.iter().enumerate().any(|(index, (_, f))| {
        matches!(f, Fault::Crash { node }
            if leaders.iter().any(|b| b.node == *node && b.end == crate::timeline::End::Crash(index)))
    });
    let all: Vec<Step> = if leader_crashed {
        steps(record).collect()
    } else {
        Vec::new()
    };
    for (k, step) in all.iter().enumerate() {
        let Step::Fault {
            index,
            t,
            fault: Fault::Crash { node },
        } = *step
        else {
            continue;
        };
        let was_leader = leaders
            .iter()
            .any(|b| b.node == *node && b.end == crate::timeline::End::Crash(index));
        if !was_leader {
            continue;
        }
        // Another node that already believed it led when the leader crashed (it took over
        // while the leader was paused or cut off) is the new leader, after 0 s.
        let already = leaders
            .iter()
            .filter(|b| b.node != *node && b.from <= t && t < b.to)
            .min_by_key(|b| (b.from, b.start))
            .map(|b| (b.from, b.node));
        let next = already.or_else(|| {
            all[k + 1..].iter().find_map(|s| match *s {
                Step::Obs {
                    t: at,
                    node: n,
                    obs: Obs::LeaderClaim { .. },
                    ..
                } => Some((at, n)),
                _ => None,
            })
        });
        after_crash.push(ElectionAfterCrash {
            leader: record.name(*node),
            crashed_at_ns: t.0,
            new_leader: next.map(|(_, n)| record.name(n)),
            elected_at_ns: next.map(|(at, _)| at.0),
            took_ns: next.map(|(at, _)| at.saturating_since(t).0),
        });
    }
    after_crash
}

/// The run's [`Metrics`], given `no_valid_hold_ns` (computed while the truth is at hand).
///
/// Long because the `Metrics` it returns has a dozen measures, each computed here in a few
/// lines from the record; the one search (elections after a leader's crash) is apart.
pub(crate) fn metrics_with<'r>(record: &'r RunRecord, no_valid_hold_ns: Option<u64>) -> Metrics {
    // Observations of a kind the run did not keep were counted as they happened.
    let count = |kind: &str, pred: &dyn Fn(&Obs) -> bool| {
        record.observations.iter().filter(|o| pred(&o.obs)).count() as u64
            + record.observations.skipped(kind)
    };
    let claims: Vec<(SimTime, usize)> = record
        .observations
        .iter_indexed()
        .filter(|(_, o)| matches!(o.obs, Obs::LeaderClaim { .. }))
        .map(|(i, o)| (o.t, i))
        .collect();
    let leader_changes = claims
        .windows(2)
        .filter(|w| record.observations[w[0].1].node != record.observations[w[1].1].node)
        .count() as u64;

    let leaders = leader_beliefs(record);
    let after_crash = elections_after_leader_crash(record, &leaders);

    let end = record.end;
    let has_election = !record.nodes_where(Role::elects_leader).is_empty() || !claims.is_empty();
    let no_leader_ns = has_election.then(|| {
        let spans: Vec<(SimTime, SimTime)> = leaders.iter().map(|b| (b.from, b.to)).collect();
        uncovered_ns(&spans, SimTime::ZERO, end)
    });
    let acquisitions = count("lock_acquired", &|o| matches!(o, Obs::LockAcquired { .. }));
    let no_believed_holder_ns = has_locks(record).then(|| {
        // The lock beliefs' spans, each as it closes: no list of the beliefs, nor a copy of
        // the lock name per belief.
        let mut spans: Vec<(SimTime, SimTime)> = Vec::new();
        let held = |o: &'r Obs| match o {
            Obs::LockAcquired { lock, .. } => Some(Change::Start(lock.as_str())),
            Obs::LockReleased { thread: _, lock } | Obs::LockLost { lock, .. } => {
                Some(Change::Stop(lock.as_str()))
            }
            _ => None,
        };
        for_each_belief(record, held, |b| spans.push((b.from, b.to)));
        uncovered_ns(&spans, SimTime::ZERO, end)
    });

    Metrics {
        messages: record
            .messages
            .iter()
            .map(|(k, c)| {
                (
                    k.clone(),
                    MessageCounts {
                        sent: c.sent,
                        delivered: c.delivered,
                        dropped: c.dropped,
                        duplicated: c.duplicated,
                        in_flight: (c.sent + c.duplicated).saturating_sub(c.delivered + c.dropped),
                    },
                )
            })
            .collect(),
        elections_started: count("election_started", &|o| matches!(o, Obs::ElectionStarted)),
        leader_changes,
        first_leader_ns: claims.first().map(|(t, _)| t.0),
        elections_after_leader_crash: after_crash,
        acquisitions,
        failed_attempts: count("lock_failed", &|o| matches!(o, Obs::LockFailed { .. })),
        writes_accepted: count("write_accepted", &|o| {
            matches!(o, Obs::WriteAccepted { .. })
        }),
        writes_rejected: count("write_rejected", &|o| {
            matches!(o, Obs::WriteRejected { .. })
        }),
        no_leader_ns,
        no_valid_hold_ns,
        no_believed_holder_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use splitbrain_engine::{KindCounts, LocalTime};

    /// Regression: a file with Raft replicas and no lock client printed "time with no valid
    /// hold 10.000 s" and "time no client believed it held a lock 10.000 s": no lock, no
    /// lock metrics. A lock server with a client keeps them.
    #[test]
    fn a_run_without_a_lock_client_has_no_lock_metrics() {
        let replicas = [("r1", Raft), ("r2", Raft), ("r3", Raft)];
        let r = Builder::new(&replicas)
            .obs(ms(100), 0, Obs::LeaderClaim { term: 1 })
            .end(ms(10_000))
            .build();
        let m = metrics(&r);
        assert_eq!((m.no_valid_hold_ns, m.no_believed_holder_ns), (None, None));
        let r = Builder::new(&[("r1", Raft), ("r2", Raft), ("r3", Raft), ("c", Worker)])
            .end(ms(10_000))
            .build();
        let m = metrics(&r);
        assert_eq!(m.no_valid_hold_ns, Some(10_000_000_000));
        assert_eq!(m.no_believed_holder_ns, Some(10_000_000_000));
    }

    #[test]
    fn election_metrics_are_pinned() {
        let mut r = Builder::new(&[("n1", Bully), ("n2", Bully), ("n3", Bully)])
            .obs(ms(100), 0, Obs::ElectionStarted)
            .obs(ms(150), 2, Obs::LeaderClaim { term: 1 })
            .fault(ms(2_000), crash(2))
            .obs(ms(3_000), 0, Obs::ElectionStarted)
            .obs(ms(3_000), 1, Obs::ElectionStarted)
            .obs(ms(3_200), 1, Obs::LeaderClaim { term: 2 })
            .obs(ms(3_300), 1, Obs::LeaderClaim { term: 3 })
            .fault(ms(6_000), restart(2))
            .obs(ms(6_100), 2, Obs::LeaderClaim { term: 4 })
            .obs(ms(6_200), 1, Obs::LeaderStepDown { term: 3 })
            .end(ms(10_000))
            .build();
        r.messages.insert(
            "ELECTION".to_string(),
            KindCounts {
                sent: 4,
                delivered: 3,
                dropped: 1,
                duplicated: 0,
            },
        );
        let m = metrics(&r);
        assert_eq!(m.elections_started, 3);
        assert_eq!(m.leader_changes, 2);
        assert_eq!(m.first_leader_ns, Some(150_000_000));
        assert_eq!(
            m.elections_after_leader_crash,
            vec![ElectionAfterCrash {
                leader: "n3".to_string(),
                crashed_at_ns: 2_000_000_000,
                new_leader: Some("n2".to_string()),
                elected_at_ns: Some(3_200_000_000),
                took_ns: Some(1_200_000_000),
            }]
        );
        // No leader: 0..0.15 s and 2 s..3.2 s.
        assert_eq!(m.no_leader_ns, Some(1_350_000_000));
        assert_eq!((m.no_valid_hold_ns, m.no_believed_holder_ns), (None, None));
        assert_eq!(
            m.messages["ELECTION"],
            MessageCounts {
                sent: 4,
                delivered: 3,
                dropped: 1,
                duplicated: 0,
                in_flight: 0,
            }
        );
    }

    /// n5 (leader) is paused, n4 claims at 2.25 s, n5 crashes at 3.5 s and claims again at
    /// 4 s after its restart: n4 already led at the crash, so there is no takeover after
    /// 0.500 s to report beside "time with no leader 0.000 s".
    #[test]
    fn a_leader_already_in_office_at_the_crash_took_over_after_zero() {
        let r = Builder::new(&[("n4", Bully), ("n5", Bully)])
            .obs(ms(0), 1, Obs::LeaderClaim { term: 1 })
            .fault(ms(2_000), pause(1, 5_000))
            .obs(ms(2_250), 0, Obs::LeaderClaim { term: 2 })
            .fault(ms(3_500), crash(1))
            .fault(ms(4_000), restart(1))
            .obs(ms(4_000), 1, Obs::LeaderClaim { term: 2 })
            .obs(ms(4_002), 0, Obs::LeaderStepDown { term: 2 })
            .end(ms(10_000))
            .build();
        let m = metrics(&r);
        assert_eq!(
            m.elections_after_leader_crash,
            vec![ElectionAfterCrash {
                leader: "n5".to_string(),
                crashed_at_ns: 3_500_000_000,
                new_leader: Some("n4".to_string()),
                elected_at_ns: Some(2_250_000_000),
                took_ns: Some(0),
            }]
        );
        assert_eq!(m.no_leader_ns, Some(0));
    }

    #[test]
    fn lock_metrics_are_pinned() {
        let acq = |lock: &str| Obs::LockAcquired {
            thread: None,
            lock: lock.to_string(),
            token: Some(1),
            value: String::new(),
            valid_until_local: LocalTime(0),
        };
        let r = Builder::new(&[
            ("locks", LeaseService),
            ("storage", Storage),
            ("c1", Worker),
            ("c2", Worker),
        ])
        .obs(ms(1_000), 2, acq("lease"))
        .obs(
            ms(1_500),
            3,
            Obs::LockFailed {
                thread: None,
                lock: "lease".to_string(),
                reason: "denied".to_string(),
            },
        )
        .obs(
            ms(2_000),
            1,
            Obs::WriteAccepted {
                writer: id(2),
                req: 0,
                token: Some(1),
                job: None,
                applied: true,
            },
        )
        .obs(
            ms(3_000),
            2,
            Obs::LockReleased {
                thread: None,
                lock: "lease".to_string(),
            },
        )
        .obs(ms(4_000), 3, acq("lease"))
        .obs(
            ms(4_500),
            1,
            Obs::WriteRejected {
                writer: id(2),
                token: Some(1),
                highest: Some(2),
                reason: "stale token".to_string(),
            },
        )
        .end(ms(10_000))
        .build();
        let m = metrics(&r);
        assert_eq!((m.acquisitions, m.failed_attempts), (2, 1));
        assert_eq!((m.writes_accepted, m.writes_rejected), (1, 1));
        // No holder: 0..1 s and 3 s..4 s; c2 holds to the end.
        assert_eq!(m.no_believed_holder_ns, Some(2_000_000_000));
        // The service granted nothing: no valid hold in the whole run.
        assert_eq!(m.no_valid_hold_ns, Some(10_000_000_000));
        assert_eq!(m.no_leader_ns, None);
        assert_eq!(m.first_leader_ns, None);
    }

    /// The lock's free time is measured from the service's grants, not from the clients'
    /// beliefs, which outlive a grant (a paused holder believes on after its lease expired)
    /// and start after it (lesson 06: 28.0 s with no grant, 23.0 s with no believed holder);
    /// the belief figure is named as such.
    #[test]
    fn free_time_is_measured_from_the_servers_holds_not_beliefs() {
        let acq = |lock: &str| Obs::LockAcquired {
            thread: None,
            lock: lock.to_string(),
            token: Some(1),
            value: String::new(),
            valid_until_local: LocalTime(0),
        };
        let granted = |holder: u32, token: u64| Obs::LeaseGranted {
            lease: "lease".to_string(),
            holder: id(holder),
            token,
            ttl_ns: 2_000_000_000,
        };
        let freed = |holder: u32, token: u64| Obs::LeaseFreed {
            lease: "lease".to_string(),
            holder: id(holder),
            token,
            expired: true,
        };
        // c1 is granted at 1 s and believes from 1.002 s until 8 s (paused past its TTL);
        // the grant expires at 3 s; c2 is granted 5 s..7 s and believes 5.002 s..7 s.
        let r = Builder::new(&[("locks", LeaseService), ("c1", Worker), ("c2", Worker)])
            .obs(ms(1_000), 0, granted(1, 1))
            .obs(ms(1_002), 1, acq("lease"))
            .obs(ms(3_000), 0, freed(1, 1))
            .obs(ms(5_000), 0, granted(2, 2))
            .obs(ms(5_002), 2, acq("lease"))
            .obs(ms(7_000), 0, freed(2, 2))
            .obs(
                ms(7_000),
                2,
                Obs::LockLost {
                    thread: None,
                    lock: "lease".to_string(),
                    reason: "expired".to_string(),
                },
            )
            .obs(
                ms(8_000),
                1,
                Obs::LockLost {
                    thread: None,
                    lock: "lease".to_string(),
                    reason: "expired".to_string(),
                },
            )
            .end(ms(10_000))
            .build();
        let m = metrics(&r);
        // Held 1..3 s and 5..7 s: free 6 s of 10.
        assert_eq!(m.no_valid_hold_ns, Some(6_000_000_000));
        // Believed 1.002..8 s: 3.002 s with no believer.
        assert_eq!(m.no_believed_holder_ns, Some(3_002_000_000));
        // `check` takes the figure from the truth it shares with the invariants: the same.
        let spec: crate::CheckSpec = serde_json::from_str(r#"["exclusive_holders"]"#).unwrap();
        assert_eq!(crate::check(&r, &spec).metrics, m);
    }
}
