//! `splitbrain export TRACE.jsonl --format chrome|shiviz -o OUT`: a saved run in the format of
//! a viewer engineers already use (Chrome tracing / Perfetto, ShiViz).

use crate::atomic::write_atomic;
use crate::exit::BadInput;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use splitbrain_report::export::{chrome_trace, shiviz_log};
use std::io::BufReader;
use std::path::PathBuf;

/// An export format.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    /// Chrome trace event JSON: open in ui.perfetto.dev or chrome://tracing.
    Chrome,
    /// ShiViz log with vector clocks: paste into the ShiViz web page.
    Shiviz,
}

/// Arguments of `export`.
#[derive(Args)]
pub struct ExportArgs {
    /// A JSON Lines trace written by `splitbrain run --trace`.
    pub trace: PathBuf,
    /// The format to write.
    #[arg(long, value_enum)]
    pub format: Format,
    /// Output file (e.g. run.json for chrome, run.log for shiviz).
    #[arg(short, long, value_name = "OUT")]
    pub out: PathBuf,
}

/// Runs `export`.
pub fn run(a: ExportArgs, roles: &splitbrain_scenario::RoleRegistry) -> Result<u8> {
    crate::atomic::check_input(&a.trace, "the trace")?;
    crate::atomic::check_distinct(&[("the trace", &a.trace)], &[("the output", &a.out)])?;
    let file = std::fs::File::open(&a.trace)
        .map_err(|e| BadInput(format!("{}: {e}", a.trace.display())))?;
    let saved = splitbrain_report::chart_trace::read_trace_with(roles, BufReader::new(file))
        .map_err(|e| BadInput(format!("{}: {e}", a.trace.display())))?;
    let text = match a.format {
        Format::Chrome => chrome_trace(&saved.view(None)),
        Format::Shiviz => shiviz_log(&saved.header.nodes, &saved.fault_effects(), &saved.events),
    };
    write_atomic(&a.out, text.as_bytes())
        .with_context(|| format!("writing {}", a.out.display()))?;
    outln!(
        "export    {} ({}, {} seed {})",
        a.out.display(),
        match a.format {
            Format::Chrome => "Chrome trace",
            Format::Shiviz => "ShiViz log",
        },
        saved.header.name,
        saved.header.seed
    );
    Ok(crate::exit::OK)
}
