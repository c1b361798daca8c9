//! The `splitbrain` command line as a library: thin glue over the library crates. Parses
//! flags, runs, prints, writes files atomically. Exit codes: 0 as expected, 1 not as expected,
//! 2 bad input or usage, 3 a run hit its event/time bound, 4 an internal error (a bug).
//!
//! [`main_with`] is the whole command line over a [`RoleRegistry`]: the `splitbrain` binary
//! passes the built-in roles, and a user's binary passes them plus its own
//! (`RoleRegistry::builtin().with::<MySpec>("my_role")`), so its scenario files can name its
//! roles in every command.

/// `print!` that returns a write error to the caller (with `?`) instead of panicking, so a
/// standard output closed early (`splitbrain run ... | head -1`) ends the command through
/// [`main`]'s error path as an `io::ErrorKind::BrokenPipe`, as ripgrep does.
macro_rules! out {
    ($($arg:tt)*) => {
        std::io::Write::write_fmt(&mut std::io::stdout(), format_args!($($arg)*))?
    };
}

/// `println!` that returns a write error to the caller (with `?`): see [`out!`].
macro_rules! outln {
    () => {
        std::io::Write::write_all(&mut std::io::stdout(), b"\n")?
    };
    ($($arg:tt)*) => {{
        let mut stdout = std::io::stdout().lock();
        std::io::Write::write_fmt(&mut stdout, format_args!($($arg)*))?;
        std::io::Write::write_all(&mut stdout, b"\n")?;
    }};
}

mod atomic;
mod cmd_chart;
mod cmd_check;
mod cmd_compare;
mod cmd_coverage;
mod cmd_export;
mod cmd_merge;
mod cmd_migrate;
mod cmd_replay;
mod cmd_report;
mod cmd_run;
mod cmd_shrink;
mod cmd_sweep;
mod cmd_view;
#[cfg(test)]
mod docs_gen;
mod exit;
mod junit;

use clap::{Parser, Subcommand};
pub use splitbrain_scenario::RoleRegistry;
use std::process::ExitCode;

/// A deterministic simulator for leader election and distributed locks.
#[derive(Parser)]
#[command(name = "splitbrain", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one scenario and report its invariants, metrics and how to reproduce it.
    // The usage is written out: after a mistyped flag clap's usage listed the flag it
    // suggested as if required (`run --seed <SEED> <FILE>`).
    #[command(override_usage = "splitbrain run [OPTIONS] <FILE>")]
    Run(cmd_run::RunArgs),
    /// Run every scenario under the given paths and compare with their expectations.
    Check(cmd_check::CheckArgs),
    /// Draw a saved trace as a timeline chart (SVG or PNG) without re-running it.
    Chart(cmd_chart::ChartArgs),
    /// Write a saved trace as one self-contained HTML page to step through in a browser.
    View(cmd_view::ViewArgs),
    /// Write a saved trace for Chrome tracing / Perfetto (--format chrome) or ShiViz (shiviz).
    Export(cmd_export::ExportArgs),
    /// Write a chart and a markdown page per scenario, and an index, to a folder.
    Report(cmd_report::ReportArgs),
    /// Print the JSON Schema of scenario files.
    Schema,
    /// Rewrite a scenario of an older format version to the current one, keeping its meaning
    /// (every default that changed is written out); in place, or into OUT with -o.
    Migrate(cmd_migrate::MigrateArgs),
    /// Run a scenario once per seed in parallel: violation rates, failing seeds, throughput.
    /// Exit 0 if every run matched the file's expectation, 1 if not, 3 if a run hit a bound.
    // The usage is written out: after a mistyped flag (`--set`) clap's usage listed the flag
    // it suggested as if required (`sweep --seeds <A..B> --steps <N> <FILE>`).
    #[command(override_usage = "splitbrain sweep [OPTIONS] --seeds <A..B> <FILE>")]
    Sweep(cmd_sweep::SweepArgs),
    /// Run several lock designs (scenario files, or one NAME.compare.json manifest) over the
    /// same seeds: per design the rates of two accepted writers, duplicate effects and stalls,
    /// acquire and takeover times, messages per acquisition, with 95% intervals.
    Compare(cmd_compare::CompareArgs),
    /// Combine the results files of a sharded sweep into what one unsharded sweep writes.
    Merge(cmd_merge::MergeArgs),
    /// Re-run a recorded trace and check the run is identical, event for event.
    Replay(cmd_replay::ReplayArgs),
    /// Cut a failing run down to a smaller scenario that still violates the same invariant.
    /// Exit 0 with the smaller scenario, 1 if the seed violates nothing (nothing to shrink), 2
    /// if the file cannot be shrunk (with its nemesis made explicit it does not validate), 4 on
    /// an internal error.
    Shrink(cmd_shrink::ShrinkArgs),
    /// Measure the checkers: sweep safe designs (no violation allowed) and planted bugs (some
    /// invariant must catch each) and write the coverage report.
    Coverage(cmd_coverage::CoverageArgs),
}

/// Runs the `splitbrain` command line (arguments from the process) with the roles of
/// `roles`, and gives the process's exit code.
pub fn main_with(roles: RoleRegistry) -> ExitCode {
    atomic::remove_unfinished_on_interrupt();
    let cli = Cli::parse();
    let roles = &roles;
    let result = match cli.cmd {
        Cmd::Run(a) => cmd_run::run(a, roles),
        Cmd::Check(a) => cmd_check::run(a, roles),
        Cmd::Chart(a) => cmd_chart::run(a, roles),
        Cmd::View(a) => cmd_view::run(a, roles),
        Cmd::Export(a) => cmd_export::run(a, roles),
        Cmd::Report(a) => cmd_report::run(a, roles),
        Cmd::Schema => print_schema(),
        Cmd::Migrate(a) => cmd_migrate::run(a),
        Cmd::Sweep(a) => cmd_sweep::run(a, roles),
        Cmd::Compare(a) => cmd_compare::run(a),
        Cmd::Merge(a) => cmd_merge::run(a),
        Cmd::Replay(a) => cmd_replay::run(a, roles),
        Cmd::Shrink(a) => cmd_shrink::run(a, roles),
        Cmd::Coverage(a) => cmd_coverage::run(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        // `splitbrain run ... | head` closes standard output early: end quietly, with the
        // status a SIGPIPE would give (128 + 13).
        Err(e) if is_broken_pipe(&e) => ExitCode::from(exit::BROKEN_PIPE),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(exit::exit_code_of(&e))
        }
    }
}

/// `splitbrain schema`: the JSON Schema of scenario files on standard output.
fn print_schema() -> anyhow::Result<u8> {
    outln!("{}", splitbrain_scenario::json_schema());
    Ok(exit::OK)
}

/// Whether `e` is (or was caused by) a write to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
