//! splitbrain's checkers: invariants and metrics over a finished run, judging the actors'
//! observations against true time.
//!
//! - [`run`]: the input, [`RunRecord`], and node [`Role`]s.
//! - [`spec`]: [`Invariant`] names (part of the scenario format) and [`CheckSpec`].

pub mod run;
pub mod spec;

pub use run::{Role, RunRecord};
pub use spec::{CheckSpec, Invariant, DEFAULT_SETTLE, DEFAULT_WINDOW};
