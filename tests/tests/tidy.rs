//! Tidy checks over the source tree: every source file opens with a `//!` module doc that says
//! what it holds (rust-analyzer's tidy test, STYLE.md).

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_source_file_has_a_module_doc() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in ["engine", "protocols", "check", "scenario", "report", "cli"] {
        for sub in ["src", "examples"] {
            rust_files(&repo.join("crates").join(krate).join(sub), &mut files);
        }
    }
    assert!(
        files.len() > 40,
        "the source tree went missing: {}",
        files.len()
    );
    let missing: Vec<String> = files
        .iter()
        .filter(|f| !std::fs::read_to_string(f).unwrap().starts_with("//!"))
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` module doc: {missing:#?}"
    );
}
