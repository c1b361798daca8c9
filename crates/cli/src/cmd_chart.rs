//! `splitbrain chart TRACE.jsonl -o OUT.svg|png`: draws a saved trace without re-running it
//! (the header carries the scenario; the checkers re-run on the rebuilt record).

use crate::atomic::write_atomic;
use crate::exit::BadInput;
use anyhow::{Context, Result};
use clap::Args;
use splitbrain_engine::SimTime;
use splitbrain_report::{render, ChartFormat, ChartOptions, TimelineModel};
use splitbrain_scenario::duration::parse_duration_ns;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Chart drawing flags shared by `chart`, `run --chart` and `report`.
#[derive(Args, Clone, Debug, Default)]
pub struct DrawArgs {
    /// Draw from this true time on (e.g. 4s).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true, value_parser = parse_time)]
    pub from: Option<u64>,
    /// Draw up to this true time (e.g. 12s).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true, value_parser = parse_time)]
    pub to: Option<u64>,
    /// Message kinds not to draw (e.g. HEARTBEAT), comma-separated or repeated. With `run
    /// --narrate` they are also left out of the narration.
    #[arg(long = "hide", value_delimiter = ',', value_name = "KINDS", value_parser = parse_kind)]
    pub hide_kinds: Vec<String>,
    /// Draw no message arrows.
    #[arg(long)]
    pub no_messages: bool,
    /// Image width in pixels, 600 to 10000 (default 1400); the height follows the number of
    /// lanes. 1280 suits a 16:9 slide.
    #[arg(long, value_name = "PX", value_parser = clap::value_parser!(u32).range(600..=10_000))]
    pub width: Option<u32>,
    /// Add a panel with each node's wall clock minus true time.
    #[arg(long)]
    pub clocks: bool,
}

/// Parses a true time given with a unit ("4s", "250ms"). `--from` and `--to` take values that
/// start with a hyphen, so that `--from -1s` is refused as a file's `"-1s"` is, as negative,
/// rather than read by clap as an unknown flag `-1`.
pub fn parse_time(s: &str) -> Result<u64, String> {
    parse_duration_ns(s)
}

/// Checks that `s` names a message kind (any case: `heartbeat` is `HEARTBEAT`), so a typo in
/// `--hide` is a usage error rather than a chart that silently hides nothing.
pub fn parse_kind(s: &str) -> Result<String, String> {
    let kinds = splitbrain_protocols::MESSAGE_KINDS;
    if kinds.iter().any(|k| k.eq_ignore_ascii_case(s)) {
        return Ok(s.to_string());
    }
    let upper = s.to_ascii_uppercase();
    let hint = splitbrain_scenario::error::did_you_mean(&upper, kinds.iter().copied())
        .map(|k| format!("; did you mean `{k}`?"))
        .unwrap_or_default();
    Err(format!("unknown message kind `{s}`{hint}"))
}

/// The window a scenario's `chart` field names, if any.
pub fn lesson_window(s: &splitbrain_scenario::schema::Scenario) -> Option<(SimTime, SimTime)> {
    s.chart
        .as_ref()
        .map(|w| (SimTime(w.from.0.as_nanos()), SimTime(w.to.0.as_nanos())))
}

/// The message kinds the lesson's `chart.shown_kinds` names (never hidden as too many).
pub fn lesson_kinds(s: &splitbrain_scenario::schema::Scenario) -> Vec<String> {
    s.chart
        .as_ref()
        .map_or_else(Vec::new, |c| c.shown_kinds.clone())
}

/// Refuses a window starting at or after the run's `end` (`what` names where the start came
/// from: "--from", or the lesson's chart window): `chart` and `view` alike, nothing to show.
pub fn starts_before_end(what: &str, from: SimTime, end: SimTime) -> Result<()> {
    if from >= end {
        return Err(BadInput(format!(
            "{what} {from} is not before the end of the run ({end}): nothing to draw"
        ))
        .into());
    }
    Ok(())
}

impl DrawArgs {
    /// The chart options for a run ending at `end` whose lesson names `window` (used when
    /// neither --from nor --to is given) and the message kinds `keep` it is about.
    pub fn options_in(
        &self,
        end: SimTime,
        window: Option<(SimTime, SimTime)>,
        keep: &[String],
    ) -> Result<ChartOptions> {
        let (wf, wt) = match (self.from, self.to, window) {
            (None, None, Some((f, t))) => (Some(f.0), Some(t.0)),
            _ => (self.from, self.to),
        };
        let from = SimTime(wf.unwrap_or(0));
        let asked_to = SimTime(wt.unwrap_or(end.0));
        let what = if self.from.is_some() || self.to.is_some() {
            "--from"
        } else {
            "the lesson's chart window, which starts at"
        };
        starts_before_end(what, from, end)?;
        if from >= asked_to {
            return Err(BadInput(format!("--from {from} must be before --to {asked_to}")).into());
        }
        let to = asked_to.min(end);
        Ok(ChartOptions {
            window: Some((from, to)),
            hide_kinds: self.hide_kinds.clone(),
            no_messages: self.no_messages,
            clocks: self.clocks,
            width: self.width.unwrap_or(ChartOptions::default().width),
            keep_kinds: keep.to_vec(),
            ..ChartOptions::default()
        })
    }
}

/// The format of an output path, or a usage error.
pub fn format_of(path: &Path) -> Result<ChartFormat> {
    ChartFormat::from_path(path).ok_or_else(|| {
        BadInput(format!(
            "{}: the chart file must end in .svg or .png",
            path.display()
        ))
        .into()
    })
}

/// Renders `model` to `out` atomically, on the lesson's `window` unless --from/--to say.
pub fn write_chart(
    model: &TimelineModel,
    draw: &DrawArgs,
    window: Option<(SimTime, SimTime)>,
    keep: &[String],
    out: &Path,
) -> Result<()> {
    let format = format_of(out)?;
    let opts = draw.options_in(model.end, window, keep)?;
    let bytes = render(model, &opts, format)?;
    write_atomic(out, &bytes)
}

/// Arguments of `chart`.
#[derive(Args)]
pub struct ChartArgs {
    /// A JSON Lines trace written by `splitbrain run --trace`.
    pub trace: PathBuf,
    /// Output file (.svg or .png).
    #[arg(short, long, value_name = "OUT.svg|png")]
    pub out: PathBuf,
    #[command(flatten)]
    pub draw: DrawArgs,
}

/// Runs `chart`.
pub fn run(a: ChartArgs, roles: &splitbrain_scenario::RoleRegistry) -> Result<u8> {
    crate::atomic::check_input(&a.trace, "the trace")?;
    crate::atomic::check_distinct(&[("the trace", &a.trace)], &[("the output", &a.out)])?;
    format_of(&a.out)?;
    let file = std::fs::File::open(&a.trace)
        .map_err(|e| BadInput(format!("{}: {e}", a.trace.display())))?;
    let saved = splitbrain_report::chart_trace::read_trace_with(roles, BufReader::new(file))
        .map_err(|e| BadInput(format!("{}: {e}", a.trace.display())))?;
    let model = saved.model();
    let window = lesson_window(&saved.header.scenario);
    write_chart(
        &model,
        &a.draw,
        window,
        &lesson_kinds(&saved.header.scenario),
        &a.out,
    )
    .with_context(|| format!("drawing {}", a.out.display()))?;
    outln!(
        "chart     {} ({} seed {}, {} events)",
        a.out.display(),
        saved.header.name,
        saved.header.seed,
        saved.events.len()
    );
    Ok(crate::exit::OK)
}
