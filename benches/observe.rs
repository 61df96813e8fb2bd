//! How closely `observe --kernel mul --threads K --seconds S` keeps its
//! time as K grows far past the CPUs: the recording's length over S, for
//! 64, 256 and 1024 threads (the man page promises within 100 ms at 1024
//! threads on an otherwise idle machine). Needs perf_event_open for
//! software events (paranoid 2 or lower, or root).
//!
//! Run: `cargo bench --bench observe` (RUNS=N repeats each count, default 5).

use std::time::Duration;

use placement_study::measure::recorder::{ObserveTarget, PerfRecorder, Record, RecordOptions};

const SECONDS: Duration = Duration::from_secs(1);

fn main() {
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(5);
    let cpus: Vec<u32> =
        (0..std::thread::available_parallelism().map_or(1, |n| n.get()) as u32).collect();
    println!("observe --kernel mul --seconds 1 on CPUs {cpus:?}: the recording's overshoot, ms");
    println!("threads  median     min     max  runs");
    for threads in [64, 256, 1024] {
        let mut overshoot_ms: Vec<f64> = (0..runs)
            .filter_map(|_| {
                let options = RecordOptions {
                    target: ObserveTarget::Kernel {
                        kernel: "mul".into(),
                        threads,
                    },
                    duration: Some(SECONDS),
                    cpus: cpus.clone(),
                    core_pmus: Vec::new(),
                    cycles: false,
                    leave_running: false,
                };
                match PerfRecorder.record(&options, &mut |_| {}) {
                    Ok(recording) => Some(
                        (recording.end_ns - recording.start_ns) as f64 / 1e6
                            - SECONDS.as_secs_f64() * 1e3,
                    ),
                    Err(error) => {
                        eprintln!("skipped: {error:#}");
                        None
                    }
                }
            })
            .collect();
        if overshoot_ms.is_empty() {
            return;
        }
        overshoot_ms.sort_by(f64::total_cmp);
        println!(
            "{threads:>7} {:>7.1} {:>7.1} {:>7.1} {:>5}",
            overshoot_ms[overshoot_ms.len() / 2],
            overshoot_ms[0],
            overshoot_ms[overshoot_ms.len() - 1],
            overshoot_ms.len()
        );
    }
}
