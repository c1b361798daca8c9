//! A run's happens-before graph (Lamport, "Time, Clocks, and the Ordering of Events in a
//! Distributed System", 1978), built with petgraph from the run's trace events, and a
//! violation's causes read from it: the faults on its causal past.
//!
//! Vertices are what happens at one node, in the order it happens there (start, handling a
//! message, a timer, an observation, a resumption, a fault that targets the node), plus one
//! vertex per network-wide fault (partition, block, cut, heal, loss). Edges: each node's
//! events in order; a message's send to its handling; and a lost message to its sender (the
//! sender's later steps run without the answer): from the fault that cut the link (the rules
//! in force that cut it, or the loss change in force), or from the receiver's last event when
//! it was down or crashed. A fault is a cause of what a node does at `t` iff a path leads
//! from it to that node's last event at or before `t`.

use crate::report::CheckReport;
use crate::run::RunRecord;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::{Dfs, Reversed};
use splitbrain_engine::{DropReason, Fault, NetRule, NodeId, SimTime, TraceEvent};
use std::collections::{BTreeMap, BTreeSet};

/// A vertex: something at one node, or a fault (its index in [`RunRecord::faults`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Vertex {
    /// An event of a node that is not a fault.
    Local,
    /// Fault `index` of the record.
    Fault(usize),
}

/// The happens-before graph of one run.
pub struct HappensBefore {
    graph: DiGraph<Vertex, ()>,
    /// Per node (by index), its vertices in order with their true times.
    chains: Vec<Vec<(SimTime, NodeIndex)>>,
}

impl HappensBefore {
    /// Builds the graph of `events` (a run's kept trace events, in trace order) for `record`
    /// (its nodes; its faults in the order applied, as the trace's fault events are).
    pub fn new<M, T, O>(record: &RunRecord, events: &[TraceEvent<M, T, O>]) -> HappensBefore {
        let mut b = Builder {
            graph: DiGraph::new(),
            chains: vec![Vec::new(); record.names.len()],
            sends: BTreeMap::new(),
            rules: Vec::new(),
            loss: None,
            faults: 0,
        };
        for ev in events {
            b.event(ev);
        }
        HappensBefore {
            graph: b.graph,
            chains: b.chains,
        }
    }

    /// The faults (indexes into [`RunRecord::faults`]) on the causal past of what `nodes`
    /// did up to `until`: those with a path to each node's last event at or before `until`.
    pub fn faults_before(&self, nodes: &BTreeSet<NodeId>, until: SimTime) -> BTreeSet<usize> {
        let rev = Reversed(&self.graph);
        let mut dfs = Dfs::empty(rev);
        let mut out = BTreeSet::new();
        for n in nodes {
            let Some(chain) = self.chains.get(n.index()) else {
                continue;
            };
            let k = chain.partition_point(|(t, _)| *t <= until);
            let Some(&(_, start)) = k.checked_sub(1).and_then(|k| chain.get(k)) else {
                continue;
            };
            dfs.move_to(start);
            while let Some(v) = dfs.next(rev) {
                if let Vertex::Fault(i) = self.graph[v] {
                    out.insert(i);
                }
            }
        }
        out
    }
}

/// The graph under construction.
struct Builder {
    graph: DiGraph<Vertex, ()>,
    chains: Vec<Vec<(SimTime, NodeIndex)>>,
    /// Message id -> its send vertex.
    sends: BTreeMap<u64, NodeIndex>,
    /// The network rules in force, each with its fault's vertex.
    rules: Vec<(NetRule, NodeIndex)>,
    /// The loss change in force, if any.
    loss: Option<NodeIndex>,
    /// Fault events seen so far (the next fault's index).
    faults: usize,
}

impl Builder {
    /// Appends a vertex to `node`'s chain (after its last).
    fn local(&mut self, node: NodeId, t: SimTime, v: Vertex) -> NodeIndex {
        let ix = self.graph.add_node(v);
        if let Some(chain) = self.chains.get_mut(node.index()) {
            if let Some(&(_, last)) = chain.last() {
                self.graph.add_edge(last, ix, ());
            }
            chain.push((t, ix));
        }
        ix
    }

    /// `node`'s last vertex so far.
    fn last(&self, node: NodeId) -> Option<NodeIndex> {
        self.chains.get(node.index())?.last().map(|(_, v)| *v)
    }

    fn event<M, T, O>(&mut self, ev: &TraceEvent<M, T, O>) {
        match ev {
            TraceEvent::Start { t, node }
            | TraceEvent::Timer { t, node, .. }
            | TraceEvent::Resume { t, node }
            | TraceEvent::Observe { t, node, .. } => {
                self.local(*node, *t, Vertex::Local);
            }
            TraceEvent::Send { t, from, id, .. } => {
                let v = self.local(*from, *t, Vertex::Local);
                self.sends.insert(*id, v);
            }
            TraceEvent::Deliver { t, to, id, .. } => {
                let v = self.local(*to, *t, Vertex::Local);
                if let Some(s) = self.sends.remove(id) {
                    self.graph.add_edge(s, v, ());
                }
            }
            TraceEvent::Drop {
                t,
                from,
                to,
                id,
                reason,
            } => self.drop(*t, *from, *to, *id, *reason),
            TraceEvent::Fault { t, fault } => self.fault(*t, fault),
            TraceEvent::End { .. } => {}
        }
    }

    /// A lost message: what made it lost reaches its sender.
    fn drop(&mut self, t: SimTime, from: NodeId, to: NodeId, id: u64, reason: DropReason) {
        self.sends.remove(&id);
        let why: Vec<NodeIndex> = match reason {
            DropReason::Partition => self
                .rules
                .iter()
                .filter(|(r, _)| r.cuts(from, to))
                .map(|(_, v)| *v)
                .collect(),
            DropReason::Loss => self.loss.into_iter().collect(),
            DropReason::NodeDown | DropReason::Crashed => self.last(to).into_iter().collect(),
        };
        if why.is_empty() {
            return;
        }
        let v = self.local(from, t, Vertex::Local);
        for w in why {
            self.graph.add_edge(w, v, ());
        }
    }

    fn fault(&mut self, t: SimTime, fault: &Fault) {
        let index = self.faults;
        self.faults += 1;
        if let Some(node) = fault.node() {
            self.local(node, t, Vertex::Fault(index));
            return;
        }
        let v = self.graph.add_node(Vertex::Fault(index));
        match fault {
            Fault::Network { rule } => self.rules.push((rule.clone(), v)),
            Fault::Heal => self.rules.clear(),
            Fault::HealPartition { groups } => {
                let found = self.rules.iter().position(
                    |(r, _)| matches!(r, NetRule::Partition { groups: g } if g == groups),
                );
                if let Some(k) = found {
                    self.rules.remove(k);
                }
            }
            Fault::SetLoss { .. } => self.loss = Some(v),
            _ => {}
        }
    }
}

/// Gives each violation of `report` the faults on its causal past in `events` (the run's
/// kept trace events) as its causes: those with a path in the [`HappensBefore`] graph to
/// what the violation's nodes did up to its end, told as the checkers tell faults (times
/// with the violation's own decimals). A violation with no fault on its causal past keeps
/// the faults the checker named (those on its nodes).
pub fn causes_from_trace<M, T, O>(
    report: &mut CheckReport,
    record: &RunRecord,
    events: &[TraceEvent<M, T, O>],
) {
    let mut graph: Option<HappensBefore> = None;
    for r in &mut report.results {
        if let crate::Verdict::Violated(vs) = &mut r.verdict {
            let hb = graph.get_or_insert_with(|| HappensBefore::new(record, events));
            for v in vs {
                let nodes: BTreeSet<NodeId> =
                    v.nodes.iter().filter_map(|n| record.node_id(n)).collect();
                let past = hb.faults_before(&nodes, v.to);
                if past.is_empty() {
                    // No message carries the cause (a Sentinel failover is decided outside any
                    // message the run sends): the faults the checker named on the violation's
                    // nodes stay, rather than no cause at all.
                    continue;
                }
                let d = v.time_decimals();
                v.faults =
                    crate::timeline::describe_faults_where(record, v.to, |i, _| past.contains(&i))
                        .iter()
                        .map(|f| crate::verdict::with_decimals(f, d))
                        .collect();
            }
        }
    }
}
