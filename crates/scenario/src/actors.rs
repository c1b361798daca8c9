//! Maps each node spec onto its protocol actor, applying the documented defaults.

use crate::plan::{Plan, PlannedNode};
use crate::schema::{LockKind, NodeSpec, WorkerSpec};
use splitbrain_engine::{NodeId, SimDuration};
use splitbrain_protocols::bully::{BullyConfig, BullyNode};
use splitbrain_protocols::lease::{
    LeaseClientConfig, LeaseLeader, LeaseLeaderConfig, LeaseService, ServiceConfig,
};
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::storage::{FencedStorage, StorageConfig};
use splitbrain_protocols::worker::{Worker, WorkerConfig};
use splitbrain_protocols::Node;

fn or(d: Option<crate::duration::Dur>, default: SimDuration) -> SimDuration {
    d.map_or(default, |d| d.0)
}

/// The ids of the bully nodes of the plan, in id order (the bully's peers).
pub fn bully_peers(plan: &Plan) -> Vec<NodeId> {
    plan.nodes
        .iter()
        .filter(|n| matches!(n.spec, NodeSpec::Bully(_)))
        .map(|n| plan.id(&n.name))
        .collect()
}

/// Builds the actor of one planned node.
pub fn make_node(plan: &Plan, node: &PlannedNode) -> Node {
    match &node.spec {
        NodeSpec::Bully(s) => {
            let d = BullyConfig::default();
            let peers = bully_peers(plan);
            let start_election = s.start_election.unwrap_or(true);
            Node::Bully(BullyNode::new(BullyConfig {
                initial_leader: if start_election {
                    None
                } else {
                    peers.iter().max().copied()
                },
                peers,
                answer_timeout: or(s.answer_timeout, d.answer_timeout),
                coordinator_timeout: or(s.coordinator_timeout, d.coordinator_timeout),
                heartbeat_every: or(s.heartbeat_every, d.heartbeat_every),
                failure_timeout: or(s.failure_timeout, d.failure_timeout),
                start_election_on_start: start_election,
            }))
        }
        NodeSpec::LeaseService(s) => Node::LeaseService(LeaseService::new(ServiceConfig {
            first_token: s.first_token.unwrap_or(1),
        })),
        NodeSpec::LeaseLeader(s) => {
            let mut cfg = LeaseLeaderConfig::new(plan.id(&s.service));
            if let Some(l) = &s.lease {
                cfg.client.lease = l.clone();
            }
            cfg.client.ttl = or(s.ttl, cfg.client.ttl);
            if let Some(r) = s.renew_every {
                cfg.client.renew_every = Some(r.0);
            }
            cfg.client.safety_margin = or(s.safety_margin, cfg.client.safety_margin);
            cfg.client.stop_on_renew_failure = s.stop_on_renew_failure.unwrap_or(true);
            cfg.retry_every = or(s.retry_every, cfg.retry_every);
            cfg.write_to = s.write_to.as_ref().map(|w| plan.id(w));
            cfg.write_every = or(s.write_every, cfg.write_every);
            Node::LeaseLeader(LeaseLeader::new(cfg))
        }
        NodeSpec::Redis(s) => crate::redis_actors::redis_instance(s),
        NodeSpec::Storage(s) => Node::Storage(FencedStorage::new(StorageConfig {
            fencing: s.fencing.unwrap_or(true),
        })),
        NodeSpec::Worker(w) => Node::Worker(Worker::new(worker_config(plan, w))),
    }
}

fn worker_config(plan: &Plan, w: &WorkerSpec) -> WorkerConfig {
    let name = w.name.clone().unwrap_or_else(|| "lock".to_string());
    let lock = match w.lock {
        LockKind::Lease => {
            let service = plan.id(w
                .service
                .as_deref()
                .expect("validated: lease workers name a service"));
            let mut c = LeaseClientConfig::new(service, name);
            c.ttl = or(w.ttl, c.ttl);
            c.renew_every = w.renew_every.map(|r| r.0);
            c.safety_margin = or(w.safety_margin, c.safety_margin);
            c.stop_on_renew_failure = w.stop_on_renew_failure.unwrap_or(true);
            LockConfig::Lease(c)
        }
        LockKind::Redis => LockConfig::Redis(crate::redis_actors::redis_lock_config(plan, w, name)),
        LockKind::Redlock => {
            LockConfig::Redlock(crate::redis_actors::redlock_config(plan, w, name))
        }
    };
    let mut c = WorkerConfig::new(lock, plan.id(&w.storage));
    c.work_time = or(w.work_time, c.work_time);
    c.think_time = or(w.think_time, c.think_time);
    c.write_delay = or(w.write_delay, c.write_delay);
    c.start_after = or(w.start_after, c.start_after);
    c.rounds = w.rounds;
    c.idempotent = w.idempotent.unwrap_or(false);
    c.extend_every = w.extend_every.map(|d| d.0);
    c
}
