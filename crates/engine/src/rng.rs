//! Seeded random streams and the distributions the network and protocols draw from.
//!
//! Every consumer gets its own ChaCha8 stream derived from `(seed, stream name)`: the key is
//! `ChaCha8Rng::seed_from_u64(seed)`, the ChaCha stream id is the 64-bit FNV-1a hash of the
//! name (`"net"`, `"nemesis"`, `"actor/client-1"`). Adding a consumer adds a
//! stream and leaves every other stream's draws unchanged.
//!
//! Integer draws never use `rand`'s `gen_range` (its algorithm has changed between versions):
//! [`RngStream::uniform_inclusive`] is one `next_u64` mapped by multiply-shift without
//! rejection, as specified in `shared/bench/WORKLOADS.md` §1.2. Probabilities are integer
//! parts per million. Normal, exponential and log-normal draws use `rand_distr` (pinned
//! version) and are rounded to whole nanoseconds.

use crate::time::SimDuration;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use rand_distr::Distribution;
use std::hash::Hasher;

/// One seeded ChaCha8 random stream.
#[derive(Clone, Debug)]
pub struct RngStream {
    rng: ChaCha8Rng,
}

/// The stable 64-bit FNV-1a hash of a stream name (the ChaCha stream id).
pub fn stream_id(name: &str) -> u64 {
    let mut h = fnv::FnvHasher::default();
    h.write(name.as_bytes());
    h.finish()
}

impl RngStream {
    /// The stream `name` of run `seed`.
    pub fn new(seed: u64, name: &str) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream_id(name));
        RngStream { rng }
    }

    /// The plain `ChaCha8Rng::seed_from_u64(seed)` stream (stream id 0), as the benchmark
    /// workloads specify it.
    pub fn unnamed(seed: u64) -> Self {
        RngStream {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// The next raw 64-bit draw.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform integer in `lo..=hi` from exactly one draw: `lo + floor(x * (hi - lo + 1) / 2^64)`.
    /// Bias below 1e-15 for ranges under 2^14. Returns `lo` if `hi <= lo`.
    #[inline]
    pub fn uniform_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo) as u128 + 1;
        let x = self.next_u64() as u128;
        lo + ((x * span) >> 64) as u64
    }

    /// A uniform duration in `lo..=hi`, ns.
    pub fn uniform_duration(&mut self, lo: SimDuration, hi: SimDuration) -> SimDuration {
        SimDuration(self.uniform_inclusive(lo.0, hi.0))
    }

    /// `true` with probability `ppm / 1_000_000` (one draw; none if `ppm` is 0 or >= 1e6).
    #[inline]
    pub fn chance_ppm(&mut self, ppm: u32) -> bool {
        if ppm == 0 {
            return false;
        }
        if ppm >= 1_000_000 {
            return true;
        }
        self.uniform_inclusive(0, 999_999) < ppm as u64
    }

    /// Normal(mean, sd) in ns, truncated at 0 (negative draws become 0), rounded to the ns.
    pub fn normal_ns(&mut self, mean_ns: f64, sd_ns: f64) -> u64 {
        match rand_distr::Normal::new(mean_ns, sd_ns) {
            Ok(d) => to_ns(d.sample(&mut self.rng)),
            Err(_) => to_ns(mean_ns),
        }
    }

    /// Exponential with the given mean in ns, rounded to the ns.
    pub fn exponential_ns(&mut self, mean_ns: f64) -> u64 {
        if mean_ns <= 0.0 {
            return 0;
        }
        match rand_distr::Exp::new(1.0 / mean_ns) {
            Ok(d) => to_ns(d.sample(&mut self.rng)),
            Err(_) => to_ns(mean_ns),
        }
    }

    /// Log-normal with the given median (ns) and shape `sigma` (of the underlying normal).
    pub fn lognormal_ns(&mut self, median_ns: f64, sigma: f64) -> u64 {
        if median_ns <= 0.0 {
            return 0;
        }
        match rand_distr::LogNormal::new(median_ns.ln(), sigma) {
            Ok(d) => to_ns(d.sample(&mut self.rng)),
            Err(_) => to_ns(median_ns),
        }
    }
}

impl RngCore for RngStream {
    fn next_u32(&mut self) -> u32 {
        self.rng.next_u32()
    }
    fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.rng.fill_bytes(dest)
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.rng.try_fill_bytes(dest)
    }
}

fn to_ns(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x.round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unnamed_stream_matches_the_workload_test_vectors() {
        let mut r = RngStream::unnamed(1);
        assert_eq!(r.next_u64(), 0x67094cea8ca40db1);
        assert_eq!(r.next_u64(), 0x149406d8fc0e8e6b);
        let mut r = RngStream::unnamed(1);
        let v: Vec<u64> = (0..8).map(|_| r.uniform_inclusive(1, 1000)).collect();
        assert_eq!(v, [403, 81, 597, 220, 284, 711, 462, 153]);
        let mut r = RngStream::unnamed(2);
        let v: Vec<u64> = (0..8).map(|_| r.uniform_inclusive(1000, 10000)).collect();
        assert_eq!(v, [8932, 5936, 8104, 8716, 2998, 7082, 9385, 1148]);
    }

    #[test]
    fn named_streams_are_independent_of_each_other() {
        let a: Vec<u64> = {
            let mut r = RngStream::new(7, "actor/a");
            (0..4).map(|_| r.next_u64()).collect()
        };
        // Drawing from another stream in between changes nothing in "actor/a".
        let mut b = RngStream::new(7, "actor/b");
        let mut a2 = RngStream::new(7, "actor/a");
        let mut again = Vec::new();
        for _ in 0..4 {
            b.next_u64();
            again.push(a2.next_u64());
        }
        assert_eq!(a, again);
        assert_ne!(a[0], RngStream::new(7, "actor/b").next_u64());
        assert_ne!(a[0], RngStream::new(8, "actor/a").next_u64());
    }

    #[test]
    fn chance_ppm_edges_and_rate() {
        let mut r = RngStream::new(1, "t");
        assert!(!r.chance_ppm(0));
        assert!(r.chance_ppm(1_000_000));
        let hits = (0..100_000).filter(|_| r.chance_ppm(250_000)).count();
        assert!((24_000..26_000).contains(&hits), "{hits}");
    }

    #[test]
    fn continuous_distributions_are_non_negative_with_the_right_centre() {
        let mut r = RngStream::new(3, "d");
        let n = 20_000u64;
        let mean = |f: &mut dyn FnMut() -> u64| (0..n).map(|_| f()).sum::<u64>() / n;
        let m = mean(&mut || r.exponential_ns(1_000_000.0));
        assert!((950_000..1_050_000).contains(&m), "{m}");
        let mut r = RngStream::new(3, "n");
        let m = mean(&mut || r.normal_ns(5_000_000.0, 1_000_000.0));
        assert!((4_950_000..5_050_000).contains(&m), "{m}");
        let mut r = RngStream::new(3, "l");
        let mut v: Vec<u64> = (0..n).map(|_| r.lognormal_ns(2_000_000.0, 0.5)).collect();
        v.sort_unstable();
        let median = v[v.len() / 2];
        assert!((1_900_000..2_100_000).contains(&median), "{median}");
        let mut r = RngStream::new(3, "z");
        assert!((0..1000).all(|_| r.normal_ns(0.0, 1_000.0) < 10_000));
    }
}
