//! What to check: the table of invariants ([`INVARIANTS`], one [`InvariantDef`] each, defined
//! in its own module under `invariants/`), an [`Invariant`] (an entry with its parameters) and
//! a [`CheckSpec`].
//!
//! Names are part of the scenario format (docs/design.md, "Invariants"): `single_leader`,
//! `eventual_leader`, `exclusive_holders`, `holder_writes_only`, `no_two_accepted_writers`,
//! `fencing_monotonic`, `lock_progress`, `exactly_once_effects`, `validity_within_truth`,
//! `single_leader_per_term`, `state_machine_safety`, `leader_available`. Parameterised invariants
//! deserialize from a bare name (defaults) or from `{"eventual_leader": {"settle": NS}}`.

use crate::invariants::{availability, leader, locks, progress, raft, writes};
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use splitbrain_engine::SimDuration;
use splitbrain_protocols::Obs;
use std::collections::BTreeMap;
use std::fmt;

pub use crate::invariants::leader::DEFAULT_SETTLE;
pub use crate::invariants::progress::DEFAULT_WINDOW;

/// One parameter of an invariant: a duration in true nanoseconds.
#[derive(Clone, Copy, Debug)]
pub struct ParamDef {
    /// Its name in the tagged form (`{"eventual_leader": {"settle": NS}}`) and in the
    /// scenario's `check_params`.
    pub name: &'static str,
    /// Its value where the file gives none.
    pub default: SimDuration,
    /// What it means, one sentence (for the reference).
    pub doc: &'static str,
}

/// What a file's roles must provide for an invariant to apply to it (so a file that names no
/// invariant checks those whose premise its roles can make happen): the roles are the
/// scenario crate's, which says which of these each role provides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Applies {
    /// A node that claims leadership.
    Leader,
    /// A lock client.
    LockClient,
    /// A node that writes to storage.
    Writer,
    /// A writer whose writes carry a fencing token.
    FencedWriter,
    /// A writer whose writes carry job ids.
    JobWriter,
    /// A Raft replica.
    RaftReplica,
    /// No role: checked only where a file names it (`check`, `expect`), never by default.
    Named,
}

impl Applies {
    /// The roles that provide it, in words (for the reference).
    pub fn roles(self) -> &'static str {
        match self {
            Applies::Leader => "`bully`, `lease_leader`, `lease_candidate`, `raft`",
            Applies::LockClient => "a lock client: `worker`, `lease_leader`",
            Applies::Writer => "a node that writes: `worker`, `lease_leader` with `write_to`",
            Applies::FencedWriter => {
                "writes that carry a token: a `lease`, `raft` or `etcd_mutex` lock, a \
                 `lease_leader` with `write_to`"
            }
            Applies::JobWriter => "an `idempotent` worker",
            Applies::RaftReplica => "`raft` replicas",
            Applies::Named => {
                "any role, but only where the file names it in `check` or `expect` (never by default)"
            }
        }
    }
}

/// One invariant, whole: the one entry of [`INVARIANTS`] that everything else (parsing,
/// judging, vacuity, which files check it, the reference page) reads. Defined in the
/// invariant's own module.
#[derive(Clone, Copy)]
pub struct InvariantDef {
    /// The snake_case name used in scenario files and reports.
    pub name: &'static str,
    /// Its parameters, in order (none for most).
    pub params: &'static [ParamDef],
    /// Its definition over true time, one paragraph (Markdown, for the reference).
    pub definition: &'static str,
    /// What must have occurred for a `holds` to show anything.
    pub premise: Premise,
    /// What a file's roles must provide for it to apply.
    pub applies: Applies,
    /// Whether its judge reads the truth's holds themselves (then the check keeps them).
    pub(crate) reads_holds: bool,
    /// Its judge, before the violations' times are made uniform.
    pub(crate) judge: fn(&crate::invariants::Shared, &Invariant) -> crate::Verdict,
}

/// What must have occurred for a `holds` to show anything: without it the result is `holds
/// (vacuous: ...)`, naming what is missing.
#[derive(Clone, Copy)]
pub enum Premise {
    /// It cannot hold without showing something: never vacuous.
    None,
    /// Vacuous unless some observation of the run passes `seen`; `missing` says so.
    Observed {
        /// Whether an observation is the premise.
        seen: fn(&Obs) -> bool,
        /// What is missing, in words ("no node ever claimed leadership").
        missing: &'static str,
    },
    /// Decided by `vacuous` for each run; `doc` says when.
    Custom {
        /// When it is vacuous, in words (for the reference).
        doc: &'static str,
        /// Why a `holds` on the run is vacuous, in words, or `None` if its premise occurred.
        vacuous: fn(&crate::RunRecord, &Invariant) -> Option<String>,
    },
}

impl Premise {
    /// When a `holds` is vacuous, in words (for the reference): "never" for [`Premise::None`].
    pub fn doc(&self) -> &'static str {
        match self {
            Premise::None => "never",
            Premise::Observed { missing, .. } => missing,
            Premise::Custom { doc, .. } => doc,
        }
    }

    /// Why a `holds` of `invariant` on `record` is vacuous, in words, or `None`.
    fn vacuous(&self, record: &crate::RunRecord, invariant: &Invariant) -> Option<String> {
        match self {
            Premise::None => None,
            Premise::Observed { seen, missing } => {
                let happened = record.observations.iter().any(|o| seen(&o.obs));
                (!happened).then(|| missing.to_string())
            }
            Premise::Custom { vacuous, .. } => vacuous(record, invariant),
        }
    }
}

impl fmt::Debug for InvariantDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

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

/// One invariant, with its parameters: an entry of [`INVARIANTS`] and a value per
/// [`InvariantDef::params`]. Serializes as its snake_case name (no parameters) or
/// `{"name": {params}}`; durations are true nanoseconds.
#[derive(Clone, PartialEq, Eq)]
pub struct Invariant {
    /// Its place in [`INVARIANTS`].
    index: usize,
    /// One value per parameter of its definition, in order.
    params: Vec<SimDuration>,
}

impl fmt::Debug for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct(self.name());
        for (p, v) in self.def().params.iter().zip(&self.params) {
            s.field(p.name, v);
        }
        s.finish()
    }
}

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

    /// Its definition.
    pub fn def(&self) -> &'static InvariantDef {
        INVARIANTS[self.index]
    }

    /// The snake_case name used in scenario files and reports.
    pub fn name(&self) -> &'static str {
        self.def().name
    }

    /// Position in the canonical order ([`Invariant::NAMES`]).
    pub fn ordinal(&self) -> usize {
        self.index
    }

    /// The invariant called `name`, with default parameters.
    pub fn from_name(name: &str) -> Option<Invariant> {
        let index = INVARIANTS.iter().position(|d| d.name == name)?;
        Some(Invariant {
            index,
            params: INVARIANTS[index].params.iter().map(|p| p.default).collect(),
        })
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

    /// The value of its parameter `name`, if it has one of that name.
    pub fn param(&self, name: &str) -> Option<SimDuration> {
        let i = self.def().params.iter().position(|p| p.name == name)?;
        Some(self.params[i])
    }

    /// The value of parameter `name`, which its definition declares.
    ///
    /// # Panics
    /// If its definition has no parameter of that name: a judge reads only its own.
    pub(crate) fn arg(&self, name: &str) -> SimDuration {
        self.param(name)
            .unwrap_or_else(|| panic!("{} has no parameter {name}", self.name()))
    }

    /// The same invariant with parameter `name` set to `value` (unchanged if it has no
    /// parameter of that name).
    pub fn with_param(mut self, name: &str, value: SimDuration) -> Invariant {
        if let Some(i) = self.def().params.iter().position(|p| p.name == name) {
            self.params[i] = value;
        }
        self
    }

    /// Why a `holds` verdict on it is vacuous for `record`, in words, or `None` if its premise
    /// occurred.
    pub fn vacuous(&self, record: &crate::RunRecord) -> Option<String> {
        self.def().premise.vacuous(record, self)
    }
}

impl Serialize for Invariant {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let def = self.def();
        if def.params.is_empty() {
            return s.serialize_str(def.name);
        }
        struct Params<'a>(&'a Invariant);
        impl Serialize for Params<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(self.0.params.len()))?;
                for (p, v) in self.0.def().params.iter().zip(&self.0.params) {
                    m.serialize_entry(p.name, v)?;
                }
                m.end()
            }
        }
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(def.name, &Params(self))?;
        m.end()
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
