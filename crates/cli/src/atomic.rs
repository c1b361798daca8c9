//! Output files are written to a temporary file beside the target and renamed into place, so
//! an interrupted run never leaves a half-written file. The temporary files being written are
//! listed, so an interrupt (Ctrl-C, SIGTERM, SIGHUP) removes them before the process exits
//! ([`remove_unfinished_on_interrupt`]); a killed sweep used to leave a `.splitbrain-*.tmp`.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The temporary files being written now.
static UNFINISHED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Installs the interrupt handler: it removes every unfinished temporary file and exits with
/// [`crate::exit::INTERRUPTED`]. Files already renamed into place stay.
pub fn remove_unfinished_on_interrupt() {
    // Only one handler per process; a second install (never done) would be refused harmlessly.
    let _ = ctrlc::set_handler(|| {
        let files = UNFINISHED.lock().map(|f| f.clone()).unwrap_or_default();
        for f in &files {
            let _ = std::fs::remove_file(f);
        }
        eprintln!("interrupted: unfinished output files removed");
        std::process::exit(crate::exit::INTERRUPTED.into());
    });
}

/// One entry of [`UNFINISHED`], taken off the list when dropped (committed or abandoned).
struct Unfinished(PathBuf);

impl Unfinished {
    fn new(path: &Path) -> Self {
        if let Ok(mut f) = UNFINISHED.lock() {
            f.push(path.to_path_buf());
        }
        Unfinished(path.to_path_buf())
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Ok(mut f) = UNFINISHED.lock() {
            f.retain(|p| p != &self.0);
        }
    }
}

/// A file being written; it appears at its path only on [`AtomicFile::commit`].
pub struct AtomicFile {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
    unfinished: Unfinished,
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
            // "entity already exists" says little: name the file that is in the way.
            let blocker = dir.ancestors().find(|a| a.is_file());
            crate::exit::BadInput(match blocker {
                Some(file) => format!(
                    "cannot write {}: {} is a file, not a folder",
                    path.display(),
                    file.display()
                ),
                None => {
                    // The deepest folder that exists is the one that refused.
                    let refused = dir.ancestors().find(|a| a.is_dir()).unwrap_or(&dir);
                    format!(
                        "cannot write {}: cannot create the folder {}: the folder {} {}",
                        path.display(),
                        dir.display(),
                        refused.display(),
                        cannot_write(&e)
                    )
                }
            })
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
            crate::exit::BadInput(if dir.is_dir() {
                format!(
                    "cannot write {}: the folder {} {}",
                    path.display(),
                    dir.display(),
                    cannot_write(&e)
                )
            } else {
                format!(
                    "cannot write {}: the folder {} does not exist",
                    path.display(),
                    dir.display()
                )
            })
        })?;
        let unfinished = Unfinished::new(tmp.path());
        Ok(AtomicFile {
            tmp,
            path: path.to_path_buf(),
            unfinished,
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
        let AtomicFile {
            tmp,
            path,
            unfinished,
        } = self;
        tmp.persist(&path).map_err(|e| {
            crate::exit::BadInput(format!("cannot write {}: {}", path.display(), e.error))
        })?;
        drop(unfinished);
        Ok(())
    }
}

/// Why an existing folder refused a new file or folder, in words ("entity not found", the
/// error kind's own words, said nothing: /proc refuses new files with it).
fn cannot_write(e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::PermissionDenied => "cannot be written: permission denied".to_string(),
        ErrorKind::ReadOnlyFilesystem => "cannot be written: its file system is read-only".into(),
        ErrorKind::NotFound => "cannot be written: it accepts no new files".into(),
        ErrorKind::StorageFull => "cannot be written: no space left on the device".into(),
        _ => format!("cannot be written: {e}"),
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
