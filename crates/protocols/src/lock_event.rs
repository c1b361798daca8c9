//! [`LockEvent`]: what a lock client tells the actor driving it (a worker, a lease-based
//! leader). A shared vocabulary: every lock client folder speaks it and none of them imports
//! another.

use splitbrain_engine::LocalTime;

/// What a lock client reports to the actor driving it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockEvent {
    /// The lock is held until local monotonic `valid_until_local`.
    Acquired {
        /// Fencing token, if the service issues one.
        token: Option<u64>,
        /// Local deadline of the hold.
        valid_until_local: LocalTime,
    },
    /// The hold was extended.
    Extended {
        /// New local deadline.
        valid_until_local: LocalTime,
    },
    /// The attempt failed for good (retries exhausted); the worker may try again later.
    Failed,
    /// The client stopped believing it holds the lock.
    Lost,
    /// The release completed (or was sent: release is fire-and-forget where the protocol is).
    Released,
    /// A validity check the client ran by asking its servers (Redlock's `quorum_count`)
    /// concluded.
    Checked {
        /// Whether enough servers still hold the client's value.
        valid: bool,
    },
}
