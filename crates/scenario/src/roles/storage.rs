//! The `storage` role: storage that (by default) fences writes by token (file spec,
//! validation, actor).

use crate::checker::NodeCheck;
use crate::role::{ClockSpec, Role};
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use splitbrain_protocols::storage::{FencedStorage, StorageConfig};
use splitbrain_protocols::Node;

/// Storage parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StorageSpec {
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// Reject writes whose token is below the highest accepted (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fencing: Option<bool>,
}

impl Role for StorageSpec {
    fn checked_as(&self) -> splitbrain_check::Role {
        splitbrain_check::Role::Storage
    }

    fn clock(&self) -> &ClockSpec {
        &self.clock
    }

    fn validate(&self, _v: &mut NodeCheck<'_, '_>) {}

    fn observations(&self) -> &'static [&'static str] {
        &["write_accepted", "write_rejected"]
    }

    fn node(&self, _roster: &Roster) -> Node {
        Node::Storage(FencedStorage::new(StorageConfig {
            fencing: self.fencing.unwrap_or(true),
        }))
    }
}
