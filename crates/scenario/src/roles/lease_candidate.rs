//! The `lease_candidate` role: a client-go-style leader-election candidate over a
//! `lease_record` (file spec, validation, actor). Defaults as client-go's usual values:
//! `lease_duration` 15 s, `renew_deadline` 10 s, `retry_period` 2 s, `request_timeout` 1 s,
//! `judge_by` "record", `step_down_after` "retry_period_and_renew_deadline" (format 1:
//! "renew_deadline"), `step_down_check` "timer".

use crate::checker::NodeCheck;
use crate::duration::{or, Dur};
use crate::role::clock_and_count;
use crate::role::{ClockSpec, Role};
use crate::roster::Roster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use splitbrain_protocols::lease_record::{
    CandidateConfig, JudgeBy, LeaseCandidate, StepDownAfter, StepDownCheck,
};
use splitbrain_protocols::Node;

/// Which lease duration a candidate judges a held record's expiry with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JudgeBySpec {
    /// The `lease_duration` the holder stored in the record (current client-go; default).
    Record,
    /// The candidate's own `lease_duration` (older client-go: wrong when configurations
    /// differ).
    Own,
}

/// Lease candidate parameters (client-go's `LeaderElectionConfig`). Every duration is
/// measured by the candidate's own monotonic clock.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeaseCandidateSpec {
    /// Expand into `count` nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = "crate::limits::MAX_NODES"))]
    pub count: Option<u32>,
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// The `lease_record` node.
    pub record: String,
    /// How long a non-leader waits after it last saw the record change before taking it, and
    /// what it stores as holder (default 15 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_duration: Option<Dur>,
    /// How long the leader keeps failing to renew before it steps down (default 10 s; below
    /// `lease_duration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_deadline: Option<Dur>,
    /// Wait between attempts (default 2 s; non-leaders add client-go's jitter, up to 1.2x
    /// more; `renew_deadline` must exceed 1.2 x `retry_period`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_period: Option<Dur>,
    /// Wait for the record's reply before counting an attempt failed (default 1 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout: Option<Dur>,
    /// Which lease duration judges a held record's expiry (default "record").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_by: Option<JudgeBySpec>,
    /// When a leader that cannot renew steps down: `retry_period_and_renew_deadline` (the
    /// default: client-go's renew loop waits `retry_period` after a success, then tries for
    /// `renew_deadline`: 12 s after the last success with the defaults) or `renew_deadline`
    /// (`renew_deadline` after the last success, as client-go v7.0.0; the default in format 1
    /// files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_down_after: Option<StepDownAfterSpec>,
    /// How the leader judges that deadline: `timer` (the default, client-go since kubernetes
    /// PR #65094: at the deadline, dropping the request in flight) or `between_attempts`
    /// (before it: only when no attempt is running, else when the running one fails; with a
    /// `request_timeout` longer than the run, a hung renew that never steps down).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_down_check: Option<StepDownCheckSpec>,
}

/// When a leader that cannot renew steps down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepDownAfterSpec {
    /// `retry_period + renew_deadline` after the last success (client-go; the default).
    RetryPeriodAndRenewDeadline,
    /// `renew_deadline` after the last success (format 1's default).
    RenewDeadline,
}

/// How a leader judges its renewal deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepDownCheckSpec {
    /// When the deadline passes (the default).
    Timer,
    /// Only between attempts (client-go before kubernetes PR #65094).
    BetweenAttempts,
}

impl LeaseCandidateSpec {
    fn config(
        &self,
        record: splitbrain_engine::NodeId,
        defaults: crate::format::Defaults,
    ) -> CandidateConfig {
        let mut c = CandidateConfig::new(record);
        c.lease_duration = or(self.lease_duration, c.lease_duration);
        c.renew_deadline = or(self.renew_deadline, c.renew_deadline);
        c.retry_period = or(self.retry_period, c.retry_period);
        c.request_timeout = or(self.request_timeout, c.request_timeout);
        c.judge_by = match self.judge_by {
            Some(JudgeBySpec::Own) => JudgeBy::Own,
            Some(JudgeBySpec::Record) | None => JudgeBy::Record,
        };
        c.step_down_after = match self.step_down_after {
            Some(StepDownAfterSpec::RetryPeriodAndRenewDeadline) => {
                StepDownAfter::RetryPeriodAndRenewDeadline
            }
            Some(StepDownAfterSpec::RenewDeadline) => StepDownAfter::RenewDeadline,
            None if defaults.candidate_step_down_after_retry => {
                StepDownAfter::RetryPeriodAndRenewDeadline
            }
            None => StepDownAfter::RenewDeadline,
        };
        c.step_down_check = match self.step_down_check {
            Some(StepDownCheckSpec::BetweenAttempts) => StepDownCheck::BetweenAttempts,
            Some(StepDownCheckSpec::Timer) | None => StepDownCheck::Timer,
        };
        c
    }
}

impl Role for LeaseCandidateSpec {
    fn checked_as(&self) -> splitbrain_check::Role {
        splitbrain_check::Role::LeaseLeader
    }

    clock_and_count!();

    /// client-go's `NewLeaderElector` checks: `lease_duration > renew_deadline >
    /// 1.2 x retry_period`, all positive.
    fn validate(&self, v: &mut NodeCheck<'_, '_>) {
        v.node_ref("record", &self.record, &["lease_record"]);
        for (f, d) in [
            ("lease_duration", self.lease_duration),
            ("renew_deadline", self.renew_deadline),
            ("retry_period", self.retry_period),
            ("request_timeout", self.request_timeout),
        ] {
            v.positive(f, d);
        }
        let c = self.config(
            splitbrain_engine::NodeId(0),
            crate::format::defaults(crate::format::CURRENT),
        );
        if c.lease_duration <= c.renew_deadline {
            v.err(
                "renew_deadline",
                "renew_deadline must be shorter than lease_duration (as client-go requires)",
            );
        }
        if c.renew_deadline.as_nanos() * 5 <= c.retry_period.as_nanos() * 6 {
            v.err(
                "retry_period",
                "renew_deadline must exceed 1.2 x retry_period (as client-go requires)",
            );
        }
    }

    fn observations(&self) -> &'static [&'static str] {
        crate::role::LEADER_OBSERVATIONS
    }

    fn node(&self, roster: &Roster) -> Node {
        Node::LeaseCandidate(LeaseCandidate::new(
            self.config(roster.id(&self.record), roster.defaults()),
        ))
    }
}
