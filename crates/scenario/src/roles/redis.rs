//! The `redis` role: one Redis instance (file spec, validation, actor). Defaults:
//! `persistence` none, `restart_delay` 0, a primary with no failover (the protocol's
//! `RedisInstanceConfig::default`). `replica_of` makes it an asynchronous replica with a
//! replication delay and, with `down_after`, the Sentinel-style failover rule
//! (`splitbrain_protocols::redis::instance`, "Replication" and "Failover").

use crate::checker::NodeCheck;
use crate::duration::{or, Dur};
use crate::role::clock_and_count;
use crate::role::{ClockSpec, Role};
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use splitbrain_engine::SimDuration;
use splitbrain_protocols::redis::Persistence;
use splitbrain_protocols::redis::ReplicaConfig;
use splitbrain_protocols::redis_instance::{RedisInstance, RedisInstanceConfig};
use splitbrain_protocols::Node;

/// Redis persistence mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PersistenceSpec {
    /// Nothing survives a restart (default).
    #[default]
    None,
    /// AOF with fsync every second: a crash loses the last second of writes.
    AofEverysec,
    /// AOF with fsync on every write: a crash loses nothing.
    AofAlways,
}

/// A replica's replication delay: how long after the primary applies a write it ships it to
/// this replica (the primary's replication output lag; the network's delay comes on top).
/// Exactly one key: `{"fixed": "50ms"}` or `{"uniform": ["10ms", "200ms"]}` (drawn per write
/// from the primary's RNG stream; a write never overtakes an earlier one).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ReplicationDelaySpec {
    /// Always this delay.
    Fixed(Dur),
    /// Uniform between the two bounds, inclusive.
    Uniform([Dur; 2]),
}

impl ReplicationDelaySpec {
    fn bounds(&self) -> [SimDuration; 2] {
        match self {
            ReplicationDelaySpec::Fixed(d) => [d.0, d.0],
            ReplicationDelaySpec::Uniform([lo, hi]) => [lo.0, hi.0],
        }
    }
}

/// Redis instance parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedisSpec {
    /// Expand into `count` nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = "crate::limits::MAX_NODES"))]
    pub count: Option<u32>,
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// What survives a crash (default none).
    #[serde(default)]
    pub persistence: PersistenceSpec,
    /// After a restart, refuse service for this long (the distlock page's delayed restart;
    /// default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_delay: Option<Dur>,
    /// Make this instance an asynchronous replica of the named `redis` node (Redis
    /// `replicaof`; default: none, a primary). The primary ships every write it applies to
    /// the replica after `replication_delay`; a primary that crashes before shipping a write
    /// loses it. Workers keep naming the primary; they move to this replica when it is
    /// promoted. One level only (no replica of a replica).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_of: Option<String>,
    /// Replication delay of this replica (default `{"fixed": "0ms"}`: only the network's
    /// delay). Only with `replica_of`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication_delay: Option<ReplicationDelaySpec>,
    /// The failover rule (Redis Sentinel modelled as ONE rule evaluated by this replica, not
    /// as a quorum of sentinels): when the replica has heard nothing from its primary
    /// (stream or the 1 s replication ping) for this long on its monotonic clock, Sentinel's
    /// `down-after-milliseconds`, it promotes itself at once and every worker is told
    /// (`+switch-master`) to send to it from then on. Default: none (never promoted). Only
    /// with `replica_of`; give at most one replica of a primary a `down_after`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_after: Option<Dur>,
}

impl Role for RedisSpec {
    fn checked_as(&self) -> splitbrain_check::Role {
        splitbrain_check::Role::RedisInstance
    }

    clock_and_count!();

    fn validate(&self, v: &mut NodeCheck<'_, '_>) {
        match &self.replica_of {
            Some(p) => v.node_ref("replica_of", p, &["redis"]),
            None => {
                if self.replication_delay.is_some() {
                    v.err("replication_delay", "only a replica (`replica_of`) has one");
                }
                if self.down_after.is_some() {
                    v.err(
                        "down_after",
                        "only a replica (`replica_of`) can be promoted",
                    );
                }
            }
        }
        if let Some(ReplicationDelaySpec::Uniform([lo, hi])) = &self.replication_delay {
            if lo.0 > hi.0 {
                v.err("replication_delay", "uniform bounds must be [min, max]");
            }
        }
        v.positive("down_after", self.down_after);
    }

    fn observations(&self) -> &'static [&'static str] {
        &[
            "redis_key_set",
            "redis_key_expiry",
            "redis_key_deleted",
            "redis_restarted",
            "redis_replica_of",
            "redis_promoted",
        ]
    }

    fn node(&self, roster: &Roster) -> Node {
        let d = RedisInstanceConfig::default();
        let replica_of = self.replica_of.as_ref().map(|p| ReplicaConfig {
            primary: roster.id(p),
            delay: self
                .replication_delay
                .as_ref()
                .map_or([SimDuration::ZERO; 2], ReplicationDelaySpec::bounds),
            down_after: self.down_after.map(|d| d.0),
            notify: roster.ids_of("worker"),
        });
        Node::RedisInstance(RedisInstance::new(RedisInstanceConfig {
            persistence: match self.persistence {
                PersistenceSpec::None => Persistence::None,
                PersistenceSpec::AofEverysec => Persistence::AofEverysec,
                PersistenceSpec::AofAlways => Persistence::AofAlways,
            },
            restart_delay: or(self.restart_delay, d.restart_delay),
            replica_of,
        }))
    }
}
