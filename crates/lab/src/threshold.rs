//! `sweep --find-threshold PATH=LO..HI`: bisection of one numeric (or duration) parameter for
//! the value where an invariant's violation rate crosses a level.
//!
//! The rule is plain bisection on a monotone response (as in `git bisect`, or the
//! stochastic-root-finding textbooks' deterministic baseline): evaluate the rate at both ends;
//! if they lie on the same side of the level there is no crossing to find; else evaluate the
//! midpoint and keep the half whose ends still straddle the level, until the bracket is one
//! unit wide (integers: 1, durations: 1 ns) or the step budget is spent. Every evaluation runs
//! the same seeds, so the search is deterministic: the same arguments give the same steps.

use crate::sweep::{run_jobs_streaming, Job, STREAM_CHUNK};
use crate::vary::{plan_with_roles, Setting, VaryError};
use splitbrain_check::Outcome;
use splitbrain_scenario::duration::{format_ns, parse_duration_ns};
use splitbrain_scenario::json::Json;
use splitbrain_scenario::seeds::{seeds_iter, SeedRange};
use splitbrain_scenario::Plan;
use std::collections::BTreeMap;

/// A value of the searched parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    /// An integer (ppm, counts).
    Int(i64),
    /// A real number (probabilities).
    Real(f64),
    /// A duration, ns (written with units: `"7500ms"`).
    Duration(u64),
}

impl Num {
    /// The value as it is written into the scenario (durations with their largest exact unit).
    pub fn text(self) -> String {
        match self {
            Num::Int(i) => i.to_string(),
            Num::Real(x) => format!("{x}"),
            Num::Duration(ns) => format_ns(ns),
        }
    }

    /// The values as output shows them, in one style: durations in seconds with 3 decimals,
    /// 6 or 9 where fewer would show two different values alike (`24.969 s and 25.199 s`, not
    /// `24968750us and 25199218750ns`); numbers as [`Num::text`] writes them.
    pub fn shown(values: &[Num]) -> Vec<String> {
        let durations: Vec<u64> = values
            .iter()
            .filter_map(|v| match v {
                Num::Duration(ns) => Some(*ns),
                _ => None,
            })
            .collect();
        let secs =
            |ns: u64, d: usize| splitbrain_check::fmt_secs(splitbrain_engine::SimTime(ns), d);
        let decimals = [3, 6, 9]
            .into_iter()
            .find(|d| {
                let mut seen: Vec<(u64, String)> = Vec::new();
                durations.iter().all(|&ns| {
                    let text = secs(ns, *d);
                    let clash = seen.iter().any(|(v, t)| *v != ns && *t == text);
                    seen.push((ns, text));
                    !clash
                })
            })
            .unwrap_or(9);
        values
            .iter()
            .map(|v| match v {
                Num::Duration(ns) => secs(*ns, decimals),
                other => other.text(),
            })
            .collect()
    }

    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Real(x) => x,
            Num::Duration(ns) => ns as f64,
        }
    }

    /// The midpoint of `[a, b]` in `a`'s kind, or `None` when no value lies strictly between.
    fn mid(a: Num, b: Num) -> Option<Num> {
        match (a, b) {
            (Num::Int(x), Num::Int(y)) => {
                let m = x + (y - x) / 2;
                (m != x && m != y).then_some(Num::Int(m))
            }
            (Num::Duration(x), Num::Duration(y)) => {
                let m = x + (y - x) / 2;
                (m != x && m != y).then_some(Num::Duration(m))
            }
            _ => {
                let (x, y) = (a.as_f64(), b.as_f64());
                let m = x + (y - x) / 2.0;
                (m > x && m < y).then_some(Num::Real(m))
            }
        }
    }
}

impl Search {
    /// Refuses a search of a parameter that the scenario text `src` holds as text (a name, a
    /// role), as a list, an object or true/false: only a number or a duration can be bisected
    /// (`name=1..9` set the scenario's name to "1", "5", "9" and bisected a rate that never
    /// moves). A path the file does not set yet is left to the scenario's validation.
    pub fn check_numeric(&self, src: &str) -> Result<(), VaryError> {
        let kind = match splitbrain_scenario::json::value_at(src, &self.path) {
            None | Some(Json::Number(_)) => return Ok(()),
            Some(Json::String(s))
                if parse_duration_ns(&s).is_ok()
                    || splitbrain_scenario::duration::parse_signed_ns(&s).is_ok() =>
            {
                return Ok(())
            }
            Some(Json::String(s)) => format!("text ({})", serde_json::to_string(&s).unwrap_or(s)),
            Some(Json::Bool(b)) => format!("`{b}`"),
            Some(Json::Null) => "`null`".to_string(),
            Some(Json::Array(_)) => "a list".to_string(),
            Some(Json::Object(_)) => "an object".to_string(),
        };
        Err(VaryError::SearchSyntax(format!(
            "`{}={}..{}`: the file holds {kind} at `{}`, not a number or a duration; only a \
             number or a duration can be bisected",
            self.path,
            self.lo.text(),
            self.hi.text(),
            self.path
        )))
    }
}

/// A parsed `--find-threshold PATH=LO..HI`.
#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    /// Dotted path into the scenario JSON.
    pub path: String,
    /// Low end.
    pub lo: Num,
    /// High end (above `lo`).
    pub hi: Num,
}

impl std::str::FromStr for Search {
    type Err = VaryError;
    fn from_str(s: &str) -> Result<Self, VaryError> {
        let syntax = |why: &str| VaryError::SearchSyntax(format!("`{s}`: {why}"));
        let (path, range) = s.split_once('=').ok_or_else(|| syntax("no `=`"))?;
        let (lo, hi) = range.split_once("..").ok_or_else(|| syntax("no `..`"))?;
        let (path, lo, hi) = (path.trim(), lo.trim(), hi.trim());
        if path.is_empty() {
            return Err(syntax("empty path"));
        }
        let num = |t: &str| -> Option<Num> {
            if let Ok(i) = t.parse::<i64>() {
                return Some(Num::Int(i));
            }
            if let Ok(x) = t.parse::<f64>() {
                return x.is_finite().then_some(Num::Real(x));
            }
            parse_duration_ns(t).ok().map(Num::Duration)
        };
        // A duration beside a bare integer is integer ns, as `--set`/`--vary` read it.
        if let Some([a, b]) = splitbrain_scenario::duration::durations_ns(&[lo, hi]).as_deref() {
            if a >= b {
                return Err(syntax("LO must be below HI"));
            }
            return Ok(Search {
                path: path.to_string(),
                lo: Num::Duration(*a),
                hi: Num::Duration(*b),
            });
        }
        let (lo, hi) = match (num(lo), num(hi)) {
            (Some(a), Some(b)) => (a, b),
            _ => return Err(syntax("LO and HI must be numbers or durations")),
        };
        let (lo, hi) = match (lo, hi) {
            (Num::Duration(_), Num::Duration(_)) | (Num::Int(_), Num::Int(_)) => (lo, hi),
            (Num::Duration(_), _) | (_, Num::Duration(_)) => {
                return Err(syntax("both ends must be durations (a bare integer beside a duration is integer nanoseconds), or both numbers"))
            }
            (a, b) => (Num::Real(a.as_f64()), Num::Real(b.as_f64())),
        };
        if lo.as_f64() >= hi.as_f64() {
            return Err(syntax("LO must be below HI"));
        }
        Ok(Search {
            path: path.to_string(),
            lo,
            hi,
        })
    }
}

/// The rate measured at one value: `violated` of `runs`, and its 95% Wilson interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Probe {
    /// The value.
    pub value: Num,
    /// Runs that violated the invariant.
    pub violated: u64,
    /// Runs that decided it (`holds` or `violated`; inconclusive runs are in neither count,
    /// see [`crate::sweep::violation_rate`]).
    pub runs: u64,
    /// 95% Wilson interval of the rate.
    pub ci: (f64, f64),
}

impl Probe {
    /// `violated / runs` (0 without runs).
    pub fn rate(&self) -> f64 {
        self.violated as f64 / self.runs.max(1) as f64
    }
    /// The side of the level the probe lies on: its rate above the level, or at 1 when the
    /// level is 1 (no rate is above 1: the search finds where every run violates, as at level
    /// 0 it finds where the first runs violate).
    fn above(&self, level: f64) -> bool {
        let rate = self.rate();
        rate > level || (level >= 1.0 && rate >= 1.0)
    }
}

/// The outcome of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    /// Every probe, in the order run.
    pub probes: Vec<Probe>,
    /// The final bracket `(below side, above side)` in value order, if the rate crosses the
    /// level between LO and HI; `None` if both ends lie on the same side.
    pub bracket: Option<(Probe, Probe)>,
}

/// Measures one value (its text as written into the scenario): `(violated, decided runs)`,
/// or why not (no run decided, for one).
pub type Measure<'a> = dyn FnMut(&str) -> Result<(u64, u64), String> + 'a;

/// Bisects `search` for where the rate crosses `level`, measuring with `measure` (one value's
/// text to its violated/runs), at most `steps` midpoints.
pub fn bisect(
    search: &Search,
    level: f64,
    steps: u32,
    measure: &mut Measure<'_>,
) -> Result<Threshold, String> {
    let mut probe = |v: Num| -> Result<Probe, String> {
        let (violated, runs) = measure(&v.text())?;
        Ok(Probe {
            value: v,
            violated,
            runs,
            ci: crate::sweep::wilson(violated, runs),
        })
    };
    let mut lo = probe(search.lo)?;
    let mut hi = probe(search.hi)?;
    let mut probes = vec![lo, hi];
    if lo.above(level) == hi.above(level) {
        return Ok(Threshold {
            probes,
            bracket: None,
        });
    }
    for _ in 0..steps {
        let Some(m) = Num::mid(lo.value, hi.value) else {
            break;
        };
        let p = probe(m)?;
        probes.push(p);
        if p.above(level) == lo.above(level) {
            lo = p;
        } else {
            hi = p;
        }
    }
    Ok(Threshold {
        probes,
        bracket: Some((lo, hi)),
    })
}

/// The invariant a threshold search measures: `asked` (`--invariant`) when the file checks
/// it, else the file's one checked invariant. The error is the sentence to show; `file`
/// names the file in it.
pub fn pick_invariant(base: &Plan, asked: Option<&str>, file: &str) -> Result<String, String> {
    let checked: Vec<String> = splitbrain_scenario::check_spec(&base.scenario)
        .invariants
        .iter()
        .map(|i| i.name().to_string())
        .collect();
    match (asked, checked.as_slice()) {
        (Some(n), _) if checked.iter().any(|c| c == n) => Ok(n.to_string()),
        (Some(n), _) => Err(format!(
            "--invariant {n} is not checked by {file} (it checks {})",
            checked.join(", ")
        )),
        (None, [one]) => Ok(one.clone()),
        (None, _) => Err(format!(
            "{file} checks several invariants ({}): name one with --invariant",
            checked.join(", ")
        )),
    }
}

/// How the runs of one probe value ended for the measured invariant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProbeCounts {
    /// Runs that violated it.
    pub violated: u64,
    /// Runs that decided it (violated or held).
    pub runs: u64,
    /// Runs that could not decide it.
    pub inconclusive: u64,
}

/// The probe runs that hit a bound, over a whole search: how many, and the first one's value,
/// seed and message. A bound makes the search exit 3, as any sweep that hits one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProbeBounds {
    /// Probe runs that hit a bound.
    pub count: u64,
    /// The first: (value, seed, message).
    pub first: Option<(String, u64, String)>,
}

/// Runs the scenario text `src` of `file` (its roles: `roles`) with `path` set to `value` over `seeds` on
/// `threads` threads and counts how `invariant` ended, as the runs end (memory does not grow
/// with the seeds); runs that hit a bound are added to `bounds`. The error is the sentence
/// to show (the value's file does not validate, or a run failed).
pub fn measure_probe(
    (roles, file, src): (&splitbrain_scenario::RoleRegistry, &str, &str),
    (path, value): (&str, &str),
    invariant: &str,
    (seeds, threads): (SeedRange, usize),
    bounds: &mut ProbeBounds,
) -> Result<ProbeCounts, String> {
    let set = [Setting {
        path: path.to_string(),
        value: value.to_string(),
    }];
    let plan = plan_with_roles(roles, file, src, &set).map_err(|e| e.to_string())?;
    let jobs = seeds_iter(seeds, None).map(|seed| Job { plan: 0, seed });
    let mut counts = BTreeMap::<Outcome, u64>::new();
    run_jobs_streaming(
        std::slice::from_ref(&plan),
        &[value.to_string()],
        jobs,
        threads,
        false,
        &|_| {},
        STREAM_CHUNK,
        |_, line| {
            if let Some(o) = line.outcomes.get(invariant) {
                *counts.entry(*o).or_default() += 1;
            }
            if let Some(msg) = &line.bound {
                bounds.count += 1;
                bounds
                    .first
                    .get_or_insert_with(|| (value.to_string(), line.seed, msg.clone()));
            }
            Ok(())
        },
    )
    .map_err(|e| e.to_string())?;
    // Over the runs that decided, as every rate (`violation_rate`).
    let count = |o: Outcome| counts.get(&o).copied().unwrap_or(0);
    let violated = count(Outcome::Violated);
    Ok(ProbeCounts {
        violated,
        runs: violated + count(Outcome::Holds),
        inconclusive: count(Outcome::Inconclusive),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bracket's ends print in one style, seconds with 3 decimals, more only where they
    /// would print alike (not "24968750us and 25199218750ns").
    #[test]
    fn values_are_shown_in_one_time_style() {
        assert_eq!(
            Num::shown(&[Num::Duration(24_968_750_000), Num::Duration(25_199_218_750)]),
            ["24.969 s", "25.199 s"]
        );
        assert_eq!(
            Num::shown(&[
                Num::Duration(1_000_100),
                Num::Duration(1_000_200),
                Num::Int(3)
            ]),
            ["0.001000100 s", "0.001000200 s", "3"]
        );
        assert_eq!(
            Num::shown(&[Num::Duration(1_000_100_000), Num::Duration(1_000_200_000)]),
            ["1.000100 s", "1.000200 s"]
        );
    }

    fn rate_step(at: f64) -> impl FnMut(&str) -> Result<(u64, u64), String> {
        move |text: &str| {
            let x = text
                .parse::<f64>()
                .ok()
                .or_else(|| parse_duration_ns(text).ok().map(|n| n as f64))
                .unwrap();
            Ok((if x >= at { 90 } else { 10 }, 100))
        }
    }

    #[test]
    fn integers_narrow_to_one_unit_around_the_step() {
        let s: Search = "nodes.c.clock.drift_ppm=0..1000".parse().unwrap();
        let t = bisect(&s, 0.5, 20, &mut rate_step(377.0)).unwrap();
        let (a, b) = t.bracket.unwrap();
        assert_eq!((a.value, b.value), (Num::Int(376), Num::Int(377)));
        assert_eq!(a.violated, 10);
        assert_eq!(b.violated, 90);
        // Deterministic: the same search probes the same values.
        let again = bisect(&s, 0.5, 20, &mut rate_step(377.0)).unwrap();
        assert_eq!(t, again);
    }

    #[test]
    fn durations_are_written_with_units_and_the_budget_bounds_steps() {
        let s: Search = "faults.0.for=1s..20s".parse().unwrap();
        let mut seen = Vec::new();
        let mut m = rate_step(7.3e9);
        let t = bisect(&s, 0.5, 3, &mut |v: &str| {
            seen.push(v.to_string());
            m(v)
        })
        .unwrap();
        assert_eq!(seen, vec!["1s", "20s", "10500ms", "5750ms", "8125ms"]);
        let (a, b) = t.bracket.unwrap();
        assert_eq!(
            (a.value, b.value),
            (Num::Duration(5_750_000_000), Num::Duration(8_125_000_000))
        );
    }

    /// `--find-threshold` takes `1s..5000000000` (integer ns beside a duration), as `--vary`
    /// takes `5s,5000000000`.
    #[test]
    fn a_duration_beside_integer_nanoseconds_is_a_duration_range() {
        let s: Search = "duration=1s..5000000000".parse().unwrap();
        assert_eq!(
            (s.lo, s.hi),
            (Num::Duration(1_000_000_000), Num::Duration(5_000_000_000))
        );
        let s: Search = "faults.0.for=0..2s".parse().unwrap();
        assert_eq!(
            (s.lo, s.hi),
            (Num::Duration(0), Num::Duration(2_000_000_000))
        );
    }

    #[test]
    fn no_crossing_is_reported_as_such() {
        let s: Search = "loss=0.0..0.5".parse().unwrap();
        let t = bisect(&s, 0.5, 8, &mut |_| Ok((0, 100))).unwrap();
        assert_eq!(t.bracket, None);
        assert_eq!(t.probes.len(), 2);
    }

    #[test]
    fn bad_ranges_are_refused() {
        for bad in [
            "x=1..",
            "x=5..1",
            "x=1s..5.5",
            "=1..2",
            "x=a..b",
            "x1..2",
            "x=5s..1000",
        ] {
            assert!(bad.parse::<Search>().is_err(), "{bad}");
        }
    }

    /// A text parameter is refused: `--find-threshold name=1..9` would set the scenario's name
    /// to "1", "5", "9" and probe a rate that never moves.
    #[test]
    fn a_text_parameter_is_refused() {
        let src = r#"{"name": "x", "duration": "10s", "faults": [{"at": "2s", "for": "1s"}],
            "network": {"loss": 0.1}, "check": ["single_leader"]}"#;
        let check = |arg: &str| arg.parse::<Search>().unwrap().check_numeric(src);
        let err = check("name=1..9").unwrap_err().to_string();
        assert!(
            err.contains("the file holds text (\"x\") at `name`, not a number or a duration"),
            "{err}"
        );
        assert!(check("check=1..9")
            .unwrap_err()
            .to_string()
            .contains("a list"));
        for ok in [
            "duration=1s..20s",
            "faults.0.for=1s..2s",
            "network.loss=0..0.5",
            "seed=1..9",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
    }

    /// `--level 0` finds where the first runs violate, and `--level 1`, its mirror, where
    /// every run violates (no rate is above 1, so "above the level" would find nothing).
    #[test]
    fn levels_0_and_1_find_the_first_and_the_full_violation() {
        // 0 of 100 below 300, 50 of 100 from 300, 100 of 100 from 700.
        let mut ramp = |text: &str| -> Result<(u64, u64), String> {
            let x: i64 = text.parse().unwrap();
            Ok((
                if x >= 700 {
                    100
                } else if x >= 300 {
                    50
                } else {
                    0
                },
                100,
            ))
        };
        let s: Search = "nodes.c.clock.drift_ppm=0..1000".parse().unwrap();
        let bracket = |level: f64, m: &mut Measure<'_>| {
            let (a, b) = bisect(&s, level, 20, m).unwrap().bracket.unwrap();
            (a.value, b.value)
        };
        assert_eq!(bracket(0.0, &mut ramp), (Num::Int(299), Num::Int(300)));
        assert_eq!(bracket(1.0, &mut ramp), (Num::Int(699), Num::Int(700)));
        assert_eq!(bracket(0.5, &mut ramp), (Num::Int(699), Num::Int(700)));
    }
}
