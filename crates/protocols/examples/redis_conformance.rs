//! Replays a Redis conformance vectors file (e.g. `conformance/redis/vectors.json`, or a fresh
//! recording by `conformance/redis/record.py`) against the model.
//!
//! Usage: `cargo run -p splitbrain-protocols --example redis_conformance -- FILE`
//!
//! Prints one line per failing step (case, step index, command, expected, got, why), one line
//! per exclusion with its count of excluded steps, and, as the last line,
//! `passed=N failed=M excluded=K` (counts of steps). Exit status: 0 if every step passed or
//! was excluded as documented, 1 if any failed, 2 if the file cannot be read or parsed (or no
//! FILE is given).

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
    for (name, n) in &report.excluded {
        println!("excluded {name}: {n} step(s)");
    }
    println!(
        "passed={} failed={} excluded={}",
        report.passed,
        report.failed,
        report.excluded_steps()
    );
    if report.all_passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
