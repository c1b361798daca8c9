//! Replication truth: a Redis primary and its replicas are ONE lock server, whose value is
//! the value on the instance that is the primary at that instant (docs/truth.md,
//! "Replication"). The primary is the configured one until a replica observes
//! `RedisPromoted`; from then on that replica is. A replica's keys count for nothing while it
//! is a replica (clients do not lock on it), and the old primary's keys count for nothing
//! once it has been replaced (the failover made the replica the server of record, whatever
//! the old primary still holds).

use super::{Fact, KeyHold};
use crate::run::RunRecord;
use splitbrain_engine::{NodeId, SimTime};
use splitbrain_protocols::Obs;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The replication groups of a run: each replica's primary, and who is primary when.
pub(crate) struct Groups {
    /// Member -> the group's configured primary (its name in the truth).
    root: BTreeMap<NodeId, NodeId>,
    /// Per group root: the primaries in order, `(since, node, evidence of the promotion)`.
    primaries: BTreeMap<NodeId, Vec<(SimTime, NodeId, Option<Fact>)>>,
}

impl Groups {
    /// Reads `RedisReplicaOf` and `RedisPromoted` from the record.
    pub(crate) fn new(record: &RunRecord) -> Groups {
        let mut root = BTreeMap::new();
        for o in &record.observations {
            if let Obs::RedisReplicaOf { primary } = o.obs {
                root.insert(o.node, primary);
            }
        }
        let mut primaries: BTreeMap<NodeId, Vec<(SimTime, NodeId, Option<Fact>)>> = BTreeMap::new();
        for &r in root.values() {
            primaries
                .entry(r)
                .or_insert_with(|| vec![(SimTime(0), r, None)]);
        }
        for (i, o) in record.observations.iter_indexed() {
            if let Obs::RedisPromoted { .. } = o.obs {
                if let Some(r) = root.get(&o.node) {
                    let ev = Fact::obs(record, i);
                    primaries
                        .entry(*r)
                        .or_default()
                        .push((o.t, o.node, Some(ev)));
                }
            }
        }
        Groups { root, primaries }
    }

    /// The group (its configured primary) instance `n` belongs to; `n` itself if none.
    pub(crate) fn root(&self, n: NodeId) -> NodeId {
        self.root.get(&n).copied().unwrap_or(n)
    }

    /// The key pieces as the group's: each piece of a group member clipped to the times that
    /// member was the primary, and named by the group's root. Pieces of instances in no group
    /// are unchanged (without replication, `held` itself: no copy).
    pub(crate) fn as_primary<'a>(
        &self,
        held: &'a [KeyHold],
        horizon: SimTime,
    ) -> Cow<'a, [KeyHold]> {
        if self.primaries.is_empty() {
            return Cow::Borrowed(held);
        }
        let mut out = Vec::new();
        for h in held {
            let root = self.root(h.instance);
            let Some(list) = self.primaries.get(&root) else {
                out.push(h.clone());
                continue;
            };
            for (i, (since, node, _)) in list.iter().enumerate() {
                if *node != h.instance {
                    continue;
                }
                let (until, end_ev) = match list.get(i + 1) {
                    Some((t, _, ev)) => (*t, ev.clone()),
                    None => (horizon.max(h.to), None),
                };
                let from = h.from.max(*since);
                let to = h.to.min(until);
                if from >= to {
                    continue;
                }
                let mut piece = h.clone();
                piece.instance = root;
                piece.from = from;
                if to < h.to {
                    piece.end = end_ev;
                }
                piece.to = to;
                out.push(piece);
            }
        }
        Cow::Owned(out)
    }
}
