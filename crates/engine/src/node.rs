//! Node identifiers.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A node's index in its simulation, assigned in the order nodes are added (0, 1, 2, ...).
/// Names live beside it in the simulation; ids keep the event loop cheap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The id as a vector index.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}
