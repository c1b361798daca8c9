//! True (simulation) time and durations: integer nanoseconds in newtypes.
//!
//! Arithmetic is checked or saturating, never wrapping: an overflow of `u64` nanoseconds
//! (about 584 years) is reported as `None` by the `checked_*` methods and pinned to
//! [`SimTime::MAX`] by the `saturating_*` ones, which the engine treats as "never".

use serde::{Deserialize, Serialize};
use std::fmt;

/// A true-time instant: nanoseconds since the start of the run.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SimTime(pub u64);

/// A span of time in nanoseconds (true or local, depending on where it is used).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SimDuration(pub u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable instant; the engine reads it as "never".
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// Nanoseconds since the start of the run.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// `self + d`, or `None` on overflow.
    pub fn checked_add(self, d: SimDuration) -> Option<SimTime> {
        self.0.checked_add(d.0).map(SimTime)
    }
    /// `self + d`, pinned to [`SimTime::MAX`] on overflow.
    pub fn saturating_add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
    /// `self - earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
    /// Whole seconds as a float, for display and charts only (never for ordering).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl SimDuration {
    /// Zero length.
    pub const ZERO: SimDuration = SimDuration(0);
    /// The largest representable span.
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    /// `n` nanoseconds.
    pub const fn from_nanos(n: u64) -> Self {
        SimDuration(n)
    }
    /// `n` microseconds (saturating).
    pub const fn from_micros(n: u64) -> Self {
        SimDuration(n.saturating_mul(1_000))
    }
    /// `n` milliseconds (saturating).
    pub const fn from_millis(n: u64) -> Self {
        SimDuration(n.saturating_mul(1_000_000))
    }
    /// `n` seconds (saturating).
    pub const fn from_secs(n: u64) -> Self {
        SimDuration(n.saturating_mul(1_000_000_000))
    }
    /// Length in nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Length in whole milliseconds (floor).
    pub const fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }
    /// `self + other`, or `None` on overflow.
    pub fn checked_add(self, other: SimDuration) -> Option<SimDuration> {
        self.0.checked_add(other.0).map(SimDuration)
    }
    /// `self + other`, pinned to [`SimDuration::MAX`].
    pub fn saturating_add(self, other: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(other.0))
    }
    /// `self - other`, or `None` if `other` is longer.
    pub fn checked_sub(self, other: SimDuration) -> Option<SimDuration> {
        self.0.checked_sub(other.0).map(SimDuration)
    }
    /// `self - other`, or zero if `other` is longer.
    pub fn saturating_sub(self, other: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(other.0))
    }
    /// Seconds as a float, for display only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

/// Writes nanoseconds as seconds with 3, 6 or 9 decimals: as few as show the value exactly
/// ("1.204 s", "0.000250 s"). Used by `Display` of both time types.
pub fn fmt_nanos_as_secs(ns: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let secs = ns / 1_000_000_000;
    let frac = ns % 1_000_000_000;
    if frac % 1_000_000 == 0 {
        write!(f, "{secs}.{:03} s", frac / 1_000_000)
    } else if frac % 1_000 == 0 {
        write!(f, "{secs}.{:06} s", frac / 1_000)
    } else {
        write!(f, "{secs}.{frac:09} s")
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_nanos_as_secs(self.0, f)
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_nanos_as_secs(self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_is_reported_not_wrapped() {
        assert_eq!(SimTime(u64::MAX - 1).checked_add(SimDuration(2)), None);
        assert_eq!(
            SimTime(u64::MAX - 1).saturating_add(SimDuration(2)),
            SimTime::MAX
        );
        assert_eq!(SimDuration(1).checked_sub(SimDuration(2)), None);
        assert_eq!(SimDuration::from_secs(u64::MAX), SimDuration::MAX);
    }

    #[test]
    fn display_uses_the_fewest_exact_decimals() {
        assert_eq!(SimTime(1_204_000_000).to_string(), "1.204 s");
        assert_eq!(SimDuration(250_000).to_string(), "0.000250 s");
        assert_eq!(SimTime(1).to_string(), "0.000000001 s");
        assert_eq!(SimTime(45_000_000_000).to_string(), "45.000 s");
    }
}
