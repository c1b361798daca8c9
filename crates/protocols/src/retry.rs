//! [`RetryPolicy`]: the delay before a lock client retries a failed acquisition attempt. One
//! type shared by the Redlock client (`redlock/`) and the single-instance Redis client
//! (`redis_lock/`): both count `retry_count` as ATTEMPTS (the first one included), as
//! node-redlock documents its `retryCount` ("the max number of times Redlock will attempt to
//! lock a resource before erroring"), so `retry_count: 3` makes at most 2 retries, and both
//! ask [`RetryPolicy::delay`] with the 1-based number of the attempt that just failed. A
//! shared vocabulary like `lock_event.rs`: it imports no protocol.

use splitbrain_engine::SimDuration;

/// How long a lock client (Redlock or the single-instance Redis client) waits before retrying
/// a failed attempt. Every random draw comes from the client node's RNG stream, one `next_u64`
/// per retry (none for the policies without randomness).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryPolicy {
    /// Uniform in `0..=max` (default, max 200 ms): the distlock page's "retry after a random
    /// delay", redlock-py's `retry_delay` randomised.
    Uniform {
        /// Longest delay.
        max: SimDuration,
    },
    /// `delay` plus a jitter uniform in `-jitter..=+jitter`, at least 0: node-redlock's
    /// `retryDelay + Math.floor((Math.random() * 2 - 1) * retryJitter)` (redlock-rb's
    /// `retry_delay` / `retry_jitter`, redsync's `WithRetryDelay` with jitter 0, redis-py's
    /// `Lock(sleep=0.1)` between blocking attempts with jitter 0).
    Fixed {
        /// The base delay (node-redlock `retryDelay`).
        delay: SimDuration,
        /// The jitter bound (node-redlock `retryJitter`; 0: none, no draw).
        jitter: SimDuration,
    },
    /// Exponential backoff with a cap and no randomness: the delay before retry `k` (k = 1
    /// after the first failed attempt) is `min(cap, base * 2^(k-1))` (redsync's
    /// `WithRetryDelayFunc` with a doubling function, the AWS architecture blog's "capped
    /// exponential backoff").
    Exponential {
        /// The first retry's delay.
        base: SimDuration,
        /// The longest delay.
        cap: SimDuration,
    },
}

impl Default for RetryPolicy {
    /// Uniform up to 200 ms (node-redlock's default `retryDelay` 200 ms, randomised as the
    /// distlock page says).
    fn default() -> Self {
        RetryPolicy::Uniform {
            max: SimDuration::from_millis(200),
        }
    }
}

impl RetryPolicy {
    /// The delay before the retry that follows failed attempt `attempt` (1-based).
    pub fn delay(&self, attempt: u32, rng: &mut splitbrain_engine::RngStream) -> SimDuration {
        match *self {
            RetryPolicy::Uniform { max } => SimDuration(rng.uniform_inclusive(0, max.as_nanos())),
            RetryPolicy::Fixed { delay, jitter } => {
                if jitter == SimDuration::ZERO {
                    return delay;
                }
                // One draw in 0..=2*jitter, shifted to -jitter..=+jitter.
                let j = jitter.as_nanos();
                let x = rng.uniform_inclusive(0, j.saturating_mul(2));
                SimDuration((delay.as_nanos() + x).saturating_sub(j))
            }
            RetryPolicy::Exponential { base, cap } => {
                let k = attempt.saturating_sub(1).min(63);
                let d = base.as_nanos().saturating_mul(1u64 << k);
                SimDuration(d.min(cap.as_nanos()))
            }
        }
    }
}

#[cfg(test)]
mod retry_tests {
    use super::RetryPolicy;
    use splitbrain_engine::{RngStream, SimDuration};

    const MS: u64 = 1_000_000;

    /// Exponential backoff doubles from `base` and stops at `cap`, drawing nothing;
    /// fixed without jitter is exactly `delay`; fixed with jitter stays within
    /// `delay ± jitter` and draws once per retry, as uniform does.
    #[test]
    fn retry_policies_give_their_delays() {
        let mut rng = RngStream::new(7, "t");
        let e = RetryPolicy::Exponential {
            base: SimDuration(100 * MS),
            cap: SimDuration(500 * MS),
        };
        let got: Vec<u64> = (1..=5).map(|k| e.delay(k, &mut rng).0 / MS).collect();
        assert_eq!(got, [100, 200, 400, 500, 500]);
        let f = RetryPolicy::Fixed {
            delay: SimDuration(200 * MS),
            jitter: SimDuration::ZERO,
        };
        assert_eq!(f.delay(1, &mut rng), SimDuration(200 * MS));
        // Neither drew: the stream is where it was.
        let mut fresh = RngStream::new(7, "t");
        assert_eq!(rng.next_u64(), fresh.next_u64());
        let j = RetryPolicy::Fixed {
            delay: SimDuration(200 * MS),
            jitter: SimDuration(100 * MS),
        };
        let mut lo = u64::MAX;
        let mut hi = 0;
        for k in 1..=2000 {
            let d = j.delay(k, &mut rng).0;
            lo = lo.min(d);
            hi = hi.max(d);
        }
        assert!(lo >= 100 * MS && hi <= 300 * MS, "{lo} {hi}");
        assert!(lo < 110 * MS && hi > 290 * MS, "{lo} {hi}");
        // Jitter larger than the delay clamps at 0.
        let z = RetryPolicy::Fixed {
            delay: SimDuration(10 * MS),
            jitter: SimDuration(100 * MS),
        };
        assert!((1..=200).any(|k| z.delay(k, &mut rng) == SimDuration::ZERO));
        // Uniform: one draw, the same one the stream gives.
        let u = RetryPolicy::Uniform {
            max: SimDuration(200 * MS),
        };
        let mut a = RngStream::new(3, "u");
        let mut b = RngStream::new(3, "u");
        assert_eq!(u.delay(1, &mut a).0, b.uniform_inclusive(0, 200 * MS));
    }
}
