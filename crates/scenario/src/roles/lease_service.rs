//! The `lease_service` role: the single authoritative lease service (file spec, validation,
//! actor).

use crate::checker::NodeCheck;
use crate::role::{ClockSpec, Role};
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use splitbrain_protocols::lease::{LeaseService, ServiceConfig};
use splitbrain_protocols::Node;

/// Largest first fencing token: 2^53, far below overflow whatever a bounded run grants.
pub const MAX_FIRST_TOKEN: u64 = 1 << 53;

/// Lease service parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeaseServiceSpec {
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// First fencing token issued (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token: Option<u64>,
}

impl Role for LeaseServiceSpec {
    fn clock(&self) -> &ClockSpec {
        &self.clock
    }

    fn validate(&self, v: &mut NodeCheck<'_, '_>) {
        if self.first_token.is_some_and(|t| t > MAX_FIRST_TOKEN) {
            v.err(
                "first_token",
                format!("first_token must be at most {MAX_FIRST_TOKEN}, so tokens cannot overflow"),
            );
        }
    }

    fn node(&self, _roster: &Roster) -> Node {
        Node::LeaseService(LeaseService::new(ServiceConfig {
            first_token: self.first_token.unwrap_or(1),
        }))
    }
}
