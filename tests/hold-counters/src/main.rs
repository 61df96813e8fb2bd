//! Holds a PMU's counters the way a monitoring agent does, for the guest
//! test of the multiplexing check.
//!
//! `hold-counters N READY_FILE` opens N pinned, CPU-wide `cycles` events on
//! every online CPU (all users, kernel included), enables them, checks that
//! they really count, writes READY_FILE, and holds them until killed. Pinned
//! events outrank every thread's own groups, so while they take all of a
//! PMU's counters no worker group is scheduled: its `time_running` stays
//! below `time_enabled`, which is what `run`'s multiplexing check must catch.
//! On Arm's PMUv3 `cycles` may take the cycle counter or any programmable
//! counter, so N = programmable counters + 1 fills the PMU.
//!
//! Needs root (or `perf_event_paranoid` ≤ 0) for CPU-wide events.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use perf_event::events::Hardware;
use perf_event::{Builder, Counter};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [count, ready_file] = args.as_slice() else {
        bail!("usage: hold-counters N READY_FILE");
    };
    let count: usize = count
        .parse()
        .with_context(|| format!("N: '{count}' is not a number of events"))?;
    let cpus = std::thread::available_parallelism()?.get();
    let mut held: Vec<Counter> = Vec::with_capacity(count * cpus);
    for cpu in 0..cpus {
        for _ in 0..count {
            let mut builder = Builder::new(Hardware::CPU_CYCLES);
            builder.one_cpu(cpu).any_pid().pinned(true).include_kernel();
            let mut counter = builder
                .build()
                .with_context(|| format!("cannot open a pinned cycles event on CPU {cpu}"))?;
            counter.enable()?;
            held.push(counter);
        }
    }
    std::thread::sleep(Duration::from_millis(20));
    for counter in &mut held {
        let data = counter.read_full()?;
        let (Some(enabled), Some(running)) = (data.time_enabled(), data.time_running()) else {
            bail!("the kernel did not report the held events' times");
        };
        if running < enabled {
            bail!(
                "a held event was not scheduled all the time ({running:?} of {enabled:?}): more events than counters"
            );
        }
    }
    println!(
        "hold-counters: holding {count} pinned cycles events on each of {cpus} CPUs, all counting"
    );
    std::fs::write(ready_file, "ready\n").with_context(|| format!("cannot write {ready_file}"))?;
    loop {
        std::thread::park();
    }
}
