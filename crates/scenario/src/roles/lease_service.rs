//! The `lease_service` role: the single authoritative lease service (file spec, validation,
//! actor).

use crate::checker::NodeCheck;
use crate::duration::Dur;
use crate::role::{ClockSpec, Role};
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use splitbrain_engine::SimDuration;
use splitbrain_protocols::lease::{Grants, LeaseService, ServiceConfig};
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
    /// What a restart does to grants (default `"forgetful"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grants: Option<GrantsSpec>,
    /// After a grant expires (its holder stopped renewing), nobody gets that lease for this
    /// long by the service's clock: Consul's session lock-delay (default 0: none). A release
    /// starts no delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_delay: Option<Dur>,
}

/// What a restart of the lease service does to its grants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GrantsSpec {
    /// Grants are volatile: a restarted service has forgotten them and may grant a lease an
    /// old holder still believes it holds (the default).
    Forgetful,
    /// Grants are durable, as ZooKeeper sessions and etcd leases: a restarted service keeps
    /// each grant (holder, token, TTL) and gives it a full TTL from the restart, as etcd's
    /// lessor does on leader promotion, so no grant ends earlier than before the outage.
    Durable,
}

impl Role for LeaseServiceSpec {
    fn checked_as(&self) -> splitbrain_check::Role {
        splitbrain_check::Role::LeaseService
    }

    fn clock(&self) -> &ClockSpec {
        &self.clock
    }

    fn validate(&self, v: &mut NodeCheck<'_, '_>) {
        v.positive("lock_delay", self.lock_delay);
        if self.first_token.is_some_and(|t| t > MAX_FIRST_TOKEN) {
            v.err(
                "first_token",
                format!("first_token must be at most {MAX_FIRST_TOKEN}, so tokens cannot overflow"),
            );
        }
    }

    fn observations(&self) -> &'static [&'static str] {
        &["lease_granted", "lease_renewed", "lease_freed"]
    }

    fn node(&self, _roster: &Roster) -> Node {
        Node::LeaseService(LeaseService::new(ServiceConfig {
            first_token: self.first_token.unwrap_or(1),
            grants: match self.grants {
                Some(GrantsSpec::Durable) => Grants::Durable,
                Some(GrantsSpec::Forgetful) | None => Grants::Forgetful,
            },
            lock_delay: self.lock_delay.map_or(SimDuration::ZERO, |d| d.0),
        }))
    }
}
