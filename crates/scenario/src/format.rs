//! Versions of the scenario format, and what each one means: the one place that says what
//! changed between versions.
//!
//! A file states its version (`"splitbrain": 2`). Every change of what a file means bumps the
//! version: a field whose default changes, a form read differently. An older file runs with
//! its own version's meaning, or is refused, located, with the `splitbrain migrate FILE` hint;
//! `migrate` ([`crate::migrate`]) rewrites it to [`CURRENT`], writing each default that
//! changed as an explicit field, so the migrated file runs exactly as the old one did.
//!
//! **Adding a change of meaning** (a default that changes, say):
//! 1. give the old behaviour a name a file can write (a knob or a variant of its role's spec);
//! 2. add the field to [`Defaults`], the row to [`KNOBS`] (role, field, the value each version
//!    means when the field is left out), and a new entry to [`VERSIONS`] with the new default;
//! 3. bump [`CURRENT`], write the version's section in `docs/format-changelog.md`, and pin the
//!    lessons' hashes under the new version (`tests/tests/format_versions.rs`).
//!
//! A change of form (a field written another way) adds an [`Version::upgrade`] step that
//! rewrites the previous version's form into this one's.

use crate::json::Json;

/// The version this splitbrain writes and documents.
pub const CURRENT: u32 = 2;

/// What a field left out of a file means, in one format version: only the fields whose
/// default changed between versions are here (every other default is the same in every
/// version and lives with its field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Defaults {
    /// `bully.adopt_on_heartbeat`: whether a HEARTBEAT from a node higher than the receiver
    /// and its leader makes the receiver follow that node.
    pub bully_adopt_on_heartbeat: bool,
    /// `bully.answer_at_timeout`: whether an ANSWER that arrives at the very instant the
    /// answer timer ends is in time (`true`) or loses to the timer.
    pub bully_answer_at_timeout_in_time: bool,
    /// `lease_candidate.step_down_after`: whether a leader that cannot renew steps down
    /// `retry_period + renew_deadline` after its last success (`true`, client-go) or
    /// `renew_deadline` after it.
    pub candidate_step_down_after_retry: bool,
}

/// One format version.
#[derive(Clone, Copy, Debug)]
pub struct Version {
    /// Its number (`"splitbrain": N`).
    pub number: u32,
    /// What left-out fields whose default changed mean in it.
    pub defaults: Defaults,
    /// Rewrites a file of the previous version's form into this version's (`None`: the form
    /// did not change), noting what it could not carry over.
    pub upgrade: Option<fn(&mut Json, &mut Vec<String>)>,
}

/// Every version, oldest first; the last is [`CURRENT`].
pub const VERSIONS: &[Version] = &[
    Version {
        number: 1,
        defaults: Defaults {
            bully_adopt_on_heartbeat: true,
            bully_answer_at_timeout_in_time: false,
            candidate_step_down_after_retry: false,
        },
        upgrade: None,
    },
    Version {
        number: 2,
        defaults: Defaults {
            bully_adopt_on_heartbeat: false,
            bully_answer_at_timeout_in_time: true,
            candidate_step_down_after_retry: true,
        },
        upgrade: Some(upgrade_1_to_2),
    },
];

/// The version numbered `n`, if there is one.
pub fn version(n: u32) -> Option<&'static Version> {
    VERSIONS.iter().find(|v| v.number == n)
}

/// The defaults of version `n`; those of [`CURRENT`] for a version that does not exist
/// (validation refuses such a file before anything is built from it).
pub fn defaults(n: u32) -> Defaults {
    version(n).unwrap_or_else(current).defaults
}

fn current() -> &'static Version {
    VERSIONS.last().expect("at least one version")
}

/// The version numbers this splitbrain reads, as an error lists them: "1 or 2".
pub fn known() -> String {
    let n: Vec<String> = VERSIONS.iter().map(|v| v.number.to_string()).collect();
    match n.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => n.join(""),
    }
}

/// A field whose default changed between versions: `migrate` writes the old version's value
/// into every node of `role` that leaves the field out.
#[derive(Clone, Copy, Debug)]
pub struct Knob {
    /// The role whose node spec has the field.
    pub role: &'static str,
    /// The field.
    pub field: &'static str,
    /// The value a left-out field means under some version's defaults, as the file writes it.
    pub value: fn(&Defaults) -> &'static str,
}

/// Every field whose default changed, with the JSON text of its value per version's defaults.
pub const KNOBS: &[Knob] = &[
    Knob {
        role: "bully",
        field: "adopt_on_heartbeat",
        value: |d| {
            if d.bully_adopt_on_heartbeat {
                "true"
            } else {
                "false"
            }
        },
    },
    Knob {
        role: "bully",
        field: "answer_at_timeout",
        value: |d| {
            if d.bully_answer_at_timeout_in_time {
                "\"in_time\""
            } else {
                "\"late\""
            }
        },
    },
    Knob {
        role: "lease_candidate",
        field: "step_down_after",
        value: |d| {
            if d.candidate_step_down_after_retry {
                "\"retry_period_and_renew_deadline\""
            } else {
                "\"renew_deadline\""
            }
        },
    },
];

/// Version 1 to 2, form: the nemesis's `pause`, `crash` and `partition` bounds written as a
/// two-entry list `[min, max]` (read by version 1, by accident of serde) become the
/// `{"min": .., "max": ..}` object. Noted: bully nodes without a `variant`, whose default
/// changed within version 1.
fn upgrade_1_to_2(root: &mut Json, notes: &mut Vec<String>) {
    let Json::Object(top) = root else { return };
    if let Some(Json::Object(nodes)) = top.get("nodes") {
        let no_variant: Vec<String> = nodes
            .iter()
            .filter(|(_, n)| match n {
                Json::Object(f) => {
                    f.get("role") == Some(&Json::String("bully".into()))
                        && !f.contains_key("variant")
                }
                _ => false,
            })
            .map(|(name, _)| format!("nodes.{name}"))
            .collect();
        if !no_variant.is_empty() {
            notes.push(format!(
                "{}: the bully's default `variant` became \"textbook\" during format 1, before \
                 versions were kept; the file keeps the textbook reading it has run with since. \
                 Written for the first releases, it meant \"literal\": add \"variant\": \
                 \"literal\" if it was",
                no_variant.join(", ")
            ));
        }
    }
    let Some(Json::Object(nemesis)) = top.get_mut("nemesis") else {
        return;
    };
    for kind in ["pause", "crash", "partition"] {
        let Some(v) = nemesis.get_mut(kind) else {
            continue;
        };
        if let Json::Array(items) = v {
            if let [min, max] = items.as_slice() {
                let mut o = indexmap::IndexMap::new();
                o.insert("min".to_string(), min.clone());
                o.insert("max".to_string(), max.clone());
                *v = Json::Object(o);
            } else {
                notes.push(format!(
                    "nemesis.{kind}: a list of {} entries is no [min, max] pair; left as it is \
                     (write {{\"min\": .., \"max\": ..}})",
                    items.len()
                ));
            }
        }
    }
}

/// How a comparison manifest's file name ends: the tool's other JSON input, which names its
/// own version key (`splitbrain_compare`); a scenario read from such a text is refused as
/// one ([`is_manifest_text`]).
pub const MANIFEST_SUFFIX: &str = ".compare.json";

/// Whether `src` is a comparison manifest by its content (a JSON object with
/// `splitbrain_compare` and no scenario's `splitbrain`), whatever its file is named.
pub fn is_manifest_text(src: &str) -> bool {
    /// The two top-level keys that tell a manifest from a scenario; every other value is
    /// skipped unread, so a huge file is not held in memory as a JSON tree.
    #[derive(serde::Deserialize)]
    struct Keys {
        splitbrain_compare: Option<serde::de::IgnoredAny>,
        splitbrain: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<Keys>(crate::json::without_bom(src))
        .is_ok_and(|k| k.splitbrain_compare.is_some() && k.splitbrain.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table is in order, ends at CURRENT, and the first version has no upgrade step.
    #[test]
    fn versions_are_ordered_and_end_at_current() {
        assert_eq!(current().number, CURRENT);
        assert!(VERSIONS.windows(2).all(|w| w[1].number == w[0].number + 1));
        assert!(VERSIONS[0].upgrade.is_none());
        assert_eq!(known(), "1 or 2");
    }

    /// Every field that differs between two versions' defaults has a knob that writes it, so
    /// `migrate` can make each changed default explicit: a Defaults field added without its
    /// KNOBS row shows up here as versions that differ with equal knob values.
    #[test]
    fn every_changed_default_has_a_knob() {
        for w in VERSIONS.windows(2) {
            let (a, b) = (&w[0].defaults, &w[1].defaults);
            if a != b {
                assert!(
                    KNOBS.iter().any(|k| (k.value)(a) != (k.value)(b)),
                    "versions {} and {} differ in a default no knob writes",
                    w[0].number,
                    w[1].number
                );
            }
        }
    }
}
