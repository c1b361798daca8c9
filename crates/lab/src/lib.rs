//! splitbrain's experiments over many runs of one scenario file, above the one-run pipeline
//! of `splitbrain-scenario` (file -> `Plan` -> run): seed sweeps and their results files
//! (`sweep`), edits of a file at dotted paths and their grids (`vary`), the search for the
//! value where a violation starts (`threshold`), shrinking a failing run to its smallest
//! faults (`shrink`), comparing designs side by side over the same seeds (`compare`), and
//! measuring which planted bugs the checkers catch (`coverage`); and one `sweep` command's
//! grid of plans, its runs and their ends (`grid`).
//!
//! Every result is a pure function of (file, seeds): runs go in parallel and are collected by
//! seed, never by completion.

pub mod compare;
pub mod coverage;
pub mod grid;
pub mod shrink;
pub mod sweep;
pub mod threshold;
pub mod vary;
