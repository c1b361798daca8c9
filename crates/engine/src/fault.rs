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
}
