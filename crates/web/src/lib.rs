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
//! prints them.
//!
//! The trace hash is the one `splitbrain run` prints: the same engine, protocols and
//! checkers, the same seeded streams; nothing here reads a clock or the OS.

use serde::{Deserialize, Serialize};
use splitbrain_engine::{Recorder, SimTime};
use splitbrain_scenario::{execute_keeping, load_str, Keep, Plan};
use std::cell::RefCell;

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
    serde_json::json!({
        "ok": true,
        "seed": seed.to_string(),
        "trace_hash": hash_of(&r),
        "lesson": plan.scenario.lesson,
        "summary": summary,
        "view": view,
    })
    .to_string()
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
