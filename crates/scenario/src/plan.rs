//! A validated scenario: nodes expanded (groups with `count`), names resolved to ids.

use crate::schema::{NodeSpec, Scenario};
use splitbrain_engine::NodeId;
use std::collections::BTreeMap;

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
    /// Name -> id.
    pub ids: BTreeMap<String, NodeId>,
}

impl Plan {
    /// The id of node `name` (validated to exist).
    pub fn id(&self, name: &str) -> NodeId {
        self.ids[name]
    }
}

/// The role name of a node spec, as written in files.
pub fn role_name(spec: &NodeSpec) -> &'static str {
    match spec {
        NodeSpec::Bully(_) => "bully",
        NodeSpec::LeaseService(_) => "lease_service",
        NodeSpec::LeaseLeader(_) => "lease_leader",
        NodeSpec::Redis(_) => "redis",
        NodeSpec::Storage(_) => "storage",
        NodeSpec::Worker(_) => "worker",
    }
}

/// The `count` of a node spec (1 if absent).
pub fn count_of(spec: &NodeSpec) -> Option<u32> {
    match spec {
        NodeSpec::Bully(s) => s.count,
        NodeSpec::LeaseLeader(s) => s.count,
        NodeSpec::Redis(s) => s.count,
        NodeSpec::Worker(s) => s.count,
        NodeSpec::LeaseService(_) | NodeSpec::Storage(_) => None,
    }
}
