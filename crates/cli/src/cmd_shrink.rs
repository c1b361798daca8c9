//! `splitbrain shrink FILE --seed N`: cuts a failing run down to a smaller scenario that still
//! violates the same invariant, with the seed's nemesis turned into explicit faults.

use crate::atomic::write_atomic;
use crate::exit;
use anyhow::Result;
use clap::Args;
use splitbrain_lab::shrink::{explicit, shrink, ShrinkError, ShrinkOptions, Size};
use splitbrain_scenario::schema::FaultSpec;
use std::path::PathBuf;

/// Arguments of `shrink`.
#[derive(Args)]
pub struct ShrinkArgs {
    /// The scenario file.
    pub file: PathBuf,
    /// Seed of the failing run, an integer 0..=18446744073709551615 (default: the file's
    /// `seed`).
    #[arg(long, value_parser = crate::cmd_run::parse_seed, allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// Write the smallest scenario found here (default: print it).
    #[arg(short = 'o', long, value_name = "minimal.json")]
    pub out: Option<PathBuf>,
    /// Most runs to spend on candidates.
    #[arg(long, default_value_t = 500, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_runs: u32,
    /// The invariant to keep violated (default: the first violated one).
    #[arg(long, value_name = "NAME")]
    pub invariant: Option<String>,
}

fn size_row(label: &str, s: &Size, nemesis_faults: Option<usize>) -> String {
    let faults = match (s.nemesis, nemesis_faults) {
        (true, Some(n)) => format!("{} + nemesis ({n} drawn)", s.faults),
        _ => s.faults.to_string(),
    };
    format!(
        "{label:<10}{faults:<24}{:>6}  {:>12}  {:>8}",
        s.nodes,
        s.duration.to_string(),
        s.events
    )
}

fn fault_lines(faults: &[FaultSpec]) -> String {
    faults
        .iter()
        .map(|f| {
            format!(
                "  {}\n",
                serde_json::to_string(f).expect("a fault serialises")
            )
        })
        .collect()
}

/// Runs `shrink`.
///
/// Long because it is the command's one sequence (refuse, load, shrink, print, write the smaller
/// file).
pub fn run(a: ShrinkArgs, roles: &splitbrain_scenario::RoleRegistry) -> Result<u8> {
    if let Some(out) = &a.out {
        crate::atomic::check_distinct(&[("the scenario", &a.file)], &[("-o", out)])?;
        // Refused now, not after the shrink's runs.
        crate::atomic::output_target(out)?;
    }
    let plan = roles.load_file(&a.file)?;
    let seed = a.seed.unwrap_or(plan.scenario.seed);
    let file = a.file.display().to_string();
    let opts = ShrinkOptions {
        seed,
        invariant: a.invariant.clone(),
        max_runs: a.max_runs,
    };
    // A seed whose run violates nothing is not bad input (the file and flags are valid) but
    // an outcome other than the one asked for: exit 1, as for a mismatch, with a plain note
    // and where to find a failing seed.
    let nothing = |what: String| {
        eprintln!("nothing to shrink: seed {seed} {what}");
        eprintln!(
            "          shrink needs a failing run: `splitbrain sweep {file} --seeds 0..1000` lists \
             failing seeds"
        );
        Ok(exit::MISMATCH)
    };
    let s = match shrink(&plan, &opts) {
        Ok(s) => s,
        Err(ShrinkError::NothingViolated { checked, .. }) => {
            return nothing(format!("violates no invariant ({checked})"))
        }
        Err(ShrinkError::NotViolated { name, outcome, .. }) => {
            return nothing(format!("does not violate {name} ({name}={outcome})"))
        }
        Err(e @ (ShrinkError::Internal(_) | ShrinkError::Io(_))) => {
            return Err(exit::Internal(format!(
                "{e} (a bug in splitbrain: please report it with this command: splitbrain \
                 shrink {file} --seed {seed})"
            ))
            .into())
        }
        Err(e) => return Err(exit::BadInput(e.to_string()).into()),
    };
    outln!(
        "shrink    {file} seed {seed}: keeping {} violated",
        s.invariant
    );
    outln!(
        "{:<10}{:<24}{:>6}  {:>12}  {:>8}",
        "",
        "faults",
        "nodes",
        "duration",
        "events"
    );
    outln!("{}", size_row("before", &s.before, Some(s.nemesis_faults)));
    outln!("{}", size_row("after", &s.after, None));
    outln!(
        "runs      {} of {}{}",
        s.runs,
        a.max_runs,
        if s.exhausted {
            " (budget spent: a larger --max-runs may shrink further)"
        } else {
            " (no candidate left to try)"
        }
    );
    outln!("faults before (the nemesis draws made explicit):");
    out!("{}", fault_lines(&explicit(&plan, seed).faults));
    outln!("faults after:");
    out!("{}", fault_lines(&s.scenario.faults));
    outln!("verified  the result violates {}", s.invariant);
    match &a.out {
        Some(out) => {
            write_atomic(out, s.text.as_bytes())?;
            outln!("wrote     {}", out.display());
            outln!(
                "reproduce splitbrain run {}",
                splitbrain_scenario::error::shell_word(&out.display().to_string())
            );
        }
        None => {
            outln!();
            out!("{}", s.text);
        }
    }
    Ok(exit::OK)
}
