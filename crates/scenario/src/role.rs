//! What every role's spec provides ([`Role`]): its clocks, its group size, its validation and
//! its actor. Each role implements it in its own file under `roles/`; `roles/mod.rs` lists them.

use crate::checker::NodeCheck;
use crate::duration::SignedDur;
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use splitbrain_protocols::Node;

/// A node's clocks.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockSpec {
    /// Monotonic clock rate error, ppm (default 0; within -900,000 ..= +2,000,000, a rate of
    /// 0.1x to 3x: +1,000,000 is a clock running at twice true speed).
    #[serde(default)]
    pub drift_ppm: i64,
    /// Wall clock reading at true time 0 (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<SignedDur>,
}

/// One role's node spec: the struct a node declaration of that role deserialises into.
pub trait Role {
    /// The node's clocks.
    fn clock(&self) -> &ClockSpec;

    /// The `count` of a group declaration (`None`: one node under the declared name). Roles
    /// without `count` keep the default.
    fn count(&self) -> Option<u32> {
        None
    }

    /// Sets `count` (the shrinker reduces groups); roles without `count` ignore it.
    fn set_count(&mut self, _count: u32) {}

    /// Checks the role's own fields and its references to other nodes, recording every
    /// problem located (the shared checks, such as clocks and names, are not its job).
    fn validate(&self, v: &mut NodeCheck<'_, '_>);

    /// The actor of one node of this spec, with the documented defaults applied (validated:
    /// every reference names a node of the right role).
    fn node(&self, roster: &Roster) -> Node;
}
