//! Editing a scenario's JSON at a dotted path (`sweep --vary`): `nodes.client-1.clock.drift_ppm`,
//! `faults.0.for`. The edit is made on the file's JSON with its key order kept (node ids follow
//! the order of `nodes`), then the result is validated like any file.

use crate::error::ScenarioError;
use crate::load::load_str;
use crate::plan::Plan;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// JSON with object keys in file order (serde_json's own `Value` sorts them here, which would
/// renumber the nodes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, as written.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, keys in file order.
    Object(IndexMap<String, Json>),
}

/// Why a `--vary` argument cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VaryError {
    /// The argument is not `path=v1,v2,...`.
    #[error("--vary expects PATH=V1,V2,... (e.g. nodes.client-1.clock.drift_ppm=0,100,1000), found `{0}`")]
    Syntax(String),
    /// The path does not lead anywhere in the scenario.
    #[error("--vary path `{path}`: {reason}")]
    Path {
        /// The dotted path.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The scenario text is not JSON.
    #[error("the scenario is not valid JSON: {0}")]
    Json(String),
}

/// A parsed `--vary PATH=V1,V2,...`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vary {
    /// Dotted path into the scenario JSON.
    pub path: String,
    /// The values, as written.
    pub values: Vec<String>,
}

impl std::str::FromStr for Vary {
    type Err = VaryError;
    fn from_str(s: &str) -> Result<Self, VaryError> {
        let (path, values) = s
            .split_once('=')
            .ok_or_else(|| VaryError::Syntax(s.into()))?;
        let path = path.trim();
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if path.is_empty() || values.iter().any(String::is_empty) {
            return Err(VaryError::Syntax(s.into()));
        }
        Ok(Vary {
            path: path.to_string(),
            values,
        })
    }
}

/// The JSON value a `--vary` text stands for at a place whose current value is `current`: a
/// string where the file has a string (durations, names), else the text read as JSON (numbers,
/// booleans), else a string.
fn value_of(text: &str, current: Option<&Json>) -> Json {
    if matches!(current, Some(Json::String(_))) {
        return Json::String(text.to_string());
    }
    serde_json::from_str::<Json>(text).unwrap_or_else(|_| Json::String(text.to_string()))
}

/// Sets `path` (dotted; numeric segments index arrays) in `root` to the value `text` stands
/// for. Missing object keys on the way are created (a node without a `clock` gets one), so a
/// misspelt key is reported by validation with a "did you mean".
pub fn set_path(root: &mut Json, path: &str, text: &str) -> Result<(), VaryError> {
    let err = |reason: String| VaryError::Path {
        path: path.to_string(),
        reason,
    };
    let segs: Vec<&str> = path.split('.').collect();
    if segs.iter().any(|s| s.is_empty()) {
        return Err(err("empty segment".into()));
    }
    let mut here = root;
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        let at = segs[..i].join(".");
        let at = if at.is_empty() { "the top".into() } else { at };
        here = match here {
            Json::Object(map) => {
                if last {
                    let v = value_of(text, map.get(*seg));
                    map.insert(seg.to_string(), v);
                    return Ok(());
                }
                map.entry(seg.to_string())
                    .or_insert_with(|| Json::Object(IndexMap::new()))
            }
            Json::Array(items) => {
                let idx: usize = seg.parse().map_err(|_| {
                    err(format!(
                        "`{at}` is a list: expected an index, found `{seg}`"
                    ))
                })?;
                let len = items.len();
                let item = items.get_mut(idx).ok_or_else(|| {
                    err(format!(
                        "`{at}` has {len} entries, index {idx} is out of range"
                    ))
                })?;
                if last {
                    *item = value_of(text, Some(item));
                    return Ok(());
                }
                item
            }
            _ => return Err(err(format!("`{at}` is not an object or a list"))),
        };
    }
    unreachable!("the loop returns at the last segment")
}

/// The scenario text `src` with `path` set to `text`, pretty-printed.
pub fn vary_text(src: &str, path: &str, text: &str) -> Result<String, VaryError> {
    let mut root: Json = serde_json::from_str(src).map_err(|e| VaryError::Json(e.to_string()))?;
    set_path(&mut root, path, text)?;
    Ok(serde_json::to_string_pretty(&root).expect("JSON serialises"))
}

/// Why a varied scenario cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum VaryPlanError {
    /// The edit itself failed.
    #[error(transparent)]
    Vary(#[from] VaryError),
    /// The edited scenario does not validate.
    #[error(transparent)]
    Invalid(#[from] ScenarioError),
}

/// One validated plan per value of `vary`, applied to the scenario text `src` of `file`.
/// Errors name the value (`file [path=value]`) and the located problem in the edited text.
pub fn vary_plans(file: &str, src: &str, vary: &Vary) -> Result<Vec<Plan>, VaryPlanError> {
    vary.values
        .iter()
        .map(|v| {
            let text = vary_text(src, &vary.path, v)?;
            Ok(load_str(&format!("{file} [{}={v}]", vary.path), &text)?)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"{"b": 1, "a": {"x": "1s"}, "l": [{"for": "2s"}, 3]}"#;

    #[test]
    fn edits_keep_key_order_and_types() {
        let out = vary_text(SRC, "a.x", "5s").unwrap();
        let compact: Json = serde_json::from_str(&out).unwrap();
        assert_eq!(
            serde_json::to_string(&compact).unwrap(),
            r#"{"b":1,"a":{"x":"5s"},"l":[{"for":"2s"},3]}"#
        );
        let out = vary_text(SRC, "l.0.for", "15s").unwrap();
        assert!(out.contains("\"15s\""));
        let out = vary_text(SRC, "b", "100").unwrap();
        assert!(out.contains("\"b\": 100"));
        // A missing key is created with JSON typing.
        let out = vary_text(SRC, "a.y.z", "-3").unwrap();
        assert!(out.contains("\"z\": -3"), "{out}");
    }

    #[test]
    fn bad_paths_and_syntax_are_reported() {
        assert!(matches!(
            vary_text(SRC, "l.7", "1"),
            Err(VaryError::Path { .. })
        ));
        assert!(matches!(
            vary_text(SRC, "l.x", "1"),
            Err(VaryError::Path { .. })
        ));
        assert!(matches!(
            vary_text(SRC, "b.c", "1"),
            Err(VaryError::Path { .. })
        ));
        assert!("nope".parse::<Vary>().is_err());
        assert!("a=1,,2".parse::<Vary>().is_err());
        let v: Vary = "faults.0.for=1s, 5s,15s".parse().unwrap();
        assert_eq!(v.values, vec!["1s", "5s", "15s"]);
    }
}
