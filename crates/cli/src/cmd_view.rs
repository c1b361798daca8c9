//! `splitbrain view TRACE.jsonl -o run.html`: the run as one self-contained HTML page to step
//! through in a browser (no server, no network), drawn from the same timeline model as the
//! static charts.

use crate::atomic::write_atomic;
use crate::exit::BadInput;
use anyhow::{Context, Result};
use clap::Args;
use splitbrain_engine::SimTime;
use splitbrain_report::ViewModel;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Arguments of `view`.
#[derive(Args)]
pub struct ViewArgs {
    /// A JSON Lines trace written by `splitbrain run --trace`.
    pub trace: PathBuf,
    /// Output file (.html).
    #[arg(short, long, value_name = "OUT.html")]
    pub out: PathBuf,
    /// Open the page on this window: from this true time (e.g. 4s).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true, value_parser = crate::cmd_chart::parse_time)]
    pub from: Option<u64>,
    /// Open the page on this window: up to this true time (e.g. 12s).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true, value_parser = crate::cmd_chart::parse_time)]
    pub to: Option<u64>,
}

/// Checks that `path` names an HTML file.
pub fn html_path(path: &Path) -> Result<()> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm") => Ok(()),
        _ => Err(BadInput(format!(
            "{}: the view file must end in .html",
            path.display()
        ))
        .into()),
    }
}

/// The window a page opens on, from `--from` / `--to` (either may be missing); a window that
/// ends before it starts is a usage error, as it is for `chart`.
pub fn window(from: Option<u64>, to: Option<u64>) -> Result<Option<(SimTime, SimTime)>> {
    if from.is_none() && to.is_none() {
        return Ok(None);
    }
    let (from, to) = (SimTime(from.unwrap_or(0)), SimTime(to.unwrap_or(u64::MAX)));
    if from >= to {
        return Err(BadInput(format!("--from {from} must be before --to {to}")).into());
    }
    Ok(Some((from, to)))
}

/// Writes `view` as a page to `out`; a `--from` at or after the run's end is refused as
/// `chart` refuses it (the page would otherwise open on the whole run without a word).
pub fn write_view(view: &ViewModel, from: Option<u64>, out: &Path) -> Result<()> {
    if let Some(from) = from {
        crate::cmd_chart::starts_before_end("--from", SimTime(from), SimTime(view.end))?;
    }
    write_atomic(out, view.html().as_bytes())
}

/// Runs `view`.
pub fn run(a: ViewArgs, roles: &splitbrain_scenario::RoleRegistry) -> Result<u8> {
    crate::atomic::check_input(&a.trace, "the trace")?;
    crate::atomic::check_distinct(&[("the trace", &a.trace)], &[("the output", &a.out)])?;
    html_path(&a.out)?;
    let file = std::fs::File::open(&a.trace)
        .map_err(|e| BadInput(format!("{}: {e}", a.trace.display())))?;
    let saved = splitbrain_report::chart_trace::read_trace_with(roles, BufReader::new(file))
        .map_err(|e| BadInput(format!("{}: {e}", a.trace.display())))?;
    let view = saved
        .view(
            window(a.from, a.to)?
                .or_else(|| crate::cmd_chart::lesson_window(&saved.header.scenario)),
        )
        .for_scenario(&saved.header.scenario);
    write_view(&view, a.from, &a.out).with_context(|| format!("writing {}", a.out.display()))?;
    outln!(
        "view      {} ({} seed {}, {} steps)",
        a.out.display(),
        saved.header.name,
        saved.header.seed,
        view.steps.len()
    );
    Ok(crate::exit::OK)
}
