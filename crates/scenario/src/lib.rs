//! splitbrain scenario files, as a one-way pipeline: the file format (`schema`, `json`, `load`,
//! `shape`, `limits`, `seeds`, `format`, `migrate`), validation to a [`Plan`] (`validate`,
//! `checker`, `roster`, `role`, `roles`, `applies`), then building and running one seed
//! (`build`, `execute`, `trace_file`, `replay`). Tools over many runs (sweeps, comparisons,
//! shrinking) are the `splitbrain-lab` crate above this one.
//!
//! Errors name the file, line, column and field path, say what was expected, and suggest the
//! closest name for a typo ("did you mean `client-1`?").

pub mod applies;
pub mod build;
pub mod checker;
pub mod custom_spec;
pub mod duration;
pub mod error;
pub mod execute;
pub mod format;
pub mod json;
pub mod limits;
pub mod load;
pub mod locate;
pub mod migrate;
pub mod plan;
pub mod registry;
pub mod replay;
pub mod role;
pub mod roles;
pub mod roster;
pub mod schema;
pub mod seeds;
pub mod shape;
pub mod trace_file;
pub mod validate;

pub use error::{Problem, ScenarioError};
pub use load::read_scenario;
pub use plan::Plan;
pub use registry::RoleRegistry;
pub use schema::Scenario;
pub use trace_file::{TraceFile, TraceFileError};
pub use validate::{load_file, load_str};

/// The JSON Schema of `T` as the tool publishes and checks it (draft-07): an optional field is
/// one left out of `required`, never one whose type admits null, because the tool refuses null
/// everywhere (README: "null is no field's value"; the shape check, `shape.rs`, refuses it).
/// schemars' default added `"null"` to every `Option` field's type (135 places).
pub fn root_schema<T: schemars::JsonSchema>() -> schemars::schema::RootSchema {
    schemars::gen::SchemaSettings::draft07()
        .with(|s| {
            s.option_nullable = false;
            s.option_add_null_type = false;
        })
        .into_generator()
        .into_root_schema_for::<T>()
}

/// The JSON Schema of scenario files, pretty-printed.
pub fn json_schema() -> String {
    let schema = root_schema::<Scenario>();
    serde_json::to_string_pretty(&schema).expect("schema serialises")
}

pub use applies::{applicable_invariants, check_spec};
pub use build::build;
pub use execute::{
    execute, execute_keeping, execute_outcomes, Event, ExpectationResult, Keep, RunResult,
    TraceHeader,
};
