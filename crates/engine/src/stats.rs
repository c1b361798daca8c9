//! Run counters: events, timers, and messages per kind.
//!
//! The event loop counts messages per kind on every send, delivery and drop, so the per-kind
//! row is found in a small table by the kind string's address (every kind is a `&'static
//! str` returned by a `match` arm, so one kind has one address in practice), and by its text
//! only when the address is new: a `BTreeMap<&str, _>` lookup would compare strings on every
//! message, 11% of W3's instructions.

use crate::network::DropReason;
use std::collections::BTreeMap;

/// Counters of one message kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindCounts {
    /// Sent by an actor.
    pub sent: u64,
    /// Handled by a receiver (duplicates count twice).
    pub delivered: u64,
    /// Dropped (loss, partition, node down, crash); a copy counts on its own.
    pub dropped: u64,
    /// Extra copies the network made (duplication), each delivered or dropped on its own: a
    /// message not yet delivered nor dropped at the end is in flight, `sent + duplicated -
    /// delivered - dropped` of them.
    pub duplicated: u64,
}

/// Counters of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Events processed, stale ones included.
    pub events: u64,
    /// Timer handlers run.
    pub timers_fired: u64,
    /// Timer events skipped (cancelled, the node crashed since, or the entry a drift change
    /// replaced with one at the new rate's instant).
    pub stale_timers: u64,
    /// Per message kind (filled by `Sim::stats`; the event loop counts in a per-kind table).
    pub messages: BTreeMap<&'static str, KindCounts>,
    /// Drops by reason.
    pub drops: BTreeMap<DropReason, u64>,
}

/// Per-kind message counters, one row per kind in order of first use.
#[derive(Clone, Debug, Default)]
pub(crate) struct KindTable {
    rows: Vec<(&'static str, KindCounts)>,
}

impl KindTable {
    /// The counters of `kind` (a new zero row the first time).
    #[inline]
    pub(crate) fn row(&mut self, kind: &'static str) -> &mut KindCounts {
        let i = self.index(kind);
        &mut self.rows[i].1
    }

    /// The index of `kind`'s row (a new zero row the first time), for [`KindTable::at`]: a
    /// message in flight keeps it, so its delivery or drop does not look its kind up again.
    #[inline]
    pub(crate) fn index(&mut self, kind: &'static str) -> usize {
        match self.rows.iter().position(|(k, _)| std::ptr::eq(*k, kind)) {
            Some(i) => i,
            None => self.slow_row(kind),
        }
    }

    /// The kind and counters of row `i` (from [`KindTable::index`]).
    #[inline]
    pub(crate) fn at(&mut self, i: usize) -> (&'static str, &mut KindCounts) {
        let (kind, counts) = &mut self.rows[i];
        (kind, counts)
    }

    /// The row of `kind` found by its text; an equal text at another address shares the row.
    #[cold]
    fn slow_row(&mut self, kind: &'static str) -> usize {
        match self.rows.iter().position(|(k, _)| *k == kind) {
            Some(i) => i,
            None => {
                self.rows.push((kind, KindCounts::default()));
                self.rows.len() - 1
            }
        }
    }

    /// The counters by kind, in kind order.
    pub(crate) fn to_map(&self) -> BTreeMap<&'static str, KindCounts> {
        self.rows.iter().map(|(k, c)| (*k, *c)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_kinds_at_two_addresses_share_one_row() {
        let a: &'static str = "ELECTION";
        // The same text at another address (a leaked copy).
        let b: &'static str = Box::leak(String::from("ELECTION").into_boxed_str());
        assert!(!std::ptr::eq(a, b));
        let mut t = KindTable::default();
        t.row(a).sent += 1;
        t.row(b).sent += 1;
        t.row("ANSWER").delivered += 2;
        t.row(a).dropped += 1;
        let m = t.to_map();
        assert_eq!(m.len(), 2);
        assert_eq!(
            m["ELECTION"],
            KindCounts {
                sent: 2,
                delivered: 0,
                dropped: 1,
                duplicated: 0
            }
        );
        assert_eq!(m["ANSWER"].delivered, 2);
    }
}
