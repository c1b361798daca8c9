//! splitbrain reports: narration of a run, timeline charts, and report pages.

pub mod narrate;

pub use narrate::{describe_fault, describe_obs, narrate, Event, NarrationOptions};
