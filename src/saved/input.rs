//! Reading a saved document (or a fleet input) back, bounded, through the
//! one reader of [`crate::input`]: a named path must be a regular file, and
//! `-` reads standard input, whatever is piped there.

use crate::input::{FOLDER, NotAFile, ReadLimit, SOCKET, read_stream, read_whole};
use anyhow::{Result, anyhow};
use std::io;
use std::path::Path;

/// Largest saved result document read (documented in the man page): far
/// above a real run's few megabytes, far below what would strain memory.
pub const JSON_INPUT_CAP: u64 = 64 * 1024 * 1024;

/// Reads at most `cap` bytes from `path` (`-` = standard input); more is a
/// one-line error naming the file and the cap.
///
/// A named path must be a regular file: a FIFO or device is refused
/// without being read (a FIFO would wait for a writer forever), saying how
/// to read it as standard input; a socket or folder is refused too. A
/// regular file over the cap is refused from its size, without reading it.
/// Standard input, a pipe or a redirected device alike, stops at the cap:
/// the buffer never holds more than `cap + 1` bytes.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>> {
    read_named(path, cap, "a saved result")
}

/// Like [`read_capped`], for an input that is `expected` (what its errors
/// say it should have been).
pub fn read_named(path: &Path, cap: u64, expected: &'static str) -> Result<Vec<u8>> {
    let limit = ReadLimit {
        max_bytes: usize::try_from(cap).unwrap_or(usize::MAX - 1),
        expected,
    };
    if path.as_os_str() == "-" {
        return read_stream(&mut io::stdin().lock(), limit, "standard input");
    }
    match read_whole(path, limit) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(anyhow!("{}: no such file; check the path", path.display())),
        Err(error) => match error.downcast::<NotAFile>() {
            Ok(not_a_file) => {
                let fix = match not_a_file.kind {
                    FOLDER => Some("name a .json file in it".to_string()),
                    // The one thing that cannot be redirected either.
                    SOCKET => None,
                    _ => Some(format!(
                        "to read it all the same, give - and redirect it: - < {}",
                        path.display()
                    )),
                };
                Err(NotAFile { fix, ..not_a_file }.into())
            }
            Err(error) => Err(error),
        },
    }
}
