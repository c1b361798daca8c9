//! splitbrain reports: narration of a run, timeline charts, and report pages.

pub mod bulk;
pub mod chart;
pub mod chart_model;
pub mod chart_trace;
pub mod compare;
pub mod event;
pub mod export;
pub mod key_loss;
pub mod narrate;
pub mod page;
pub mod summary;
pub mod sweep_chart;
pub mod view;

pub use chart::{
    kind_legend, render, render_png, render_svg, ChartError, ChartFormat, ChartOptions,
};
pub use chart_model::{ModelInput, TimelineModel};
pub use chart_trace::{model_of_run, read_trace, view_of_run, SavedTrace};
pub use event::Event;
pub use narrate::{bulk_kinds, derived_facts, describe_obs, narrate, NarrationOptions};
pub use summary::{
    nemesis_line, reproduce_command, reproduce_command_with, summary_json, summary_text,
};
pub use view::ViewModel;
