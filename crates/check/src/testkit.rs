//! Hand-built run records for the checkers' tests.

use crate::evidence::Evidence;
pub(crate) use crate::run::Role::{
    Bully, LeaseLeader, LeaseService, Raft, RedisInstance, Storage, Worker,
};
use crate::run::{Role, RunRecord};
use crate::verdict::{Verdict, Violation};
use splitbrain_engine::{
    ClockConfig, Fault, FaultEffect, FaultLedger, FaultStart, NodeId, Observed, SimDuration,
    SimTime,
};
use splitbrain_protocols::Obs;
use std::collections::BTreeMap;

/// True time `n` milliseconds.
pub(crate) fn ms(n: u64) -> SimTime {
    SimTime(n * 1_000_000)
}
/// Node id `i`.
pub(crate) fn id(i: u32) -> NodeId {
    NodeId(i)
}
/// A client's request for `lock` from the lock servers `servers` (node indexes).
pub(crate) fn requested(lock: &str, servers: &[u32]) -> Obs {
    Obs::LockRequested {
        thread: None,
        lock: lock.to_string(),
        servers: servers.iter().map(|&i| id(i)).collect(),
    }
}

pub(crate) fn crash(i: u32) -> Fault {
    Fault::Crash { node: id(i) }
}
pub(crate) fn restart(i: u32) -> Fault {
    Fault::Restart { node: id(i) }
}
pub(crate) fn pause(i: u32, for_ms: u64) -> Fault {
    Fault::Pause {
        node: id(i),
        duration: SimDuration::from_millis(for_ms),
    }
}

/// The violations of a verdict that must be `Violated`.
pub(crate) fn violations(v: Verdict) -> Vec<Violation> {
    match v {
        Verdict::Violated(v) => v,
        other => panic!("expected a violation, got {other:?}"),
    }
}

/// Evidence as "t node: text" lines.
pub(crate) fn texts(ev: &[Evidence]) -> Vec<String> {
    ev.iter()
        .map(|e| format!("{} {}: {}", e.t, e.node, e.text))
        .collect()
}

/// Facts of the truth as "t node: text" lines, put in words from `record`.
pub(crate) fn fact_texts(record: &RunRecord, facts: &[crate::Fact]) -> Vec<String> {
    let ev: Vec<Evidence> = facts.iter().map(|f| f.evidence(record)).collect();
    texts(&ev)
}

/// What the engine would have recorded of `record`'s faults (the initial drifts from its
/// clocks, the links' loss not known), for a record built by hand.
pub(crate) fn fault_effects(record: &RunRecord) -> Vec<FaultEffect> {
    let start = FaultStart {
        drift_ppm: Some(record.clocks.iter().map(|c| c.drift_ppm).collect()),
        link_loss_ppm: None,
    };
    FaultLedger::replay(start, &record.faults)
}

/// Builds a [`RunRecord`]; observations and faults may be given in any order and are sorted
/// by time (stable: insertion order breaks ties).
pub(crate) struct Builder {
    rec: RunRecord,
}

impl Builder {
    pub(crate) fn new(nodes: &[(&str, Role)]) -> Builder {
        Builder {
            rec: RunRecord {
                names: nodes.iter().map(|(n, _)| n.to_string()).collect(),
                roles: nodes.iter().map(|(_, r)| *r).collect(),
                clocks: vec![ClockConfig::default(); nodes.len()],
                observations: Default::default(),
                faults: Vec::new(),
                fault_effects: Vec::new(),
                end: SimTime::ZERO,
                messages: BTreeMap::new(),
                redis_keys: Default::default(),
                fault_positions: Vec::new(),
                elections: Vec::new(),
            },
        }
    }
    pub(crate) fn obs(mut self, t: SimTime, node: u32, obs: Obs) -> Builder {
        self.rec.observations.push(Observed {
            t,
            node: id(node),
            obs,
        });
        self
    }
    pub(crate) fn fault(mut self, t: SimTime, fault: Fault) -> Builder {
        self.rec.faults.push((t, fault));
        self
    }
    pub(crate) fn clock(mut self, node: u32, cfg: ClockConfig) -> Builder {
        self.rec.clocks[node as usize] = cfg;
        self
    }
    pub(crate) fn end(mut self, t: SimTime) -> Builder {
        self.rec.end = t;
        self
    }
    pub(crate) fn build(mut self) -> RunRecord {
        self.rec.observations.sort_by_key(|o| o.t);
        self.rec.faults.sort_by_key(|f| f.0);
        self.rec.fault_effects = fault_effects(&self.rec);
        self.rec
    }
}
