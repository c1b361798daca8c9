//! The `redis` role: one Redis instance (file spec, validation, actor). Defaults:
//! `persistence` none, `restart_delay` 0 (the protocol's `RedisInstanceConfig::default`).

use crate::checker::NodeCheck;
use crate::duration::{or, Dur};
use crate::role::{ClockSpec, Role};
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use splitbrain_protocols::redis::Persistence;
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

/// Redis instance parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedisSpec {
    /// Expand into `count` nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
}

impl Role for RedisSpec {
    fn clock(&self) -> &ClockSpec {
        &self.clock
    }

    fn count(&self) -> Option<u32> {
        self.count
    }

    fn set_count(&mut self, count: u32) {
        self.count = Some(count);
    }

    fn validate(&self, _v: &mut NodeCheck<'_, '_>) {}

    fn node(&self, _roster: &Roster) -> Node {
        let d = RedisInstanceConfig::default();
        Node::RedisInstance(RedisInstance::new(RedisInstanceConfig {
            persistence: match self.persistence {
                PersistenceSpec::None => Persistence::None,
                PersistenceSpec::AofEverysec => Persistence::AofEverysec,
                PersistenceSpec::AofAlways => Persistence::AofAlways,
            },
            restart_delay: or(self.restart_delay, d.restart_delay),
        }))
    }
}
