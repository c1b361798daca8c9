//! splitbrain reports: narration of a run, timeline charts, and report pages.

pub mod narrate;
pub mod summary;
pub mod sweep_chart;

pub use narrate::{describe_fault, describe_obs, narrate, Event, NarrationOptions};
pub use summary::{reproduce_command, summary_json, summary_text};
