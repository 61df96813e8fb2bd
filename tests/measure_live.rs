//! The measurement engine on this machine, for real: pinned workers, their
//! own counters, the dispatcher's idleness, the fallback clock.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use nix::sched::{CpuSet as AffinityMask, sched_getaffinity};
use nix::unistd::Pid;
use placement_study::measure::counters::no_pmu_reason;
use placement_study::measure::{
    ClockKind, Engine, HardwareCounters, Kernel, RepSample, Workload, calibrate_passes,
    kernel_by_name,
};
use placement_study::plan::{Arm, Placement};

const BUFFER_BYTES: usize = 16 * 1024;

/// One engine for every test: repetitions of about 20 ms.
fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let kernel: Arc<dyn Kernel> =
            Arc::from(kernel_by_name("mul").expect("the mul kernel exists on x86_64"));
        let passes = calibrate_passes(kernel.as_ref(), BUFFER_BYTES, Duration::from_millis(20))
            .expect("16 KiB is a valid buffer");
        let workload = Workload {
            kernel,
            buffer_bytes: BUFFER_BYTES,
            passes,
        };
        Engine::new(workload, true).expect("software counters open on this machine")
    })
}

fn allowed_cpus() -> Vec<u32> {
    let mask = sched_getaffinity(Pid::from_raw(0)).expect("sched_getaffinity on this process");
    (0..AffinityMask::count())
        .filter(|&cpu| mask.is_set(cpu).unwrap_or(false))
        .map(|cpu| cpu as u32)
        .collect()
}

fn placement(arm: Arm, cpus: &[Option<u32>]) -> Placement {
    Placement {
        arm,
        cpus: cpus.to_vec(),
        membind: None,
    }
}

/// A repetition that must complete: this process never requests a stop (the
/// signal tests raise theirs in child processes, in tests/stop_signals.rs).
fn completed(rep: anyhow::Result<Option<RepSample>>, what: &str) -> RepSample {
    rep.unwrap_or_else(|error| panic!("{what}: {error:#}"))
        .unwrap_or_else(|| panic!("{what}: stopped, though no stop was requested"))
}

/// What holds for every completed repetition, pinned or not.
fn assert_consistent(rep: &RepSample, engine: &Engine) {
    let first = &rep.workers[0];
    for sample in &rep.workers {
        assert_eq!(
            sample.checksum, first.checksum,
            "checksums differ: {rep:#?}"
        );
        assert_eq!(
            sample.bytes,
            engine.workload().bytes_per_worker(),
            "{sample:#?}"
        );
        assert!(sample.busy_ns > 0 && sample.tsc_ticks > 0, "{sample:#?}");
        assert!(
            sample.busy_ns <= rep.wall_ns,
            "busy beyond the wall time: {rep:#?}"
        );
        assert!(sample.counters.task_clock_ns > 0, "{sample:#?}");
        assert!(!sample.counters.multiplexed(), "{sample:#?}");
    }
}

#[test]
fn pinned_workers_stay_on_their_cpus_and_the_dispatcher_idles() {
    let _cpus = crate::common::cpus_to_myself();
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        println!("skipped: needs 2 allowed CPUs, this process has {cpus:?}");
        return;
    }
    let engine = engine();
    let pinned = [Some(cpus[0]), Some(cpus[1])];
    let rep = completed(
        engine.run_rep(&placement(Arm::Separate, &pinned), 0, false),
        "a pinned repetition",
    );
    assert_eq!((rep.arm, rep.rep, rep.warmup), (Arm::Separate, 0, false));
    assert_eq!(rep.workers.len(), 2);
    assert_consistent(&rep, engine);
    for (sample, cpu) in rep.workers.iter().zip(pinned) {
        assert_eq!(sample.pinned_cpu, cpu);
        assert_eq!(Some(sample.cpu_start), cpu, "{sample:#?}");
        assert_eq!(Some(sample.cpu_end), cpu, "{sample:#?}");
        assert_eq!(sample.counters.cpu_migrations, 0, "{sample:#?}");
    }
    let workers_task_clock: u64 = rep.workers.iter().map(|w| w.counters.task_clock_ns).sum();
    let share = rep.dispatcher_task_clock_ns as f64 / workers_task_clock as f64;
    assert!(
        share < 0.05,
        "dispatcher used {} ns of CPU against the workers' {workers_task_clock} ns",
        rep.dispatcher_task_clock_ns
    );
}

#[test]
fn hardware_counters_match_what_sysfs_shows() {
    let _cpus = crate::common::cpus_to_myself();
    let engine = engine();
    let pmu_visible = ["cpu", "cpu_core", "cpu_atom"].iter().any(|name| {
        Path::new("/sys/bus/event_source/devices")
            .join(name)
            .exists()
    });
    if pmu_visible {
        println!("a CPU PMU is visible here: {:?}", engine.hardware());
        return;
    }
    assert_eq!(
        engine.hardware(),
        &HardwareCounters::Unavailable {
            reason: no_pmu_reason()
        }
    );
    assert_eq!(engine.clock(), ClockKind::Tsc);
    let rep = completed(
        engine.run_rep(
            &placement(Arm::Alone, &[allowed_cpus().first().copied()]),
            0,
            true,
        ),
        "a single worker",
    );
    let counters = &rep.workers[0].counters;
    assert_eq!(
        (
            counters.cycles,
            counters.instructions,
            counters.ref_cycles,
            counters.l1i_misses
        ),
        (None, None, None, None)
    );
}

#[test]
fn unpinned_workers_complete() {
    let _cpus = crate::common::cpus_to_myself();
    let engine = engine();
    let rep = completed(
        engine.run_rep(&placement(Arm::Unpinned, &[None, None]), 3, false),
        "an unpinned repetition",
    );
    assert_consistent(&rep, engine);
    assert!(rep.workers.iter().all(|w| w.pinned_cpu.is_none()));
}

#[test]
fn pinning_to_a_missing_cpu_names_it() {
    let _cpus = crate::common::cpus_to_myself();
    let missing = (AffinityMask::count() - 1) as u32;
    if allowed_cpus().contains(&missing) {
        println!("skipped: CPU {missing} exists here");
        return;
    }
    let error = engine()
        .run_rep(
            &placement(Arm::Separate, &[Some(0), Some(missing)]),
            0,
            false,
        )
        .expect_err("pinning to a missing CPU fails");
    let message = format!("{error:#}");
    assert!(
        message.contains(&format!("cannot pin to CPU {missing}")),
        "{message}"
    );
    assert!(message.starts_with("worker 1"), "{message}");
}
