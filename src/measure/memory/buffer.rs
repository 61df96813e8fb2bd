//! An anonymous mapping for the chase and the streams: aligned to a huge
//! page, advised for huge pages (the TLB-friendly variant) or against
//! them, first touched by the calling thread.

use anyhow::{Context, Result, bail};
use nix::sys::mman::{MapFlags, MmapAdvise, ProtFlags, madvise, mmap_anonymous, munmap};
use serde::{Deserialize, Serialize};
use std::ffi::c_void;
use std::num::NonZeroUsize;
use std::ops::Range;
use std::ptr::NonNull;

/// The huge page the buffer is aligned to (x86_64's and arm64's 4 KiB
/// granule's PMD size).
pub const HUGE_PAGE_BYTES: usize = 2 << 20;
/// The base page the touch and the location check step by.
pub const BASE_PAGE_BYTES: usize = 4096;

/// Which pages the buffer asks for.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Pages {
    /// `madvise(MADV_HUGEPAGE)`: transparent huge pages where the kernel
    /// grants them, so the chase pays for the caches, not the TLB.
    Huge,
    /// `madvise(MADV_NOHUGEPAGE)`: base pages, so the chase pays for TLB
    /// misses too.
    Base,
}

/// A private anonymous mapping of at least `len` bytes.
pub struct Buffer {
    mapping: NonNull<c_void>,
    mapped: usize,
    start: *mut u8,
    len: usize,
    /// The advice was taken (a kernel without THP refuses MADV_HUGEPAGE).
    pub advised: bool,
}

// SAFETY: the buffer owns its mapping; threads that share it only read it
// (or write disjoint lines before any reader starts).
unsafe impl Send for Buffer {}
// SAFETY: as above.
unsafe impl Sync for Buffer {}

impl Buffer {
    /// Maps `len` bytes (rounded up to a base page), aligned to a huge page.
    pub fn map(len: usize, pages: Pages) -> Result<Buffer> {
        if len == 0 {
            bail!("a memory buffer of 0 bytes");
        }
        let len = len.div_ceil(BASE_PAGE_BYTES) * BASE_PAGE_BYTES;
        let mapped = len + HUGE_PAGE_BYTES;
        let size = NonZeroUsize::new(mapped).context("buffer size")?;
        // SAFETY: a new private anonymous mapping aliases nothing.
        let mapping = unsafe {
            mmap_anonymous(
                None,
                size,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_PRIVATE | MapFlags::MAP_NORESERVE,
            )
        }
        .with_context(|| format!("mapping a buffer of {len} bytes"))?;
        let offset = mapping.as_ptr().cast::<u8>().align_offset(HUGE_PAGE_BYTES);
        let start = mapping.as_ptr().cast::<u8>().wrapping_add(offset);
        let advice = match pages {
            Pages::Huge => MmapAdvise::MADV_HUGEPAGE,
            Pages::Base => MmapAdvise::MADV_NOHUGEPAGE,
        };
        let start_nn = NonNull::new(start.cast::<c_void>()).context("aligned buffer")?;
        // SAFETY: the range lies within the mapping made above.
        let advised = unsafe { madvise(start_nn, len, advice) }.is_ok();
        Ok(Buffer {
            mapping,
            mapped,
            start,
            len,
            advised,
        })
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.start
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Writes one byte of every base page: the first touch that allocates
    /// each page, on the node of the calling thread's policy.
    pub fn touch(&self) {
        self.touch_range(0..self.len);
    }

    /// [`Buffer::touch`] for the pages that start in `range` (bytes).
    pub fn touch_range(&self, range: Range<usize>) {
        let first = range.start.next_multiple_of(BASE_PAGE_BYTES);
        for offset in (first..range.end.min(self.len)).step_by(BASE_PAGE_BYTES) {
            // SAFETY: within the mapping, which is writable.
            unsafe { self.start.add(offset).write_volatile(1) };
        }
    }

    /// Bytes of the buffer backed by transparent huge pages, from the
    /// mapping's `AnonHugePages` in `/proc/self/smaps`; `None` where it
    /// cannot be read.
    pub fn huge_bytes(&self) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mine = self.start as usize;
        let mut in_mine = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((from, to)) = range.split_once('-') {
                    if let (Ok(from), Ok(to)) = (
                        usize::from_str_radix(from, 16),
                        usize::from_str_radix(to, 16),
                    ) {
                        in_mine = (from..to).contains(&mine);
                        continue;
                    }
                }
            }
            if in_mine {
                if let Some(value) = line.strip_prefix("AnonHugePages:") {
                    let kib = value.trim().trim_end_matches("kB").trim();
                    return kib.parse::<u64>().ok().map(|kib| kib * 1024);
                }
            }
        }
        None
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `map` and is unmapped once.
        let _ = unsafe { munmap(self.mapping, self.mapped) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_is_aligned_touched_and_unmapped() {
        let buffer = Buffer::map(3 * HUGE_PAGE_BYTES + 5, Pages::Huge).unwrap();
        assert_eq!(buffer.as_ptr() as usize % HUGE_PAGE_BYTES, 0);
        assert_eq!(buffer.len(), 3 * HUGE_PAGE_BYTES + BASE_PAGE_BYTES);
        buffer.touch();
        assert!(buffer.huge_bytes().is_some());
        assert!(Buffer::map(0, Pages::Base).is_err());
    }
}
