//! `splitbrain merge RESULTS... -o OUT`: combines the `--out` files of the shards of one sweep
//! into exactly the file one unsharded sweep writes.

use crate::atomic::write_atomic;
use crate::exit;
use anyhow::Result;
use clap::Args;
use splitbrain_lab::sweep::{invariant_stats, merge_results, parse_results, pct_or_na};
use std::path::PathBuf;

/// Arguments of `merge`.
#[derive(Args)]
pub struct MergeArgs {
    /// The shards' results files (one per shard K/N, any order).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The merged results file.
    #[arg(short = 'o', long, value_name = "merged.jsonl")]
    pub out: PathBuf,
}

/// Runs `merge`.
pub fn run(a: MergeArgs) -> Result<u8> {
    let same = |f: &PathBuf| match (f.canonicalize(), a.out.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    };
    if let Some(f) = a.files.iter().find(|f| same(f)) {
        return Err(exit::BadInput(format!(
            "-o {} is also an input: write the merged file elsewhere",
            f.display()
        ))
        .into());
    }
    for f in &a.files {
        crate::atomic::check_input(f, "the results file")?;
    }
    let mut inputs = Vec::new();
    for f in &a.files {
        let name = f.display().to_string();
        let text =
            std::fs::read_to_string(f).map_err(|e| exit::BadInput(format!("{name}: {e}")))?;
        inputs.push((name, text));
    }
    let merged = merge_results(&inputs).map_err(|e| exit::BadInput(e.to_string()))?;
    let out = a.out.display().to_string();
    let parsed = parse_results(&out, &merged).map_err(|e| exit::BadInput(e.to_string()))?;
    write_atomic(&a.out, merged.as_bytes())?;
    outln!(
        "merged    {}: {} of {} (seeds {}) -> {out}",
        splitbrain_report::summary::plural(inputs.len(), "file"),
        splitbrain_report::summary::plural(parsed.lines.len(), "run"),
        parsed.header.name,
        parsed.header.seeds
    );
    let values: Vec<Option<String>> = match &parsed.header.vary {
        Some(v) => v.values.iter().cloned().map(Some).collect(),
        None => vec![None],
    };
    for v in &values {
        let mine: Vec<_> = parsed.lines.iter().filter(|l| &l.value == v).collect();
        if let (Some(val), Some(vary)) = (v, &parsed.header.vary) {
            outln!("{} = {val}", vary.path);
        }
        for s in invariant_stats(&mine, 0) {
            let ci = s.ci.map_or("n/a".to_string(), |(lo, hi)| {
                format!("[{}, {}]", pct_or_na(Some(lo)), pct_or_na(Some(hi)))
            });
            outln!(
                "  {:<26}{:>16}  {:>8}  {ci}{}",
                s.name,
                format!("{}/{}", s.violated, s.decided()),
                pct_or_na(s.rate),
                s.notes(),
            );
        }
    }
    Ok(exit::OK)
}
