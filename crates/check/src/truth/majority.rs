//! Redis majority truth: a Redis lock is held by the client whose value a majority of the
//! Redis instances hold (Redlock's quorum rule; one instance is a majority of one).

use super::{Hold, HoldSource, KeyHold};
use crate::run::{Role, RunRecord};
use crate::timeline::overlaps;
use crate::verdict::Evidence;
use splitbrain_engine::SimTime;
use std::collections::BTreeMap;

/// Windows during which a majority of the run's Redis instances hold one `(key, value)`.
pub(crate) fn holds(record: &RunRecord, held: &[KeyHold]) -> Vec<Hold> {
    let instances = record.nodes_where(|r| r == Role::RedisInstance).len();
    if instances == 0 {
        return Vec::new();
    }
    let majority = instances / 2 + 1;
    // Majority windows per (key, value).
    let mut by_value: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, h) in held.iter().enumerate() {
        by_value
            .entry((h.key.as_str(), h.value.as_str()))
            .or_default()
            .push(i);
    }
    let mut out = Vec::new();
    for ((key, value), idx) in by_value {
        let spans: Vec<(SimTime, SimTime)> =
            idx.iter().map(|&i| (held[i].from, held[i].to)).collect();
        for o in overlaps(&spans, majority) {
            let members: Vec<&KeyHold> = o.members.iter().map(|&m| &held[idx[m]]).collect();
            let mut started_by: Vec<Evidence> = members
                .iter()
                .filter(|h| h.from <= o.from)
                .map(|h| h.start.clone())
                .collect();
            started_by.sort_by_key(|e| e.t);
            let ended_by: Vec<Evidence> = members
                .iter()
                .filter(|h| h.to == o.to)
                .filter_map(|h| h.end.clone())
                .collect();
            out.push(Hold {
                lock: key.to_string(),
                holder: members[0].holder,
                source: HoldSource::RedisMajority {
                    value: value.to_string(),
                },
                what: format!(
                    "value {value} on a majority ({majority} of {instances}) of Redis instances"
                ),
                from: o.from,
                to: o.to,
                started_by,
                ended_by,
            });
        }
    }
    out
}
