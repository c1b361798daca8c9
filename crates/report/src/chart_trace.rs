//! Charts from a saved JSON Lines trace: the header (with the embedded scenario) and the
//! events are enough to rebuild the [`RunRecord`], re-run the checkers and build the same
//! [`TimelineModel`] as the live run did.

use crate::chart_model::{ModelInput, TimelineModel};
use crate::narrate::Event;
use splitbrain_check::{check, CheckReport, Role, RunRecord};
use splitbrain_engine::{ClockConfig, KindCounts, Observed, SimTime};
use splitbrain_scenario::build::clock_of;
use splitbrain_scenario::schema::NodeSpec;
use splitbrain_scenario::{check_spec, load_str, RunResult, TraceHeader};
use std::collections::BTreeMap;
use std::io::BufRead;

/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Reading failed.
    #[error("cannot read the trace: {0}")]
    Io(#[from] std::io::Error),
    /// The file is empty.
    #[error("the trace is empty (expected a header line)")]
    Empty,
    /// The header line is not a splitbrain trace header.
    #[error("line 1: not a splitbrain trace header: {0}")]
    Header(serde_json::Error),
    /// An event line does not parse.
    #[error("line {line}: not a trace event: {source}")]
    Event {
        /// 1-based line number.
        line: usize,
        /// The parse error.
        source: serde_json::Error,
    },
    /// The embedded scenario does not validate.
    #[error("the scenario in the trace header does not validate: {0}")]
    Scenario(String),
    /// The header's node list disagrees with the scenario.
    #[error("the header names {header} nodes but its scenario has {scenario}")]
    Nodes {
        /// Nodes in the header.
        header: usize,
        /// Nodes in the scenario.
        scenario: usize,
    },
}

/// A trace read back: its header, the roles and clocks of its nodes, and its events.
pub struct SavedTrace {
    /// The header line.
    pub header: TraceHeader,
    /// Roles by node id (from the embedded scenario).
    pub roles: Vec<Role>,
    /// Initial clocks by node id (from the embedded scenario).
    pub clocks: Vec<ClockConfig>,
    /// End of the run (the scenario's duration).
    pub end: SimTime,
    /// The events, in order.
    pub events: Vec<Event>,
}

/// The checker role of a node spec.
pub fn role_of_spec(spec: &NodeSpec) -> Role {
    match spec {
        NodeSpec::Bully(_) => Role::Bully,
        NodeSpec::LeaseService(_) => Role::LeaseService,
        NodeSpec::LeaseLeader(_) => Role::LeaseLeader,
        NodeSpec::Redis(_) => Role::RedisInstance,
        NodeSpec::Storage(_) => Role::Storage,
        NodeSpec::Worker(_) => Role::Worker,
    }
}

/// Reads a JSON Lines trace (header line, then one event a line; blank lines are skipped).
pub fn read_trace(input: impl BufRead) -> Result<SavedTrace, TraceError> {
    let mut lines = input.lines();
    let first = loop {
        match lines.next() {
            None => return Err(TraceError::Empty),
            Some(l) => {
                let l = l?;
                if !l.trim().is_empty() {
                    break l;
                }
            }
        }
    };
    let header: TraceHeader = serde_json::from_str(&first).map_err(TraceError::Header)?;
    let src = serde_json::to_string_pretty(&header.scenario).map_err(TraceError::Header)?;
    let plan = load_str("<trace header>", &src).map_err(|e| TraceError::Scenario(e.to_string()))?;
    if plan.nodes.len() != header.nodes.len() {
        return Err(TraceError::Nodes {
            header: header.nodes.len(),
            scenario: plan.nodes.len(),
        });
    }
    let roles = plan.nodes.iter().map(|n| role_of_spec(&n.spec)).collect();
    let clocks = plan.nodes.iter().map(|n| clock_of(&n.spec)).collect();
    let end = SimTime(plan.scenario.duration.0.as_nanos());
    let mut events = Vec::new();
    for (i, line) in lines.enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let ev: Event = serde_json::from_str(&line).map_err(|source| TraceError::Event {
            line: i + 2,
            source,
        })?;
        events.push(ev);
    }
    Ok(SavedTrace {
        header,
        roles,
        clocks,
        end,
        events,
    })
}

impl SavedTrace {
    /// The checkers' input rebuilt from the trace: observations and faults from the events,
    /// names, roles and clocks from the header, message counters from sends, deliveries and
    /// drops.
    pub fn record(&self) -> RunRecord {
        let mut observations = Vec::new();
        let mut faults = Vec::new();
        let mut kinds: BTreeMap<u64, String> = BTreeMap::new();
        let mut messages: BTreeMap<String, KindCounts> = BTreeMap::new();
        for ev in &self.events {
            match ev {
                Event::Observe { t, node, obs } => observations.push(Observed {
                    t: *t,
                    node: *node,
                    obs: obs.clone(),
                }),
                Event::Fault { t, fault } => faults.push((*t, fault.clone())),
                Event::Send { id, kind, .. } => {
                    messages.entry(kind.clone()).or_default().sent += 1;
                    kinds.insert(*id, kind.clone());
                }
                Event::Deliver { id, .. } => {
                    if let Some(k) = kinds.get(id) {
                        messages.entry(k.clone()).or_default().delivered += 1;
                    }
                }
                Event::Drop { id, .. } => {
                    if let Some(k) = kinds.get(id) {
                        messages.entry(k.clone()).or_default().dropped += 1;
                    }
                }
                _ => {}
            }
        }
        RunRecord {
            names: self.header.nodes.clone(),
            roles: self.roles.clone(),
            clocks: self.clocks.clone(),
            observations,
            faults,
            end: self.end,
            messages,
        }
    }

    /// The checkers' report on the rebuilt record, with the scenario's invariants.
    pub fn report(&self) -> CheckReport {
        check(&self.record(), &check_spec(&self.header.scenario))
    }

    /// The timeline model of the saved run.
    pub fn model(&self) -> TimelineModel {
        let record = self.record();
        let report = check(&record, &check_spec(&self.header.scenario));
        TimelineModel::build(&ModelInput {
            name: &self.header.name,
            seed: self.header.seed,
            record: &record,
            events: &self.events,
            report: &report,
        })
    }
}

/// The timeline model of a live run (its recorder must have kept the events; without them
/// the chart shows no messages, beliefs or faults, only violations).
pub fn model_of_run(r: &RunResult) -> TimelineModel {
    let events = r
        .trace
        .as_ref()
        .and_then(|t| t.kept.as_deref())
        .unwrap_or(&[]);
    TimelineModel::build(&ModelInput {
        name: &r.name,
        seed: r.seed,
        record: &r.record,
        events,
        report: &r.report,
    })
}
