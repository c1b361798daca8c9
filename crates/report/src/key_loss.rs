//! When a Redis key is lost with its instance's crash: the truth keeps a crashed instance's
//! key counting for its value until the key's deadline or the instance's return (a down
//! instance votes for nobody else), but what the instance held in memory is gone at the
//! crash. The narration tells the loss there and the chart marks it.

use splitbrain_check::{KeyHold, RunRecord};
use splitbrain_engine::{Fault, SimTime};

/// The instant the instance of key piece `k` crashed while holding it, if it did: the first
/// `Crash` of the instance within `[k.from, k.to)` (the truth ends the piece at the key's
/// deadline or at the instance's return, so a crash inside it found the key live; a second
/// crash of a down instance changes nothing and comes after the first).
pub fn key_lost_at(record: &RunRecord, k: &KeyHold) -> Option<SimTime> {
    record.faults.iter().find_map(|(t, f)| match f {
        Fault::Crash { node } if *node == k.instance && k.from <= *t && *t < k.to => Some(*t),
        _ => None,
    })
}
