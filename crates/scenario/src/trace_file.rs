//! Reading a JSON Lines trace file, as `splitbrain run --trace` writes it: a header line (a
//! [`TraceHeader`]: format version, the writer's version, seed, node names and the scenario
//! itself), then one [`Event`] a line. Used by `replay` (which compares the event lines as
//! text) and by the charts (which parse them).
//!
//! Lines that are empty or only whitespace are skipped, before the header and between events;
//! line numbers are 1-based and count every line of the file.

use crate::error::ScenarioError;
use crate::execute::{Event, TraceHeader};
use crate::plan::Plan;
use splitbrain_engine::TRACE_FORMAT;
use std::io::Read;

/// Why a file is not a trace this splitbrain can read.
#[derive(Debug, thiserror::Error)]
pub enum TraceFileError {
    /// Reading the file failed.
    #[error("cannot read the trace: {0}")]
    Io(#[from] std::io::Error),
    /// The file has no header line.
    #[error("empty file: not a splitbrain trace (expected a header line)")]
    Empty,
    /// The first line is not a trace header.
    #[error("line {line}: not a splitbrain trace header: {reason}")]
    NotATrace {
        /// 1-based line number of the header line.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The file is a scenario or a comparison manifest: a file a trace is recorded from, not
    /// a trace.
    #[error("this is {what}, not a trace: {hint}")]
    NotATraceButInput {
        /// "a scenario file" or "a comparison manifest".
        what: &'static str,
        /// What to do with it instead.
        hint: &'static str,
    },
    /// The trace was written in another format version.
    #[error("trace format {found} (written by splitbrain {writer}); this splitbrain {ours} reads trace format {TRACE_FORMAT} only: re-record the trace with `splitbrain run FILE --seed N --trace OUT.jsonl`")]
    Incompatible {
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
    #[error("the header lists nodes {header:?} but its scenario expands to {scenario:?}")]
    Nodes {
        /// Nodes in the header.
        header: Vec<String>,
        /// Nodes of the scenario.
        scenario: Vec<String>,
    },
    /// The trace does not end with its `end` record: it was cut short.
    #[error("the trace is cut short: its last record (line {line}) is not the `end` record a finished run writes")]
    Truncated {
        /// 1-based line number of the last line.
        line: usize,
    },
    /// An event line does not parse.
    #[error("line {line}: not a trace event: {}", crate::error::json_line_reason(.source))]
    Event {
        /// 1-based line number.
        line: usize,
        /// The parse error.
        source: serde_json::Error,
    },
}

/// [`TraceFileError::NotATraceButInput`] if `text` is a whole scenario or comparison manifest.
fn input_file(text: &str) -> Option<TraceFileError> {
    let v: serde_json::Value = serde_json::from_str(crate::json::without_bom(text)).ok()?;
    if v.get("splitbrain").is_some() {
        Some(TraceFileError::NotATraceButInput {
            what: "a scenario file",
            hint: "`splitbrain run` runs it (with `--trace OUT.jsonl` it records the trace that \
                   replay, chart, view and export read)",
        })
    } else if v.get("splitbrain_compare").is_some() {
        Some(TraceFileError::NotATraceButInput {
            what: "a comparison manifest",
            hint: "`splitbrain compare` runs it",
        })
    } else {
        None
    }
}

/// A trace file whose header has been read and checked: its format version is
/// [`TRACE_FORMAT`] (the version of splitbrain that wrote it may differ).
#[derive(Debug)]
pub struct TraceFile {
    /// The header line.
    pub header: TraceHeader,
    text: String,
    /// Index (0-based) of the header line.
    header_index: usize,
}

impl TraceFile {
    /// Reads a whole trace from `input` and checks its header ([`TraceFile::parse`]).
    pub fn read(mut input: impl Read) -> Result<TraceFile, TraceFileError> {
        let mut text = String::new();
        input.read_to_string(&mut text)?;
        TraceFile::parse(text)
    }

    /// Checks the header of the trace text `text`: the first non-blank line must be JSON with
    /// a `splitbrain_trace` format version equal to [`TRACE_FORMAT`] (else
    /// [`TraceFileError::Incompatible`], whatever the rest of the header says), and parse as
    /// a [`TraceHeader`].
    pub fn parse(text: String) -> Result<TraceFile, TraceFileError> {
        let (header_index, first) = text
            .lines()
            .enumerate()
            .find(|(_, l)| !l.trim().is_empty())
            .ok_or(TraceFileError::Empty)?;
        let not_trace = |reason: String| TraceFileError::NotATrace {
            line: header_index + 1,
            reason,
        };
        let raw = serde_json::from_str::<serde_json::Value>(first);
        let format = raw
            .as_ref()
            .ok()
            .and_then(|raw| raw.get("splitbrain_trace"));
        if format.is_none() {
            // A scenario (pretty-printed, so its first line `{` is not JSON on its own) given
            // where a trace goes: say what it is, not "not JSON: EOF".
            if let Some(e) = input_file(&text) {
                return Err(e);
            }
        }
        let raw = raw
            .map_err(|e| not_trace(format!("not JSON: {}", crate::error::json_line_reason(&e))))?;
        let format = raw
            .get("splitbrain_trace")
            .and_then(|v| v.as_u64())
            .ok_or_else(|| not_trace("no `splitbrain_trace` format version".into()))?;
        if format != u64::from(TRACE_FORMAT) {
            let writer = raw
                .get("version")
                .and_then(|v| v.as_str())
                .unwrap_or("unknown")
                .to_string();
            return Err(TraceFileError::Incompatible {
                found: format,
                writer,
                ours: env!("CARGO_PKG_VERSION"),
            });
        }
        // Parse the header from the line itself (not from `raw`, whose objects are key-sorted):
        // node order is part of the scenario.
        let header: TraceHeader = serde_json::from_str(first)
            .map_err(|e| not_trace(crate::error::json_line_reason(&e)))?;
        let file = TraceFile {
            header,
            text,
            header_index,
        };
        // A finished run's last record is `end`; anything else means the file was cut.
        let last = file.event_lines().last();
        let ends = last.is_some_and(|(_, l)| {
            matches!(serde_json::from_str::<Event>(l), Ok(Event::End { .. }))
        });
        if !ends {
            let line = last.map_or(header_index + 1, |(n, _)| n);
            return Err(TraceFileError::Truncated { line });
        }
        Ok(file)
    }

    /// The embedded scenario, validated again, whose nodes must be the header's (same names,
    /// same order).
    pub fn plan(&self) -> Result<Plan, TraceFileError> {
        self.plan_with(&crate::RoleRegistry::builtin())
    }

    /// [`TraceFile::plan`] of a scenario whose nodes play any role of `roles`.
    pub fn plan_with(&self, roles: &crate::RoleRegistry) -> Result<Plan, TraceFileError> {
        let src =
            serde_json::to_string_pretty(&self.header.scenario).expect("a scenario serialises");
        let plan = roles.load_str("<embedded scenario>", &src)?;
        let names: Vec<String> = plan.nodes.iter().map(|n| n.name.clone()).collect();
        if names != self.header.nodes {
            return Err(TraceFileError::Nodes {
                header: self.header.nodes.clone(),
                scenario: names,
            });
        }
        Ok(plan)
    }

    /// The header line as written, and its 1-based line number.
    pub fn header_line(&self) -> (usize, &str) {
        let line = self
            .text
            .lines()
            .nth(self.header_index)
            .expect("the header line was found by parse");
        (self.header_index + 1, line)
    }

    /// The event lines after the header, as written, with their 1-based line numbers.
    pub fn event_lines(&self) -> impl Iterator<Item = (usize, &str)> + '_ {
        self.text
            .lines()
            .enumerate()
            .skip(self.header_index + 1)
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| (i + 1, l))
    }

    /// The events, parsed in order; an unparsable line is [`TraceFileError::Event`].
    pub fn events(&self) -> impl Iterator<Item = Result<Event, TraceFileError>> + '_ {
        self.event_lines().map(|(line, l)| {
            serde_json::from_str(l).map_err(|source| TraceFileError::Event { line, source })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_traces_are_refused_with_the_line() {
        assert!(matches!(
            TraceFile::parse(" \n\n".into()).unwrap_err(),
            TraceFileError::Empty
        ));
        let err = TraceFile::parse("\n{\"hello\": 1}\n".into()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2: not a splitbrain trace header: no `splitbrain_trace` format version"
        );
        // A scenario given as a trace is named as such, not "not JSON: EOF".
        let scenario = "{\n  \"splitbrain\": 1,\n  \"name\": \"x\"\n}\n";
        assert_eq!(
            TraceFile::parse(scenario.into()).unwrap_err().to_string(),
            "this is a scenario file, not a trace: `splitbrain run` runs it (with `--trace \
             OUT.jsonl` it records the trace that replay, chart, view and export read)"
        );
        let err = TraceFile::parse("{\"splitbrain_trace\": 9}\n".into()).unwrap_err();
        assert!(
            matches!(&err, TraceFileError::Incompatible { found: 9, writer, .. } if writer == "unknown"),
            "{err}"
        );
        let err =
            TraceFile::parse(format!("{{\"splitbrain_trace\": {TRACE_FORMAT}}}\n")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("line 1: not a splitbrain trace header: missing field"),
            "{err}"
        );
        // The file's line once, the column after the reason (serde said "at line 1" again).
        let err = TraceFile::parse("xx\n".into()).unwrap_err().to_string();
        assert_eq!(
            err,
            "line 1: not a splitbrain trace header: not JSON: expected value (column 1)"
        );
    }
}
