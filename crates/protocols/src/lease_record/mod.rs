//! Candidate-judged lease records, as Kubernetes `Lease` objects and client-go's
//! `leaderelection` package use them.
//!
//! The **record** ([`LeaseRecordStore`], role `lease_record`) is a plain object in a store (the
//! API server over etcd): it holds {holder, acquire_time, renew_time, lease_duration,
//! transitions} and a `version` (the `resourceVersion`), and offers only **read** (`Get`) and
//! **compare-and-swap on the version** (`Update`: applied iff `expected_version` is the current
//! version, which then increases by one). It never expires anything and judges nothing: it
//! has no clock in the protocol. The store is durable (etcd): a restart keeps the record.
//!
//! The **candidates** ([`LeaseCandidate`], role `lease_candidate`, in `candidate.rs`) judge
//! expiry themselves, by their own monotonic clock since they last saw the record change.

pub mod candidate;

pub use candidate::{
    CandidateConfig, CandidateCtx, CandidateTimer, JudgeBy, LeaseCandidate, StepDownAfter,
    StepDownCheck,
};

use crate::context::{Ctx, Role, Wraps};
use serde::{Deserialize, Serialize};
use splitbrain_engine::{NodeId, SimDuration, WallTime};

/// The contents of a `Lease` object (client-go's `LeaderElectionRecord`) with its version.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseRecord {
    /// Who holds it (`holderIdentity`), if anyone.
    pub holder: Option<NodeId>,
    /// When the holder acquired it, by the holder's wall clock (`acquireTime`).
    pub acquire_time: WallTime,
    /// When the holder last renewed it, by the holder's wall clock (`renewTime`).
    pub renew_time: WallTime,
    /// The holder's configured lease duration (`leaseDurationSeconds`), ns.
    pub lease_duration: SimDuration,
    /// How many times the holder changed (`leaderTransitions`).
    pub transitions: u64,
    /// The object's version (`resourceVersion`): increases by one with every update.
    pub version: u64,
}

/// Requests to the record and its replies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordMsg {
    /// Candidate -> record: read it.
    Get {
        /// Request id.
        req: u64,
    },
    /// Record -> candidate: the record now.
    Got {
        /// Request id of the `Get`.
        req: u64,
        /// The record.
        record: LeaseRecord,
    },
    /// Candidate -> record: replace the record if its version is still `expected_version`.
    Update {
        /// Request id.
        req: u64,
        /// The version the candidate read.
        expected_version: u64,
        /// The new contents (its `version` is ignored).
        record: LeaseRecord,
    },
    /// Record -> candidate: whether the update applied, and the record after it.
    Updated {
        /// Request id of the `Update`.
        req: u64,
        /// Applied (false: a version conflict).
        ok: bool,
        /// The record now.
        record: LeaseRecord,
    },
}

impl RecordMsg {
    /// The message kind for traces and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            RecordMsg::Get { .. } => "RECORD_GET",
            RecordMsg::Got { .. } => "RECORD",
            RecordMsg::Update { .. } => "RECORD_UPDATE",
            RecordMsg::Updated { .. } => "RECORD_UPDATED",
        }
    }
}

/// The context the record runs in: any composition whose messages wrap [`RecordMsg`].
pub trait RecordCtx: Ctx<Msg: Wraps<RecordMsg>> {}

impl<C: Ctx<Msg: Wraps<RecordMsg>>> RecordCtx for C {}

/// The store holding one `Lease` object.
#[derive(Clone, Debug, Default)]
pub struct LeaseRecordStore {
    record: LeaseRecord,
}

impl LeaseRecordStore {
    /// An empty record (no holder, version 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// The record now.
    pub fn record(&self) -> &LeaseRecord {
        &self.record
    }
}

impl<C: RecordCtx> Role<C> for LeaseRecordStore {
    fn on_start(&mut self, _ctx: &mut C) {}

    /// Answers a read, or applies a compare-and-swap on the version.
    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg) {
        let Some(msg) = msg.into_part() else { return };
        match msg {
            RecordMsg::Get { req } => {
                let record = self.record.clone();
                ctx.send(from, RecordMsg::Got { req, record });
            }
            RecordMsg::Update {
                req,
                expected_version,
                record,
            } => {
                let ok = expected_version == self.record.version;
                if ok {
                    let version = self.record.version + 1;
                    self.record = LeaseRecord { version, ..record };
                }
                let record = self.record.clone();
                ctx.send(from, RecordMsg::Updated { req, ok, record });
            }
            RecordMsg::Got { .. } | RecordMsg::Updated { .. } => {}
        }
    }

    fn on_timer(&mut self, _ctx: &mut C, _timer: C::Timer) {}

    /// The record is durable (etcd behind the API server): a restart keeps it as it was.
    fn on_restart(&mut self, _ctx: &mut C, _durable: &C::Durable) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_name_the_operations() {
        assert_eq!(RecordMsg::Get { req: 1 }.kind(), "RECORD_GET");
        let r = LeaseRecord::default();
        assert_eq!(
            RecordMsg::Updated {
                req: 1,
                ok: true,
                record: r
            }
            .kind(),
            "RECORD_UPDATED"
        );
    }
}
