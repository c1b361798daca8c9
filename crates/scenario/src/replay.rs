//! Replaying a recorded trace: read its header (format version, seed, the scenario itself),
//! check the header line against its digest, validate the scenario again, run it with the
//! same seed keeping every trace line, and compare line by line with the recorded events.

use crate::execute::{execute, TraceHeader};
use crate::trace_file::{TraceFile, TraceFileError};
use splitbrain_engine::{first_difference, Divergence, Recorder};

/// Why a trace cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file is not a trace this splitbrain can replay: empty, not a trace header, another
    /// format version, or an embedded scenario that no longer validates or disagrees with the
    /// header's nodes.
    #[error("{file}: {source}")]
    Trace {
        /// The file.
        file: String,
        /// What is wrong.
        source: TraceFileError,
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
    /// Set if the header line is not the one the run wrote ([`TraceHeader::check_line`]):
    /// its 1-based line number and what is wrong. The file then differs from the run even
    /// when every event line is identical.
    pub header_edited: Option<(usize, String)>,
}

/// Replays the trace text `text` of `file`.
pub fn replay(file: &str, text: &str) -> Result<Replay, ReplayError> {
    replay_with(&crate::RoleRegistry::builtin(), file, text)
}

/// [`replay`] of a trace whose scenario's nodes play any role of `roles`.
pub fn replay_with(
    roles: &crate::RoleRegistry,
    file: &str,
    text: &str,
) -> Result<Replay, ReplayError> {
    let bad = |source: TraceFileError| ReplayError::Trace {
        file: file.into(),
        source,
    };
    let trace = TraceFile::parse(text.to_string()).map_err(bad)?;
    let plan = trace.plan_with(roles).map_err(bad)?;
    // A line that is no trace event (`[[[1]]]`, a 200,000-deep nesting) is a broken file, not
    // a divergence of the run: refused located, as `chart` refuses it.
    if let Some(Err(e)) = trace.events().find(Result::is_err) {
        return Err(bad(e));
    }
    let header_edited = {
        let (n, line) = trace.header_line();
        TraceHeader::check_line(line).err().map(|why| (n, why))
    };
    let recorded: Vec<String> = trace.event_lines().map(|(_, l)| l.to_string()).collect();
    let header = trace.header;
    let r = execute(&plan, header.seed, Some(Recorder::hash_only().keep_lines()))?;
    let t = r.trace.expect("a recorder was given");
    let replayed = t.lines.unwrap_or_default();
    let ours = env!("CARGO_PKG_VERSION");
    Ok(Replay {
        recorded_events: recorded.len(),
        replayed_events: t.events,
        hash: t.hash,
        divergence: first_difference(&recorded, &replayed),
        other_version: (header.version != ours).then(|| header.version.clone()),
        header_edited,
        header,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: `replay` did not check the header line: 162 of 2,280 one-byte edits there
    /// (a letter of the description, an expectation, the embedded seed) replayed as
    /// "identical". Every one-byte edit of a header line is now noticed by its digest.
    #[test]
    fn every_one_byte_edit_of_the_header_line_is_noticed() {
        let src = include_str!("../../../scenarios/01-bully-leader-crash.json");
        let plan = crate::load_str("l01.json", src).unwrap();
        let line = TraceHeader::new(&plan, 1).line();
        assert_eq!(TraceHeader::check_line(&line), Ok(()));
        assert!(line.ends_with("\"}") && line.contains(",\"digest\":\""));
        let mut edits = 0;
        for (i, b) in line.bytes().enumerate() {
            if !b.is_ascii() {
                continue;
            }
            for other in [b ^ 1, b ^ 0x20, b'x', b' '] {
                if other == b || !other.is_ascii() {
                    continue;
                }
                let mut edited = line.clone().into_bytes();
                edited[i] = other;
                let edited = String::from_utf8(edited).unwrap();
                assert!(
                    TraceHeader::check_line(&edited).is_err(),
                    "byte {i} ({:?} -> {:?}) passed: {edited}",
                    b as char,
                    other as char
                );
                edits += 1;
            }
        }
        assert!(edits > 3_000, "{edits}");
        // A header without its digest (a hand-made one) is said to lack it.
        let bare = serde_json::to_string(&TraceHeader::new(&plan, 1)).unwrap();
        assert!(TraceHeader::check_line(&bare)
            .unwrap_err()
            .contains("does not end with the digest"));
    }
}
