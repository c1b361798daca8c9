//! Building a simulation from a validated [`Plan`]: nodes, clocks, network, faults, triggers,
//! the nemesis. The one place a file's fault ([`FaultSpec`]) and the engine's ([`Fault`]) are
//! translated: [`fault_of`] for a run, [`fault_spec_of`] to write a nemesis draw into a file.

use crate::duration::{Dur, SignedDur};
use crate::plan::Plan;
use crate::schema::{BlockSpec, DelaySpec, FaultSpec, NemesisSpec, NodeSet, NodeSpec, Scenario};
use splitbrain_engine::{
    ClockConfig, DelayDist, Fault, KindRule, Limits, LinkModel, Nemesis, NemesisKind, NetRule,
    NodeId, Processing, RngStream, Sim, SimDuration, SimTime, Spike, Trigger,
};
use splitbrain_protocols::Node;

/// Default event bound of a scenario run.
pub const DEFAULT_MAX_EVENTS: u64 = 5_000_000;

/// `limits.max_in_flight` when the file gives none: events queued at once (about 100 bytes
/// each in a 10,000-node election, queue growth and FIFO rows included: `check` of one
/// stopped at this bound peaks at 2.0 GB).
pub const DEFAULT_MAX_IN_FLIGHT: u64 = 20_000_000;

/// Converts a probability in [0, 1] to parts per million (rounded to nearest).
pub fn ppm(p: f64) -> u32 {
    (p.clamp(0.0, 1.0) * 1e6).round() as u32
}

/// The election each node of `plan` claims leadership in, by node index
/// ([`RunRecord::elections`](splitbrain_check::RunRecord::elections)): the arbiter whose
/// counter its terms are numbers of. Every bully node is in one election (`"bully"`: they all
/// know one another and share their terms), every Raft replica in one cluster (`"raft"`),
/// a lease leader in its lease of its lease service (its term is the service's fencing token)
/// or in its key of the Raft lock service (its term is the key's create revision), a
/// candidate in its lease record (its term is the record's version). Nodes that claim no
/// leadership have an empty entry.
pub fn elections(plan: &Plan) -> Vec<String> {
    use crate::roles::lease_leader::LeaderLockKind;
    plan.nodes
        .iter()
        .map(|n| match &n.spec {
            NodeSpec::Bully(_) => "bully".to_string(),
            NodeSpec::Raft(_) => "raft".to_string(),
            NodeSpec::LeaseLeader(l) => {
                let lease = l.lease.as_deref().unwrap_or("leader");
                match l.lock.unwrap_or_default() {
                    LeaderLockKind::Lease => format!(
                        "lease {lease} of {}",
                        l.service.as_deref().unwrap_or_default()
                    ),
                    LeaderLockKind::Raft => format!("raft key {lease}"),
                }
            }
            NodeSpec::LeaseCandidate(c) => format!("lease record {}", c.record),
            _ => String::new(),
        })
        .collect()
}

/// The loss every link of `s` has of its own, ppm (`network.loss`, default 0), when no
/// per-link `loss` differs from it; `None` when one does. A loss change to it changes nothing
/// ([`RunRecord::link_loss_ppm`](splitbrain_check::RunRecord::link_loss_ppm)).
pub fn link_loss_ppm(s: &Scenario) -> Option<u32> {
    let own = s.network.loss.map_or(0, ppm);
    s.network
        .links
        .iter()
        .all(|l| l.loss.map_or(own, ppm) == own)
        .then_some(own)
}

fn delay(d: &DelaySpec) -> DelayDist {
    match d {
        DelaySpec::Fixed(x) => DelayDist::Fixed(x.0),
        DelaySpec::Uniform([lo, hi]) => DelayDist::Uniform { lo: lo.0, hi: hi.0 },
        DelaySpec::Normal { mean, sd } => DelayDist::Normal {
            mean: mean.0,
            sd: sd.0,
        },
        DelaySpec::Exponential(m) => DelayDist::Exponential { mean: m.0 },
        DelaySpec::Lognormal { median, sigma } => DelayDist::LogNormal {
            median: median.0,
            sigma: *sigma,
        },
    }
}

/// The clock configuration of a node spec in `scenario`: its drift and offset, on the
/// scenario's `wall_clock_start` (default 2026-01-01T00:00:00Z).
pub fn clock_of(scenario: &Scenario, spec: &NodeSpec) -> ClockConfig {
    let c = spec.role().clock();
    ClockConfig {
        drift_ppm: c.drift_ppm,
        wall_offset_ns: c.offset.map_or(0, |o| o.0),
        wall_start_ns: scenario.wall_clock_start.unwrap_or_default().0,
    }
}

/// The engine fault of a fault spec (validated: exactly one action).
pub fn fault_of(plan: &Plan, f: &FaultSpec) -> Fault {
    let id = |n: &String| plan.id(n);
    if let Some(n) = &f.crash {
        Fault::Crash { node: id(n) }
    } else if let Some(n) = &f.restart {
        Fault::Restart { node: id(n) }
    } else if let Some(n) = &f.pause {
        Fault::Pause {
            node: id(n),
            duration: f.for_.map_or(SimDuration::ZERO, |d| d.0),
        }
    } else if let Some(groups) = &f.partition {
        Fault::Network {
            rule: NetRule::Partition {
                groups: groups.iter().map(|g| g.iter().map(id).collect()).collect(),
            },
        }
    } else if let Some(b) = &f.block {
        // A group block is one block per pair, applied by `faults_of`; here the first pair.
        Fault::Network {
            rule: NetRule::Block {
                from: id(&b.from.names()[0]),
                to: id(&b.to.names()[0]),
            },
        }
    } else if let Some(links) = &f.cut {
        // Several cut links are applied as one fault each by `schedule_faults`; here the first.
        let [a, b] = &links[0];
        Fault::Network {
            rule: NetRule::Cut { a: id(a), b: id(b) },
        }
    } else if f.heal.is_some() {
        Fault::Heal
    } else if let Some(groups) = &f.heal_partition {
        Fault::HealPartition {
            groups: groups.iter().map(|g| g.iter().map(id).collect()).collect(),
        }
    } else if let Some(n) = &f.clock_step {
        Fault::ClockStep {
            node: id(n),
            delta_ns: f.by.map_or(0, |b| b.0),
        }
    } else if let Some(n) = &f.drift {
        Fault::SetDrift {
            node: id(n),
            drift_ppm: f.ppm.unwrap_or(0),
        }
    } else {
        Fault::SetLoss {
            loss_ppm: f.loss.map(ppm),
        }
    }
}

/// Every engine fault one fault spec stands for (a `cut` of several links is several rules,
/// a `block` between groups is one block per (sender, receiver) pair, senders outer).
pub fn faults_of(plan: &Plan, f: &FaultSpec) -> Vec<Fault> {
    if let Some(b) = &f.block {
        let mut out = Vec::new();
        for from in b.from.names() {
            for to in b.to.names() {
                out.push(Fault::Network {
                    rule: NetRule::Block {
                        from: plan.id(from),
                        to: plan.id(to),
                    },
                });
            }
        }
        return out;
    }
    match &f.cut {
        Some(links) => links
            .iter()
            .map(|[a, b]| Fault::Network {
                rule: NetRule::Cut {
                    a: plan.id(a),
                    b: plan.id(b),
                },
            })
            .collect(),
        None => vec![fault_of(plan, f)],
    }
}

fn node_name(plan: &Plan, id: splitbrain_engine::NodeId) -> String {
    plan.nodes[id.index()].name.clone()
}

/// The fault spec of an engine fault applied `at` (the inverse of [`fault_of`]): how a
/// nemesis draw is written into a file.
pub fn fault_spec_of(plan: &Plan, at: SimTime, fault: &Fault) -> FaultSpec {
    let name = |id| Some(node_name(plan, id));
    let mut f = FaultSpec {
        at: Some(Dur(SimDuration(at.0))),
        ..FaultSpec::default()
    };
    match fault {
        Fault::Crash { node } => f.crash = name(*node),
        Fault::Restart { node } => f.restart = name(*node),
        Fault::Pause { node, duration } => {
            f.pause = name(*node);
            f.for_ = Some(Dur(*duration));
        }
        Fault::Network { rule } => match rule {
            NetRule::Partition { groups } => {
                f.partition = Some(
                    groups
                        .iter()
                        .map(|g| g.iter().map(|n| node_name(plan, *n)).collect())
                        .collect(),
                )
            }
            NetRule::Block { from, to } => {
                f.block = Some(BlockSpec {
                    from: NodeSet::One(node_name(plan, *from)),
                    to: NodeSet::One(node_name(plan, *to)),
                })
            }
            NetRule::Cut { a, b } => f.cut = Some(vec![[node_name(plan, *a), node_name(plan, *b)]]),
        },
        Fault::Heal => f.heal = Some(true),
        Fault::HealPartition { groups } => {
            f.heal_partition = Some(
                groups
                    .iter()
                    .map(|g| g.iter().map(|n| node_name(plan, *n)).collect())
                    .collect(),
            )
        }
        Fault::ClockStep { node, delta_ns } => {
            f.clock_step = name(*node);
            f.by = Some(SignedDur(*delta_ns));
        }
        Fault::SetDrift { node, drift_ppm } => {
            f.drift = name(*node);
            f.ppm = Some(*drift_ppm);
        }
        Fault::SetLoss { loss_ppm } => f.loss = Some(loss_ppm.map_or(0.0, |p| p as f64 / 1e6)),
    }
    f
}

/// The nemesis draws of `seed` as fault specs, in schedule order. Repairs drawn after the end
/// of the run (which never apply) are left out, as validation requires.
pub fn explicit_nemesis(plan: &Plan, seed: u64) -> Vec<FaultSpec> {
    let end = plan.scenario.duration.0.as_nanos();
    nemesis_schedule(plan, seed)
        .iter()
        .filter(|(t, _)| t.0 <= end)
        .map(|(t, f)| fault_spec_of(plan, *t, f))
        .collect()
}

/// The engine nemesis of a nemesis spec.
pub fn nemesis_of(plan: &Plan, n: &NemesisSpec) -> Nemesis {
    let mut kinds = Vec::new();
    if let Some(r) = &n.pause {
        kinds.push(NemesisKind::Pause {
            min: r.min.0,
            max: r.max.0,
        });
    }
    if let Some(r) = &n.crash {
        kinds.push(NemesisKind::Crash {
            min: r.min.0,
            max: r.max.0,
        });
    }
    if let Some(r) = &n.partition {
        kinds.push(NemesisKind::Partition {
            min: r.min.0,
            max: r.max.0,
        });
    }
    if let Some(m) = n.clock_step {
        kinds.push(NemesisKind::ClockStep { max: m.0 });
    }
    if let Some(max_ppm) = n.drift_ppm {
        kinds.push(NemesisKind::Drift { max_ppm });
    }
    let targets = match &n.targets {
        Some(t) => t.iter().map(|x| plan.id(x)).collect(),
        None => (0..plan.nodes.len() as u32).map(NodeId).collect(),
    };
    let duration = plan.scenario.duration.0;
    Nemesis {
        targets,
        kinds,
        mean_interval: n.mean_interval.0,
        start: SimTime(n.start.map_or(0, |s| s.0.as_nanos())),
        end: SimTime(n.end.map_or(duration, |e| e.0).as_nanos()),
        max_faults: n.max_faults.unwrap_or(100),
    }
}

/// The fault schedule the nemesis draws for `seed` (empty without a nemesis).
pub fn nemesis_schedule(plan: &Plan, seed: u64) -> Vec<(SimTime, Fault)> {
    match &plan.scenario.nemesis {
        Some(n) => nemesis_of(plan, n).schedule(&mut RngStream::new(seed, "nemesis")),
        None => Vec::new(),
    }
}

/// Builds the simulation of `plan` with run seed `seed`.
///
/// Long because each part of the file (nodes, network, processing, faults, nemesis) goes into the
/// simulation in this order, which fixes the run's random streams.
pub fn build(plan: &Plan, seed: u64) -> Sim<Node> {
    let mut sim: Sim<Node> = Sim::new(seed);
    let s = &plan.scenario;
    sim.set_limits(Limits {
        max_events: s.limits.max_events.unwrap_or(DEFAULT_MAX_EVENTS),
        max_time: SimTime(s.duration.0.as_nanos()),
        max_in_flight: s.limits.max_in_flight.unwrap_or(DEFAULT_MAX_IN_FLIGHT),
    });
    for node in &plan.nodes {
        let actor = node.spec.role().node(&plan.roster);
        sim.add_node(&node.name, actor, clock_of(&plan.scenario, &node.spec));
    }
    let net = &s.network;
    let default = LinkModel {
        delay: net
            .delay
            .as_ref()
            .map_or(DelayDist::Fixed(SimDuration::from_millis(1)), delay),
        spike: net.spike.as_ref().map(|sp| Spike {
            ppm: ppm(sp.probability),
            extra: delay(&sp.delay),
        }),
        loss_ppm: net.loss.map_or(0, ppm),
        duplicate_ppm: net.duplicate.map_or(0, ppm),
        fifo: net.fifo.unwrap_or(true),
    };
    *sim.network_mut() = splitbrain_engine::Network::new(default.clone());
    for l in &net.links {
        let mut m = default.clone();
        if let Some(d) = &l.delay {
            m.delay = delay(d);
        }
        if let Some(p) = l.loss {
            m.loss_ppm = ppm(p);
        }
        let (a, b) = (plan.id(&l.from), plan.id(&l.to));
        sim.network_mut().set_link(a, b, m.clone());
        if l.both_ways {
            sim.network_mut().set_link(b, a, m);
        }
    }
    if s.processing.iter().any(|r| r.time.0 > SimDuration::ZERO) {
        for (i, node) in plan.nodes.iter().enumerate() {
            let rules: Vec<_> = s
                .processing
                .iter()
                .filter(|r| {
                    r.node
                        .as_ref()
                        .map_or(true, |set| set.names().contains(&node.name))
                })
                .map(|r| (r.kind.clone(), r.time.0))
                .collect();
            if !rules.is_empty() {
                sim.set_processing(NodeId(i as u32), Processing { rules });
            }
        }
    }
    for m in &net.messages {
        sim.network_mut().add_kind_rule(KindRule {
            kind: m.kind.clone(),
            from: m.from.as_ref().map(|n| plan.id(n)),
            to: m.to.as_ref().map(|n| plan.id(n)),
            drop_ppm: m.drop.map_or(0, ppm),
            duplicate_ppm: m.duplicate.map_or(0, ppm),
            extra_delay: m.delay.as_ref().map(delay),
        });
    }
    for f in &s.faults {
        for fault in faults_of(plan, f) {
            match (&f.at, &f.when) {
                (Some(at), _) => sim.schedule_fault(SimTime(at.0.as_nanos()), fault),
                (None, Some(w)) => sim.add_trigger(Trigger {
                    node: plan.id(&w.node),
                    kind: w.observed.clone(),
                    nth: w.nth,
                    delay: f.after.map_or(SimDuration::ZERO, |d| d.0),
                    fault,
                }),
                (None, None) => unreachable!("validated: every fault has `at` or `when`"),
            }
        }
    }
    for (t, fault) in nemesis_schedule(plan, seed) {
        sim.schedule_fault(t, fault);
    }
    sim
}
