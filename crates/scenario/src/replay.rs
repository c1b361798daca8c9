//! Replaying a recorded trace: read its header (format version, seed, the scenario itself),
//! validate the scenario again, run it with the same seed keeping every trace line, and
//! compare line by line with the recorded events.

use crate::error::ScenarioError;
use crate::execute::{execute, TraceHeader};
use crate::load::load_str;
use splitbrain_engine::{first_difference, Divergence, Recorder, TRACE_FORMAT};

/// Why a trace cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file has no header line.
    #[error("{file}: empty file: not a splitbrain trace")]
    Empty {
        /// The file.
        file: String,
    },
    /// The first line is not a trace header.
    #[error("{file}: line 1 is not a splitbrain trace header: {reason}")]
    NotATrace {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// The trace was written in another format version.
    #[error("{file}: trace format {found} (written by splitbrain {writer}); this splitbrain {ours} reads trace format {TRACE_FORMAT} only: re-record the trace with `splitbrain run FILE --seed N --trace OUT.jsonl`")]
    Incompatible {
        /// The file.
        file: String,
        /// Its format version.
        found: u64,
        /// The version that wrote it.
        writer: String,
        /// Our version.
        ours: &'static str,
    },
    /// The embedded scenario no longer validates.
    #[error("the scenario embedded in the trace does not validate: {0}")]
    Scenario(#[from] ScenarioError),
    /// The header's node list disagrees with its scenario.
    #[error("{file}: the header lists nodes {header:?} but its scenario expands to {scenario:?}")]
    Nodes {
        /// The file.
        file: String,
        /// Nodes in the header.
        header: Vec<String>,
        /// Nodes of the scenario.
        scenario: Vec<String>,
    },
    /// The re-run failed to record.
    #[error("re-running the scenario failed: {0}")]
    Io(#[from] std::io::Error),
}

/// What a replay found.
#[derive(Debug)]
pub struct Replay {
    /// The header of the trace.
    pub header: TraceHeader,
    /// Event lines in the file.
    pub recorded_events: usize,
    /// Event lines of the re-run.
    pub replayed_events: u64,
    /// The re-run's trace hash.
    pub hash: u64,
    /// `None` if identical; else the first diverging event (`first`: the file, `second`: the
    /// re-run).
    pub divergence: Option<Divergence>,
    /// Set if the trace was written by another splitbrain version of the same format.
    pub other_version: Option<String>,
}

/// Replays the trace text `text` of `file`.
pub fn replay(file: &str, text: &str) -> Result<Replay, ReplayError> {
    let mut lines = text.lines();
    let first = lines
        .next()
        .ok_or_else(|| ReplayError::Empty { file: file.into() })?;
    let not_trace = |reason: String| ReplayError::NotATrace {
        file: file.into(),
        reason,
    };
    let raw: serde_json::Value =
        serde_json::from_str(first).map_err(|e| not_trace(format!("not JSON: {e}")))?;
    let format = raw
        .get("splitbrain_trace")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| not_trace("no `splitbrain_trace` format version".into()))?;
    let writer = raw
        .get("version")
        .and_then(|v| v.as_str())
        .unwrap_or("unknown")
        .to_string();
    let ours = env!("CARGO_PKG_VERSION");
    if format != u64::from(TRACE_FORMAT) {
        return Err(ReplayError::Incompatible {
            file: file.into(),
            found: format,
            writer,
            ours,
        });
    }
    // Parse the header from the line itself (not from `raw`, whose objects are key-sorted):
    // node order is part of the scenario.
    let header: TraceHeader = serde_json::from_str(first).map_err(|e| not_trace(e.to_string()))?;
    let src = serde_json::to_string_pretty(&header.scenario).expect("a scenario serialises");
    let plan = load_str(&format!("{file} (embedded scenario)"), &src)?;
    let names: Vec<String> = plan.nodes.iter().map(|n| n.name.clone()).collect();
    if names != header.nodes {
        return Err(ReplayError::Nodes {
            file: file.into(),
            header: header.nodes.clone(),
            scenario: names,
        });
    }
    let recorded: Vec<String> = lines
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    let r = execute(&plan, header.seed, Some(Recorder::hash_only().keep_lines()))?;
    let t = r.trace.expect("a recorder was given");
    let replayed = t.lines.unwrap_or_default();
    Ok(Replay {
        recorded_events: recorded.len(),
        replayed_events: t.events,
        hash: t.hash,
        divergence: first_difference(&recorded, &replayed),
        other_version: (writer != ours).then_some(writer),
        header,
    })
}
