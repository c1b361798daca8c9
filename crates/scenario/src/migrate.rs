//! `splitbrain migrate FILE`: a scenario of an older format version rewritten to the current
//! one ([`crate::format::CURRENT`]) with the same meaning. Each version's change of form runs
//! in order ([`crate::format::Version::upgrade`]), then every default that changed since the
//! file's version is written out where the file leaves it out ([`crate::format::KNOBS`]): a
//! migrated file runs exactly as the old one did, seed for seed (same trace hash).
//!
//! What cannot be carried over is said in notes, with the field path. A file already at the
//! current version comes back unchanged, byte for byte.

use crate::error::{Problem, ScenarioError};
use crate::format::{self, CURRENT, KNOBS};
use crate::json::without_bom;
use crate::json::Json;
use crate::validate::load_str;

/// A migrated scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Migrated {
    /// The version the file had.
    pub from: u32,
    /// The text at the current version (the input itself when it was current already).
    pub text: String,
    /// What could not be carried over or should be checked by hand, each with its field path.
    pub notes: Vec<String>,
}

/// Migrates the scenario text `src` (named `file` in errors) to [`CURRENT`].
///
/// Errors (located, as `load` gives them): text that is not a JSON object, a missing or
/// unknown `splitbrain` version, and a file that does not validate, before or after the
/// migration (the problems of the file as given, where it has them).
pub fn migrate_str(file: &str, src: &str) -> Result<Migrated, ScenarioError> {
    let body = without_bom(src);
    let mut root: Json = match serde_json::from_str(body) {
        Ok(root) => root,
        Err(_) => return Err(load_error(file, src)),
    };
    let from = match &root {
        Json::Object(top) => match top.get("splitbrain") {
            Some(Json::Number(n)) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
            _ => None,
        },
        _ => None,
    };
    let Some(from) = from.filter(|n| format::version(*n).is_some()) else {
        return Err(load_error(file, src));
    };
    if from == CURRENT {
        load_str(file, src)?;
        return Ok(Migrated {
            from,
            text: src.to_string(),
            notes: Vec::new(),
        });
    }
    let mut notes = Vec::new();
    for v in format::VERSIONS.iter().filter(|v| v.number > from) {
        if let Some(upgrade) = v.upgrade {
            upgrade(&mut root, &mut notes);
        }
    }
    let (old, new) = (format::defaults(from), format::defaults(CURRENT));
    let Json::Object(top) = &mut root else {
        unreachable!("checked above")
    };
    top.insert("splitbrain".to_string(), Json::Number(CURRENT.into()));
    if let Some(Json::Object(nodes)) = top.get_mut("nodes") {
        for node in nodes.values_mut() {
            let Json::Object(fields) = node else { continue };
            let role = match fields.get("role") {
                Some(Json::String(r)) => r.clone(),
                _ => continue,
            };
            for k in KNOBS.iter().filter(|k| k.role == role) {
                let was = (k.value)(&old);
                if was != (k.value)(&new) && !fields.contains_key(k.field) {
                    let v: Json = serde_json::from_str(was).expect("a knob's value is JSON");
                    fields.insert(k.field.to_string(), v);
                }
            }
        }
    }
    let mut text = serde_json::to_string_pretty(&root).expect("JSON serialises");
    if body.ends_with('\n') {
        text.push('\n');
    }
    if let Err(after) = load_str(file, &text) {
        // The problems of the file as the user wrote it, where it has them; where its only
        // problems are the forms this migration rewrites, the migrated text's problems,
        // located in the file as written (saying "run migrate" again would send the user
        // round in a circle).
        return Err(match load_str(file, src) {
            Err(ScenarioError::Invalid { problems, .. })
                if problems
                    .iter()
                    .all(|p| p.message.contains("splitbrain migrate")) =>
            {
                located_in(after, src)
            }
            Err(before) => before,
            Ok(_) => after,
        });
    }
    Ok(Migrated { from, text, notes })
}

/// `e`'s problems with their lines and columns found again in `src` by their field paths.
fn located_in(e: ScenarioError, src: &str) -> ScenarioError {
    match e {
        ScenarioError::Invalid { file, problems } => ScenarioError::Invalid {
            file,
            problems: problems
                .into_iter()
                .map(|mut p| {
                    (p.line, p.column) = crate::locate::locate(src, &segments(&p.path));
                    p
                })
                .collect(),
        },
        other => other,
    }
}

/// A rendered field path (`faults[2].pause`) as its segments.
fn segments(path: &str) -> Vec<crate::locate::Seg> {
    use crate::locate::Seg;
    let mut segs = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !key.is_empty() {
            segs.push(Seg::Key(key.to_string()));
        }
        while let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']').unwrap_or(inner.len());
            if let Ok(i) = inner[..end].parse() {
                segs.push(Seg::Index(i));
            }
            rest = inner.get(end + 1..).unwrap_or("");
        }
    }
    segs
}

/// The error `load` gives for `src`, or, should it load, the missing version located at the
/// top (a file `migrate` cannot read the version of).
fn load_error(file: &str, src: &str) -> ScenarioError {
    match load_str(file, src) {
        Err(e) => e,
        Ok(_) => ScenarioError::Invalid {
            file: file.to_string(),
            problems: vec![Problem {
                line: 1,
                column: 1,
                path: "splitbrain".to_string(),
                message: format!(
                    "expected the format version, {}, as a number",
                    format::known()
                ),
            }],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = r#"{
  "splitbrain": 1,
  "name": "t",
  "duration": "10s",
  "nodes": {
    "n": {
      "role": "bully",
      "count": 3
    },
    "r": {
      "role": "lease_record"
    },
    "c": {
      "role": "lease_candidate",
      "record": "r",
      "step_down_after": "renew_deadline"
    }
  },
  "nemesis": {
    "mean_interval": "3s",
    "crash": [
      "1s",
      "2s"
    ]
  }
}
"#;

    /// Version 1 to 2: the changed defaults written out where the file leaves them out, the
    /// nemesis bounds as objects, key order kept, and the bully variant noted.
    #[test]
    fn a_version_1_file_gets_its_defaults_written_out() {
        let m = migrate_str("t.json", V1).unwrap();
        assert_eq!(m.from, 1);
        let want = r#"{
  "splitbrain": 2,
  "name": "t",
  "duration": "10s",
  "nodes": {
    "n": {
      "role": "bully",
      "count": 3,
      "adopt_on_heartbeat": true,
      "answer_at_timeout": "late"
    },
    "r": {
      "role": "lease_record"
    },
    "c": {
      "role": "lease_candidate",
      "record": "r",
      "step_down_after": "renew_deadline"
    }
  },
  "nemesis": {
    "mean_interval": "3s",
    "crash": {
      "min": "1s",
      "max": "2s"
    }
  }
}
"#;
        assert_eq!(m.text, want);
        assert_eq!(m.notes.len(), 1, "{:?}", m.notes);
        assert!(m.notes[0].starts_with("nodes.n: "), "{:?}", m.notes);
        // The result is current: migrating it again changes nothing.
        let again = migrate_str("t.json", &m.text).unwrap();
        assert_eq!((again.from, again.text, again.notes), (2, m.text, vec![]));
    }

    /// A file this splitbrain cannot read the version of is refused, located.
    #[test]
    fn an_unknown_version_is_refused_located() {
        let current = migrate_str("t.json", V1).unwrap().text;
        let e = migrate_str(
            "t.json",
            &current.replace("\"splitbrain\": 2", "\"splitbrain\": 7"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("t.json:2:17"), "{e}");
        assert!(e.contains("unsupported format version 7"), "{e}");
        let e = migrate_str("t.json", "[1]").unwrap_err().to_string();
        assert!(e.starts_with("t.json:1:1"), "{e}");
    }

    /// A format 1 file with the old list form and another error: `migrate` names the other
    /// error where the file has it, not "run migrate" again.
    #[test]
    fn a_version_1_file_with_another_error_gets_that_error_located() {
        let bad = V1.replace("\"10s\"", "\"10q\"");
        let e = migrate_str("t.json", &bad).unwrap_err().to_string();
        assert!(!e.contains("splitbrain migrate"), "{e}");
        assert!(e.contains("t.json:4:15: duration"), "{e}");
    }
}
