//! The memory study's chase against an independent one written here, with
//! none of the crate's code: a Sattolo shuffle (one random cycle), a
//! pointer per 64-byte line, on a huge-page-advised mapping, timed on
//! CLOCK_MONOTONIC on the same CPU. At one size inside each plateau of
//! this machine's ladder (L1, L2, L3, DRAM), the two low percentiles are
//! within 15 %.
//!
//! Timing-sensitive, so ignored by default:
//! `cargo test --release --test tests memory_chase:: -- --ignored --nocapture`.

use placement_study::measure::memory::{LadderOptions, measure_ladder};
use placement_study::plan::memory::LadderPlan;
use std::time::Instant;

const LINE: usize = 64;
const SAMPLES: usize = 15;

/// One size, chased independently: the 10th percentile of ns per load.
fn independent_chase(size: usize, cpu: u32) -> f64 {
    // SAFETY: a CPU mask of one CPU for this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set),
            0
        );
    }
    let huge = 2 << 20;
    // SAFETY: a fresh private anonymous mapping, aligned by hand below.
    let mapping = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size + huge,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(mapping, libc::MAP_FAILED);
    let base = (mapping as usize).next_multiple_of(huge) as *mut u8;
    // SAFETY: the range lies in the mapping.
    unsafe { libc::madvise(base.cast(), size, libc::MADV_HUGEPAGE) };
    let lines = size / LINE;
    // Sattolo's algorithm: a uniformly random single cycle.
    let mut order: Vec<usize> = (0..lines).collect();
    let mut rng = fastrand::Rng::with_seed(41);
    for i in (1..lines).rev() {
        let j = rng.usize(..i);
        order.swap(i, j);
    }
    for (k, &line) in order.iter().enumerate() {
        let next = order[(k + 1) % lines];
        // SAFETY: both are lines of the mapping.
        unsafe {
            base.add(line * LINE)
                .cast::<usize>()
                .write(base.add(next * LINE) as usize)
        };
    }
    drop(order);
    let mut at = base as *const usize;
    // A first pass to find the scale, then samples of about 0.2 ms.
    let probe = 4096;
    let start = Instant::now();
    for _ in 0..probe {
        // SAFETY: every line points at another line of the cycle.
        at = unsafe { at.read() } as *const usize;
    }
    let estimate = start.elapsed().as_nanos() as f64 / probe as f64;
    let loads = ((200_000.0 / estimate) as usize).max(256);
    let mut samples: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..loads {
                // SAFETY: as above.
                at = unsafe { at.read() } as *const usize;
            }
            start.elapsed().as_nanos() as f64 / loads as f64
        })
        .collect();
    std::hint::black_box(at);
    // SAFETY: the mapping made above, unmapped once.
    unsafe { libc::munmap(mapping, size + huge) };
    samples.sort_by(f64::total_cmp);
    samples[(SAMPLES as f64 * 0.1).ceil() as usize - 1]
}

#[test]
#[ignore = "timing-sensitive: run alone, in release"]
fn each_plateau_is_within_15_percent_of_an_independent_chase() {
    // One size well inside each plateau of this machine's ladder (48 KiB
    // L1d, 2 MiB L2, ~16 MiB of effective L3, DRAM).
    let sizes: Vec<u64> = vec![16 << 10, 512 << 10, 8 << 20, 256 << 20];
    let plan = LadderPlan {
        cpu: 0,
        line_bytes: LINE as u32,
        line_published: true,
        sizes: sizes.clone(),
        published: Vec::new(),
    };
    let ladder = measure_ladder(&plan, &LadderOptions::default()).unwrap();
    let mut worst: f64 = 0.0;
    for (point, &size) in ladder.points.iter().zip(&sizes) {
        let mut ours = point.ns_per_load.clone();
        ours.sort_by(f64::total_cmp);
        let ours = ours[(ours.len() as f64 * 0.1).ceil() as usize - 1];
        let theirs = std::thread::spawn(move || independent_chase(size as usize, 0))
            .join()
            .unwrap();
        let off = (ours / theirs - 1.0).abs();
        worst = worst.max(off);
        println!(
            "{:>10} B: measure::memory {ours:7.2} ns, independent {theirs:7.2} ns, {:+.1} %",
            size,
            (ours / theirs - 1.0) * 100.0
        );
    }
    assert!(worst <= 0.15, "a plateau is {:.1} % off", worst * 100.0);
}
