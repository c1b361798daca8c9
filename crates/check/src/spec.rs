//! What to check: the [`Invariant`] names of the scenario format and a [`CheckSpec`].
//!
//! Names are part of the scenario format (docs/design.md, "Invariants"): `single_leader`,
//! `eventual_leader`, `exclusive_holders`, `holder_writes_only`, `no_two_accepted_writers`,
//! `fencing_monotonic`, `lock_progress`, `exactly_once_effects`, `validity_within_truth`,
//! `single_leader_per_term`, `state_machine_safety`, `leader_available`. Parameterised invariants
//! deserialize from a bare name (defaults) or from `{"eventual_leader": {"settle": NS}}`.

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use splitbrain_engine::SimDuration;
use std::fmt;

/// Default `settle` of `eventual_leader`: 5 s.
pub const DEFAULT_SETTLE: SimDuration = SimDuration::from_secs(5);
/// Default `window` of `lock_progress`: 10 s.
pub const DEFAULT_WINDOW: SimDuration = SimDuration::from_secs(10);

fn default_settle() -> SimDuration {
    DEFAULT_SETTLE
}
fn default_window() -> SimDuration {
    DEFAULT_WINDOW
}

/// One invariant, with its parameters. Serializes as its snake_case name (unit variants) or
/// `{"name": {params}}`; durations are true nanoseconds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Invariant {
    /// At no true instant do two live nodes both claim leadership.
    SingleLeader,
    /// After the last fault plus `settle`, exactly one live leader that every live
    /// leader-election participant agrees on (liveness).
    EventualLeader {
        /// Time the system gets after the last fault, true ns.
        settle: SimDuration,
    },
    /// At no true instant do two clients both believe they hold the same lock.
    ExclusiveHolders,
    /// Every accepted write was sent by the client that truly held the lock at acceptance.
    HolderWritesOnly,
    /// Accepted writes never return to an earlier holder epoch after a later one wrote.
    NoTwoAcceptedWriters,
    /// Accepted fencing tokens never decrease.
    FencingMonotonic,
    /// While a majority of lock servers is up, some client acquires a lock in every `window`
    /// of time during which a client waits for it and nobody validly holds it.
    LockProgress {
        /// Longest allowed owed time (a client waiting, the lock not held) between
        /// acquisitions, true ns.
        window: SimDuration,
    },
    /// No job id has more than one applied write.
    ExactlyOnceEffects,
    /// A holder's believed end of validity is never later than the true end of its hold.
    ValidityWithinTruth,
    /// At most one node claims leadership for any one term (epoch): Raft's election safety.
    SingleLeaderPerTerm,
    /// No two Raft replicas apply different entries at the same log index (Raft §5.4.3).
    StateMachineSafety,
    /// From the first leadership claim on, no stretch without a leader longer than `max_gap`
    /// ([`crate::leader_available`]). Opt-in: never checked unless a file names it.
    LeaderAvailable {
        /// Longest allowed time with no leader, true ns.
        max_gap: SimDuration,
    },
}

impl Invariant {
    /// Every name, in the canonical (report) order.
    pub const NAMES: [&'static str; 12] = [
        "single_leader",
        "eventual_leader",
        "exclusive_holders",
        "holder_writes_only",
        "no_two_accepted_writers",
        "fencing_monotonic",
        "lock_progress",
        "exactly_once_effects",
        "validity_within_truth",
        "single_leader_per_term",
        "state_machine_safety",
        "leader_available",
    ];

    /// The snake_case name used in scenario files and reports.
    pub fn name(&self) -> &'static str {
        Self::NAMES[self.ordinal()]
    }

    /// Position in the canonical order ([`Invariant::NAMES`]).
    pub fn ordinal(&self) -> usize {
        match self {
            Invariant::SingleLeader => 0,
            Invariant::EventualLeader { .. } => 1,
            Invariant::ExclusiveHolders => 2,
            Invariant::HolderWritesOnly => 3,
            Invariant::NoTwoAcceptedWriters => 4,
            Invariant::FencingMonotonic => 5,
            Invariant::LockProgress { .. } => 6,
            Invariant::ExactlyOnceEffects => 7,
            Invariant::ValidityWithinTruth => 8,
            Invariant::SingleLeaderPerTerm => 9,
            Invariant::StateMachineSafety => 10,
            Invariant::LeaderAvailable { .. } => 11,
        }
    }

    /// The invariant called `name`, with default parameters.
    pub fn from_name(name: &str) -> Option<Invariant> {
        Some(match name {
            "single_leader" => Invariant::SingleLeader,
            "eventual_leader" => Invariant::EventualLeader {
                settle: DEFAULT_SETTLE,
            },
            "exclusive_holders" => Invariant::ExclusiveHolders,
            "holder_writes_only" => Invariant::HolderWritesOnly,
            "no_two_accepted_writers" => Invariant::NoTwoAcceptedWriters,
            "fencing_monotonic" => Invariant::FencingMonotonic,
            "lock_progress" => Invariant::LockProgress {
                window: DEFAULT_WINDOW,
            },
            "exactly_once_effects" => Invariant::ExactlyOnceEffects,
            "validity_within_truth" => Invariant::ValidityWithinTruth,
            "single_leader_per_term" => Invariant::SingleLeaderPerTerm,
            "state_machine_safety" => Invariant::StateMachineSafety,
            "leader_available" => Invariant::LeaderAvailable {
                max_gap: crate::DEFAULT_MAX_GAP,
            },
            _ => return None,
        })
    }

    /// Every invariant with default parameters, in canonical order.
    pub fn all() -> Vec<Invariant> {
        Self::NAMES
            .iter()
            .map(|n| Self::from_name(n).expect("every name parses"))
            .collect()
    }
}

/// The tagged wire form `{"name": {parameters}}`.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum TaggedInvariant {
    SingleLeader {},
    EventualLeader {
        #[serde(default = "default_settle")]
        settle: SimDuration,
    },
    ExclusiveHolders {},
    HolderWritesOnly {},
    NoTwoAcceptedWriters {},
    FencingMonotonic {},
    LockProgress {
        #[serde(default = "default_window")]
        window: SimDuration,
    },
    ExactlyOnceEffects {},
    ValidityWithinTruth {},
    SingleLeaderPerTerm {},
    StateMachineSafety {},
    LeaderAvailable {
        #[serde(default = "default_max_gap")]
        max_gap: SimDuration,
    },
}

fn default_max_gap() -> SimDuration {
    crate::DEFAULT_MAX_GAP
}

impl From<TaggedInvariant> for Invariant {
    fn from(t: TaggedInvariant) -> Invariant {
        match t {
            TaggedInvariant::SingleLeader {} => Invariant::SingleLeader,
            TaggedInvariant::EventualLeader { settle } => Invariant::EventualLeader { settle },
            TaggedInvariant::ExclusiveHolders {} => Invariant::ExclusiveHolders,
            TaggedInvariant::HolderWritesOnly {} => Invariant::HolderWritesOnly,
            TaggedInvariant::NoTwoAcceptedWriters {} => Invariant::NoTwoAcceptedWriters,
            TaggedInvariant::FencingMonotonic {} => Invariant::FencingMonotonic,
            TaggedInvariant::LockProgress { window } => Invariant::LockProgress { window },
            TaggedInvariant::ExactlyOnceEffects {} => Invariant::ExactlyOnceEffects,
            TaggedInvariant::ValidityWithinTruth {} => Invariant::ValidityWithinTruth,
            TaggedInvariant::SingleLeaderPerTerm {} => Invariant::SingleLeaderPerTerm,
            TaggedInvariant::StateMachineSafety {} => Invariant::StateMachineSafety,
            TaggedInvariant::LeaderAvailable { max_gap } => Invariant::LeaderAvailable { max_gap },
        }
    }
}

/// Accepts a bare name (default parameters) or the tagged form.
impl<'de> Deserialize<'de> for Invariant {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Invariant, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Invariant;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an invariant name, or {\"name\": {parameters}}")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Invariant, E> {
                Invariant::from_name(s).ok_or_else(|| E::unknown_variant(s, &Invariant::NAMES))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Invariant, A::Error> {
                TaggedInvariant::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(Invariant::from)
            }
        }
        d.deserialize_any(V)
    }
}

/// Which invariants to check. The report lists them in canonical order
/// ([`Invariant::NAMES`]), each name once (the first occurrence in `invariants` wins).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CheckSpec {
    /// The invariants to check.
    pub invariants: Vec<Invariant>,
}

impl Default for CheckSpec {
    /// Every invariant with default parameters (`settle` 5 s, `window` 10 s).
    fn default() -> Self {
        CheckSpec {
            invariants: Invariant::all(),
        }
    }
}

impl CheckSpec {
    /// Checks exactly these invariants.
    pub fn new(invariants: Vec<Invariant>) -> Self {
        CheckSpec { invariants }
    }

    /// The invariants in report order: canonical order, duplicates of a name dropped.
    pub fn in_report_order(&self) -> Vec<Invariant> {
        let mut out: Vec<Invariant> = Vec::new();
        for inv in &self.invariants {
            if !out.iter().any(|o| o.ordinal() == inv.ordinal()) {
                out.push(inv.clone());
            }
        }
        out.sort_by_key(Invariant::ordinal);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_json() {
        for inv in Invariant::all() {
            let json = serde_json::to_string(&inv).unwrap();
            let back: Invariant = serde_json::from_str(&json).unwrap();
            assert_eq!(back, inv);
        }
        assert_eq!(
            serde_json::to_string(&Invariant::SingleLeader).unwrap(),
            "\"single_leader\""
        );
    }

    #[test]
    fn bare_names_take_defaults_and_tagged_forms_take_parameters() {
        let v: Vec<Invariant> = serde_json::from_str(
            r#"["eventual_leader", {"lock_progress": {"window": 3000000000}}, {"eventual_leader": {}}, "fencing_monotonic"]"#,
        )
        .unwrap();
        assert_eq!(
            v,
            vec![
                Invariant::EventualLeader {
                    settle: SimDuration::from_secs(5)
                },
                Invariant::LockProgress {
                    window: SimDuration::from_secs(3)
                },
                Invariant::EventualLeader {
                    settle: SimDuration::from_secs(5)
                },
                Invariant::FencingMonotonic,
            ]
        );
        let err = serde_json::from_str::<Invariant>("\"single_leaders\"").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("unknown variant `single_leaders`, expected one of `single_leader`"),
            "{err}"
        );
    }

    #[test]
    fn report_order_is_canonical_and_deduplicated() {
        let spec = CheckSpec::new(vec![
            Invariant::ExactlyOnceEffects,
            Invariant::SingleLeader,
            Invariant::LockProgress {
                window: SimDuration::from_secs(1),
            },
            Invariant::SingleLeader,
            Invariant::LockProgress {
                window: SimDuration::from_secs(2),
            },
        ]);
        assert_eq!(
            spec.in_report_order(),
            vec![
                Invariant::SingleLeader,
                Invariant::LockProgress {
                    window: SimDuration::from_secs(1)
                },
                Invariant::ExactlyOnceEffects,
            ]
        );
        assert_eq!(CheckSpec::default().invariants.len(), 12);
    }
}
