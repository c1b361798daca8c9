//! splitbrain scenario files: the JSON schema, validation with located errors, and building a
//! simulation from a validated scenario.
//!
//! Errors name the file, line, column and field path, say what was expected, and suggest the
//! closest name for a typo ("did you mean `client-1`?").

pub mod build;
pub mod checker;
pub mod compare;
pub mod coverage;
pub mod duration;
pub mod error;
pub mod execute;
pub mod format;
pub mod load;
pub mod locate;
pub mod migrate;
pub mod plan;
pub mod replay;
pub mod role;
pub mod roles;
pub mod roster;
pub mod schema;
pub mod shape;
pub mod shrink;
pub mod sweep;
pub mod threshold;
pub mod trace_file;
pub mod validate;
pub mod vary;

pub use error::{Problem, ScenarioError};
pub use load::{load_file, load_str, read_scenario};
pub use plan::Plan;
pub use schema::Scenario;
pub use trace_file::{TraceFile, TraceFileError};

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

pub use build::build;
pub use execute::{
    applicable_invariants, check_spec, execute, execute_keeping, execute_outcomes, Event,
    ExpectationResult, Keep, RunResult, TraceHeader,
};
