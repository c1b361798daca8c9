//! A validated scenario: nodes expanded (groups with `count`), names resolved to ids.

use crate::roster::Roster;
use crate::schema::{NodeSpec, Scenario};
use splitbrain_engine::NodeId;

/// One node after group expansion.
#[derive(Clone, Debug)]
pub struct PlannedNode {
    /// Its name (`n3` for the third of group `n`).
    pub name: String,
    /// The key it was declared under in `nodes`.
    pub declared_as: String,
    /// Its role and parameters.
    pub spec: NodeSpec,
}

/// A scenario that passed validation and is ready to build.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The file as parsed.
    pub scenario: Scenario,
    /// Nodes in id order.
    pub nodes: Vec<PlannedNode>,
    /// Name -> id and role.
    pub roster: Roster,
    /// The roles it was loaded with: what reloads a changed copy of it (a sweep's `--set`, a
    /// shrink's candidates).
    pub roles: crate::registry::RoleRegistry,
}

impl Plan {
    /// The id of node `name` (validated to exist).
    pub fn id(&self, name: &str) -> NodeId {
        self.roster.id(name)
    }
}
