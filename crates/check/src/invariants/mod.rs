//! The invariant checkers, one module per family. Each `pub fn` implements the DESIGN.md
//! definition quoted in its doc, judging observations against true time.

pub mod leader;
pub mod locks;
pub mod progress;
pub mod raft;
pub mod writes;

use crate::run::RunRecord;
use crate::timeline::{fault_evidence, obs_evidence, End};
use crate::verdict::Evidence;
use splitbrain_engine::NodeId;
use std::collections::BTreeSet;

/// "a", "a and b", "a, b and c".
pub(crate) fn join_names(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Sorted names of a node set.
pub(crate) fn names(record: &RunRecord, nodes: &BTreeSet<NodeId>) -> Vec<String> {
    let mut v: Vec<String> = nodes.iter().map(|n| record.name(*n)).collect();
    v.sort();
    v
}

/// The evidence of how a belief ended, if it ended by an observation or a crash.
pub(crate) fn end_evidence(record: &RunRecord, end: End) -> Option<Evidence> {
    match end {
        End::Obs(i) => Some(obs_evidence(record, i)),
        End::Crash(i) => Some(fault_evidence(record, i)),
        End::Open => None,
    }
}

/// Evidence in true-time order (ties by source), duplicates removed.
pub(crate) fn tidy(mut ev: Vec<Evidence>) -> Vec<Evidence> {
    ev.sort_by_key(|e| (e.t, e.source));
    ev.dedup();
    ev
}
