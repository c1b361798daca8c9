//! Lease truth: a lease is held by `holder` from the service's `LeaseGranted` until its
//! `LeaseFreed`, its next grant of the same lease, or the service's crash.

use super::{Hold, HoldSource};
use crate::run::RunRecord;
use crate::timeline::{fault_evidence, obs_evidence, steps, take_node, Step};
use crate::verdict::Evidence;
use splitbrain_engine::{Fault, NodeId, SimTime};
use splitbrain_protocols::Obs;
use std::collections::BTreeMap;

/// Every lease grant of every lease service, as [`Hold`]s (unsorted).
pub(crate) fn holds(record: &RunRecord) -> Vec<Hold> {
    struct Grant {
        holder: NodeId,
        token: u64,
        since: SimTime,
        start: Evidence,
    }
    let mut open: BTreeMap<(NodeId, String), Grant> = BTreeMap::new();
    let mut out = Vec::new();
    let close = |out: &mut Vec<Hold>,
                 service: NodeId,
                 lease: String,
                 g: Grant,
                 t: SimTime,
                 end: Option<Evidence>| {
        out.push(Hold {
            lock: lease,
            holder: Some(g.holder),
            source: HoldSource::Lease {
                service,
                token: g.token,
            },
            what: format!("lease grant with token {}", g.token),
            from: g.since,
            to: t,
            started_by: vec![g.start],
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
                    let ev = obs_evidence(record, index);
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
                            Some(obs_evidence(record, index)),
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
                    close(
                        &mut out,
                        k.0,
                        k.1,
                        g,
                        t,
                        Some(fault_evidence(record, index)),
                    );
                }
            }
            Step::Fault { .. } => {}
        }
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
