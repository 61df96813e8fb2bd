//! The work a measurement runs: port-bound kernels behind a small trait.
//!
//! A kernel processes a buffer that stays in L1d, `passes` times over, and
//! returns a checksum (so nothing is optimised away, and so workers given the
//! same input can be compared). Its instruction count per byte is fixed by
//! construction: the inner loop is inline assembly, so neither the data, the
//! compiler's mood nor the buffer's alignment can change it. That is what makes
//! "instructions per byte identical in every arm" a real check that the
//! counters were on the workers.
//!
//! A kernel also watches a [`StopFlag`] while it runs, so a long repetition
//! ends soon after a stop request instead of running its course; for `mul`
//! that costs no instruction at all (see [`StopFlag`]).

use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{anyhow, bail};

use super::memory::buffer::{BASE_PAGE_BYTES, Buffer, Pages};
use super::mempolicy::{NodeMask, PageNodes, bind_range, page_nodes};

/// A request to stop that a kernel's inner loop sees after every block, at no
/// cost in instructions.
///
/// The flag is the amount the loop subtracts from its count of blocks still to
/// do after each block: [`StopFlag::RUNNING_STEP`] (1) until a stop is
/// requested, [`StopFlag::STOPPED_STEP`] (`i64::MAX`) after. The loop's own
/// counter instruction reads it (`sub blocks, [step]` in place of
/// `dec blocks`) and its own branch (`jg`, loop while blocks remain) ends the
/// loop once the count goes to zero or below. A request therefore takes
/// effect within one block, and the documented instruction mix stays exact:
/// no load, test or branch is added anywhere.
///
/// Requesting is one lock-free atomic store, so a signal handler may do it.
pub struct StopFlag {
    step: AtomicU64,
}

impl StopFlag {
    /// The step while running: one block done, one fewer to go.
    pub const RUNNING_STEP: u64 = 1;
    /// The step once stopped: at least any count of blocks a run can have
    /// (a run's bytes fit in a u64: at most 2^57 of `mul`'s 128-byte blocks),
    /// so the next subtraction ends the loop.
    pub const STOPPED_STEP: u64 = i64::MAX as u64;

    /// A flag no stop was requested on.
    pub const fn new() -> StopFlag {
        StopFlag {
            step: AtomicU64::new(StopFlag::RUNNING_STEP),
        }
    }

    /// Requests the stop; it cannot be withdrawn.
    pub fn request(&self) {
        self.step.store(StopFlag::STOPPED_STEP, Ordering::SeqCst);
    }

    /// Whether [`StopFlag::request`] was called.
    pub fn is_requested(&self) -> bool {
        self.step.load(Ordering::SeqCst) != StopFlag::RUNNING_STEP
    }

    /// The word a kernel's loop subtracts from its block count (see the type's
    /// documentation); read it with plain aligned 8-byte loads.
    pub fn step(&self) -> &AtomicU64 {
        &self.step
    }
}

impl Default for StopFlag {
    fn default() -> StopFlag {
        StopFlag::new()
    }
}

/// A deterministic byte-processing kernel.
pub trait Kernel: Send + Sync {
    /// Short name used on the command line and in saved results.
    fn name(&self) -> &'static str;
    /// One line: what the kernel does and what it is bound on.
    fn description(&self) -> &'static str;
    /// Instructions retired per byte, exact by construction (loop control
    /// included), so a counted value can be compared against it.
    fn instructions_per_byte(&self) -> f64;
    /// The cycles per byte one core needs when the bounding execution port is
    /// saturated: the best a worker can do with a core to itself.
    fn port_bound_cycles_per_byte(&self) -> f64;
    /// Whether `run` accepts a buffer of this many bytes; the error says what
    /// sizes it needs.
    fn check_buffer(&self, buffer_bytes: usize) -> anyhow::Result<()>;
    /// Processes `buffer` `passes` times and returns the checksum, or `None`
    /// if `stop` was requested before the work was done (the partial work's
    /// checksum means nothing, so it is not returned). A kernel sees a request
    /// within a fixed, documented amount of work, and watching for it must not
    /// change its instructions per byte.
    ///
    /// # Panics
    /// If `check_buffer(buffer.len())` fails: the loop has no tail, so any
    /// other length would read outside the buffer. Also if `passes` times
    /// the buffer's length is more bytes than a u64 counts (`Engine::new`
    /// refuses such a workload).
    fn run(&self, buffer: &[u8], passes: u64, stop: &StopFlag) -> Option<u64>;
}

/// The kernels `kernel_by_name` knows, in the order help texts list them.
pub const KERNEL_NAMES: &[&str] = &["mul"];

/// Looks a kernel up by its command-line name.
pub fn kernel_by_name(name: &str) -> anyhow::Result<Box<dyn Kernel>> {
    match name {
        "mul" => Ok(Box::new(MulKernel)),
        _ => bail!(
            "unknown kernel '{name}': known kernels are {}",
            KERNEL_NAMES.join(", ")
        ),
    }
}

/// The input every worker processes: 64-bit words from a fixed-seed
/// splitmix64 sequence with the low bit set. Odd factors keep the `mul`
/// kernel's products odd, so its accumulators never collapse to zero and the
/// checksum stays meaningful. Stored as words so loads are 8-byte aligned:
/// on the heap, or (`run --membind`) in a mapping of its own whose pages
/// are bound to nodes before they are first touched.
pub struct InputBuffer {
    storage: Storage,
}

enum Storage {
    Heap(Vec<u64>),
    /// The mapping and how many words of it are the input.
    Bound(Buffer, usize),
}

impl InputBuffer {
    /// `bytes` rounded down to whole 64-bit words, identical on every call.
    pub fn new(bytes: usize) -> InputBuffer {
        let mut words = vec![0; bytes / 8];
        fill(&mut words);
        InputBuffer {
            storage: Storage::Heap(words),
        }
    }

    /// The same input in a fresh mapping bound to `nodes` (`mbind`
    /// MPOL_BIND before the first touch, so every page is allocated there
    /// or not at all), filled by the calling thread; also where the kernel
    /// says its pages are (`move_pages`), to check that the binding held.
    pub fn bound(bytes: usize, nodes: &NodeMask) -> anyhow::Result<(InputBuffer, PageNodes)> {
        let words = bytes / 8;
        let buffer = Buffer::map((words * 8).max(1), Pages::Base)?;
        bind_range(buffer.as_ptr() as usize, buffer.len(), nodes)
            .map_err(|e| anyhow!("binding a worker's buffer (mbind): {e}"))?;
        // SAFETY: the mapping holds at least `words` aligned words, and
        // only this thread uses it until the buffer is returned.
        fill(unsafe { std::slice::from_raw_parts_mut(buffer.as_ptr().cast::<u64>(), words) });
        let pages = page_nodes(buffer.as_ptr(), buffer.len(), BASE_PAGE_BYTES)
            .map_err(|e| anyhow!("locating a worker's buffer (move_pages): {e}"))?;
        let storage = Storage::Bound(buffer, words);
        Ok((InputBuffer { storage }, pages))
    }

    pub fn as_bytes(&self) -> &[u8] {
        let words: &[u64] = match &self.storage {
            Storage::Heap(words) => words,
            // SAFETY: the mapping holds `words` initialised words (filled
            // by `bound`) and lives as long as `self`.
            Storage::Bound(buffer, words) => unsafe {
                std::slice::from_raw_parts(buffer.as_ptr().cast::<u64>(), *words)
            },
        };
        // SAFETY: u8 has alignment 1 and every bit pattern is a valid u8; the
        // length covers exactly the words' bytes and borrows `self`.
        unsafe {
            std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), std::mem::size_of_val(words))
        }
    }
}

/// The fixed-seed sequence, written into `words`.
fn fill(words: &mut [u64]) {
    let mut state: u64 = 0x5EED_0000_B1A5_0001;
    for word in words {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        *word = (z ^ (z >> 31)) | 1;
    }
}

/// `mul`: bound on the integer-multiply port.
///
/// Per 64-bit word the inner loop loads the word once and multiplies it into
/// five independent accumulators. Five chains are needed because a 64-bit
/// multiply has a latency of several cycles but a throughput of one per
/// cycle: one dependent chain would be latency-bound and leave the port idle,
/// while five chains give each one 5 cycles per word to hide its latency, so
/// the multiplier port is the only limit. The loop is unrolled over a 128-byte
/// block (16 words) with a masked wrap-around offset, so passes over the
/// buffer follow each other with no per-pass code. Each architecture has its
/// own inline assembly, with a fixed instruction mix:
///
/// **x86_64**, per 128-byte block (`imul r64, r64`, two-operand form):
///
/// | instruction             | count | per byte |
/// |-------------------------|-------|----------|
/// | `mov r64, [mem]`        | 16    | 0.125    |
/// | `imul r64, r64`         | 80    | 0.625    |
/// | `add`, `and`, `sub r64, [mem]`, `jg` | 4 | 0.03125 |
/// | total                   | 100   | 0.78125  |
///
/// **aarch64**, per 128-byte block (`mul xd, xn, xm`; aarch64 has no
/// memory operands, so the block's address and the stop step each take an
/// instruction of their own):
///
/// | instruction                    | count | per byte  |
/// |--------------------------------|-------|-----------|
/// | `add xptr, xbase, xpos`        | 1     | 0.0078125 |
/// | `ldr x, [xptr, #off]`          | 16    | 0.125     |
/// | `mul x, x, x`                  | 80    | 0.625     |
/// | `add`, `and`, `ldr` (step), `subs`, `b.gt` | 5 | 0.0390625 |
/// | total                          | 102   | 0.796875  |
///
/// The loop's counter takes the [`StopFlag`]'s step (`sub blocks, [step]`
/// on x86_64, `ldr` + `subs` on aarch64) in place of a decrement, so the
/// kernel sees a stop request after at most one more block (128 bytes: 80
/// cycles at the port bound, well under a microsecond even under QEMU's
/// emulation) with not one instruction added. The stop check's granularity
/// is that block, and the counts above are exact whether or not a stop is
/// ever requested (a stopped run returns no sample to count).
///
/// Port bound on one core: 80 multiplies per 128 bytes on a core that
/// retires one 64-bit multiply per cycle take at least 80 cycles: 0.625
/// cycles per byte. On x86_64 `imul r64` issues on one port only (port 1 on
/// Intel since Sandy Bridge, one multiplier ALU on AMD Zen). On aarch64 the
/// named core is Arm Neoverse N1 (AWS Graviton2, Ampere Altra): its Software
/// Optimization Guide puts 64-bit `MUL` on the single M pipeline, one per
/// cycle, latency 2, so five chains keep it full. Cores with two multiply
/// pipelines (Neoverse V1/V2, Cortex-X) can go to half that. Two hardware
/// threads of one core share the port, so each should see about twice the
/// cost; two separate cores should not slow each other at all.
///
/// The buffer must be a power of two of at least 128 bytes (the wrap-around is
/// an `and` with `len - 1`); 16 KiB per worker stays in L1d even with both
/// siblings of a core running.
pub struct MulKernel;

/// Bytes per unrolled block of `MulKernel`'s loop, which is also how much work
/// it does between two looks at its [`StopFlag`].
const MUL_BLOCK_BYTES: usize = 128;

/// Multiplies per block: five per 64-bit word.
const MUL_BLOCK_MULTIPLIES: u32 = 80;

/// Instructions per block, loop control included (see [`MulKernel`]).
#[cfg(target_arch = "x86_64")]
const MUL_BLOCK_INSTRUCTIONS: u32 = 100;
/// Instructions per block, loop control included (see [`MulKernel`]).
#[cfg(target_arch = "aarch64")]
const MUL_BLOCK_INSTRUCTIONS: u32 = 102;

/// The accumulators' starting values: odd and distinct (odd times odd stays
/// odd, so no chain ever reaches zero).
const MUL_START: [u64; 5] = [
    0x9E37_79B9_7F4A_7C15,
    0xC2B2_AE3D_27D4_EB4F,
    0x1656_67B1_9E37_79F9,
    0x85EB_CA77_C2B2_AE63,
    0x27D4_EB2F_1656_67C5,
];

/// One word of `MulKernel`'s block: a load at `$offset` within the block, then
/// one multiply into each of the five accumulators.
#[cfg(target_arch = "x86_64")]
macro_rules! multiply_word {
    ($offset:literal) => {
        concat!(
            "mov {word}, qword ptr [{base} + {pos} + ",
            $offset,
            "]\n",
            "imul {a0}, {word}\n",
            "imul {a1}, {word}\n",
            "imul {a2}, {word}\n",
            "imul {a3}, {word}\n",
            "imul {a4}, {word}\n",
        )
    };
}

/// One word of `MulKernel`'s block: a load at `$offset` from the block's
/// address, then one multiply into each of the five accumulators.
#[cfg(target_arch = "aarch64")]
macro_rules! multiply_word {
    ($offset:literal) => {
        concat!(
            "ldr {word}, [{ptr}, #",
            $offset,
            "]\n",
            "mul {a0}, {a0}, {word}\n",
            "mul {a1}, {a1}, {word}\n",
            "mul {a2}, {a2}, {word}\n",
            "mul {a3}, {a3}, {word}\n",
            "mul {a4}, {a4}, {word}\n",
        )
    };
}

/// The 16 words of one 128-byte block, each through [`multiply_word!`]: the
/// unrolled body both architectures' loops share.
macro_rules! block_of_words {
    () => {
        concat!(
            multiply_word!("0"),
            multiply_word!("8"),
            multiply_word!("16"),
            multiply_word!("24"),
            multiply_word!("32"),
            multiply_word!("40"),
            multiply_word!("48"),
            multiply_word!("56"),
            multiply_word!("64"),
            multiply_word!("72"),
            multiply_word!("80"),
            multiply_word!("88"),
            multiply_word!("96"),
            multiply_word!("104"),
            multiply_word!("112"),
            multiply_word!("120"),
        )
    };
}

/// Runs `blocks` > 0 blocks of the `mul` loop over `buffer` into `acc` and
/// returns the block count left: 0 when all ran, negative once `step` was
/// set to stop.
///
/// # Safety
/// `buffer.len()` must be a power of two and a multiple of
/// [`MUL_BLOCK_BYTES`], and `blocks` in 1..=2^57.
#[cfg(target_arch = "x86_64")]
unsafe fn mul_blocks(buffer: &[u8], blocks: i64, step: &AtomicU64, acc: &mut [u64; 5]) -> i64 {
    let mut blocks_left = blocks;
    // SAFETY: `pos` stays in 0..len (masked with len - 1, len a power of two
    // and a multiple of the block), so every load `base + pos + 0..120` reads
    // 8 bytes inside `buffer`; `step` points at a live, aligned AtomicU64
    // (x86_64's aligned 8-byte loads are atomic). The loop runs while
    // `blocks` > 0 and subtracts 1 or i64::MAX from a value at most 2^57, so
    // the signed `jg` never sees an overflow.
    unsafe {
        std::arch::asm!(
            "2:",
            block_of_words!(),
            "add {pos}, 128",
            "and {pos}, {mask}",
            "sub {blocks}, qword ptr [{step}]",
            "jg 2b",
            base = in(reg) buffer.as_ptr(),
            mask = in(reg) buffer.len() - 1,
            step = in(reg) step.as_ptr(),
            pos = inout(reg) 0usize => _,
            blocks = inout(reg) blocks_left,
            word = out(reg) _,
            a0 = inout(reg) acc[0],
            a1 = inout(reg) acc[1],
            a2 = inout(reg) acc[2],
            a3 = inout(reg) acc[3],
            a4 = inout(reg) acc[4],
            options(nostack, readonly),
        );
    }
    blocks_left
}

/// Runs `blocks` > 0 blocks of the `mul` loop over `buffer` into `acc` and
/// returns the block count left: 0 when all ran, negative once `step` was
/// set to stop.
///
/// # Safety
/// `buffer.len()` must be a power of two and a multiple of
/// [`MUL_BLOCK_BYTES`], and `blocks` in 1..=2^57.
#[cfg(target_arch = "aarch64")]
unsafe fn mul_blocks(buffer: &[u8], blocks: i64, step: &AtomicU64, acc: &mut [u64; 5]) -> i64 {
    let mut blocks_left = blocks;
    // SAFETY: `pos` stays in 0..len (masked with len - 1, len a power of two
    // and a multiple of the block), so every load `ptr + 0..120` reads 8
    // bytes inside `buffer`; `step` points at a live, aligned AtomicU64
    // (aarch64's aligned 8-byte loads are single-copy atomic). The loop runs
    // while `blocks` > 0 and subtracts 1 or i64::MAX from a value at most
    // 2^57, so the signed `b.gt` never sees an overflow.
    unsafe {
        std::arch::asm!(
            "2:",
            "add {ptr}, {base}, {pos}",
            block_of_words!(),
            "add {pos}, {pos}, #128",
            "and {pos}, {pos}, {mask}",
            "ldr {stepped}, [{step}]",
            "subs {blocks}, {blocks}, {stepped}",
            "b.gt 2b",
            base = in(reg) buffer.as_ptr(),
            mask = in(reg) buffer.len() - 1,
            step = in(reg) step.as_ptr(),
            pos = inout(reg) 0usize => _,
            ptr = out(reg) _,
            stepped = out(reg) _,
            blocks = inout(reg) blocks_left,
            word = out(reg) _,
            a0 = inout(reg) acc[0],
            a1 = inout(reg) acc[1],
            a2 = inout(reg) acc[2],
            a3 = inout(reg) acc[3],
            a4 = inout(reg) acc[4],
            options(nostack, readonly),
        );
    }
    blocks_left
}

impl Kernel for MulKernel {
    fn name(&self) -> &'static str {
        "mul"
    }

    fn description(&self) -> &'static str {
        "five independent 64-bit multiply chains per word: bound on the integer-multiply port"
    }

    fn instructions_per_byte(&self) -> f64 {
        f64::from(MUL_BLOCK_INSTRUCTIONS) / MUL_BLOCK_BYTES as f64
    }

    fn port_bound_cycles_per_byte(&self) -> f64 {
        f64::from(MUL_BLOCK_MULTIPLIES) / MUL_BLOCK_BYTES as f64
    }

    fn check_buffer(&self, buffer_bytes: usize) -> anyhow::Result<()> {
        if buffer_bytes < MUL_BLOCK_BYTES || !buffer_bytes.is_power_of_two() {
            bail!(
                "buffer of {buffer_bytes} bytes: the mul kernel needs a power of two of at least {MUL_BLOCK_BYTES} bytes"
            );
        }
        Ok(())
    }

    fn run(&self, buffer: &[u8], passes: u64, stop: &StopFlag) -> Option<u64> {
        if let Err(error) = self.check_buffer(buffer.len()) {
            panic!("{error}");
        }
        if passes.checked_mul(buffer.len() as u64).is_none() {
            panic!(
                "{passes} passes over {} bytes: more bytes than a u64 counts",
                buffer.len()
            );
        }
        // At most u64::MAX / 128 < 2^57: the step's i64::MAX always ends the
        // loop, and the count never overflows as a signed number.
        let total_blocks = passes * (buffer.len() / MUL_BLOCK_BYTES) as u64;
        let mut acc = MUL_START;
        let mut blocks_left = 0;
        if total_blocks > 0 {
            // SAFETY: check_buffer held, and total_blocks is in 1..2^57.
            blocks_left = unsafe { mul_blocks(buffer, total_blocks as i64, stop.step(), &mut acc) };
        }
        // Exactly zero only if every subtraction was the running step of 1.
        (blocks_left == 0).then(|| acc.iter().fold(0u64, |sum, &a| sum.rotate_left(13) ^ a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same five chains in plain Rust: the reference the assembly must
    /// agree with.
    fn reference_checksum(buffer: &[u8], passes: u64) -> u64 {
        let mut acc = MUL_START;
        for _ in 0..passes {
            for chunk in buffer.chunks_exact(8) {
                let mut bytes = [0u8; 8];
                bytes.copy_from_slice(chunk);
                let word = u64::from_ne_bytes(bytes);
                for a in &mut acc {
                    *a = a.wrapping_mul(word);
                }
            }
        }
        acc.iter().fold(0, |sum, &a| sum.rotate_left(13) ^ a)
    }

    #[test]
    fn assembly_matches_the_reference_loop() {
        let input = InputBuffer::new(1024);
        let never = StopFlag::new();
        for passes in [0, 1, 3] {
            assert_eq!(
                MulKernel.run(input.as_bytes(), passes, &never),
                Some(reference_checksum(input.as_bytes(), passes)),
                "passes = {passes}"
            );
        }
    }

    #[test]
    fn a_bound_buffer_holds_the_same_input_on_its_node() {
        let heap = InputBuffer::new(16 * 1024 + 5);
        let (bound, pages) = InputBuffer::bound(16 * 1024 + 5, &NodeMask::of(&[0])).unwrap();
        assert_eq!(bound.as_bytes(), heap.as_bytes());
        assert_eq!(bound.as_bytes().len(), 16 * 1024);
        // Node 0 is where a kernel without other nodes puts everything.
        assert!(pages.all_on(0), "{pages:?}");
        assert_eq!(pages.pages, 4);
    }

    #[test]
    fn a_stop_requested_before_the_run_returns_no_checksum() {
        let input = InputBuffer::new(1024);
        let stop = StopFlag::new();
        assert!(!stop.is_requested());
        stop.request();
        assert!(stop.is_requested());
        assert_eq!(MulKernel.run(input.as_bytes(), 1000, &stop), None);
        // One block is one step: even a single block reports the stop.
        let one_block = InputBuffer::new(MUL_BLOCK_BYTES);
        assert_eq!(MulKernel.run(one_block.as_bytes(), 1, &stop), None);
    }

    #[test]
    fn a_stop_ends_a_run_of_hours() {
        let input = InputBuffer::new(16 * 1024);
        let stop = StopFlag::new();
        // Hours of work: only the stop can end this run.
        let passes = u64::MAX / (16 * 1024);
        std::thread::scope(|scope| {
            let run = scope.spawn(|| MulKernel.run(input.as_bytes(), passes, &stop));
            stop.request();
            assert_eq!(run.join().ok(), Some(None));
        });
    }

    #[test]
    fn input_is_deterministic_and_odd() {
        let a = InputBuffer::new(256);
        let b = InputBuffer::new(256);
        assert_eq!(a.as_bytes(), b.as_bytes());
        assert_eq!(a.as_bytes().len(), 256);
        assert!(a.as_bytes().chunks(8).all(|w| w[0] % 2 == 1));
    }

    #[test]
    fn buffer_sizes_are_checked() {
        assert!(MulKernel.check_buffer(16 * 1024).is_ok());
        assert!(MulKernel.check_buffer(128).is_ok());
        let error = MulKernel.check_buffer(1000).unwrap_err().to_string();
        assert!(error.contains("1000 bytes"), "{error}");
        assert!(MulKernel.check_buffer(64).is_err());
    }

    #[test]
    fn counts_follow_the_documented_mix() {
        let documented = if cfg!(target_arch = "x86_64") {
            0.78125
        } else {
            0.796875
        };
        assert_eq!(MulKernel.instructions_per_byte(), documented);
        assert_eq!(MulKernel.port_bound_cycles_per_byte(), 0.625);
    }

    #[test]
    fn unknown_kernel_names_the_known_ones() {
        let error = kernel_by_name("div").err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some("unknown kernel 'div': known kernels are mul")
        );
        assert_eq!(kernel_by_name("mul").map(|k| k.name()).ok(), Some("mul"));
    }
}
