//! Charts from a saved JSON Lines trace: the header (with the embedded scenario) and the
//! events are enough to rebuild the [`RunRecord`], re-run the checkers and build the same
//! [`TimelineModel`] as the live run did.

use crate::chart_model::{ModelInput, TimelineModel};
use crate::event::Event;
use crate::view::ViewModel;
use splitbrain_check::{check, CheckReport, Role, RunRecord};
use splitbrain_engine::{
    ClockConfig, Fault, FaultEffect, FaultLedger, FaultStart, KindCounts, Observed, SimTime,
};
use splitbrain_scenario::build::clock_of;
use splitbrain_scenario::RoleRegistry;
use splitbrain_scenario::{check_spec, RunResult, TraceFile, TraceFileError, TraceHeader};
use std::collections::BTreeMap;
use std::io::Read;

/// A trace read back: its header, the roles and clocks of its nodes, and its events.
pub struct SavedTrace {
    /// The header line.
    pub header: TraceHeader,
    /// Roles by node id (from the embedded scenario).
    pub roles: Vec<Role>,
    /// Initial clocks by node id (from the embedded scenario).
    pub clocks: Vec<ClockConfig>,
    /// The election each node claims leadership in, by node id (from the embedded scenario,
    /// [`splitbrain_scenario::build::elections`]).
    pub elections: Vec<String>,
    /// End of the run (the scenario's duration).
    pub end: SimTime,
    /// The events, in order.
    pub events: Vec<Event>,
}

/// Reads a JSON Lines trace ([`TraceFile`]: header line, then one event a line; blank lines
/// are skipped) and the roles, clocks and end of its embedded scenario.
pub fn read_trace(input: impl Read) -> Result<SavedTrace, TraceFileError> {
    read_trace_with(&RoleRegistry::builtin(), input)
}

/// [`read_trace`] of a trace whose scenario's nodes play any role of `roles`.
pub fn read_trace_with(
    roles: &RoleRegistry,
    input: impl Read,
) -> Result<SavedTrace, TraceFileError> {
    let trace = TraceFile::read(input)?;
    let plan = trace.plan_with(roles)?;
    let events = trace.events().collect::<Result<Vec<Event>, _>>()?;
    Ok(SavedTrace {
        roles: plan
            .nodes
            .iter()
            .map(|n| n.spec.role().checked_as())
            .collect(),
        elections: splitbrain_scenario::build::elections(&plan),
        clocks: plan
            .nodes
            .iter()
            .map(|n| clock_of(&plan.scenario, &n.spec))
            .collect(),
        // The run's true end: the `end` record (a run stopped at a bound ends early).
        end: events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::End { t, .. } => Some(*t),
                _ => None,
            })
            .unwrap_or(SimTime(plan.scenario.duration.0.as_nanos())),
        events,
        header: trace.header,
    })
}

impl SavedTrace {
    /// The run's start as the engine's fault ledger needs it (the trace holds the faults, not
    /// their effects): the initial drifts from the header's scenario and the links' own loss.
    fn fault_start(&self) -> FaultStart {
        FaultStart {
            drift_ppm: Some(self.clocks.iter().map(|c| c.drift_ppm).collect()),
            link_loss_ppm: splitbrain_scenario::build::link_loss_ppm(&self.header.scenario),
        }
    }

    /// What each fault of the trace did, in order: the engine's ledger fed the trace's faults.
    pub fn fault_effects(&self) -> Vec<FaultEffect> {
        let faults: Vec<(SimTime, Fault)> = (self.events.iter())
            .filter_map(|e| match e {
                Event::Fault { t, fault } => Some((*t, fault.clone())),
                _ => None,
            })
            .collect();
        FaultLedger::replay(self.fault_start(), &faults)
    }

    /// The checkers' input rebuilt from the trace: observations and faults from the events,
    /// names, roles and clocks from the header, message counters from sends, deliveries and
    /// drops.
    pub fn record(&self) -> RunRecord {
        let mut observations = Vec::new();
        let mut faults = Vec::new();
        let mut fault_positions = Vec::new();
        let mut kinds: BTreeMap<u64, String> = BTreeMap::new();
        let mut messages: BTreeMap<String, KindCounts> = BTreeMap::new();
        for ev in &self.events {
            match ev {
                Event::Observe { t, node, obs } => observations.push(Observed {
                    t: *t,
                    node: *node,
                    obs: obs.clone(),
                }),
                Event::Fault { t, fault } => {
                    faults.push((*t, fault.clone()));
                    fault_positions.push(observations.len());
                }
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
            observations: observations.into(),
            fault_effects: FaultLedger::replay(self.fault_start(), &faults),
            faults,
            fault_positions,
            end: self.end,
            messages,
            redis_keys: Default::default(),
            elections: self.elections.clone(),
        }
    }

    /// The checkers' report on the rebuilt record, with the scenario's invariants.
    pub fn report(&self) -> CheckReport {
        check(&self.record(), &check_spec(&self.header.scenario))
    }

    /// The timeline model of the saved run.
    pub fn model(&self) -> TimelineModel {
        let record = self.record();
        let mut report = check(&record, &check_spec(&self.header.scenario));
        splitbrain_check::causes::causes_from_trace(&mut report, &record, &self.events);
        TimelineModel::build(&ModelInput {
            name: &self.header.name,
            seed: self.header.seed,
            record: &record,
            events: &self.events,
            report: &report,
        })
    }

    /// The browser view of the saved run, opening on `window` (default: the whole run).
    pub fn view(&self, window: Option<(SimTime, SimTime)>) -> ViewModel {
        let record = self.record();
        let mut report = check(&record, &check_spec(&self.header.scenario));
        splitbrain_check::causes::causes_from_trace(&mut report, &record, &self.events);
        ViewModel::build(
            &ModelInput {
                name: &self.header.name,
                seed: self.header.seed,
                record: &record,
                events: &self.events,
                report: &report,
            },
            window,
        )
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

/// The browser view of a live run (its recorder must have kept the events), opening on
/// `window` (default: the whole run).
pub fn view_of_run(r: &RunResult, window: Option<(SimTime, SimTime)>) -> ViewModel {
    let events = r
        .trace
        .as_ref()
        .and_then(|t| t.kept.as_deref())
        .unwrap_or(&[]);
    ViewModel::build(
        &ModelInput {
            name: &r.name,
            seed: r.seed,
            record: &r.record,
            events,
            report: &r.report,
        },
        window,
    )
}
