//! The determinism self-check: run the same simulation twice and compare traces line by line.

use crate::sim::Actor;
use crate::sim::{Sim, SimError};
use crate::time::SimTime;
use crate::trace::Recorder;

/// Where two runs of the same simulation first differ.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Divergence {
    /// Event `index` (0-based) differs; `None` means that run had ended.
    #[error("runs diverge at event {index}:\n  first run:  {}\n  second run: {}", .first.as_deref().unwrap_or("<end of trace>"), .second.as_deref().unwrap_or("<end of trace>"))]
    Event {
        /// Index of the first differing event.
        index: usize,
        /// That event in the first run, as its JSON line.
        first: Option<String>,
        /// That event in the second run.
        second: Option<String>,
    },
    /// A run stopped at a bound.
    #[error("run stopped early: {0}")]
    Bound(#[from] SimError),
    /// Serialising the trace failed.
    #[error("trace could not be serialised: {0}")]
    Trace(String),
}

/// Builds the simulation twice with `make`, runs both until `end` keeping every trace line,
/// and returns the trace hash if they are identical, else the first diverging event.
pub fn check_determinism<A: Actor>(
    make: impl Fn() -> Sim<A>,
    end: SimTime,
) -> Result<u64, Divergence> {
    let run = || -> Result<(u64, Vec<String>), Divergence> {
        let mut sim = make();
        sim.set_recorder(Recorder::hash_only().keep_lines());
        sim.run_until(end)?;
        let rec = sim.take_recorder().expect("recorder set above");
        let s = rec.finish().map_err(|e| Divergence::Trace(e.to_string()))?;
        Ok((s.hash, s.lines.unwrap_or_default()))
    };
    let (h1, a) = run()?;
    let (_, b) = run()?;
    first_difference(&a, &b).map_or(Ok(h1), Err)
}

/// The first index at which two traces (as lines) differ, if any.
pub fn first_difference(a: &[String], b: &[String]) -> Option<Divergence> {
    let n = a.len().max(b.len());
    (0..n)
        .find(|&i| a.get(i) != b.get(i))
        .map(|index| Divergence::Event {
            index,
            first: a.get(index).cloned(),
            second: b.get(index).cloned(),
        })
}
