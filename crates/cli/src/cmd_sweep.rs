//! `splitbrain sweep FILE --seeds A..B`: one run per seed in parallel, violation rates with
//! 95% Wilson intervals, the failing seeds with the command that reproduces each, throughput,
//! a results file (JSON Lines, seed order, identical for any `--jobs`), parameter sweeps
//! (`--vary`) with a chart, and shards (`--shard K/N`) for running on many machines.

use crate::atomic::{finish, AtomicFile};
use crate::exit;
use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use splitbrain_report::reproduce_command;
use splitbrain_report::sweep_chart::{sweep_chart_svg, RatePoint, RateSeries};
use splitbrain_scenario::sweep::{
    invariant_stats, judge_rates, results_jsonl, run_jobs, seeds_of, InvariantStats, Job, SeedLine,
    SeedRange, Shard, SweepHeader, VaryHeader,
};
use splitbrain_scenario::vary::{vary_plans, Vary};
use splitbrain_scenario::{load_str, Plan};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Arguments of `sweep`.
#[derive(Args)]
pub struct SweepArgs {
    /// The scenario file.
    pub file: PathBuf,
    /// Seeds to run: A..B (B excluded), A..=B, or one seed.
    #[arg(long, value_name = "A..B")]
    pub seeds: SeedRange,
    /// Worker threads (default: the available cores). Results do not depend on it.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// Write one JSON line per run (after a header line) to this file, in seed order.
    #[arg(long, value_name = "results.jsonl")]
    pub out: Option<PathBuf>,
    /// Sweep a parameter: set the scenario's JSON at a dotted path to each value in turn
    /// (e.g. nodes.client-1.clock.drift_ppm=0,100,1000 or faults.0.for=1s,5s,15s).
    #[arg(long, value_name = "PATH=V1,V2,...")]
    pub vary: Option<Vary>,
    /// Run only the K-th of N interleaved slices of the seeds ((seed - A) % N == K); combine
    /// the shards' --out files with `splitbrain merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// With --vary: draw P(violation) against the parameter as SVG.
    #[arg(long, value_name = "OUT.svg")]
    pub chart: Option<PathBuf>,
    /// Failing seeds to list per invariant.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub show: usize,
}

fn pct(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

/// Prints the per-invariant table of one set of runs.
fn print_stats(stats: &[InvariantStats], repro: &dyn Fn(u64) -> String) {
    println!(
        "  {:<26}{:>16}  {:>8}  95% CI",
        "invariant", "violated", "rate"
    );
    for s in stats {
        let inconclusive = if s.inconclusive > 0 {
            format!("  ({} inconclusive)", s.inconclusive)
        } else {
            String::new()
        };
        println!(
            "  {:<26}{:>16}  {:>8}  [{}, {}]{inconclusive}",
            s.name,
            format!("{}/{}", s.violated, s.runs),
            pct(s.rate),
            pct(s.ci.0),
            pct(s.ci.1)
        );
        for seed in &s.first_seeds {
            println!("      seed {seed:<8} {}", repro(*seed));
        }
        if s.violated > s.first_seeds.len() as u64 {
            println!("      ... {} more", s.violated - s.first_seeds.len() as u64);
        }
    }
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

/// Runs `sweep`.
pub fn run(a: SweepArgs) -> Result<u8> {
    let file = a.file.display().to_string();
    let src =
        std::fs::read_to_string(&a.file).map_err(|e| exit::BadInput(format!("{file}: {e}")))?;
    let base = load_str(&file, &src)?;
    if a.chart.is_some() && a.vary.is_none() {
        return Err(exit::BadInput(
            "--chart draws P(violation) against a parameter: it needs --vary".into(),
        )
        .into());
    }
    if let Some(chart) = &a.chart {
        if chart.extension().and_then(|e| e.to_str()) != Some("svg") {
            return Err(exit::BadInput(format!(
                "{}: the sweep chart is SVG: name it OUT.svg",
                chart.display()
            ))
            .into());
        }
    }
    // Outputs are checked writable before any seed runs (a long sweep must not fail at its end).
    let out_file = a.out.as_deref().map(AtomicFile::create).transpose()?;
    let chart_file = a.chart.as_deref().map(AtomicFile::create).transpose()?;
    let threads = match a.jobs {
        Some(0) => return Err(exit::BadInput("--jobs must be at least 1".into()).into()),
        Some(n) if n > MAX_JOBS => {
            return Err(exit::BadInput(format!(
                "--jobs {n} is more threads than makes sense: at most {MAX_JOBS}"
            ))
            .into())
        }
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let (plans, values): (Vec<Plan>, Vec<String>) = match &a.vary {
        Some(v) => (
            vary_plans(&file, &src, v).map_err(|e| exit::BadInput(e.to_string()))?,
            v.values.clone(),
        ),
        None => (vec![base.clone()], Vec::new()),
    };
    let seeds = seeds_of(a.seeds, a.shard);
    let jobs: Vec<Job> = (0..plans.len())
        .flat_map(|plan| seeds.iter().map(move |&seed| Job { plan, seed }))
        .collect();
    let total = jobs.len() as u64;
    if jobs.is_empty() {
        return Err(exit::BadInput(
            "this seed range and shard hold no seed to run: widen --seeds or pick another --shard"
                .into(),
        )
        .into());
    }
    // No more threads than runs.
    let threads = threads.min(jobs.len().max(1));

    println!("sweep     {} ({file})", base.scenario.name);
    match a.shard {
        Some(s) => println!(
            "seeds     {} shard {s}: {} seeds, {threads} jobs",
            a.seeds,
            seeds.len()
        ),
        None => println!(
            "seeds     {}: {} seeds, {threads} jobs",
            a.seeds,
            seeds.len()
        ),
    }
    if let Some(v) = &a.vary {
        println!("vary      {} = {}", v.path, v.values.join(", "));
    }

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
    // Wall time of the sweep, for the throughput line only: it never reaches a run.
    #[allow(clippy::disallowed_methods)]
    let started = std::time::Instant::now();
    let lines = run_jobs(&plans, &values, &jobs, threads, &on_done).context("a run failed")?;
    let secs = started.elapsed().as_secs_f64();
    bar.finish_and_clear();

    let header = SweepHeader::new(
        &base.scenario,
        a.seeds,
        a.vary.as_ref().map(|v| VaryHeader {
            path: v.path.clone(),
            values: v.values.clone(),
        }),
        a.shard,
    );
    if let Some(f) = out_file {
        finish(f, results_jsonl(&header, &lines).as_bytes())?;
    }

    // Per value (one block without --vary).
    let mut per_value: Vec<Vec<InvariantStats>> = Vec::new();
    let mut rates_ok = true;
    for (i, _) in plans.iter().enumerate() {
        let mine: Vec<&SeedLine> = lines
            .iter()
            .zip(&jobs)
            .filter(|(_, j)| j.plan == i)
            .map(|(l, _)| l)
            .collect();
        let stats = invariant_stats(&mine, a.show);
        println!();
        match (&a.vary, values.get(i)) {
            (Some(v), Some(val)) => {
                println!("{} = {val}", v.path);
                let arg = format!("{}={val}", v.path);
                print_stats(&stats, &|seed| {
                    format!("splitbrain sweep {file} --seeds {seed} --vary '{arg}'")
                });
            }
            _ => print_stats(&stats, &|seed| reproduce_command(&file, seed)),
        }
        for j in judge_rates(&plans[i].scenario, &mine) {
            println!("  rate      {j}");
            rates_ok &= j.ok;
        }
        per_value.push(stats);
    }

    if let Some(v) = &a.vary {
        let names: Vec<String> = per_value
            .iter()
            .flatten()
            .map(|s| s.name.clone())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        println!();
        println!("P(violation) by {}", v.path);
        print!("  {:<14}", "value");
        for n in &names {
            print!("  {n:>26}");
        }
        println!();
        for (val, stats) in values.iter().zip(&per_value) {
            print!("  {val:<14}");
            for n in &names {
                let cell = stats
                    .iter()
                    .find(|s| &s.name == n)
                    .map_or("-".to_string(), |s| pct(s.rate));
                print!("  {cell:>26}");
            }
            println!();
        }
        if let Some(f) = chart_file {
            let series: Vec<RateSeries> = names
                .iter()
                .map(|n| RateSeries {
                    name: n.clone(),
                    points: per_value
                        .iter()
                        .map(|stats| {
                            stats.iter().find(|s| &s.name == n).map_or(
                                RatePoint {
                                    rate: 0.0,
                                    lo: 0.0,
                                    hi: 0.0,
                                },
                                |s| RatePoint {
                                    rate: s.rate,
                                    lo: s.ci.0,
                                    hi: s.ci.1,
                                },
                            )
                        })
                        .collect(),
                })
                .collect();
            let title = format!(
                "{}: P(violation) over {} seeds",
                base.scenario.name,
                seeds.len()
            );
            let svg = sweep_chart_svg(&title, &v.path, &values, &series);
            finish(f, svg.as_bytes())?;
        }
    }

    let matched = lines.iter().filter(|l| l.matches).count();
    let bounded = lines.iter().filter(|l| l.bound.is_some()).count();
    let events: u64 = lines.iter().map(|l| l.sim_events).sum();
    println!();
    println!(
        "expected  {matched} of {total} runs matched the file's expectation{}",
        if bounded > 0 {
            format!("; {bounded} hit a bound")
        } else {
            String::new()
        }
    );
    println!(
        "speed     {total} runs in {secs:.2} s: {:.0} runs/s, {:.0} events/s ({threads} jobs)",
        total as f64 / secs.max(1e-9),
        events as f64 / secs.max(1e-9)
    );
    if let Some(out) = &a.out {
        println!("results   {}", out.display());
    }
    if let Some(chart) = &a.chart {
        println!("chart     {}", chart.display());
    }
    if !rates_ok {
        println!("rates     NOT as expected: a violation rate is outside the file's expect_rate");
    }
    Ok(if bounded > 0 {
        exit::BOUND
    } else if matched as u64 == total && rates_ok {
        exit::OK
    } else {
        exit::MISMATCH
    })
}
