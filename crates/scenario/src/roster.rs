//! The nodes of a scenario after group expansion, by name: each one's id and role. Validation
//! builds it (and checks references against it); roles read it to resolve names to ids.

use splitbrain_engine::NodeId;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// Every node by name, with its id (file order after expansion) and its role's name.
#[derive(Clone, Debug, Default)]
pub struct Roster {
    nodes: BTreeMap<String, (NodeId, &'static str)>,
    /// [`Roster::shared_ids_of`]'s lists, built on first use (after the roster is complete).
    by_role: OnceLock<BTreeMap<&'static str, Arc<[NodeId]>>>,
    /// The file's format version (`"splitbrain": N`): what its left-out fields mean
    /// ([`crate::format::defaults`]).
    format: u32,
}

impl Roster {
    /// An empty roster for a file of format version `format`.
    pub(crate) fn new(format: u32) -> Self {
        Roster {
            format,
            ..Roster::default()
        }
    }

    /// What the file's left-out fields whose default changed between format versions mean
    /// (its version's row of [`crate::format::VERSIONS`]).
    pub fn defaults(&self) -> crate::format::Defaults {
        crate::format::defaults(self.format)
    }

    /// Adds node `name` with the next id; returns that id.
    pub(crate) fn add(&mut self, name: String, role: &'static str) -> NodeId {
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.insert(name, (id, role));
        self.by_role = OnceLock::new();
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

    /// The ids of the nodes of role `role`, in id order, as one list shared by every caller:
    /// a role whose every node lists its peers (bully) costs one list per run, not one per
    /// node (10,000 bully nodes would otherwise hold 10^8 ids).
    pub fn shared_ids_of(&self, role: &str) -> Arc<[NodeId]> {
        let by_role = self.by_role.get_or_init(|| {
            let mut lists: BTreeMap<&'static str, Vec<NodeId>> = BTreeMap::new();
            for &(id, r) in self.nodes.values() {
                lists.entry(r).or_default().push(id);
            }
            lists
                .into_iter()
                .map(|(r, mut ids)| {
                    ids.sort();
                    (r, ids.into())
                })
                .collect()
        });
        by_role.get(role).cloned().unwrap_or_else(|| Arc::from([]))
    }
}
