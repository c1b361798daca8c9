//! `splitbrain sweep FILE --seeds A..B`: one run per seed in parallel, violation rates with
//! 95% Wilson intervals, the failing seeds with the command that reproduces each, throughput,
//! a results file (JSON Lines, seed order, identical for any `--jobs`), parameter sweeps
//! (`--vary`) with a chart, and shards (`--shard K/N`) for running on many machines.

use crate::atomic::{finish, AtomicFile};
use crate::exit;
use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use splitbrain_lab::grid::{check_grid_size, limit_of, Grid, RunEnds};
use splitbrain_lab::sweep::{
    header_jsonl, judge_rates_of, line_jsonl, pct_or_na, violation_rate, InvariantStats, SeedLine,
    StatsTally, SweepHeader, VaryHeader,
};
use splitbrain_lab::threshold::{
    bisect, measure_probe, pick_invariant, Num, Probe, ProbeBounds, ProbeCounts, Search, Threshold,
};
use splitbrain_lab::vary::{plan_with_roles, Setting, Vary};
use splitbrain_report::reproduce_command_with;
use splitbrain_report::summary::plural;
use splitbrain_report::sweep_chart::{
    log_axis_ok, render_sweep, RatePoint, RateSeries, SweepChart, SweepParam,
};
use splitbrain_report::ChartFormat;
use splitbrain_scenario::seeds::{seed_count, SeedRange, Shard};
use splitbrain_scenario::Plan;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Arguments of `sweep`.
#[derive(Args)]
pub struct SweepArgs {
    /// The scenario file.
    pub file: PathBuf,
    /// Seeds to run: A..B (B excluded: 0..1000 is 1000 seeds), A..=B (B included: 0..=999 is
    /// the same 1000) or one seed A; at most 10,000,000.
    #[arg(long, value_name = "A..B", allow_hyphen_values = true)]
    pub seeds: SeedRange,
    /// Worker threads (default: the available cores). Results do not depend on it.
    #[arg(long, short = 'j', value_name = "N", allow_negative_numbers = true)]
    pub jobs: Option<usize>,
    /// Write one JSON line per run (after a header line) to this file, in seed order.
    #[arg(long, value_name = "results.jsonl")]
    pub out: Option<PathBuf>,
    /// Sweep a parameter: set the scenario's JSON at a dotted path to each value in turn
    /// (e.g. nodes.client-1.clock.drift_ppm=0,100,1000 or faults.0.for=1s,5s,15s). Repeat it
    /// for a grid: every combination of the values is swept, the first parameter outermost.
    #[arg(long, value_name = "PATH=V1,V2,...")]
    pub vary: Vec<Vary>,
    /// Bisect a numeric or duration parameter between LO and HI for the value where the
    /// violation rate of --invariant crosses --level (e.g. faults.0.for=1s..20s); every probe
    /// runs the same --seeds, so the search is deterministic.
    #[arg(long, value_name = "PATH=LO..HI", conflicts_with_all = ["vary", "chart", "out", "shard"])]
    pub find_threshold: Option<Search>,
    /// With --find-threshold: the violation rate to find, 0..=1 (default 0.5). The search
    /// finds where the rate goes above it; at 1, which no rate is above, where it reaches 1
    /// (every run violated), as at 0 it finds where it leaves 0 (the first violations).
    #[arg(
        long,
        value_name = "RATE",
        requires = "find_threshold",
        allow_negative_numbers = true
    )]
    pub level: Option<f64>,
    /// With --find-threshold: the invariant whose rate is searched (default: the only one checked).
    #[arg(long, value_name = "NAME", requires = "find_threshold")]
    pub invariant: Option<String>,
    /// With --find-threshold: most midpoints to probe after the two ends (default 8).
    #[arg(
        long,
        value_name = "N",
        requires = "find_threshold",
        allow_negative_numbers = true
    )]
    pub steps: Option<u32>,
    /// Run only the K-th of N interleaved slices of the seeds ((seed - A) % N == K); combine
    /// the shards' --out files with `splitbrain merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// With --vary: draw P(violation) against the parameter (one --vary), or a heat map per
    /// invariant (two --vary), as SVG or PNG by the extension.
    #[arg(long, value_name = "OUT.svg|png")]
    pub chart: Option<PathBuf>,
    /// With --chart and one numeric --vary: a logarithmic x axis (every value above zero).
    #[arg(long, requires = "chart")]
    pub log_x: bool,
    /// Give every line of the results file its trace hash (the hash `run --trace` prints for
    /// that seed). Off by default: hashing serialises every event of every run, most of a
    /// short run's cost.
    #[arg(long, requires = "out")]
    pub hash: bool,
    /// Failing seeds to list per invariant (not with --find-threshold, which lists probes).
    #[arg(
        long,
        default_value_t = 3,
        value_name = "N",
        conflicts_with = "find_threshold",
        allow_negative_numbers = true
    )]
    pub show: usize,
}

fn pct(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

/// Prints the per-invariant table of one set of runs.
fn print_stats(stats: &[InvariantStats], repro: &dyn Fn(u64) -> String) -> Result<()> {
    outln!(
        "  {:<26}{:>16}  {:>8}  95% CI",
        "invariant",
        "violated",
        "rate"
    );
    for s in stats {
        // The rate is over the runs that decided (`violation_rate`): n/a when none did.
        let ci = s.ci.map_or("n/a".to_string(), |(lo, hi)| {
            format!("[{}, {}]", pct(lo), pct(hi))
        });
        outln!(
            "  {:<26}{:>16}  {:>8}  {ci}{}",
            s.name,
            format!("{}/{}", s.violated, s.decided()),
            pct_or_na(s.rate),
            s.notes(),
        );
        for seed in &s.first_seeds {
            outln!("      seed {seed:<8} {}", repro(*seed));
        }
        if s.violated > s.first_seeds.len() as u64 {
            outln!("      ... {} more", s.violated - s.first_seeds.len() as u64);
        }
    }
    Ok(())
}

fn progress(total: u64) -> (ProgressBar, bool) {
    if std::io::stderr().is_terminal() {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:40.cyan/blue} {pos}/{len} runs  {per_sec}  eta {eta}",
            )
            .expect("a valid template"),
        );
        (bar, true)
    } else {
        (ProgressBar::hidden(), false)
    }
}

/// Most worker threads `--jobs` accepts.
const MAX_JOBS: usize = 256;

/// The command that reproduces one seed of one combination: `run` with the varied values.
fn run_command(file: &str, seed: u64, combo: &[Setting]) -> String {
    reproduce_command_with(file, combo, seed)
}

pub(crate) fn threads_of(jobs: Option<usize>) -> Result<usize> {
    Ok(match jobs {
        Some(0) => return Err(exit::BadInput("--jobs must be at least 1".into()).into()),
        Some(n) if n > MAX_JOBS => {
            return Err(exit::BadInput(format!(
                "--jobs {n} is more threads than makes sense: at most {MAX_JOBS}"
            ))
            .into())
        }
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    })
}

/// The sweep chart's format by its extension, checked against the --vary count and --log-x.
fn chart_format(chart: &std::path::Path, a: &SweepArgs) -> Result<ChartFormat> {
    let Some(format) = ChartFormat::from_path(chart) else {
        return Err(exit::BadInput(format!(
            "{}: the sweep chart is SVG or PNG: name it OUT.svg or OUT.png",
            chart.display()
        ))
        .into());
    };
    if a.vary.len() > 2 {
        return Err(exit::BadInput(format!(
            "--chart draws one parameter (a line) or two (a heat map), not {}",
            a.vary.len()
        ))
        .into());
    }
    if a.log_x {
        if a.vary.len() != 1 {
            return Err(exit::BadInput("--log-x needs exactly one --vary".into()).into());
        }
        log_axis_ok(&a.vary[0].values)
            .map_err(|e| exit::BadInput(format!("--log-x with --vary {}: {e}", a.vary[0].path)))?;
    }
    Ok(format)
}

/// `--find-threshold`: bisects the parameter, printing each probe and the bracket found.
///
/// Long because it refuses every bad search argument before any run, then prints each probe as it
/// is measured.
fn find_threshold(
    a: &SweepArgs,
    file: &str,
    src: &str,
    base: &Plan,
    search: &Search,
) -> Result<u8> {
    let level = a.level.unwrap_or(0.5);
    if !(0.0..=1.0).contains(&level) || level.is_nan() {
        return Err(exit::BadInput(format!("--level {level} is not a rate in 0..=1")).into());
    }
    let invariant = pick_invariant(base, a.invariant.as_deref(), file).map_err(exit::BadInput)?;
    search
        .check_numeric(src)
        .map_err(|e| exit::BadInput(e.to_string()))?;
    let threads = threads_of(a.jobs)?;
    let seed_total = seed_count(a.seeds, None);
    if seed_total == 0 {
        return Err(exit::BadInput("--seeds holds no seed".into()).into());
    }
    // Both ends must make valid scenarios before anything runs.
    for end in [search.lo, search.hi] {
        let set = [Setting {
            path: search.path.clone(),
            value: end.text(),
        }];
        plan_with_roles(&base.roles, file, src, &set).map_err(|e| exit::BadInput(e.to_string()))?;
    }
    outln!("sweep     {} ({file})", base.scenario.name);
    outln!(
        "search    {} in {}..{} for P({invariant} violated) = {} over seeds {} ({}, {})",
        search.path,
        search.lo.text(),
        search.hi.text(),
        pct(level),
        a.seeds,
        plural(seed_total as usize, "seed"),
        plural(threads, "job")
    );
    let mut stdout_error: Option<std::io::Error> = None;
    let mut bounded = ProbeBounds::default();
    let probe_threads = threads.min(usize::try_from(seed_total).unwrap_or(usize::MAX));
    let mut measure = |value: &str| -> Result<(u64, u64), String> {
        let ProbeCounts {
            violated,
            runs,
            inconclusive,
        } = measure_probe(
            (&base.roles, file, src),
            (&search.path, value),
            &invariant,
            (a.seeds, probe_threads),
            &mut bounded,
        )?;
        // A probe's error is a string (bisect's); a closed stdout is kept aside to end the
        // command as one.
        if let Err(e) = writeln!(
            std::io::stdout(),
            "{}",
            probe_line(value, violated, runs, inconclusive)
        ) {
            let message = e.to_string();
            stdout_error = Some(e);
            return Err(message);
        }
        if runs == 0 {
            return Err(format!(
                "at {value} no run decided {invariant} ({inconclusive} inconclusive): no rate to compare with the level"
            ));
        }
        Ok((violated, runs))
    };
    let result = bisect(search, level, a.steps.unwrap_or(8), &mut measure);
    if let Some(e) = stdout_error {
        return Err(e.into());
    }
    let bound_line = |b: &ProbeBounds| {
        b.first.as_ref().map(|(value, seed, msg)| {
            format!(
                "bound     {} hit {}; first, seed {seed} (value {value}): {msg}",
                plural(b.count as usize, "probe run"),
                limit_of(msg)
            )
        })
    };
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            // A probe that could not be measured because its runs stopped at a bound is the
            // bound's exit (3), with its message, not a failure (1).
            if let Some(line) = bound_line(&bounded) {
                outln!();
                outln!("threshold none: a probe could not be measured: {e}");
                outln!("{line}");
                return Ok(exit::BOUND);
            }
            return Err(anyhow::anyhow!("a probe failed: {e}"));
        }
    };
    print_threshold(search, level, &result, bound_line(&bounded))
}

/// The bracket a threshold search found (or that it found none) with the rates at its ends, and
/// the exit code: 0 for a bracket, 1 for none, 3 when a probe run hit a bound (`bound`: its line).
fn print_threshold(
    search: &Search,
    level: f64,
    result: &Threshold,
    bound: Option<String>,
) -> Result<u8> {
    // Every value this report shows, in one style ([`Num::shown`]).
    let all: Vec<Num> = result
        .probes
        .iter()
        .map(|p| p.value)
        .chain([search.lo, search.hi])
        .collect();
    let shown_all = Num::shown(&all);
    let shown = |v: Num| -> String {
        let i = all.iter().position(|x| *x == v).unwrap_or(0);
        shown_all[i].clone()
    };
    let describe = |p: &Probe| {
        format!(
            "{} at {} [{}, {}]",
            pct(p.rate()),
            shown(p.value),
            pct(p.ci.0),
            pct(p.ci.1)
        )
    };
    outln!();
    match &result.bracket {
        Some((below, above)) => {
            outln!(
                "threshold {} crosses {} between {} and {} ({} probes)",
                search.path,
                pct(level),
                shown(below.value),
                shown(above.value),
                result.probes.len()
            );
            outln!("  below   {}", describe(below));
            outln!("  above   {}", describe(above));
            let unsure = [below, above]
                .iter()
                .any(|p| p.ci.0 <= level && level <= p.ci.1);
            if unsure {
                outln!(
                    "  note    a 95% interval at an end contains the level: more --seeds would \
                     place the threshold surely"
                );
            }
            if let Some(line) = &bound {
                outln!("{line}");
                return Ok(exit::BOUND);
            }
            Ok(exit::OK)
        }
        None => {
            let (lo, hi) = (&result.probes[0], &result.probes[1]);
            outln!(
                "threshold none: the rate does not cross {} between {} and {}",
                pct(level),
                shown(search.lo),
                shown(search.hi)
            );
            outln!("  low     {}", describe(lo));
            outln!("  high    {}", describe(hi));
            if let Some(line) = &bound {
                outln!("{line}");
                return Ok(exit::BOUND);
            }
            Ok(exit::MISMATCH)
        }
    }
}

/// One probe's line: its value, violated/decided runs, the rate and its 95% interval, and the
/// inconclusive runs when there are any.
fn probe_line(value: &str, violated: u64, runs: u64, inconclusive: u64) -> String {
    let rate = violation_rate(violated, runs);
    format!(
        "  probe   {:<14} {:>12}  {:>8}  {}{}",
        value,
        format!("{violated}/{runs}"),
        pct_or_na(rate.map(|(r, _)| r)),
        rate.map_or("n/a".to_string(), |(_, ci)| format!(
            "[{}, {}]",
            pct(ci.0),
            pct(ci.1)
        )),
        if inconclusive > 0 {
            format!("  ({inconclusive} inconclusive)")
        } else {
            String::new()
        }
    )
}

/// Refuses (exit 2, before anything is read) a `--vary` or `--find-threshold` of a path that
/// `sweep` itself overrides in every run: `seed` (each run's seed is one of `--seeds`) and
/// `rate_seeds` (`sweep` judges `expect_rate` over `--seeds`; the file's `rate_seeds` is what
/// `check` sweeps). `--find-threshold seed=1..3` bisected a value no run used and reported
/// "threshold none" with the same rate at both ends.
fn overridden_paths(a: &SweepArgs) -> Result<()> {
    let given = a.vary.iter().map(|v| ("--vary", v.path.as_str())).chain(
        a.find_threshold
            .iter()
            .map(|s| ("--find-threshold", s.path.as_str())),
    );
    for (flag, path) in given {
        let why = match path {
            "seed" => {
                "every run's seed is one of --seeds, which replaces the file's `seed`: \
                       give the seeds to sweep with --seeds A..B"
            }
            "rate_seeds" => {
                "sweep judges `expect_rate` over --seeds, not over the file's \
                             `rate_seeds` (the seeds `check` sweeps): give them with --seeds A..B"
            }
            _ => continue,
        };
        return Err(exit::BadInput(format!("{flag} {path}: {why}")).into());
    }
    Ok(())
}

/// Runs `sweep`.
///
/// Long because it is the sweep's one sequence (refuse bad arguments, open the outputs, run,
/// print), every step a call or a few lines.
pub fn run(a: SweepArgs, roles: &splitbrain_scenario::RoleRegistry) -> Result<u8> {
    let file = a.file.display().to_string();
    let outputs: Vec<(&str, &Path)> = [("--out", &a.out), ("--chart", &a.chart)]
        .into_iter()
        .filter_map(|(w, p)| p.as_deref().map(|p| (w, p)))
        .collect();
    crate::atomic::check_distinct(&[("the scenario", &a.file)], &outputs)?;
    overridden_paths(&a)?;
    let src = splitbrain_scenario::read_scenario(&a.file)?;
    let base = roles.load_str(&file, &src)?;
    if let Some(search) = a.find_threshold.clone() {
        return find_threshold(&a, &file, &src, &base, &search);
    }
    if a.chart.is_some() && a.vary.is_empty() {
        return Err(exit::BadInput(
            "--chart draws P(violation) against a parameter: it needs --vary".into(),
        )
        .into());
    }
    let chart_format = match &a.chart {
        Some(chart) => Some(chart_format(chart, &a)?),
        None => None,
    };
    // Outputs are checked writable before any seed runs (a long sweep must not fail at its end).
    let out_file = a.out.as_deref().map(AtomicFile::create).transpose()?;
    let chart_file = a.chart.as_deref().map(AtomicFile::create).transpose()?;
    let threads = threads_of(a.jobs)?;
    // The seeds are counted, never listed: a list as long as the range would make memory grow
    // with it.
    let seed_total = seed_count(a.seeds, a.shard);
    check_grid_size(&a.vary, seed_total).map_err(exit::BadInput)?;
    let grid = Grid::new(roles, &file, &src, &a.vary).map_err(|e| exit::BadInput(e.to_string()))?;
    let total = grid.plans.len() as u64 * seed_total;
    if total == 0 {
        return Err(exit::BadInput(
            "this seed range and shard hold no seed to run: widen --seeds or pick another --shard"
                .into(),
        )
        .into());
    }
    // No more threads than runs.
    let threads = threads.min(usize::try_from(total).unwrap_or(usize::MAX));
    print_head(&a, &file, &base, seed_total, threads)?;

    let (bar, on_terminal) = progress(total);
    let done = AtomicU64::new(0);
    let on_done = |_: &SeedLine| {
        let d = done.fetch_add(1, Ordering::Relaxed) + 1;
        if on_terminal {
            bar.inc(1);
        } else if d * 10 / total != (d - 1) * 10 / total {
            eprintln!("sweep: {d}/{total} runs ({}%)", d * 100 / total);
        }
    };
    let header = SweepHeader::new(
        &base.scenario,
        a.seeds,
        (!a.vary.is_empty()).then(|| VaryHeader {
            path: a
                .vary
                .iter()
                .map(|v| v.path.as_str())
                .collect::<Vec<_>>()
                .join(","),
            values: grid.values.clone(),
        }),
        a.shard,
    )
    .with_trace_hashes(a.hash);
    // The results file is written as the runs end, in job order.
    let mut out = match &out_file {
        Some(f) => {
            let mut w = std::io::BufWriter::new(f.writer()?);
            w.write_all(header_jsonl(&header).as_bytes())?;
            Some(w)
        }
        None => None,
    };
    // Wall time of the sweep, for the throughput line only: it never reaches a run.
    #[allow(clippy::disallowed_methods)]
    let started = std::time::Instant::now();
    let jobs = grid.jobs(a.seeds, a.shard);
    let (tallies, ends) = grid
        .run(
            jobs,
            threads,
            (a.hash, a.show),
            &on_done,
            |line| match &mut out {
                Some(w) => w.write_all(line_jsonl(line).as_bytes()),
                None => Ok(()),
            },
        )
        .context("a run failed")?;
    let secs = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    if let (Some(w), Some(f)) = (out, out_file) {
        // Flushes the buffer; the file is moved into place only once every line is written.
        drop(w.into_inner().map_err(|e| e.into_error())?);
        f.commit()?;
    }

    let (per_value, rates_ok) = print_per_value(&file, &grid, tallies)?;
    if !a.vary.is_empty() {
        print_rate_table(&a, &grid, &per_value)?;
        if let (Some(f), Some(format)) = (chart_file, chart_format) {
            let bytes = render_sweep(&sweep_chart(&a, &base, seed_total, &per_value), format)
                .context("drawing the sweep chart")?;
            finish(f, &bytes)?;
        }
    }
    print_ends(&a, ends, (total, threads, secs), rates_ok)
}

/// The sweep's first lines: the scenario, the seeds (and shard) with the runs' threads, and
/// each `--vary` path with its values.
fn print_head(
    a: &SweepArgs,
    file: &str,
    base: &Plan,
    seed_total: u64,
    threads: usize,
) -> Result<()> {
    outln!("sweep     {} ({file})", base.scenario.name);
    match a.shard {
        Some(s) => outln!(
            "seeds     {} shard {s}: {}, {}",
            a.seeds,
            plural(seed_total as usize, "seed"),
            plural(threads, "job")
        ),
        None => outln!(
            "seeds     {}: {}, {}",
            a.seeds,
            plural(seed_total as usize, "seed"),
            plural(threads, "job")
        ),
    }
    for v in &a.vary {
        // `|` between values: a value may hold ", " itself (`"x, y"` is one value).
        outln!("vary      {} = {}", v.path, v.values.join(" | "));
    }
    Ok(())
}

/// Each combination's block (one without `--vary`): its values, then its invariants' rates
/// with the failing seeds and the command that reproduces each, and its rate judgements.
/// Returns each combination's stats, and whether every rate met the file's `expect_rate`.
fn print_per_value(
    file: &str,
    grid: &Grid,
    tallies: Vec<StatsTally>,
) -> Result<(Vec<Vec<InvariantStats>>, bool)> {
    let combos = &grid.combos;
    let plans = &grid.plans;
    let file = file.to_string();
    // Per value (one block without --vary).
    let mut per_value: Vec<Vec<InvariantStats>> = Vec::new();
    let mut rates_ok = true;
    for (i, tally) in tallies.into_iter().enumerate() {
        let stats = tally.finish();
        outln!();
        let combo = &combos[i];
        if !combo.is_empty() {
            let words: Vec<String> = combo
                .iter()
                .map(|s| format!("{} = {}", s.path, s.value))
                .collect();
            outln!("{}", words.join(", "));
        }
        // A failing seed is reproduced by `run` with the varied values applied.
        print_stats(&stats, &|seed| run_command(&file, seed, combo))?;
        for j in judge_rates_of(&plans[i].scenario, &stats) {
            outln!("  rate      {j}");
            for w in j.warnings() {
                outln!("            {w}");
            }
            rates_ok &= j.ok;
        }
        per_value.push(stats);
    }
    Ok((per_value, rates_ok))
}

/// The table of P(violation) by the `--vary` values: a row per combination, a column per
/// invariant any combination checks.
fn print_rate_table(a: &SweepArgs, grid: &Grid, per_value: &[Vec<InvariantStats>]) -> Result<()> {
    let combos = &grid.combos;
    let names = checked_names(per_value);
    let paths: Vec<&str> = a.vary.iter().map(|v| v.path.as_str()).collect();
    outln!();
    outln!("P(violation) by {}", paths.join(" \u{00d7} "));
    for p in &paths {
        out!("  {p:<14}");
    }
    for n in &names {
        out!("  {n:>26}");
    }
    outln!();
    for (combo, stats) in combos.iter().zip(per_value) {
        for (s, p) in combo.iter().zip(&paths) {
            out!("  {:<w$}", s.value, w = p.len().max(14));
        }
        for n in &names {
            let cell = stats
                .iter()
                .find(|s| &s.name == n)
                .map_or("-".to_string(), |s| {
                    // A rate over vacuous runs says so, as the per-value table does.
                    if s.vacuous > 0 {
                        format!("{} ({} vac.)", pct_or_na(s.rate), s.vacuous)
                    } else {
                        pct_or_na(s.rate)
                    }
                });
            out!("  {cell:>26}");
        }
        outln!();
    }
    Ok(())
}

/// Every invariant any combination checks, by name.
fn checked_names(per_value: &[Vec<InvariantStats>]) -> Vec<String> {
    per_value
        .iter()
        .flatten()
        .map(|s| s.name.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The sweep chart: P(violation) of each invariant against the `--vary` values.
fn sweep_chart(
    a: &SweepArgs,
    base: &Plan,
    seed_total: u64,
    per_value: &[Vec<InvariantStats>],
) -> SweepChart {
    let names = checked_names(per_value);
    let series: Vec<RateSeries> = names
        .iter()
        .map(|n| RateSeries {
            name: n.clone(),
            points: per_value
                .iter()
                .map(|stats| {
                    // No decided run: no rate, drawn as missing (the table's n/a).
                    let s = stats.iter().find(|s| &s.name == n)?;
                    let (rate, (lo, hi)) = (s.rate?, s.ci?);
                    Some(RatePoint {
                        rate,
                        lo,
                        hi,
                        decided: s.decided(),
                        vacuous: s.vacuous,
                    })
                })
                .collect(),
        })
        .collect();
    SweepChart {
        title: format!(
            "{}: P(violation) over {}",
            base.scenario.name,
            plural(seed_total as usize, "seed")
        ),
        params: a
            .vary
            .iter()
            .map(|v| SweepParam {
                path: v.path.clone(),
                values: v.values.clone(),
            })
            .collect(),
        series,
        log_x: a.log_x,
    }
}

/// The sweep's last lines: how many runs matched the file's expectation, the speed, the
/// bounds hit, the files written and the rates; and the exit code they make. `runs`:
/// (runs in all, threads, wall seconds).
fn print_ends(
    a: &SweepArgs,
    ends: RunEnds,
    (total, threads, secs): (u64, usize, f64),
    rates_ok: bool,
) -> Result<u8> {
    let RunEnds {
        matched,
        bounded,
        events,
        bounds,
    } = ends;
    outln!();
    outln!(
        "expected  {matched} of {total} runs matched the file's expectation{}",
        if bounded > 0 {
            format!("; {bounded} hit a bound")
        } else {
            String::new()
        }
    );
    outln!(
        "speed     {total} {} in {secs:.2} s: {:.0} runs/s, {:.0} events/s ({threads} {})",
        if total == 1 { "run" } else { "runs" },
        total as f64 / secs.max(1e-9),
        events as f64 / secs.max(1e-9),
        if threads == 1 { "job" } else { "jobs" }
    );
    // Name the bound(s) hit, and how to raise them, as `run` does (not only "5 hit a
    // bound").
    for (limit, (count, first)) in &bounds {
        outln!(
            "bound     {count} {} hit {limit}; first, seed {}{}: {}",
            if *count == 1 { "run" } else { "runs" },
            first.seed,
            first
                .value
                .as_deref()
                .map(|v| format!(" (value {v})"))
                .unwrap_or_default(),
            first.bound.as_deref().unwrap_or_default()
        );
    }
    if let Some(out) = &a.out {
        outln!("results   {}", out.display());
    }
    if let Some(chart) = &a.chart {
        outln!("chart     {}", chart.display());
    }
    if !rates_ok {
        outln!("rates     NOT as expected: a violation rate is outside the file's expect_rate");
    }
    Ok(if bounded > 0 {
        exit::BOUND
    } else if matched == total && rates_ok {
        exit::OK
    } else {
        exit::MISMATCH
    })
}
