//! The dependent-load chase: a random cyclic permutation of a buffer's
//! lines, each line holding the address of the next, so that every load
//! waits for the one before and no prefetcher can guess the next line.
//!
//! The permutation is a keyed three-round Feistel network on the next
//! power of two above the line count (its halves a bit apart in width
//! where the bits are odd), walked until it lands below it (cycle
//! walking, fewer than two steps on average): a bijection computed per
//! index, so building the chain needs no shuffled index array as large as
//! the buffer's line count. Visiting the lines π(0), π(1), …, π(n − 1) and
//! back to π(0) is one cycle through every line.

use std::ops::Range;

/// The keyed permutation of `0..n`.
struct Permutation {
    n: u64,
    bits: u32,
    keys: [u64; 3],
}

impl Permutation {
    fn new(n: u64, seed: u64) -> Permutation {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let mut state = seed;
        let keys = [0; 3].map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix(state) | 1
        });
        Permutation { n, bits, keys }
    }

    /// One pass of the network over `bits` bits: the left part (the high
    /// `bits - bits / 2`) and the right part trade places each round,
    /// the one moved left keyed into the other.
    fn forward(&self, x: u64) -> u64 {
        let (mut low_bits, mut high_bits) = (self.bits / 2, self.bits - self.bits / 2);
        let (mut left, mut right) = (x >> low_bits, x & ((1 << low_bits) - 1));
        for key in self.keys {
            let keyed = round(right, key) & ((1 << high_bits) - 1);
            (left, right) = (right, left ^ keyed);
            (low_bits, high_bits) = (high_bits, low_bits);
        }
        (left << low_bits) | right
    }

    /// [`Permutation::forward`] undone, round by round in reverse.
    fn backward(&self, x: u64) -> u64 {
        // After three rounds the parts have traded widths an odd number
        // of times: the right part is `bits - bits / 2` wide.
        let (mut low_bits, mut high_bits) = (self.bits - self.bits / 2, self.bits / 2);
        let (mut left, mut right) = (x >> low_bits, x & ((1 << low_bits) - 1));
        for key in self.keys.iter().rev() {
            (low_bits, high_bits) = (high_bits, low_bits);
            let keyed = round(left, *key) & ((1 << high_bits) - 1);
            (left, right) = (right ^ keyed, left);
        }
        (left << low_bits) | right
    }

    /// The line at position `index` of the cycle.
    fn at(&self, index: u64) -> u64 {
        let mut x = self.forward(index);
        while x >= self.n {
            x = self.forward(x);
        }
        x
    }

    /// The position of `line` in the cycle: [`Permutation::at`] undone.
    fn index_of(&self, line: u64) -> u64 {
        let mut x = self.backward(line);
        while x >= self.n {
            x = self.backward(x);
        }
        x
    }
}

/// A Feistel round's function: one multiply, its high bits folded down.
fn round(part: u64, key: u64) -> u64 {
    let product = (part ^ key).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    product ^ (product >> 29)
}

/// splitmix64's finaliser, for the keys.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One random cycle through `count` elements of a buffer: which follows
/// which. An element is a line: every line of the buffer where
/// `unit_bytes` is the line size (the cache ladder), or one line at a
/// position picked per unit where a unit is a page (the translation
/// ladder: one line per page, the lines spread over the cache's sets).
/// Its elements are written in address order (each finds its successor
/// through the inverse permutation), a stream the memory system takes at
/// full speed, where writing them in cycle order would pay a miss for
/// each; disjoint ranges can be written by different threads.
pub struct Chain {
    permutation: Permutation,
    unit_bytes: usize,
    line_bytes: usize,
    /// The lines a unit holds, one of which is its element.
    lines_per_unit: u64,
    seed: u64,
}

impl Chain {
    pub fn new(count: usize, unit_bytes: usize, line_bytes: usize, seed: u64) -> Chain {
        Chain {
            permutation: Permutation::new(count as u64, seed),
            unit_bytes,
            line_bytes,
            lines_per_unit: (unit_bytes / line_bytes).max(1) as u64,
            seed,
        }
    }

    /// Where element `index` is in the buffer at `base`.
    fn element(&self, base: *mut u8, index: u64) -> *mut u8 {
        let line = mix(index ^ self.seed) % self.lines_per_unit;
        base.wrapping_add(index as usize * self.unit_bytes + line as usize * self.line_bytes)
    }

    /// Writes the elements numbered `range` (each the address of its
    /// successor) in the buffer at `base`.
    ///
    /// # Safety
    /// `base` must point to at least `count * unit_bytes` writable bytes,
    /// aligned to `usize`, whose elements in `range` nothing else uses
    /// while they are written.
    pub unsafe fn link(&self, base: *mut u8, range: Range<usize>) {
        let n = self.permutation.n;
        for index in range {
            let index = index as u64;
            let position = self.permutation.index_of(index);
            let next = self.permutation.at((position + 1) % n);
            // SAFETY: an element of the buffer (the caller's promise).
            unsafe {
                self.element(base, index)
                    .cast::<usize>()
                    .write(self.element(base, next) as usize)
            };
        }
    }

    /// The cycle's first element in the buffer at `base`.
    pub fn first(&self, base: *mut u8) -> *const u8 {
        self.element(base, self.permutation.at(0))
    }
}

/// Links the first `lines` lines of `line_bytes` at `base` into one random
/// [`Chain`], from this thread; returns its first line.
///
/// # Safety
/// `base` must point to at least `lines * line_bytes` writable bytes,
/// aligned to `usize`, that nothing else uses while the chain is built.
pub unsafe fn build_chain(base: *mut u8, lines: usize, line_bytes: usize, seed: u64) -> *const u8 {
    let chain = Chain::new(lines, line_bytes, line_bytes, seed);
    // SAFETY: the caller's promise.
    unsafe { chain.link(base, 0..lines) };
    chain.first(base)
}

/// Follows the chain from `start` for `loads` dependent loads (rounded
/// down to a multiple of 8); returns where it stopped.
///
/// # Safety
/// `start` must be a line of a chain built by [`build_chain`] whose buffer
/// is still mapped.
#[inline(never)]
pub unsafe fn chase(start: *const u8, loads: u64) -> *const u8 {
    let mut at = start.cast::<usize>();
    for _ in 0..loads / 8 {
        // SAFETY: every line holds the address of another line of the chain.
        unsafe {
            at = at.read() as *const usize;
            at = at.read() as *const usize;
            at = at.read() as *const usize;
            at = at.read() as *const usize;
            at = at.read() as *const usize;
            at = at.read() as *const usize;
            at = at.read() as *const usize;
            at = at.read() as *const usize;
        }
    }
    std::hint::black_box(at).cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_permutation_is_a_bijection_for_any_count() {
        for n in [1u64, 2, 3, 5, 64, 1000, 4097] {
            let permutation = Permutation::new(n, 7);
            let mut seen = vec![false; n as usize];
            for k in 0..n {
                let at = permutation.at(k);
                assert!(!seen[at as usize], "{n}: {at} twice");
                seen[at as usize] = true;
                assert_eq!(permutation.index_of(at), k, "{n}: the inverse of {k}");
            }
        }
    }

    #[test]
    fn the_chain_is_one_cycle_through_every_line() {
        let (lines, line_bytes) = (1000usize, 64usize);
        let mut memory = vec![0usize; lines * line_bytes / 8];
        let base = memory.as_mut_ptr().cast::<u8>();
        // SAFETY: `memory` holds `lines` lines.
        let first = unsafe { build_chain(base, lines, line_bytes, 1) };
        // Walk it one load at a time.
        let mut visited = vec![false; lines];
        let mut at = first.cast::<usize>();
        for _ in 0..lines {
            let index = (at as usize - base as usize) / line_bytes;
            assert!(
                !visited[index],
                "line {index} twice before the cycle closed"
            );
            visited[index] = true;
            // SAFETY: a line of the chain.
            at = unsafe { at.read() } as *const usize;
        }
        assert_eq!(at.cast::<u8>(), first, "the cycle closes after every line");
        // SAFETY: as above.
        assert_eq!(unsafe { chase(first, lines as u64 * 8) }, first);
    }
}
