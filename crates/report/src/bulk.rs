//! Bulk traffic: the rule that picks, from a run's message counts per kind, the kind that is
//! most of the traffic (heartbeats, Raft's APPEND_ENTRIES). The charts draw it faint, the view
//! starts it unticked and a narration folds it, all by this one rule.

use std::collections::BTreeMap;

/// Fewest arrows of a kind that is over half (and at most three quarters) of the traffic for
/// it to count as bulk traffic in the charts' kind colours (`chart::kind_colours`).
pub const BULK_ARROWS: usize = 100;

/// The most frequent kind of `counts` (messages per kind) if it is bulk traffic (the charts' kind
/// colours draw it faint, the view starts it unticked, a narration folds it); ties go to the first name.
pub fn bulk_kind<'a>(counts: &BTreeMap<&'a str, usize>) -> Option<&'a str> {
    let mut by_count: Vec<(&str, usize)> = counts.iter().map(|(k, n)| (*k, *n)).collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let total: usize = by_count.iter().map(|k| k.1).sum();
    let top = *by_count.first()?;
    let rest = total - top.1;
    (by_count.len() >= 2 && (top.1 > 3 * rest || (top.1 > rest && top.1 >= BULK_ARROWS)))
        .then_some(top.0)
}
