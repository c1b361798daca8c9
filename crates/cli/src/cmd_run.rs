//! `splitbrain run FILE`: one run, its invariants, metrics, and the line that reproduces it.

use crate::atomic::AtomicFile;
use crate::exit;
use anyhow::{Context, Result};
use clap::Args;
use splitbrain_engine::Recorder;
use splitbrain_lab::vary::{plan_with_roles, Setting};
use splitbrain_report::{
    derived_facts, narrate, nemesis_line, summary_json, summary_text, NarrationOptions,
};
use splitbrain_scenario::{execute_keeping, Keep, TraceHeader};
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// Parses `--seed`: a seed is a u64, and clap's "number too large to fit in target type" or
/// "invalid digit found in string" did not say so.
pub fn parse_seed(s: &str) -> Result<u64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("a seed is an integer in 0..={}, found `{s}`", u64::MAX))
}

/// Arguments of `run`.
#[derive(Args)]
pub struct RunArgs {
    /// The scenario file.
    pub file: PathBuf,
    /// Seed, an integer 0..=18446744073709551615 (default: the file's `seed`).
    #[arg(long, value_parser = parse_seed, allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// Write the trace as JSON Lines to this file.
    #[arg(long, value_name = "OUT.jsonl")]
    pub trace: Option<PathBuf>,
    /// Print one machine-readable JSON summary instead of text.
    #[arg(long, conflicts_with = "narrate")]
    pub json: bool,
    /// Tell the run as a story, step by step.
    #[arg(long)]
    pub narrate: bool,
    /// Draw the run as a timeline chart (.svg or .png); --hide also applies to it.
    #[arg(long, value_name = "OUT.svg|png")]
    pub chart: Option<PathBuf>,
    /// Write the run as one self-contained HTML page to step through in a browser.
    #[arg(long, value_name = "OUT.html")]
    pub view: Option<PathBuf>,
    /// Set the scenario's JSON at a dotted path before running (repeatable), e.g.
    /// `--set faults.0.for=5s --set nodes.client-1.clock.drift_ppm=1000`; the edited file is
    /// validated like any file, and the reproduce line repeats the settings.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<Setting>,
    /// Chart drawing flags (with --chart).
    #[command(flatten)]
    pub draw: crate::cmd_chart::DrawArgs,
}

/// Refuses drawing flags that nothing would use: `--from`/`--to` without `--chart` or
/// `--view`, `--clocks`/`--no-messages`/`--width`/`--hide` without `--chart` (`--hide` also serves
/// `--narrate`), rather than ignore them without a word.
fn unused_drawing_flags(a: &RunArgs) -> Result<()> {
    let d = &a.draw;
    let unused = |flag: &str, used_by: &str| -> Result<()> {
        Err(exit::BadInput(format!(
            "{flag} applies to {used_by}, and none is given: add one, or drop {flag}"
        ))
        .into())
    };
    let (chart, view) = (a.chart.is_some(), a.view.is_some());
    if (d.from.is_some() || d.to.is_some()) && !chart && !view {
        return unused("--from/--to", "--chart or --view");
    }
    if d.clocks && !chart {
        return unused("--clocks", "--chart");
    }
    if d.width.is_some() && !chart {
        return unused("--width", "--chart");
    }
    if d.no_messages && !chart {
        return unused("--no-messages", "--chart");
    }
    if !d.hide_kinds.is_empty() && !chart && !a.narrate {
        return unused("--hide", "--chart or --narrate");
    }
    Ok(())
}

/// Runs `run`.
///
/// Long because it is the command's one sequence (read, apply `--set`, run, print, write the trace
/// and chart), each output a few lines of its own.
pub fn run(a: RunArgs, roles: &splitbrain_scenario::RoleRegistry) -> Result<u8> {
    let path = a.file.display().to_string();
    let outputs: Vec<(&str, &std::path::Path)> = [
        ("--trace", &a.trace),
        ("--chart", &a.chart),
        ("--view", &a.view),
    ]
    .into_iter()
    .filter_map(|(w, p)| p.as_deref().map(|p| (w, p)))
    .collect();
    crate::atomic::check_distinct(&[("the scenario", &a.file)], &outputs)?;
    // `--seed` replaces the file's seed, so `--set seed=..` beside it would change nothing.
    if let (Some(seed), Some(set)) = (a.seed, a.set.iter().find(|s| s.path == "seed")) {
        return Err(exit::BadInput(format!(
            "--set {set} and --seed {seed} both give the run's seed: give one"
        ))
        .into());
    }
    let plan = if a.set.is_empty() {
        roles.load_file(&a.file)?
    } else {
        let src = splitbrain_scenario::read_scenario(&a.file)?;
        plan_with_roles(roles, &path, &src, &a.set).map_err(|e| exit::BadInput(e.to_string()))?
    };
    // A window that ends before it starts, or starts after the run's duration, fails now,
    // before anything runs or is written.
    crate::cmd_view::window(a.draw.from, a.draw.to)?;
    if let Some(from) = a.draw.from {
        crate::cmd_chart::starts_before_end(
            "--from",
            splitbrain_engine::SimTime(from),
            splitbrain_engine::SimTime(plan.scenario.duration.0.as_nanos()),
        )?;
    }
    unused_drawing_flags(&a)?;
    let seed = a.seed.unwrap_or(plan.scenario.seed);

    // Output names are checked before any output is started.
    if let Some(c) = &a.chart {
        crate::cmd_chart::format_of(c)?;
    }
    if let Some(v) = &a.view {
        crate::cmd_view::html_path(v)?;
    }
    let out_file = match &a.trace {
        Some(p) => Some(AtomicFile::create(p)?),
        None => None,
    };
    let mut recorder = Recorder::hash_only();
    if let Some(f) = &out_file {
        let mut w = BufWriter::new(f.writer()?);
        w.write_all(TraceHeader::new(&plan, seed).line().as_bytes())?;
        w.write_all(b"\n")?;
        recorder = recorder.with_writer(Box::new(w));
    }
    // Narration, charts and views read every observation; a run that is only checked keeps
    // those its checks read.
    let keep = if a.narrate || a.chart.is_some() || a.view.is_some() {
        recorder = recorder.keep_events();
        Keep::All
    } else {
        Keep::Checked
    };
    let result =
        execute_keeping(&plan, seed, Some(recorder), keep).context("writing the trace failed")?;
    for kind in &a.draw.hide_kinds {
        if !result
            .stats
            .messages
            .keys()
            .any(|k| k.eq_ignore_ascii_case(kind))
        {
            let kinds: Vec<&str> = result.stats.messages.keys().copied().collect();
            eprintln!(
                "note: --hide {kind} matches no message of this run (its kinds: {})",
                kinds.join(", ")
            );
        }
    }
    // Every output is made in memory before any is written, so one that cannot be made leaves
    // none behind. A run stopped at a bound is still reported as such (exit 3) whatever
    // outputs were asked for: its outputs are drawn over what ran, and if one cannot be drawn
    // at all (a --from after the bound), none is written and the summary says why.
    let mut notes: Vec<String> = Vec::new();
    match outputs_of(&a, &plan, &result, &mut notes) {
        Ok((chart, view)) => {
            if let Some(f) = out_file {
                f.commit()?;
            }
            if let (Some(path), Some(bytes)) = (&a.chart, chart) {
                crate::atomic::write_atomic(path, &bytes)?;
            }
            if let (Some(path), Some(html)) = (&a.view, view) {
                crate::atomic::write_atomic(path, html.as_bytes())?;
            }
        }
        Err(e) if result.bound.is_some() => {
            drop(out_file);
            notes.push(format!(
                "no output written: {e:#}, and the run stopped at {} (its bound)",
                result.record.end
            ));
        }
        Err(e) => return Err(e),
    }

    if a.json {
        for n in &notes {
            eprintln!("note: {n}");
        }
        outln!("{}", summary_json(&result, &path, &a.set));
    } else {
        if a.narrate {
            let events = result
                .trace
                .as_ref()
                .and_then(|t| t.kept.as_deref())
                .unwrap_or(&[]);
            let opts = NarrationOptions {
                hide_kinds: a.draw.hide_kinds.clone(),
                facts: derived_facts(&result.record),
                effects: result.record.fault_effects.clone(),
                ..Default::default()
            };
            outln!("{}", narrate(&result.record.names, events, &opts));
        }
        out!(
            "{}",
            summary_text(&result, &path, &a.set, plan.scenario.lesson.as_deref())
        );
        if plan.scenario.nemesis.is_some() {
            outln!("{}", nemesis_line(&path));
        }
        for n in &notes {
            outln!("note      {n}");
        }
        if let Some(t) = &result.trace {
            outln!("trace     {} records, hash {:016x}", t.events, t.hash);
        }
    }
    Ok(if result.bound.is_some() {
        exit::BOUND
    } else if result.matches() {
        exit::OK
    } else {
        exit::MISMATCH
    })
}

/// The chart (its bytes) and the view (its page) `a` asks for, made in memory from `result`.
/// A run stopped at a bound before the lesson's chart window starts is drawn whole (up to the
/// bound) and a note in `notes` says so; an error means an output cannot be made.
fn outputs_of(
    a: &RunArgs,
    plan: &splitbrain_scenario::Plan,
    result: &splitbrain_scenario::RunResult,
    notes: &mut Vec<String>,
) -> Result<(Option<Vec<u8>>, Option<String>)> {
    let end = result.record.end;
    let mut lesson = crate::cmd_chart::lesson_window(&plan.scenario);
    let asked = a.draw.from.is_some() || a.draw.to.is_some();
    if let Some((from, _)) = lesson {
        if result.bound.is_some() && from >= end && (a.chart.is_some() || a.view.is_some()) {
            lesson = None;
            if !asked {
                notes.push(format!(
                    "the lesson's chart window starts at {from}, after the run stopped at {end}: \
                     the chart and view show the whole run"
                ));
            }
        }
    }
    let chart = match &a.chart {
        Some(c) => {
            let model = splitbrain_report::model_of_run(result);
            let format = crate::cmd_chart::format_of(c)?;
            let opts = a.draw.options_in(
                model.end,
                lesson,
                &crate::cmd_chart::lesson_kinds(&plan.scenario),
            )?;
            Some(splitbrain_report::render(&model, &opts, format)?)
        }
        None => None,
    };
    let view = match &a.view {
        Some(_) => {
            let window = crate::cmd_view::window(a.draw.from, a.draw.to)?.or(lesson);
            let view = splitbrain_report::view_of_run(result, window).for_scenario(&plan.scenario);
            if let Some(from) = a.draw.from {
                crate::cmd_chart::starts_before_end(
                    "--from",
                    splitbrain_engine::SimTime(from),
                    splitbrain_engine::SimTime(view.end),
                )?;
            }
            Some(view.html())
        }
        None => None,
    };
    Ok((chart, view))
}
