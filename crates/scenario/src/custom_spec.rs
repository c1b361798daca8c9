//! A node of a role that is not built in ([`CustomSpec`]): its role's name and fields as
//! written, and its spec once a registry (`registry.rs`, above this module) has read them as
//! the registered role's; and [`RoleSpec`], a role's spec as a registry holds it.

use crate::role::{ClockSpec, Role};
use crate::roster::Roster;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::fmt;

/// A role's spec as a registry holds it: a [`Role`] that can be copied and shared between the
/// threads of a sweep.
pub trait RoleSpec: Role + fmt::Debug + Send + Sync {
    /// A copy of the spec.
    fn clone_box(&self) -> Box<dyn RoleSpec>;
}

impl<T: Role + Clone + fmt::Debug + Send + Sync + 'static> RoleSpec for T {
    fn clone_box(&self) -> Box<dyn RoleSpec> {
        Box::new(self.clone())
    }
}

/// The fields of a node object other than `role`, in file order (a repeated key kept, for its
/// spec's parse to refuse).
pub type Fields = Vec<(String, Value)>;

/// What a JSON value is, in an error's words ("a number").
pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list `[...]`",
        Value::Object(_) => "an object `{...}`",
    }
}

/// A node of a role that is not built in: its role's name and fields as written, and, once a
/// registry (`registry.rs`) has resolved it, its registered spec.
pub struct CustomSpec {
    pub(crate) role: String,
    pub(crate) fields: Fields,
    /// The registered name and spec (`None`: not resolved yet, [`Unresolved`] stands in).
    resolved: Option<&'static str>,
    spec: Box<dyn RoleSpec>,
}

impl CustomSpec {
    /// A node of role `role` with these fields, not resolved yet.
    pub(crate) fn written(role: String, fields: Fields) -> Self {
        CustomSpec {
            role,
            fields,
            resolved: None,
            spec: Box::new(Unresolved::default()),
        }
    }

    /// A node of registered role `name` whose spec is `spec`.
    pub(crate) fn resolved(name: &'static str, spec: Box<dyn RoleSpec>) -> Self {
        CustomSpec {
            role: name.to_string(),
            fields: Vec::new(),
            resolved: Some(name),
            spec,
        }
    }

    /// The role's registered name (`"unresolved"` before a registry resolved it).
    pub fn role_name(&self) -> &'static str {
        self.resolved.unwrap_or("unresolved")
    }

    /// The role's name as the file writes it.
    pub fn written_role(&self) -> &str {
        &self.role
    }

    /// The spec as its role.
    pub fn role(&self) -> &dyn Role {
        &*self.spec
    }

    /// The spec as its role, to change it; see [`CustomSpec::set_count`].
    pub fn role_mut(&mut self) -> &mut dyn Role {
        self
    }
}

impl Role for CustomSpec {
    fn clock(&self) -> &ClockSpec {
        self.spec.clock()
    }
    fn count(&self) -> Option<u32> {
        self.spec.count()
    }
    /// Changes the spec's `count` and the field as written (what the node serialises as).
    fn set_count(&mut self, count: u32) {
        self.spec.set_count(count);
        match self.fields.iter_mut().find(|(k, _)| k == "count") {
            Some((_, v)) => *v = Value::from(count),
            None => self.fields.push(("count".to_string(), Value::from(count))),
        }
    }
    fn validate(&self, v: &mut crate::checker::NodeCheck<'_, '_>) {
        self.spec.validate(v);
    }
    fn observations(&self) -> &'static [&'static str] {
        self.spec.observations()
    }
    fn node(&self, roster: &Roster) -> splitbrain_protocols::Node {
        self.spec.node(roster)
    }
    fn claims(&self) -> crate::role::Claims {
        self.spec.claims()
    }
    fn checked_as(&self) -> splitbrain_check::Role {
        self.spec.checked_as()
    }
}

impl Clone for CustomSpec {
    fn clone(&self) -> Self {
        CustomSpec {
            role: self.role.clone(),
            fields: self.fields.clone(),
            resolved: self.resolved,
            spec: self.spec.clone_box(),
        }
    }
}

impl fmt::Debug for CustomSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CustomSpec")
            .field("role", &self.role)
            .field("spec", &self.spec)
            .finish()
    }
}

impl Serialize for CustomSpec {
    /// As written: `role` first, then the fields in file order.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.fields.len() + 1))?;
        map.serialize_entry("role", &self.role)?;
        for (k, v) in &self.fields {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Stands in for the spec of a node whose role no registry has resolved yet: perfect clocks,
/// no observations. Loading resolves every node before anything reads its spec.
#[derive(Clone, Debug, Default)]
struct Unresolved {
    clock: ClockSpec,
}

impl Role for Unresolved {
    fn clock(&self) -> &ClockSpec {
        &self.clock
    }
    fn validate(&self, _v: &mut crate::checker::NodeCheck<'_, '_>) {}
    fn observations(&self) -> &'static [&'static str] {
        &[]
    }
    fn node(&self, _roster: &Roster) -> splitbrain_protocols::Node {
        unreachable!("loading resolves every node's role before a run builds it")
    }
    fn checked_as(&self) -> splitbrain_check::Role {
        unreachable!("loading resolves every node's role before a run judges it")
    }
}
