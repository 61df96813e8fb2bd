//! Reading a saved document back, bounded: whatever the path turns out to
//! be (a file, a FIFO, `/dev/zero`, stdin), at most the cap is read and
//! held.

use anyhow::{Context, Result, bail};
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Largest saved result document read (documented in the man page): far
/// above a real run's few megabytes, far below what would strain memory.
pub const JSON_INPUT_CAP: u64 = 64 * 1024 * 1024;

/// How much one read(2) asks for.
const CHUNK: usize = 64 * 1024;

/// Reads at most `cap` bytes from `path` (`-` = standard input); more is a
/// one-line error naming the file and the cap.
///
/// Works on regular files, FIFOs and devices alike: a character device such
/// as `/dev/zero` stops at the cap, and the buffer never holds more than
/// `cap + 1` bytes (the one byte that proves the input is too long). A
/// regular file over the cap is refused from its size, without reading it.
/// A folder is a one-line error.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        return read_bounded(&mut io::stdin().lock(), cap, 0, "standard input");
    }
    let mut file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let meta = file
        .metadata()
        .with_context(|| format!("{}: cannot check it", path.display()))?;
    if meta.is_dir() {
        bail!(
            "{}: is a folder, not a saved result; name a .json file in it",
            path.display()
        );
    }
    let known_len = if meta.is_file() { meta.len() } else { 0 };
    if known_len > cap {
        bail!(too_long(path.display(), cap));
    }
    read_bounded(&mut file, cap, known_len, path.display())
}

/// Reads `input` to its end, a chunk at a time, into a buffer grown by
/// doubling but never past `cap + 1` bytes. `expected` (the file size when
/// known) sizes the buffer up front, so a regular file is read without
/// regrowing.
fn read_bounded(
    input: &mut impl Read,
    cap: u64,
    expected: u64,
    name: impl fmt::Display,
) -> Result<Vec<u8>> {
    let limit = usize::try_from(cap.saturating_add(1)).unwrap_or(usize::MAX);
    let mut buf: Vec<u8> = Vec::new();
    buf.reserve_exact(usize::try_from(expected).unwrap_or(usize::MAX).min(limit));
    let mut chunk = vec![0u8; CHUNK];
    while buf.len() < limit {
        let room = (limit - buf.len()).min(CHUNK);
        let n = match input.read(&mut chunk[..room]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).with_context(|| format!("{name}: cannot read")),
        };
        if buf.capacity() - buf.len() < n {
            let grown = buf
                .capacity()
                .saturating_mul(2)
                .max(buf.len() + n)
                .min(limit);
            // Exact, so growth never allocates past the limit.
            buf.reserve_exact(grown - buf.len());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    if buf.len() as u64 > cap {
        bail!(too_long(name, cap));
    }
    Ok(buf)
}

fn too_long(name: impl fmt::Display, cap: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    let size = if cap >= MIB && cap % MIB == 0 {
        format!("{} MiB ({cap} bytes)", cap / MIB)
    } else {
        format!("{cap} bytes")
    };
    format!(
        "{name}: longer than {size}, the most read of a saved result; is it a file written by \
         placement-study?"
    )
}
