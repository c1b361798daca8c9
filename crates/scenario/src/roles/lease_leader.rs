//! The `lease_leader` role: a leader that holds its leadership as a lease from the lease
//! service, and may write to storage while it believes it leads (file spec, validation,
//! actor).

use crate::checker::NodeCheck;
use crate::duration::{or, Dur};
use crate::role::{BeliefFields, ClockSpec, RenewFailureSpec, Role};
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use splitbrain_protocols::lease::{LeaseLeader, LeaseLeaderConfig};
use splitbrain_protocols::Node;

/// Lease-based leader parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeaseLeaderSpec {
    /// Expand into `count` nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// The lease service node.
    pub service: String,
    /// Lease name (default "leader").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<String>,
    /// Lease TTL (default 10 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<Dur>,
    /// Renewal period (default 3 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_every: Option<Dur>,
    /// Stop believing this long before the local deadline (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_margin: Option<Dur>,
    /// Retry period while not leader (default 1 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_every: Option<Dur>,
    /// Older alias of `on_renew_failure`: true is "stop_at_deadline", false is
    /// "keep_believing", the classic bug (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_on_renew_failure: Option<bool>,
    /// What the leader believes while renewals fail (default "stop_at_deadline").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_renew_failure: Option<RenewFailureSpec>,
    /// With `on_renew_failure: "grace"`, how long to believe after the local deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace: Option<Dur>,
    /// Stop renewing after this many consecutive failed renewals, yet keep believing with no
    /// deadline (a watchdog that dies quietly; default: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_attempts: Option<u32>,
    /// Wait this long before the first acquisition (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_after: Option<Dur>,
    /// How long to wait for the lease service's reply to a request (default 500 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout: Option<Dur>,
    /// Storage node the leader writes to while it believes it leads (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_to: Option<String>,
    /// Period of those writes (default 1 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_every: Option<Dur>,
}

impl Role for LeaseLeaderSpec {
    fn clock(&self) -> &ClockSpec {
        &self.clock
    }

    fn count(&self) -> Option<u32> {
        self.count
    }

    fn set_count(&mut self, count: u32) {
        self.count = Some(count);
    }

    fn validate(&self, v: &mut NodeCheck<'_, '_>) {
        v.node_ref("service", &self.service, &["lease_service"]);
        if let Some(w) = &self.write_to {
            v.node_ref("write_to", w, &["storage"]);
        }
        for (f, d) in [
            ("ttl", self.ttl),
            ("renew_every", self.renew_every),
            ("retry_every", self.retry_every),
            ("write_every", self.write_every),
            ("request_timeout", self.request_timeout),
        ] {
            v.positive(f, d);
        }
        self.belief().validate(v);
    }

    fn node(&self, roster: &Roster) -> Node {
        let mut cfg = LeaseLeaderConfig::new(roster.id(&self.service));
        if let Some(l) = &self.lease {
            cfg.client.lease = l.clone();
        }
        cfg.client.ttl = or(self.ttl, cfg.client.ttl);
        if let Some(r) = self.renew_every {
            cfg.client.renew_every = Some(r.0);
        }
        cfg.client.safety_margin = or(self.safety_margin, cfg.client.safety_margin);
        cfg.client.on_renew_failure = self.belief().policy();
        cfg.client.renew_attempts = self.renew_attempts;
        cfg.client.request_timeout = or(self.request_timeout, cfg.client.request_timeout);
        cfg.start_after = or(self.start_after, cfg.start_after);
        cfg.retry_every = or(self.retry_every, cfg.retry_every);
        cfg.write_to = self.write_to.as_ref().map(|w| roster.id(w));
        cfg.write_every = or(self.write_every, cfg.write_every);
        Node::LeaseLeader(LeaseLeader::new(cfg))
    }
}

impl LeaseLeaderSpec {
    /// The lease client's belief policy fields.
    fn belief(&self) -> BeliefFields {
        BeliefFields {
            on_renew_failure: self.on_renew_failure,
            grace: self.grace,
            renew_attempts: self.renew_attempts,
            stop_on_renew_failure: self.stop_on_renew_failure,
        }
    }
}
