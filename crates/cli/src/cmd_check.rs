//! `splitbrain check PATH...`: every scenario under the paths against its expectation.

use crate::exit;
use anyhow::Result;
use clap::Args;
use splitbrain_scenario::{execute, load_file};
use std::path::{Path, PathBuf};

/// Arguments of `check`.
#[derive(Args)]
pub struct CheckArgs {
    /// Scenario files or folders (searched recursively for *.json).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

/// Every `*.json` file under `paths`, sorted.
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        if p.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(p)?
                .map(|e| e.map(|e| e.path()))
                .collect::<Result<_, _>>()?;
            entries.sort();
            for e in entries {
                walk(&e, out)?;
            }
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p.to_path_buf());
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if !p.exists() {
            return Err(exit::BadInput(format!("{}: no such file or folder", p.display())).into());
        }
        if p.is_file() {
            out.push(p.clone());
        } else {
            walk(p, &mut out)?;
        }
    }
    Ok(out)
}

/// Runs `check`.
pub fn run(a: CheckArgs) -> Result<u8> {
    let files = scenario_files(&a.paths)?;
    let (mut ok, mut bad, mut invalid, mut bounded) = (0, 0, 0, 0);
    for f in &files {
        let plan = match load_file(f) {
            Ok(p) => p,
            Err(e) => {
                println!("INVALID   {}\n{e}", f.display());
                invalid += 1;
                continue;
            }
        };
        let r = execute(&plan, plan.scenario.seed, None)?;
        let detail: Vec<String> = r
            .expectations
            .iter()
            .map(|e| {
                let exp = match e.expected {
                    Some(x) => format!("{x:?}").to_lowercase(),
                    None => "-".into(),
                };
                let got = format!("{:?}", e.got).to_lowercase();
                if e.matches {
                    format!("{}={got}", e.invariant)
                } else {
                    format!("{}: expected {exp}, got {got}", e.invariant)
                }
            })
            .collect();
        let status = if r.bound.is_some() {
            "BOUND   "
        } else if r.matches() {
            "ok      "
        } else {
            "MISMATCH"
        };
        if r.matches() {
            ok += 1;
        } else {
            bad += 1;
        }
        if r.bound.is_some() {
            bounded += 1;
        }
        println!("{status}  {}  [{}]", f.display(), detail.join(", "));
        if let Some(b) = &r.bound {
            println!("          {b}");
        }
    }
    println!("{ok} passed, {bad} failed");
    if invalid > 0 {
        println!("{invalid} invalid scenario file(s)");
        return Ok(exit::BAD_INPUT);
    }
    Ok(if bounded > 0 {
        exit::BOUND
    } else if bad > 0 {
        exit::MISMATCH
    } else {
        exit::OK
    })
}
