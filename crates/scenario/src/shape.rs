//! The shape check: one streaming pass over a scenario's JSON, guided by the format's own JSON
//! Schema (generated from the types, so it covers every struct and list of the format,
//! including each role's), run before the typed parse. It refuses, located at the value:
//!
//! - a list where an object is required (`"network": []`): serde reads a JSON array into a
//!   struct field by field, so `[{"fixed": "5s"}]` would have been taken as a network whose
//!   first field is that object;
//! - a list past its length limit (the schema's `maxItems`, every list has one; a list without
//!   one is bounded by [`MAX_LIST`]) at its first entry past it, or a fixed-size list (`[from,
//!   to]`) of the wrong length;
//! - a value of the wrong kind where one of a few names or one-key objects goes
//!   (`"expect": {"x": 5}`, `"delay": "fixed"`), said with the names ("expected value" was all
//!   serde said).
//!
//! Entries are read and dropped as the pass goes (as `IgnoredAny` does): a file of millions of
//! entries is refused at the first one past the limit without being held in memory. Every
//! other problem (unknown fields, numbers out of range, ...) is left to the typed parse.

use crate::error::Problem;
use crate::limits::MAX_LIST;
use crate::locate::{locate, render, Seg};
use schemars::schema::{InstanceType, RootSchema, Schema, SchemaObject, SingleOrVec};
use serde::de::{DeserializeSeed, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;
use std::fmt;
use std::sync::OnceLock;

/// The scenario format's schema, generated once.
fn scenario_schema() -> &'static RootSchema {
    static SCHEMA: OnceLock<RootSchema> = OnceLock::new();
    SCHEMA.get_or_init(crate::root_schema::<crate::schema::Scenario>)
}

/// The first shape problem of the scenario text `src` (a JSON object), located; `None` when
/// there is none or the text is not JSON (the typed parse names the syntax error).
pub fn check(src: &str) -> Option<Problem> {
    check_with(scenario_schema(), src)
}

/// The first shape problem of the JSON text `src` by the schema `root` (a scenario's, or
/// another format's built with [`crate::root_schema`]), located; `None` when there is none or
/// the text is not JSON.
pub fn check_with(root: &'static RootSchema, src: &str) -> Option<Problem> {
    let found = RefCell::new(None);
    let walk = Walk {
        root,
        cands: Some(vec![&root.schema]),
        path: Vec::new(),
        found: &found,
    };
    let mut de = serde_json::Deserializer::from_str(src);
    let _ = walk.deserialize(&mut de);
    let (path, message) = found.into_inner()?;
    let (line, column) = locate(src, &path);
    Some(Problem {
        line,
        column,
        path: render(&path),
        message,
    })
}

/// The range the format states (`minimum`, `maximum`) for the integer at `path`, where it
/// states one narrower than the type's: `count` is `1..=10000`, `max_events` at least 1.
/// `None` where the path leads nowhere in the format or the bounds differ between the roles
/// a node's field is looked up in.
pub fn integer_bounds(path: &[Seg]) -> Option<(Option<f64>, Option<f64>)> {
    let root = scenario_schema();
    let mut cands: Vec<&SchemaObject> = vec![&root.schema];
    for seg in path {
        let mut schemas: Vec<&Schema> = Vec::new();
        for o in &cands {
            match seg {
                Seg::Key(k) => {
                    if let Some(v) = o.object.as_deref() {
                        if let Some(s) = v.properties.get(k) {
                            schemas.push(s);
                        } else if let Some(s) = &v.additional_properties {
                            schemas.push(s);
                        }
                    }
                }
                Seg::Index(i) => match o.array.as_deref().and_then(|a| a.items.as_ref()) {
                    Some(SingleOrVec::Single(s)) => schemas.push(s),
                    Some(SingleOrVec::Vec(v)) => schemas.extend(v.get(*i)),
                    None => {}
                },
            }
        }
        cands = cands_of(root, &schemas)?;
    }
    let bounds: Vec<(Option<f64>, Option<f64>)> = cands
        .iter()
        .filter(|o| admits(o, InstanceType::Integer))
        .map(|o| {
            let n = o.number.as_deref();
            (n.and_then(|n| n.minimum), n.and_then(|n| n.maximum))
        })
        .collect();
    let first = *bounds.first()?;
    bounds.iter().all(|b| *b == first).then_some(first)
}

/// The schemas a value may match (the leaves of `$ref`, `allOf`, `anyOf`, `oneOf`); `None`:
/// anything (not checked).
type Cands<'s> = Option<Vec<&'s SchemaObject>>;

/// Adds the leaves of `s` to `out`; `false` if `s` admits anything.
fn expand<'s>(root: &'s RootSchema, s: &'s Schema, out: &mut Vec<&'s SchemaObject>) -> bool {
    let o = match s {
        Schema::Bool(b) => return !b,
        Schema::Object(o) => o,
    };
    if let Some(r) = &o.reference {
        let name = r.rsplit('/').next().unwrap_or_default();
        return match root.definitions.get(name) {
            Some(d) => expand(root, d, out),
            None => false,
        };
    }
    if let Some(sub) = &o.subschemas {
        let lists = [&sub.all_of, &sub.any_of, &sub.one_of];
        let mut any_list = false;
        for l in lists.into_iter().flatten() {
            any_list = true;
            for s in l {
                if !expand(root, s, out) {
                    return false;
                }
            }
        }
        if any_list {
            return true;
        }
    }
    if o.instance_type.is_none() && o.object.is_none() && o.array.is_none() {
        return false;
    }
    out.push(o);
    true
}

fn cands_of<'s>(root: &'s RootSchema, schemas: &[&'s Schema]) -> Cands<'s> {
    let mut out = Vec::new();
    for s in schemas {
        if !expand(root, s, &mut out) {
            return None;
        }
    }
    Some(out)
}

/// Whether the leaf `o` admits JSON values of type `t`.
fn admits(o: &SchemaObject, t: InstanceType) -> bool {
    let has = |x: &InstanceType| {
        *x == t
            || (t == InstanceType::Integer && *x == InstanceType::Number)
            || (t == InstanceType::Number && *x == InstanceType::Integer)
    };
    match &o.instance_type {
        Some(SingleOrVec::Single(x)) => has(x),
        Some(SingleOrVec::Vec(v)) => v.iter().any(has),
        None => match t {
            InstanceType::Object => o.object.is_some(),
            InstanceType::Array => o.array.is_some(),
            _ => false,
        },
    }
}

/// A leaf that is a variant of an externally tagged enum: a string of a few names, or an
/// object of exactly one required key.
fn variant_like(o: &SchemaObject) -> bool {
    if admits(o, InstanceType::String) {
        return o.enum_values.is_some();
    }
    admits(o, InstanceType::Object)
        && o.object
            .as_ref()
            .is_some_and(|v| v.required.len() == 1 && v.properties.len() == 1)
}

/// What a set of variant-like leaves expects, in the format's words.
fn describe_variants(cands: &[&SchemaObject]) -> String {
    let names: Vec<String> = cands
        .iter()
        .filter_map(|o| o.enum_values.as_ref())
        .flatten()
        .filter_map(|v| v.as_str().map(|s| format!("`{s}`")))
        .collect();
    let keys: Vec<String> = cands
        .iter()
        .filter(|o| admits(o, InstanceType::Object))
        .filter_map(|o| o.object.as_ref()?.required.iter().next())
        .map(|k| format!("`{k}`"))
        .collect();
    let dedup = |v: Vec<String>| {
        let mut out: Vec<String> = Vec::new();
        for x in v {
            if !out.contains(&x) {
                out.push(x);
            }
        }
        out
    };
    // A node's field is looked up in every role: the same names may come twice.
    let (names, keys) = (dedup(names), dedup(keys));
    let mut said = Vec::new();
    if !names.is_empty() {
        said.push(format!("one of {}", names.join(", ")));
    }
    if !keys.is_empty() {
        said.push(format!(
            "an object of one key `{{\"KEY\": ...}}`, KEY one of {}",
            keys.join(", ")
        ));
    }
    said.join(", or ")
}

/// Whether `leaf` is one of the leaves of the format's definition `name` (`Duration`).
fn is_leaf_of(root: &RootSchema, name: &str, leaf: &SchemaObject) -> bool {
    let mut leaves = Vec::new();
    root.definitions
        .get(name)
        .is_some_and(|d| expand(root, d, &mut leaves))
        && leaves.iter().any(|l| std::ptr::eq(*l, leaf))
}

/// What the leaves `cands` expect besides null, in the words the typed parse uses for a field
/// that is not optional: "a duration like ...", "an integer in 1..=10000", "one of `a`, `b`",
/// "a boolean", "a string", "a list `[...]`", "an object `{...}`" (`crate::error`'s
/// `in_plain_words` and the durations' own messages).
fn describe_non_null(root: &RootSchema, cands: &[&SchemaObject]) -> String {
    let variants: Vec<&SchemaObject> = cands.iter().copied().filter(|o| variant_like(o)).collect();
    let mut said: Vec<String> = Vec::new();
    let mut say = |s: String| {
        if !said.contains(&s) {
            said.push(s);
        }
    };
    if !variants.is_empty() {
        say(describe_variants(&variants));
    }
    for o in cands.iter().copied().filter(|o| !variant_like(o)) {
        let words = if is_leaf_of(root, "NodeSet", o) {
            "a node name or a list of node names".to_string()
        } else if is_leaf_of(root, "Duration", o) {
            "a duration like \"250ms\", \"10s\", \"1.5s\", or an integer number of nanoseconds"
                .to_string()
        } else if is_leaf_of(root, "SignedDuration", o) {
            "a signed duration like \"+20s\" or \"-500ms\", or an integer number of nanoseconds"
                .to_string()
        } else if is_leaf_of(root, "UnixTime", o) {
            "a UTC time like \"2026-01-01T00:00:00Z\"".to_string()
        } else if is_exactly(o, InstanceType::Integer) {
            integer_words(o)
        } else if is_exactly(o, InstanceType::Number) {
            "a number".to_string()
        } else if admits(o, InstanceType::Boolean) {
            "a boolean".to_string()
        } else if admits(o, InstanceType::String) {
            "a string".to_string()
        } else if admits(o, InstanceType::Array) {
            "a list `[...]`".to_string()
        } else if admits(o, InstanceType::Object) {
            "an object `{...}`".to_string()
        } else {
            continue;
        };
        say(words);
    }
    said.join(", or ")
}

/// Whether the leaf `o` names the type `t` itself (`admits` takes an integer for a number).
fn is_exactly(o: &SchemaObject, t: InstanceType) -> bool {
    match &o.instance_type {
        Some(SingleOrVec::Single(x)) => **x == t,
        Some(SingleOrVec::Vec(v)) => v.contains(&t),
        None => false,
    }
}

/// An integer leaf's range in words, as the typed parse states it (`load.rs`): the schema's
/// bounds within the type's (`count`: "an integer in 1..=10000").
fn integer_words(o: &SchemaObject) -> String {
    let type_max = match o.format.as_deref() {
        Some("uint8") => u64::from(u8::MAX),
        Some("uint16") => u64::from(u16::MAX),
        Some("uint32") => u64::from(u32::MAX),
        Some("uint64" | "uint") => u64::MAX,
        _ => return "an integer".to_string(),
    };
    let n = o.number.as_deref();
    let min = n
        .and_then(|n| n.minimum)
        .filter(|m| *m > 0.0)
        .map_or(0, |m| m as u64);
    let max = n
        .and_then(|n| n.maximum)
        .map_or(type_max, |m| (m as u64).min(type_max));
    format!("an integer in {min}..={max}")
}

struct Walk<'a, 's> {
    root: &'s RootSchema,
    cands: Cands<'s>,
    path: Vec<Seg>,
    found: &'a RefCell<Option<(Vec<Seg>, String)>>,
}

impl Walk<'_, '_> {
    fn fail<E: Error>(&self, path: Vec<Seg>, message: String) -> E {
        self.found.borrow_mut().get_or_insert((path, message));
        E::custom("shape")
    }

    /// A scalar (or a list) of type `t` where only names or one-key objects go.
    fn scalar<E: Error>(&self, t: InstanceType, found: &str) -> Result<(), E> {
        let Some(cands) = &self.cands else {
            return Ok(());
        };
        if cands.is_empty() || cands.iter().any(|o| admits(o, t)) {
            return Ok(());
        }
        if t != InstanceType::String
            && cands
                .iter()
                .all(|o| variant_like(o) || admits(o, InstanceType::Null))
        {
            let variants: Vec<&SchemaObject> =
                cands.iter().copied().filter(|o| variant_like(o)).collect();
            if !variants.is_empty() {
                let expected = describe_variants(&variants);
                return Err(self.fail(
                    self.path.clone(),
                    format!("expected {expected}, found {found}"),
                ));
            }
        }
        let variants: Vec<&SchemaObject> = cands
            .iter()
            .copied()
            .filter(|o| !admits(o, InstanceType::Null))
            .collect();
        if t == InstanceType::String
            && !variants.is_empty()
            && variants
                .iter()
                .all(|o| variant_like(o) && admits(o, InstanceType::Object))
        {
            let expected = describe_variants(&variants);
            return Err(self.fail(
                self.path.clone(),
                format!("expected {expected}, found {found}"),
            ));
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: Error>(self, _: bool) -> Result<(), E> {
        self.scalar(InstanceType::Boolean, "a boolean")
    }
    fn visit_i64<E: Error>(self, _: i64) -> Result<(), E> {
        self.scalar(InstanceType::Integer, "a number")
    }
    fn visit_u64<E: Error>(self, _: u64) -> Result<(), E> {
        self.scalar(InstanceType::Integer, "a number")
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<(), E> {
        self.scalar(InstanceType::Number, "a number")
    }
    fn visit_str<E: Error>(self, v: &str) -> Result<(), E> {
        self.scalar(InstanceType::String, &format!("the string {v:?}"))
    }
    fn visit_unit<E: Error>(self) -> Result<(), E> {
        // serde reads null as absent for an optional field: a `"count": null` became one
        // node. No place of the format takes null (its schema admits null nowhere), so null
        // is refused wherever the format has a place, in the words a field that is not
        // optional gets from the typed parse.
        if let Some(cands) = &self.cands {
            if !cands.is_empty() && !cands.iter().any(|o| admits(o, InstanceType::Null)) {
                let expected = describe_non_null(self.root, cands);
                if !expected.is_empty() {
                    return Err(self.fail(
                        self.path.clone(),
                        format!("expected {expected}, found null"),
                    ));
                }
            }
        }
        self.scalar(InstanceType::Null, "null")
    }

    /// A list: its entries checked against the candidate schemas, one at a time.
    ///
    /// Long because a list's limit, its fixed size and each element's candidate schemas are checked
    /// in one streaming pass over its entries.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let cands = match &self.cands {
            Some(c) if !c.is_empty() => c.clone(),
            // Not a place of the format (an unknown field, which the typed parse names): read
            // through without a judgement.
            _ => {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                return Ok(());
            }
        };
        let lists: Vec<&SchemaObject> = cands
            .iter()
            .copied()
            .filter(|o| admits(o, InstanceType::Array))
            .collect();
        if !cands.is_empty() && lists.is_empty() {
            if cands.iter().any(|o| admits(o, InstanceType::Object)) {
                let message = if cands
                    .iter()
                    .all(|o| variant_like(o) || admits(o, InstanceType::Null))
                {
                    format!(
                        "expected {}, found a list `[...]`",
                        describe_variants(&cands)
                    )
                } else {
                    "expected an object `{...}`, found a list `[...]`".to_string()
                };
                return Err(self.fail(self.path.clone(), message));
            }
            self.scalar::<A::Error>(InstanceType::Array, "a list `[...]`")?;
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(());
        }
        let arrays: Vec<_> = lists.iter().filter_map(|o| o.array.as_deref()).collect();
        let max = arrays
            .iter()
            .map(|a| a.max_items.map_or(MAX_LIST, |m| m as usize))
            .max()
            .unwrap_or(MAX_LIST);
        let min = arrays
            .iter()
            .map(|a| a.min_items.unwrap_or(0) as usize)
            .min()
            .unwrap_or(0);
        let mut i = 0usize;
        loop {
            let mut schemas: Vec<&Schema> = Vec::new();
            let mut any = lists.is_empty();
            for a in &arrays {
                match &a.items {
                    Some(SingleOrVec::Single(s)) => schemas.push(s),
                    Some(SingleOrVec::Vec(v)) => match v.get(i) {
                        Some(s) => schemas.push(s),
                        None => any = true,
                    },
                    None => any = true,
                }
            }
            if lists.len() > arrays.len() {
                any = true;
            }
            let mut path = self.path.clone();
            path.push(Seg::Index(i));
            let child = Walk {
                root: self.root,
                cands: if any {
                    None
                } else {
                    cands_of(self.root, &schemas)
                },
                path,
                found: self.found,
            };
            if seq.next_element_seed(child)?.is_none() {
                break;
            }
            if i == max {
                let mut path = self.path.clone();
                path.push(Seg::Index(i));
                let message = if min == max {
                    format!("expected a list of exactly {max} entries, found more")
                } else if self.path == [Seg::Key("faults".into())] {
                    format!("too many faults: the limit is {max}")
                } else {
                    format!(
                        "too many entries in `{}`: the limit is {max}",
                        render(&self.path)
                    )
                };
                return Err(self.fail(path, message));
            }
            i += 1;
        }
        if i < min {
            let message = if min == max {
                format!("expected a list of exactly {min} entries, found {i}")
            } else {
                format!("expected a list of at least {min} entries, found {i}")
            };
            return Err(self.fail(self.path.clone(), message));
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let objects: Vec<&SchemaObject> = match &self.cands {
            Some(c) => c
                .iter()
                .copied()
                .filter(|o| admits(o, InstanceType::Object))
                .collect(),
            None => Vec::new(),
        };
        let checked = !objects.is_empty();
        let mut keys = 0usize;
        while let Some(key) = map.next_key::<String>()? {
            keys += 1;
            let mut schemas: Vec<&Schema> = Vec::new();
            let mut any = !checked;
            for o in &objects {
                let Some(v) = o.object.as_deref() else {
                    any = true;
                    continue;
                };
                if let Some(s) = v.properties.get(&key) {
                    schemas.push(s);
                } else if let Some(s) = &v.additional_properties {
                    schemas.push(s);
                }
            }
            let mut path = self.path.clone();
            path.push(Seg::Key(key));
            let cands = if any || schemas.is_empty() {
                None
            } else {
                cands_of(self.root, &schemas)
            };
            map.next_value_seed(Walk {
                root: self.root,
                cands,
                path,
                found: self.found,
            })?;
        }
        if keys != 1 && checked && objects.iter().all(|o| variant_like(o)) {
            let expected = describe_variants(&objects);
            let found = if keys == 0 {
                "an empty object".to_string()
            } else {
                format!("an object of {keys} keys")
            };
            return Err(self.fail(
                self.path.clone(),
                format!("expected {expected}, found {found}"),
            ));
        }
        if let Some(c) = &self.cands {
            if !c.is_empty() && !checked {
                self.scalar::<A::Error>(InstanceType::Object, "an object `{...}`")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(extra: &str) -> String {
        format!(
            "{{\"splitbrain\": 1, \"name\": \"x\", \"duration\": \"10s\",\n\"nodes\": {{\"s\": \
             {{\"role\": \"storage\"}}}}{extra}}}"
        )
    }

    fn first(extra: &str) -> String {
        let p = check(&file(extra)).expect("a shape problem");
        format!("{}:{}: {}: {}", p.line, p.column, p.path, p.message)
    }

    /// serde reads a JSON list into a struct field by field, so without the shape check
    /// `"network": [{"fixed": "5s"}]` would be taken as a network and run: it is refused.
    #[test]
    fn a_list_where_an_object_goes_is_refused_for_every_struct() {
        let list = "expected an object `{...}`, found a list `[...]`";
        assert_eq!(first(", \"network\": []"), format!("2:49: network: {list}"));
        assert_eq!(
            first(", \"network\": [{\"fixed\": \"5s\"}]"),
            format!("2:49: network: {list}")
        );
        assert!(first(", \"limits\": [5]").ends_with(&format!("limits: {list}")));
        assert!(first(", \"chart\": [\"1s\", \"2s\"]").ends_with(&format!("chart: {list}")));
        assert!(first(", \"check_params\": [\"1s\"]").ends_with(&format!("check_params: {list}")));
        assert!(first(", \"faults\": [[]]").ends_with(&format!("faults[0]: {list}")));
        assert!(
            first(", \"nemesis\": {\"mean_interval\": \"1s\", \"pause\": [\"1s\", \"2s\"]}")
                .ends_with(&format!("nemesis.pause: {list}"))
        );
        // Inside a node, whatever its role.
        let p = check(
            "{\"nodes\": {\"w\": {\"role\": \"worker\", \"clock\": [0]}, \"s\": {\"role\": \
             \"storage\", \"clock\": []}}}",
        )
        .unwrap();
        assert_eq!(
            (p.path.as_str(), p.message.as_str()),
            ("nodes.w.clock", list)
        );
        // A block is an object or a pair: the pair stays.
        assert!(check(&file(
            ", \"faults\": [{\"at\": \"1s\", \"block\": [\"s\", \"s\"]}]"
        ))
        .is_none());
        assert!(
            first(", \"faults\": [{\"at\": \"1s\", \"block\": [\"s\"]}]")
                .ends_with("faults[0].block: expected a list of exactly 2 entries, found 1")
        );
    }

    #[test]
    fn a_wrong_kind_where_names_go_is_said_with_the_names() {
        assert!(first(", \"expect\": {\"x\": 5}")
            .ends_with("expect.x: expected one of `holds`, `violated`, found a number"));
        assert!(first(", \"network\": {\"delay\": \"fixed\"}").contains(
            "network.delay: expected an object of one key `{\"KEY\": ...}`, KEY one of `fixed`, \
             `uniform`"
        ));
        assert!(first(", \"network\": {\"delay\": {}}").ends_with("found an empty object"));
        // Two keys are said as such, not as "expected value".
        assert!(first(
            ", \"network\": {\"delay\": {\"fixed\": \"1ms\", \"uniform\": [\"1ms\", \"2ms\"]}}"
        )
        .ends_with("found an object of 2 keys"));
        assert!(
            first(", \"network\": {\"delay\": {\"uniform\": [\"1ms\", \"2ms\", \"3ms\"]}}")
                .ends_with(
                    "network.delay.uniform[2]: expected a list of exactly 2 entries, found more"
                )
        );
    }

    /// Every list has a read limit, not only `faults` and `nodes`: a huge list anywhere is
    /// refused before it is held whole.
    #[test]
    fn every_list_has_a_limit_that_bites_at_its_first_entry_past_it() {
        use crate::limits::{MAX_NODES, MAX_RULES};
        let rules = vec!["{\"time\": \"1ms\"}"; MAX_RULES + 5].join(",\n");
        let p = check(&file(&format!(", \"processing\": [\n{rules}]"))).unwrap();
        assert_eq!(p.path, format!("processing[{MAX_RULES}]"));
        assert_eq!((p.line, p.column), (MAX_RULES + 3, 1));
        assert_eq!(
            p.message,
            format!("too many entries in `processing`: the limit is {MAX_RULES}")
        );
        let names = vec!["\"s\""; MAX_NODES + 1].join(",");
        let p = check(&file(&format!(
            ", \"nemesis\": {{\"mean_interval\": \"1s\", \"targets\": [{names}]}}"
        )))
        .unwrap();
        assert_eq!(p.path, format!("nemesis.targets[{MAX_NODES}]"));
        // An unknown field is the typed parse's to name, whatever its length.
        let long = vec!["1"; MAX_LIST + 1].join(",");
        assert!(check(&file(&format!(", \"extra\": [{long}]"))).is_none());
        // Every list of the format states its limit in the schema.
        let text = crate::json_schema();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut unbounded = Vec::new();
        fn walk(v: &serde_json::Value, at: &str, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    let is_array = match m.get("type") {
                        Some(serde_json::Value::String(t)) => t == "array",
                        Some(serde_json::Value::Array(ts)) => ts.iter().any(|t| t == "array"),
                        _ => false,
                    };
                    if is_array && !m.contains_key("maxItems") {
                        out.push(at.to_string());
                    }
                    for (k, x) in m {
                        walk(x, &format!("{at}/{k}"), out);
                    }
                }
                serde_json::Value::Array(xs) => {
                    for (i, x) in xs.iter().enumerate() {
                        walk(x, &format!("{at}/{i}"), out);
                    }
                }
                _ => {}
            }
        }
        walk(&v, "", &mut unbounded);
        assert!(
            unbounded.is_empty(),
            "lists without maxItems: {unbounded:?}"
        );
    }

    /// The paths of every optional field of the format (a property its object does not list
    /// in `required`), each with a document that leads to it and holds `null` there.
    fn optional_fields() -> Vec<(Vec<Seg>, serde_json::Value)> {
        use serde_json::{json, Value};
        let root = serde_json::to_value(scenario_schema()).unwrap();
        let defs = root["definitions"].clone();
        fn visit(defs: &Value, v: &Value, path: &[Seg], depth: usize, out: &mut Vec<Vec<Seg>>) {
            assert!(depth < 16, "the format nests no deeper: {path:?}");
            if let Some(r) = v["$ref"].as_str() {
                let name = r.rsplit('/').next().unwrap();
                return visit(defs, &defs[name], path, depth + 1, out);
            }
            for list in ["allOf", "anyOf", "oneOf"] {
                for x in v[list].as_array().into_iter().flatten() {
                    visit(defs, x, path, depth + 1, out);
                }
            }
            for (k, p) in v["properties"].as_object().into_iter().flatten() {
                let here = [path, &[Seg::Key(k.clone())]].concat();
                let required = v["required"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|x| x == k));
                if !required && !out.contains(&here) {
                    out.push(here.clone());
                }
                visit(defs, p, &here, depth + 1, out);
            }
            if v["additionalProperties"].is_object() {
                let here = [path, &[Seg::Key("x".into())]].concat();
                visit(defs, &v["additionalProperties"], &here, depth + 1, out);
            }
            match &v["items"] {
                Value::Object(_) => {
                    let here = [path, &[Seg::Index(0)]].concat();
                    visit(defs, &v["items"], &here, depth + 1, out);
                }
                Value::Array(xs) => {
                    for (i, x) in xs.iter().enumerate() {
                        let here = [path, &[Seg::Index(i)]].concat();
                        visit(defs, x, &here, depth + 1, out);
                    }
                }
                _ => {}
            }
        }
        let mut paths = Vec::new();
        visit(&defs, &root, &[], 0, &mut paths);
        paths
            .into_iter()
            .map(|path| {
                let mut doc = Value::Null;
                for seg in path.iter().rev() {
                    doc = match seg {
                        Seg::Key(k) => json!({ k.clone(): doc }),
                        Seg::Index(i) => {
                            let mut list = vec![json!("x"); *i];
                            list.push(doc);
                            Value::Array(list)
                        }
                    };
                }
                (path, doc)
            })
            .collect()
    }

    /// The tool refuses null everywhere, so no schema of the formats names the type null:
    /// schemars would admit it in 135 places (`limits.max_events` as `["integer", "null"]`,
    /// `nemesis`, `chart`, `wall_clock_start` as an `anyOf` with null).
    #[test]
    fn no_schema_admits_null() {
        fn nulls(v: &serde_json::Value, at: &str, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    let t = &m.get("type");
                    let named = match t {
                        Some(serde_json::Value::String(s)) => s == "null",
                        Some(serde_json::Value::Array(ts)) => ts.iter().any(|x| x == "null"),
                        _ => false,
                    };
                    if named || m.get("nullable") == Some(&serde_json::Value::Bool(true)) {
                        out.push(at.to_string());
                    }
                    for (k, x) in m {
                        nulls(x, &format!("{at}/{k}"), out);
                    }
                }
                serde_json::Value::Array(xs) => {
                    for (i, x) in xs.iter().enumerate() {
                        nulls(x, &format!("{at}/{i}"), out);
                    }
                }
                _ => {}
            }
        }
        let published: serde_json::Value = serde_json::from_str(&crate::json_schema()).unwrap();
        for schema in [published, serde_json::to_value(scenario_schema()).unwrap()] {
            let mut out = Vec::new();
            nulls(&schema, "", &mut out);
            assert!(out.is_empty(), "null admitted at {out:?}");
        }
        let file = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../splitbrain.schema.json"),
        )
        .unwrap();
        assert_eq!(
            file.trim_end(),
            crate::json_schema().trim_end(),
            "regenerate it"
        );
    }

    /// serde reads null as absent for every optional field (135 places of the format: a
    /// node's durations, counts and names, `nemesis`, `chart`, a fault's `at` and action,
    /// `network.delay`, ...), so `"count": null` in a node group would read as no count (one
    /// node named `n`, then "unknown node n5"). Every one refuses null, saying what goes
    /// there, as a field that is not optional does.
    #[test]
    fn null_is_refused_at_every_optional_field() {
        let places = optional_fields();
        assert!(places.len() > 100, "{}", places.len());
        for (path, doc) in places {
            let src = serde_json::to_string_pretty(&doc).unwrap();
            let p = check(&src).unwrap_or_else(|| panic!("null accepted at {path:?}:\n{src}"));
            assert_eq!(p.path, render(&path), "{src}");
            assert!(
                p.message.starts_with("expected ") && p.message.ends_with(", found null"),
                "{}: {}",
                p.path,
                p.message
            );
            assert!(!p.message.contains("expected , found"), "{}", p.message);
        }
        let count = check(
            "{\"splitbrain\": 1, \"name\": \"x\", \"duration\": \"10s\",\n\"nodes\": {\"n\": \
             {\"role\": \"bully\", \"count\": null}}}",
        );
        assert_eq!(
            count.map(|p| (p.path, p.message)),
            Some((
                "nodes.n.count".to_string(),
                "expected an integer in 1..=10000, found null".to_string()
            ))
        );
    }
}
