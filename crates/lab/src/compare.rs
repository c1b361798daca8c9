//! Comparing lock designs (the seed's "choose" as data): the same workload under
//! the same random nemesis, one scenario file per design, run over a range of seeds; per
//! design the rates of the failures that matter and the costs, each with a 95% interval.
//!
//! - Proportions (two accepted writers, duplicate effect, no progress) over the runs that
//!   decided them: the Wilson score interval ([`crate::sweep::violation_rate`], as `sweep`
//!   uses); a run stopped at a bound decides only what it saw happen.
//! - Means, 99th percentiles and messages per acquisition: a percentile bootstrap that
//!   resamples whole runs (seeds) with replacement, [`BOOTSTRAP_RESAMPLES`] times, from the
//!   fixed ChaCha stream [`BOOTSTRAP_STREAM`] of seed 0. Resampling runs, not single
//!   acquisitions, keeps the acquisitions of one run together (they are not independent).
//!   Every design draws the same resample indices (a paired bootstrap), and the interval does
//!   not depend on `--jobs`: the samples are kept in seed order.
//!
//! A comparison is given as scenario files (each with its label), or as a manifest
//! (`*.compare.json`, [`Manifest`]) naming the files, their labels and the seeds; `report`
//! writes a page for every manifest.

use rayon::prelude::*;
use schemars::schema::RootSchema;
use serde::{Deserialize, Serialize};
use splitbrain_check::compare::{design_sample, DesignSample};
use splitbrain_check::Outcome;
use splitbrain_check::DEFAULT_WINDOW;
use splitbrain_engine::{RngStream, SimDuration};
use splitbrain_scenario::json::without_bom;
use splitbrain_scenario::load::{parse_json, read_json_text, ReadError};
use splitbrain_scenario::locate::{locate, render, Seg};
use splitbrain_scenario::plan::Plan;
use splitbrain_scenario::seeds::SeedRange;
use splitbrain_scenario::Problem;
use splitbrain_scenario::{check_spec, execute};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Version of the manifest format.
pub const COMPARE_FORMAT: u32 = 1;
/// Bootstrap resamples per interval.
pub const BOOTSTRAP_RESAMPLES: usize = 1000;
/// The bootstrap's random stream (of seed 0).
pub const BOOTSTRAP_STREAM: &str = "compare/bootstrap";

/// Most designs in one comparison manifest: each is a column of the table and a bar of the
/// chart, and every design runs every seed; a hundred is past any readable table.
pub const MAX_DESIGNS: usize = 100;

/// A comparison manifest: which designs, under which labels, over which seeds. Every field
/// but `description` is required; `docs/compare-manifest.md` documents the format.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Format version ([`COMPARE_FORMAT`]).
    pub splitbrain_compare: u32,
    /// Name: the report page is `<name>.md`.
    pub name: String,
    /// Title of the page.
    pub title: String,
    /// What the comparison teaches, in a sentence or two.
    pub lesson: String,
    /// The workload and the nemesis in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Seeds to run (`A..B`, B excluded, or `A..=B`).
    pub seeds: String,
    /// The designs, in table order: 2 to [`MAX_DESIGNS`].
    #[schemars(length(max = "MAX_DESIGNS"))]
    pub designs: Vec<ManifestDesign>,
    /// The parts of the designs' scenarios ([`SHARED_PARTS`]) that differ on purpose: the
    /// difference is what the comparison shows. Every other part must be the same in every
    /// design (default: none may differ).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differ_on_purpose: Vec<String>,
}

/// The parts of a scenario every design of a comparison shares unless the manifest's
/// `differ_on_purpose` names them: the run's `duration`, the `network`, the `nemesis`, the
/// scheduled `faults`, and the `workload` (the lock clients' names, and each worker's clock,
/// work, think and write times, start, rounds and threads; each lease-based leader's clock and
/// start). The lock, its servers, the TTL and the storage's fencing are the design.
pub const SHARED_PARTS: [&str; 5] = ["duration", "network", "nemesis", "faults", "workload"];

/// The worker fields that are the workload, not the lock design.
const WORKLOAD_FIELDS: [&str; 7] = [
    "clock",
    "work_time",
    "think_time",
    "write_delay",
    "start_after",
    "rounds",
    "threads",
];

/// The shared parts ([`SHARED_PARTS`]) of `plan`, as JSON, by part.
fn shared_parts(plan: &Plan) -> Vec<(&'static str, serde_json::Value)> {
    use serde_json::{json, Map, Value};
    use splitbrain_scenario::schema::NodeSpec;
    let s = &plan.scenario;
    fn value<T: Serialize>(v: &T) -> Value {
        serde_json::to_value(v).unwrap_or(Value::Null)
    }
    let mut workload = Map::new();
    for n in &plan.nodes {
        let keep: &[&str] = match &n.spec {
            NodeSpec::Worker(_) => &WORKLOAD_FIELDS,
            NodeSpec::LeaseLeader(_) => &["clock", "start_after"],
            _ => continue,
        };
        let spec = serde_json::to_value(&n.spec).unwrap_or(Value::Null);
        let mut fields = Map::new();
        for k in keep {
            if let Some(v) = spec.get(*k) {
                fields.insert((*k).to_string(), v.clone());
            }
        }
        workload.insert(n.name.clone(), Value::Object(fields));
    }
    vec![
        ("duration", value(&s.duration)),
        ("network", value(&s.network)),
        ("nemesis", value(&s.nemesis)),
        ("faults", value(&s.faults)),
        ("workload", json!(workload)),
    ]
}

/// Where `b` differs from `a` under `path`: `path: A vs B` per leaf (compact JSON, `(none)`
/// for a missing value).
fn json_diff(
    path: &str,
    a: Option<&serde_json::Value>,
    b: Option<&serde_json::Value>,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    if a == b {
        return;
    }
    if let (Some(Value::Object(x)), Some(Value::Object(y))) = (a, b) {
        let keys = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k)));
        for k in keys {
            json_diff(&format!("{path}.{k}"), x.get(k), y.get(k), out);
        }
        return;
    }
    let show = |v: Option<&Value>| v.map_or("(none)".to_string(), |v| v.to_string());
    out.push(format!("{path}: {} vs {}", show(a), show(b)));
}

/// How design `b` differs from design `a` in each shared part ([`SHARED_PARTS`]): per part
/// that differs, its name and the differences in words (`nemesis.mean_interval: "1s" vs
/// "5s"`; a different set of lock clients is said as their counts and names).
pub fn differences(a: &Plan, b: &Plan) -> Vec<(&'static str, Vec<String>)> {
    let mut out = Vec::new();
    for ((part, x), (_, y)) in shared_parts(a).into_iter().zip(shared_parts(b)) {
        if x == y {
            continue;
        }
        let mut lines = Vec::new();
        if part == "workload" {
            let names = |v: &serde_json::Value| -> Vec<String> {
                v.as_object()
                    .map(|m| m.keys().cloned().collect())
                    .unwrap_or_default()
            };
            let (nx, ny) = (names(&x), names(&y));
            if nx != ny {
                lines.push(format!(
                    "{} lock clients ({}) vs {} ({})",
                    nx.len(),
                    nx.join(", "),
                    ny.len(),
                    ny.join(", ")
                ));
            } else {
                json_diff(part, Some(&x), Some(&y), &mut lines);
            }
        } else {
            json_diff(part, Some(&x), Some(&y), &mut lines);
        }
        out.push((part, lines));
    }
    out
}

/// The differences of every design from the first, in words, one line per design and part
/// (`Redlock differs from lease + fencing in nemesis: nemesis.mean_interval: "1s" vs "5s"`),
/// with at most three differences a part; the parts that differ, in [`SHARED_PARTS`] order.
pub fn design_differences(designs: &[Design]) -> (Vec<String>, Vec<&'static str>) {
    let mut lines = Vec::new();
    let mut parts: Vec<&'static str> = Vec::new();
    let Some(first) = designs.first() else {
        return (lines, parts);
    };
    for d in &designs[1..] {
        for (part, what) in differences(&first.plan, &d.plan) {
            if !parts.contains(&part) {
                parts.push(part);
            }
            let shown: Vec<&str> = what.iter().take(3).map(String::as_str).collect();
            let more = what.len().saturating_sub(3);
            lines.push(format!(
                "{} differs from {} in {part}: {}{}",
                d.label,
                first.label,
                shown.join("; "),
                if more > 0 {
                    format!("; and {more} more")
                } else {
                    String::new()
                }
            ));
        }
    }
    parts.sort_by_key(|p| SHARED_PARTS.iter().position(|q| q == p));
    (lines, parts)
}

/// One design of a manifest.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ManifestDesign {
    /// Its scenario file, relative to the manifest's folder.
    pub file: String,
    /// Its label in the table and chart.
    pub label: String,
}

/// Why a comparison cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// The manifest cannot be read.
    #[error("{file}: cannot read the comparison manifest: {error}")]
    Io {
        /// The manifest.
        file: String,
        /// The cause (shown in the message, so not chained as a source).
        error: std::io::Error,
    },
    /// The manifest is not valid: the problem located in it (line, column, field path).
    #[error("{file}:{problem}")]
    Manifest {
        /// The manifest.
        file: String,
        /// What is wrong, where.
        problem: splitbrain_scenario::Problem,
    },
    /// A design's scenario file is invalid: its own located errors, then where the manifest
    /// names it.
    #[error("{error}\n  (named by {manifest}:{}:{}: {})", .at.line, .at.column, .at.path)]
    Design {
        /// The scenario's errors.
        error: splitbrain_scenario::ScenarioError,
        /// The manifest.
        manifest: String,
        /// Where the manifest names the file (`message` unused).
        at: Box<splitbrain_scenario::Problem>,
    },
}

/// The fields a manifest must have, in words, for an error that misses one.
pub const MANIFEST_FIELDS: &str = "a comparison manifest needs `splitbrain_compare` (1), `name`, \
`title`, `lesson`, `seeds` and `designs` (each `{\"file\", \"label\"}`); `description` and \
`differ_on_purpose` are optional (see docs/compare-manifest.md)";

/// One design to compare: its label and validated plan.
#[derive(Clone, Debug)]
pub struct Design {
    /// Label in the table and chart.
    pub label: String,
    /// The scenario file as given.
    pub file: String,
    /// The validated scenario.
    pub plan: Plan,
}

/// The comparison manifest format's schema, generated once.
fn manifest_schema() -> &'static RootSchema {
    static SCHEMA: OnceLock<RootSchema> = OnceLock::new();
    SCHEMA.get_or_init(splitbrain_scenario::root_schema::<Manifest>)
}

/// The first shape problem of the comparison manifest text `src` (a JSON object), located, by
/// the manifest format's schema (`designs` past [`MAX_DESIGNS`], a list where
/// an object goes); `None` when there is none or the text is not JSON.
pub fn check_manifest(src: &str) -> Option<Problem> {
    splitbrain_scenario::shape::check_with(manifest_schema(), src)
}

/// Reads a manifest and loads its designs (files relative to the manifest's folder).
pub fn load_manifest(path: &Path) -> Result<(Manifest, SeedRange, Vec<Design>), CompareError> {
    let file = path.display().to_string();
    let src = read_json_text(path, "comparison manifest").map_err(|e| match e {
        ReadError::Io(error) => CompareError::Io {
            file: file.clone(),
            error,
        },
        ReadError::Invalid(problem) => CompareError::Manifest {
            file: file.clone(),
            problem,
        },
    })?;
    load_manifest_str(&file, &src, path.parent().unwrap_or(Path::new("")))
}

/// Parses and checks the manifest text `src` (`file` names it in errors) and loads its
/// designs, their files relative to `dir`. Every error in the manifest is located: line,
/// column and field path.
pub fn load_manifest_str(
    file: &str,
    src: &str,
    dir: &Path,
) -> Result<(Manifest, SeedRange, Vec<Design>), CompareError> {
    let src = without_bom(src);
    let (m, seeds) = parse_manifest(file, src)?;
    let designs = (0..m.designs.len())
        .map(|i| load_design((file, src), dir, &m, i))
        .collect::<Result<Vec<_>, _>>()?;
    check_shared_parts((file, src), &m, &designs)?;
    Ok((m, seeds, designs))
}

/// The error of the manifest `file` (text `src`) at `path`, located at the field's value: a
/// rule broken after parsing.
fn field_error(file: &str, src: &str, path: &[Seg], message: String) -> CompareError {
    let (line, column) = locate(src, path);
    CompareError::Manifest {
        file: file.to_string(),
        problem: splitbrain_scenario::Problem {
            line,
            column,
            path: render(path),
            message,
        },
    }
}

/// The manifest of the text `src` (without a byte order mark) of `file`: its shapes, its
/// fields, its format, name, seeds and number of designs checked.
fn parse_manifest(file: &str, src: &str) -> Result<(Manifest, SeedRange), CompareError> {
    let bad = |problem: splitbrain_scenario::Problem| CompareError::Manifest {
        file: file.to_string(),
        problem,
    };
    // The shapes first, as a scenario's: a list past its limit is refused at its first entry
    // past it, before the typed parse holds every entry.
    if src.trim_start().starts_with('{') {
        if let Some(problem) = check_manifest(src) {
            return Err(bad(problem));
        }
    }
    let m: Manifest = parse_json(src, "comparison manifest", &|src, path| {
        splitbrain_scenario::seeds::seed_range_hint(src, path, "seeds")
    })
    .map_err(|mut p| {
        if p.message.starts_with("missing field `") {
            p.message = format!("{}: {MANIFEST_FIELDS}", p.message);
        }
        bad(p)
    })?;
    let field = |path: &[Seg], message: String| field_error(file, src, path, message);
    let key = |k: &str| Seg::Key(k.to_string());
    if m.splitbrain_compare != COMPARE_FORMAT {
        return Err(field(
            &[key("splitbrain_compare")],
            format!(
                "format {} is not known: expected {COMPARE_FORMAT}",
                m.splitbrain_compare
            ),
        ));
    }
    if let Some(reason) = splitbrain_scenario::validate::bad_scenario_name(&m.name) {
        // The output files are named after it: `../x` would write outside `-o DIR`.
        return Err(field(
            &[key("name")],
            reason.replace("scenario name", "comparison name"),
        ));
    }
    let seeds: SeedRange = m.seeds.parse().map_err(|e| field(&[key("seeds")], e))?;
    if m.designs.len() < 2 {
        return Err(field(
            &[key("designs")],
            format!(
                "a comparison needs at least two designs, found {}",
                m.designs.len()
            ),
        ));
    }
    Ok((m, seeds))
}

/// Design `i` of the manifest `m` (of `file`, text `src`): its label checked, its scenario
/// read (relative to `dir`), validated and checked to be a lock design.
///
/// Long because each way a design's file can fail (unreadable, not UTF-8, invalid, not a lock
/// design) is located at the manifest's field.
fn load_design(
    (file, src): (&str, &str),
    dir: &Path,
    m: &Manifest,
    i: usize,
) -> Result<Design, CompareError> {
    let field = |path: &[Seg], message: String| field_error(file, src, path, message);
    let key = |k: &str| Seg::Key(k.to_string());
    let d = &m.designs[i];
    let at = |k: &str| [key("designs"), Seg::Index(i), key(k)];
    if d.label.trim().is_empty() {
        return Err(field(
            &at("label"),
            "a label cannot be empty: it heads the design's column".into(),
        ));
    }
    if let Some(j) = m.designs[..i].iter().position(|e| e.label == d.label) {
        return Err(field(
            &at("label"),
            format!(
                "the label {:?} is used twice (designs[{j}] has it): each design's column \
                 needs its own",
                d.label
            ),
        ));
    }
    let p: PathBuf = dir.join(&d.file);
    // A design file that cannot be read is the manifest's error: its `file` names it.
    let text = match read_json_text(&p, "scenario") {
        Ok(text) => Ok(text),
        Err(ReadError::Io(e)) => {
            let why = if e.kind() == std::io::ErrorKind::NotFound {
                "no such file".to_string()
            } else if p.is_dir() {
                "it is a folder, not a scenario file".to_string()
            } else {
                e.to_string()
            };
            return Err(field(
                &at("file"),
                format!(
                    "cannot read the design's scenario {}: {why} (a design's file is \
                     relative to the manifest's folder)",
                    p.display()
                ),
            ));
        }
        Err(ReadError::Invalid(problem)) => Err(splitbrain_scenario::ScenarioError::Invalid {
            file: p.display().to_string(),
            problems: vec![problem],
        }),
    };
    let plan = text
        .and_then(|text| splitbrain_scenario::load_str(&p.display().to_string(), &text))
        .map_err(|error| {
            let path = at("file");
            let (line, column) = locate(src, &path);
            CompareError::Design {
                error,
                manifest: file.to_string(),
                at: Box::new(splitbrain_scenario::Problem {
                    line,
                    column,
                    path: render(&path),
                    message: String::new(),
                }),
            }
        })?;
    if let Some(why) = not_a_lock_design(&plan) {
        return Err(field(
            &at("file"),
            format!("the design's scenario {} {why}", p.display()),
        ));
    }
    Ok(Design {
        label: d.label.clone(),
        file: p.display().to_string(),
        plan,
    })
}

/// The designs share the workload and the nemesis, unless the manifest `m` (of `file`, text
/// `src`) says a difference is the point (`differ_on_purpose`, each a part that differs).
fn check_shared_parts(
    (file, src): (&str, &str),
    m: &Manifest,
    designs: &[Design],
) -> Result<(), CompareError> {
    let field = |path: &[Seg], message: String| field_error(file, src, path, message);
    let key = |k: &str| Seg::Key(k.to_string());
    for (j, part) in m.differ_on_purpose.iter().enumerate() {
        let at = [key("differ_on_purpose"), Seg::Index(j)];
        if !SHARED_PARTS.contains(&part.as_str()) {
            let hint = splitbrain_scenario::error::did_you_mean(part, SHARED_PARTS.iter().copied())
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            return Err(field(
                &at,
                format!(
                    "`{part}` is not a part designs share: one of {}{hint}",
                    SHARED_PARTS.join(", ")
                ),
            ));
        }
        if m.differ_on_purpose[..j].contains(part) {
            return Err(field(&at, format!("`{part}` is listed twice")));
        }
        let differs = designs[1..].iter().any(|d| {
            differences(&designs[0].plan, &d.plan)
                .iter()
                .any(|(p, _)| p == part)
        });
        if !differs {
            return Err(field(
                &at,
                format!(
                    "the designs do not differ in `{part}`: leave it out (`differ_on_purpose` \
                     names what differs on purpose)"
                ),
            ));
        }
    }
    for (i, d) in designs.iter().enumerate().skip(1) {
        let diffs = differences(&designs[0].plan, &d.plan);
        if let Some((part, what)) = diffs
            .iter()
            .find(|(p, _)| !m.differ_on_purpose.iter().any(|q| q == p))
        {
            let shown: Vec<&str> = what.iter().take(3).map(String::as_str).collect();
            return Err(field(
                &[key("designs"), Seg::Index(i), key("file")],
                format!(
                    "the design's scenario {} differs from designs[0]'s ({}) in {part} ({}): \
                     the designs of a comparison run one workload under one nemesis; if the \
                     difference is the point, say so with \"differ_on_purpose\": [\"{part}\"]",
                    d.file,
                    designs[0].file,
                    shown.join("; ")
                ),
            ));
        }
    }
    Ok(())
}

/// Why `plan` is not a lock design `compare` can measure, if it is not: it has no lock client
/// (a `worker` or `lease_leader` node, README's lock clients), so no lock is acquired and no
/// write sent, and every measure would be a vacuous zero passing for safety (a bully scenario
/// showed "P(two accepted writers) 0.0%").
pub fn not_a_lock_design(plan: &Plan) -> Option<String> {
    if plan
        .nodes
        .iter()
        .any(|n| matches!(n.spec.role_name(), "worker" | "lease_leader"))
    {
        return None;
    }
    Some(
        "is not a lock design: it has no lock client (no node with \"role\": \"worker\" or \
         \"lease_leader\"), so it acquires no lock and writes nothing, and its rates would be \
         zeros that show nothing"
            .to_string(),
    )
}

/// `lock_progress`'s window for a design: its `check` entry's, else `check_params.window`,
/// else the default (10 s).
pub fn progress_window(plan: &Plan) -> SimDuration {
    check_spec(&plan.scenario)
        .invariants
        .iter()
        .find_map(|i| i.param("window").filter(|_| i.name() == "lock_progress"))
        .or(plan.scenario.check_params.window.map(|d| d.0))
        .unwrap_or(DEFAULT_WINDOW)
}

/// One run's measurements, plus whether it stopped at a bound.
#[derive(Clone, Debug)]
pub struct Sample {
    /// The measurements.
    pub sample: DesignSample,
    /// The run stopped at its event or time bound (its measurements cover less time).
    pub bounded: bool,
}

/// Runs every design over `seeds` on `threads` threads; per design, the samples in seed
/// order, whatever the thread count. `on_done` is called after each run (progress).
pub fn run_designs(
    designs: &[Design],
    seeds: &[u64],
    threads: usize,
    on_done: &(dyn Fn() + Sync),
) -> std::io::Result<Vec<Vec<Sample>>> {
    let jobs: Vec<(usize, u64)> = (0..designs.len())
        .flat_map(|d| seeds.iter().map(move |&s| (d, s)))
        .collect();
    let windows: Vec<SimDuration> = designs.iter().map(|d| progress_window(&d.plan)).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("compare-{i}"))
        .build()
        .map_err(std::io::Error::other)?;
    let flat: Vec<Sample> = pool.install(|| {
        jobs.par_iter()
            .map(|&(d, seed)| {
                let r = execute(&designs[d].plan, seed, None)?;
                on_done();
                Ok(Sample {
                    sample: design_sample(&r.record, windows[d]),
                    bounded: r.bound.is_some(),
                })
            })
            .collect::<std::io::Result<_>>()
    })?;
    let mut out: Vec<Vec<Sample>> = designs.iter().map(|_| Vec::new()).collect();
    for ((d, _), s) in jobs.iter().zip(flat) {
        out[*d].push(s);
    }
    Ok(out)
}

/// A proportion of runs with its 95% Wilson interval, over the runs that decided
/// ([`crate::sweep::violation_rate`]: a run that could not show whether it happened, such as
/// one stopped at a bound, is in neither count).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Proportion {
    /// Runs where it happened.
    pub k: u64,
    /// Runs that decided whether it happened.
    pub n: u64,
    /// `k / n`; `None` (n/a) when no run decided.
    pub rate: Option<f64>,
    /// Lower end of the 95% Wilson interval (`None` when no run decided).
    pub lo: Option<f64>,
    /// Upper end.
    pub hi: Option<f64>,
}

impl Proportion {
    /// `k` of `n` decided runs.
    pub fn of(k: u64, n: u64) -> Self {
        let r = crate::sweep::violation_rate(k, n);
        Proportion {
            k,
            n,
            rate: r.map(|(x, _)| x),
            lo: r.map(|(_, ci)| ci.0),
            hi: r.map(|(_, ci)| ci.1),
        }
    }
}

/// An estimate with its 95% bootstrap interval (`None` without samples).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// The estimate over every run.
    pub value: Option<f64>,
    /// Lower end of the 95% percentile bootstrap interval.
    pub lo: Option<f64>,
    /// Upper end.
    pub hi: Option<f64>,
    /// Samples it is computed from (acquisitions, takeovers, or runs for a ratio).
    pub samples: u64,
}

/// One design's row of the comparison. Times are milliseconds of true time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DesignRow {
    /// Label.
    pub label: String,
    /// Scenario file.
    pub file: String,
    /// Scenario name.
    pub scenario: String,
    /// Runs.
    pub runs: u64,
    /// Runs that stopped at a bound.
    pub bounded: u64,
    /// `lock_progress`'s window, ms.
    pub window_ms: f64,
    /// P(the storage accepted a stale holder's write after a newer holder's).
    pub two_accepted_writers: Proportion,
    /// P(some work took effect twice).
    pub duplicate_effect: Proportion,
    /// P(no acquisition within the window while a client waited and the lock was free).
    pub no_progress: Proportion,
    /// Runs in which no client acquired a lock: there the three proportions above are
    /// vacuous zeros (nothing held, nothing written, and `lock_progress` owes nothing while no
    /// lock server majority is up), so the table says how many there were.
    pub acquired_nothing: u64,
    /// Mean request-to-acquisition time, ms. This and the other times, the censored counts,
    /// `messages_per_acquisition` and `acquired_nothing` are over the runs not stopped at a
    /// bound (a truncated run's times are censored at the bound).
    pub acquire_mean_ms: Estimate,
    /// 99th percentile of it (nearest rank), ms.
    pub acquire_p99_ms: Estimate,
    /// Requests still waiting when their run ended (not in the times).
    pub acquire_censored: u64,
    /// Mean time from a holder's crash or pause to another client's acquisition, ms.
    pub takeover_mean_ms: Estimate,
    /// 99th percentile of it (nearest rank), ms.
    pub takeover_p99_ms: Estimate,
    /// Holder failures not taken over before their run ended (not in the times).
    pub takeover_censored: u64,
    /// Lock messages sent per acquisition (every message but the storage's), all runs pooled.
    pub messages_per_acquisition: Estimate,
}

/// The comparison: one row per design, in the order given.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CompareTable {
    /// Seeds run (`A..B`).
    pub seeds: String,
    /// Bootstrap resamples per interval.
    pub bootstrap_resamples: usize,
    /// How the intervals are computed, in words.
    pub intervals: String,
    /// The rows.
    pub rows: Vec<DesignRow>,
}

/// The words [`CompareTable::intervals`] holds.
pub const INTERVALS: &str = "95% intervals: Wilson score for proportions of runs; percentile \
bootstrap over runs (1000 resamples of the seeds, ChaCha stream compare/bootstrap of seed 0, the \
same resamples for every design) for means, 99th percentiles and messages per acquisition";

/// Nearest-rank percentile `q` (0..1] of `v` (reordered).
fn percentile(v: &mut [u64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    let (_, x, _) = v.select_nth_unstable(rank - 1);
    Some(*x as f64)
}

fn mean(v: &[u64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64)
}

/// Indices of each bootstrap resample of `n` runs (the same for every design with `n` runs).
pub fn resamples(n: usize) -> Vec<Vec<usize>> {
    let mut rng = RngStream::new(0, BOOTSTRAP_STREAM);
    (0..BOOTSTRAP_RESAMPLES)
        .map(|_| {
            (0..n)
                .map(|_| rng.uniform_inclusive(0, n as u64 - 1) as usize)
                .collect()
        })
        .collect()
}

/// The statistic over all runs and its 95% percentile bootstrap interval over `draws`.
fn bootstrap(
    n: usize,
    draws: &[Vec<usize>],
    samples: u64,
    stat: &dyn Fn(&mut dyn Iterator<Item = usize>) -> Option<f64>,
) -> Estimate {
    let value = stat(&mut (0..n));
    let mut stats: Vec<f64> = draws
        .iter()
        .filter_map(|d| stat(&mut d.iter().copied()))
        .collect();
    stats.sort_by(f64::total_cmp);
    let at = |q: f64| {
        (!stats.is_empty()).then(|| {
            let rank = ((q * stats.len() as f64).ceil() as usize).clamp(1, stats.len());
            stats[rank - 1]
        })
    };
    Estimate {
        value,
        lo: value.and(at(0.025)),
        hi: value.and(at(0.975)),
        samples,
    }
}

const NS_PER_MS: f64 = 1e6;

/// Summarises one design's samples (in seed order) over the resamples `draws`.
///
/// Long because each of the table's estimates (proportions, then percentiles and means with
/// bootstrap intervals) is a few lines of its own.
pub fn summarize(design: &Design, samples: &[Sample], draws: &[Vec<usize>]) -> DesignRow {
    let n = samples.len();
    // A run decides a measure when it shows it happened (a violation, seen even before a
    // bound) or, not stopped at a bound, shows it did not (`f` gives `None` when the run
    // itself could not tell: an inconclusive verdict).
    let count = |f: &dyn Fn(&DesignSample) -> Option<bool>| {
        let (mut k, mut decided) = (0u64, 0u64);
        for s in samples {
            match f(&s.sample) {
                Some(true) => {
                    k += 1;
                    decided += 1;
                }
                Some(false) if !s.bounded => decided += 1,
                _ => {}
            }
        }
        Proportion::of(k, decided)
    };
    let outcome = |o: Outcome| match o {
        Outcome::Violated => Some(true),
        Outcome::Holds => Some(false),
        Outcome::Inconclusive => None,
    };
    // Times, message counts and the runs that acquired nothing come from the runs that ran
    // their whole duration only: a run stopped at a bound is truncated (its times are
    // censored at the bound and its counts cover less time), as it decides no rate by what
    // it did not see.
    let whole = |i: &usize| !samples[*i].bounded;
    let pooled = |runs: &mut dyn Iterator<Item = usize>, f: &dyn Fn(&DesignSample) -> &[u64]| {
        let mut v = Vec::new();
        for i in runs.filter(whole) {
            v.extend_from_slice(f(&samples[i].sample));
        }
        v
    };
    let unbounded = || samples.iter().filter(|s| !s.bounded);
    let times = |f: &dyn Fn(&DesignSample) -> &[u64]| {
        let total: u64 = unbounded().map(|s| f(&s.sample).len() as u64).sum();
        let m = bootstrap(n, draws, total, &|runs| {
            mean(&pooled(runs, f)).map(|x| x / NS_PER_MS)
        });
        let p = bootstrap(n, draws, total, &|runs| {
            percentile(&mut pooled(runs, f), 0.99).map(|x| x / NS_PER_MS)
        });
        (m, p)
    };
    let (acquire_mean_ms, acquire_p99_ms) = times(&|s| &s.acquire_ns);
    let (takeover_mean_ms, takeover_p99_ms) = times(&|s| &s.takeover_ns);
    let whole_runs = unbounded().count() as u64;
    let messages_per_acquisition = bootstrap(n, draws, whole_runs, &|runs| {
        let (mut msgs, mut acq) = (0u64, 0u64);
        for i in runs.filter(whole) {
            msgs += samples[i].sample.lock_messages;
            acq += samples[i].sample.acquisitions;
        }
        (acq > 0).then(|| msgs as f64 / acq as f64)
    });
    DesignRow {
        label: design.label.clone(),
        file: design.file.clone(),
        scenario: design.plan.scenario.name.clone(),
        runs: n as u64,
        bounded: samples.iter().filter(|s| s.bounded).count() as u64,
        window_ms: progress_window(&design.plan).0 as f64 / NS_PER_MS,
        two_accepted_writers: count(&|s| outcome(s.two_accepted_writers)),
        duplicate_effect: count(&|s| Some(s.duplicate_effect)),
        no_progress: count(&|s| outcome(s.no_progress)),
        acquired_nothing: unbounded().filter(|s| s.sample.acquisitions == 0).count() as u64,
        acquire_mean_ms,
        acquire_p99_ms,
        acquire_censored: unbounded().map(|s| s.sample.acquire_censored).sum(),
        takeover_mean_ms,
        takeover_p99_ms,
        takeover_censored: unbounded().map(|s| s.sample.takeover_censored).sum(),
        messages_per_acquisition,
    }
}

/// Runs the comparison: every design over every seed of `range`, summarised.
pub fn compare(
    designs: &[Design],
    range: SeedRange,
    threads: usize,
    on_done: &(dyn Fn() + Sync),
) -> std::io::Result<CompareTable> {
    let seeds: Vec<u64> = range.seeds().collect();
    let all = run_designs(designs, &seeds, threads, on_done)?;
    let draws = resamples(seeds.len());
    Ok(CompareTable {
        seeds: range.to_string(),
        bootstrap_resamples: BOOTSTRAP_RESAMPLES,
        intervals: INTERVALS.to_string(),
        rows: designs
            .iter()
            .zip(&all)
            .map(|(d, s)| summarize(d, s, &draws))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_scenario::format::MANIFEST_SUFFIX;

    fn sample(two: Outcome, duplicate: bool, progress: Outcome, bounded: bool) -> Sample {
        Sample {
            sample: DesignSample {
                two_accepted_writers: two,
                duplicate_effect: duplicate,
                no_progress: progress,
                acquire_ns: Vec::new(),
                acquire_censored: 0,
                takeover_ns: Vec::new(),
                takeover_censored: 0,
                acquisitions: 0,
                lock_messages: 0,
            },
            bounded,
        }
    }

    /// A run that could not decide (inconclusive, or stopped at a bound without seeing the
    /// failure) does not count as "did not happen": proportions are over the runs that
    /// decided, as `sweep`'s rates, and n/a when none did.
    #[test]
    fn proportions_are_over_the_runs_that_decided() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/23-compare");
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| !p.to_string_lossy().ends_with(MANIFEST_SUFFIX))
            .unwrap();
        let design = Design {
            label: "d".into(),
            file: file.display().to_string(),
            plan: splitbrain_scenario::load_file(&file).unwrap(),
        };
        use Outcome::{Holds, Inconclusive, Violated};
        let samples = [
            sample(Violated, true, Holds, false),
            sample(Holds, false, Holds, false),
            // Stopped at a bound: what it saw happen counts, what it did not see does not.
            sample(Violated, false, Holds, true),
            sample(Holds, false, Inconclusive, false),
        ];
        let row = summarize(&design, &samples, &resamples(samples.len()));
        assert_eq!(
            (row.two_accepted_writers.k, row.two_accepted_writers.n),
            (2, 4)
        );
        assert_eq!((row.duplicate_effect.k, row.duplicate_effect.n), (1, 3));
        assert_eq!((row.no_progress.k, row.no_progress.n), (0, 2));
        assert_eq!(row.two_accepted_writers.rate, Some(0.5));
        // None of these samples acquired a lock: every run that was not stopped at a bound
        // is counted as acquiring nothing (the bounded one is truncated, as for the rates).
        assert_eq!(row.acquired_nothing, 3);
        let none = summarize(&design, &samples[2..3], &resamples(1));
        assert_eq!((none.no_progress.n, none.no_progress.rate), (0, None));
        assert_eq!((none.no_progress.lo, none.no_progress.hi), (None, None));
    }

    /// Bounded runs feed no time, count or message ratio: a design whose every run hit the
    /// bound shows n/a rates and no "time to acquire, mean 2.00 ms" from its truncated runs.
    #[test]
    fn runs_stopped_at_a_bound_feed_no_metrics() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/23-compare");
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| !p.to_string_lossy().ends_with(MANIFEST_SUFFIX))
            .unwrap();
        let design = Design {
            label: "d".into(),
            file: file.display().to_string(),
            plan: splitbrain_scenario::load_file(&file).unwrap(),
        };
        let truncated = |bounded| {
            let mut s = sample(Outcome::Holds, false, Outcome::Holds, bounded);
            s.sample.acquire_ns = vec![2_000_000];
            s.sample.takeover_ns = vec![3_000_000];
            s.sample.acquire_censored = 1;
            s.sample.acquisitions = 1;
            s.sample.lock_messages = 4;
            s
        };
        let all = [truncated(true), truncated(true)];
        let row = summarize(&design, &all, &resamples(all.len()));
        assert_eq!(row.bounded, 2);
        assert_eq!(row.acquire_mean_ms.value, None);
        assert_eq!(row.acquire_mean_ms.samples, 0);
        assert_eq!(row.acquire_p99_ms.value, None);
        assert_eq!(row.takeover_mean_ms.value, None);
        assert_eq!(row.messages_per_acquisition.value, None);
        assert_eq!((row.acquire_censored, row.acquired_nothing), (0, 0));
        let mixed = [truncated(true), truncated(false)];
        let row = summarize(&design, &mixed, &resamples(mixed.len()));
        assert_eq!(row.acquire_mean_ms.value, Some(2.0));
        assert_eq!(row.acquire_mean_ms.samples, 1);
        assert_eq!(row.messages_per_acquisition.value, Some(4.0));
        assert_eq!(row.acquire_censored, 1);
    }

    #[test]
    fn nearest_rank_percentiles_are_pinned() {
        let mut v: Vec<u64> = (1..=200).rev().collect();
        assert_eq!(percentile(&mut v, 0.99), Some(198.0));
        assert_eq!(percentile(&mut [7], 0.99), Some(7.0));
        assert_eq!(percentile(&mut [], 0.99), None);
        assert_eq!(mean(&[1, 2, 6]), Some(3.0));
    }

    #[test]
    fn resamples_are_fixed_and_in_range() {
        let a = resamples(5);
        assert_eq!(a.len(), BOOTSTRAP_RESAMPLES);
        assert!(a.iter().flatten().all(|&i| i < 5));
        assert_eq!(a, resamples(5));
    }

    #[test]
    fn a_constant_statistic_has_a_point_interval_and_no_samples_no_estimate() {
        let draws = resamples(4);
        let e = bootstrap(4, &draws, 4, &|_| Some(2.5));
        assert_eq!((e.value, e.lo, e.hi), (Some(2.5), Some(2.5), Some(2.5)));
        let none = bootstrap(4, &draws, 0, &|_| None);
        assert_eq!((none.value, none.lo, none.hi), (None, None, None));
    }

    #[test]
    fn the_bootstrap_interval_brackets_the_mean() {
        let values = [10u64, 20, 30, 40, 50, 60, 70, 80, 90, 100];
        let draws = resamples(values.len());
        let e = bootstrap(values.len(), &draws, 10, &|runs| {
            let v: Vec<u64> = runs.map(|i| values[i]).collect();
            mean(&v)
        });
        let (lo, hi) = (e.lo.unwrap(), e.hi.unwrap());
        assert_eq!(e.value, Some(55.0));
        assert!(lo < 55.0 && 55.0 < hi, "{lo} {hi}");
        // About mean +- 1.96 * sd / sqrt(n) = 55 +- 17.8.
        assert!(
            (30.0..45.0).contains(&lo) && (65.0..80.0).contains(&hi),
            "{lo} {hi}"
        );
    }

    /// A manifest's `designs` has a length limit (as a scenario's lists have) and manifests
    /// get the shape check: a list of a million designs is refused at the first design past
    /// the limit, and a list where a design's object goes is said in the format's words.
    #[test]
    fn a_manifest_has_a_design_limit_and_a_shape_check() {
        let manifest = |designs: &str| {
            format!(
                "{{\"splitbrain_compare\": 1, \"name\": \"c\", \"title\": \"t\", \
                 \"lesson\": \"l\", \"seeds\": \"0..2\",\n\"designs\": [{designs}]}}"
            )
        };
        let err = |src: &str| {
            load_manifest_str("m.compare.json", src, Path::new("."))
                .unwrap_err()
                .to_string()
        };
        let many: Vec<String> = (0..=MAX_DESIGNS)
            .map(|i| format!("{{\"file\": \"d{i}.json\", \"label\": \"d{i}\"}}"))
            .collect();
        let e = err(&manifest(&many.join(",\n")));
        assert!(
            e.contains(&format!(
                "designs[{MAX_DESIGNS}]: too many entries in `designs`: the limit is {MAX_DESIGNS}"
            )),
            "{e}"
        );
        assert!(
            e.starts_with(&format!("m.compare.json:{}:", MAX_DESIGNS + 2)),
            "{e}"
        );
        let e = err(&manifest(r#"["a.json", "a"], ["b.json", "b"]"#));
        assert!(e.contains("designs[0]"), "{e}");
        assert!(!e.contains("invalid type"), "{e}");
    }

    /// The manifest format refuses null everywhere, as the scenario format does: its schema
    /// (the one the shape check walks) admits it at no field.
    #[test]
    fn the_manifest_schema_admits_no_null() {
        let text = serde_json::to_string(manifest_schema()).unwrap();
        assert!(!text.contains("\"null\""), "{text}");
        assert!(!text.contains("\"nullable\":true"), "{text}");
    }
}
