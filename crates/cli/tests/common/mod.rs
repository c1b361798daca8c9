//! What every CLI test file runs the binary with: the repository root as the working folder,
//! so paths such as `scenarios/...` and `tests/broken/...` resolve as in the README.

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (two levels above this crate).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Runs `splitbrain ARGS` in the repository root and returns what it printed and its status.
pub fn splitbrain(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_splitbrain"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the binary runs")
}

/// The exit code of a process that exited normally (a signal, e.g. an abort, fails the test).
pub fn code(o: &Output) -> i32 {
    o.status
        .code()
        .expect("exited normally, not killed by a signal")
}
