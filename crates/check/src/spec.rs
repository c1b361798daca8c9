//! What to check: the table of invariants ([`INVARIANTS`], one [`InvariantDef`] each, defined
//! in its own module under `invariants/`), finding an [`Invariant`] by name, and a
//! [`CheckSpec`]. What an invariant is lives below, in `invariant.rs`.
//!
//! Names are part of the scenario format (docs/design.md, "Invariants"): `single_leader`,
//! `eventual_leader`, `exclusive_holders`, `holder_writes_only`, `no_two_accepted_writers`,
//! `fencing_monotonic`, `lock_progress`, `exactly_once_effects`, `validity_within_truth`,
//! `single_leader_per_term`, `state_machine_safety`, `leader_available`. Parameterised invariants
//! deserialize from a bare name (defaults) or from `{"eventual_leader": {"settle": NS}}`.

use crate::invariant::{Invariant, InvariantDef};
use crate::invariants::{availability, leader, locks, progress, raft, writes};
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use splitbrain_engine::SimDuration;
use std::collections::BTreeMap;
use std::fmt;

pub use crate::invariants::leader::DEFAULT_SETTLE;
pub use crate::invariants::progress::DEFAULT_WINDOW;

/// Every invariant, in the canonical (report) order: one line each.
pub const INVARIANTS: &[&InvariantDef] = &[
    &leader::SINGLE_LEADER,
    &leader::EVENTUAL_LEADER,
    &locks::EXCLUSIVE_HOLDERS,
    &locks::HOLDER_WRITES_ONLY,
    &writes::NO_TWO_ACCEPTED_WRITERS,
    &writes::FENCING_MONOTONIC,
    &progress::LOCK_PROGRESS,
    &writes::EXACTLY_ONCE_EFFECTS,
    &locks::VALIDITY_WITHIN_TRUTH,
    &leader::SINGLE_LEADER_PER_TERM,
    &raft::STATE_MACHINE_SAFETY,
    &availability::LEADER_AVAILABLE,
];

/// The table, entry by entry: what the reference page of the invariants is generated from.
pub fn invariant_defs() -> impl Iterator<Item = &'static InvariantDef> {
    INVARIANTS.iter().copied()
}

/// Reading the table: an invariant by name, and every name.
impl Invariant {
    /// Every name, in the canonical (report) order.
    pub const NAMES: [&'static str; INVARIANTS.len()] = {
        let mut names = [""; INVARIANTS.len()];
        let mut i = 0;
        while i < INVARIANTS.len() {
            names[i] = INVARIANTS[i].name;
            i += 1;
        }
        names
    };

    /// The invariant called `name`, with default parameters.
    pub fn from_name(name: &str) -> Option<Invariant> {
        let index = INVARIANTS.iter().position(|d| d.name == name)?;
        Some(Invariant::with_defaults(INVARIANTS[index], index))
    }

    /// The invariant called `name` (one of [`Invariant::NAMES`]), with default parameters.
    ///
    /// # Panics
    /// If no invariant has that name: for names written in code.
    pub fn named(name: &str) -> Invariant {
        Self::from_name(name).unwrap_or_else(|| panic!("no invariant is called {name}"))
    }

    /// Every invariant with default parameters, in canonical order.
    pub fn all() -> Vec<Invariant> {
        Self::NAMES.iter().map(|n| Self::named(n)).collect()
    }
}

/// Accepts a bare name (default parameters) or the tagged form `{"name": {parameters}}`
/// (missing parameters take their defaults; unknown ones are refused).
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
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Invariant, A::Error> {
                let Some(name) = map.next_key::<String>()? else {
                    return Err(de::Error::invalid_length(0, &"one invariant name"));
                };
                let inv = self.visit_str::<A::Error>(&name)?;
                let params: BTreeMap<String, SimDuration> = map.next_value()?;
                if let Some(extra) = map.next_key::<String>()? {
                    return Err(de::Error::custom(format!(
                        "one invariant per entry, found `{name}` and `{extra}`"
                    )));
                }
                params.into_iter().try_fold(inv, |inv, (k, v)| {
                    if inv.param(&k).is_none() {
                        let known: Vec<String> = inv
                            .def()
                            .params
                            .iter()
                            .map(|p| format!("`{}`", p.name))
                            .collect();
                        return Err(de::Error::custom(format!(
                            "unknown parameter `{k}` of `{name}`, expected {}",
                            if known.is_empty() {
                                "none".to_string()
                            } else {
                                known.join(", ")
                            }
                        )));
                    }
                    Ok(inv.with_param(&k, v))
                })
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
            serde_json::to_string(&Invariant::named("single_leader")).unwrap(),
            "\"single_leader\""
        );
    }

    /// The table is the one place an invariant is spelled: every entry has a unique name, a
    /// definition and a premise in words, and its parameters' defaults are what a bare name
    /// gets.
    #[test]
    fn the_table_describes_every_invariant() {
        let names: Vec<&str> = invariant_defs().map(|d| d.name).collect();
        assert_eq!(names, Invariant::NAMES);
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        for d in invariant_defs() {
            assert!(d.definition.ends_with('.'), "{}", d.name);
            assert!(!d.premise.doc().is_empty(), "{}", d.name);
            assert!(!d.applies.roles().is_empty(), "{}", d.name);
            let inv = Invariant::named(d.name);
            for p in d.params {
                assert_eq!(inv.param(p.name), Some(p.default));
            }
        }
        assert_eq!(
            Invariant::named("eventual_leader").param("settle"),
            Some(SimDuration::from_secs(5))
        );
        assert_eq!(
            format!("{:?}", Invariant::named("lock_progress")),
            "lock_progress { window: SimDuration(10000000000) }"
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
                Invariant::named("eventual_leader").with_param("settle", SimDuration::from_secs(5)),
                Invariant::named("lock_progress").with_param("window", SimDuration::from_secs(3)),
                Invariant::named("eventual_leader").with_param("settle", SimDuration::from_secs(5)),
                Invariant::named("fencing_monotonic"),
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
            Invariant::named("exactly_once_effects"),
            Invariant::named("single_leader"),
            Invariant::named("lock_progress").with_param("window", SimDuration::from_secs(1)),
            Invariant::named("single_leader"),
            Invariant::named("lock_progress").with_param("window", SimDuration::from_secs(2)),
        ]);
        assert_eq!(
            spec.in_report_order(),
            vec![
                Invariant::named("single_leader"),
                Invariant::named("lock_progress").with_param("window", SimDuration::from_secs(1)),
                Invariant::named("exactly_once_effects"),
            ]
        );
        assert_eq!(CheckSpec::default().invariants.len(), 12);
    }
}
