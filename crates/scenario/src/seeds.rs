//! Seed ranges: what `--seeds`, `rate_seeds` and a manifest's `seeds` name (`0..100`,
//! `0..=99`, `7`), their limit, the shards a range splits into, and the words for one written
//! as a number where its text goes.

use crate::locate::Seg;
use crate::schema::Scenario;
use std::fmt;

/// Most seeds one seed range may hold (`--seeds`, `rate_seeds`): `0..18446744073709551615`
/// must be an error, not a sweep that never ends (`check`'s `rate_seeds` sweep also holds a
/// result per seed; `sweep` streams them). Ten million runs are hours of work at a few
/// thousand runs a second.
pub const MAX_SEEDS: u64 = 10_000_000;

/// A seed range `start..=last`, both included (an end excluded could not reach seed
/// 18446744073709551615, which `run --seed` accepts). Written `A..B` (B excluded) when the
/// last seed is below `u64::MAX`, else `A..=B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRange {
    /// First seed.
    pub start: u64,
    /// Last seed (included), `>= start`.
    pub last: u64,
}

impl SeedRange {
    /// How many seeds the range holds (at most [`MAX_SEEDS`] when parsed; a hand-built
    /// `0..=u64::MAX` would saturate).
    pub fn len(&self) -> u64 {
        (self.last - self.start).saturating_add(1)
    }

    /// A range always holds a seed (`last >= start`), so never empty; for clippy's
    /// `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether `seed` is in the range.
    pub fn contains(&self, seed: u64) -> bool {
        self.start <= seed && seed <= self.last
    }

    /// The seeds, ascending.
    pub fn seeds(&self) -> std::ops::RangeInclusive<u64> {
        self.start..=self.last
    }
}

impl std::str::FromStr for SeedRange {
    type Err = String;
    /// `A..B` (B excluded), `A..=B`, or one seed `A`.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "expected a seed range like 0..10000 (end excluded), 0..=9999 (end included) or \
                 one seed, found `{s}`"
            )
        };
        let num = |x: &str| {
            let x = x.trim();
            x.parse::<u64>().map_err(|_| {
                if !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()) {
                    format!(
                        "a seed is an integer in 0..={}, found {x} in `{s}`",
                        u64::MAX
                    )
                } else {
                    bad()
                }
            })
        };
        // Spaces are not trimmed (`" 0..3"`): refused like any other malformed range.
        if s.chars().any(char::is_whitespace) {
            let bare: String = s.chars().filter(|c| !c.is_whitespace()).collect();
            return Err(format!(
                "a seed range has no spaces: write `{bare}`, found `{s}`"
            ));
        }
        let empty = || format!("the seed range `{s}` is empty");
        let (start, last) = if let Some((a, b)) = s.split_once("..=") {
            (num(a)?, num(b)?)
        } else if let Some((a, b)) = s.split_once("..") {
            (num(a)?, num(b)?.checked_sub(1).ok_or_else(empty)?)
        } else {
            let a = num(s)?;
            (a, a)
        };
        if start > last {
            return Err(empty());
        }
        // u128: `0..=18446744073709551615` holds 2^64 seeds.
        let len = u128::from(last - start) + 1;
        if len > u128::from(MAX_SEEDS) {
            return Err(format!(
                "the seed range `{s}` holds {len} seeds: at most {MAX_SEEDS} in one range"
            ));
        }
        Ok(SeedRange { start, last })
    }
}

impl fmt::Display for SeedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.last.checked_add(1) {
            Some(end) => write!(f, "{}..{}", self.start, end),
            None => write!(f, "{}..={}", self.start, self.last),
        }
    }
}

/// The `k`-th of `n` interleaved slices of a seed range: seeds with `(seed - start) % n == k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which slice, `0..n`.
    pub k: u64,
    /// How many slices.
    pub n: u64,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("expected a shard like 0/4 (K/N with 0 <= K < N), found `{s}`");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: u64 = k.trim().parse().map_err(|_| bad())?;
        let n: u64 = n.trim().parse().map_err(|_| bad())?;
        if n == 0 || k >= n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// The seeds of `range` in `shard` (all of them without one), ascending.
pub fn seeds_of(range: SeedRange, shard: Option<Shard>) -> Vec<u64> {
    let Shard { k, n } = shard.unwrap_or(Shard { k: 0, n: 1 });
    range
        .seeds()
        .filter(|s| (s - range.start) % n == k)
        .collect()
}

/// How many seeds of `range` are in `shard` (all of them without one), without listing them.
pub fn seed_count(range: SeedRange, shard: Option<Shard>) -> u64 {
    let Shard { k, n } = shard.unwrap_or(Shard { k: 0, n: 1 });
    // `last - start` is the range's length less one; never overflows.
    let span = range.last - range.start;
    if k > span {
        0
    } else {
        (span - k) / n + 1
    }
}

/// The seeds of `range` in `shard` (all of them without one), ascending, one at a time: the
/// same seeds as [`seeds_of`] without a list as long as the range.
pub fn seeds_iter(range: SeedRange, shard: Option<Shard>) -> impl Iterator<Item = u64> {
    let Shard { k, n } = shard.unwrap_or(Shard { k: 0, n: 1 });
    let count = seed_count(range, shard);
    // `start + k + i * n` for i < count is at most `last`: no overflow.
    (0..count).map(move |i| range.start + k + i * n)
}

/// The seeds `check` sweeps to judge `expect_rate` when the file names none.
pub const DEFAULT_RATE_SEEDS: SeedRange = SeedRange {
    start: 0,
    last: 999,
};

/// The seeds `check` sweeps for `scenario`'s `expect_rate`: its `rate_seeds` (validated) or
/// [`DEFAULT_RATE_SEEDS`].
pub fn rate_seeds(scenario: &Scenario) -> SeedRange {
    scenario
        .rate_seeds
        .as_deref()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_RATE_SEEDS)
}

/// A seed range written as a JSON number or list where its text goes (`"rate_seeds": 5`, a
/// manifest's `"seeds": [0, 100]`): says to quote it, with the forms a range takes. `field`
/// is the top-level key that holds a seed range.
pub fn seed_range_hint(src: &str, path: &[Seg], field: &str) -> Option<(Vec<Seg>, String)> {
    let [Seg::Key(key)] = path else {
        return None;
    };
    if key != field {
        return None;
    }
    let root: serde_json::Value = serde_json::from_str(src).ok()?;
    let (found, n) = match root.get(field)? {
        serde_json::Value::Number(n) => match n.as_u64() {
            Some(n) => (format!("the integer {n}"), n),
            None => (format!("the number {n}"), 100),
        },
        serde_json::Value::Array(_) => ("a list `[...]`".to_string(), 100),
        _ => return None,
    };
    // The examples end at the number written (at 1 for 0, so the range is not empty).
    let end = n.max(1);
    Some((
        path.to_vec(),
        format!(
            "expected a seed range as a string in quotes: \"0..{end}\" ({end} seeds, 0 to \
             {last}), \"0..={end}\" (0 to {end} included) or \"{n}\" (seed {n} alone); found \
             {found}",
            last = end - 1
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_shards_parse_and_slice() {
        let r: SeedRange = "10..20".parse().unwrap();
        assert_eq!((r.start, r.last), (10, 19));
        assert_eq!("0..=9".parse::<SeedRange>().unwrap().last, 9);
        assert_eq!(
            "7".parse::<SeedRange>().unwrap(),
            SeedRange { start: 7, last: 7 }
        );
        assert!("5..5".parse::<SeedRange>().is_err());
        assert!("a..b".parse::<SeedRange>().is_err());
        // A bound past u64 is said as such, not as a malformed range.
        assert_eq!(
            "0..18446744073709551616".parse::<SeedRange>().unwrap_err(),
            "a seed is an integer in 0..=18446744073709551615, found 18446744073709551616 in \
             `0..18446744073709551616`"
        );
        // The largest seed can be swept, as `run --seed` takes it (not "a range can reach at
        // most seed 18446744073709551614").
        let top: SeedRange = "18446744073709551610..=18446744073709551615"
            .parse()
            .unwrap();
        assert_eq!(top.len(), 6);
        assert_eq!(
            top.to_string(),
            "18446744073709551610..=18446744073709551615"
        );
        assert_eq!(top.to_string().parse::<SeedRange>().unwrap(), top);
        let max: SeedRange = "18446744073709551615".parse().unwrap();
        assert_eq!(seeds_of(max, None), vec![u64::MAX]);
        assert_eq!(r.to_string(), "10..20");
        assert!("0..=18446744073709551615"
            .parse::<SeedRange>()
            .unwrap_err()
            .contains("holds 18446744073709551616 seeds"));
        assert!("3/3".parse::<Shard>().is_err());
        assert!("0/0".parse::<Shard>().is_err());
        let s: Shard = "1/3".parse().unwrap();
        assert_eq!(seeds_of(r, Some(s)), vec![11, 14, 17]);
        let all: Vec<u64> = (0..3)
            .flat_map(|k| seeds_of(r, Some(Shard { k, n: 3 })))
            .collect();
        assert_eq!(all.len(), 10);
    }
}
