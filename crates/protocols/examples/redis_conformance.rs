//! Replays a Redis conformance vectors file against the model.
//!
//! Usage: `cargo run --release -p splitbrain-protocols --example redis_conformance -- FILE`
//!
//! Prints one line per failing step (case, step index, command, expected, got, why) and, as
//! the last line, `passed=N failed=M` (counts of steps). Exit status: 0 if every step passed,
//! 1 if any failed, 2 if the file cannot be read or parsed (or no FILE is given).

use std::process::ExitCode;

use splitbrain_protocols::redis::conformance;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: redis_conformance FILE");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot read {}: {e}", path.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    let report = match conformance::replay(&text) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}: {e}", path.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    for f in &report.failures {
        println!(
            "FAIL case={} step={} command={:?} expected={} got={} ({})",
            f.case, f.step, f.command, f.expected, f.got, f.detail
        );
    }
    println!("passed={} failed={}", report.passed, report.failed);
    if report.all_passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
