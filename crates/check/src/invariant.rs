//! What an invariant is: its definition ([`InvariantDef`]: name, parameters, definition,
//! premise, the roles it applies to, judge) and an [`Invariant`], a definition with a value
//! for each of its parameters. Each definition lives in its own module under `invariants/`;
//! the table that lists them, and finds one by name, is `spec.rs`, above this module.

use crate::invariants::Shared;
use crate::run::RunRecord;
use crate::verdict::Verdict;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use splitbrain_engine::SimDuration;
use splitbrain_protocols::Obs;
use std::fmt;

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

/// One invariant, whole: its entry in the table of invariants (`spec.rs`), which everything
/// else (parsing, judging, vacuity, which files check it, the reference page) reads. Defined
/// in the invariant's own module under `invariants/`.
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
    pub(crate) judge: fn(&Shared, &Invariant) -> Verdict,
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
        vacuous: fn(&RunRecord, &Invariant) -> Option<String>,
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
    fn vacuous(&self, record: &RunRecord, invariant: &Invariant) -> Option<String> {
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

/// One invariant, with its parameters: a definition and a value per
/// [`InvariantDef::params`]. Serializes as its snake_case name (no parameters) or
/// `{"name": {params}}`; durations are true nanoseconds.
#[derive(Clone)]
pub struct Invariant {
    /// Its definition.
    def: &'static InvariantDef,
    /// Its place in the canonical (report) order: the definition's place in the table.
    ordinal: usize,
    /// One value per parameter of its definition, in order.
    params: Vec<SimDuration>,
}

/// Two invariants are equal when they are the same entry of the table with the same
/// parameters.
impl PartialEq for Invariant {
    fn eq(&self, other: &Invariant) -> bool {
        self.ordinal == other.ordinal && self.params == other.params
    }
}

impl Eq for Invariant {}

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
    /// The invariant `def`, the table's entry number `ordinal`, with default parameters.
    pub(crate) fn with_defaults(def: &'static InvariantDef, ordinal: usize) -> Invariant {
        Invariant {
            def,
            ordinal,
            params: def.params.iter().map(|p| p.default).collect(),
        }
    }

    /// Its definition.
    pub fn def(&self) -> &'static InvariantDef {
        self.def
    }

    /// The snake_case name used in scenario files and reports.
    pub fn name(&self) -> &'static str {
        self.def.name
    }

    /// Position in the canonical order ([`Invariant::NAMES`]).
    pub fn ordinal(&self) -> usize {
        self.ordinal
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
    pub fn vacuous(&self, record: &RunRecord) -> Option<String> {
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
