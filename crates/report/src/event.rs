//! The trace event of a splitbrain run, as the report reads it.

use splitbrain_engine::TraceEvent;
use splitbrain_protocols::{Msg, Obs, Timer};

/// A trace event of a splitbrain run.
pub type Event = TraceEvent<Msg, Timer, Obs>;
