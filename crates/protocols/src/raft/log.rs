//! The replicated log: entries with terms, the AppendEntries consistency check, conflict
//! truncation, and the election's up-to-date comparison (Raft paper §5.3, §5.4.1, Figure 2).

use super::msg::{Entry, LogIndex, Term};

/// A Raft log. Indexes are 1-based; index 0 is the empty prefix, whose term is 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RaftLog {
    entries: Vec<Entry>,
}

/// What [`RaftLog::append_from`] changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppendOutcome {
    /// The first index removed because it conflicted with a new entry (Figure 2,
    /// AppendEntries receiver rule 3), if any.
    pub truncated_from: Option<LogIndex>,
    /// The range of indexes newly written (empty when every entry was already present).
    pub appended: Option<(LogIndex, LogIndex)>,
    /// The index of the last entry the message carried (`prev_log_index + entries.len()`):
    /// the bound for the follower's commit index (Figure 2, receiver rule 5).
    pub last_new_index: LogIndex,
}

impl RaftLog {
    /// An empty log.
    pub fn new() -> RaftLog {
        RaftLog::default()
    }

    /// A log holding `entries` (index 1 first), e.g. rebuilt from durable state.
    pub fn from_entries(entries: Vec<Entry>) -> RaftLog {
        RaftLog { entries }
    }

    /// Every entry, index 1 first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Index of the last entry, 0 if empty.
    pub fn last_index(&self) -> LogIndex {
        self.entries.len() as LogIndex
    }

    /// Term of the last entry, 0 if empty.
    pub fn last_term(&self) -> Term {
        self.entries.last().map_or(0, |e| e.term)
    }

    /// The entry at `index`, if present (never for index 0).
    pub fn get(&self, index: LogIndex) -> Option<&Entry> {
        if index == 0 {
            return None;
        }
        self.entries.get((index - 1) as usize)
    }

    /// The term of the entry at `index`: `Some(0)` for index 0, `None` past the end.
    pub fn term_at(&self, index: LogIndex) -> Option<Term> {
        if index == 0 {
            Some(0)
        } else {
            self.get(index).map(|e| e.term)
        }
    }

    /// The consistency check (§5.3): does this log hold an entry at `prev_index` whose term is
    /// `prev_term`? By the Log Matching Property, the logs then agree on every entry up to it.
    pub fn matches(&self, prev_index: LogIndex, prev_term: Term) -> bool {
        self.term_at(prev_index) == Some(prev_term)
    }

    /// Appends a new entry (leader side) and returns its index.
    pub fn push(&mut self, entry: Entry) -> LogIndex {
        self.entries.push(entry);
        self.last_index()
    }

    /// Follower side, after [`RaftLog::matches`] held for `prev_index`: for each new entry, if
    /// an existing entry at its index has a different term, delete it and everything after it,
    /// then append every entry not already present (Figure 2, receiver rules 3 and 4). Entries
    /// already present are kept: an old, reordered AppendEntries must not cut the log.
    pub fn append_from(&mut self, prev_index: LogIndex, new: &[Entry]) -> AppendOutcome {
        assert!(
            prev_index <= self.last_index(),
            "append_from past the end: check matches() first"
        );
        let mut out = AppendOutcome {
            truncated_from: None,
            appended: None,
            last_new_index: prev_index + new.len() as LogIndex,
        };
        for (k, entry) in new.iter().enumerate() {
            let index = prev_index + 1 + k as LogIndex;
            match self.term_at(index) {
                Some(t) if t == entry.term => continue,
                Some(_) => {
                    self.entries.truncate((index - 1) as usize);
                    out.truncated_from = Some(index);
                }
                None => {}
            }
            self.entries.extend(new[k..].iter().cloned());
            out.appended = Some((index, self.last_index()));
            break;
        }
        out
    }

    /// Up to `max` entries from `from` on (for an AppendEntries message).
    pub fn slice_from(&self, from: LogIndex, max: usize) -> Vec<Entry> {
        let start = (from.max(1) - 1) as usize;
        if start >= self.entries.len() {
            return Vec::new();
        }
        let end = (start + max).min(self.entries.len());
        self.entries[start..end].to_vec()
    }

    /// The election restriction (§5.4.1): is a candidate's log, ending at
    /// (`last_index`, `last_term`), at least as up-to-date as this one? Compare last terms
    /// first; with equal last terms, the longer log is more up-to-date.
    pub fn candidate_is_up_to_date(&self, last_index: LogIndex, last_term: Term) -> bool {
        let (my_term, my_index) = (self.last_term(), self.last_index());
        last_term > my_term || (last_term == my_term && last_index >= my_index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raft::msg::Command;

    fn e(term: Term) -> Entry {
        Entry {
            term,
            command: Command::Noop,
        }
    }

    fn terms(log: &RaftLog) -> Vec<Term> {
        log.entries().iter().map(|e| e.term).collect()
    }

    #[test]
    fn consistency_check_matches_index_zero_and_terms() {
        let log = RaftLog::from_entries(vec![e(1), e(1), e(2)]);
        assert!(log.matches(0, 0));
        assert!(log.matches(3, 2));
        assert!(!log.matches(3, 1));
        assert!(!log.matches(4, 2));
    }

    #[test]
    fn conflicting_suffix_is_truncated_then_replaced() {
        // Figure 7's follower with extra entries from a term that never committed.
        let mut log = RaftLog::from_entries(vec![e(1), e(1), e(2), e(2), e(2)]);
        let out = log.append_from(2, &[e(3), e(3)]);
        assert_eq!(out.truncated_from, Some(3));
        assert_eq!(out.appended, Some((3, 4)));
        assert_eq!(out.last_new_index, 4);
        assert_eq!(terms(&log), vec![1, 1, 3, 3]);
    }

    #[test]
    fn a_stale_reordered_append_does_not_cut_the_log() {
        let mut log = RaftLog::from_entries(vec![e(1), e(1), e(1)]);
        let out = log.append_from(0, &[e(1)]);
        assert_eq!(out.truncated_from, None);
        assert_eq!(out.appended, None);
        assert_eq!(out.last_new_index, 1);
        assert_eq!(log.last_index(), 3);
    }

    #[test]
    fn up_to_date_compares_last_term_then_length() {
        let log = RaftLog::from_entries(vec![e(1), e(2)]);
        assert!(log.candidate_is_up_to_date(1, 3));
        assert!(log.candidate_is_up_to_date(2, 2));
        assert!(!log.candidate_is_up_to_date(1, 2));
        assert!(!log.candidate_is_up_to_date(9, 1));
    }
}
