//! The memory study's probes: the cache ladder (a dependent-load chase on
//! one pinned CPU over buffers of growing size) and the NUMA matrix (the
//! chase and a read stream from the CPUs of node i on a buffer placed on
//! node j, its pages' nodes checked).
//!
//! Every time is CLOCK_MONOTONIC ([`CLOCK`], through [`Instant`]). A
//! sample is one timed run of many loads (or one stream of a whole
//! buffer), so the clock's resolution and cost vanish in it; the judge
//! takes a low percentile of the samples, as interference only adds time.
//!
//! * The ladder maps its largest buffer once (first touched by the pinned
//!   thread, so on its node) and builds a chain over the first `size`
//!   bytes for each size. Building writes every line, which is also the
//!   warm-up: a buffer within a cache is in it when sampling starts, and
//!   one beyond it is in it as far as the cache holds it (the steady state
//!   of a random chase).
//! * A matrix column is one buffer on node j: bound there by `mbind` where
//!   the kernel allows it, else first touched by a thread on node j; the
//!   kernel is then asked where its pages are (`move_pages`). A column
//!   whose pages are not all on node j is recorded with where they are,
//!   and its cells are not measured.

pub mod buffer;
pub mod chase;

use crate::affinity::{current_cpu, pin_current_thread};
use crate::cpuset::CpuSet;
use crate::measure::mempolicy::{NodeMask, PageNodes, bind_range, page_nodes};
use crate::measure::stop::stop_requested;
use crate::plan::memory::{LadderPlan, NumaPlan};
use anyhow::{Result, anyhow, bail};
use buffer::{BASE_PAGE_BYTES, Buffer, HUGE_PAGE_BYTES, Pages};
use chase::Chain;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::sync::Barrier;
use std::time::Instant;

/// The clock every time here is read on.
pub const CLOCK: &str = "CLOCK_MONOTONIC";

/// At most this many pages of a column are located: a larger buffer is
/// sampled at an even stride (a 2 GiB buffer every 8th base page).
pub const MAX_PAGES_LOCATED: usize = 1 << 16;

/// How the ladder samples each size.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LadderOptions {
    /// Samples per size.
    pub samples: usize,
    /// How long one sample aims to last, in ns (its loads are sized from
    /// the size before's latency).
    pub sample_ns: u64,
    pub pages: Pages,
}

impl Default for LadderOptions {
    fn default() -> LadderOptions {
        LadderOptions {
            samples: 15,
            sample_ns: 200_000,
            pages: Pages::Huge,
        }
    }
}

/// One size of the ladder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LadderPoint {
    pub size_bytes: u64,
    pub loads_per_sample: u64,
    /// Each sample's time divided by its loads, in sample order.
    pub ns_per_load: Vec<f64>,
}

/// The measured ladder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ladder {
    pub cpu: u32,
    pub line_bytes: u32,
    pub pages: Pages,
    /// The kernel took the pages advice.
    pub advised: bool,
    /// Bytes of the buffer huge pages backed, where smaps says.
    pub huge_bytes: Option<u64>,
    pub clock: String,
    pub points: Vec<LadderPoint>,
    /// The translation ladder: each size a span of base pages, one line
    /// of each chased in a random cycle (empty in files saved before it).
    #[serde(default)]
    pub translation: Vec<LadderPoint>,
    /// The thread was on its CPU before and after.
    pub pinned: bool,
    /// Every size was measured (a stop request ends it early).
    pub complete: bool,
    pub seconds: f64,
}

/// Measures `plan`'s ladder on its CPU, in a thread of its own.
pub fn measure_ladder(plan: &LadderPlan, options: &LadderOptions) -> Result<Ladder> {
    let buffer = Buffer::map(plan.top_bytes() as usize, options.pages)?;
    measure_ladder_in(plan, options, &buffer)
}

/// [`measure_ladder`] on a `buffer` the caller mapped (at least the plan's
/// top size, not yet touched), so that another chase can be run on the
/// very same pages afterwards: in a VM whose host backs its memory with
/// base pages, which host pages a buffer gets changes its latency at a
/// size by tens of percent (the L2 is indexed by physical address).
pub fn measure_ladder_in(
    plan: &LadderPlan,
    options: &LadderOptions,
    buffer: &Buffer,
) -> Result<Ladder> {
    let started = Instant::now();
    if buffer.len() < plan.top_bytes() as usize {
        bail!(
            "a buffer of {} bytes for a ladder up to {} bytes",
            buffer.len(),
            plan.top_bytes()
        );
    }
    std::thread::scope(|scope| {
        scope
            .spawn(|| ladder_on_cpu(plan, options, buffer, started))
            .join()
            .map_err(|_| anyhow!("the ladder's thread on CPU {} panicked", plan.cpu))?
    })
}

/// Chains of at least this many lines (16 MiB of 64-byte lines) are linked
/// by every builder CPU at once. Below it a chain takes about a millisecond
/// to link, and the chasing CPU links it alone, so its lines start in that
/// CPU's own caches.
const PARALLEL_LINES: usize = 1 << 18;

fn ladder_on_cpu(
    plan: &LadderPlan,
    options: &LadderOptions,
    buffer: &Buffer,
    started: Instant,
) -> Result<Ladder> {
    pin_current_thread(plan.cpu)?;
    let mut pinned = current_cpu()? == plan.cpu;
    let line = plan.line_bytes as usize;
    let builders = match plan.builders.is_empty() {
        true => CpuSet::from_cpus([plan.cpu]),
        false => plan.builders.clone(),
    };
    // The first touch, by CPUs of the chasing CPU's node: the pages land
    // there, and zeroing them (most of the ladder's time on a VM, whose
    // host backs each page at its first touch) is shared out.
    on_each(&builders, |part, parts| {
        buffer.touch_range(share(buffer.len(), HUGE_PAGE_BYTES, part, parts));
    })?;
    let mut points = Vec::with_capacity(plan.sizes.len());
    let mut estimate_ns = 1.0;
    let mut complete = true;
    for &size in &plan.sizes {
        if stop_requested() {
            complete = false;
            break;
        }
        let lines = (size as usize / line).max(1);
        let chain = Chain::new(lines, line, line, size);
        if lines >= PARALLEL_LINES && builders.len() > 1 {
            on_each(&builders, |part, parts| {
                // SAFETY: the buffer holds `top_bytes` ≥ `size` bytes,
                // aligned to a huge page; each builder links its own share
                // of the lines, and nothing chases until all are done.
                unsafe { chain.link(buffer.as_ptr(), share(lines, 1, part, parts)) };
            })?;
        } else {
            // SAFETY: as above, this thread alone linking every line.
            unsafe { chain.link(buffer.as_ptr(), 0..lines) };
        }
        let first = chain.first(buffer.as_ptr());
        let (point, _) = sample_chase(first, size, estimate_ns, options.samples, options.sample_ns);
        estimate_ns = point.ns_per_load.iter().copied().fold(f64::MAX, f64::min);
        points.push(point);
    }
    // The translation ladder, on the same pages: one line per base page,
    // so the lines it keeps in the caches are a 64th of its span (4 KiB
    // pages, 64-byte lines) while the TLB must map all of it. A step here
    // at a span where the cache ladder steps too is the TLB's reach (or
    // the page walk's), not a cache.
    let mut translation = Vec::new();
    let mut estimate_ns = 1.0;
    for &span in plan
        .sizes
        .iter()
        .filter(|&&s| s >= 2 * BASE_PAGE_BYTES as u64)
    {
        if stop_requested() || !complete {
            complete = false;
            break;
        }
        let pages = span as usize / BASE_PAGE_BYTES;
        let chain = Chain::new(pages, BASE_PAGE_BYTES, line, span);
        // SAFETY: `pages` base pages of the buffer, which holds `top_bytes`
        // ≥ `span` bytes; only this thread uses it now.
        unsafe { chain.link(buffer.as_ptr(), 0..pages) };
        let first = chain.first(buffer.as_ptr());
        let (point, _) = sample_chase(first, span, estimate_ns, options.samples, options.sample_ns);
        estimate_ns = point.ns_per_load.iter().copied().fold(f64::MAX, f64::min);
        translation.push(point);
    }
    pinned &= current_cpu()? == plan.cpu;
    Ok(Ladder {
        cpu: plan.cpu,
        line_bytes: plan.line_bytes,
        pages: options.pages,
        advised: buffer.advised,
        huge_bytes: buffer.huge_bytes(),
        clock: CLOCK.to_string(),
        points,
        translation,
        pinned,
        complete,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Runs `work(part, parts)` on a thread pinned to each of `cpus` (`part`
/// its place among the `parts` CPUs), and waits for every one.
fn on_each(cpus: &CpuSet, work: impl Fn(usize, usize) + Sync) -> Result<()> {
    let cpus: Vec<u32> = cpus.iter().collect();
    let parts = cpus.len();
    std::thread::scope(|scope| {
        let threads: Vec<_> = cpus
            .iter()
            .enumerate()
            .map(|(part, &cpu)| {
                let work = &work;
                scope.spawn(move || -> Result<()> {
                    pin_current_thread(cpu)?;
                    work(part, parts);
                    Ok(())
                })
            })
            .collect();
        for (thread, cpu) in threads.into_iter().zip(&cpus) {
            thread
                .join()
                .map_err(|_| anyhow!("the memory study's builder on CPU {cpu} panicked"))??;
        }
        Ok(())
    })
}

/// Share `part` of `parts` of `0..len`, cut at multiples of `unit`.
fn share(len: usize, unit: usize, part: usize, parts: usize) -> Range<usize> {
    let units = len.div_ceil(unit);
    let at = |part: usize| (units * part / parts * unit).min(len);
    at(part)..at(part + 1)
}

/// `samples` timed chases from `first`, each of the loads `sample_ns`
/// takes at `estimate_ns` a load (at least 64, a multiple of 8); also the
/// line where the chase stopped.
fn sample_chase(
    first: *const u8,
    size_bytes: u64,
    estimate_ns: f64,
    samples: usize,
    sample_ns: u64,
) -> (LadderPoint, *const u8) {
    let loads = ((sample_ns as f64 / estimate_ns.max(0.05)) as u64).clamp(64, 1 << 26) / 8 * 8;
    let mut at = first;
    let ns_per_load = (0..samples)
        .map(|_| {
            let start = Instant::now();
            // SAFETY: `first` is a line of a chain whose buffer is mapped.
            at = unsafe { chase::chase(at, loads) };
            start.elapsed().as_nanos() as f64 / loads as f64
        })
        .collect();
    let point = LadderPoint {
        size_bytes,
        loads_per_sample: loads,
        ns_per_load,
    };
    (point, at)
}

/// How the matrix samples each cell.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NumaOptions {
    /// Chase samples per cell.
    pub latency_samples: usize,
    /// How long one chase sample aims to last, in ns.
    pub sample_ns: u64,
    /// Streams of the whole buffer per cell.
    pub bandwidth_samples: usize,
    pub pages: Pages,
}

impl Default for NumaOptions {
    fn default() -> NumaOptions {
        NumaOptions {
            latency_samples: 15,
            sample_ns: 200_000,
            bandwidth_samples: 5,
            pages: Pages::Huge,
        }
    }
}

/// How a column's buffer was put on its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PlacedBy {
    /// `mbind(MPOL_BIND)` before the first touch.
    Mbind,
    /// The first touch of a thread pinned on the node (`mbind` refused).
    FirstTouch,
    /// Neither: `mbind` refused and the node has no CPU to touch from.
    Unplaced,
}

/// One column: the buffer on one memory node, and where its pages are.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Column {
    pub memory_node: u32,
    pub placed_by: PlacedBy,
    /// Why `mbind` was refused, where it was.
    pub mbind_error: Option<String>,
    /// Where the kernel says the pages are (every `stride_bytes`-th byte).
    pub pages: PageNodes,
    pub stride_bytes: u64,
    /// Every located page is on `memory_node`: only then are its cells
    /// measured.
    pub landed: bool,
}

/// One cell: the chase from a CPU of `cpu_node` and the stream of its
/// threads, on `memory_node`'s buffer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cell {
    pub cpu_node: u32,
    pub memory_node: u32,
    pub cpu: u32,
    pub threads: CpuSet,
    /// The published distance from `cpu_node` to `memory_node`.
    pub distance: Option<u32>,
    pub loads_per_sample: u64,
    /// Empty where the column's buffer did not land.
    pub ns_per_load: Vec<f64>,
    pub bytes_per_sample: u64,
    /// Each stream's bytes over its time; empty where it did not land.
    pub bytes_per_second: Vec<f64>,
    /// Every thread was on its CPU before and after.
    pub pinned: bool,
}

/// The measured matrix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NumaMatrix {
    pub buffer_bytes: u64,
    pub line_bytes: u32,
    pub pages: Pages,
    pub clock: String,
    pub columns: Vec<Column>,
    /// Row by row (CPU node), then column.
    pub cells: Vec<Cell>,
    pub complete: bool,
    pub seconds: f64,
}

/// Measures every cell of `plan`, a column (one buffer) at a time.
pub fn measure_numa(plan: &NumaPlan, line_bytes: u32, options: &NumaOptions) -> Result<NumaMatrix> {
    let started = Instant::now();
    let mut columns = Vec::new();
    let mut cells = Vec::new();
    let mut complete = true;
    for &node in &plan.memory_nodes {
        if stop_requested() {
            complete = false;
            break;
        }
        let column_cells: Vec<_> = plan
            .cells
            .iter()
            .filter(|c| c.memory_node == node)
            .collect();
        // The thread that touches: on the node where it has a CPU.
        let local = column_cells.iter().find(|c| c.cpu_node == node);
        let toucher = local.or(column_cells.first()).map(|c| c.cpu);
        let (buffer, column) = place_column(
            node,
            plan.buffer_bytes,
            toucher,
            local.is_some(),
            options.pages,
        )?;
        let lines = buffer.len() / line_bytes as usize;
        // SAFETY: the buffer holds `lines` lines and nothing else uses it.
        let first = unsafe {
            chase::build_chain(buffer.as_ptr(), lines, line_bytes as usize, u64::from(node))
        };
        let mut at = first as usize;
        for planned in column_cells {
            let mut cell = Cell {
                cpu_node: planned.cpu_node,
                memory_node: node,
                cpu: planned.cpu,
                threads: planned.threads.clone(),
                distance: planned.distance,
                loads_per_sample: 0,
                ns_per_load: Vec::new(),
                bytes_per_sample: buffer.len() as u64,
                bytes_per_second: Vec::new(),
                pinned: true,
            };
            if column.landed {
                let ((point, end), pinned) = on_cpu(planned.cpu, || {
                    // A cold start (≈100 ns a load) sizes the samples.
                    let (point, end) = sample_chase(
                        at as *const u8,
                        0,
                        100.0,
                        options.latency_samples,
                        options.sample_ns,
                    );
                    (point, end as usize)
                })?;
                at = end;
                cell.loads_per_sample = point.loads_per_sample;
                cell.ns_per_load = point.ns_per_load;
                let (rates, stream_pinned) =
                    stream(&buffer, &planned.threads, options.bandwidth_samples)?;
                cell.bytes_per_second = rates;
                cell.pinned = pinned && stream_pinned;
            }
            cells.push(cell);
        }
        columns.push(column);
    }
    cells.sort_by_key(|c| (c.cpu_node, c.memory_node));
    Ok(NumaMatrix {
        buffer_bytes: plan.buffer_bytes,
        line_bytes,
        pages: options.pages,
        clock: CLOCK.to_string(),
        columns,
        cells,
        complete,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Runs `work` in a thread pinned to `cpu`; also says whether it stayed.
fn on_cpu<T: Send>(cpu: u32, work: impl FnOnce() -> T + Send) -> Result<(T, bool)> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| -> Result<(T, bool)> {
                pin_current_thread(cpu)?;
                let before = current_cpu()? == cpu;
                let done = work();
                Ok((done, before && current_cpu()? == cpu))
            })
            .join()
            .map_err(|_| anyhow!("the thread on CPU {cpu} panicked"))?
    })
}

/// Maps a buffer for `node`, binds it there (or lets a thread on the node
/// touch it first), touches it from `toucher`, and locates its pages.
fn place_column(
    node: u32,
    bytes: u64,
    toucher: Option<u32>,
    toucher_is_local: bool,
    pages: Pages,
) -> Result<(Buffer, Column)> {
    let buffer = Buffer::map(bytes as usize, pages)?;
    let bound = bind_range(
        buffer.as_ptr() as usize,
        buffer.len(),
        &NodeMask::of(&[node]),
    );
    let placed_by = match (&bound, toucher_is_local) {
        (Ok(()), _) => PlacedBy::Mbind,
        (Err(_), true) => PlacedBy::FirstTouch,
        (Err(_), false) => PlacedBy::Unplaced,
    };
    if placed_by != PlacedBy::Unplaced {
        match toucher {
            Some(cpu) => on_cpu(cpu, || buffer.touch())?.0,
            None => buffer.touch(),
        }
    }
    let stride = (buffer.len() / MAX_PAGES_LOCATED)
        .div_ceil(BASE_PAGE_BYTES)
        .max(1)
        * BASE_PAGE_BYTES;
    let located = page_nodes(buffer.as_ptr(), buffer.len(), stride)
        .map_err(|e| anyhow!("locating the pages of node {node}'s buffer: move_pages: {e}"))?;
    let column = Column {
        memory_node: node,
        placed_by,
        mbind_error: bound.err().map(|e| e.to_string()),
        landed: placed_by != PlacedBy::Unplaced && located.all_on(node),
        pages: located,
        stride_bytes: stride as u64,
    };
    Ok((buffer, column))
}

/// `samples` streams of the whole buffer, split evenly among threads
/// pinned to `cpus`; each sample's bytes over the time from the first
/// thread's start to the last one's end. Also says whether every thread
/// stayed on its CPU.
fn stream(buffer: &Buffer, cpus: &CpuSet, samples: usize) -> Result<(Vec<f64>, bool)> {
    let words = buffer.len() / 8;
    // SAFETY: the buffer's bytes are initialised (touched, chained) and
    // only read while the slice lives.
    let all: &[u64] = unsafe { std::slice::from_raw_parts(buffer.as_ptr().cast::<u64>(), words) };
    let share = words.div_ceil(cpus.len().max(1));
    let mut rates = Vec::with_capacity(samples);
    let mut pinned = true;
    for _ in 0..samples {
        let barrier = Barrier::new(cpus.len());
        let spans = std::thread::scope(|scope| {
            let handles: Vec<_> = cpus
                .iter()
                .zip(all.chunks(share))
                .map(|(cpu, slice)| {
                    let barrier = &barrier;
                    scope.spawn(move || -> Result<(Instant, Instant, bool)> {
                        pin_current_thread(cpu)?;
                        let before = current_cpu()? == cpu;
                        barrier.wait();
                        let start = Instant::now();
                        std::hint::black_box(sum(slice));
                        let end = Instant::now();
                        Ok((start, end, before && current_cpu()? == cpu))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .map_err(|_| anyhow!("a streaming thread panicked"))?
                })
                .collect::<Result<Vec<_>>>()
        })?;
        let start = spans.iter().map(|s| s.0).min();
        let end = spans.iter().map(|s| s.1).max();
        pinned &= spans.iter().all(|s| s.2);
        if let (Some(start), Some(end)) = (start, end) {
            let seconds = end.duration_since(start).as_secs_f64();
            rates.push(buffer.len() as f64 / seconds.max(1e-9));
        }
    }
    Ok((rates, pinned))
}

/// The words' wrapping sum, in eight lanes so that it vectorises: reading
/// is the cost, not adding.
fn sum(words: &[u64]) -> u64 {
    let mut lanes = [0u64; 8];
    let mut chunks = words.chunks_exact(8);
    for chunk in &mut chunks {
        for (lane, word) in lanes.iter_mut().zip(chunk) {
            *lane = lane.wrapping_add(*word);
        }
    }
    let rest = chunks
        .remainder()
        .iter()
        .fold(0u64, |a, w| a.wrapping_add(*w));
    lanes.iter().fold(rest, |a, l| a.wrapping_add(*l))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_wrap_in_lanes() {
        let words: Vec<u64> = (1..=19).collect();
        assert_eq!(sum(&words), 190);
        assert_eq!(sum(&[u64::MAX, 2]), 1);
    }
}
