//! `splitbrain migrate FILE [-o OUT]`: rewrites a scenario of an older format version to the
//! current one with the same meaning (`splitbrain_scenario::migrate`), in place or into OUT,
//! atomically; prints what it changed and what it could not carry over.

use crate::exit;
use anyhow::Result;
use clap::Args;
use splitbrain_scenario::format::CURRENT;
use splitbrain_scenario::migrate::migrate_str;
use std::path::PathBuf;

/// Arguments of `migrate`.
#[derive(Args)]
pub struct MigrateArgs {
    /// The scenario file to migrate.
    pub file: PathBuf,
    /// Write the migrated file here instead of over FILE.
    #[arg(short = 'o', long = "out", value_name = "OUT")]
    pub out: Option<PathBuf>,
}

/// Runs `migrate`: exit 0 when written (or already current), 2 when the file cannot be read
/// or does not validate.
pub fn run(a: MigrateArgs) -> Result<u8> {
    let file = a.file.display().to_string();
    let src = splitbrain_scenario::read_scenario(&a.file)?;
    let m = migrate_str(&file, &src)?;
    let out = a.out.as_ref().unwrap_or(&a.file);
    if m.from == CURRENT && a.out.is_none() {
        outln!("{file}: already format {CURRENT}; unchanged");
        return Ok(exit::OK);
    }
    crate::atomic::write_atomic(out, m.text.as_bytes())?;
    if m.from == CURRENT {
        outln!(
            "{file}: already format {CURRENT}; copied unchanged to {}",
            out.display()
        );
    } else {
        outln!(
            "{file}: format {} -> {CURRENT}, written to {}",
            m.from,
            out.display()
        );
    }
    for note in &m.notes {
        outln!("note      {note}");
    }
    Ok(exit::OK)
}
