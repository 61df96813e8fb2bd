//! The measurement's own costs: the kernel's throughput on one core, what
//! a worker's counter group costs per repetition (enable, disable, one group
//! read), to report as a share of a repetition, and what `hybrid` pays to
//! hand out one item (next to an item's millisecond of work).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use placement_study::measure::counters::{WorkerCounters, probe_hardware, probe_software};
use placement_study::measure::items::ItemPool;
use placement_study::measure::kernel::{InputBuffer, StopFlag};
use placement_study::measure::kernel_by_name;
use placement_study::plan::hybrid::{Scheme, SharedWork};

/// Per worker, as the engine runs it: 16 KiB stays in L1d.
const BUFFER_BYTES: usize = 16 * 1024;
/// 1 MiB per iteration: long enough to hide the call, short enough to sample.
const PASSES: u64 = 64;

fn kernel_throughput(c: &mut Criterion) {
    let Ok(kernel) = kernel_by_name("mul") else {
        eprintln!("skipped: no mul kernel on this architecture");
        return;
    };
    let input = InputBuffer::new(BUFFER_BYTES);
    // As the engine runs it, watching a flag; nothing ever requests a stop.
    let never_stopped = StopFlag::new();
    let mut group = c.benchmark_group("kernel");
    group.throughput(Throughput::Bytes(BUFFER_BYTES as u64 * PASSES));
    group.bench_function("mul, 16 KiB x 64 passes, one core", |b| {
        b.iter(|| kernel.run(black_box(input.as_bytes()), PASSES, &never_stopped))
    });
    group.finish();
}

fn counter_overhead(c: &mut Criterion) {
    let software = match probe_software() {
        Ok(software) => software,
        Err(error) => {
            eprintln!("skipped: {error:#}");
            return;
        }
    };
    let hardware = probe_hardware(&software).events;
    let events = if hardware.is_some() {
        "hardware + software"
    } else {
        "software only"
    };
    let mut counters = match WorkerCounters::open(hardware, &software) {
        Ok(counters) => counters,
        Err(error) => {
            eprintln!("skipped: {error:#}");
            return;
        }
    };
    c.bench_function(
        &format!("counter group enable+disable+read ({events})"),
        |b| {
            b.iter(|| {
                counters
                    .enable()
                    .and_then(|()| counters.disable())
                    .and_then(|()| counters.read())
            })
        },
    );
}

/// Draining a pool of 1000 items on one worker: under stealing, the last
/// half is stolen from the other worker's range a piece at a time.
fn item_hand_out(c: &mut Criterion) {
    const ITEMS: u64 = 1000;
    let mut group = c.benchmark_group("hybrid items");
    group.throughput(Throughput::Elements(ITEMS));
    for scheme in [Scheme::StaticShares, Scheme::WorkStealing] {
        let work = SharedWork {
            items: ITEMS,
            scheme,
        };
        group.bench_function(format!("take, {}, 2 ranges", scheme.label()), |b| {
            b.iter(|| {
                let pool = ItemPool::new(&work, 2);
                std::iter::from_fn(|| pool.take(0)).count()
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    targets = kernel_throughput, counter_overhead, item_hand_out
}
criterion_main!(benches);
