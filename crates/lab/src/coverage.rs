//! Measuring the checkers: false alarms on designs that are safe by
//! construction, and detection of planted bugs, each over a seed sweep under an aggressive
//! nemesis.
//!
//! A coverage folder holds scenario files in two subfolders:
//! - `safe/`: a design that guarantees every invariant it `check`s. Any violation is either a
//!   checker false alarm or a wrong claim about the design; the harness counts it as a failure.
//! - `planted/`: a design with one bad knob. It passes when some checked invariant catches it
//!   in at least [`MIN_CATCH_RATE`] of the seeds. A sidecar `NAME.fix` beside `NAME.json`
//!   holds the fix as a `--vary` edit (`nodes.client.release=compare_and_delete`); the harness
//!   then also sweeps the fixed twin, which must show no violation: the catches are the bug's,
//!   not the nemesis's.
//! - `inert/`: a bad knob that has no unsafe effect in this model (the file's `lesson` says
//!   why); swept and reported so the claim stays measured, never failing.
//!
//! Adding a design or a variant is adding one file. The runs reuse the sweep machinery
//! ([`run_jobs`], [`invariant_stats`], the Wilson interval), so every cell of the report is
//! what `splitbrain sweep FILE --seeds A..B` prints for that file, and the report is the same
//! bytes for any thread count.

use crate::sweep::{invariant_stats, run_jobs, InvariantStats, Job, SeedLine};
use crate::vary::{vary_plans, Vary};
use splitbrain_check::Outcome;
use splitbrain_scenario::load_str;
use splitbrain_scenario::plan::Plan;
use splitbrain_scenario::seeds::SeedRange;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Lowest share of seeds in which some invariant must catch a planted bug (1%).
pub const MIN_CATCH_RATE: f64 = 0.01;

/// Which subfolder a design comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DesignKind {
    /// Safe by construction: every checked invariant must hold on every seed.
    Safe,
    /// One bad knob: some checked invariant must catch it.
    Planted,
    /// A bad knob that has no unsafe effect in this model (its file's `lesson` says why): swept
    /// and reported, never failing.
    Inert,
}

impl DesignKind {
    /// The subfolder's name.
    pub fn folder(self) -> &'static str {
        match self {
            DesignKind::Safe => "safe",
            DesignKind::Planted => "planted",
            DesignKind::Inert => "inert",
        }
    }
}

/// One scenario file of a coverage folder.
#[derive(Clone, Debug)]
pub struct Design {
    /// Safe or planted.
    pub kind: DesignKind,
    /// Its path relative to the coverage folder, `/`-separated (`safe/lease-fenced.json`).
    pub file: String,
    /// The validated scenario.
    pub plan: Plan,
    /// Planted designs: the fix (`PATH=VALUE`) and the fixed twin.
    pub fix: Option<(String, Plan)>,
}

/// Why a coverage folder cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum CoverageError {
    /// A folder or file cannot be read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A scenario file does not validate.
    #[error(transparent)]
    Invalid(#[from] splitbrain_scenario::ScenarioError),
    /// A `.fix` file is not one `PATH=VALUE` edit that validates.
    #[error("{path}: {reason}")]
    Fix {
        /// The `.fix` file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The folder holds no design.
    #[error("{0}: no scenario files in safe/ or planted/")]
    Empty(String),
}

/// Reads every `*.json` of `dir/safe` and `dir/planted`, safe designs first, each folder in
/// file-name order. A missing subfolder is empty.
pub fn load_designs(dir: &Path) -> Result<Vec<Design>, CoverageError> {
    let mut out = Vec::new();
    for kind in [DesignKind::Safe, DesignKind::Planted, DesignKind::Inert] {
        let sub = dir.join(kind.folder());
        if !sub.is_dir() {
            continue;
        }
        let io = |path: &Path, source| CoverageError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut names: Vec<String> = std::fs::read_dir(&sub)
            .map_err(|e| io(&sub, e))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json"))
            .collect();
        names.sort();
        for n in names {
            let path = sub.join(&n);
            let src = splitbrain_scenario::read_scenario(&path)?;
            let file = path.display().to_string();
            let plan = load_str(&file, &src)?;
            let fix_path = path.with_extension("fix");
            let fix = if kind == DesignKind::Planted && fix_path.is_file() {
                let text = splitbrain_scenario::load::check_regular(&fix_path)
                    .and_then(|()| std::fs::read_to_string(&fix_path))
                    .map_err(|e| io(&fix_path, e))?;
                let bad = |reason: String| CoverageError::Fix {
                    path: fix_path.display().to_string(),
                    reason,
                };
                let edit = text.trim().to_string();
                let vary: Vary = edit
                    .parse()
                    .map_err(|e: crate::vary::VaryError| bad(e.to_string()))?;
                if vary.values.len() != 1 {
                    return Err(bad("expected one PATH=VALUE edit".into()));
                }
                let twin = vary_plans(&file, &src, &vary)
                    .map_err(|e| bad(e.to_string()))?
                    .remove(0);
                Some((edit, twin))
            } else {
                None
            };
            out.push(Design {
                kind,
                file: format!("{}/{n}", kind.folder()),
                plan,
                fix,
            });
        }
    }
    if out.is_empty() {
        return Err(CoverageError::Empty(dir.display().to_string()));
    }
    Ok(out)
}

/// What one design's sweep showed.
#[derive(Clone, Debug)]
pub struct DesignResult {
    /// The design.
    pub design: Design,
    /// Runs.
    pub runs: u64,
    /// Per checked invariant, in name order (the sweep's statistics).
    pub stats: Vec<InvariantStats>,
    /// Per checked invariant: runs in which it held vacuously (its premise never occurred).
    pub vacuous: BTreeMap<String, u64>,
    /// Runs in which some checked invariant was violated.
    pub caught: u64,
    /// Runs that decided whether the design was caught: some invariant violated, or none
    /// inconclusive (the catch rate's denominator, as in [`crate::sweep::violation_rate`]).
    pub decided: u64,
    /// Runs that hit an event or time bound (the twin's included).
    pub bounded: u64,
    /// Planted designs with a fix: the fixed twin's statistics and its runs with a violation.
    pub twin: Option<(Vec<InvariantStats>, u64)>,
}

impl DesignResult {
    /// Whether the design passes: a safe one with no violation and no inconclusive run, a
    /// planted one caught in at least [`MIN_CATCH_RATE`] of the runs. A run that hit a bound
    /// fails either.
    pub fn passes(&self) -> bool {
        if self.bounded > 0 || self.runs == 0 {
            return false;
        }
        match self.design.kind {
            DesignKind::Safe => self
                .stats
                .iter()
                .all(|s| s.violated == 0 && s.inconclusive == 0),
            DesignKind::Planted => {
                self.decided > 0
                    && self.caught as f64 >= MIN_CATCH_RATE * self.decided as f64
                    && self.twin.as_ref().map_or(true, |(_, caught)| *caught == 0)
            }
            DesignKind::Inert => true,
        }
    }

    /// Share of the decided runs in which some invariant caught the design, and its 95%
    /// Wilson interval ([`crate::sweep::violation_rate`]); `None` when no run decided.
    pub fn catch_rate(&self) -> Option<(f64, (f64, f64))> {
        crate::sweep::violation_rate(self.caught, self.decided)
    }
}

/// Sweeps every design over `seeds` on `threads` threads (results in design then seed order,
/// whatever the thread count). `on_done` is called after each run.
pub fn measure(
    designs: &[Design],
    seeds: SeedRange,
    threads: usize,
    on_done: &(dyn Fn(&SeedLine) + Sync),
) -> std::io::Result<Vec<DesignResult>> {
    // Every design's plan, then every fixed twin's, in design order.
    let mut plans: Vec<Plan> = designs.iter().map(|d| d.plan.clone()).collect();
    let mut twin_of: Vec<Option<usize>> = Vec::new();
    for d in designs {
        twin_of.push(d.fix.as_ref().map(|(_, twin)| {
            plans.push(twin.clone());
            plans.len() - 1
        }));
    }
    let jobs: Vec<Job> = (0..plans.len())
        .flat_map(|plan| seeds.seeds().map(move |seed| Job { plan, seed }))
        .collect();
    let lines = run_jobs(&plans, &[], &jobs, threads, false, on_done)?;
    let per = seeds.len() as usize;
    let chunks: Vec<&[SeedLine]> = lines.chunks(per).collect();
    let caught = |lines: &[SeedLine]| {
        lines
            .iter()
            .filter(|l| l.outcomes.values().any(|o| *o == Outcome::Violated))
            .count() as u64
    };
    let decided = |lines: &[SeedLine]| {
        lines
            .iter()
            .filter(|l| {
                l.outcomes.values().any(|o| *o == Outcome::Violated)
                    || l.outcomes.values().all(|o| *o != Outcome::Inconclusive)
            })
            .count() as u64
    };
    let bounded = |lines: &[SeedLine]| lines.iter().filter(|l| l.bound.is_some()).count() as u64;
    Ok(designs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let lines = chunks[i];
            let refs: Vec<&SeedLine> = lines.iter().collect();
            let mut vacuous: BTreeMap<String, u64> = BTreeMap::new();
            for l in lines {
                for v in &l.vacuous {
                    *vacuous.entry(v.clone()).or_default() += 1;
                }
            }
            let twin = twin_of[i].map(|t| chunks[t]);
            DesignResult {
                design: d.clone(),
                runs: lines.len() as u64,
                stats: invariant_stats(&refs, 3),
                vacuous,
                caught: caught(lines),
                decided: decided(lines),
                bounded: bounded(lines) + twin.map_or(0, bounded),
                twin: twin.map(|t| {
                    let refs: Vec<&SeedLine> = t.iter().collect();
                    (invariant_stats(&refs, 3), caught(t))
                }),
            }
        })
        .collect())
}

fn pct(x: Option<f64>) -> String {
    crate::sweep::pct_or_na(x)
}

fn ci(c: Option<(f64, f64)>) -> String {
    match c {
        Some(c) => format!("[{}, {}]", pct(Some(c.0)), pct(Some(c.1))),
        None => "n/a".to_string(),
    }
}

/// One line of a file's description, for a table cell (`|` escaped).
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The nemesis of a design in words: kinds and bounds.
fn nemesis_words(plan: &Plan) -> String {
    let Some(n) = &plan.scenario.nemesis else {
        return "none".into();
    };
    let mut kinds = Vec::new();
    if let Some(r) = &n.crash {
        kinds.push(format!("crash {}..{}", r.min.0, r.max.0));
    }
    if let Some(r) = &n.pause {
        kinds.push(format!("pause {}..{}", r.min.0, r.max.0));
    }
    if let Some(r) = &n.partition {
        kinds.push(format!("partition {}..{}", r.min.0, r.max.0));
    }
    if let Some(m) = &n.clock_step {
        kinds.push(format!("clock step ±{}", m.0));
    }
    if let Some(d) = n.drift_ppm {
        kinds.push(format!("drift ±{d} ppm"));
    }
    let targets = match &n.targets {
        Some(t) => t.join(", "),
        None => "every node".into(),
    };
    format!(
        "every {} on average: {}; targets: {targets}",
        n.mean_interval.0,
        kinds.join(", ")
    )
}

/// The report (markdown): the false-alarm table, the planted-bug table (detection rate per
/// variant × invariant with 95% Wilson intervals) and each design's description and nemesis.
/// Depends only on the results, so it is the same bytes on every run. `command` is how to
/// regenerate it.
pub fn render(results: &[DesignResult], seeds: SeedRange, command: &str) -> String {
    let mut o = String::new();
    let n = seeds.len();
    let _ = writeln!(o, "# Checker coverage: false alarms and planted bugs\n");
    let _ = writeln!(
        o,
        "Generated by `{command}` over seeds {seeds} ({n} per design); do not edit by hand. \
         The designs are the scenario files of `tests/coverage/` (method and findings: \
         `tests/coverage/README.md`). Every cell is what `splitbrain sweep FILE --seeds {seeds}` \
         reports for that file; intervals are 95% Wilson score intervals.\n"
    );
    let safe: Vec<&DesignResult> = results
        .iter()
        .filter(|r| r.design.kind == DesignKind::Safe)
        .collect();
    let planted: Vec<&DesignResult> = results
        .iter()
        .filter(|r| r.design.kind != DesignKind::Safe)
        .collect();
    render_false_alarms(&mut o, &safe);
    render_planted(&mut o, &planted);
    render_designs(&mut o, results);
    o
}

/// A design's verdict cell: `ok`, `**FAIL**`, or inert (shown, not judged).
fn verdict(r: &DesignResult) -> &'static str {
    match (r.design.kind, r.passes()) {
        (DesignKind::Inert, _) => "inert (see its notes)",
        (_, true) => "ok",
        (_, false) => "**FAIL**",
    }
}

/// The false-alarm table: each safe design's invariants, a violation of any a false alarm.
fn render_false_alarms(o: &mut String, safe: &[&DesignResult]) {
    let _ = writeln!(o, "## False alarms: safe designs\n");
    let _ = writeln!(
        o,
        "Each design guarantees the invariants listed; any violation is a false alarm (or a \
         wrong claim). `vacuous` counts runs where the invariant's premise never occurred \
         (nothing was written, claimed or acquired): such a pass shows nothing.\n"
    );
    let _ = writeln!(
        o,
        "| design | invariant | violated | rate | 95% CI | vacuous | verdict |"
    );
    let _ = writeln!(o, "|---|---|---:|---:|---|---:|---|");
    for r in safe {
        for s in &r.stats {
            let _ = writeln!(
                o,
                "| {} | {} | {}/{} | {} | {} | {} | {} |",
                r.design.plan.scenario.name,
                s.name,
                s.violated,
                s.decided(),
                pct(s.rate),
                ci(s.ci),
                r.vacuous.get(&s.name).copied().unwrap_or(0),
                verdict(r)
            );
        }
    }
}

/// The planted-bug tables: each variant's catch rate beside its fixed twin's, then each
/// checked invariant's detection rate.
fn render_planted(o: &mut String, planted: &[&DesignResult]) {
    let _ = writeln!(
        o,
        "\n## Planted bugs: detection rate per variant and invariant\n"
    );
    // Two narrow tables, not one with a column per invariant: that one was 13 columns of
    // unbreakable names and cells, wider than any page (a markdown table cannot wrap them).
    let _ = writeln!(
        o,
        "Each variant has one bad knob. `caught` is the share of seeds in which some checked \
         invariant is violated; a variant passes when it is at least {}. `with the fix` is the \
         same file with the bad knob set right (its `.fix` edit, in its notes below) over the \
         same seeds: it must \
         show no violation, so the catches are the bug's and not the nemesis's. An `inert` \
         variant has no unsafe effect in this model (its notes below say why) and is shown, not \
         judged. The second table gives each checked invariant's detection rate.\n",
        pct(Some(MIN_CATCH_RATE))
    );
    let _ = writeln!(o, "| variant | caught | 95% CI | with the fix | verdict |");
    let _ = writeln!(o, "|---|---:|---|---|---|");
    for r in planted {
        // The fix's edit is in the design's notes below: a long `path=value` cannot wrap.
        let fix = match &r.twin {
            Some((_, caught)) => format!("{caught}/{}", r.runs),
            None => "-".to_string(),
        };
        let _ = writeln!(
            o,
            "| {} | {}/{} ({}) | {} | {fix} | {} |",
            r.design.plan.scenario.name,
            r.caught,
            r.decided,
            pct(r.catch_rate().map(|(x, _)| x)),
            ci(r.catch_rate().map(|(_, c)| c)),
            verdict(r)
        );
    }
    let _ = writeln!(
        o,
        "\n### Detection rate per variant and invariant\n\n\
         | variant | invariant | violated | rate | 95% CI |\n|---|---|---:|---:|---|"
    );
    for r in planted {
        for s in &r.stats {
            let _ = writeln!(
                o,
                "| {} | {} | {}/{} | {} | {} |",
                r.design.plan.scenario.name,
                s.name,
                s.violated,
                s.decided(),
                pct(s.rate),
                ci(s.ci)
            );
        }
    }
}

/// Each design's description, lesson, run, nemesis, checks, fix and first violating seeds.
fn render_designs(o: &mut String, results: &[DesignResult]) {
    let _ = writeln!(o, "\n## The designs\n");
    for r in results {
        let sc = &r.design.plan.scenario;
        let _ = writeln!(o, "### {} (`{}`)\n", sc.name, r.design.file);
        if let Some(d) = &sc.description {
            let _ = writeln!(o, "{}\n", cell(d));
        }
        if let Some(l) = &sc.lesson {
            let _ = writeln!(o, "{}\n", cell(l));
        }
        let _ = writeln!(
            o,
            "- run: {}; nemesis: {}",
            sc.duration.0,
            nemesis_words(&r.design.plan)
        );
        let _ = writeln!(o, "- checks: {}", sc.check.join(", "));
        if let Some((edit, _)) = &r.design.fix {
            let _ = writeln!(o, "- the fix: `{edit}`");
        }
        if r.bounded > 0 {
            let _ = writeln!(o, "- **{} runs hit an event or time bound**", r.bounded);
        }
        if let Some((twin, _)) = &r.twin {
            for s in twin {
                if !s.first_seeds.is_empty() {
                    let seeds: Vec<String> = s.first_seeds.iter().map(u64::to_string).collect();
                    let _ = writeln!(
                        o,
                        "- **with the fix**, first seeds violating {}: {}",
                        s.name,
                        seeds.join(", ")
                    );
                }
            }
        }
        for s in &r.stats {
            if !s.first_seeds.is_empty() {
                let seeds: Vec<String> = s.first_seeds.iter().map(u64::to_string).collect();
                let _ = writeln!(
                    o,
                    "- first seeds violating {}: {}",
                    s.name,
                    seeds.join(", ")
                );
            }
        }
        let _ = writeln!(o);
    }
}
