//! What every role's spec provides ([`Role`]): its clocks, its group size, its validation and
//! its actor. Each role implements it in its own file under `roles/`; `roles/mod.rs` lists them.

use crate::checker::NodeCheck;
use crate::duration::{Dur, SignedDur};
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
/// The role the checkers judge a node as ([`Role::checked_as`]); a registered role gives it
/// from its [`splitbrain_protocols::custom::JudgedAs`] (`JudgedAs::LockClient.into()`).
pub use splitbrain_check::Role as CheckedRole;
use splitbrain_protocols::lease::RenewFailure;
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

/// What a lease client (a lease worker or a lease leader) believes while its renewals fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RenewFailureSpec {
    /// A denied renewal ends the belief at once; timed-out renewals end it at the local
    /// deadline (`send time + ttl - safety_margin`). The correct client; the default.
    StopAtDeadline,
    /// Believe until a renewal is denied, whatever the deadline (a client that trusts its
    /// session until the reconnected server says it expired).
    UntilDenied,
    /// Believe for `grace` more after the local deadline unless denied (ZooKeeper's
    /// SUSPENDED-then-LOST, Consul's sessions kept up to 2 x TTL).
    Grace,
    /// Carry on as if every failed renewal had succeeded: the classic bug (what
    /// `stop_on_renew_failure: false` means).
    KeepBelieving,
}

/// The fields of a lease client's belief policy, as a role's spec holds them.
pub struct BeliefFields {
    /// `on_renew_failure`.
    pub on_renew_failure: Option<RenewFailureSpec>,
    /// `grace`.
    pub grace: Option<Dur>,
    /// `renew_attempts`.
    pub renew_attempts: Option<u32>,
    /// `stop_on_renew_failure`, the older switch kept as an alias.
    pub stop_on_renew_failure: Option<bool>,
}

impl BeliefFields {
    /// Checks the policy: `grace` exactly with `"grace"`, at most one of `on_renew_failure`
    /// and its alias `stop_on_renew_failure`, `renew_attempts` at least 1.
    pub fn validate(&self, v: &mut NodeCheck<'_, '_>) {
        if self.on_renew_failure.is_some() && self.stop_on_renew_failure.is_some() {
            v.err(
                "stop_on_renew_failure",
                "give `on_renew_failure` or its older alias `stop_on_renew_failure`, not both",
            );
        }
        match (self.on_renew_failure, self.grace) {
            (Some(RenewFailureSpec::Grace), None) => v.err(
                "on_renew_failure",
                "`on_renew_failure: \"grace\"` needs `grace`, how long to believe after the deadline",
            ),
            (Some(RenewFailureSpec::Grace), Some(_)) => v.positive("grace", self.grace),
            (_, Some(_)) => v.err("grace", "`grace` goes with `on_renew_failure: \"grace\"`"),
            _ => {}
        }
        if self.renew_attempts == Some(0) {
            v.err(
                "renew_attempts",
                "renew_attempts must be at least 1 (leave it out for no limit)",
            );
        }
    }

    /// The protocol's policy (validated). `stop_on_renew_failure: true` is
    /// `"stop_at_deadline"`, `false` is `"keep_believing"`.
    pub fn policy(&self) -> RenewFailure {
        match (self.on_renew_failure, self.stop_on_renew_failure) {
            (Some(RenewFailureSpec::UntilDenied), _) => RenewFailure::UntilDenied,
            (Some(RenewFailureSpec::Grace), _) => RenewFailure::Grace(
                self.grace
                    .map_or(splitbrain_engine::SimDuration::ZERO, |g| g.0),
            ),
            (Some(RenewFailureSpec::KeepBelieving), _) | (None, Some(false)) => {
                RenewFailure::KeepBelieving
            }
            (Some(RenewFailureSpec::StopAtDeadline), _) | (None, Some(true) | None) => {
                RenewFailure::StopAtDeadline
            }
        }
    }
}

/// What every leader-election participant observes (bully and Raft replicas add their own).
pub const LEADER_OBSERVATIONS: &[&str] = &["leader_claim", "leader_step_down"];

/// Writes [`Role::clock`], [`Role::count`] and [`Role::set_count`] inside an `impl Role`
/// for a spec with the fields `clock: ClockSpec` and `count: Option<u32>` (every role that
/// can be declared as a group).
macro_rules! clock_and_count {
    () => {
        fn clock(&self) -> &ClockSpec {
            &self.clock
        }

        fn count(&self) -> Option<u32> {
            self.count
        }

        fn set_count(&mut self, count: u32) {
            self.count = Some(count);
        }
    };
}
pub(crate) use clock_and_count;

/// What a node of a role claims that the invariants judge: which invariants apply to a
/// scenario ([`crate::execute::applicable_invariants`]) follows from its nodes' claims.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Claims {
    /// It claims leadership (`leader_claim`): `single_leader`, `eventual_leader`,
    /// `single_leader_per_term` apply.
    pub leader: bool,
    /// It is a lock client (`lock_acquired` ...): `exclusive_holders`,
    /// `validity_within_truth`, `lock_progress` apply.
    pub lock_client: bool,
    /// It writes to storage (`write_sent`): `holder_writes_only`, `no_two_accepted_writers`
    /// apply.
    pub writer: bool,
    /// Its writes carry fencing tokens: `fencing_monotonic` applies.
    pub tokens: bool,
    /// Its writes carry job ids: `exactly_once_effects` applies.
    pub jobs: bool,
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

    /// The observation kinds a node of this spec can make (names of
    /// `splitbrain_protocols::OBSERVATION_KINDS`), in that list's order: a fault's `when` on
    /// the node can name only these. A kind its configuration may still never make in a
    /// given run (a Redis replica's `redis_promoted`) is listed; one its protocol never
    /// makes is not.
    fn observations(&self) -> &'static [&'static str];

    /// The role the checkers judge a node of this spec as (which invariants concern it).
    fn checked_as(&self) -> splitbrain_check::Role;

    /// The actor of one node of this spec, with the documented defaults applied (validated:
    /// every reference names a node of the right role).
    fn node(&self, roster: &Roster) -> Node;

    /// What a node of this spec claims that the invariants judge (default: nothing). The
    /// built-in roles' claims are read from their variants in
    /// [`crate::execute::applicable_invariants`]; a registered role says its own here.
    fn claims(&self) -> Claims {
        Claims::default()
    }
}
