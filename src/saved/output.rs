//! Where a result goes: resolved and checked from what the user typed,
//! before anything is measured, then written without ever destroying what
//! the path names.
//!
//! The rules, by what the path is:
//!
//! | path | what happens |
//! | --- | --- |
//! | `-`, or the file or pipe standard output is open on (`/dev/stdout`, the file `>` redirects to) | standard output |
//! | a regular file, or nothing yet | a temp file in the same folder, renamed over it when complete; an existing file only where the user may write it (access(2) W_OK) |
//! | a symlink to a stream | followed: `/dev/stdout`, a terminal, a FIFO are written in place |
//! | a symlink to a file | followed only where the link, the folder it points into and the file there are the user's, and never as root: its target is then handled by these rules, the link stays a link; refused otherwise |
//! | a character device or FIFO | written in place, never renamed over |
//! | a folder, block device or socket | refused before anything is measured |
//!
//! A dangling symlink, a missing or unwritable folder are refused up front
//! too, with the path in the message: a file is really created (and
//! removed) in the folder, so a read-only file system, `/sys` or `/proc`
//! fail before anything is measured.

use anyhow::{Context, Result, anyhow, bail};
use nix::unistd::{AccessFlags, access};
use std::fmt;
use std::fs::{self, File, Metadata, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Mode of a new output file, before the umask: `rw-r--r--`.
const NEW_FILE_MODE: u32 = 0o644;

/// How many temp names [`OutputTarget::write`] tries before giving up: a
/// name can be taken by the leftover of a killed run, or by something
/// planted there.
const TEMP_NAME_ATTEMPTS: u32 = 100;

/// Where a result goes, resolved and checked BEFORE anything is measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputTarget {
    /// `-`: the process's standard output.
    Stdout,
    /// A character device (such as `/dev/null`) or a FIFO: opened for
    /// writing without creating or truncating, and written in place; never
    /// renamed over, so the node survives.
    Stream {
        /// The path as the user gave it (possibly a symlink to the node).
        path: PathBuf,
    },
    /// A regular file, existing or still to be created.
    File {
        /// The path as the user gave it: what messages call it.
        shown: PathBuf,
        /// Where the finished file is renamed to: `shown` resolved through
        /// symlinks and made absolute, so a link is kept and its target
        /// replaced, and two spellings of one file compare equal.
        real: PathBuf,
    },
}

impl OutputTarget {
    /// Resolves and checks `arg`, what the user typed after `--json` or
    /// `--csv`.
    ///
    /// Nothing is opened, and nothing is left behind: a temp file is
    /// created in the target's folder and removed at once, to prove a file
    /// can be made there. `-` is standard output, and so is any
    /// path to the file or pipe standard output is already open on
    /// (`/dev/stdout`, or the file `>` redirected it to). A symlink is followed
    /// only as `check_link` allows; a dangling one is an error naming the
    /// link. An existing regular file must be writable by the user. A folder, block device or socket is
    /// refused. A character device or FIFO becomes a
    /// [`Stream`](OutputTarget::Stream) (a FIFO is not opened here, so one
    /// without a reader cannot hang the check). For a regular file, existing
    /// or new, its folder must exist and be writable.
    pub fn parse(arg: &Path) -> Result<OutputTarget> {
        if arg.as_os_str() == "-" {
            return Ok(OutputTarget::Stdout);
        }
        if arg.as_os_str().is_empty() {
            bail!("the output path is empty: give a file name, or - for standard output");
        }
        let meta = match fs::symlink_metadata(arg) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = followed_link(arg)?;
                // A link to a stream (`/dev/stdout`, a terminal, a FIFO) is
                // written in place and replaces nothing: only a link to a
                // file, which would be replaced, is checked.
                if target.file_type().is_file() && !is_standard_output(&target) {
                    check_link(arg, &meta, &target)?;
                }
                target
            }
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return new_file(arg),
            Err(e) => {
                return Err(e).with_context(|| format!("{}: cannot check it", arg.display()));
            }
        };
        // `/dev/stdout` or the very file or pipe stdout is open on: it is
        // stdout, so the human report moves to stderr instead of mixing in,
        // and no new file is renamed over the one stdout keeps writing to.
        // A terminal or /dev/null stays a stream: nothing there to spoil.
        if !meta.file_type().is_char_device() && is_standard_output(&meta) {
            return Ok(OutputTarget::Stdout);
        }
        let kind = meta.file_type();
        if kind.is_file() {
            let real = fs::canonicalize(arg)
                .with_context(|| format!("{}: cannot resolve it", arg.display()))?;
            // Renaming over it needs only the folder; replacing it needs
            // the user's right to write it, as a shell's `>` would.
            access(&real, AccessFlags::W_OK).map_err(|errno| {
                anyhow!(
                    "{}: you may not write this file ({}); it is never replaced: give \
                     another path",
                    arg.display(),
                    io::Error::from(errno)
                )
            })?;
            // `real` is absolute and canonical, so it has a parent.
            check_folder_writable(arg, real.parent().unwrap_or(Path::new("/")))?;
            Ok(OutputTarget::File {
                shown: arg.to_path_buf(),
                real,
            })
        } else if kind.is_char_device() || kind.is_fifo() {
            Ok(OutputTarget::Stream {
                path: arg.to_path_buf(),
            })
        } else if kind.is_dir() {
            bail!(
                "{}: is a folder; give a file name in it, such as {}",
                arg.display(),
                arg.join("result.json").display()
            )
        } else if kind.is_block_device() {
            bail!(
                "{}: is a block device; a result is never written onto one: give a regular file",
                arg.display()
            )
        } else if kind.is_socket() {
            bail!(
                "{}: is a socket; give a regular file, a FIFO, or - for standard output",
                arg.display()
            )
        } else {
            bail!(
                "{}: is neither a file nor a device; give a regular file",
                arg.display()
            )
        }
    }

    /// Is this `-`, standard output? (A command then prints its human
    /// report to stderr, so the two never mix.)
    pub fn is_stdout(&self) -> bool {
        matches!(self, OutputTarget::Stdout)
    }

    /// What to call it in messages: the path the user gave, or "standard
    /// output" for `-`.
    pub fn display(&self) -> impl fmt::Display + '_ {
        TargetName(self)
    }

    /// Writes the whole `content`.
    ///
    /// A [`File`](OutputTarget::File) is written into a temp file in the
    /// same folder, `.NAME.PID.tmp` (or `.NAME.PID.N.tmp` when that is
    /// taken), created exclusively so nothing planted under that name is
    /// ever followed; it gets the mode (and, where permitted, the owner) of
    /// the file it replaces, or `0644` minus the umask, is
    /// fsynced, then renamed over `real`. On any failure the temp file is
    /// removed and the old file is untouched. A stream or standard output is
    /// written and flushed directly. Errors name the user's path, never the
    /// temp name.
    pub fn write(&self, content: &[u8]) -> Result<()> {
        match self {
            OutputTarget::Stdout => write_all_to(&mut io::stdout().lock(), content, self.display()),
            OutputTarget::Stream { path } => write_stream(path, content),
            OutputTarget::File { shown, real } => replace_file(shown, real, content),
        }
    }
}

struct TargetName<'a>(&'a OutputTarget);

impl fmt::Display for TargetName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            OutputTarget::Stdout => f.write_str("standard output"),
            OutputTarget::Stream { path } => path.display().fmt(f),
            OutputTarget::File { shown, .. } => shown.display().fmt(f),
        }
    }
}

/// Refuses two outputs that would spoil each other: both standard output
/// (`--json - --csv -`, or `-` and `/dev/stdout`, would interleave), or both the same real file (the
/// second rename would replace the first). Each entry is the option's name
/// (`"--json"`) and its target. Two streams are allowed: they are written
/// one after the other, in place.
pub fn check_distinct(targets: &[(&str, &OutputTarget)]) -> Result<()> {
    for (index, (first_option, first)) in targets.iter().enumerate() {
        for (second_option, second) in &targets[index + 1..] {
            match (first, second) {
                (OutputTarget::Stdout, OutputTarget::Stdout) => bail!(
                    "{first_option} and {second_option} both go to standard output, where they \
                     would interleave; send one of them to a file"
                ),
                (OutputTarget::File { real: a, .. }, OutputTarget::File { real: b, .. })
                    if a == b =>
                {
                    bail!(
                        "{first_option} {} and {second_option} {}: both name the file {}; \
                         give them different files",
                        first.display(),
                        second.display(),
                        a.display()
                    )
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Every text a command prints to standard output goes through this: a
/// closed or full stdout is a one-line error, never a panic (`println!`
/// panics).
pub fn write_stdout(text: &str) -> Result<()> {
    write_all_to(&mut io::stdout().lock(), text.as_bytes(), "standard output")
}

/// Writes all of `content` to `out` and flushes it; a failure (ENOSPC,
/// EPIPE, EBADF, …) becomes "cannot write to NAME: the OS error".
pub fn write_all_to(out: &mut impl Write, content: &[u8], name: impl fmt::Display) -> Result<()> {
    out.write_all(content)
        .and_then(|()| out.flush())
        .map_err(|e| anyhow!("cannot write to {name}: {e}"))
}

/// Is `meta` the file, pipe or terminal standard output is open on?
fn is_standard_output(meta: &Metadata) -> bool {
    nix::sys::stat::fstat(io::stdout())
        .is_ok_and(|stdout| stdout.st_dev == meta.dev() && stdout.st_ino == meta.ino())
}

/// The metadata of what the symlink `link` points to; a dangling link is an
/// error naming the link, its target and the fix.
fn followed_link(link: &Path) -> Result<Metadata> {
    fs::metadata(link).map_err(|e| {
        let target = fs::read_link(link)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into());
        if e.kind() == io::ErrorKind::NotFound {
            anyhow!(
                "{}: a symbolic link to {target}, which does not exist; create it, or remove \
                 the link and give a plain file name",
                link.display()
            )
        } else {
            anyhow!(
                "{}: cannot follow the symbolic link to {target}: {e}",
                link.display()
            )
        }
    })
}

/// A file still to be created: it needs a name and an existing, writable
/// folder.
fn new_file(arg: &Path) -> Result<OutputTarget> {
    // Path::file_name ignores a trailing slash, but the user meant a folder.
    let name = match arg.file_name() {
        Some(name) if !arg.as_os_str().as_encoded_bytes().ends_with(b"/") => name,
        _ => bail!(
            "{}: does not exist and does not name a file; give a file name such as result.json",
            arg.display()
        ),
    };
    let folder = match arg.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    match fs::metadata(folder) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => bail!(
            "{}: {} is not a folder; give a path in an existing folder",
            arg.display(),
            folder.display()
        ),
        Err(e) if e.kind() == io::ErrorKind::NotFound => bail!(
            "{}: the folder {} does not exist; create it first, or give another path",
            arg.display(),
            folder.display()
        ),
        Err(e) => {
            return Err(e).with_context(|| {
                format!(
                    "{}: cannot check the folder {}",
                    arg.display(),
                    folder.display()
                )
            });
        }
    }
    check_folder_writable(arg, folder)?;
    let real = fs::canonicalize(folder)
        .with_context(|| format!("{}: cannot resolve {}", arg.display(), folder.display()))?
        .join(name);
    Ok(OutputTarget::File {
        shown: arg.to_path_buf(),
        real,
    })
}

/// Can a file be created in (and renamed within) `folder`? A temp file
/// is really created there and removed: access(2) says yes to root on
/// `/sys` and on folders that refuse a create for other reasons.
fn check_folder_writable(arg: &Path, folder: &Path) -> Result<()> {
    let name = std::ffi::OsStr::new("placement-study-check");
    let (file, temp) = create_temp(arg, folder, name, 0o600)
        .map_err(|error| anyhow!("{error:#}; give a path in a writable folder"))?;
    drop(file);
    fs::remove_file(&temp).with_context(|| {
        format!(
            "{}: cannot remove the test file {} it made",
            arg.display(),
            temp.display()
        )
    })
}

/// A symbolic link to a file, given as an output, is followed only where
/// the user running the tool owns the link, the folder its target is in,
/// and the target: so a link planted in a shared folder such as `/tmp` can
/// never make the tool replace someone else's file. Root owns every system
/// folder, so for root that rule would protect nothing: as root a link to
/// a file is never followed (`ln -s /etc/passwd out; run --output out`
/// replaced /etc/passwd).
fn check_link(link: &Path, link_meta: &Metadata, target: &Metadata) -> Result<()> {
    let me = nix::unistd::geteuid().as_raw();
    let pointed = fs::read_link(link)
        .map(|t| t.display().to_string())
        .unwrap_or_else(|_| "?".into());
    if me == 0 {
        bail!(
            "{}: a symbolic link to {pointed}; as root an output never follows a link to a \
             file (it could replace any file of the system): give the target's own path, or \
             a plain file name",
            link.display()
        );
    }
    let refuse = |why: String| {
        anyhow!(
            "{}: a symbolic link to {pointed}, {why}; an output follows a link only where the \
             link, the folder it points into and its file are yours (uid {me}): give the \
             target's own path, or a plain file name",
            link.display()
        )
    };
    if link_meta.uid() != me {
        return Err(refuse(format!("made by uid {}", link_meta.uid())));
    }
    let real =
        fs::canonicalize(link).with_context(|| format!("{}: cannot resolve it", link.display()))?;
    let folder = real.parent().unwrap_or(Path::new("/"));
    let folder_owner = fs::metadata(folder)
        .with_context(|| format!("{}: cannot check {}", link.display(), folder.display()))?
        .uid();
    if folder_owner != me {
        return Err(refuse(format!(
            "into {}, a folder of uid {folder_owner}",
            folder.display()
        )));
    }
    if target.uid() != me {
        return Err(refuse(format!("a file of uid {}", target.uid())));
    }
    Ok(())
}

/// Writes into an existing character device or FIFO, in place. Opening a
/// FIFO waits for a reader, as a shell's `>` does.
fn write_stream(path: &Path, content: &[u8]) -> Result<()> {
    let mut stream = OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(|| format!("{}: cannot open it for writing", path.display()))?;
    let kind = stream
        .metadata()
        .with_context(|| format!("{}: cannot check it", path.display()))?
        .file_type();
    // What was checked may have been swapped since: never write into a
    // regular file without the temp-and-rename protection.
    if !(kind.is_char_device() || kind.is_fifo()) {
        bail!(
            "{}: is no longer a device or FIFO (it changed after it was checked); nothing was \
             written",
            path.display()
        );
    }
    write_all_to(&mut stream, content, path.display())
}

/// The temp-file-and-rename write of [`OutputTarget::write`].
fn replace_file(shown: &Path, real: &Path, content: &[u8]) -> Result<()> {
    let (Some(folder), Some(name)) = (real.parent(), real.file_name()) else {
        bail!("{}: does not name a file", shown.display());
    };
    let replaced = match fs::symlink_metadata(real) {
        Ok(meta) if meta.is_file() => Some(meta),
        Ok(_) => bail!(
            "{}: is no longer a regular file (it changed after it was checked); nothing was \
             written",
            shown.display()
        ),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("{}: cannot check it", shown.display())),
    };
    // The replaced file's mode from the start, so a private file's new
    // content is never readable by others, not even briefly.
    let mode = replaced
        .as_ref()
        .map_or(NEW_FILE_MODE, |old| old.mode() & 0o777);
    let (mut file, temp) = create_temp(shown, folder, name, mode)?;
    let written = fill_temp(&mut file, shown, content, replaced.as_ref()).and_then(|()| {
        fs::rename(&temp, real).with_context(|| {
            format!(
                "{}: cannot move the finished file into place",
                shown.display()
            )
        })
    });
    if written.is_err() {
        // The old file (if any) is untouched; leave no half-written temp.
        let _ = fs::remove_file(&temp);
    }
    written
}

/// Writes `content` as the new file `path`, atomically and never over
/// anything: into a temp file beside it, fsynced, then renamed onto `path`
/// with RENAME_NOREPLACE, so a name something took meanwhile fails the
/// rename and is left as it was (and so is no temp file).
pub fn write_new_file(path: &Path, content: &[u8]) -> Result<()> {
    let Some(name) = path.file_name() else {
        bail!("{}: does not name a file", path.display());
    };
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let (mut file, temp) = create_temp(path, folder, name, NEW_FILE_MODE)?;
    let written = fill_temp(&mut file, path, content, None).and_then(|()| {
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            &temp,
            rustix::fs::CWD,
            path,
            rustix::fs::RenameFlags::NOREPLACE,
        )
        .map_err(std::io::Error::from)
        .with_context(|| {
            format!(
                "{}: cannot move the finished file into place (it must be a new file)",
                path.display()
            )
        })
    });
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// Creates the temp file exclusively (O_CREAT|O_EXCL: a file or symlink
/// already under the name is never opened, and the next name is tried),
/// with `mode` minus the umask.
fn create_temp(
    shown: &Path,
    folder: &Path,
    name: &std::ffi::OsStr,
    mode: u32,
) -> Result<(File, PathBuf)> {
    let pid = std::process::id();
    for attempt in 0..TEMP_NAME_ATTEMPTS {
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        match attempt {
            0 => temp_name.push(format!(".{pid}.tmp")),
            n => temp_name.push(format!(".{pid}.{n}.tmp")),
        }
        let temp = folder.join(temp_name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&temp)
        {
            Ok(file) => return Ok((file, temp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => bail!(
                "{}: cannot create a file in {}: {e}",
                shown.display(),
                folder.display()
            ),
        }
    }
    bail!(
        "{}: {TEMP_NAME_ATTEMPTS} temp names in {} are taken (.{}.{}*.tmp); remove those leftovers",
        shown.display(),
        folder.display(),
        name.to_string_lossy(),
        std::process::id()
    )
}

/// Gives the temp file the replaced file's owner and exact mode (the umask
/// may have narrowed it), writes `content` and fsyncs it, so the rename
/// publishes a complete file.
fn fill_temp(
    file: &mut File,
    shown: &Path,
    content: &[u8],
    replaced: Option<&Metadata>,
) -> Result<()> {
    if let Some(old) = replaced {
        // Only root may give a file away; anyone else's replacement becomes
        // their own, as with any editor, so a refusal here is expected.
        let _ = std::os::unix::fs::fchown(&*file, Some(old.uid()), Some(old.gid()));
        file.set_permissions(Permissions::from_mode(old.mode() & 0o777))
            .with_context(|| format!("{}: cannot copy the old file's mode", shown.display()))?;
    }
    write_all_to(file, content, shown.display())?;
    file.sync_all()
        .with_context(|| format!("cannot write to {}", shown.display()))
}
