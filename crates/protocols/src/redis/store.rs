//! The keyspace: string keys, string values, optional absolute wall-clock deadlines.
//!
//! # Time model
//!
//! Redis keeps every expiry as an absolute unix time in **milliseconds** (`setExpire` in
//! `src/db.c`: "the absolute unix time in milliseconds after which the key will no longer be
//! considered valid") and compares it with its wall clock (`mstime()`, i.e. `gettimeofday`),
//! never with a monotonic clock. This model does the same with the instance's simulated wall
//! clock, which callers pass in as `now_wall_ns: i64` nanoseconds:
//!
//! - **ns to ms**: the wall clock in ms is `floor(now_wall_ns / 1_000_000)`
//!   ([`wall_ns_to_ms`], Euclidean division so that it is a floor for negative times too).
//!   Redis's `mstime()` is `tv_sec * 1000 + tv_usec / 1000`, which is the same floor for the
//!   (positive) times it sees.
//! - **deadline**: `SET .. PX ttl` stores `now_ms + ttl` (`getExpireMillisecondsOrReply` in
//!   `src/t_string.c`); `PEXPIRE key ms` stores `now_ms + ms` (`expireGenericCommand` in
//!   `src/expire.c`).
//! - **expired**: a key with deadline `when` (ms) is expired iff `now_ms > when`
//!   (`keyIsExpired` in `src/db.c`: "The key expired if the current (virtual or real) time is
//!   greater than the expire time of the key", `return now > when;`). So the key is still
//!   alive during the whole millisecond `when` and expires at the first wall instant whose ms
//!   value is `when + 1`, i.e. at `now_wall_ns >= (when + 1) * 1_000_000`
//!   ([`first_expired_wall_ns`]).
//! - **lazy expiry**: expiry is checked when a key is accessed; an expired key found on access
//!   is deleted then (`expireIfNeeded` in `src/db.c`). Redis also has an active expiry cycle,
//!   which samples keys in the background; it deletes only keys that are already logically
//!   expired, so it changes no reply and is not modelled.
//!
//! # Wall-clock steps
//!
//! Deadlines are absolute wall times, so nothing in the store reacts to a clock step; the
//! effect comes from the next `now_wall_ns` the caller passes in. A **forward** step of `d`
//! shortens every key's remaining time by `d` (keys whose deadline is passed by the step are
//! expired at their next access); a **backward** step lengthens every remaining time by `d`.
//! This is what the recorded `clock_jump_forward_*` conformance vectors show, and what the
//! Redis documentation says (`commands/expire.md`, "Expires and persistence": "if you set a
//! key with a time to live of 1000 seconds, and then set your computer time 2000 seconds in
//! the future, the key will be expired immediately").
//!
//! # Determinism
//!
//! Keys live in a `BTreeMap`, so iteration order is the byte order of the keys and never
//! depends on hashing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Nanoseconds in one millisecond: the factor between the simulator's wall clock (ns) and
/// Redis's expiry unit (ms).
pub const NS_PER_MS: i64 = 1_000_000;

/// Converts a wall-clock reading in nanoseconds to Redis's wall-clock milliseconds:
/// `floor(now_wall_ns / 1_000_000)` (Euclidean division, so `-1 ns` maps to `-1 ms`).
///
/// Source of the rule: Redis's `mstime()` (`src/server.c`) truncates microseconds to
/// milliseconds, which is a floor for the non-negative times a real server sees.
pub fn wall_ns_to_ms(now_wall_ns: i64) -> i64 {
    now_wall_ns.div_euclid(NS_PER_MS)
}

/// Whether a key with the given absolute deadline (`expires_at_ms`, wall-clock ms; `None` =
/// no TTL) is expired at wall-clock millisecond `now_ms`: `now_ms > expires_at_ms`.
///
/// Source: `keyIsExpired` in Redis `src/db.c` (`return now > when;`). Note the strict `>`:
/// at `now_ms == expires_at_ms` the key is still alive (and `PTTL` replies 0).
pub fn is_expired_at_ms(expires_at_ms: Option<i64>, now_ms: i64) -> bool {
    matches!(expires_at_ms, Some(when) if now_ms > when)
}

/// The first wall-clock instant, in **nanoseconds**, at which a key with deadline
/// `expires_at_ms` (ms) counts as expired: `(expires_at_ms + 1) * 1_000_000`.
///
/// Returned as `i128` because Redis accepts deadlines up to `i64::MAX` ms, which do not fit
/// an `i64` count of nanoseconds. Follows from [`is_expired_at_ms`] and [`wall_ns_to_ms`].
pub fn first_expired_wall_ns(expires_at_ms: i64) -> i128 {
    (i128::from(expires_at_ms) + 1) * i128::from(NS_PER_MS)
}

/// One stored key: its string value and its optional absolute deadline.
///
/// The deadline is kept in Redis's own unit, wall-clock **milliseconds** since the wall
/// clock's epoch, because Redis accepts deadlines up to `i64::MAX` ms (for example
/// `SET k v PXAT 9000000000000000000`), which would overflow an `i64` of nanoseconds. Use
/// [`first_expired_wall_ns`] to get the expiry instant in nanoseconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The value (Redis strings are binary-safe; this model uses UTF-8 `String`s).
    pub value: String,
    /// Absolute wall-clock deadline in **ms**; `None` = the key never expires (`PTTL` -1).
    pub expires_at_ms: Option<i64>,
}

impl Entry {
    /// Whether this entry is expired at wall-clock `now_wall_ns` (ns), per
    /// [`is_expired_at_ms`] after [`wall_ns_to_ms`].
    pub fn is_expired(&self, now_wall_ns: i64) -> bool {
        is_expired_at_ms(self.expires_at_ms, wall_ns_to_ms(now_wall_ns))
    }
}

/// A Redis database (db 0): keys to entries, with lazy wall-clock expiry.
///
/// The accessors that take `now_wall_ns` apply Redis's lazy expiry: a key found expired is
/// deleted and reported absent. [`Keyspace::peek`] checks expiry without deleting, for
/// observers (checkers, traces) that must not change state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Keyspace {
    entries: BTreeMap<String, Entry>,
}

impl Keyspace {
    /// An empty keyspace.
    pub fn new() -> Self {
        Self::default()
    }

    /// Looks a key up at wall-clock `now_wall_ns` (ns) the way Redis's `lookupKey*` does:
    /// if it is logically expired it is deleted first (`expireIfNeeded`, `src/db.c`) and
    /// `None` is returned.
    pub fn lookup(&mut self, key: &str, now_wall_ns: i64) -> Option<&Entry> {
        self.lookup_at_ms(key, wall_ns_to_ms(now_wall_ns))
    }

    /// [`Keyspace::lookup`] with the wall clock already in **ms**: the form the command layer
    /// uses, so that one command sees one clock reading.
    pub(crate) fn lookup_at_ms(&mut self, key: &str, now_ms: i64) -> Option<&Entry> {
        self.expire_if_needed_at_ms(key, now_ms);
        self.entries.get(key)
    }

    /// Deletes `key` if it is stored and logically expired at `now_ms` (wall ms); returns
    /// whether it deleted it. Source: `expireIfNeeded` in Redis `src/db.c`.
    pub(crate) fn expire_if_needed_at_ms(&mut self, key: &str, now_ms: i64) -> bool {
        let expired = self
            .entries
            .get(key)
            .is_some_and(|e| is_expired_at_ms(e.expires_at_ms, now_ms));
        if expired {
            self.entries.remove(key);
        }
        expired
    }

    /// The live entry for `key` at wall-clock `now_wall_ns` (ns) **without** deleting an
    /// expired one: a read-only view for observers. Returns `None` if the key is absent or
    /// logically expired.
    pub fn peek(&self, key: &str, now_wall_ns: i64) -> Option<&Entry> {
        self.entries.get(key).filter(|e| !e.is_expired(now_wall_ns))
    }

    /// The stored entry for `key`, expired or not, without deleting anything: a read-only
    /// view of what is stored (the replication stream ships stored entries).
    pub fn get_stored(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    /// Whether `key` is stored, expired or not (O(log n)).
    pub fn contains_stored(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// Stores `key` with `entry`, replacing any previous entry (value and deadline) — the
    /// effect of Redis's `setKey` without `KEEPTTL`.
    pub fn insert(&mut self, key: String, entry: Entry) {
        self.entries.insert(key, entry);
    }

    /// Removes `key` whatever its expiry state and returns what was stored. Callers that
    /// implement Redis commands must run lazy expiry first (as `DEL` does), so that an
    /// expired key does not count as deleted.
    pub fn remove(&mut self, key: &str) -> Option<Entry> {
        self.entries.remove(key)
    }

    /// Sets the absolute deadline (wall **ms**) of a stored key; returns `false` if the key is
    /// not stored. Source: `setExpire` in Redis `src/db.c`.
    pub fn set_expire_at_ms(&mut self, key: &str, expires_at_ms: Option<i64>) -> bool {
        match self.entries.get_mut(key) {
            Some(e) => {
                e.expires_at_ms = expires_at_ms;
                true
            }
            None => false,
        }
    }

    /// Number of stored entries, including logically expired ones not yet deleted.
    pub fn stored_len(&self) -> usize {
        self.entries.len()
    }

    /// Number of entries alive at wall-clock `now_wall_ns` (ns).
    pub fn live_len(&self, now_wall_ns: i64) -> usize {
        self.entries
            .values()
            .filter(|e| !e.is_expired(now_wall_ns))
            .count()
    }

    /// Whether nothing is stored (not even logically expired keys).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// All stored entries in key byte order, including logically expired ones.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.entries.iter().map(|(k, e)| (k.as_str(), e))
    }

    /// Deletes every entry that is expired at wall-clock `now_wall_ns` (ns); returns how many.
    /// Replies never depend on this (expired keys are treated as absent anyway); it only
    /// bounds memory, like Redis's active expire cycle.
    pub fn purge_expired(&mut self, now_wall_ns: i64) -> usize {
        let before = self.entries.len();
        self.entries.retain(|_, e| !e.is_expired(now_wall_ns));
        before - self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = NS_PER_MS;

    fn ks_with(key: &str, expires_at_ms: Option<i64>) -> Keyspace {
        let mut ks = Keyspace::new();
        ks.insert(
            key.to_string(),
            Entry {
                value: "v".to_string(),
                expires_at_ms,
            },
        );
        ks
    }

    /// `live_len` counts keys alive at the instant (an expired key not yet deleted is stored
    /// but not live); `is_empty` is about stored keys.
    #[test]
    fn live_and_stored_counts() {
        let mut ks = Keyspace::new();
        assert!(ks.is_empty());
        assert_eq!(ks.live_len(0), 0);
        ks = ks_with("a", Some(100));
        ks.insert(
            "b".to_string(),
            Entry {
                value: "v".to_string(),
                expires_at_ms: None,
            },
        );
        assert!(!ks.is_empty());
        assert_eq!(ks.live_len(100 * MS), 2);
        assert_eq!(ks.live_len(101 * MS), 1);
        assert_eq!(ks.stored_len(), 2);
    }

    #[test]
    fn ns_to_ms_is_floor() {
        assert_eq!(wall_ns_to_ms(0), 0);
        assert_eq!(wall_ns_to_ms(999_999), 0);
        assert_eq!(wall_ns_to_ms(1_000_000), 1);
        assert_eq!(wall_ns_to_ms(-1), -1);
        assert_eq!(wall_ns_to_ms(-1_000_000), -1);
        assert_eq!(wall_ns_to_ms(-1_000_001), -2);
        assert_eq!(wall_ns_to_ms(i64::MIN), i64::MIN / MS - 1);
        assert_eq!(wall_ns_to_ms(i64::MAX), i64::MAX / MS);
    }

    #[test]
    fn expiry_boundary_is_strictly_greater() {
        // Deadline 30_000 ms.
        assert!(!is_expired_at_ms(Some(30_000), 29_999));
        assert!(!is_expired_at_ms(Some(30_000), 30_000));
        assert!(is_expired_at_ms(Some(30_000), 30_001));
        assert!(!is_expired_at_ms(None, i64::MAX));
        assert_eq!(first_expired_wall_ns(30_000), 30_001 * i128::from(MS));
        assert_eq!(
            first_expired_wall_ns(i64::MAX),
            (i128::from(i64::MAX) + 1) * 1_000_000
        );
    }

    #[test]
    fn lookup_deletes_expired_and_peek_does_not() {
        let mut ks = ks_with("k", Some(10));
        // Alive through the whole ms 10.
        assert!(ks.peek("k", 10 * MS + 999_999).is_some());
        assert!(ks.lookup("k", 10 * MS + 999_999).is_some());
        // Expired from 11 ms on; peek leaves it stored, lookup deletes it.
        assert!(ks.peek("k", 11 * MS).is_none());
        assert_eq!(ks.stored_len(), 1);
        assert_eq!(ks.live_len(11 * MS), 0);
        assert!(ks.lookup("k", 11 * MS).is_none());
        assert_eq!(ks.stored_len(), 0);
    }

    #[test]
    fn purge_and_set_expire() {
        let mut ks = ks_with("a", Some(5));
        ks.insert(
            "b".into(),
            Entry {
                value: "w".into(),
                expires_at_ms: None,
            },
        );
        assert!(ks.set_expire_at_ms("b", Some(100)));
        assert!(!ks.set_expire_at_ms("zz", Some(1)));
        assert_eq!(ks.purge_expired(6 * MS), 1);
        let keys: Vec<&str> = ks.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, vec!["b"]);
        assert_eq!(ks.remove("b").map(|e| e.expires_at_ms), Some(Some(100)));
        assert!(ks.is_empty());
    }
}
