//! Faults: what can go wrong, when, and the seeded random nemesis.
//!
//! A [`Fault`] is applied at a true time (a schedule entry) or when a protocol point is
//! reached (a [`Trigger`]: "when client-1 reports its n-th `validity_checked`, pause it for
//! 40 s"). The [`Nemesis`] draws a fault schedule from its own `"nemesis"` stream, so a sweep
//! gets a different schedule per seed while every other stream is unchanged.

use crate::network::NetRule;
use crate::node::NodeId;
use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One fault.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "fault", rename_all = "snake_case")]
pub enum Fault {
    /// The node stops: volatile state lost, timers cancelled, messages to it dropped.
    Crash {
        /// Target.
        node: NodeId,
    },
    /// A crashed node comes back; its actor's `on_restart` sees only its durable state.
    Restart {
        /// Target.
        node: NodeId,
    },
    /// Stop-the-world pause: nothing runs on the node for `duration`; arrivals and due timers
    /// queue and run, in order, when it resumes. Its clocks keep running.
    Pause {
        /// Target.
        node: NodeId,
        /// Length of the pause, true ns.
        duration: SimDuration,
    },
    /// Adds a network rule (partition, one-way block, cut link).
    Network {
        /// The rule.
        rule: NetRule,
    },
    /// Removes every network rule.
    Heal,
    /// Removes one partition rule with exactly these groups (the first such rule in force),
    /// leaving every other rule: the nemesis heals only the partition it drew, not a partition
    /// the scenario set up itself. Nothing if no such rule is in force.
    HealPartition {
        /// The partition's groups, as in the [`NetRule::Partition`] it heals.
        groups: Vec<Vec<NodeId>>,
    },
    /// Steps the node's wall clock by `delta_ns` (negative: backwards). Monotonic untouched,
    /// so no timer moves: timers run on the monotonic clock.
    ClockStep {
        /// Target.
        node: NodeId,
        /// Step, ns.
        delta_ns: i64,
    },
    /// Changes the node's monotonic drift from now on, ppm. Readings up to now are unchanged.
    /// The node's pending timers follow: each fires when the monotonic clock reaches its
    /// deadline (set time + duration, on that clock), so the engine recomputes the true
    /// instant of every timer not yet due with the new rate (a faster clock brings it
    /// forward, a slower one pushes it back). Timers moved to the same true instant run after
    /// the events already scheduled for it, in the order they were set.
    SetDrift {
        /// Target.
        node: NodeId,
        /// New drift, ppm.
        drift_ppm: i64,
    },
    /// Sets the loss probability of every link, ppm (`None`: back to each link's own).
    SetLoss {
        /// New loss, ppm.
        loss_ppm: Option<u32>,
    },
}

impl Fault {
    /// The node a fault targets, if it targets one.
    pub fn node(&self) -> Option<NodeId> {
        match self {
            Fault::Crash { node }
            | Fault::Restart { node }
            | Fault::Pause { node, .. }
            | Fault::ClockStep { node, .. }
            | Fault::SetDrift { node, .. } => Some(*node),
            _ => None,
        }
    }

    /// The fault in one sentence, nodes named by `names` (by `NodeId` index, `?` past the
    /// end): "n5 CRASHES (volatile state lost)", "network PARTITION {n1,n2} | {n3}". The one
    /// describer of a fault: the narration, the view, the exports and the checkers' causes
    /// tell a fault with it or with [`Fault::describe_applied`].
    pub fn describe(&self, names: &[String]) -> String {
        match self {
            Fault::Crash { node } => {
                format!("{} CRASHES (volatile state lost)", name_of(names, *node))
            }
            Fault::Restart { node } => format!("{} restarts", name_of(names, *node)),
            Fault::Pause { node, duration } => {
                format!(
                    "{} is PAUSED for {} (stop-the-world; it cannot tell)",
                    name_of(names, *node),
                    duration
                )
            }
            Fault::Network { rule } => match rule {
                NetRule::Partition { groups } => {
                    let sides: Vec<String> = groups.iter().map(|g| group_of(names, g)).collect();
                    format!("network PARTITION {}", sides.join(" | "))
                }
                NetRule::Block { from, to } => format!(
                    "link {} -> {} blocked (one way)",
                    name_of(names, *from),
                    name_of(names, *to)
                ),
                NetRule::Cut { a, b } => {
                    format!("link {} <-> {} cut", name_of(names, *a), name_of(names, *b))
                }
            },
            Fault::Heal => "network healed: every link open".to_string(),
            Fault::HealPartition { groups } => {
                let sides: Vec<String> = groups.iter().map(|g| group_of(names, g)).collect();
                format!("partition {} healed", sides.join(" | "))
            }
            Fault::ClockStep { node, delta_ns } => {
                let sign = if *delta_ns < 0 { "-" } else { "+" };
                format!(
                    "{}'s wall clock STEPS {sign}{}",
                    name_of(names, *node),
                    SimDuration(delta_ns.unsigned_abs())
                )
            }
            Fault::SetDrift { node, drift_ppm } => format!(
                "{}'s clock drift becomes {drift_ppm} ppm",
                name_of(names, *node)
            ),
            Fault::SetLoss { loss_ppm } => match loss_ppm {
                Some(p) => format!("message loss set to {:.3}%", *p as f64 / 1e4),
                None => "message loss back to each link's own".to_string(),
            },
        }
    }

    /// The fault as applied, in one sentence: [`Fault::describe`] when it changed something,
    /// else what it would have done and why it did nothing, from its recorded
    /// [`FaultEffect::idle`] ("pause (2.000 s) of n5 has NO EFFECT: n5 is down"), so a story
    /// never says "n5 is PAUSED" of a node that is down.
    pub fn describe_applied(&self, names: &[String], idle: Option<&str>) -> String {
        let Some(state) = idle else {
            return self.describe(names);
        };
        let (what, who) = match self {
            Fault::Crash { node } => ("crash".to_string(), Some(*node)),
            Fault::Restart { node } => ("restart".to_string(), Some(*node)),
            Fault::Pause { node, duration } => (format!("pause ({duration})"), Some(*node)),
            Fault::Heal => ("heal".to_string(), None),
            Fault::HealPartition { groups } => {
                let sides: Vec<String> = groups.iter().map(|g| group_of(names, g)).collect();
                (format!("heal of partition {}", sides.join(" | ")), None)
            }
            // The change is to what is in force already: say what it would do, and that.
            Fault::ClockStep { node, .. } => {
                return format!(
                    "{}'s wall clock step has NO EFFECT: it is {state}",
                    name_of(names, *node)
                )
            }
            Fault::SetDrift { node, drift_ppm } => {
                let n = name_of(names, *node);
                return format!(
                    "{n}'s clock drift change to {drift_ppm} ppm has NO EFFECT: {n}'s clock is {state}"
                );
            }
            Fault::Network { .. } => {
                return format!("{} has NO EFFECT: it is {state}", self.describe(names))
            }
            Fault::SetLoss { .. } => {
                return format!(
                    "{} has NO EFFECT: every link is {state}",
                    self.describe(names)
                )
            }
        };
        match who {
            Some(n) => {
                let n = name_of(names, n);
                format!("{what} of {n} has NO EFFECT: {n} is {state}")
            }
            None => format!("{what} has NO EFFECT: there is {state}"),
        }
    }
}

fn name_of(names: &[String], n: NodeId) -> &str {
    names.get(n.index()).map_or("?", String::as_str)
}

fn group_of(names: &[String], g: &[NodeId]) -> String {
    let v: Vec<&str> = g.iter().map(|n| name_of(names, *n)).collect();
    format!("{{{}}}", v.join(","))
}

/// What applying one fault did, recorded by the engine as it applies it ([`FaultLedger`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultEffect {
    /// The state that made the fault change nothing, or `None` if it changed something: a
    /// crash of a node already down (`"already down"`), a restart of a node that is up
    /// (`"up"`), a pause of a node that is down (`"down"`) or paused already past the pause's
    /// end (`"already paused"`), a heal with no matching rule in force (`"nothing to heal"`),
    /// a network rule equal to one in force (`"already in force"`; a copy of a partition that
    /// a heal of that partition then finds is no longer idle: it keeps the partition in
    /// force), a wall clock step of 0 ns (`"a step of 0 s"`), a drift change to the drift in
    /// force (`"already at that drift"`), a loss change to the loss every link has already
    /// (`"already at that loss"`).
    pub idle: Option<&'static str>,
    /// When the fault's effect ended, true ns: for a pause the earlier of its nominal end
    /// (start + duration) and its node's next crash; for any other fault its own time.
    pub ends: SimTime,
    /// For a pause of a node paused already that runs past the pause in force: when the
    /// node's pause began and when it was to end before this one (true ns). Such a pause
    /// only moves the resume later; the node stays stopped from the first pause's start.
    pub extends: Option<(SimTime, SimTime)>,
}

/// What the ledger must know of the run's start to tell a drift or loss change that changed
/// nothing. `Default`: nothing known, so such a change is compared only with an earlier change
/// of the same kind (never called idle on a guess).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultStart {
    /// Each node's monotonic drift at true time 0, ppm, by `NodeId` index (a node past the
    /// end has a perfect clock); `None`: not known.
    pub drift_ppm: Option<Vec<i64>>,
    /// The loss every link has of its own, ppm, when all links have the same; `None`: the
    /// links differ, or not known.
    pub link_loss_ppm: Option<u32>,
}

/// The faults applied in a run, in order, each with its [`FaultEffect`]. The engine keeps
/// one per run and feeds it every fault as it applies it, by the rules of `Sim::apply_fault`
/// (a crash ends a pause, a pause of a paused node only extends it, and so on: see
/// [`FaultEffect::idle`]). A saved trace holds the faults but not their effects (the trace
/// format stays as it is), so a reader of a trace feeds them to a ledger again
/// ([`FaultLedger::replay`]): the same rules, in the one place.
#[derive(Clone, Debug, Default)]
pub struct FaultLedger {
    start: FaultStart,
    faults: Vec<(SimTime, Fault)>,
    effects: Vec<FaultEffect>,
    down: BTreeSet<NodeId>,
    /// Per paused node, when its pause began and the true time it runs to; a crash clears it.
    paused: BTreeMap<NodeId, (SimTime, SimTime)>,
    /// Per node, the effective pauses since its last crash (by fault index): the next crash
    /// cuts short each still running.
    pauses_since_crash: BTreeMap<NodeId, Vec<usize>>,
    /// The network rules in force, each with the index of the fault that added it.
    rules: Vec<(NetRule, usize)>,
    /// Per node whose drift changed, its drift now, ppm.
    drift: BTreeMap<NodeId, i64>,
    /// The loss override in force: `None` none (each link's own), `Some(p)` every link's p.
    loss_override: Option<u32>,
}

impl FaultLedger {
    /// An empty ledger for a run that starts as `start` says.
    pub fn new(start: FaultStart) -> FaultLedger {
        FaultLedger {
            start,
            ..FaultLedger::default()
        }
    }

    /// The effects of `faults` (in the order applied) in a run that started as `start` says.
    pub fn replay(start: FaultStart, faults: &[(SimTime, Fault)]) -> Vec<FaultEffect> {
        let mut ledger = FaultLedger::new(start);
        for (t, f) in faults {
            ledger.apply(*t, f);
        }
        ledger.effects
    }

    /// Every fault applied, in order, with its true time.
    pub fn faults(&self) -> &[(SimTime, Fault)] {
        &self.faults
    }

    /// Per applied fault (as [`FaultLedger::faults`]), what it did. The effect of a pause or
    /// of a network rule is final once the run has ended: a later crash cuts a pause short, a
    /// later heal of a partition makes a copy of it count.
    pub fn effects(&self) -> &[FaultEffect] {
        &self.effects
    }

    /// Records `fault`, applied at `t` (not before the last one). Long because each kind of
    /// fault has its own rule, as in `Sim::apply_fault`.
    pub fn apply(&mut self, t: SimTime, fault: &Fault) {
        let i = self.faults.len();
        let mut ends = t;
        let mut extends = None;
        let idle = match fault {
            Fault::Crash { node } => {
                self.paused.remove(node);
                for p in self.pauses_since_crash.remove(node).unwrap_or_default() {
                    let e = &mut self.effects[p].ends;
                    *e = (*e).min(t);
                }
                (!self.down.insert(*node)).then_some("already down")
            }
            Fault::Restart { node } => (!self.down.remove(node)).then_some("up"),
            Fault::Pause { node, .. } if self.down.contains(node) => Some("down"),
            Fault::Pause { node, duration } => {
                let until = t.saturating_add(*duration);
                let running = self.paused.get(node).copied().filter(|&(_, u)| u > t);
                match running {
                    Some((_, u)) if until <= u => Some("already paused"),
                    _ => {
                        extends = running;
                        let since = running.map_or(t, |(since, _)| since);
                        self.paused.insert(*node, (since, until));
                        self.pauses_since_crash.entry(*node).or_default().push(i);
                        ends = until;
                        None
                    }
                }
            }
            Fault::Network { rule } => {
                let in_force = self.rules.iter().any(|(r, _)| r == rule);
                self.rules.push((rule.clone(), i));
                in_force.then_some("already in force")
            }
            Fault::Heal if self.rules.is_empty() => Some("nothing to heal"),
            Fault::Heal => {
                self.rules.clear();
                None
            }
            Fault::HealPartition { groups } => {
                let this =
                    |r: &NetRule| matches!(r, NetRule::Partition { groups: g } if g == groups);
                match self.rules.iter().position(|(r, _)| this(r)) {
                    Some(k) => {
                        // A copy added while the partition was in force keeps it in force
                        // past this heal (which removes one copy): it did something after all.
                        for (_, j) in self.rules.iter().filter(|(r, _)| this(r)) {
                            self.effects[*j].idle = None;
                        }
                        self.rules.remove(k);
                        None
                    }
                    None => Some("nothing to heal"),
                }
            }
            Fault::ClockStep { delta_ns: 0, .. } => Some("a step of 0 s"),
            Fault::ClockStep { .. } => None,
            Fault::SetDrift { node, drift_ppm } => {
                let known = |d: &Vec<i64>| d.get(node.index()).copied().unwrap_or(0);
                let now = (self.drift.get(node).copied())
                    .or_else(|| self.start.drift_ppm.as_ref().map(known));
                self.drift.insert(*node, *drift_ppm);
                (now == Some(*drift_ppm)).then_some("already at that drift")
            }
            Fault::SetLoss { loss_ppm } => {
                // Every link's loss before and after, where known.
                let own = self.start.link_loss_ppm;
                let before = self.loss_override.or(own);
                let after = loss_ppm.or(own);
                let same = *loss_ppm == self.loss_override || (before.is_some() && before == after);
                self.loss_override = *loss_ppm;
                same.then_some("already at that loss")
            }
        };
        self.faults.push((t, fault.clone()));
        self.effects.push(FaultEffect {
            idle,
            ends,
            extends,
        });
    }
}

/// "When `node` reports its `nth` observation of kind `kind`, apply `fault` after `delay`."
#[derive(Clone, Debug, PartialEq)]
pub struct Trigger {
    /// Whose observations count.
    pub node: NodeId,
    /// The observation kind (see `Observation::kind`), e.g. `"validity_checked"`.
    pub kind: String,
    /// Which occurrence fires it (1 = the first).
    pub nth: u32,
    /// Delay after the observation, true ns (0: right after the reporting handler returns).
    pub delay: SimDuration,
    /// What to apply.
    pub fault: Fault,
}

/// The kinds of fault the nemesis can draw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NemesisKind {
    /// Pause a node for a uniform length in `min..=max`.
    Pause {
        /// Shortest, ns.
        min: SimDuration,
        /// Longest, ns.
        max: SimDuration,
    },
    /// Crash a node and restart it after a uniform downtime in `min..=max`.
    Crash {
        /// Shortest downtime, ns.
        min: SimDuration,
        /// Longest downtime, ns.
        max: SimDuration,
    },
    /// Split the targets into two random non-empty sides, heal after `min..=max`.
    Partition {
        /// Shortest, ns.
        min: SimDuration,
        /// Longest, ns.
        max: SimDuration,
    },
    /// Step a node's wall clock by a uniform amount in `-max..=max`.
    ClockStep {
        /// Largest step magnitude, ns.
        max: SimDuration,
    },
    /// Set a node's monotonic drift to a uniform rate in `-max_ppm..=max_ppm` from now on.
    Drift {
        /// Largest drift magnitude, ppm (at most 999,999).
        max_ppm: u32,
    },
}

/// A random fault generator with rates and bounds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Nemesis {
    /// Nodes it may target (partitions split these).
    pub targets: Vec<NodeId>,
    /// Kinds to draw from, uniformly.
    pub kinds: Vec<NemesisKind>,
    /// Mean gap between faults (exponential), ns.
    pub mean_interval: SimDuration,
    /// No fault starts before this true time.
    pub start: SimTime,
    /// No fault starts at or after this true time.
    pub end: SimTime,
    /// At most this many faults (a bound on every loop).
    pub max_faults: u32,
}

impl Nemesis {
    /// Draws the schedule from `rng` (the run's `"nemesis"` stream): `(time, fault)` pairs in
    /// time order. A crash brings its restart and a partition its heal.
    pub fn schedule(&self, rng: &mut RngStream) -> Vec<(SimTime, Fault)> {
        let mut out = Vec::new();
        if self.targets.is_empty() || self.kinds.is_empty() {
            return out;
        }
        let mut t = self.start;
        for _ in 0..self.max_faults {
            let gap = rng.exponential_ns(self.mean_interval.0 as f64);
            t = t.saturating_add(SimDuration(gap.max(1)));
            if t >= self.end {
                break;
            }
            let kind = &self.kinds[rng.uniform_inclusive(0, self.kinds.len() as u64 - 1) as usize];
            let node =
                self.targets[rng.uniform_inclusive(0, self.targets.len() as u64 - 1) as usize];
            match *kind {
                NemesisKind::Pause { min, max } => {
                    out.push((
                        t,
                        Fault::Pause {
                            node,
                            duration: rng.uniform_duration(min, max),
                        },
                    ));
                }
                NemesisKind::Crash { min, max } => {
                    let down = rng.uniform_duration(min, max);
                    out.push((t, Fault::Crash { node }));
                    out.push((t.saturating_add(down), Fault::Restart { node }));
                }
                NemesisKind::Partition { min, max } => {
                    let len = rng.uniform_duration(min, max);
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    for &n in &self.targets {
                        if rng.chance_ppm(500_000) {
                            a.push(n)
                        } else {
                            b.push(n)
                        }
                    }
                    if a.is_empty() || b.is_empty() {
                        // Force two sides: move the first target across.
                        let (full, empty) = if a.is_empty() {
                            (&mut b, &mut a)
                        } else {
                            (&mut a, &mut b)
                        };
                        empty.push(full.remove(0));
                    }
                    let groups = vec![a, b];
                    out.push((
                        t,
                        Fault::Network {
                            rule: NetRule::Partition {
                                groups: groups.clone(),
                            },
                        },
                    ));
                    out.push((t.saturating_add(len), Fault::HealPartition { groups }));
                }
                NemesisKind::ClockStep { max } => {
                    let mag = rng.uniform_inclusive(0, max.0.min(i64::MAX as u64)) as i64;
                    let delta_ns = if rng.chance_ppm(500_000) { mag } else { -mag };
                    out.push((t, Fault::ClockStep { node, delta_ns }));
                }
                NemesisKind::Drift { max_ppm } => {
                    let mag = rng.uniform_inclusive(0, u64::from(max_ppm.min(999_999))) as i64;
                    let drift_ppm = if rng.chance_ppm(500_000) { mag } else { -mag };
                    out.push((t, Fault::SetDrift { node, drift_ppm }));
                }
            }
        }
        out.sort_by_key(|(t, _)| *t);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nemesis() -> Nemesis {
        Nemesis {
            targets: vec![NodeId(0), NodeId(1), NodeId(2)],
            kinds: vec![
                NemesisKind::Pause {
                    min: SimDuration::from_millis(10),
                    max: SimDuration::from_secs(2),
                },
                NemesisKind::Crash {
                    min: SimDuration::from_secs(1),
                    max: SimDuration::from_secs(3),
                },
                NemesisKind::Partition {
                    min: SimDuration::from_secs(1),
                    max: SimDuration::from_secs(3),
                },
                NemesisKind::ClockStep {
                    max: SimDuration::from_secs(5),
                },
            ],
            mean_interval: SimDuration::from_secs(2),
            start: SimTime::ZERO,
            end: SimTime(60_000_000_000),
            max_faults: 1000,
        }
    }

    /// No drawn fault starts at or after `end` (nor before `start`); only
    /// the repairs a crash or a partition brings (restart, heal) may land later.
    #[test]
    fn nemesis_never_draws_a_fault_at_or_after_its_end() {
        let mut n = nemesis();
        n.start = SimTime(5_000_000_000);
        n.end = SimTime(20_000_000_000);
        for seed in 0..200 {
            for (t, f) in n.schedule(&mut RngStream::new(seed, "nemesis")) {
                match f {
                    Fault::Restart { .. } | Fault::HealPartition { .. } => assert!(t > n.start),
                    _ => assert!(n.start < t && t < n.end, "seed {seed}: {f:?} at {t}"),
                }
            }
        }
        // Gaps of 1 ns from a 1 ns mean: the first draw lands exactly on `end`, which is out.
        let mut tight = nemesis();
        tight.mean_interval = SimDuration(1);
        tight.end = SimTime(1);
        for seed in 0..50 {
            assert_eq!(
                tight.schedule(&mut RngStream::new(seed, "nemesis")),
                vec![],
                "seed {seed}"
            );
        }
    }

    /// The drift kind sets drifts within its bound, both ways, on the targets.
    #[test]
    fn nemesis_drift_stays_within_its_bound() {
        let mut n = nemesis();
        n.kinds = vec![NemesisKind::Drift { max_ppm: 100_000 }];
        let (mut faster, mut slower) = (0, 0);
        for seed in 0..50 {
            for (_, f) in n.schedule(&mut RngStream::new(seed, "nemesis")) {
                let Fault::SetDrift { node, drift_ppm } = f else {
                    panic!("seed {seed}: {f:?}");
                };
                assert!(n.targets.contains(&node));
                assert!((-100_000..=100_000).contains(&drift_ppm), "{drift_ppm}");
                faster += usize::from(drift_ppm > 0);
                slower += usize::from(drift_ppm < 0);
            }
        }
        assert!(faster > 10 && slower > 10, "{faster} {slower}");
    }

    #[test]
    fn nemesis_is_seeded_bounded_and_sorted() {
        let a = nemesis().schedule(&mut RngStream::new(1, "nemesis"));
        let b = nemesis().schedule(&mut RngStream::new(1, "nemesis"));
        let c = nemesis().schedule(&mut RngStream::new(2, "nemesis"));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(!a.is_empty());
        assert!(a.windows(2).all(|w| w[0].0 <= w[1].0));
        let mut capped = nemesis();
        capped.max_faults = 3;
        // 3 draws, each crash/partition bringing its repair: at most 6 entries.
        assert!(capped.schedule(&mut RngStream::new(1, "nemesis")).len() <= 6);
        for (_, f) in &a {
            if let Fault::Network {
                rule: NetRule::Partition { groups },
            } = f
            {
                assert!(groups.iter().all(|g| !g.is_empty()));
            }
        }
    }

    /// Found by mutation testing (docs/mutation.md). With two targets, half the coin flips
    /// put both on one side: every partition must still have two non-empty sides, the two
    /// targets. Clock steps go both ways. No targets or no kinds: nothing.
    #[test]
    fn nemesis_sides_steps_and_empty_inputs() {
        let one_kind = |kind: NemesisKind| Nemesis {
            targets: vec![NodeId(0), NodeId(1)],
            kinds: vec![kind],
            ..nemesis()
        };
        let split = one_kind(NemesisKind::Partition {
            min: SimDuration::from_secs(1),
            max: SimDuration::from_secs(1),
        });
        let mut partitions = 0;
        for seed in 0..20 {
            for (_, f) in split.schedule(&mut RngStream::new(seed, "nemesis")) {
                if let Fault::Network {
                    rule: NetRule::Partition { groups },
                } = f
                {
                    partitions += 1;
                    let mut all: Vec<NodeId> = groups.concat();
                    all.sort();
                    assert_eq!(groups.len(), 2);
                    assert!(
                        groups.iter().all(|g| g.len() == 1),
                        "seed {seed}: {groups:?}"
                    );
                    assert_eq!(all, vec![NodeId(0), NodeId(1)]);
                }
            }
        }
        assert!(partitions > 100);
        let steps = one_kind(NemesisKind::ClockStep {
            max: SimDuration::from_secs(5),
        });
        let deltas: Vec<i64> = steps
            .schedule(&mut RngStream::new(3, "nemesis"))
            .into_iter()
            .filter_map(|(_, f)| match f {
                Fault::ClockStep { delta_ns, .. } => Some(delta_ns),
                _ => None,
            })
            .collect();
        assert!(deltas.iter().any(|&d| d < 0) && deltas.iter().any(|&d| d > 0));
        assert!(deltas.iter().all(|d| d.abs() <= 5_000_000_000));
        for n in [
            Nemesis {
                targets: vec![],
                ..nemesis()
            },
            Nemesis {
                kinds: vec![],
                ..nemesis()
            },
        ] {
            assert_eq!(n.schedule(&mut RngStream::new(1, "nemesis")), vec![]);
        }
    }

    /// `Fault::node`: the node a fault targets, none for network-wide faults.
    #[test]
    fn the_node_a_fault_targets() {
        let n = NodeId(3);
        for (f, expect) in [
            (Fault::Crash { node: n }, Some(n)),
            (Fault::Restart { node: n }, Some(n)),
            (
                Fault::Pause {
                    node: n,
                    duration: SimDuration(1),
                },
                Some(n),
            ),
            (
                Fault::ClockStep {
                    node: n,
                    delta_ns: 1,
                },
                Some(n),
            ),
            (
                Fault::SetDrift {
                    node: n,
                    drift_ppm: 1,
                },
                Some(n),
            ),
            (Fault::Heal, None),
            (
                Fault::HealPartition {
                    groups: vec![vec![n]],
                },
                None,
            ),
            (Fault::SetLoss { loss_ppm: None }, None),
            (
                Fault::Network {
                    rule: NetRule::Partition {
                        groups: vec![vec![n]],
                    },
                },
                None,
            ),
        ] {
            assert_eq!(f.node(), expect, "{f:?}");
        }
    }

    fn ms(n: u64) -> SimTime {
        SimTime(n * 1_000_000)
    }
    fn id(n: u32) -> NodeId {
        NodeId(n)
    }
    fn idle_of(start: FaultStart, faults: &[(SimTime, Fault)]) -> Vec<Option<&'static str>> {
        FaultLedger::replay(start, faults)
            .iter()
            .map(|e| e.idle)
            .collect()
    }

    /// A heal with no network rule in force (the engine clears an empty list) and a partition
    /// heal of a partition not in force change nothing, and are noted so.
    #[test]
    fn a_heal_with_nothing_to_heal_has_no_effect() {
        let part = |a: u32, b: u32| Fault::Network {
            rule: NetRule::Partition {
                groups: vec![vec![id(a)], vec![id(b)]],
            },
        };
        let heal_part = |a: u32, b: u32| Fault::HealPartition {
            groups: vec![vec![id(a)], vec![id(b)]],
        };
        let faults = vec![
            (ms(1000), Fault::Heal),
            (ms(2000), part(0, 1)),
            (ms(3000), heal_part(1, 0)),
            (ms(4000), heal_part(0, 1)),
            (ms(5000), part(0, 1)),
            (ms(6000), Fault::Heal),
            (ms(7000), Fault::Heal),
        ];
        assert_eq!(
            idle_of(FaultStart::default(), &faults),
            [
                Some("nothing to heal"),
                None,
                Some("nothing to heal"),
                None,
                None,
                None,
                Some("nothing to heal")
            ]
        );
    }
    /// A wall clock step of 0 s, a drift change to the drift in force, a loss change to the
    /// loss every link has and a second partition or block equal to one in force change
    /// nothing and count as no fault: a checker must not count them as the last fault.
    #[test]
    fn changes_to_what_is_in_force_have_no_effect() {
        let part = |a: u32, b: u32| Fault::Network {
            rule: NetRule::Partition {
                groups: vec![vec![id(a)], vec![id(b)]],
            },
        };
        let block = Fault::Network {
            rule: NetRule::Block {
                from: id(0),
                to: id(1),
            },
        };
        let step = |node, delta_ns| Fault::ClockStep {
            node: id(node),
            delta_ns,
        };
        let drift = |node, drift_ppm| Fault::SetDrift {
            node: id(node),
            drift_ppm,
        };
        let loss = |loss_ppm| Fault::SetLoss { loss_ppm };
        let start = FaultStart {
            drift_ppm: Some(vec![0, 100]),
            link_loss_ppm: Some(0),
        };
        let faults = vec![
            (ms(1000), step(0, 0)),
            (ms(1000), step(0, -1)),
            (ms(1100), drift(1, 100)),
            (ms(1200), drift(0, 100)),
            (ms(1300), drift(0, 100)),
            (ms(1400), drift(2, 0)),
            (ms(1500), loss(Some(0))),
            (ms(1600), loss(None)),
            (ms(1700), loss(Some(5))),
            (ms(1800), loss(Some(5))),
            (ms(1900), loss(Some(0))),
            (ms(2000), part(0, 1)),
            (ms(2100), part(1, 0)),
            (ms(2200), part(0, 1)),
            (ms(2300), block.clone()),
            (ms(2400), block.clone()),
            (ms(3000), Fault::Heal),
            (ms(3100), block),
        ];
        let idle = |start: &FaultStart| idle_of(start.clone(), &faults);
        assert_eq!(
            idle(&start),
            [
                Some("a step of 0 s"),
                None,
                Some("already at that drift"),
                None,
                Some("already at that drift"),
                Some("already at that drift"),
                Some("already at that loss"),
                Some("already at that loss"),
                None,
                Some("already at that loss"),
                None,
                None,
                None,
                Some("already in force"),
                None,
                Some("already in force"),
                None,
                None,
            ]
        );
        // With the start not known, a drift or loss change is compared only with an earlier
        // change: nothing is called idle on a guess.
        let unknown = idle(&FaultStart::default());
        let differ: Vec<usize> = (0..faults.len())
            .filter(|&i| unknown[i] != idle(&start)[i])
            .collect();
        assert_eq!(differ, [2, 5, 6, 7]);
        // A copy of a partition in force keeps it in force past a heal of that partition
        // (the heal removes one copy): it changes something.
        let healed = vec![
            (ms(2000), part(0, 1)),
            (ms(2100), part(0, 1)),
            (
                ms(2500),
                Fault::HealPartition {
                    groups: vec![vec![id(0)], vec![id(1)]],
                },
            ),
        ];
        let a = FaultLedger::replay(start, &healed);
        assert!(a.iter().all(|a| a.idle.is_none()), "{a:?}");
    }
}
