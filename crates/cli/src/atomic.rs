//! Output files are written to a temporary file beside the target and renamed into place, so
//! an interrupted run never leaves a half-written file. The temporary files being written are
//! listed, so an interrupt (Ctrl-C, SIGTERM, SIGHUP) removes them before the process exits
//! ([`remove_unfinished_on_interrupt`]): an interrupted sweep leaves no `.splitbrain-*.tmp`.

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

/// The folders [`AtomicFile::create`] made for an output (`deepest`, up to and including
/// `top`, the highest that did not exist), removed again when dropped unless the output was
/// committed: a command refused after it started its outputs leaves no new empty folder.
struct MadeFolders {
    made: Option<(PathBuf, PathBuf)>,
}

impl Drop for MadeFolders {
    fn drop(&mut self) {
        if let Some((deepest, top)) = self.made.take() {
            for a in deepest.ancestors() {
                // Only empty folders go; anything else written there meanwhile stays.
                if std::fs::remove_dir(a).is_err() || a == top {
                    break;
                }
            }
        }
    }
}

/// A file being written; it appears at its path only on [`AtomicFile::commit`].
pub struct AtomicFile {
    // Dropped in this order: the temporary file, then the folders made for it.
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
    unfinished: Unfinished,
    folders: MadeFolders,
}

impl AtomicFile {
    /// Starts writing `path`. One rule for every command's outputs: missing parent folders
    /// are created (and removed again if the file is dropped uncommitted, e.g. when the
    /// command is refused after it started its outputs); a folder that cannot be created or
    /// written is bad input (exit 2), named as the user gave it (never the temporary file's
    /// name).
    ///
    /// What is already at `path` decides where the output goes (see [`output_target`]): a
    /// regular file is replaced; a symbolic link to a regular file keeps the link and replaces
    /// its target (the temporary file is made in the target's folder and renamed over the
    /// target); anything else (a folder, device, FIFO, socket, or a link to one, a dangling
    /// link) is refused with exit 2 before any work.
    ///
    /// Long because each kind of target (a file, a link, a folder, a device, a FIFO, a socket, a
    /// dangling link) is refused or followed in its own lines.
    pub fn create(path: &Path) -> Result<Self> {
        let user_path = path;
        let resolved = output_target(path)?;
        let path = resolved.as_path();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // The highest missing folder, removed again if the output is never committed.
        let top = dir
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .last()
            .map(Path::to_path_buf);
        std::fs::create_dir_all(&dir).map_err(|e| {
            // "entity already exists" says little: name the file that is in the way.
            let blocker = dir.ancestors().find(|a| a.is_file());
            crate::exit::BadInput(match blocker {
                Some(file) => format!(
                    "cannot write {}: {} is a file, not a folder",
                    user_path.display(),
                    file.display()
                ),
                None => {
                    // The deepest folder that exists is the one that refused.
                    let refused = dir.ancestors().find(|a| a.is_dir()).unwrap_or(&dir);
                    format!(
                        "cannot write {}: cannot create the folder {}: the folder {} {}",
                        user_path.display(),
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
        let folders = MadeFolders {
            made: top.map(|top| (dir.clone(), top)),
        };
        let tmp = builder.tempfile_in(&dir).map_err(|e| {
            crate::exit::BadInput(if dir.is_dir() {
                format!(
                    "cannot write {}: the folder {} {}",
                    user_path.display(),
                    dir.display(),
                    cannot_write(&e)
                )
            } else {
                format!(
                    "cannot write {}: the folder {} does not exist",
                    user_path.display(),
                    dir.display()
                )
            })
        })?;
        let unfinished = Unfinished::new(tmp.path());
        Ok(AtomicFile {
            tmp,
            path: path.to_path_buf(),
            unfinished,
            folders,
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
            mut folders,
        } = self;
        tmp.persist(&path).map_err(|e| {
            crate::exit::BadInput(format!("cannot write {}: {}", path.display(), e.error))
        })?;
        folders.made = None;
        drop(unfinished);
        Ok(())
    }
}

/// What kind of non-regular file `t` is, in words.
fn kind_of(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    if t.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// Where an output named `path` is written: `path` itself when nothing or a regular file is
/// there; the resolved target when `path` is a symbolic link to a regular file (so the link
/// survives and its target gets the new contents). Bad input (exit 2), naming `path` and why,
/// when a folder, device, FIFO or socket is there (a rename over `/dev/full` turned it into a
/// plain file), or when `path` is a dangling link.
pub fn output_target(path: &Path) -> Result<PathBuf> {
    let meta = std::fs::symlink_metadata(path);
    // A path ending in / names a folder: the rename at the end would fail with the OS's "Not
    // a directory" after all the work was done (`sweep --out d/` ran every seed first).
    if path.to_string_lossy().ends_with('/') && !matches!(&meta, Ok(m) if m.is_dir()) {
        return Err(crate::exit::BadInput(format!(
            "cannot write {}: the path ends in /, so it names a folder, not a file; give a \
             file name",
            path.display()
        ))
        .into());
    }
    let Ok(meta) = meta else {
        return Ok(path.to_path_buf());
    };
    let t = meta.file_type();
    if t.is_file() {
        return Ok(path.to_path_buf());
    }
    if t.is_dir() {
        return Err(crate::exit::BadInput(format!(
            "cannot write {}: it is a folder, not a file",
            path.display()
        ))
        .into());
    }
    if t.is_symlink() {
        let target = std::fs::canonicalize(path).map_err(|_| {
            // A link that resolves to no path may still lead somewhere: /dev/stdout into a
            // pipe is a link to "pipe:[N]", which has no name but is a FIFO.
            crate::exit::BadInput(match std::fs::metadata(path) {
                Ok(m) => format!(
                    "cannot write {}: it is a symbolic link to {}, not a regular file; outputs \
                     replace only regular files",
                    path.display(),
                    kind_of(&m.file_type())
                ),
                Err(_) => format!(
                    "cannot write {}: it is a symbolic link to a file that does not exist",
                    path.display()
                ),
            })
        })?;
        let tt = std::fs::metadata(&target)
            .map(|m| m.file_type())
            .map_err(|e| crate::exit::BadInput(format!("cannot write {}: {e}", path.display())))?;
        if tt.is_file() {
            return Ok(target);
        }
        return Err(crate::exit::BadInput(format!(
            "cannot write {}: it is a symbolic link to {}, which is {}; outputs replace only \
             regular files",
            path.display(),
            target.display(),
            kind_of(&tt)
        ))
        .into());
    }
    Err(crate::exit::BadInput(format!(
        "cannot write {}: it is {}, not a regular file; outputs replace only regular files",
        path.display(),
        kind_of(&t)
    ))
    .into())
}

/// Refuses an input that is not a regular file (a FIFO would block the read forever, a
/// device would be read without end): bad input (exit 2) "X: cannot read the trace: it is a
/// FIFO (named pipe), not a regular file", before the file is opened; `what` ("the trace")
/// names the input. Symbolic links are followed. A folder and a missing file are told in the
/// scenario reader's words ("it is a folder, not a file", "no such file"), not as the OS's
/// "Is a directory (os error 21)". Scenarios and manifests need no call: their one reader
/// (`splitbrain_scenario::load`) refuses them itself, with the same words.
pub fn check_input(path: &Path, what: &str) -> Result<()> {
    let refuse = |why: String| -> anyhow::Error {
        crate::exit::BadInput(format!("{}: cannot read {what}: {why}", path.display())).into()
    };
    splitbrain_scenario::load::check_regular(path).map_err(|e| refuse(e.to_string()))?;
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(refuse("it is a folder, not a file".to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(refuse("no such file".to_string()))
        }
        _ => Ok(()),
    }
}

/// `path` made absolute with its links resolved, for comparing files: its longest existing
/// ancestor canonicalized, then the remaining (missing) components applied lexically (`..`
/// pops one, `.` is dropped). The missing folders are created as real folders by
/// [`AtomicFile::create`], so lexical resolution is what the OS will do with them: `nd/../s.json`
/// is `s.json` once `nd` is made. (Falling back to the path as given when its folder was
/// missing let `run s.json --trace nd/../s.json` overwrite the scenario.)
fn identity(path: &Path) -> PathBuf {
    for base in path.ancestors() {
        let existing = if base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            base
        };
        let Ok(mut resolved) = std::fs::canonicalize(existing) else {
            continue;
        };
        let rest = path.strip_prefix(base).unwrap_or(Path::new(""));
        for c in rest.components() {
            match c {
                std::path::Component::ParentDir => {
                    resolved.pop();
                }
                std::path::Component::Normal(n) => resolved.push(n),
                // A prefix or root cannot follow an existing ancestor; `.` changes nothing.
                _ => {}
            }
        }
        return resolved;
    }
    path.to_path_buf()
}

/// Whether `a` and `b` name one file: the same [`identity`], or (both existing) the same
/// device and inode, so a hard link to a file is that file (`run s.json --trace hard.jsonl`,
/// with `hard.jsonl` a hard link to `s.json`, is refused as writing onto its input).
fn same_file(a: &Path, b: &Path) -> bool {
    if identity(a) == identity(b) {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    false
}

/// Refuses (exit 2, before any work) an output that is the same file as an input (`run
/// s.json --trace s.json` overwrote the scenario) and two outputs at the same file (`--trace
/// X --chart X` kept only one). Paths are compared canonicalized, so `./a` and `a`, or a link
/// and its target, are the same file; existing files are also compared by device and inode,
/// so a hard link and its target are too. Each entry is (what the path is, e.g. "--trace",
/// path).
pub fn check_distinct(inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> Result<()> {
    for (i, (what, out)) in outputs.iter().enumerate() {
        for (in_what, input) in inputs {
            if same_file(input, out) {
                return Err(crate::exit::BadInput(format!(
                    "cannot write {}: {what} is the same file as the input {} ({in_what}); \
                     it would be overwritten",
                    out.display(),
                    input.display()
                ))
                .into());
            }
        }
        for (other_what, other) in &outputs[..i] {
            if same_file(other, out) {
                return Err(crate::exit::BadInput(format!(
                    "cannot write {}: {other_what} and {what} name the same file; one output \
                     would replace the other",
                    out.display()
                ))
                .into());
            }
        }
    }
    Ok(())
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
