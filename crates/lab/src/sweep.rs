//! Seed sweeps: one run per seed (the file's faults plus the nemesis drawn from each seed), in
//! parallel, collected in seed order; the results file (JSON Lines) and its merge across
//! shards; violation rates with Wilson score intervals.
//!
//! The results of a sweep do not depend on how many threads ran it: every run is a pure
//! function of (scenario, seed), and results are collected by position, never by completion.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use splitbrain_check::{Outcome, Verdict};
use splitbrain_engine::Recorder;
use splitbrain_scenario::execute::fnv1a;
use splitbrain_scenario::execute::{execute_outcomes, Keep};
use splitbrain_scenario::plan::Plan;
use splitbrain_scenario::schema::{RateExpectation, Scenario};
use splitbrain_scenario::seeds::{SeedRange, Shard};
use std::collections::BTreeMap;
use std::fmt;

/// Version of the sweep results format.
pub const SWEEP_FORMAT: u32 = 1;

/// Key metrics of one run, for the results file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineMetrics {
    /// Faults applied (file, triggers and nemesis).
    pub faults: u64,
    /// Messages sent.
    pub sent: u64,
    /// Messages dropped.
    pub dropped: u64,
    /// `LeaderClaim`s by a new node.
    pub leader_changes: u64,
    /// Locks acquired.
    pub acquisitions: u64,
    /// Writes the storage accepted.
    pub writes_accepted: u64,
    /// Writes the storage rejected.
    pub writes_rejected: u64,
}

/// One line of the results file: one seed (of one `--vary` value).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedLine {
    /// The `--vary` value this run used, if varying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The seed.
    pub seed: u64,
    /// Outcome per checked invariant.
    pub outcomes: BTreeMap<String, Outcome>,
    /// True time of the first violation per violated invariant, ns.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub first_violation_ns: BTreeMap<String, u64>,
    /// Invariants that held vacuously (their premise never occurred), in name order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vacuous: Vec<String>,
    /// Whether every outcome matched the file's expectation and no bound was hit.
    pub matches: bool,
    /// The bound the run hit, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<String>,
    /// Trace events (the lines `run --trace` would write after its header).
    pub events: u64,
    /// Events the engine processed (stale timers included).
    pub sim_events: u64,
    /// The trace hash (FNV-1a 64 of the event lines, the hash `run --trace` prints), 16 hex
    /// digits; only when the sweep was asked for it (`sweep --hash`): hashing serialises
    /// every event and costs most of a short run's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// Key metrics.
    pub metrics: LineMetrics,
}

/// Runs `plan` with `seed`, counting the trace's events and, if `hash`, hashing them.
pub fn run_seed(
    plan: &Plan,
    seed: u64,
    value: Option<&str>,
    hash: bool,
) -> std::io::Result<SeedLine> {
    let recorder = if hash {
        Recorder::hash_only()
    } else {
        Recorder::count_only()
    };
    // A line reads outcomes and windows only: the violations' words are not made.
    let r = execute_outcomes(plan, seed, Some(recorder), Keep::Checked)?;
    let trace = r.trace.as_ref().expect("a recorder was given");
    let m = &r.report.metrics;
    let outcomes = r
        .report
        .results
        .iter()
        .map(|x| (x.name.to_string(), x.verdict.outcome()))
        .collect();
    let first_violation_ns = r
        .report
        .results
        .iter()
        .filter_map(|x| match &x.verdict {
            Verdict::Violated(v) => v.iter().map(|v| v.from.0).min().map(|t| (x.name.into(), t)),
            _ => None,
        })
        .collect();
    let mut vacuous: Vec<String> = r
        .report
        .results
        .iter()
        .filter(|x| x.vacuous.is_some())
        .map(|x| x.name.to_string())
        .collect();
    vacuous.sort();
    let counts = m.messages.values();
    Ok(SeedLine {
        value: value.map(str::to_string),
        seed,
        outcomes,
        first_violation_ns,
        vacuous,
        matches: r.matches(),
        bound: r.bound.as_ref().map(|b| b.to_string()),
        events: trace.events,
        sim_events: r.stats.events,
        hash: hash.then(|| format!("{:016x}", trace.hash)),
        metrics: LineMetrics {
            faults: r.record.faults.len() as u64,
            sent: counts.clone().map(|c| c.sent).sum(),
            dropped: counts.map(|c| c.dropped).sum(),
            leader_changes: m.leader_changes,
            acquisitions: m.acquisitions,
            writes_accepted: m.writes_accepted,
            writes_rejected: m.writes_rejected,
        },
    })
}

/// One run to do: which plan (index into the plans) and which seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// Index of the plan (the `--vary` value; 0 without `--vary`).
    pub plan: usize,
    /// The seed.
    pub seed: u64,
}

/// Runs every job on a pool of `threads` threads and returns the lines in job order, whatever
/// the thread count. `values[i]` labels plan `i` (empty without `--vary`). `hash`: give
/// each line its trace hash. `on_done` is called from the worker threads after each run (for
/// a progress bar).
pub fn run_jobs(
    plans: &[Plan],
    values: &[String],
    jobs: &[Job],
    threads: usize,
    hash: bool,
    on_done: &(dyn Fn(&SeedLine) + Sync),
) -> std::io::Result<Vec<SeedLine>> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("sweep-{i}"))
        .build()
        .map_err(std::io::Error::other)?;
    pool.install(|| {
        jobs.par_iter()
            .map(|j| {
                let line = run_seed(
                    &plans[j.plan],
                    j.seed,
                    values.get(j.plan).map(String::as_str),
                    hash,
                )?;
                on_done(&line);
                Ok(line)
            })
            .collect()
    })
}

/// Jobs run at once by [`run_jobs_streaming`] between two hand-overs of results: large
/// enough that the threads rarely wait for one another at a chunk's end, small enough that
/// the lines held are a few megabytes whatever the seed count.
pub const STREAM_CHUNK: usize = 4096;

/// Runs every job of `jobs` on a pool of `threads` threads and hands each line, with its job,
/// to `each` in job order, whatever the thread count, as [`run_jobs`] returns them; the lines
/// are never all held at once, so memory does not grow with the number of jobs: `chunk` jobs
/// run at once ([`STREAM_CHUNK`] in the CLI), and at most `chunk` lines are held. `each` runs on the calling thread; its error stops the sweep
/// and is returned. `on_done` is called from the worker threads after each run (for a
/// progress bar).
#[allow(clippy::too_many_arguments)]
pub fn run_jobs_streaming(
    plans: &[Plan],
    values: &[String],
    jobs: impl Iterator<Item = Job>,
    threads: usize,
    hash: bool,
    on_done: &(dyn Fn(&SeedLine) + Sync),
    chunk: usize,
    mut each: impl FnMut(Job, SeedLine) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let chunk_len = chunk.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("sweep-{i}"))
        .build()
        .map_err(std::io::Error::other)?;
    let mut jobs = jobs.peekable();
    let mut chunk: Vec<Job> = Vec::with_capacity(chunk_len);
    while jobs.peek().is_some() {
        chunk.clear();
        chunk.extend(jobs.by_ref().take(chunk_len));
        let lines: Vec<SeedLine> = pool.install(|| {
            chunk
                .par_iter()
                .map(|j| {
                    let line = run_seed(
                        &plans[j.plan],
                        j.seed,
                        values.get(j.plan).map(String::as_str),
                        hash,
                    )?;
                    on_done(&line);
                    Ok(line)
                })
                .collect::<std::io::Result<_>>()
        })?;
        for (job, line) in chunk.iter().zip(lines) {
            each(*job, line)?;
        }
    }
    Ok(())
}

/// The `--vary` part of a results header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VaryHeader {
    /// Dotted path.
    pub path: String,
    /// Values, in the order swept.
    pub values: Vec<String>,
}

/// The first line of a results file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepHeader {
    /// Results format version ([`SWEEP_FORMAT`]).
    pub splitbrain_sweep: u32,
    /// Version of splitbrain that wrote it.
    pub version: String,
    /// Scenario name.
    pub name: String,
    /// FNV-1a 64 of the scenario as splitbrain reads it (compact JSON), 16 hex digits: shards
    /// of one sweep must agree on it.
    pub scenario_hash: String,
    /// The whole seed range (`A..B`), not just this shard's part.
    pub seeds: String,
    /// The parameter swept, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vary: Option<VaryHeader>,
    /// This file's shard (`K/N`); absent for a whole sweep or a merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Whether every line carries its trace hash (`sweep --hash`); absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace_hashes: bool,
}

/// The content hash of a scenario (its compact JSON).
pub fn scenario_hash(s: &Scenario) -> String {
    let json = serde_json::to_string(s).expect("a scenario serialises");
    format!("{:016x}", fnv1a(json.as_bytes()))
}

impl SweepHeader {
    /// The header of a sweep of `base` over `range` (without trace hashes; see
    /// [`SweepHeader::with_trace_hashes`]).
    pub fn new(
        base: &Scenario,
        range: SeedRange,
        vary: Option<VaryHeader>,
        shard: Option<Shard>,
    ) -> Self {
        SweepHeader {
            splitbrain_sweep: SWEEP_FORMAT,
            version: env!("CARGO_PKG_VERSION").to_string(),
            name: base.name.clone(),
            scenario_hash: scenario_hash(base),
            seeds: range.to_string(),
            vary,
            shard: shard.map(|s| s.to_string()),
            trace_hashes: false,
        }
    }

    /// The same header, saying whether the lines carry trace hashes.
    pub fn with_trace_hashes(self, trace_hashes: bool) -> Self {
        SweepHeader {
            trace_hashes,
            ..self
        }
    }
}

/// The results file: header line, then one line per run in job order.
pub fn results_jsonl(header: &SweepHeader, lines: &[SeedLine]) -> String {
    let mut out = header_jsonl(header);
    for l in lines {
        out.push_str(&line_jsonl(l));
    }
    out
}

/// The header line of a results file, with its newline.
pub fn header_jsonl(header: &SweepHeader) -> String {
    let mut out = serde_json::to_string(header).expect("header serialises");
    out.push('\n');
    out
}

/// One run's line of a results file, with its newline (a streaming writer writes the header
/// line, then these in job order: the bytes of [`results_jsonl`]).
pub fn line_jsonl(line: &SeedLine) -> String {
    let mut out = serde_json::to_string(line).expect("line serialises");
    out.push('\n');
    out
}

/// Why results files cannot be read or merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResultsError {
    /// A file is not a results file or is damaged.
    #[error("{file}: line {line}: {reason}")]
    Malformed {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The files do not belong to one sweep, or do not cover it exactly.
    #[error("{0}")]
    Mismatch(String),
}

/// A parsed results file.
#[derive(Clone, Debug, PartialEq)]
pub struct Results {
    /// Its header.
    pub header: SweepHeader,
    /// Its lines.
    pub lines: Vec<SeedLine>,
}

/// Parses a results file.
///
/// Long because the header, each line's shape and each line's invariant names are checked in one
/// pass, every error located at its line.
pub fn parse_results(file: &str, text: &str) -> Result<Results, ResultsError> {
    let bad = |line: usize, reason: String| ResultsError::Malformed {
        file: file.to_string(),
        line,
        reason,
    };
    let mut it = text.lines().enumerate();
    let (_, first) = it
        .next()
        .ok_or_else(|| bad(1, "empty file: not a sweep results file".into()))?;
    // serde_json ends its message with " at line 1 column C", the line within the line.
    let reason = |e: serde_json::Error| splitbrain_scenario::error::json_line_reason(&e);
    let raw: serde_json::Value = serde_json::from_str(first).map_err(|e| {
        // A whole JSON document (a scenario given to merge) is no damaged line: say what it is.
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(doc) if doc.get("nodes").is_some() => bad(
                1,
                "a scenario file, not a sweep results file (`splitbrain sweep FILE --out \
                 r.jsonl` writes one)"
                    .into(),
            ),
            Ok(_) => bad(
                1,
                "a JSON document over several lines, not a sweep results file (JSON Lines: \
                 one object a line, as `splitbrain sweep --out` writes)"
                    .into(),
            ),
            Err(_) => bad(1, format!("not a sweep results file: {}", reason(e))),
        }
    })?;
    match raw.get("splitbrain_sweep").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(SWEEP_FORMAT) => {}
        Some(v) => {
            return Err(bad(
                1,
                format!("results format {v}, this splitbrain reads format {SWEEP_FORMAT}"),
            ))
        }
        None => {
            return Err(bad(
                1,
                "not a sweep results file (no `splitbrain_sweep`)".into(),
            ))
        }
    }
    let header: SweepHeader =
        serde_json::from_value(raw).map_err(|e| bad(1, format!("bad header: {e}")))?;
    let mut lines = Vec::new();
    // The invariants of the first line of each `--vary` value, with that line's number: every
    // run of one value checks the same invariants.
    let mut checked: Vec<(Option<String>, Vec<String>, usize)> = Vec::new();
    for (i, l) in it {
        if l.is_empty() {
            continue;
        }
        let line: SeedLine = serde_json::from_str(l).map_err(|e| bad(i + 1, reason(e)))?;
        let names: Vec<String> = line.outcomes.keys().cloned().collect();
        invariant_names_ok(&line, &names).map_err(|why| bad(i + 1, why))?;
        match checked.iter().find(|(v, _, _)| *v == line.value) {
            Some((_, first, at)) if *first != names => {
                let missing: Vec<&str> = first
                    .iter()
                    .filter(|n| !names.contains(n))
                    .map(String::as_str)
                    .collect();
                let extra: Vec<&str> = names
                    .iter()
                    .filter(|n| !first.contains(n))
                    .map(String::as_str)
                    .collect();
                let mut what = Vec::new();
                if !missing.is_empty() {
                    what.push(format!("lacks the outcome of {}", missing.join(", ")));
                }
                if !extra.is_empty() {
                    what.push(format!("has an outcome of {}", extra.join(", ")));
                }
                return Err(bad(
                    i + 1,
                    format!(
                        "seed {} {}, unlike line {at} (the first run{}): every run of a sweep \
                         checks the same invariants",
                        line.seed,
                        what.join(" and "),
                        line.value
                            .as_deref()
                            .map(|v| format!(" of value {v}"))
                            .unwrap_or_default()
                    ),
                ));
            }
            Some(_) => {}
            None => checked.push((line.value.clone(), names, i + 1)),
        }
        lines.push(line);
    }
    Ok(Results { header, lines })
}

/// Checks the invariant names of a results line: at least one outcome, every name one of
/// [`splitbrain_check::Invariant::NAMES`], and every first violation or vacuous pass named
/// among its outcomes (violated, or held, respectively).
fn invariant_names_ok(line: &SeedLine, names: &[String]) -> Result<(), String> {
    use splitbrain_check::{Invariant, Outcome};
    if names.is_empty() {
        return Err(format!(
            "seed {} has no invariant outcome: every run checks at least one invariant",
            line.seed
        ));
    }
    let known = |n: &str| Invariant::NAMES.contains(&n);
    let unknown = |n: &str| {
        let hint = splitbrain_scenario::error::did_you_mean(n, Invariant::NAMES.iter().copied())
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        format!(
            "seed {}: `{n}` is not an invariant splitbrain checks{hint}",
            line.seed
        )
    };
    for n in names {
        if !known(n) {
            return Err(unknown(n));
        }
    }
    for n in line.first_violation_ns.keys() {
        if line.outcomes.get(n) != Some(&Outcome::Violated) {
            return Err(format!(
                "seed {}: a first violation of `{n}`, which the line does not say is violated",
                line.seed
            ));
        }
    }
    for n in &line.vacuous {
        if line.outcomes.get(n) != Some(&Outcome::Holds) {
            return Err(format!(
                "seed {}: `{n}` held vacuously, which the line does not say holds",
                line.seed
            ));
        }
    }
    Ok(())
}

/// Merges the shards of one sweep into exactly the file one unsharded sweep writes. Every
/// shard `K/N` must be present once, all with the same N, scenario, seed range, `--vary`
/// and version; every seed must be present once.
///
/// Long because each rule of a merge (one N, one header, every shard once, every seed once) has its
/// own error.
pub fn merge_results(files: &[(String, String)]) -> Result<String, ResultsError> {
    if files.is_empty() {
        return Err(ResultsError::Mismatch("nothing to merge".into()));
    }
    let parsed: Vec<(String, Results)> = files
        .iter()
        .map(|(f, t)| parse_results(f, t).map(|r| (f.clone(), r)))
        .collect::<Result<_, _>>()?;
    let (first_file, first) = &parsed[0];
    let base = SweepHeader {
        shard: None,
        ..first.header.clone()
    };
    let mut shards: BTreeMap<u64, String> = BTreeMap::new();
    let mut n_total = None;
    for (f, r) in &parsed {
        let h = SweepHeader {
            shard: None,
            ..r.header.clone()
        };
        if h != base {
            return Err(ResultsError::Mismatch(format!(
                "{f} and {first_file} are not from the same sweep (scenario, seeds, --vary, --hash or version differ)"
            )));
        }
        let shard: Shard = match &r.header.shard {
            Some(s) => s
                .parse()
                .map_err(|e| ResultsError::Mismatch(format!("{f}: {e}")))?,
            None => Shard { k: 0, n: 1 },
        };
        match n_total {
            None => n_total = Some(shard.n),
            Some(n) if n != shard.n => {
                return Err(ResultsError::Mismatch(format!(
                    "{f} is shard {shard} but others are out of {n}"
                )))
            }
            _ => {}
        }
        if let Some(other) = shards.insert(shard.k, f.clone()) {
            return Err(ResultsError::Mismatch(format!(
                "shard {shard} appears twice: {other} and {f}"
            )));
        }
    }
    let n = n_total.expect("at least one file");
    let missing: Vec<String> = (0..n)
        .filter(|k| !shards.contains_key(k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(ResultsError::Mismatch(format!(
            "missing shard(s): {}",
            missing.join(", ")
        )));
    }
    let range: SeedRange = base
        .seeds
        .parse()
        .map_err(|e: String| ResultsError::Mismatch(format!("{first_file}: {e}")))?;
    let values: Vec<Option<String>> = match &base.vary {
        Some(v) => v.values.iter().cloned().map(Some).collect(),
        None => vec![None],
    };
    // Index every line by (value index, seed); the unsharded order is exactly that.
    let mut by_key: BTreeMap<(usize, u64), SeedLine> = BTreeMap::new();
    for (f, r) in &parsed {
        for l in &r.lines {
            let vi = values.iter().position(|v| *v == l.value).ok_or_else(|| {
                ResultsError::Mismatch(format!("{f}: seed {} has an unknown --vary value", l.seed))
            })?;
            if !range.contains(l.seed) {
                return Err(ResultsError::Mismatch(format!(
                    "{f}: seed {} is outside {range}",
                    l.seed
                )));
            }
            if by_key.insert((vi, l.seed), l.clone()).is_some() {
                return Err(ResultsError::Mismatch(format!(
                    "{f}: seed {} appears twice",
                    l.seed
                )));
            }
        }
    }
    let expected = u128::from(range.len()) * values.len() as u128;
    if by_key.len() as u128 != expected {
        return Err(ResultsError::Mismatch(format!(
            "the shards hold {} runs, the sweep has {expected}: a shard is incomplete",
            by_key.len()
        )));
    }
    let lines: Vec<SeedLine> = by_key.into_values().collect();
    Ok(results_jsonl(&base, &lines))
}

/// A 95% Wilson score interval for `k` successes in `n` trials (`(0, 1)` for `n = 0`).
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At k = 0 the lower bound is exactly 0 and at k = n the upper exactly 1; the float
    // arithmetic leaves noise there (2e-19 for 0 of 1000), printed as such in a CSV.
    let lo = if k == 0.0 {
        0.0
    } else {
        (center - half).max(0.0)
    };
    let hi = if k == n {
        1.0
    } else {
        (center + half).min(1.0)
    };
    (lo, hi)
}

/// A violation rate and its 95% Wilson interval over the runs that decided (`violated` of
/// `decided`, the runs whose outcome was `holds` or `violated`), or `None` when no run
/// decided. The one rule for every rate splitbrain prints (`sweep`, `merge`, `expect_rate`,
/// `--find-threshold`, `coverage`, `compare`): an inconclusive run (stopped at a bound, or too
/// short for a liveness property) shows neither that the invariant holds nor that it fails,
/// so it is in neither the numerator nor the denominator.
pub fn violation_rate(violated: u64, decided: u64) -> Option<(f64, (f64, f64))> {
    assert!(
        violated <= decided,
        "{violated} violated of {decided} decided"
    );
    (decided > 0).then(|| (violated as f64 / decided as f64, wilson(violated, decided)))
}

/// A rate as a percentage with two decimals, or `n/a` when no run decided.
pub fn pct_or_na(rate: Option<f64>) -> String {
    rate.map_or("n/a".to_string(), |x| format!("{:.2}%", x * 100.0))
}

/// Violation statistics of one invariant over a set of runs.
#[derive(Clone, Debug, PartialEq)]
pub struct InvariantStats {
    /// Invariant name.
    pub name: String,
    /// Runs that checked it.
    pub runs: u64,
    /// Runs that violated it.
    pub violated: u64,
    /// Runs where it was inconclusive.
    pub inconclusive: u64,
    /// Runs where it held vacuously (its premise never occurred: nothing written, elected or
    /// acquired); they count as `holds` in the rate, so the tables say how many there were.
    pub vacuous: u64,
    /// `violated / decided` (see [`violation_rate`]); `None` when no run decided.
    pub rate: Option<f64>,
    /// 95% Wilson score interval of the rate over the decided runs; `None` when none decided.
    pub ci: Option<(f64, f64)>,
    /// The first few violating seeds, ascending.
    pub first_seeds: Vec<u64>,
}

impl InvariantStats {
    /// Runs that decided: `holds` or `violated`, not `inconclusive`.
    pub fn decided(&self) -> u64 {
        self.runs - self.inconclusive
    }

    /// What the `violated` and rate columns do not show, for the end of a table row:
    /// `"  (2 inconclusive)  (5 vacuous)"`, each part only when its count is not zero.
    pub fn notes(&self) -> String {
        let mut out = String::new();
        if self.inconclusive > 0 {
            out.push_str(&format!("  ({} inconclusive)", self.inconclusive));
        }
        if self.vacuous > 0 {
            out.push_str(&format!("  ({} vacuous)", self.vacuous));
        }
        out
    }
}

/// The judgement of one `expect_rate` entry over a sweep.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RateJudgement {
    /// Invariant name.
    pub invariant: String,
    /// The file's bounds.
    pub expected: RateExpectation,
    /// Runs that violated it.
    pub violated: u64,
    /// Runs that decided it (`holds` or `violated`): the rate's denominator.
    pub runs: u64,
    /// Runs where it was inconclusive (in neither count of the rate).
    pub inconclusive: u64,
    /// Runs where it held vacuously (its premise never occurred): counted in `runs` as
    /// `holds`, by the rule every rate follows ([`violation_rate`]), and named apart so a
    /// reader sees how much of the rate they make.
    pub vacuous: u64,
    /// 95% Wilson score interval of the violation rate over the decided runs; `None` when
    /// none decided.
    pub ci: Option<(f64, f64)>,
    /// Whether the interval is compatible with the bounds: its lower bound is not above
    /// `violated_at_most` and its upper bound not below `violated_at_least`. A rate no run
    /// decided meets no bound.
    pub ok: bool,
    /// Whether the judgement would differ if the vacuous runs were left out of the rate
    /// (`false` when no run was vacuous).
    pub vacuous_decides: bool,
}

/// Whether a violation rate with interval `ci` meets `expected`'s bounds (`None`: no run
/// decided, which meets no bound).
fn meets(expected: &RateExpectation, ci: Option<(f64, f64)>) -> bool {
    ci.is_some_and(|ci| {
        expected.violated_at_most.map_or(true, |hi| ci.0 <= hi)
            && expected.violated_at_least.map_or(true, |lo| ci.1 >= lo)
    })
}

impl RateJudgement {
    /// Warnings for a judgement that passes for a weak reason, one line each, empty when
    /// there is none:
    /// - a `violated_at_least` bound met although the observed rate is below it (0
    ///   violations, say): the interval over this few runs is too wide to reject the claim,
    ///   which more seeds may well do;
    /// - vacuous runs, counted as `holds`, that decide the judgement: without them it would
    ///   be the other way.
    pub fn warnings(&self) -> Vec<String> {
        let pct = |x: f64| format!("{:.2}%", x * 100.0);
        let mut out = Vec::new();
        if let (true, Some(lo)) = (self.ok, self.expected.violated_at_least) {
            // `ok` implies runs > 0.
            if (self.violated as f64) < lo * self.runs as f64 {
                let observed = if self.violated == 0 {
                    format!("0 of {} runs violated", self.runs)
                } else {
                    format!(
                        "{} of {} runs violated ({}, below {})",
                        self.violated,
                        self.runs,
                        pct(self.violated as f64 / self.runs as f64),
                        pct(lo)
                    )
                };
                out.push(format!(
                    "warning: `violated_at_least` {} passes only because {} runs cannot reject \
                     it; {observed} (more seeds, in `rate_seeds` or `--seeds`, may reject it)",
                    pct(lo),
                    self.runs
                ));
            }
        }
        if self.vacuous_decides {
            out.push(format!(
                "warning: {} of {} runs held vacuously and count as holds; without them the \
                 judgement would be {}",
                self.vacuous,
                self.runs,
                if self.ok { "MISMATCH" } else { "ok" }
            ));
        }
        out
    }
}

impl fmt::Display for RateJudgement {
    /// "lock_progress violated 3/1000, 95% CI [0.10%, 0.88%]: at most 1.00% ok".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |x: f64| format!("{:.2}%", x * 100.0);
        let mut bounds = Vec::new();
        if let Some(lo) = self.expected.violated_at_least {
            bounds.push(format!("at least {}", pct(lo)));
        }
        if let Some(hi) = self.expected.violated_at_most {
            bounds.push(format!("at most {}", pct(hi)));
        }
        let ci = match self.ci {
            Some((lo, hi)) => format!("95% CI [{}, {}]", pct(lo), pct(hi)),
            None => "rate n/a (no run decided)".to_string(),
        };
        let mut inconclusive = if self.inconclusive > 0 {
            format!(" ({} inconclusive)", self.inconclusive)
        } else {
            String::new()
        };
        if self.vacuous > 0 {
            inconclusive.push_str(&format!(" ({} vacuous, counted as holds)", self.vacuous));
        }
        write!(
            f,
            "{} violated {}/{}{inconclusive}, {ci}; expected {}: {}",
            self.invariant,
            self.violated,
            self.runs,
            bounds.join(" and "),
            if self.ok { "ok" } else { "MISMATCH" }
        )
    }
}

/// Judges the scenario's `expect_rate` over `lines` (one `--vary` value), in name order. An
/// expectation fails when the 95% Wilson interval of the violation rate over the decided runs
/// ([`violation_rate`]) lies wholly above `violated_at_most` (its lower bound is above it) or
/// wholly below `violated_at_least`, or when no run decided.
pub fn judge_rates(scenario: &Scenario, lines: &[&SeedLine]) -> Vec<RateJudgement> {
    judge_rates_of(scenario, &invariant_stats(lines, 0))
}

/// [`judge_rates`] from the per-invariant counts of the runs ([`invariant_stats`] or a
/// [`StatsTally`]), which is all a judgement reads: a sweep judges without holding its lines.
/// An invariant no run checked has no decided run.
pub fn judge_rates_of(scenario: &Scenario, stats: &[InvariantStats]) -> Vec<RateJudgement> {
    scenario
        .expect_rate
        .iter()
        .map(|(name, expected)| {
            let s = stats.iter().find(|s| &s.name == name);
            let violated = s.map_or(0, |s| s.violated);
            let runs = s.map_or(0, InvariantStats::decided);
            let vacuous = s.map_or(0, |s| s.vacuous);
            let ci = violation_rate(violated, runs).map(|(_, ci)| ci);
            let ok = meets(expected, ci);
            let without_vacuous = violation_rate(violated, runs - vacuous).map(|(_, ci)| ci);
            RateJudgement {
                invariant: name.clone(),
                expected: *expected,
                violated,
                runs,
                inconclusive: s.map_or(0, |s| s.inconclusive),
                vacuous,
                ci,
                ok,
                vacuous_decides: vacuous > 0 && meets(expected, without_vacuous) != ok,
            }
        })
        .collect()
}

/// Per-invariant statistics of `lines` (one `--vary` value), invariants in name order;
/// `first_k` failing seeds each.
pub fn invariant_stats(lines: &[&SeedLine], first_k: usize) -> Vec<InvariantStats> {
    let mut tally = StatsTally::new(first_k);
    for l in lines {
        tally.add(l);
    }
    tally.finish()
}

/// [`invariant_stats`] fed one line at a time: counts per invariant and the first `first_k`
/// failing seeds, so a sweep keeps what it prints, not its lines. Lines are added in seed
/// order (the first failing seeds are the lowest).
#[derive(Clone, Debug, Default)]
pub struct StatsTally {
    by: BTreeMap<String, InvariantStats>,
    first_k: usize,
}

impl StatsTally {
    /// An empty tally keeping `first_k` failing seeds per invariant.
    pub fn new(first_k: usize) -> Self {
        StatsTally {
            by: BTreeMap::new(),
            first_k,
        }
    }

    /// Counts one run.
    pub fn add(&mut self, l: &SeedLine) {
        for (name, o) in &l.outcomes {
            let s = match self.by.get_mut(name) {
                Some(s) => s,
                None => self.by.entry(name.clone()).or_insert(InvariantStats {
                    name: name.clone(),
                    runs: 0,
                    violated: 0,
                    inconclusive: 0,
                    vacuous: 0,
                    rate: None,
                    ci: None,
                    first_seeds: Vec::new(),
                }),
            };
            s.runs += 1;
            match o {
                Outcome::Violated => {
                    s.violated += 1;
                    if s.first_seeds.len() < self.first_k {
                        s.first_seeds.push(l.seed);
                    }
                }
                Outcome::Inconclusive => s.inconclusive += 1,
                Outcome::Holds => {
                    if l.vacuous.iter().any(|v| v == name) {
                        s.vacuous += 1;
                    }
                }
            }
        }
    }

    /// The statistics, invariants in name order, with rates and intervals.
    pub fn finish(self) -> Vec<InvariantStats> {
        self.by
            .into_values()
            .map(|mut s| {
                let rate = violation_rate(s.violated, s.decided());
                s.rate = rate.map(|(r, _)| r);
                s.ci = rate.map(|(_, ci)| ci);
                s.first_seeds.sort_unstable();
                s
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_scenario::seeds::seeds_iter;

    #[test]
    fn a_damaged_results_line_names_its_file_line_and_column_once() {
        // The location is given once, and is the line's own: not "line 1: not a sweep results
        // file: expected value at line 1 column 1", nor "at line 1" on a later line.
        let err = parse_results("r.jsonl", "xx\n").unwrap_err().to_string();
        assert_eq!(
            err,
            "r.jsonl: line 1: not a sweep results file: expected value (column 1)"
        );
    }

    /// `merge s05.json` (a scenario) names what the file is, not "not a sweep results file:
    /// EOF while parsing an object (column 1)".
    #[test]
    fn a_scenario_given_as_results_is_named_as_one() {
        let err = parse_results("s05.json", "{\n  \"name\": \"x\",\n  \"nodes\": {}\n}\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "s05.json: line 1: a scenario file, not a sweep results file (`splitbrain sweep \
             FILE --out r.jsonl` writes one)"
        );
    }

    fn line(seed: u64, outcome: Outcome) -> SeedLine {
        SeedLine {
            value: None,
            seed,
            outcomes: [("single_leader".to_string(), outcome)]
                .into_iter()
                .collect(),
            first_violation_ns: BTreeMap::new(),
            vacuous: Vec::new(),
            matches: false,
            bound: None,
            events: 0,
            sim_events: 0,
            hash: None,
            metrics: LineMetrics {
                faults: 0,
                sent: 0,
                dropped: 0,
                leader_changes: 0,
                acquisitions: 0,
                writes_accepted: 0,
                writes_rejected: 0,
            },
        }
    }

    /// Inconclusive runs do not count as "not violated": with `limits.max_events=100` every
    /// run is inconclusive, and `sweep` must not print `single_leader 0/5 0.00% [0.00%,
    /// 43.45%] (5 inconclusive)`.
    #[test]
    fn rates_are_over_the_runs_that_decided() {
        let all_inconclusive: Vec<SeedLine> =
            (0..5).map(|s| line(s, Outcome::Inconclusive)).collect();
        let refs: Vec<&SeedLine> = all_inconclusive.iter().collect();
        let s = &invariant_stats(&refs, 3)[0];
        assert_eq!(
            (s.runs, s.violated, s.inconclusive, s.decided()),
            (5, 0, 5, 0)
        );
        assert_eq!((s.rate, s.ci), (None, None));
        assert_eq!(pct_or_na(s.rate), "n/a");

        // 1 violated, 1 holds, 3 inconclusive: 1 of 2 decided, the interval of 1/2.
        let mixed: Vec<SeedLine> = [
            Outcome::Violated,
            Outcome::Holds,
            Outcome::Inconclusive,
            Outcome::Inconclusive,
            Outcome::Inconclusive,
        ]
        .into_iter()
        .enumerate()
        .map(|(i, o)| line(i as u64, o))
        .collect();
        let refs: Vec<&SeedLine> = mixed.iter().collect();
        let s = &invariant_stats(&refs, 3)[0];
        assert_eq!((s.violated, s.decided()), (1, 2));
        assert_eq!(s.rate, Some(0.5));
        assert_eq!(s.ci, Some(wilson(1, 2)));
        assert_eq!(violation_rate(0, 0), None);
    }

    #[test]
    fn an_expected_rate_is_judged_over_the_runs_that_decided() {
        let mut sc: Scenario = serde_json::from_value(serde_json::json!({
            "splitbrain": 1, "name": "r", "duration": "1s", "nodes": {},
            "expect_rate": {"single_leader": {"violated_at_most": 0.01}}
        }))
        .unwrap();
        let lines: Vec<SeedLine> = (0..5).map(|s| line(s, Outcome::Inconclusive)).collect();
        let refs: Vec<&SeedLine> = lines.iter().collect();
        let j = &judge_rates(&sc, &refs)[0];
        assert_eq!((j.violated, j.runs, j.inconclusive, j.ci), (0, 0, 5, None));
        assert!(!j.ok, "no decided run meets no bound");
        assert_eq!(
            j.to_string(),
            "single_leader violated 0/0 (5 inconclusive), rate n/a (no run decided); expected \
             at most 1.00%: MISMATCH"
        );
        // 2 violated of 4 decided (one inconclusive left out): the interval of 2/4.
        let outcomes = [
            Outcome::Violated,
            Outcome::Violated,
            Outcome::Holds,
            Outcome::Holds,
            Outcome::Inconclusive,
        ];
        let lines: Vec<SeedLine> = outcomes
            .into_iter()
            .enumerate()
            .map(|(i, o)| line(i as u64, o))
            .collect();
        let refs: Vec<&SeedLine> = lines.iter().collect();
        sc.expect_rate
            .get_mut("single_leader")
            .unwrap()
            .violated_at_most = Some(0.9);
        let j = &judge_rates(&sc, &refs)[0];
        assert_eq!((j.violated, j.runs, j.ci), (2, 4, Some(wilson(2, 4))));
        assert!(j.ok);
    }

    /// A `violated_at_least` claim that passes with 0 violations over a few seeds, only
    /// because the interval is too wide to reject it, says so (not only "ok"); vacuous runs
    /// counted as holds are named.
    #[test]
    fn an_at_least_rate_passed_by_too_few_runs_and_vacuous_runs_are_named() {
        let sc: Scenario = serde_json::from_value(serde_json::json!({
            "splitbrain": 1, "name": "r", "duration": "1s", "nodes": {},
            "expect_rate": {"single_leader": {"violated_at_least": 0.5}}
        }))
        .unwrap();
        // 0 of 3: CI [0, 56.15%] still reaches 50%.
        let lines: Vec<SeedLine> = (0..3).map(|s| line(s, Outcome::Holds)).collect();
        let refs: Vec<&SeedLine> = lines.iter().collect();
        let j = &judge_rates(&sc, &refs)[0];
        assert!(j.ok);
        assert_eq!(
            j.warnings(),
            vec![
                "warning: `violated_at_least` 50.00% passes only because 3 runs cannot reject \
                 it; 0 of 3 runs violated (more seeds, in `rate_seeds` or `--seeds`, may reject it)"
            ]
        );
        // 1 of 4 (25%, below 50%): CI [4.56%, 69.94%] still passes, with the observed rate.
        let mut lines: Vec<SeedLine> = (0..4).map(|s| line(s, Outcome::Holds)).collect();
        lines[0] = line(0, Outcome::Violated);
        // Two of the holds were vacuous; without them, 1 of 2 also passes: no second warning.
        lines[1].vacuous = vec!["single_leader".to_string()];
        lines[2].vacuous = vec!["single_leader".to_string()];
        let refs: Vec<&SeedLine> = lines.iter().collect();
        let j = &judge_rates(&sc, &refs)[0];
        assert_eq!((j.ok, j.vacuous, j.vacuous_decides), (true, 2, false));
        assert_eq!(
            j.to_string(),
            "single_leader violated 1/4 (2 vacuous, counted as holds), 95% CI [4.56%, 69.94%]; \
             expected at least 50.00%: ok"
        );
        assert_eq!(j.warnings().len(), 1);
        assert!(
            j.warnings()[0].contains("1 of 4 runs violated (25.00%, below 50.00%)"),
            "{:?}",
            j.warnings()
        );
        // At or above the bound: no warning.
        let lines: Vec<SeedLine> = (0..4).map(|s| line(s, Outcome::Violated)).collect();
        let refs: Vec<&SeedLine> = lines.iter().collect();
        assert_eq!(judge_rates(&sc, &refs)[0].warnings(), Vec::<String>::new());

        // At most 10%: 3 violated of 20 (CI lower bound 5.24%) passes only because 15
        // vacuous runs count as holds; without them 3 of 5 (lower bound 23.07%) would not.
        let sc: Scenario = serde_json::from_value(serde_json::json!({
            "splitbrain": 1, "name": "r", "duration": "1s", "nodes": {},
            "expect_rate": {"single_leader": {"violated_at_most": 0.1}}
        }))
        .unwrap();
        let mut lines: Vec<SeedLine> = (0..20).map(|s| line(s, Outcome::Holds)).collect();
        for l in &mut lines[..3] {
            l.outcomes
                .insert("single_leader".to_string(), Outcome::Violated);
        }
        for l in &mut lines[5..] {
            l.vacuous = vec!["single_leader".to_string()];
        }
        let refs: Vec<&SeedLine> = lines.iter().collect();
        let j = &judge_rates(&sc, &refs)[0];
        assert_eq!((j.ok, j.vacuous, j.vacuous_decides), (true, 15, true));
        assert_eq!(
            j.warnings(),
            vec![
                "warning: 15 of 20 runs held vacuously and count as holds; without them the \
                 judgement would be MISMATCH"
            ]
        );
    }

    /// Streaming hands the lines on in job order, the very lines `run_jobs` returns, whatever
    /// the chunk and thread count.
    #[test]
    fn streaming_hands_on_the_lines_run_jobs_returns_in_order() {
        let lesson = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/12-redlock-gc-pause.json"
        );
        let src = std::fs::read_to_string(lesson).expect("lesson 12 is readable");
        let plan = crate::vary::plan_with(lesson, &src, &[]).expect("lesson 12 validates");
        let range = SeedRange { start: 5, last: 44 };
        let jobs: Vec<Job> = seeds_iter(range, None)
            .map(|seed| Job { plan: 0, seed })
            .collect();
        let all = run_jobs(std::slice::from_ref(&plan), &[], &jobs, 2, true, &|_| {}).unwrap();
        let mut streamed = Vec::new();
        run_jobs_streaming(
            std::slice::from_ref(&plan),
            &[],
            jobs.iter().copied(),
            2,
            true,
            &|_| {},
            7,
            |job, line| {
                assert_eq!(job.seed, line.seed);
                streamed.push(line);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(streamed, all);
    }

    #[test]
    fn wilson_matches_known_values() {
        // 0 of 10: (0, 0.2775); 5 of 10: (0.2366, 0.7634) (Wilson 1927; standard tables).
        let (lo, hi) = wilson(0, 10);
        assert!(lo.abs() < 1e-12 && (hi - 0.2775).abs() < 1e-4, "{lo} {hi}");
        // 0 of 1000 gives a lower bound of exactly 0, not 2e-19 (the CSV prints it).
        for n in [1, 7, 10, 1000, 12345] {
            assert_eq!(wilson(0, n).0, 0.0, "0 of {n}");
            assert_eq!(wilson(n, n).1, 1.0, "{n} of {n}");
        }
        let (lo, hi) = wilson(5, 10);
        assert!((lo - 0.2366).abs() < 1e-4 && (hi - 0.7634).abs() < 1e-4);
        let (lo, hi) = wilson(10, 10);
        assert!(
            (lo - 0.7225).abs() < 1e-4 && (hi - 1.0).abs() < 1e-12,
            "{lo} {hi}"
        );
    }
}
