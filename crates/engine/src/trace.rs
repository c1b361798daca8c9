//! The trace: every send, delivery, drop, timer, fault and observation, with true time.
//!
//! A [`Recorder`] serialises each event as one JSON line, feeds the bytes to a 64-bit FNV-1a
//! content hash (the run's determinism fingerprint), and optionally streams them to a writer
//! (bounded memory), keeps the lines (for the determinism self-check) or keeps the typed
//! events (for checkers, narration and charts in the same process). With no recorder the
//! engine builds no event at all.

use crate::fault::Fault;
use crate::network::DropReason;
use crate::node::NodeId;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::hash::Hasher;
use std::io::{self, Write};

/// Version of the JSON Lines trace format; bumped on any incompatible change.
pub const TRACE_FORMAT: u32 = 1;

/// One trace event. `M`, `T`, `O` are the actors' message, timer and observation types.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case")]
pub enum TraceEvent<M, T, O> {
    /// A node's `on_start` ran.
    Start {
        /// True time, ns.
        t: SimTime,
        /// The node.
        node: NodeId,
    },
    /// A message was sent (before the network decided its fate).
    Send {
        /// True time, ns.
        t: SimTime,
        /// Sender.
        from: NodeId,
        /// Receiver.
        to: NodeId,
        /// Message id, unique in the run; deliveries and drops name it.
        id: u64,
        /// The message kind (e.g. `"ELECTION"`).
        kind: String,
        /// The message.
        msg: M,
    },
    /// A message was handled by its receiver (after any pause, at the time it ran).
    Deliver {
        /// True time, ns.
        t: SimTime,
        /// Sender.
        from: NodeId,
        /// Receiver.
        to: NodeId,
        /// Message id.
        id: u64,
    },
    /// A message was dropped.
    Drop {
        /// True time, ns: send time for loss, crash time for a message queued at a paused
        /// node that crashed, arrival time otherwise.
        t: SimTime,
        /// Sender.
        from: NodeId,
        /// Receiver.
        to: NodeId,
        /// Message id.
        id: u64,
        /// Why.
        reason: DropReason,
    },
    /// A timer fired and its handler ran.
    Timer {
        /// True time, ns.
        t: SimTime,
        /// The node.
        node: NodeId,
        /// The timer's payload.
        timer: T,
    },
    /// A fault was applied.
    Fault {
        /// True time, ns.
        t: SimTime,
        /// The fault.
        fault: Fault,
    },
    /// A paused node resumed and is about to run what queued up.
    Resume {
        /// True time, ns.
        t: SimTime,
        /// The node.
        node: NodeId,
    },
    /// The last record of a finished trace: the run ended at `t` after `events` events.
    /// `complete` is false when it stopped at a bound before its planned end. A trace without
    /// it was cut short.
    End {
        /// True time the run ended at, ns.
        t: SimTime,
        /// Events processed.
        events: u64,
        /// Whether the run reached its planned end (false: stopped at a bound).
        complete: bool,
    },
    /// An actor reported an observation about itself.
    Observe {
        /// True time, ns.
        t: SimTime,
        /// The node.
        node: NodeId,
        /// The observation.
        obs: O,
    },
}

impl<M, T, O> TraceEvent<M, T, O> {
    /// The true time of the event.
    pub fn time(&self) -> SimTime {
        match self {
            TraceEvent::Start { t, .. }
            | TraceEvent::Send { t, .. }
            | TraceEvent::Deliver { t, .. }
            | TraceEvent::Drop { t, .. }
            | TraceEvent::Timer { t, .. }
            | TraceEvent::Fault { t, .. }
            | TraceEvent::Resume { t, .. }
            | TraceEvent::End { t, .. }
            | TraceEvent::Observe { t, .. } => *t,
        }
    }
}

/// What a finished recorder produced.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSummary<E> {
    /// Number of events recorded.
    pub events: u64,
    /// FNV-1a 64 of every event line (each with its `\n`), in order; 0 from a
    /// [`Recorder::count_only`] recorder, which hashes nothing.
    pub hash: u64,
    /// The lines, if kept.
    pub lines: Option<Vec<String>>,
    /// The typed events, if kept.
    pub kept: Option<Vec<E>>,
}

/// Records trace events: hash always (unless [`Recorder::count_only`]); stream, lines and
/// typed events on request.
pub struct Recorder<E> {
    hasher: fnv::FnvHasher,
    buf: Vec<u8>,
    out: Option<Box<dyn Write>>,
    lines: Option<Vec<String>>,
    kept: Option<Vec<E>>,
    events: u64,
    error: Option<io::Error>,
    /// Count events without building, serialising or hashing them.
    count_only: bool,
}

impl<E: Serialize> Recorder<E> {
    /// Hash only.
    pub fn hash_only() -> Self {
        Recorder {
            hasher: fnv::FnvHasher::default(),
            buf: Vec::with_capacity(256),
            out: None,
            lines: None,
            kept: None,
            events: 0,
            error: None,
            count_only: false,
        }
    }
    /// Count only: the summary has the number of events the trace would hold, and hash 0.
    /// The engine then builds no event (it calls [`Recorder::record_with`]), so counting
    /// costs one increment per event; a sweep that does not report trace hashes uses it.
    pub fn count_only() -> Self {
        Recorder {
            buf: Vec::new(),
            count_only: true,
            ..Recorder::hash_only()
        }
    }
    /// Also stream JSON lines to `out` (the header, if any, must already be written).
    /// Turns a count-only recorder into a hashing one.
    pub fn with_writer(mut self, out: Box<dyn Write>) -> Self {
        self.out = Some(out);
        self.count_only = false;
        self
    }
    /// Also keep every line in memory. Turns a count-only recorder into a hashing one.
    pub fn keep_lines(mut self) -> Self {
        self.lines = Some(Vec::new());
        self.count_only = false;
        self
    }
    /// Also keep every typed event in memory. Turns a count-only recorder into a hashing one.
    pub fn keep_events(mut self) -> Self {
        self.kept = Some(Vec::new());
        self.count_only = false;
        self
    }

    /// Whether recorded events are built (hashed, written or kept): false for
    /// [`Recorder::count_only`].
    pub fn builds_events(&self) -> bool {
        !self.count_only
    }

    /// Records the event `make` builds; a count-only recorder counts it without building it.
    #[inline]
    pub fn record_with(&mut self, make: impl FnOnce() -> E) {
        if self.count_only {
            self.events += 1;
        } else {
            self.record(make());
        }
    }

    /// Records one event (a count-only recorder just counts it).
    pub fn record(&mut self, ev: E) {
        if self.count_only {
            self.events += 1;
            return;
        }
        self.buf.clear();
        if let Err(e) = serde_json::to_writer(&mut self.buf, &ev) {
            self.error.get_or_insert(io::Error::other(e));
        }
        self.buf.push(b'\n');
        self.hasher.write(&self.buf);
        self.events += 1;
        if let Some(out) = &mut self.out {
            if self.error.is_none() {
                if let Err(e) = out.write_all(&self.buf) {
                    self.error = Some(e);
                }
            }
        }
        if let Some(lines) = &mut self.lines {
            let line = &self.buf[..self.buf.len() - 1];
            lines.push(String::from_utf8_lossy(line).into_owned());
        }
        if let Some(kept) = &mut self.kept {
            kept.push(ev);
        }
    }

    /// Flushes the writer and returns the summary, or the first I/O error met.
    pub fn finish(mut self) -> io::Result<TraceSummary<E>> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if let Some(out) = &mut self.out {
            out.flush()?;
        }
        Ok(TraceSummary {
            events: self.events,
            hash: self.hasher.finish(),
            lines: self.lines,
            kept: self.kept,
        })
    }
}
