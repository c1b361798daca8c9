//! `splitbrain coverage DIR --seeds A..B -o REPORT.md`: measures the checkers.
//! Sweeps every design of a coverage folder (`safe/`: must show no violation; `planted/`:
//! some invariant must catch it in at least 1% of seeds) and writes the markdown report,
//! the same bytes for any `--jobs`. Exit 0 if every design passes, 1 if not.

use crate::atomic::{finish, AtomicFile};
use crate::exit;
use anyhow::{Context, Result};
use clap::Args;
use splitbrain_lab::coverage::{load_designs, measure, render, DesignKind};
use splitbrain_lab::sweep::SeedLine;
use splitbrain_scenario::seeds::SeedRange;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Arguments of `coverage`.
#[derive(Args)]
pub struct CoverageArgs {
    /// The coverage folder (scenario files in `safe/` and `planted/`).
    #[arg(default_value = "tests/coverage")]
    pub dir: PathBuf,
    /// Seeds per design: A..B (B excluded: 0..1000 is 1000 seeds), A..=B (B included: 0..=999
    /// is the same 1000) or one seed A.
    #[arg(
        long,
        value_name = "A..B",
        default_value = "0..10000",
        allow_hyphen_values = true
    )]
    pub seeds: SeedRange,
    /// Write the markdown report here.
    #[arg(long, short = 'o', value_name = "REPORT.md")]
    pub out: PathBuf,
    /// Worker threads (default: the available cores). The report does not depend on it.
    #[arg(long, short = 'j', value_name = "N", allow_negative_numbers = true)]
    pub jobs: Option<usize>,
}

/// Runs `coverage`.
pub fn run(a: CoverageArgs) -> Result<u8> {
    if !a.dir.is_dir() {
        // A file, a path through one (`d.json/`) or nothing: said so, not "no scenario files".
        splitbrain_scenario::load::check_regular(&a.dir)
            .map_err(|e| exit::BadInput(format!("{}: {e}", a.dir.display())))?;
        let why = if a.dir.exists() {
            "it is a file, not a coverage folder (one holding safe/, planted/ and inert/)"
        } else {
            "no such folder"
        };
        return Err(exit::BadInput(format!("{}: {why}", a.dir.display())).into());
    }
    let designs = load_designs(&a.dir).map_err(|e| exit::BadInput(e.to_string()))?;
    // `-o` onto a design file overwrote it with the report.
    let files: Vec<std::path::PathBuf> = designs
        .iter()
        .flat_map(|d| {
            let path = a.dir.join(&d.file);
            let fix = d.fix.as_ref().map(|_| path.with_extension("fix"));
            std::iter::once(path).chain(fix)
        })
        .collect();
    let inputs: Vec<(&str, &std::path::Path)> =
        files.iter().map(|p| ("a design", p.as_path())).collect();
    crate::atomic::check_distinct(&inputs, &[("-o", &a.out)])?;
    let out = AtomicFile::create(&a.out)?;
    let threads = match a.jobs {
        Some(0) => return Err(exit::BadInput("--jobs must be at least 1".into()).into()),
        Some(n) => n.min(256),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let plans = designs.len() + designs.iter().filter(|d| d.fix.is_some()).count();
    let total = plans as u64 * a.seeds.len();
    let done = AtomicU64::new(0);
    let on_done = |_: &SeedLine| {
        let d = done.fetch_add(1, Ordering::Relaxed) + 1;
        if d * 10 / total != (d - 1) * 10 / total {
            eprintln!("coverage: {d}/{total} runs ({}%)", d * 100 / total);
        }
    };
    let results = measure(&designs, a.seeds, threads, &on_done).context("a run failed")?;
    let command = format!(
        "splitbrain coverage {} --seeds {} -o {}",
        a.dir.display(),
        a.seeds,
        a.out.display()
    );
    finish(out, render(&results, a.seeds, &command).as_bytes())?;
    let mut ok = true;
    for r in &results {
        let what = match r.design.kind {
            DesignKind::Safe => {
                let v: u64 = r.stats.iter().map(|s| s.violated).sum();
                format!("{v} violations")
            }
            DesignKind::Planted | DesignKind::Inert => format!(
                "caught {}/{} ({})",
                r.caught,
                r.decided,
                splitbrain_lab::sweep::pct_or_na(r.catch_rate().map(|(x, _)| x))
            ),
        };
        let verdict = if r.passes() { "ok" } else { "FAIL" };
        outln!("{verdict:<5} {:<44} {what}", r.design.file);
        ok &= r.passes();
    }
    outln!("wrote {}", a.out.display());
    Ok(if ok { exit::OK } else { exit::MISMATCH })
}
