//! Lease truth: a lease is held by `holder` from the service's `LeaseGranted` until its
//! `LeaseFreed`, its next grant of the same lease, or the service's crash. A service with
//! durable grants re-grants the same token to the same holder when it restarts: that grant
//! continues across the outage (it was on disk all along), so the hold is not cut at the crash.

use super::{Fact, Hold, HoldSource};
use crate::run::RunRecord;
use crate::timeline::{steps, take_node, Step};
use splitbrain_engine::{Fault, NodeId, SimTime};
use splitbrain_protocols::Obs;
use std::collections::BTreeMap;

/// Every lease grant of every lease service, as [`Hold`]s (unsorted).
pub(crate) fn holds(record: &RunRecord) -> Vec<Hold> {
    struct Grant {
        holder: NodeId,
        token: u64,
        since: SimTime,
        start: Fact,
    }
    let mut open: BTreeMap<(NodeId, String), Grant> = BTreeMap::new();
    // Grants of a crashed service: closed at the crash unless the restart restores them.
    let mut suspended: BTreeMap<(NodeId, String), (Grant, SimTime, Fact)> = BTreeMap::new();
    let mut out = Vec::new();
    let close = |out: &mut Vec<Hold>,
                 service: NodeId,
                 lease: String,
                 g: Grant,
                 t: SimTime,
                 end: Option<Fact>| {
        out.push(Hold {
            lock: lease.into(),
            holder: Some(g.holder),
            source: HoldSource::Lease {
                service,
                token: g.token,
            },
            from: g.since,
            to: t,
            started_by: Box::new([g.start]),
            ended_by: end.into_iter().collect(),
        });
    };
    for step in steps(record) {
        match step {
            Step::Obs {
                index,
                t,
                node,
                obs,
            } => match obs {
                Obs::LeaseGranted {
                    lease,
                    holder,
                    token,
                    ..
                } => {
                    let ev = Fact::obs(record, index);
                    if let Some((g, crash_t, crash_ev)) = suspended.remove(&(node, lease.clone())) {
                        if g.holder == *holder && g.token == *token {
                            // Restored by a durable restart: the same hold goes on.
                            open.insert((node, lease.clone()), g);
                            continue;
                        }
                        close(&mut out, node, lease.clone(), g, crash_t, Some(crash_ev));
                    }
                    if let Some(g) = open.remove(&(node, lease.clone())) {
                        close(&mut out, node, lease.clone(), g, t, Some(ev.clone()));
                    }
                    open.insert(
                        (node, lease.clone()),
                        Grant {
                            holder: *holder,
                            token: *token,
                            since: t,
                            start: ev,
                        },
                    );
                }
                Obs::LeaseFreed { lease, .. } => {
                    if let Some(g) = open.remove(&(node, lease.clone())) {
                        close(
                            &mut out,
                            node,
                            lease.clone(),
                            g,
                            t,
                            Some(Fact::obs(record, index)),
                        );
                    }
                }
                _ => {}
            },
            Step::Fault {
                index,
                t,
                fault: Fault::Crash { node },
            } => {
                for (k, g) in take_node(&mut open, *node) {
                    suspended.insert(k, (g, t, Fact::fault(record, index)));
                }
            }
            Step::Fault { .. } => {}
        }
    }
    for ((service, lease), (g, t, ev)) in suspended {
        close(&mut out, service, lease, g, t, Some(ev));
    }
    let horizon = record.horizon();
    for ((service, lease), g) in open {
        close(&mut out, service, lease, g, horizon, None);
    }
    out.retain(|h| h.from < h.to);
    out
}

#[cfg(test)]
mod tests {
    use super::holds;
    use crate::testkit::*;
    use splitbrain_engine::SimTime;
    use splitbrain_protocols::Obs;

    fn granted(holder: u32, token: u64) -> Obs {
        Obs::LeaseGranted {
            lease: "l".to_string(),
            holder: id(holder),
            token,
            ttl_ns: 10_000_000_000,
        }
    }

    /// A grant lasts until it is freed, re-granted, or the service crashes.
    #[test]
    fn a_grant_ends_at_free_regrant_or_crash() {
        let r = Builder::new(&[("locks", LeaseService), ("a", Worker), ("b", Worker)])
            .obs(ms(1_000), 0, granted(1, 1))
            .obs(
                ms(2_000),
                0,
                Obs::LeaseFreed {
                    lease: "l".to_string(),
                    holder: id(1),
                    token: 1,
                    expired: true,
                },
            )
            .obs(ms(3_000), 0, granted(2, 2))
            .obs(ms(4_000), 0, granted(1, 3))
            .fault(ms(5_000), crash(0))
            .end(ms(10_000))
            .build();
        let spans: Vec<(Option<u32>, SimTime, SimTime)> = holds(&r)
            .iter()
            .map(|h| (h.holder.map(|n| n.0), h.from, h.to))
            .collect();
        assert_eq!(
            spans,
            vec![
                (Some(1), ms(1_000), ms(2_000)),
                (Some(2), ms(3_000), ms(4_000)),
                (Some(1), ms(4_000), ms(5_000)),
            ]
        );
    }

    /// A durable service's restart re-grants the same token to the same holder: the hold
    /// goes on across the outage. Any other grant after a restart starts a new hold, and the
    /// old one ends at the crash.
    #[test]
    fn a_grant_restored_by_a_restart_spans_the_outage() {
        let r = Builder::new(&[("locks", LeaseService), ("a", Worker), ("b", Worker)])
            .obs(ms(1_000), 0, granted(1, 1))
            .fault(ms(2_000), crash(0))
            .obs(ms(3_000), 0, granted(1, 1))
            .fault(ms(4_000), crash(0))
            .obs(ms(5_000), 0, granted(2, 2))
            .end(ms(10_000))
            .build();
        let mut spans: Vec<(Option<u32>, SimTime, SimTime)> = holds(&r)
            .iter()
            .map(|h| (h.holder.map(|n| n.0), h.from, h.to))
            .collect();
        spans.sort();
        assert_eq!(
            spans,
            vec![
                (Some(1), ms(1_000), ms(4_000)),
                (Some(2), ms(5_000), ms(10_000)),
            ]
        );
    }

    /// A grant freed (or re-granted) at the instant it was made is no hold at all; the
    /// holds that remain keep their token and end evidence.
    #[test]
    fn an_empty_grant_is_dropped() {
        let r = Builder::new(&[("locks", LeaseService), ("a", Worker), ("b", Worker)])
            .obs(ms(1_000), 0, granted(1, 1))
            .obs(ms(1_000), 0, granted(2, 2))
            .obs(
                ms(3_000),
                0,
                Obs::LeaseFreed {
                    lease: "l".to_string(),
                    holder: id(2),
                    token: 2,
                    expired: false,
                },
            )
            .obs(ms(4_000), 0, granted(1, 3))
            .end(ms(6_000))
            .build();
        let got: Vec<(Option<u32>, SimTime, SimTime, usize)> = holds(&r)
            .iter()
            .map(|h| (h.holder.map(|n| n.0), h.from, h.to, h.ended_by.len()))
            .collect();
        assert_eq!(
            got,
            vec![
                (Some(2), ms(1_000), ms(3_000), 1),
                (Some(1), ms(4_000), ms(6_000), 0),
            ]
        );
    }
}
