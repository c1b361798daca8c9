//! `dynamo-lock`: the whole splitbrain command line, plus this crate's roles
//! (`dynamo_lock_client`, `dynamo_lock_table`).

use std::process::ExitCode;

fn main() -> ExitCode {
    splitbrain_cli::main_with(dynamo_lock::roles())
}
