//! The scenario's JSON as written: a tree that keeps object keys in file order and refuses a
//! key given twice, and dotted paths into it (`nodes."web.1".clock.drift_ppm`,
//! `faults.0.for`), as `--set`, `--vary`, `migrate` and the errors about older forms read them.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// `src` without a leading UTF-8 byte order mark, which some editors write and JSON parsers
/// refuse; the mark is invisible, so columns stay as an editor shows them.
pub fn without_bom(src: &str) -> &str {
    src.strip_prefix('\u{feff}').unwrap_or(src)
}

/// JSON with object keys in file order (serde_json's own `Value` sorts them here, which would
/// renumber the nodes). Reading refuses an object with a key given twice (serde_json keeps the
/// last copy silently), as the scenario format does.
#[derive(Clone, Debug, PartialEq, Serialize)]
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

/// The start of the error [`Json`]'s reader gives for a key given twice.
pub const TWICE: &str = "the key `";

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, MapAccess, SeqAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E: Error>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E: Error>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Bool(v))
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Number(v.into()))
            }
            fn visit_i64<E: Error>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Number(v.into()))
            }
            fn visit_f64<E: Error>(self, v: f64) -> Result<Json, E> {
                serde_json::Number::from_f64(v)
                    .map(Json::Number)
                    .ok_or_else(|| E::custom("a number that is not finite"))
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Json, E> {
                Ok(Json::String(v.to_string()))
            }
            fn visit_string<E: Error>(self, v: String) -> Result<Json, E> {
                Ok(Json::String(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = a.next_element()? {
                    out.push(v);
                }
                Ok(Json::Array(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut out = IndexMap::new();
                while let Some(k) = a.next_key::<String>()? {
                    if out.contains_key(&k) {
                        return Err(A::Error::custom(format!(
                            "{TWICE}{k}` is given twice in one object: give each key once"
                        )));
                    }
                    let v = a.next_value()?;
                    out.insert(k, v);
                }
                Ok(Json::Object(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// The segments of a dotted path (`--set`, `--vary`, `--find-threshold`): split at each `.`,
/// except inside a segment written in double quotes, which is taken as it is, dots and all:
/// `nodes."web.1".clock.drift_ppm` is `nodes`, `web.1`, `clock`, `drift_ppm` (a node name may
/// hold a `.`). A quoted segment must be the whole segment (`"web.1"`, not `x"web.1"`) and
/// holds no `"`. The error says what is wrong, in words.
pub fn path_segments(path: &str) -> Result<Vec<String>, String> {
    let mut segs = Vec::new();
    let mut rest = path;
    loop {
        let (seg, after) = if let Some(inner) = rest.strip_prefix('"') {
            let end = inner.find('"').ok_or_else(|| {
                format!(
                    "the `\"` that opens segment {} is never closed",
                    segs.len() + 1
                )
            })?;
            let after = &inner[end + 1..];
            if !(after.is_empty() || after.starts_with('.')) {
                return Err(format!(
                    "a quoted segment is a whole segment: `\"{}\"` is followed by `{after}`, \
                     not by `.` or the end",
                    &inner[..end]
                ));
            }
            (&inner[..end], after)
        } else {
            let end = rest.find('.').unwrap_or(rest.len());
            let seg = &rest[..end];
            if seg.contains('"') {
                return Err(format!(
                    "segment `{seg}` has a `\"` inside it: quote a whole segment \
                     (`nodes.\"web.1\".clock`)"
                ));
            }
            (seg, &rest[end..])
        };
        if seg.is_empty() {
            return Err("empty segment".into());
        }
        segs.push(seg.to_string());
        match after.strip_prefix('.') {
            Some(next) => rest = next,
            None => return Ok(segs),
        }
    }
}

/// The value at the dotted `path` (numeric segments index lists) of the scenario text `src`,
/// if the text is JSON and the path leads to a value.
pub fn value_at(src: &str, path: &str) -> Option<Json> {
    let mut here: Json = serde_json::from_str(without_bom(src)).ok()?;
    for seg in path_segments(path).ok()? {
        let seg = seg.as_str();
        here = match here {
            Json::Object(mut map) => map.swap_remove(seg)?,
            Json::Array(mut items) => {
                let i: usize = seg.parse().ok()?;
                (i < items.len()).then(|| items.swap_remove(i))?
            }
            _ => return None,
        };
    }
    Some(here)
}
