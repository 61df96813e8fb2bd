//! What one measurement produces. These records are saved verbatim in the
//! JSON of `gate` and `run` (every raw sample), so field names are schema.

use crate::plan::Arm;
use serde::{Deserialize, Serialize};

/// Which clock a cost came from. With turbo on, core cycles and TSC ticks
/// differ; every cost names its clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClockKind {
    /// The worker's own `cycles` hardware counter (user space).
    CoreCycles,
    /// TSC ticks (rdtsc) across the worker's busy interval: wall time at a
    /// constant rate, counting time the thread was descheduled too.
    Tsc,
}

impl ClockKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ClockKind::CoreCycles => "core-cycles",
            ClockKind::Tsc => "tsc",
        }
    }
}

/// Whether the hardware counters could be opened, and if not, why, in words
/// that say what to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum HardwareCounters {
    /// cycles, instructions, ref-cycles open; `l1i_misses` says whether the
    /// PMU also has the L1i read-miss cache event.
    Available { l1i_misses: bool },
    /// ENOENT/EOPNOTSUPP/ENODEV: "no hardware PMU visible (typical of a VM)".
    /// EACCES/EPERM: names perf_event_paranoid's value and CAP_PERFMON.
    Unavailable { reason: String },
}

impl HardwareCounters {
    pub fn available(&self) -> bool {
        matches!(self, HardwareCounters::Available { .. })
    }
}

/// One worker's counter group, read once after its kernel (atomic group read).
/// Hardware fields are `None` when the PMU is unavailable (or, for
/// `l1i_misses`, lacks that event).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterValues {
    pub cycles: Option<u64>,
    pub instructions: Option<u64>,
    pub ref_cycles: Option<u64>,
    pub l1i_misses: Option<u64>,
    pub task_clock_ns: u64,
    pub context_switches: u64,
    /// Kernel side included: any migration of the worker while counting.
    pub cpu_migrations: u64,
    /// Group time_enabled / time_running; unequal means the PMU multiplexed
    /// the group. Never scaled.
    pub time_enabled_ns: u64,
    pub time_running_ns: u64,
}

impl CounterValues {
    pub fn multiplexed(&self) -> bool {
        self.time_enabled_ns != self.time_running_ns
    }
}

/// One worker in one repetition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerSample {
    pub worker: usize,
    /// The CPU it was pinned to; `None` in the unpinned arm.
    pub pinned_cpu: Option<u32>,
    /// sched_getcpu() right before and right after the kernel.
    pub cpu_start: u32,
    pub cpu_end: u32,
    pub bytes: u64,
    /// CLOCK_MONOTONIC nanoseconds across the kernel.
    pub busy_ns: u64,
    /// rdtsc ticks across the kernel.
    pub tsc_ticks: u64,
    /// Nanoseconds from arriving at the start barrier to being released.
    pub barrier_wait_ns: u64,
    pub counters: CounterValues,
    /// The kernel's checksum (keeps the work from being optimised away, and
    /// must be equal across workers given equal input).
    pub checksum: u64,
}

/// One repetition of one arm: all its workers ran concurrently, released
/// together by one barrier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepSample {
    pub arm: Arm,
    /// 0-based, warm-ups included; `warmup` ones are excluded from statistics.
    pub rep: usize,
    pub warmup: bool,
    pub workers: Vec<WorkerSample>,
    /// CLOCK_MONOTONIC ns from releasing the workers to collecting the last.
    pub wall_ns: u64,
    /// The dispatcher thread's own task-clock over the same span: it should
    /// be idle (blocked in a wait), a tiny fraction of the workers'.
    pub dispatcher_task_clock_ns: u64,
}

/// What a measurement ran on and with, saved beside its samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeasurementSetup {
    pub kernel: String,
    pub kernel_description: String,
    /// Instructions per byte the kernel retires by construction: what the
    /// invariance check's counted value should read.
    pub kernel_instructions_per_byte: f64,
    /// Cycles per byte on one core when its bounding port is saturated.
    pub kernel_port_bound_cycles_per_byte: f64,
    /// Bytes each worker processes per repetition (fixed for every arm and rep).
    pub bytes_per_worker: u64,
    pub buffer_bytes: usize,
    pub passes: u64,
    pub clock: ClockKind,
    pub hardware_counters: HardwareCounters,
    /// TSC frequency used for effective GHz and seconds, and where it came from.
    pub tsc_hz: f64,
    pub tsc_hz_source: String,
    pub warmups: usize,
}
