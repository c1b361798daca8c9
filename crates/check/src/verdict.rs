//! Verdicts and violations: the checkers' output, plain data (STYLE: violations are data).

use crate::evidence::Evidence;
use serde::{Deserialize, Serialize};
use splitbrain_engine::SimTime;
use std::fmt;

/// The verdict on one invariant for one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The invariant holds over the whole run.
    Holds,
    /// The invariant is violated; each violation is a window with its evidence.
    Violated(Vec<Violation>),
    /// The run cannot decide it (e.g. it ends before the last fault plus `settle`).
    Inconclusive {
        /// Why, in words.
        reason: String,
    },
}

/// A verdict without its details, as scenario files write expectations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// See [`Verdict::Holds`].
    Holds,
    /// See [`Verdict::Violated`].
    Violated,
    /// See [`Verdict::Inconclusive`].
    Inconclusive,
}

impl Verdict {
    /// The outcome without details.
    pub fn outcome(&self) -> Outcome {
        match self {
            Verdict::Holds => Outcome::Holds,
            Verdict::Violated(_) => Outcome::Violated,
            Verdict::Inconclusive { .. } => Outcome::Inconclusive,
        }
    }
    /// The violations (empty unless violated).
    pub fn violations(&self) -> &[Violation] {
        match self {
            Verdict::Violated(v) => v,
            _ => &[],
        }
    }
    /// `Holds` for no violations, `Violated` otherwise.
    pub(crate) fn from_violations(v: Vec<Violation>) -> Verdict {
        if v.is_empty() {
            Verdict::Holds
        } else {
            Verdict::Violated(v)
        }
    }
}

/// One violation of one invariant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The invariant's name (e.g. `"single_leader"`).
    pub invariant: &'static str,
    /// Start of the violating window, true time (equal to `to` for a single instant).
    pub from: SimTime,
    /// End of the violating window, true time (exclusive for windows, equal to `from` for an
    /// instant).
    pub to: SimTime,
    /// Names of the nodes involved, sorted.
    pub nodes: Vec<String>,
    /// One sentence saying what went wrong.
    pub summary: String,
    /// The observations (and derived facts) that prove it, in true-time order.
    pub evidence: Vec<Evidence>,
    /// Faults that touched the involved nodes or the network and started before the window
    /// ended, in words, in the order they were applied.
    pub faults: Vec<String>,
}

impl Violation {
    /// The violating window in words, in one style for every invariant and lesson:
    /// `at 6.003 s` for an instant, `2.253 s \u{2013} 6.002 s` for a window, with the
    /// violation's [`time_decimals`](Self::time_decimals) (at least as many as
    /// [`fmt_window`] would give).
    pub fn window(&self) -> String {
        let d = self.time_decimals();
        if self.from == self.to {
            format!("at {}", fmt_secs(self.from, d))
        } else {
            format!(
                "{} \u{2013} {}",
                fmt_secs(self.from, d),
                fmt_secs(self.to, d)
            )
        }
    }

    /// The one number of decimals every time of this violation is written with (its window,
    /// its evidence's times, and the times and durations in its summary, evidence and
    /// faults): 3 (milliseconds), or 6 or 9 where fewer would print two different instants
    /// of its window and evidence alike: the window's rule ([`fmt_window`]) over all of
    /// them, so a violation never writes `2.252295016 s` beside `6.000 s`. Read from the
    /// exact times only, so it is the same before and after
    /// [`with_uniform_times`](Self::with_uniform_times) rounds the texts.
    pub fn time_decimals(&self) -> usize {
        let mut ns: Vec<u64> = vec![self.from.0, self.to.0];
        ns.extend(self.evidence.iter().map(|e| e.t.0));
        ns.sort_unstable();
        ns.dedup();
        // Rounding keeps the order, so neighbours are the only pairs that can merge.
        [3, 6]
            .into_iter()
            .find(|&d| {
                ns.windows(2)
                    .all(|w| round_to(w[0], d) != round_to(w[1], d))
            })
            .unwrap_or(9)
    }

    /// The violation with every time in its summary, evidence texts and faults written with
    /// its [`time_decimals`](Self::time_decimals) (`check` returns violations so).
    pub fn with_uniform_times(mut self) -> Violation {
        let d = self.time_decimals();
        self.summary = with_decimals(&self.summary, d);
        for f in &mut self.faults {
            *f = with_decimals(f, d);
        }
        for e in &mut self.evidence {
            e.text = with_decimals(&e.text, d);
        }
        self
    }
}

/// A true-time window in one unit style: seconds with millisecond decimals (`2.253 s`), the
/// same number of decimals at both ends, with more (µs, then ns) only where milliseconds
/// would make the two ends equal. An instant (`from == to`) is `at T`.
pub fn fmt_window(from: SimTime, to: SimTime) -> String {
    if from == to {
        return format!("at {}", fmt_secs_fixed(from, 3));
    }
    let decimals = [3usize, 6, 9]
        .into_iter()
        .find(|d| fmt_secs_fixed(from, *d) != fmt_secs_fixed(to, *d))
        .unwrap_or(9);
    format!(
        "{} \u{2013} {}",
        fmt_secs_fixed(from, decimals),
        fmt_secs_fixed(to, decimals)
    )
}

/// `t` in seconds with exactly `decimals` (3, 6 or 9) decimals, rounded half up.
fn fmt_secs_fixed(t: SimTime, decimals: usize) -> String {
    fmt_secs(t, decimals)
}

/// `ns` in units of `10^-decimals` s, rounded half up.
fn round_to(ns: u64, decimals: usize) -> u64 {
    let unit = 10u64.pow(9 - decimals.min(9) as u32);
    ns / unit + u64::from(ns % unit >= unit.div_ceil(2))
}

/// `t` in seconds with exactly `decimals` (3, 6 or 9) decimals, rounded half up
/// (`fmt_secs(t, v.time_decimals())` writes an evidence time of violation `v`).
pub fn fmt_secs(t: SimTime, decimals: usize) -> String {
    let decimals = decimals.min(9);
    let q = round_to(t.0, decimals);
    let per_sec = 10u64.pow(decimals as u32);
    format!("{}.{:0w$} s", q / per_sec, q % per_sec, w = decimals)
}

/// The true times and durations written in `text` as `fmt_nanos_as_secs` writes them
/// (`2.252295016 s`, `6.000 s`: seconds with 3, 6 or 9 decimals, then ` s`), each as its
/// byte range and its exact value in ns.
fn time_tokens(text: &str) -> Vec<(std::ops::Range<usize>, u64)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        // A number starts at a digit that does not continue a word or another number.
        if !b[i].is_ascii_digit()
            || (i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'.'))
        {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let int_end = i;
        if i >= b.len() || b[i] != b'.' {
            continue;
        }
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let decimals = i - frac_start;
        let unit_ok =
            text[i..].starts_with(" s") && !b.get(i + 2).is_some_and(|c| c.is_ascii_alphanumeric());
        if !matches!(decimals, 3 | 6 | 9) || !unit_ok {
            continue;
        }
        let (Ok(secs), Ok(frac)) = (
            text[start..int_end].parse::<u64>(),
            text[frac_start..i].parse::<u64>(),
        ) else {
            continue;
        };
        let ns = secs
            .checked_mul(1_000_000_000)
            .and_then(|s| s.checked_add(frac * 10u64.pow(9 - decimals as u32)));
        if let Some(ns) = ns {
            out.push((start..i + 2, ns));
        }
    }
    out
}

/// `text` with every time token ([`time_tokens`]) written with `decimals` decimals.
pub(crate) fn with_decimals(text: &str, decimals: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (range, ns) in time_tokens(text) {
        out.push_str(&text[at..range.start]);
        out.push_str(&fmt_secs_fixed(SimTime(ns), decimals));
        at = range.end;
    }
    out.push_str(&text[at..]);
    out
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} violated {}: {}",
            self.invariant,
            self.window(),
            self.summary
        )?;
        let d = self.time_decimals();
        for e in &self.evidence {
            writeln!(f, "  {:>12}  {}: {}", fmt_secs(e.t, d), e.node, e.text)?;
        }
        for x in &self.faults {
            writeln!(f, "  fault: {x}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod window_tests {
    use super::fmt_window;
    use splitbrain_engine::SimTime;

    /// Windows print in one style, milliseconds (`10.020 s – 12.023 s`), finer only where
    /// two instants would print alike (not `2.252760180 s – 6.001600041 s`).
    #[test]
    fn windows_print_in_one_unit_style() {
        assert_eq!(
            fmt_window(SimTime(2_252_760_180), SimTime(6_001_600_041)),
            "2.253 s \u{2013} 6.002 s"
        );
        assert_eq!(
            fmt_window(SimTime(10_020_000_000), SimTime(12_023_000_000)),
            "10.020 s \u{2013} 12.023 s"
        );
        assert_eq!(
            fmt_window(SimTime(6_003_000_000), SimTime(6_003_000_000)),
            "at 6.003 s"
        );
        // Ends a few µs apart keep both ends apart, with the same decimals.
        assert_eq!(
            fmt_window(SimTime(1_300_000_000), SimTime(1_300_004_000)),
            "1.300000 s \u{2013} 1.300004 s"
        );
        assert_eq!(
            fmt_window(SimTime(1), SimTime(2)),
            "0.000000001 s \u{2013} 0.000000002 s"
        );
    }
}

#[cfg(test)]
mod uniform_time_tests {
    use super::*;
    use crate::evidence::Source;

    fn violation(evidence: &[(u64, &str)], summary: &str, faults: &[&str]) -> Violation {
        Violation {
            invariant: "no_two_accepted_writers",
            from: SimTime(12_060_893_226),
            to: SimTime(17_003_000_000),
            nodes: vec!["client-1".into()],
            summary: summary.into(),
            evidence: evidence
                .iter()
                .map(|(t, text)| Evidence {
                    t: SimTime(*t),
                    node: "client-1".into(),
                    text: text.to_string(),
                    source: Source::Derived,
                })
                .collect(),
            faults: faults.iter().map(|f| f.to_string()).collect(),
        }
    }

    /// A violation's times share one format in its summary and evidence: never "acquired at
    /// 0.002 s after ... acquired at 10.057893226 s", nor `0.002 s` beside `10.057893226 s`.
    #[test]
    fn a_violation_writes_every_time_with_one_number_of_decimals() {
        let v = violation(
            &[
                (2_000_000, "acquired lock"),
                (10_057_893_226, "acquired lock, valid 1.500 s"),
                (12_059_893_226, "accepted a write"),
            ],
            "storage accepted a write of client-1's hold acquired at 0.002 s after a write of \
             the later client-2's hold acquired at 10.057893226 s",
            &["client-1 was paused 2.002 s to 17.002 s"],
        );
        assert_eq!(v.time_decimals(), 3);
        let v = v.with_uniform_times();
        assert_eq!(
            v.summary,
            "storage accepted a write of client-1's hold acquired at 0.002 s after a write of \
             the later client-2's hold acquired at 10.058 s"
        );
        assert_eq!(v.evidence[1].text, "acquired lock, valid 1.500 s");
        assert_eq!(v.window(), "12.061 s \u{2013} 17.003 s");
        let shown = v.to_string();
        assert!(
            shown.contains("       0.002 s  client-1: acquired lock\n"),
            "{shown}"
        );
        assert!(
            shown.contains("      10.058 s  client-1: acquired lock"),
            "{shown}"
        );
        assert!(!shown.contains("10.057893226"), "{shown}");

        // Two different times less than a millisecond apart: 6 decimals for all of them.
        let v = violation(
            &[(2_000_000, "acquired lock"), (2_000_600, "acquired lock")],
            "at 0.002 s and 0.002000600 s; paused for 15.000 s",
            &[],
        );
        assert_eq!(v.time_decimals(), 6);
        let v = v.with_uniform_times();
        assert_eq!(
            v.summary,
            "at 0.002000 s and 0.002001 s; paused for 15.000000 s"
        );
        assert_eq!(v.window(), "12.060893 s \u{2013} 17.003000 s");
    }

    #[test]
    fn time_tokens_are_only_seconds_as_the_engine_writes_them() {
        let toks = |s: &str| -> Vec<u64> { time_tokens(s).into_iter().map(|(_, t)| t).collect() };
        assert_eq!(
            toks("at 2.252295016 s, 6.000 s; 1.000250 s"),
            [2_252_295_016, 6_000_000_000, 1_000_250_000]
        );
        // Not seconds, not 3/6/9 decimals, part of a word or of a wall time.
        assert!(toks("1.5 s, 2.25 ss, v1.000 s, 10.002Z, 4.000 ms, 3.000 sec").is_empty());
        assert_eq!(with_decimals("ends at 6.000 s.", 6), "ends at 6.000000 s.");
    }
}
