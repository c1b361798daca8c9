//! Per-node local clocks derived from true time.
//!
//! Each node has a **monotonic** clock, `mono(t) = t * (1 + drift_ppm / 1e6)` piecewise (the
//! rate can change at a true instant), and a **wall** clock,
//! `wall(t) = offset + mono(t) + sum of clock steps so far`. A clock step (NTP step, VM
//! migration) moves the wall clock only. All arithmetic is integer nanoseconds.
//!
//! **Rounding.** `mono(t)` is rounded down (floor) to the nanosecond. A timer for a local
//! monotonic duration `d` set at true time `now` fires at the *first* true nanosecond `t' >= now`
//! at which `mono(t') >= mono(now) + d` ([`LocalClock::true_time_after`]). Because `mono` is
//! non-decreasing, that conversion is monotone in `d`. A timer keeps the true deadline computed
//! when it was set: a later drift change does not move pending timers (a simplification; real
//! kernels re-evaluate on every tick).

use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

const PPM: i128 = 1_000_000;

/// A reading of a node's monotonic clock, in local nanoseconds since the node's clock began.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct LocalTime(pub u64);

/// A reading of a node's wall clock, in nanoseconds since an arbitrary epoch. Signed, because a
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

/// How a node's clocks start: drift in parts per million (must lie in
/// `-999_999..=1_000_000`) and the wall clock's offset in ns at true time 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockConfig {
    /// Rate error of the monotonic clock, ppm: +100 runs 100 µs per second fast.
    pub drift_ppm: i64,
    /// Wall clock reading at true time 0, ns.
    pub wall_offset_ns: i64,
}

/// A node's clocks: a piecewise-linear monotonic clock plus wall offset and steps.
#[derive(Clone, Debug)]
pub struct LocalClock {
    seg_true: u64,
    seg_mono: u64,
    drift_ppm: i64,
    wall_offset_ns: i64,
    steps_ns: i64,
}

impl LocalClock {
    /// A clock at true time 0 reading monotonic 0 and wall `cfg.wall_offset_ns`.
    ///
    /// # Panics
    /// If `cfg.drift_ppm` is outside `-999_999..=1_000_000` (validated by the scenario layer).
    pub fn new(cfg: ClockConfig) -> Self {
        assert!(
            (-999_999..=1_000_000).contains(&cfg.drift_ppm),
            "drift_ppm out of range: {}",
            cfg.drift_ppm
        );
        LocalClock {
            seg_true: 0,
            seg_mono: 0,
            drift_ppm: cfg.drift_ppm,
            wall_offset_ns: cfg.wall_offset_ns,
            steps_ns: 0,
        }
    }

    /// The current drift, ppm.
    pub fn drift_ppm(&self) -> i64 {
        self.drift_ppm
    }

    /// Monotonic reading at true time `t` (floor to the ns). `t` must not precede the last
    /// drift change.
    pub fn mono(&self, t: SimTime) -> LocalTime {
        debug_assert!(t.0 >= self.seg_true);
        let dt = (t.0 - self.seg_true) as i128;
        let local = dt * (PPM + self.drift_ppm as i128) / PPM;
        LocalTime(
            self.seg_mono
                .saturating_add(local.min(u64::MAX as i128) as u64),
        )
    }

    /// Wall reading at true time `t`: offset + mono + steps.
    pub fn wall(&self, t: SimTime) -> WallTime {
        let m = self.mono(t).0 as i128;
        let w = self.wall_offset_ns as i128 + m + self.steps_ns as i128;
        WallTime(w.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
    }

    /// Sum of all clock steps so far, ns.
    pub fn steps_ns(&self) -> i64 {
        self.steps_ns
    }

    /// Changes the drift rate from true time `t` on; readings before `t` are unchanged.
    pub fn set_drift(&mut self, t: SimTime, drift_ppm: i64) {
        assert!((-999_999..=1_000_000).contains(&drift_ppm));
        self.seg_mono = self.mono(t).0;
        self.seg_true = t.0;
        self.drift_ppm = drift_ppm;
    }

    /// Steps the wall clock by `delta_ns` (positive: forward). The monotonic clock is untouched.
    pub fn step(&mut self, delta_ns: i64) {
        self.steps_ns = self.steps_ns.saturating_add(delta_ns);
    }

    /// The first true instant `t' >= now` at which the monotonic clock has advanced by at
    /// least `d` since `now` (see the module doc for the rounding rule). Saturates at
    /// [`SimTime::MAX`].
    pub fn true_time_after(&self, now: SimTime, d: SimDuration) -> SimTime {
        if self.drift_ppm == 0 {
            // mono(t) = seg_mono + (t - seg_true): exact, no rounding.
            return now.saturating_add(d);
        }
        let target = self.mono(now).0 as i128 + d.0 as i128;
        let m = target - self.seg_mono as i128;
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
            wall_offset_ns: 0,
        })
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

    proptest! {
        #[test]
        fn timer_conversion_is_minimal_and_monotone(
            ppm in -500_000i64..=500_000,
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
        fn mono_is_non_decreasing(ppm in -999_999i64..=1_000_000, t1 in 0u64..u64::MAX / 4, t2 in 0u64..u64::MAX / 4) {
            let c = clock(ppm);
            let (a, b) = (t1.min(t2), t1.max(t2));
            prop_assert!(c.mono(SimTime(a)) <= c.mono(SimTime(b)));
        }
    }
}
