//! Which hold a write was sent under. A write belongs to the hold its writer had when it
//! SENT it, not to whatever the writer holds when the storage accepts it: a write delayed in
//! flight across a re-acquisition is still a write of the old hold.
//!
//! The storage's `WriteAccepted { writer, req }` names the writer's `WriteSent { req }`; the
//! hold is the writer's latest `LockAcquired` before that send (else its latest
//! `LeaderClaim`: a lease-based leader writes under its term). Without the link (a record
//! built by hand, a trace whose writes carry no `req`), a fencing token names the hold (the
//! writer's latest acquisition, or claim, with that token); failing both, the writer's latest
//! acquisition before the acceptance.

use crate::run::RunRecord;
use crate::timeline::PerNode;
use crate::truth::HoldId;
use splitbrain_engine::NodeId;
use splitbrain_protocols::Obs;

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
    /// `WriteSent`s as `(writer, request id, index)`, sorted: one list, not a list per
    /// request (a long run sends thousands).
    sent: Vec<(NodeId, u64, usize)>,
}

impl SentUnder {
    pub(crate) fn new(record: &RunRecord) -> SentUnder {
        let linked = |o: &Obs| matches!(o, Obs::WriteSent { req, .. } if *req != 0);
        let n = record
            .observations
            .iter()
            .filter(|o| linked(&o.obs))
            .count();
        let mut sent = Vec::with_capacity(n);
        for (i, o) in record.observations.iter_indexed() {
            if let Obs::WriteSent { req, .. } = o.obs {
                if req != 0 {
                    sent.push((o.node, req, i));
                }
            }
        }
        // Every index once: the unstable sort gives the one order.
        sent.sort_unstable();
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
        // The last send of (writer, req) before `index`.
        let k = self.sent.partition_point(|&s| s < (writer, req, index));
        let (w, r, s) = *self.sent.get(k.checked_sub(1)?)?;
        ((w, r) == (writer, req)).then_some(s)
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

#[cfg(test)]
mod tests {
    use super::{SentUnder, Start};
    use crate::run::RunRecord;
    use crate::testkit::*;
    use crate::truth::HoldId;
    use splitbrain_engine::LocalTime;
    use splitbrain_protocols::Obs;

    fn acquired(token: Option<u64>, value: &str) -> Obs {
        Obs::LockAcquired {
            thread: None,
            lock: "lock".to_string(),
            token,
            value: value.to_string(),
            valid_until_local: LocalTime(0),
        }
    }
    fn claim(term: u64) -> Obs {
        Obs::LeaderClaim { term }
    }
    fn sent(req: u64) -> Obs {
        Obs::WriteSent {
            thread: None,
            req,
            token: None,
            job: None,
        }
    }
    fn accepted(writer: u32, req: u64, token: Option<u64>) -> Obs {
        Obs::WriteAccepted {
            writer: id(writer),
            req,
            token,
            job: None,
            applied: true,
        }
    }

    /// Observations one a second from 1 s; `(node, obs)`. Node 0 is the storage, 1 and 2
    /// write.
    fn record(steps: Vec<(u32, Obs)>) -> RunRecord {
        let mut b = Builder::new(&[("storage", Storage), ("A", Worker), ("B", Worker)]);
        for (k, (node, obs)) in steps.into_iter().enumerate() {
            b = b.obs(ms((k as u64 + 1) * 1_000), node, obs);
        }
        b.end(ms(60_000)).build()
    }

    /// Each accepted write's hold, as "acquired at <t>", "claimed at <t>" or "unknown".
    fn under(r: &RunRecord) -> Vec<String> {
        let s = SentUnder::new(r);
        r.observations
            .iter_indexed()
            .filter(|(_, o)| matches!(o.obs, Obs::WriteAccepted { .. }))
            .map(|(i, _)| match s.of(r, i) {
                Start::Acquired(j) => format!("acquired at {}", r.observations[j].t),
                Start::Claimed(j) => format!("claimed at {}", r.observations[j].t),
                Start::Unknown => "unknown".to_string(),
            })
            .collect()
    }

    #[test]
    fn a_write_belongs_to_the_hold_it_was_sent_under() {
        type Case = (&'static str, Vec<(u32, Obs)>, Vec<&'static str>);
        let cases: Vec<Case> = vec![
            (
                "in flight across a re-acquisition: the first hold",
                vec![
                    (1, acquired(None, "a")),
                    (1, sent(1)),
                    (1, acquired(None, "b")),
                    (0, accepted(1, 1, None)),
                ],
                vec!["acquired at 1.000 s"],
            ),
            (
                "resent under the new hold: the latest send before the acceptance",
                vec![
                    (1, acquired(None, "a")),
                    (1, sent(1)),
                    (1, acquired(None, "b")),
                    (1, sent(1)),
                    (0, accepted(1, 1, None)),
                ],
                vec!["acquired at 3.000 s"],
            ),
            (
                "a send after the acceptance does not count",
                vec![
                    (1, acquired(None, "a")),
                    (1, sent(1)),
                    (0, accepted(1, 1, None)),
                    (1, acquired(None, "b")),
                    (1, sent(1)),
                    (0, accepted(1, 1, None)),
                ],
                vec!["acquired at 1.000 s", "acquired at 4.000 s"],
            ),
            (
                "another writer's send with the same request id does not count",
                vec![
                    (1, acquired(None, "a")),
                    (1, sent(1)),
                    (2, acquired(None, "b")),
                    (1, acquired(None, "c")),
                    (2, sent(1)),
                    (0, accepted(1, 1, None)),
                ],
                vec!["acquired at 1.000 s"],
            ),
            (
                "no link: the token names the hold",
                vec![
                    (1, acquired(Some(1), "a")),
                    (2, acquired(Some(2), "b")),
                    (1, acquired(Some(3), "c")),
                    (0, accepted(1, 0, Some(1))),
                ],
                vec!["acquired at 1.000 s"],
            ),
            (
                "no link, a token no acquisition has: the claim of that term",
                vec![(1, claim(5)), (1, claim(6)), (0, accepted(1, 0, Some(5)))],
                vec!["claimed at 1.000 s"],
            ),
            (
                "no link, no token: the writer's latest acquisition",
                vec![
                    (1, acquired(None, "a")),
                    (1, acquired(None, "b")),
                    (2, acquired(None, "c")),
                    (0, accepted(1, 0, None)),
                ],
                vec!["acquired at 2.000 s"],
            ),
            (
                "no link, an unknown token: the writer's latest acquisition",
                vec![
                    (1, acquired(Some(1), "a")),
                    (1, acquired(Some(2), "b")),
                    (0, accepted(1, 0, Some(9))),
                ],
                vec!["acquired at 2.000 s"],
            ),
            (
                "a leader without a lock: its claim before the send",
                vec![
                    (1, claim(1)),
                    (1, sent(4)),
                    (1, claim(2)),
                    (0, accepted(1, 4, None)),
                ],
                vec!["claimed at 1.000 s"],
            ),
            (
                "nothing before: unknown",
                vec![
                    (1, sent(4)),
                    (1, acquired(None, "a")),
                    (0, accepted(1, 4, None)),
                    (0, accepted(2, 0, None)),
                ],
                vec!["unknown", "unknown"],
            ),
        ];
        for (what, steps, expect) in cases {
            assert_eq!(under(&record(steps)), expect, "{what}");
        }
    }

    #[test]
    fn the_hold_a_start_names() {
        let r = record(vec![(1, acquired(Some(7), "v7")), (1, claim(3))]);
        let cases: Vec<(Start, Option<&str>, HoldId)> = vec![
            (
                Start::Acquired(0),
                Some("lock"),
                HoldId {
                    token: Some(7),
                    value: Some("v7".to_string()),
                },
            ),
            (
                Start::Claimed(1),
                None,
                HoldId {
                    token: Some(3),
                    value: None,
                },
            ),
            (Start::Unknown, None, HoldId::default()),
        ];
        for (start, lock, id) in cases {
            assert_eq!(start.hold(&r), (lock, id), "{start:?}");
        }
        assert_eq!(
            [Start::Acquired(4), Start::Claimed(2), Start::Unknown].map(Start::index),
            [Some(4), Some(2), None]
        );
    }
}
