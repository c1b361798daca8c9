//! Per-node local clocks derived from true time.
//!
//! Each node has a **monotonic** clock, `mono(t) = t * (1 + drift_ppm / 1e6)` piecewise (the
//! rate can change at a true instant), and a **wall** clock,
//! `wall(t) = start + offset + mono(t) + sum of clock steps so far`, where `start` is the
//! run's Unix time at true time 0 (the scenario layer defaults it to 2026-01-01T00:00:00Z,
//! [`DEFAULT_WALL_START_NS`]) and `offset` the node's own offset from it (docs/design.md,
//! "Clocks"). A clock step (NTP step, VM migration) moves the wall
//! clock only. All arithmetic is integer nanoseconds.
//!
//! **Rounding.** `mono(t)` is rounded down (floor) to the nanosecond. A timer for a local
//! monotonic duration `d` set at true time `now` fires at the *first* true nanosecond `t' >= now`
//! at which `mono(t') >= mono(now) + d` ([`LocalClock::true_time_after`]). Because `mono` is
//! non-decreasing, that conversion is monotone in `d`.
//!
//! **Timers follow the monotonic clock, not the rate in force when they were set.** A timer's
//! deadline is a monotonic reading, `mono(now) + d` ([`LocalClock::timer_after`]); it fires
//! when the node's monotonic clock reaches it, as a kernel's `CLOCK_MONOTONIC` timer does
//! (`timer_settime(2)`: the timer expires when the clock reaches the value). The true instant
//! is a cache of that rule under the current rate: after a drift change the engine recomputes
//! it for every pending timer of the node from its deadline ([`LocalClock::true_time_at`]).
//! A clock step moves the wall clock only, so it moves no timer.

use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

const PPM: i128 = 1_000_000;

/// Slowest drift the engine accepts, ppm: `-999_999` is a clock at 1e-6 of true rate (a
/// stopped clock, rate 0, would make every timer infinite).
pub const MIN_DRIFT_PPM: i64 = -999_999;
/// Fastest drift the engine accepts, ppm: `+2_000_000` is a clock running at 3x true rate.
/// The conversions use i128 intermediates, so they stay exact (floor for `mono`, the least
/// true instant for timers) over this whole range and any u64 time.
pub const MAX_DRIFT_PPM: i64 = 2_000_000;

/// A reading of a node's monotonic clock, in local nanoseconds since the node's clock began.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct LocalTime(pub u64);

/// A reading of a node's wall clock, in nanoseconds since the Unix epoch
/// (1970-01-01T00:00:00Z), as `clock_gettime(CLOCK_REALTIME)` reads it. Signed, because a
/// backward clock step can take it below zero.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct WallTime(pub i64);

impl LocalTime {
    /// `self + d` (saturating).
    pub fn saturating_add(self, d: SimDuration) -> LocalTime {
        LocalTime(self.0.saturating_add(d.0))
    }
    /// `self - earlier` in local nanoseconds, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: LocalTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

/// 2026-01-01T00:00:00Z as Unix time in ns (1_767_225_600 s): where scenario runs and the
/// Redis conformance replayer start their wall clocks unless told otherwise. A realistic
/// value matters: Redis rejects `SET .. PX ttl` when `now_ms + ttl <= 0`, so a wall clock
/// near the epoch turns a backward clock step into `ERR invalid expire time`.
pub const DEFAULT_WALL_START_NS: i64 = 1_767_225_600_000_000_000;

/// How a node's clocks start: drift in parts per million (must lie in
/// [`MIN_DRIFT_PPM`]`..=`[`MAX_DRIFT_PPM`]), the run's wall start and the node's wall offset from it.
///
/// `Default` starts the wall clock at 0 (the Unix epoch): the engine's own tests read small
/// numbers; scenarios set `wall_start_ns` (default [`DEFAULT_WALL_START_NS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockConfig {
    /// Rate error of the monotonic clock, ppm: +100 runs 100 µs per second fast.
    pub drift_ppm: i64,
    /// The node's wall clock offset from the run's wall start at true time 0, ns.
    pub wall_offset_ns: i64,
    /// The run's wall clock start: Unix time in ns every node's wall clock reads at true time
    /// 0 before its own offset (a scenario's `wall_clock_start`).
    pub wall_start_ns: i64,
}

/// Unix time in ns of an RFC 3339 UTC timestamp `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (years
/// 1970..=2200, at most 9 fraction digits; `t` or a space may separate date and time).
/// Errors say what was expected.
pub fn parse_rfc3339_ns(text: &str) -> Result<i64, String> {
    let bad = || {
        format!(
            "expected a UTC time like \"2026-01-01T00:00:00Z\" (RFC 3339, ending in Z), found \"{text}\""
        )
    };
    let s = text.trim();
    let b = s.as_bytes();
    if b.len() < 20 || !matches!(b[b.len() - 1], b'Z' | b'z') {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| -> Result<i64, String> {
        let part = s.get(r).ok_or_else(bad)?;
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse::<i64>().map_err(|_| bad())
        } else {
            Err(bad())
        }
    };
    if b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(bad());
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut frac_ns = 0i64;
    let rest = &s[19..s.len() - 1];
    if !rest.is_empty() {
        let digits = rest.strip_prefix('.').ok_or_else(bad)?;
        if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        frac_ns = digits.parse::<i64>().map_err(|_| bad())? * 10i64.pow(9 - digits.len() as u32);
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mdays = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1970..=2200).contains(&y)
        || !(1..=12).contains(&mo)
        || d < 1
        || d > mdays[(mo - 1) as usize]
        || h > 23
        || mi > 59
        || sec > 59
    {
        return Err(format!("{} (fields out of range)", bad()));
    }
    let days = days_from_civil(y, mo, d);
    Ok(((days * 24 + h) * 60 + mi) * 60 * 1_000_000_000 + sec * 1_000_000_000 + frac_ns)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-Compatible
/// Low-Level Date Algorithms", `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01 (Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + if m <= 2 { 1 } else { 0 }, m, d)
}

impl WallTime {
    /// The reading as an RFC 3339 UTC timestamp with milliseconds, and more fraction digits
    /// only where they are not zero: `2026-01-01T00:00:02.001Z`,
    /// `2026-01-01T00:00:02.001000500Z`. Works before 1970 too (a clock stepped back).
    pub fn rfc3339(self) -> String {
        let secs = self.0.div_euclid(1_000_000_000);
        let ns = self.0.rem_euclid(1_000_000_000);
        let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let (y, m, d) = civil_from_days(days);
        let frac = if ns % 1_000_000 == 0 {
            format!("{:03}", ns / 1_000_000)
        } else {
            format!("{ns:09}").trim_end_matches('0').to_string()
        };
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{frac}Z",
            sod / 3600,
            sod / 60 % 60,
            sod % 60
        )
    }
}

/// A node's clocks: a piecewise-linear monotonic clock plus wall offset and steps.
#[derive(Clone, Debug)]
pub struct LocalClock {
    seg_true: u64,
    seg_mono: u64,
    drift_ppm: i64,
    wall_offset_ns: i64,
    wall_start_ns: i64,
    steps_ns: i64,
}

impl LocalClock {
    /// A clock at true time 0 reading monotonic 0 and wall
    /// `cfg.wall_start_ns + cfg.wall_offset_ns`.
    ///
    /// # Panics
    /// If `cfg.drift_ppm` is outside [`MIN_DRIFT_PPM`]`..=`[`MAX_DRIFT_PPM`] (validated by the
    /// scenario layer).
    pub fn new(cfg: ClockConfig) -> Self {
        assert!(
            (MIN_DRIFT_PPM..=MAX_DRIFT_PPM).contains(&cfg.drift_ppm),
            "drift_ppm out of range: {}",
            cfg.drift_ppm
        );
        LocalClock {
            seg_true: 0,
            seg_mono: 0,
            drift_ppm: cfg.drift_ppm,
            wall_offset_ns: cfg.wall_offset_ns,
            wall_start_ns: cfg.wall_start_ns,
            steps_ns: 0,
        }
    }

    /// The current drift, ppm.
    pub fn drift_ppm(&self) -> i64 {
        self.drift_ppm
    }

    /// Monotonic reading at true time `t` (floor to the ns). `t` must not precede the last
    /// drift change.
    #[inline]
    pub fn mono(&self, t: SimTime) -> LocalTime {
        debug_assert!(t.0 >= self.seg_true);
        let dt = t.0 - self.seg_true;
        if self.drift_ppm == 0 {
            // dt * PPM / PPM: exact, no division.
            return LocalTime(self.seg_mono.saturating_add(dt));
        }
        // The rate is at least 1 ppm (MIN_DRIFT_PPM), and dt is not negative, so the floor
        // is the u64 quotient; 64-bit arithmetic where the product fits (dt below about 2.5
        // hours at the fastest rate), 128-bit beyond.
        let rate = (PPM as i64 + self.drift_ppm) as u64;
        let local = match dt.checked_mul(rate) {
            Some(p) => p / PPM as u64,
            None => (dt as i128 * rate as i128 / PPM).min(u64::MAX as i128) as u64,
        };
        LocalTime(self.seg_mono.saturating_add(local))
    }

    /// Wall reading at true time `t`: start + offset + mono + steps.
    pub fn wall(&self, t: SimTime) -> WallTime {
        let m = self.mono(t).0 as i128;
        let w =
            self.wall_start_ns as i128 + self.wall_offset_ns as i128 + m + self.steps_ns as i128;
        WallTime(w.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
    }

    /// Where the current rate began: the true instant of the last drift change (0 if none)
    /// and the monotonic reading there. `mono(t) = origin mono + floor((t - origin true) *
    /// (1e6 + drift_ppm) / 1e6)` for `t` at or after it.
    pub fn origin(&self) -> (SimTime, LocalTime) {
        (SimTime(self.seg_true), LocalTime(self.seg_mono))
    }

    /// The node's wall offset from the run's wall start, ns ([`ClockConfig::wall_offset_ns`]).
    pub fn wall_offset_ns(&self) -> i64 {
        self.wall_offset_ns
    }

    /// The run's wall start this clock counts from (Unix ns; [`ClockConfig::wall_start_ns`]).
    pub fn wall_start_ns(&self) -> i64 {
        self.wall_start_ns
    }

    /// Sum of all clock steps so far, ns.
    pub fn steps_ns(&self) -> i64 {
        self.steps_ns
    }

    /// Changes the drift rate from true time `t` on; readings before `t` are unchanged.
    pub fn set_drift(&mut self, t: SimTime, drift_ppm: i64) {
        assert!((MIN_DRIFT_PPM..=MAX_DRIFT_PPM).contains(&drift_ppm));
        self.seg_mono = self.mono(t).0;
        self.seg_true = t.0;
        self.drift_ppm = drift_ppm;
    }

    /// Steps the wall clock by `delta_ns` (positive: forward). The monotonic clock is untouched.
    pub fn step(&mut self, delta_ns: i64) {
        self.steps_ns = self.steps_ns.saturating_add(delta_ns);
    }

    /// The first true instant `t' >= now` at which the monotonic clock has advanced by at
    /// least `d` since `now` (see the module doc for the rounding rule), under the rate in
    /// force now. Saturates at [`SimTime::MAX`].
    pub fn true_time_after(&self, now: SimTime, d: SimDuration) -> SimTime {
        self.timer_after(now, d).1
    }

    /// A timer of local monotonic duration `d` set at true time `now`: its monotonic deadline
    /// `mono(now) + d` (local ns, saturating at `u64::MAX`, about 584 years) and the first true
    /// instant `>= now` at which the clock reaches it under the rate in force now (as
    /// [`LocalClock::true_time_after`]). The engine keeps the deadline, so that a later drift
    /// change can recompute the instant ([`LocalClock::true_time_at`]).
    #[inline]
    pub fn timer_after(&self, now: SimTime, d: SimDuration) -> (LocalTime, SimTime) {
        if self.drift_ppm == 0 {
            // mono(t) = seg_mono + (t - seg_true): exact, no rounding, no division.
            let mono = self.seg_mono.saturating_add(now.0 - self.seg_true);
            return (LocalTime(mono.saturating_add(d.0)), now.saturating_add(d));
        }
        let target = self.mono(now).0 as i128 + d.0 as i128;
        let deadline = LocalTime(target.min(u64::MAX as i128) as u64);
        (deadline, self.true_time_of(now, target))
    }

    /// The first true instant `t' >= now` at which the monotonic clock reads at least
    /// `deadline` (local ns) under the current rate; `now` if it already does. `now` must not
    /// precede the last drift change. This is how a pending timer's true instant is
    /// recomputed after a drift change: readings before the change are unchanged, so a
    /// deadline already reached keeps its instant. Saturates at [`SimTime::MAX`].
    pub fn true_time_at(&self, now: SimTime, deadline: LocalTime) -> SimTime {
        self.true_time_of(now, deadline.0 as i128)
    }

    /// The first true instant `>= now` with `mono >= target` (an i128, so that a target past
    /// `u64::MAX` still converts as it always did).
    fn true_time_of(&self, now: SimTime, target: i128) -> SimTime {
        let m = target - self.seg_mono as i128;
        if m <= 0 {
            // Reached at or before the segment's start, which is not after `now`.
            return now;
        }
        let rate = PPM + self.drift_ppm as i128;
        // smallest k with floor(k * rate / PPM) >= m  <=>  k >= m * PPM / rate
        let k = (m * PPM + rate - 1) / rate;
        let t = self.seg_true as i128 + k;
        let t = t.max(now.0 as i128);
        SimTime(t.min(u64::MAX as i128) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn clock(ppm: i64) -> LocalClock {
        LocalClock::new(ClockConfig {
            drift_ppm: ppm,
            ..ClockConfig::default()
        })
    }

    #[test]
    fn wall_start_is_unix_time_and_formats_as_rfc3339() {
        assert_eq!(
            parse_rfc3339_ns("2026-01-01T00:00:00Z"),
            Ok(DEFAULT_WALL_START_NS)
        );
        assert_eq!(parse_rfc3339_ns("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(
            parse_rfc3339_ns("2024-02-29T12:34:56.5Z"),
            Ok(1_709_210_096_500_000_000)
        );
        assert!(parse_rfc3339_ns("2023-02-29T00:00:00Z").is_err());
        assert!(parse_rfc3339_ns("2026-01-01T00:00:00").is_err());
        assert!(parse_rfc3339_ns("2026-01-01T00:00:00+01:00").is_err());
        let c = LocalClock::new(ClockConfig {
            wall_offset_ns: 1_000_000,
            wall_start_ns: DEFAULT_WALL_START_NS,
            ..ClockConfig::default()
        });
        let w = c.wall(SimTime(2_000_000_000));
        assert_eq!(w, WallTime(DEFAULT_WALL_START_NS + 2_001_000_000));
        assert_eq!(w.rfc3339(), "2026-01-01T00:00:02.001Z");
        assert_eq!(
            WallTime(DEFAULT_WALL_START_NS + 500).rfc3339(),
            "2026-01-01T00:00:00.0000005Z"
        );
        assert_eq!(
            WallTime(-1_000_000_000).rfc3339(),
            "1969-12-31T23:59:59.000Z"
        );
        assert_eq!(
            WallTime(1_709_210_096_500_000_000).rfc3339(),
            "2024-02-29T12:34:56.500Z"
        );
    }

    #[test]
    fn drift_scales_the_monotonic_clock() {
        let c = clock(100);
        assert_eq!(c.mono(SimTime(1_000_000_000)), LocalTime(1_000_100_000));
        let c = clock(-100);
        assert_eq!(c.mono(SimTime(1_000_000_000)), LocalTime(999_900_000));
    }

    #[test]
    fn a_step_moves_wall_only() {
        let mut c = clock(0);
        c.step(20_000_000_000);
        assert_eq!(c.mono(SimTime(5)), LocalTime(5));
        assert_eq!(c.wall(SimTime(5)), WallTime(20_000_000_005));
        c.step(-30_000_000_000);
        assert_eq!(c.wall(SimTime(5)), WallTime(-9_999_999_995));
    }

    #[test]
    fn drift_change_keeps_earlier_readings() {
        let mut c = clock(0);
        c.set_drift(SimTime(1_000), 1_000_000); // double speed from t = 1000 ns
        assert_eq!(c.mono(SimTime(1_000)), LocalTime(1_000));
        assert_eq!(c.mono(SimTime(1_500)), LocalTime(2_000));
    }

    #[test]
    fn rounding_of_timer_conversion_is_pinned() {
        // A clock 1/3 slow (rate 2/3): mono(t) = floor(2t/3). A 1 ns local timer set at 0
        // fires at t = 2 (mono(1) = 0, mono(2) = 1).
        let c = clock(-333_334);
        assert_eq!(c.mono(SimTime(1)), LocalTime(0));
        assert_eq!(c.true_time_after(SimTime(0), SimDuration(1)), SimTime(2));
        // Fast clock: 10 s local at +100 ppm takes 9.999000099... s true, rounded up.
        let c = clock(100);
        let t = c.true_time_after(SimTime(0), SimDuration::from_secs(10));
        assert_eq!(t, SimTime(9_999_000_100));
        assert!(c.mono(t).0 >= 10_000_000_000);
        assert!(c.mono(SimTime(t.0 - 1)).0 < 10_000_000_000);
    }

    #[test]
    fn rates_from_a_tenth_to_three_times_are_exact() {
        // 3x: 1 s true reads 3 s local; a 3 s local timer fires after exactly 1 s true.
        let c = clock(2_000_000);
        assert_eq!(c.mono(SimTime(1_000_000_000)), LocalTime(3_000_000_000));
        assert_eq!(
            c.true_time_after(SimTime(0), SimDuration::from_secs(3)),
            SimTime(1_000_000_000)
        );
        // 1 ns local at 3x: mono(1) = 3 >= 1, so the first instant is t = 1.
        assert_eq!(c.true_time_after(SimTime(0), SimDuration(1)), SimTime(1));
        // 0.1x: 10 s true reads 1 s local; a 1 s local timer takes 10 s true.
        let c = clock(-900_000);
        assert_eq!(c.mono(SimTime(10_000_000_000)), LocalTime(1_000_000_000));
        assert_eq!(
            c.true_time_after(SimTime(0), SimDuration::from_secs(1)),
            SimTime(10_000_000_000)
        );
        // A drift change from 3x to 0.1x keeps readings continuous.
        let mut c = clock(2_000_000);
        c.set_drift(SimTime(1_000), -900_000);
        assert_eq!(c.mono(SimTime(1_000)), LocalTime(3_000));
        assert_eq!(c.mono(SimTime(1_010)), LocalTime(3_001));
    }

    proptest! {
        #[test]
        fn timer_conversion_is_exact_across_drift_changes(
            ppm1 in -900_000i64..=2_000_000,
            ppm2 in -900_000i64..=2_000_000,
            change in 0u64..1_000_000_000_000,
            now in 0u64..1_000_000_000_000,
            d in 0u64..100_000_000_000,
        ) {
            let mut c = clock(ppm1);
            c.set_drift(SimTime(change), ppm2);
            let now = SimTime(change + now);
            let t = c.true_time_after(now, SimDuration(d));
            let target = c.mono(now).0 + d;
            prop_assert!(c.mono(t).0 >= target);
            if t > now {
                prop_assert!(c.mono(SimTime(t.0 - 1)).0 < target);
            }
        }

        #[test]
        fn timer_conversion_is_minimal_and_monotone(
            ppm in -900_000i64..=2_000_000,
            now in 0u64..1_000_000_000_000,
            d1 in 0u64..100_000_000_000,
            d2 in 0u64..100_000_000_000,
        ) {
            let c = clock(ppm);
            let now = SimTime(now);
            let (a, b) = (d1.min(d2), d1.max(d2));
            let ta = c.true_time_after(now, SimDuration(a));
            let tb = c.true_time_after(now, SimDuration(b));
            prop_assert!(ta <= tb);
            prop_assert!(ta >= now);
            let target = c.mono(now).0 + a;
            prop_assert!(c.mono(ta).0 >= target);
            if ta > now {
                prop_assert!(c.mono(SimTime(ta.0 - 1)).0 < target);
            }
        }

        #[test]
        fn a_deadline_converts_as_its_duration_and_stays_put_once_reached(
            ppm1 in -900_000i64..=2_000_000,
            ppm2 in -900_000i64..=2_000_000,
            set in 0u64..1_000_000_000_000,
            change in 0u64..1_000_000_000_000,
            d in 0u64..100_000_000_000,
        ) {
            let mut c = clock(ppm1);
            let now = SimTime(set);
            let (deadline, at) = c.timer_after(now, SimDuration(d));
            prop_assert_eq!(deadline, c.mono(now).saturating_add(SimDuration(d)));
            prop_assert_eq!(at, c.true_time_after(now, SimDuration(d)));
            prop_assert_eq!(c.true_time_at(now, deadline), at);
            // After a drift change the deadline's instant is the first one the new rate
            // reaches it at; a deadline already reached keeps `change` (the caller keeps the
            // old instant then).
            let change = SimTime(set + change);
            c.set_drift(change, ppm2);
            let moved = c.true_time_at(change, deadline);
            prop_assert!(moved >= change);
            prop_assert!(c.mono(moved) >= deadline);
            if moved > change {
                prop_assert!(c.mono(SimTime(moved.0 - 1)) < deadline);
            }
        }

        #[test]
        fn mono_is_non_decreasing(ppm in MIN_DRIFT_PPM..=MAX_DRIFT_PPM, t1 in 0u64..u64::MAX / 4, t2 in 0u64..u64::MAX / 4) {
            let c = clock(ppm);
            let (a, b) = (t1.min(t2), t1.max(t2));
            prop_assert!(c.mono(SimTime(a)) <= c.mono(SimTime(b)));
        }

        /// The reading is the 128-bit floor `dt * (PPM + drift) / PPM` (saturating) however
        /// it is computed: without division at no drift, in 64 bits where the product fits.
        #[test]
        fn mono_is_the_exact_floor(ppm in prop_oneof![Just(0i64), Just(MIN_DRIFT_PPM), Just(MAX_DRIFT_PPM), MIN_DRIFT_PPM..=MAX_DRIFT_PPM], t in prop_oneof![0u64..20_000_000_000_000, any::<u64>()]) {
            let c = clock(ppm);
            let exact = (t as i128 * (PPM + ppm as i128) / PPM).min(u64::MAX as i128) as u64;
            prop_assert_eq!(c.mono(SimTime(t)), LocalTime(exact));
        }
    }

    /// Found by mutation testing (docs/mutation.md): the conversion after a drift change
    /// (the segment's own monotonic start), the exact ceiling when the rate divides evenly,
    /// and the reading helpers.
    #[test]
    fn timer_conversion_after_a_drift_change_and_on_an_even_rate() {
        let mut c = clock(0);
        c.set_drift(SimTime(1_000), 1_000_000);
        // mono(1000) = 1000; double speed: 1000 ns local more is 500 ns true.
        assert_eq!(
            c.true_time_after(SimTime(1_000), SimDuration(1_000)),
            SimTime(1_500)
        );
        assert_eq!(c.drift_ppm(), 1_000_000);
        // Rate 2 from 0: mono(t) = 2t reaches 2 at t = 1, 4 at t = 2.
        let c = clock(1_000_000);
        for (d, expect) in [(1, 1), (2, 1), (3, 2), (4, 2)] {
            assert_eq!(
                c.true_time_after(SimTime(0), SimDuration(d)),
                SimTime(expect),
                "d = {d}"
            );
        }
        let mut c = clock(0);
        c.step(-7);
        c.step(3);
        assert_eq!(c.steps_ns(), -4);
        assert_eq!(clock(-250).drift_ppm(), -250);
    }

    #[test]
    fn local_time_arithmetic_saturates() {
        assert_eq!(LocalTime(5).saturating_add(SimDuration(7)), LocalTime(12));
        assert_eq!(
            LocalTime(u64::MAX - 1).saturating_add(SimDuration(7)),
            LocalTime(u64::MAX)
        );
        assert_eq!(LocalTime(12).saturating_since(LocalTime(5)), SimDuration(7));
        assert_eq!(LocalTime(5).saturating_since(LocalTime(12)), SimDuration(0));
    }
}
