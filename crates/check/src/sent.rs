//! Which hold a write was sent under. A write belongs to the hold its writer had when it
//! SENT it, not to whatever the writer holds when the storage accepts it: a write delayed in
//! flight across a re-acquisition is still a write of the old hold (issue 17, item 2).
//!
//! The storage's `WriteAccepted { writer, req }` names the writer's `WriteSent { req }`; the
//! hold is the writer's latest `LockAcquired` before that send (else its latest
//! `LeaderClaim`: a lease-based leader writes under its term). Without the link (a record
//! built by hand, a trace written before `req` existed), a fencing token names the hold (the
//! writer's latest acquisition, or claim, with that token); failing both, the writer's latest
//! acquisition before the acceptance.

use crate::run::RunRecord;
use crate::timeline::PerNode;
use crate::truth::HoldId;
use splitbrain_engine::NodeId;
use splitbrain_protocols::Obs;
use std::collections::BTreeMap;

/// The start of the hold a write was sent under: observation indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Start {
    /// The writer's `LockAcquired`.
    Acquired(usize),
    /// The writer's `LeaderClaim` (a leader writing without a lock).
    Claimed(usize),
    /// Neither was observed.
    Unknown,
}

impl Start {
    /// The observation that began the hold, if any.
    pub(crate) fn index(self) -> Option<usize> {
        match self {
            Start::Acquired(j) | Start::Claimed(j) => Some(j),
            Start::Unknown => None,
        }
    }

    /// The lock name and which hold it is: an acquisition's lock, token and value; a claim's
    /// term (a lease leader's term is its grant's token), any lock.
    pub(crate) fn hold(self, record: &RunRecord) -> (Option<&str>, HoldId) {
        match self.index().map(|j| &record.observations[j].obs) {
            Some(Obs::LockAcquired {
                lock, token, value, ..
            }) => (
                Some(lock.as_str()),
                HoldId {
                    token: *token,
                    value: Some(value.clone()),
                },
            ),
            Some(Obs::LeaderClaim { term }) => (
                None,
                HoldId {
                    token: Some(*term),
                    value: None,
                },
            ),
            _ => (None, HoldId::default()),
        }
    }
}

/// Finds the hold each accepted write was sent under.
pub(crate) struct SentUnder {
    acquired: PerNode,
    claimed: PerNode,
    /// `WriteSent` indices per (writer, request id).
    sent: BTreeMap<(NodeId, u64), Vec<usize>>,
}

impl SentUnder {
    pub(crate) fn new(record: &RunRecord) -> SentUnder {
        let mut sent: BTreeMap<(NodeId, u64), Vec<usize>> = BTreeMap::new();
        for (i, o) in record.observations.iter().enumerate() {
            if let Obs::WriteSent { req, .. } = o.obs {
                if req != 0 {
                    sent.entry((o.node, req)).or_default().push(i);
                }
            }
        }
        SentUnder {
            acquired: PerNode::new(record, |o| matches!(o, Obs::LockAcquired { .. })),
            claimed: PerNode::new(record, |o| matches!(o, Obs::LeaderClaim { .. })),
            sent,
        }
    }

    /// The `WriteSent` of accepted write `index`, if the record links them.
    pub(crate) fn send_of(&self, record: &RunRecord, index: usize) -> Option<usize> {
        let Obs::WriteAccepted { writer, req, .. } = record.observations[index].obs else {
            return None;
        };
        let list = self.sent.get(&(writer, req))?;
        let k = list.partition_point(|&s| s < index);
        k.checked_sub(1).map(|k| list[k])
    }

    /// The hold accepted write `index` (a `WriteAccepted`) was sent under.
    pub(crate) fn of(&self, record: &RunRecord, index: usize) -> Start {
        let Obs::WriteAccepted { writer, token, .. } = record.observations[index].obs else {
            return Start::Unknown;
        };
        let anchor = match self.send_of(record, index) {
            Some(s) => s,
            None => match token.and_then(|t| self.by_token(record, writer, t, index)) {
                Some(start) => return start,
                None => index,
            },
        };
        if let Some(j) = self.acquired.before(writer, anchor) {
            Start::Acquired(j)
        } else if let Some(j) = self.claimed.before(writer, anchor) {
            Start::Claimed(j)
        } else {
            Start::Unknown
        }
    }

    /// `writer`'s latest acquisition (else claim) with fencing token `token` before `index`.
    fn by_token(
        &self,
        record: &RunRecord,
        writer: NodeId,
        token: u64,
        index: usize,
    ) -> Option<Start> {
        let latest = |per: &PerNode, is: &dyn Fn(&Obs) -> bool| {
            let mut at = index;
            while let Some(j) = per.before(writer, at) {
                if is(&record.observations[j].obs) {
                    return Some(j);
                }
                at = j;
            }
            None
        };
        if let Some(j) = latest(
            &self.acquired,
            &|o| matches!(o, Obs::LockAcquired { token: Some(t), .. } if *t == token),
        ) {
            return Some(Start::Acquired(j));
        }
        latest(
            &self.claimed,
            &|o| matches!(o, Obs::LeaderClaim { term } if *term == token),
        )
        .map(Start::Claimed)
    }
}
