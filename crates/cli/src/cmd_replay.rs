//! `splitbrain replay TRACE.jsonl`: re-runs the scenario embedded in a recorded trace with its
//! seed and proves the new run identical, event for event, and the header line the one the
//! run wrote (its digest); else names the first diverging event and shows both versions, or
//! says the header was edited (exit 1).

use crate::exit;
use anyhow::Result;
use clap::Args;
use splitbrain_engine::Divergence;
use splitbrain_scenario::replay::ReplayError;
use std::path::PathBuf;

/// Most characters of a diverging event line `replay` prints.
const SHOWN_CHARS: usize = 2_000;

/// Arguments of `replay`.
#[derive(Args)]
pub struct ReplayArgs {
    /// A trace written by `splitbrain run FILE --trace TRACE.jsonl`.
    pub trace: PathBuf,
}

/// Runs `replay`.
pub fn run(a: ReplayArgs, roles: &splitbrain_scenario::RoleRegistry) -> Result<u8> {
    crate::atomic::check_input(&a.trace, "the trace")?;
    let file = a.trace.display().to_string();
    let text =
        std::fs::read_to_string(&a.trace).map_err(|e| exit::BadInput(format!("{file}: {e}")))?;
    let r = match splitbrain_scenario::replay::replay_with(roles, &file, &text) {
        Ok(r) => r,
        Err(ReplayError::Io(e)) => return Err(e.into()),
        Err(e) => return Err(exit::BadInput(e.to_string()).into()),
    };
    outln!("replay    {file}: {} seed {}", r.header.name, r.header.seed);
    if let Some(v) = &r.other_version {
        outln!(
            "note      written by splitbrain {v}, replayed by {} (same trace format)",
            env!("CARGO_PKG_VERSION")
        );
    }
    if let Some((line, why)) = &r.header_edited {
        outln!("DIVERGES  at the header (line {line} of the file): {why}");
        return Ok(exit::MISMATCH);
    }
    match &r.divergence {
        None => {
            outln!(
                "identical {} events, hash {:016x}",
                r.replayed_events,
                r.hash
            );
            Ok(exit::OK)
        }
        Some(Divergence::Event {
            index,
            first,
            second,
        }) => {
            outln!(
                "DIVERGES  at event {index} (line {} of the file); the file has {} events, the replay {}",
                index + 2,
                r.recorded_events,
                r.replayed_events
            );
            // An event line is short; a long one (a hand-edited trace) is cut, not printed whole.
            let show = |l: &Option<String>| {
                l.as_deref().map_or("<end of trace>".to_string(), |l| {
                    splitbrain_scenario::error::cut_chars(l, SHOWN_CHARS)
                })
            };
            outln!("  trace:   {}", show(first));
            outln!("  replay:  {}", show(second));
            Ok(exit::MISMATCH)
        }
        Some(other) => {
            outln!("DIVERGES  {other}");
            Ok(exit::MISMATCH)
        }
    }
}
