//! The nodes of a scenario after group expansion, by name: each one's id and role. Validation
//! builds it (and checks references against it); roles read it to resolve names to ids.

use splitbrain_engine::NodeId;
use std::collections::BTreeMap;

/// Every node by name, with its id (file order after expansion) and its role's name.
#[derive(Clone, Debug, Default)]
pub struct Roster {
    nodes: BTreeMap<String, (NodeId, &'static str)>,
}

impl Roster {
    /// Adds node `name` with the next id; returns that id.
    pub(crate) fn add(&mut self, name: String, role: &'static str) -> NodeId {
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.insert(name, (id, role));
        id
    }

    /// Whether a node is called `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.nodes.contains_key(name)
    }

    /// The id and role name of node `name`, if there is one.
    pub fn get(&self, name: &str) -> Option<(NodeId, &'static str)> {
        self.nodes.get(name).copied()
    }

    /// The id of node `name` (validated to exist).
    pub fn id(&self, name: &str) -> NodeId {
        self.nodes[name].0
    }

    /// Every node name, in name order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.nodes.keys().map(String::as_str)
    }

    /// The ids of the nodes of role `role`, in id order.
    pub fn ids_of(&self, role: &str) -> Vec<NodeId> {
        let mut ids: Vec<NodeId> = self
            .nodes
            .values()
            .filter(|(_, r)| *r == role)
            .map(|(id, _)| *id)
            .collect();
        ids.sort();
        ids
    }
}
