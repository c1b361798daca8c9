//! The `lease_record` role: a Kubernetes-style `Lease` object that offers only read and
//! compare-and-swap on its version (file spec, validation, actor).

use crate::checker::NodeCheck;
use crate::role::{ClockSpec, Role};
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use splitbrain_protocols::lease_record::LeaseRecordStore;
use splitbrain_protocols::Node;

/// Lease record parameters (none but its clocks: the record judges nothing).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeaseRecordSpec {
    /// Clocks (unused by the record itself).
    #[serde(default)]
    pub clock: ClockSpec,
}

impl Role for LeaseRecordSpec {
    fn checked_as(&self) -> splitbrain_check::Role {
        splitbrain_check::Role::Storage
    }

    fn clock(&self) -> &ClockSpec {
        &self.clock
    }

    fn validate(&self, _v: &mut NodeCheck<'_, '_>) {}

    /// The record is a store the candidates read and write: it observes nothing.
    fn observations(&self) -> &'static [&'static str] {
        &[]
    }

    fn node(&self, _roster: &Roster) -> Node {
        Node::LeaseRecord(LeaseRecordStore::new())
    }
}
