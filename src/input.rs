//! Reading the files the tool did not write: sysfs and procfs attributes,
//! CPUID dump files, saved documents and fleet input all go through
//! [`read_bounded`] (or [`read_whole`]), so whatever a path turns out to
//! be, a read neither blocks nor runs away:
//!
//! * the file is opened with `O_NONBLOCK`, so a FIFO nobody writes to (or a
//!   device waiting for a carrier) cannot hold the open;
//! * the opened file is checked with its one `fstat`: anything but a regular
//!   file (a FIFO, socket, character or block device, a folder) is refused
//!   with a [`NotAFile`] error naming the path and what it is;
//! * at most the limit is read (one byte more proves a file too large), and
//!   the read stops as soon as the caller has what it needs.
//!
//! Files read by the thousand (a large machine's per-CPU attributes) are
//! opened from a [`Folder`] held open, with [`read_bounded_in`]: the same
//! checks, without the kernel walking the whole path again for each file.
//!
//! Standard input (`-` for a saved document or fleet input) is the one
//! stream read as it comes, whatever the user piped, up to the same kind of
//! limit ([`read_stream`]).

use anyhow::{Context, Result, bail};
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::Mode;
use std::fmt;
use std::fs::{self, File, FileType, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::fd::OwnedFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// How much of a file may be read, and what such a file is (for the error
/// when it is larger, or not a file at all): nothing is ever read unbounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimit {
    /// Larger files are refused (after reading at most one byte more).
    pub max_bytes: usize,
    /// What the file should have been, e.g. "a sysfs attribute file".
    pub expected: &'static str,
}

/// A path that names something other than a regular file: refused, never
/// read (a FIFO could wait forever for a writer, a device never end).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotAFile {
    pub path: PathBuf,
    /// What it is instead, as [`kind_of`] names it.
    pub kind: &'static str,
    /// What it should have been ([`ReadLimit::expected`]).
    pub expected: &'static str,
    /// How to read it all the same, where there is a way.
    pub fix: Option<String>,
}

impl fmt::Display for NotAFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: is a {}, not {}",
            self.path.display(),
            self.kind,
            self.expected
        )?;
        match &self.fix {
            Some(fix) => write!(f, "; {fix}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for NotAFile {}

/// What [`kind_of`] calls a folder.
pub const FOLDER: &str = "folder";

/// What [`kind_of`] calls a socket.
pub const SOCKET: &str = "socket";

/// What a file system object is, in the words of the errors: "folder",
/// "FIFO", "socket", ...
pub fn kind_of(file_type: FileType) -> &'static str {
    if file_type.is_file() {
        "file"
    } else if file_type.is_dir() {
        FOLDER
    } else if file_type.is_symlink() {
        "symbolic link"
    } else if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        SOCKET
    } else if file_type.is_char_device() {
        "character device"
    } else if file_type.is_block_device() {
        "block device"
    } else {
        "special file"
    }
}

/// Reads the regular file at `path`, at most `limit.max_bytes`, stopping
/// early once `is_complete` says the bytes so far hold all the caller
/// needs; `None` when the file does not exist. Anything but a regular file
/// is a [`NotAFile`] error.
///
/// Plain `read` calls after the one `fstat` the type check needs:
/// `std::fs::read` asks for the size again (two more syscalls per file),
/// which for sysfs is a meaningless 4096 and, over thousands of tiny files,
/// a third of the cost.
pub fn read_bounded(
    path: &Path,
    limit: ReadLimit,
    is_complete: impl Fn(&[u8]) -> bool,
) -> Result<Option<Vec<u8>>> {
    let Some((mut file, size)) = open_regular(path, || open_nonblocking(path), limit)? else {
        return Ok(None);
    };
    read_limited(&mut file, size, limit, is_complete, path.display()).map(Some)
}

/// A folder held open, to open the files under it from it: a file opened
/// by its full path has the kernel look up every folder on the way again,
/// eight of them for a CPU's cache attribute, which on a machine of
/// thousands of CPUs is most of the probe's time.
#[derive(Debug)]
pub struct Folder {
    path: PathBuf,
    /// `O_PATH`: good for opening what is inside, and nothing else.
    fd: OwnedFd,
}

impl Folder {
    /// Opens the folder at `path`. A missing folder, or a path through
    /// something else than a folder, is an error that [`is_absent`] says is
    /// "not there"; a FIFO or device is never opened (`O_PATH`).
    pub fn open(path: &Path) -> std::io::Result<Folder> {
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let fd = nix::fcntl::open(path, flags, Mode::empty())?;
        Ok(Folder {
            path: path.to_path_buf(),
            fd,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates (or empties) the file `name` in this folder, for writing,
    /// as `std::fs::write` would (mode 0666 less the umask).
    pub fn create(&self, name: &Path) -> std::io::Result<File> {
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_TRUNC | OFlag::O_CLOEXEC;
        let mode = Mode::from_bits_truncate(0o666);
        Ok(File::from(openat(&self.fd, name, flags, mode)?))
    }
}

/// Like [`read_bounded`], for the file at `relative` under `folder`
/// (opened from the folder, named in errors by its full path).
pub fn read_bounded_in(
    folder: &Folder,
    relative: &Path,
    limit: ReadLimit,
    is_complete: impl Fn(&[u8]) -> bool,
) -> Result<Option<Vec<u8>>> {
    let path = folder.path.join(relative);
    let open = || {
        let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        Ok(File::from(openat(
            &folder.fd,
            relative,
            flags,
            Mode::empty(),
        )?))
    };
    let Some((mut file, size)) = open_regular(&path, open, limit)? else {
        return Ok(None);
    };
    read_limited(&mut file, size, limit, is_complete, path.display()).map(Some)
}

/// Like [`read_bounded`], for a file read whole: one whose size is over the
/// limit is refused from its size, unread.
pub fn read_whole(path: &Path, limit: ReadLimit) -> Result<Option<Vec<u8>>> {
    let Some((mut file, size)) = open_regular(path, || open_nonblocking(path), limit)? else {
        return Ok(None);
    };
    if size > limit.max_bytes as u64 {
        bail!(too_large(path.display(), limit));
    }
    read_limited(&mut file, size, limit, |_| false, path.display()).map(Some)
}

/// Reads a stream (standard input) to its end, at most `limit.max_bytes`;
/// `name` names it in errors.
pub fn read_stream(
    input: &mut impl Read,
    limit: ReadLimit,
    name: impl fmt::Display,
) -> Result<Vec<u8>> {
    read_limited(input, 0, limit, |_| false, name)
}

/// The size sysfs gives every attribute.
fn page_size() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|size| u64::try_from(size).ok())
        .unwrap_or(4096)
}

/// Opens `path` for reading without blocking: a FIFO nobody writes to
/// cannot hold the open.
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

/// Opens `path` with `open` (without blocking), and keeps it, with the
/// size the file system reports, only if it is a regular file.
fn open_regular(
    path: &Path,
    open: impl FnOnce() -> std::io::Result<File>,
    limit: ReadLimit,
) -> Result<Option<(File, u64)>> {
    #[cfg(test)]
    trace::record(path);
    let context = || format!("reading {}", path.display());
    let not_a_file = |kind| NotAFile {
        path: path.to_path_buf(),
        kind,
        expected: limit.expected,
        fix: None,
    };
    let file = match open() {
        Ok(file) => file,
        Err(e) if is_absent(&e) => return Ok(None),
        Err(e) => {
            // A socket cannot be opened at all (ENXIO): say what it is. Looked
            // up only on this path, so a good file costs no extra call.
            if let Ok(meta) = fs::metadata(path) {
                if !meta.is_file() && !meta.is_dir() {
                    return Err(not_a_file(kind_of(meta.file_type())).into());
                }
            }
            return Err(e).with_context(context);
        }
    };
    let meta = file.metadata().with_context(context)?;
    if !meta.is_file() {
        return Err(not_a_file(kind_of(meta.file_type())).into());
    }
    Ok(Some((file, meta.len())))
}

/// The read loop: a doubling buffer, up to one byte past the limit.
///
/// `size` is what `fstat` said of the file, 0 for a stream. A regular file
/// is at its end once its size is read, and a sysfs attribute (which says
/// it is a page) when a read returns less than asked: the kernel hands an
/// attribute's whole text to the first read. Either way the one read of a
/// small attribute is all, without a second read to see the end. A short
/// read of anything else (a network or FUSE file) is not its end. procfs
/// files say 0, and their `seq_file` may return less than asked before
/// the end: those, and streams, end only with a read of nothing.
///
/// The buffer is zeroed once, where it grows, and each read goes after
/// what is already there: a pipe handing out 64 KiB a read costs as much
/// as a file read in one, linear in what is read, never the whole buffer
/// zeroed again for each read.
fn read_limited(
    input: &mut impl Read,
    size: u64,
    limit: ReadLimit,
    is_complete: impl Fn(&[u8]) -> bool,
    name: impl fmt::Display,
) -> Result<Vec<u8>> {
    /// Enough for nearly every attribute (a mask of 1024 CPUs is 288 bytes)
    /// in one read, and small enough for the allocator's fast path: a
    /// 256-CPU probe reads hundreds of files.
    const FIRST_READ: usize = 1024;
    let mut bytes = Vec::new();
    // How much of `bytes` holds what was read; the rest is zeroed room.
    let mut filled = 0;
    loop {
        // Room for as much again as is there (doubling), up to one byte
        // past the limit: that byte says "too large". Only the new room is
        // zeroed.
        let room = filled.max(FIRST_READ).min(limit.max_bytes + 1 - filled);
        if bytes.len() < filled + room {
            bytes.resize(filled + room, 0);
        }
        let want = bytes.len() - filled;
        let got = loop {
            match input.read(&mut bytes[filled..]) {
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                got => break got.with_context(|| format!("reading {name}"))?,
            }
        };
        filled += got;
        if filled > limit.max_bytes {
            bail!(too_large(name, limit));
        }
        let at_end =
            got == 0 || (size > 0 && filled as u64 >= size) || (size == page_size() && got < want);
        if at_end || is_complete(&bytes[..filled]) {
            bytes.truncate(filled);
            return Ok(bytes);
        }
    }
}

/// What a file over `limit` is, for its one-line error.
pub fn too_large(name: impl fmt::Display, limit: ReadLimit) -> String {
    format!(
        "{name}: larger than {}; not {}",
        describe_bytes(limit.max_bytes),
        limit.expected
    )
}

/// `1 MiB`, `16 MiB`, or a byte count when not whole mebibytes.
fn describe_bytes(bytes: usize) -> String {
    if bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// Missing files, and paths through a file where a folder was expected,
/// both mean "not there".
pub fn is_absent(error: &std::io::Error) -> bool {
    matches!(error.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
}

/// Which paths [`read_bounded`] opened on this thread: what the tests that
/// put a FIFO in place of each of them go through, so no path the probe
/// reads is left out of them.
#[cfg(test)]
pub(crate) mod trace {
    use std::cell::RefCell;
    use std::path::{Path, PathBuf};

    thread_local! {
        static OPENED: RefCell<Option<Vec<PathBuf>>> = const { RefCell::new(None) };
    }

    /// Runs `work`, returning the paths it opened, in order, each once.
    pub(crate) fn opened_by<R>(work: impl FnOnce() -> R) -> (R, Vec<PathBuf>) {
        OPENED.with(|opened| *opened.borrow_mut() = Some(Vec::new()));
        let result = work();
        let mut paths = OPENED.with(|opened| opened.borrow_mut().take().unwrap_or_default());
        let mut seen = std::collections::HashSet::new();
        paths.retain(|path| seen.insert(path.clone()));
        (result, paths)
    }

    pub(super) fn record(path: &Path) {
        OPENED.with(|opened| {
            if let Some(paths) = opened.borrow_mut().as_mut() {
                paths.push(path.to_path_buf());
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST_LIMIT: ReadLimit = ReadLimit {
        max_bytes: 9_999,
        expected: "a test file",
    };

    #[test]
    fn reads_stop_at_the_limit_and_when_complete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        fs::write(&path, vec![b'1'; 10_000]).unwrap();
        let error = read_bounded(&path, TEST_LIMIT, |_| false).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("big: larger than 9999 bytes; not a test file"),
            "{error:#}"
        );
        // Read whole, a file is refused from its size: this one is a sparse
        // GiB, never read.
        let huge = dir.path().join("huge");
        File::create(&huge).unwrap().set_len(1 << 30).unwrap();
        let error = read_whole(&huge, TEST_LIMIT).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("huge: larger than 9999 bytes; not a test file")
        );
        let error = read_stream(&mut &[b'1'; 10_000][..], TEST_LIMIT, "standard input");
        assert_eq!(
            error.unwrap_err().to_string(),
            "standard input: larger than 9999 bytes; not a test file"
        );
        let limit = ReadLimit {
            max_bytes: 10_000,
            ..TEST_LIMIT
        };
        let whole = read_bounded(&path, limit, |_| false).unwrap().unwrap();
        assert_eq!(whole.len(), 10_000);
        let first = read_bounded(&path, limit, |bytes| !bytes.is_empty()).unwrap();
        assert_eq!(first.unwrap().len(), 1024, "one read, then complete");
        assert_eq!(
            read_bounded(&dir.path().join("none"), limit, |_| false).unwrap(),
            None
        );
        assert_eq!(describe_bytes(1 << 20), "1 MiB");
    }

    /// A reader handing out at most `chunk` bytes a read, counting reads.
    struct Trickle {
        bytes: Vec<u8>,
        at: usize,
        chunk: usize,
        reads: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.reads += 1;
            let n = buf.len().min(self.chunk).min(self.bytes.len() - self.at);
            buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    /// A sysfs attribute (which says it is a page) is read in one read when
    /// that read comes short, a regular file once its size is read; one
    /// without a size (procfs, whose `seq_file` hands out a record at a
    /// time) is read until a read returns nothing.
    #[test]
    fn a_short_read_ends_only_a_file_with_a_size() {
        let trickle = |bytes: &[u8], chunk| Trickle {
            bytes: bytes.to_vec(),
            at: 0,
            chunk,
            reads: 0,
        };
        let mut attribute = trickle(b"0-511\n", usize::MAX);
        let read = read_limited(
            &mut attribute,
            page_size(),
            TEST_LIMIT,
            |_| false,
            "attribute",
        );
        assert_eq!(read.unwrap(), b"0-511\n");
        assert_eq!(attribute.reads, 1);
        let content = vec![b'x'; 2500];
        let mut procfs = trickle(&content, 100);
        let read = read_limited(&mut procfs, 0, TEST_LIMIT, |_| false, "cpuinfo");
        assert_eq!(read.unwrap(), content);
        assert_eq!(procfs.reads, 26, "25 records, then the end");
        // A file larger than the first read still reads whole, in one
        // read more than its size asks when reads come short.
        let mut large = trickle(&content, usize::MAX);
        let read = read_limited(&mut large, 2500, TEST_LIMIT, |_| false, "large");
        assert_eq!(read.unwrap(), content);
        let mut fuse = trickle(&content, 100);
        let read = read_limited(&mut fuse, 2500, TEST_LIMIT, |_| false, "network file");
        assert_eq!(read.unwrap(), content, "a short read is not the end");
        assert_eq!(fuse.reads, 25);
    }

    /// A reader that writes past what it hands out (as `Read` allows), and
    /// counts the zero bytes it was offered: each is one the loop zeroed.
    struct Scribbler {
        left: usize,
        chunk: usize,
        zeroed: usize,
    }

    impl Read for Scribbler {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.zeroed += buf.iter().filter(|b| **b == 0).count();
            let n = buf.len().min(self.chunk).min(self.left);
            buf.fill(b'x');
            self.left -= n;
            Ok(n)
        }
    }

    /// A stream read in small pieces (a pipe) zeroes its buffer once, where
    /// it grows, not again for each read: reading is linear in its length,
    /// and a pipe over the limit is refused as soon as a file is.
    #[test]
    fn a_stream_in_small_reads_is_zeroed_once() {
        let limit = ReadLimit {
            max_bytes: 1 << 20,
            ..TEST_LIMIT
        };
        let mut pipe = Scribbler {
            left: 1 << 20,
            chunk: 4096,
            zeroed: 0,
        };
        let read = read_stream(&mut pipe, limit, "standard input").unwrap();
        assert_eq!(read.len(), 1 << 20);
        assert!(read.iter().all(|b| *b == b'x'));
        assert!(
            pipe.zeroed <= 2 << 20,
            "{} bytes zeroed to read 1 MiB",
            pipe.zeroed
        );
        let mut over = Scribbler {
            left: usize::MAX,
            chunk: 4096,
            zeroed: 0,
        };
        let error = read_stream(&mut over, limit, "standard input").unwrap_err();
        assert_eq!(
            error.to_string(),
            "standard input: larger than 1 MiB; not a test file"
        );
        assert!(over.zeroed <= 2 << 20, "{} bytes zeroed", over.zeroed);
    }

    /// Standard input may be a pipe: read to its end, in as many reads as
    /// the writer makes.
    #[test]
    fn a_stream_is_read_to_its_end() {
        let (reader, writer) = nix::unistd::pipe().unwrap();
        let content: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let written = content.clone();
        let writing = std::thread::spawn(move || {
            let mut writer = File::from(writer);
            for chunk in written.chunks(7_000) {
                std::io::Write::write_all(&mut writer, chunk).unwrap();
            }
        });
        let limit = ReadLimit {
            max_bytes: 200_000,
            ..TEST_LIMIT
        };
        let read = read_stream(&mut File::from(reader), limit, "standard input").unwrap();
        writing.join().unwrap();
        assert_eq!(read, content);
    }

    /// Each kind of thing that is not a regular file is refused by name,
    /// at once: a FIFO with no writer would otherwise hold the open forever.
    #[test]
    fn what_is_not_a_regular_file_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        for (path, kind) in [(&fifo, "FIFO"), (&socket, "socket")] {
            let (sender, receiver) = std::sync::mpsc::channel();
            let read = path.clone();
            std::thread::spawn(move || {
                let _ = sender.send(read_bounded(&read, TEST_LIMIT, |_| false));
            });
            let result = receiver
                .recv_timeout(std::time::Duration::from_secs(5))
                .unwrap_or_else(|_| panic!("reading a {kind} blocked"));
            let error = result.unwrap_err();
            assert_eq!(
                error.downcast_ref::<NotAFile>().map(|e| e.kind),
                Some(kind),
                "{error:#}"
            );
            assert_eq!(
                error.to_string(),
                format!("{}: is a {kind}, not a test file", path.display())
            );
        }
        let error = read_bounded(dir.path(), TEST_LIMIT, |_| false).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with(": is a folder, not a test file")
        );
    }
}
