//! Output files are written to a temporary file beside the target and renamed into place, so
//! an interrupted run never leaves a half-written file.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// A file being written; it appears at its path only on [`AtomicFile::commit`].
pub struct AtomicFile {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
}

impl AtomicFile {
    /// Starts writing `path`. One rule for every command's outputs: missing parent folders
    /// are created; a folder that cannot be created or written is bad input (exit 2), named
    /// as the user gave it (never the temporary file's name).
    pub fn create(path: &Path) -> Result<Self> {
        // A folder where the file should go would only fail at the rename, after the work
        // (a whole sweep): refuse it now.
        if path.is_dir() {
            return Err(crate::exit::BadInput(format!(
                "cannot write {}: it is a folder, not a file",
                path.display()
            ))
            .into());
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir).map_err(|e| {
            crate::exit::BadInput(format!(
                "cannot write {}: cannot create the folder {}: {}",
                path.display(),
                dir.display(),
                e.kind()
            ))
        })?;
        let mut builder = tempfile::Builder::new();
        builder.prefix(".splitbrain-").suffix(".tmp");
        // Temporary files are private (0600) by default; outputs are ordinary files.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o644));
        }
        let tmp = builder.tempfile_in(&dir).map_err(|e| {
            crate::exit::BadInput(format!(
                "cannot write {}: cannot create a file in {}: {}",
                path.display(),
                dir.display(),
                e.kind()
            ))
        })?;
        Ok(AtomicFile {
            tmp,
            path: path.to_path_buf(),
        })
    }

    /// A second handle to the temporary file, for streaming writers.
    pub fn writer(&self) -> Result<std::fs::File> {
        self.tmp
            .reopen()
            .context("cannot reopen the temporary output file")
    }

    /// Moves the finished file into place.
    pub fn commit(self) -> Result<()> {
        let path = self.path.clone();
        self.tmp.persist(&path).map_err(|e| {
            crate::exit::BadInput(format!(
                "cannot write {}: {}",
                path.display(),
                e.error.kind()
            ))
        })?;
        Ok(())
    }
}

/// Writes `bytes` into a file started with [`AtomicFile::create`] and moves it into place.
pub fn finish(f: AtomicFile, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut w = f.writer()?;
    w.write_all(bytes)
        .with_context(|| format!("cannot write {}", f.path.display()))?;
    drop(w);
    f.commit()
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let f = AtomicFile::create(path)?;
    let mut w = f.writer()?;
    w.write_all(bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    drop(w);
    f.commit()
}
