//! splitbrain in the browser: the scenario runner, the checkers and the view model, compiled
//! to `wasm32-unknown-unknown` and called from the site's pages (`site/`, built by
//! `site/build.sh`).
//!
//! # Interface
//!
//! A plain exported-function interface, JSON text in and JSON text out through the module's
//! linear memory:
//!
//! 1. `sb_input(len) -> ptr`: makes the input buffer `len` bytes long and returns where it
//!    starts; the page writes the UTF-8 request there.
//! 2. `sb_call() -> len`: answers the request ([`answer`]); the answer is `len` bytes.
//! 3. `sb_output() -> ptr`: where the answer starts; the page reads `len` bytes from there.
//!
//! Why not wasm-bindgen: its generated JavaScript must come from a `wasm-bindgen` command
//! whose version matches the crate's exactly, which neither Debian nor these machines provide,
//! and the page needs nothing from it but "string in, string out". Three exports and twenty
//! lines of JavaScript (`site/src/engine.js`) do that, with no generated code to keep in step.
//!
//! # Requests and answers
//!
//! A request ([`Request`]) is a JSON object: the scenario's text (validated exactly as
//! `splitbrain run` validates a file, errors located at line and column of that text), the
//! name it goes by in messages and in the reproduce command, and the seed as a decimal string
//! (a u64 does not fit a JavaScript number). [`answer`] gives either
//! `{"ok":true, "seed", "trace_hash", "lesson", "summary", "view"}` (the same summary as `run --json`, the
//! view page `run --view` writes), or `{"ok":false, "exit":2, "error"}` with the message the
//! command line prints. With `seeds` instead of `seed`, the answer lists each seed's trace
//! hash and whether it ran as expected, without building views (the hash check). With
//! `how_often` (`{"from": "0", "count": 1000}`), the answer is `sweep`'s per-invariant rows
//! over those seeds (violated/decided, rate, 95% Wilson interval), formatted as `sweep`
//! prints them. With `view` and `diverge_from` (another scenario text and seed, the lesson's),
//! the answer's `diverge` is the first event where the two traces differ ([`Divergence`]).
//!
//! The trace hash is the one `splitbrain run` prints: the same engine, protocols and
//! checkers, the same seeded streams; nothing here reads a clock or the OS.

use serde::{Deserialize, Serialize};
use splitbrain_engine::{Recorder, SimTime};
use splitbrain_scenario::{execute_keeping, load_str, Keep, Plan};
use std::cell::RefCell;
use std::rc::Rc;

/// A request to the engine (see the crate docs).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The scenario's name in messages and in the reproduce command (e.g.
    /// `scenarios/05-lease-gc-pause-unfenced.json`).
    pub file: String,
    /// The scenario's JSON text.
    pub scenario: String,
    /// The seed, decimal; absent: the file's own `seed`.
    #[serde(default)]
    pub seed: Option<String>,
    /// Several seeds, decimal: answer each one's hash and outcome only.
    #[serde(default)]
    pub seeds: Option<Vec<String>>,
    /// Build the view page too (default true; false answers the summary only).
    #[serde(default = "yes")]
    pub view: bool,
    /// "How often?": run seeds `from..from+count` and answer each invariant's violation rate
    /// and 95% interval, as `sweep --seeds FROM..TO` prints them.
    #[serde(default)]
    pub how_often: Option<HowOften>,
    /// With a view: the run to compare with (the lesson's), whose first event that differs
    /// from this run's is answered as `diverge` ([`Divergence`]).
    #[serde(default)]
    pub diverge_from: Option<Base>,
}

/// The run a view run is compared with: a scenario's text and seed (decimal; absent: the
/// file's own), named as [`Request::file`] names a scenario.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Base {
    /// The scenario's name in messages.
    pub file: String,
    /// The scenario's JSON text.
    pub scenario: String,
    /// The seed, decimal.
    #[serde(default)]
    pub seed: Option<String>,
}

/// Where two runs part: the first event of the trace (as `run --trace` writes it, one JSON
/// line per event) that differs between them.
#[derive(Debug, Serialize, PartialEq)]
pub struct Divergence {
    /// The event's place in both traces, from 0; `None` when the traces are the same.
    pub index: Option<usize>,
    /// Its true time in this run, ns (the other run's when this one has ended); `None` when
    /// the traces are the same.
    pub t: Option<u64>,
    /// The compared run's event there (its trace line), `None` past its end.
    pub was: Option<String>,
    /// This run's event there (its trace line), `None` past its end.
    pub is: Option<String>,
    /// Events in the compared run and in this one.
    pub events: (usize, usize),
}

/// The first differing event of two traces ([`Divergence`]): the compared run's lines and
/// times (ns), and this run's events as `(line, time)`, made one at a time so a run is
/// serialized only up to where it parts; `is_len` is this run's number of events.
pub fn first_divergence(
    was: (&[String], &[u64]),
    is: impl IntoIterator<Item = (String, u64)>,
    is_len: usize,
) -> Divergence {
    let mut i = 0;
    let mut here = None;
    for (line, t) in is {
        if was.0.get(i) != Some(&line) {
            here = Some((line, t));
            break;
        }
        i += 1;
    }
    let same = here.is_none() && i == was.0.len();
    Divergence {
        index: (!same).then_some(i),
        t: if same {
            None
        } else {
            here.as_ref().map(|h| h.1).or_else(|| was.1.get(i).copied())
        },
        was: if same { None } else { was.0.get(i).cloned() },
        is: here.map(|h| h.0),
        events: (was.0.len(), is_len),
    }
}

/// A seed range for "how often?".
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HowOften {
    /// First seed, decimal.
    pub from: String,
    /// Number of seeds, 1 to [`MAX_HOW_OFTEN`].
    pub count: u64,
}

/// The most seeds one "how often?" request runs.
pub const MAX_HOW_OFTEN: u64 = 10_000;

/// The per-invariant rows of `sweep`'s table for `lines` (the same columns and formats).
fn rate_rows(lines: &[splitbrain_lab::sweep::SeedLine]) -> Vec<String> {
    use splitbrain_lab::sweep::{invariant_stats, pct_or_na};
    let pct = |x: f64| format!("{:.2}%", x * 100.0);
    let refs: Vec<&_> = lines.iter().collect();
    invariant_stats(&refs, 0)
        .iter()
        .map(|s| {
            let ci = s.ci.map_or("n/a".to_string(), |(lo, hi)| {
                format!("[{}, {}]", pct(lo), pct(hi))
            });
            format!(
                "  {:<26}{:>16}  {:>8}  {ci}{}",
                s.name,
                format!("{}/{}", s.violated, s.decided()),
                pct_or_na(s.rate),
                s.notes(),
            )
        })
        .collect()
}

fn yes() -> bool {
    true
}

/// One seed's outcome in a many-seed answer.
#[derive(Debug, Serialize)]
pub struct SeedOutcome {
    /// The seed, decimal.
    pub seed: String,
    /// The trace hash, 16 hex digits, as `run` prints it.
    pub trace_hash: String,
    /// Whether every expectation held (`run`'s exit 0).
    pub as_expected: bool,
    /// The invariants violated in this run.
    pub violated: Vec<&'static str>,
    /// The bound that stopped the run, if one did.
    pub stopped: Option<String>,
}

pub(crate) fn error_answer(exit: u8, error: String) -> String {
    serde_json::json!({ "ok": false, "exit": exit, "error": error }).to_string()
}

fn parse_seed(s: &str) -> Result<u64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("a seed is an integer in 0..={}, found `{s}`", u64::MAX))
}

/// Runs `plan` at `seed` as `splitbrain run` does (hashing every trace record; keeping the
/// events when a view is built).
fn run(
    plan: &Plan,
    seed: u64,
    keep_events: bool,
) -> Result<splitbrain_scenario::RunResult, String> {
    let mut recorder = Recorder::hash_only();
    let keep = if keep_events {
        recorder = recorder.keep_events();
        Keep::All
    } else {
        Keep::Checked
    };
    execute_keeping(plan, seed, Some(recorder), keep).map_err(|e| e.to_string())
}

/// Answers a request given as JSON text (see the crate docs). Never panics on bad input: a
/// malformed request or scenario is an `ok: false` answer.
pub fn answer(request: &str) -> String {
    let req: Request = match serde_json::from_str(request) {
        Ok(r) => r,
        Err(e) => return error_answer(2, format!("bad request to the engine: {e}")),
    };
    let plan = match load_str(&req.file, &req.scenario) {
        Ok(p) => p,
        Err(e) => return error_answer(2, e.to_string()),
    };
    if let Some(h) = &req.how_often {
        let from = match parse_seed(&h.from) {
            Ok(x) => x,
            Err(e) => return error_answer(2, e),
        };
        if h.count == 0 || h.count > MAX_HOW_OFTEN || from.checked_add(h.count - 1).is_none() {
            return error_answer(
                2,
                format!("how often: 1 to {MAX_HOW_OFTEN} seeds, from a seed that leaves room"),
            );
        }
        let mut lines = Vec::with_capacity(h.count as usize);
        for seed in from..=from + (h.count - 1) {
            match splitbrain_lab::sweep::run_seed(&plan, seed, None, false) {
                Ok(l) => lines.push(l),
                Err(e) => return error_answer(1, e.to_string()),
            }
        }
        let matched = lines.iter().filter(|l| l.matches).count();
        return serde_json::json!({
            "ok": true,
            "seeds": format!("{from}..{}", from + h.count),
            "as_expected": matched,
            "rows": rate_rows(&lines),
        })
        .to_string();
    }
    if let Some(seeds) = &req.seeds {
        let mut out = Vec::with_capacity(seeds.len());
        for s in seeds {
            let seed = match parse_seed(s) {
                Ok(x) => x,
                Err(e) => return error_answer(2, e),
            };
            let r = match run(&plan, seed, false) {
                Ok(r) => r,
                Err(e) => return error_answer(1, e),
            };
            out.push(SeedOutcome {
                seed: seed.to_string(),
                trace_hash: hash_of(&r),
                as_expected: r.matches(),
                violated: r
                    .report
                    .results
                    .iter()
                    .filter(|x| !x.verdict.violations().is_empty())
                    .map(|x| x.name)
                    .collect(),
                stopped: r.bound.as_ref().map(|b| b.to_string()),
            });
        }
        return serde_json::json!({ "ok": true, "runs": out }).to_string();
    }
    let seed = match req.seed.as_deref().map(parse_seed).transpose() {
        Ok(s) => s.unwrap_or(plan.scenario.seed),
        Err(e) => return error_answer(2, e),
    };
    let r = match run(&plan, seed, req.view) {
        Ok(r) => r,
        Err(e) => return error_answer(1, e),
    };
    let summary: serde_json::Value =
        serde_json::from_str(&splitbrain_report::summary_json(&r, &req.file, &[]))
            .expect("the summary is JSON");
    let view = req.view.then(|| {
        let window = plan
            .scenario
            .chart
            .as_ref()
            .map(|w| (SimTime(w.from.0.as_nanos()), SimTime(w.to.0.as_nanos())));
        splitbrain_report::view_of_run(&r, window)
            .for_scenario(&plan.scenario)
            .html()
    });
    let diverge = match (&req.diverge_from, req.view) {
        (Some(base), true) => match base_lines(base) {
            Ok(b) => {
                let evs = events_of(&r);
                Some(first_divergence(
                    (&b.0, &b.1),
                    evs.iter().map(line_of),
                    evs.len(),
                ))
            }
            Err(e) => return error_answer(2, format!("the run to compare with: {e}")),
        },
        _ => None,
    };
    serde_json::json!({
        "ok": true,
        "seed": seed.to_string(),
        "trace_hash": hash_of(&r),
        "lesson": plan.scenario.lesson,
        "summary": summary,
        "view": view,
        "diverge": diverge,
    })
    .to_string()
}

/// A run's trace lines (as the recorder writes them) and each event's true time, ns.
type Lines = (Vec<String>, Vec<u64>);
/// What names a compared run: its file, scenario text and seed.
type BaseKey = (String, String, Option<String>);

/// A kept run's events, each as its trace line (as the recorder writes it) and true time, ns.
fn events_of(r: &splitbrain_scenario::RunResult) -> &[splitbrain_scenario::Event] {
    r.trace
        .as_ref()
        .and_then(|t| t.kept.as_deref())
        .unwrap_or(&[])
}
fn line_of(e: &splitbrain_scenario::Event) -> (String, u64) {
    (
        serde_json::to_string(e).expect("a trace event serializes"),
        e.time().0,
    )
}
fn lines_of(r: &splitbrain_scenario::RunResult) -> Lines {
    events_of(r).iter().map(line_of).unzip()
}

/// The compared run's lines and times: the last one asked for is kept, so a student's edits
/// compared with the lesson's run do not run the lesson again each time.
fn base_lines(base: &Base) -> Result<Rc<Lines>, String> {
    let key = (base.file.clone(), base.scenario.clone(), base.seed.clone());
    if let Some(hit) = BASE.with(|b| {
        b.borrow()
            .as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
    }) {
        return Ok(hit);
    }
    let plan = load_str(&base.file, &base.scenario).map_err(|e| e.to_string())?;
    let seed = base
        .seed
        .as_deref()
        .map(parse_seed)
        .transpose()?
        .unwrap_or(plan.scenario.seed);
    let lines = Rc::new(lines_of(&run(&plan, seed, true)?));
    BASE.with(|b| *b.borrow_mut() = Some((key, lines.clone())));
    Ok(lines)
}

fn hash_of(r: &splitbrain_scenario::RunResult) -> String {
    r.trace
        .as_ref()
        .map(|t| format!("{:016x}", t.hash))
        .unwrap_or_default()
}

thread_local! {
    pub(crate) static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    pub(crate) static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The last compared run ([`base_lines`]): its name, then its lines and times.
    static BASE: RefCell<Option<(BaseKey, Rc<Lines>)>> = const { RefCell::new(None) };
}

// The exports (`#[no_mangle]`, which the workspace's `unsafe_code` lint flags) live in their
// own file, the one exception tests/tests/tidy.rs allows besides the engine's prefetch hint.
#[allow(unsafe_code)]
mod exports;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_scenario_is_a_located_error_not_a_panic() {
        let req = serde_json::json!({ "file": "x.json", "scenario": "{\n  \"name\": 3\n}" });
        let a: serde_json::Value = serde_json::from_str(&answer(&req.to_string())).unwrap();
        assert_eq!(a["ok"], false);
        assert_eq!(a["exit"], 2);
        assert!(a["error"].as_str().unwrap().contains("x.json:"), "{a}");
    }

    /// The first differing event of two traces: its place, time and both lines; none for
    /// the same trace; a trace that ends first differs where it ends.
    #[test]
    fn first_divergence_is_the_first_differing_line() {
        let l = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let run = |v: &[(&str, u64)]| {
            v.iter()
                .map(|(x, t)| (x.to_string(), *t))
                .collect::<Vec<_>>()
        };
        let was = l(&["a", "b", "c"]);
        let d = first_divergence((&was, &[1, 5, 6]), run(&[("a", 1), ("x", 2), ("c", 3)]), 3);
        assert_eq!((d.index, d.t), (Some(1), Some(2)));
        assert_eq!((d.was.as_deref(), d.is.as_deref()), (Some("b"), Some("x")));
        let d = first_divergence((&l(&["a"]), &[1]), run(&[("a", 1)]), 1);
        assert_eq!((d.index, d.t, d.was), (None, None, None));
        // This run ends first: it parts at the compared run's next event.
        let d = first_divergence((&l(&["a", "b"]), &[1, 7]), run(&[("a", 1)]), 1);
        assert_eq!(
            (d.index, d.t, d.is, d.events),
            (Some(1), Some(7), None, (2, 1))
        );
        // The compared run ends first.
        let d = first_divergence((&l(&["a"]), &[1]), run(&[("a", 1), ("b", 4)]), 2);
        assert_eq!(
            (d.index, d.t, d.was.as_deref(), d.is.as_deref()),
            (Some(1), Some(4), None, Some("b"))
        );
    }

    /// Lesson 01 with its crash moved 1 s later: `diverge` names the first event whose trace
    /// line differs from the lesson's run (checked against both traces), at that event's
    /// time; the lesson compared with itself does not diverge.
    #[test]
    fn an_edited_lesson_diverges_at_its_first_differing_event() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let text = std::fs::read_to_string(dir.join("01-bully-leader-crash.json")).unwrap();
        let file = "scenarios/01-bully-leader-crash.json";
        let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let at = doc["faults"][0]["at"].as_str().unwrap().to_string();
        let moved = splitbrain_scenario::duration::parse_duration_ns(&at).unwrap() + 1_000_000_000;
        doc["faults"][0]["at"] = format!("{moved}ns").into();
        let edited = serde_json::to_string_pretty(&doc).unwrap();
        let base = serde_json::json!({ "file": file, "scenario": text });
        let ask = |scenario: &str| -> serde_json::Value {
            serde_json::from_str(&answer(
                &serde_json::json!({ "file": file, "scenario": scenario, "diverge_from": base })
                    .to_string(),
            ))
            .unwrap()
        };
        let same = ask(&text);
        assert_eq!(
            same["diverge"]["index"],
            serde_json::Value::Null,
            "{}",
            same["diverge"]
        );
        let a = ask(&edited);
        let d = &a["diverge"];
        let i = d["index"].as_u64().expect("the runs differ") as usize;
        let lines = |scenario: &str| {
            let plan = load_str(file, scenario).unwrap();
            lines_of(&run(&plan, plan.scenario.seed, true).unwrap())
        };
        let (was, _) = lines(&text);
        let (is, times) = lines(&edited);
        assert_eq!(was[..i], is[..i]);
        assert_ne!(was[i], is[i]);
        assert_eq!(d["was"], was[i].as_str());
        assert_eq!(d["is"], is[i].as_str());
        assert_eq!(d["t"], times[i]);
        assert!(
            times[i] <= moved,
            "it parts no later than the moved crash: {}",
            times[i]
        );
    }

    #[test]
    fn a_bad_request_is_an_error_answer() {
        let a: serde_json::Value = serde_json::from_str(&answer("not json")).unwrap();
        assert_eq!(a["ok"], false);
    }

    /// The hash with the view built (every event kept) is the hash without (the checked
    /// observations only), at the lesson's seed and another, and the seed comes back as text.
    #[test]
    fn the_view_does_not_change_the_hash() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        for stem in [
            "02-bully-worst-case",
            "06-lease-gc-pause-fenced",
            "13-redlock-clock-step",
        ] {
            let text = std::fs::read_to_string(dir.join(format!("{stem}.json"))).unwrap();
            let file = format!("scenarios/{stem}.json");
            let one: serde_json::Value = serde_json::from_str(&answer(
                &serde_json::json!({ "file": file, "scenario": text }).to_string(),
            ))
            .unwrap();
            assert_eq!(one["ok"], true, "{one}");
            assert!(one["view"].as_str().unwrap().starts_with("<!DOCTYPE html>"));
            let seed = one["seed"].as_str().unwrap().to_string();
            let many: serde_json::Value = serde_json::from_str(&answer(
                &serde_json::json!({ "file": file, "scenario": text, "seeds": [seed, "18446744073709551615"] })
                    .to_string(),
            ))
            .unwrap();
            assert_eq!(many["runs"][0]["trace_hash"], one["trace_hash"], "{stem}");
            assert_eq!(many["runs"][1]["seed"], "18446744073709551615");
            let max: serde_json::Value = serde_json::from_str(&answer(
                &serde_json::json!({ "file": file, "scenario": text, "seed": "18446744073709551615" })
                    .to_string(),
            ))
            .unwrap();
            assert_eq!(many["runs"][1]["trace_hash"], max["trace_hash"], "{stem}");
        }
    }
}
