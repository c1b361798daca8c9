//! The `lease_leader` role: a leader that holds its leadership as a lease from the lease
//! service (or, with `lock: "raft"`, as a key of the Raft lock service with its lease, etcd's
//! election recipe), and may write to storage while it believes it leads (file spec,
//! validation, actor).

use crate::checker::NodeCheck;
use crate::duration::{or, Dur};
use crate::role::clock_and_count;
use crate::role::{BeliefFields, ClockSpec, RenewFailureSpec, Role};
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use splitbrain_engine::SimDuration;
use splitbrain_protocols::lease::{LeaseLeader, LeaseLeaderConfig};
use splitbrain_protocols::raft::RaftClientConfig;
use splitbrain_protocols::Node;

/// Which lock a lease-based leader holds its leadership with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LeaderLockKind {
    /// A lease from the lease service (`service`; the default).
    #[default]
    Lease,
    /// A key of the Raft-replicated lock service (`replicas`), created with a lease the client
    /// keeps alive; the term is the key's create revision.
    Raft,
}

/// Lease-based leader parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeaseLeaderSpec {
    /// Expand into `count` nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = "crate::limits::MAX_NODES"))]
    pub count: Option<u32>,
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// The lock leadership is held with: `"lease"` (default) or `"raft"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<LeaderLockKind>,
    /// The lease service node (with `lock: "lease"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// The Raft lock service's replicas (with `lock: "raft"`), in the order the client tries
    /// them (at most 10,000, the node limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = "crate::limits::MAX_NODES"))]
    pub replicas: Option<Vec<String>>,
    /// Lease name, or the Raft lock key (default "leader").
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
    #[schemars(range(min = 1))]
    pub renew_attempts: Option<u32>,
    /// Wait this long before the first acquisition (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_after: Option<Dur>,
    /// How long to wait for the lock service's reply to a request (default 500 ms for the
    /// lease service, 200 ms before a Raft client tries the next replica).
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
    fn checked_as(&self) -> splitbrain_check::Role {
        splitbrain_check::Role::LeaseLeader
    }

    clock_and_count!();

    fn validate(&self, v: &mut NodeCheck<'_, '_>) {
        match self.lock.unwrap_or_default() {
            LeaderLockKind::Lease => {
                match &self.service {
                    Some(s) => v.node_ref("service", s, &["lease_service"]),
                    None => v.err_node("a lease_leader needs `service`, its lease_service node"),
                }
                if self.replicas.is_some() {
                    v.err("replicas", "`replicas` is for `lock: \"raft\"` leaders");
                }
            }
            LeaderLockKind::Raft => {
                match &self.replicas {
                    Some(list) if !list.is_empty() => {
                        for (j, r) in list.iter().enumerate() {
                            if list[..j].contains(r) {
                                v.err_item("replicas", j, format!("replica `{r}` is listed twice"));
                            }
                            v.node_ref_item("replicas", j, r, &["raft"]);
                        }
                    }
                    _ => v.err_node(
                        "a `lock: \"raft\"` lease_leader needs `replicas`, a non-empty list of raft nodes",
                    ),
                }
                // The lease client's own knobs: the Raft client keeps its lease alive itself
                // and stops believing at its local deadline minus `safety_margin`.
                for (f, set) in [
                    ("service", self.service.is_some()),
                    ("renew_every", self.renew_every.is_some()),
                    ("on_renew_failure", self.on_renew_failure.is_some()),
                    (
                        "stop_on_renew_failure",
                        self.stop_on_renew_failure.is_some(),
                    ),
                    ("grace", self.grace.is_some()),
                    ("renew_attempts", self.renew_attempts.is_some()),
                ] {
                    if set {
                        v.err(f, format!("`{f}` is for `lock: \"lease\"` leaders"));
                    }
                }
            }
        }
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
        if self.lock.unwrap_or_default() == LeaderLockKind::Lease {
            self.belief().validate(v);
        }
    }

    /// Its claims as a leader and as its lock's client; `write_sent` only with `write_to`.
    fn observations(&self) -> &'static [&'static str] {
        const LEADER: &[&str] = &[
            "leader_claim",
            "leader_step_down",
            "lock_requested",
            "lock_acquired",
            "lock_renewed",
            "lock_failed",
            "lock_released",
            "lock_lost",
            "lock_belief_past_deadline",
        ];
        const WRITING: &[&str] = &[
            "leader_claim",
            "leader_step_down",
            "lock_requested",
            "lock_acquired",
            "lock_renewed",
            "lock_failed",
            "lock_released",
            "lock_lost",
            "lock_belief_past_deadline",
            "write_sent",
        ];
        if self.write_to.is_some() {
            WRITING
        } else {
            LEADER
        }
    }

    fn node(&self, roster: &Roster) -> Node {
        let service = match (&self.service, &self.replicas) {
            (Some(s), _) => roster.id(s),
            // A Raft leader has no lease service; the unused lease config names a replica.
            (None, Some(r)) => roster.id(&r[0]),
            (None, None) => unreachable!("validated: a leader names its lock servers"),
        };
        let mut cfg = LeaseLeaderConfig::new(service);
        if self.lock == Some(LeaderLockKind::Raft) {
            let replicas = self.replicas.as_deref().unwrap_or_default();
            cfg.raft = Some(RaftClientConfig {
                replicas: replicas.iter().map(|n| roster.id(n)).collect(),
                lock: self.lease.clone().unwrap_or_else(|| "leader".to_string()),
                ttl: or(self.ttl, SimDuration::from_secs(10)),
                safety_margin: or(self.safety_margin, SimDuration::ZERO),
                request_timeout: or(self.request_timeout, SimDuration::from_millis(200)),
                first_req: 1,
            });
        }
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
