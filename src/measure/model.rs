//! What one measurement produces. These records are saved verbatim in the
//! JSON of `gate` and `run` (every raw sample), so field names are schema.

use crate::measure::mempolicy::PageNodes;
use crate::plan::Arm;
use serde::{Deserialize, Serialize};

/// Which clock a cost came from. With turbo on, core cycles and ticks
/// differ; every cost names its clock.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum ClockKind {
    /// The worker's own `cycles` hardware counter (user space).
    CoreCycles,
    /// TSC ticks (x86_64 rdtsc) across the worker's busy interval: wall time
    /// at a constant rate, counting time the thread was descheduled too.
    Tsc,
    /// Arm generic-timer ticks (aarch64 `cntvct_el0`) across the busy
    /// interval: like the TSC, wall time at the constant rate `cntfrq_el0`
    /// states.
    GenericTimer,
}

impl ClockKind {
    /// The name saved files and tables use: "core-cycles", "tsc",
    /// "generic-timer".
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// What one count of this clock is called: "cycles", "TSC ticks",
    /// "generic-timer ticks".
    pub fn unit(self) -> &'static str {
        match self {
            ClockKind::CoreCycles => "cycles",
            ClockKind::Tsc => "TSC ticks",
            ClockKind::GenericTimer => "generic-timer ticks",
        }
    }

    /// A table column's short name: "cycles", "TSC", "generic-timer".
    pub fn column(self) -> &'static str {
        match self {
            ClockKind::CoreCycles => "cycles",
            ClockKind::Tsc => "TSC",
            ClockKind::GenericTimer => "generic-timer",
        }
    }

    /// Whether this is a constant-rate tick counter (`tsc_ticks` in a
    /// sample) rather than the PMU's cycles.
    pub fn is_ticks(self) -> bool {
        !matches!(self, ClockKind::CoreCycles)
    }
}

/// The tick clock of files written before `tick_clock` was saved: every
/// one of them came from an x86_64 build.
pub fn tick_clock_of_first_format() -> ClockKind {
    ClockKind::Tsc
}

/// A hardware event a worker's group may count.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum HardwareEvent {
    /// Core cycles: the cost clock when the PMU has it.
    Cycles,
    /// Instructions retired: the invariance check's evidence.
    Instructions,
    /// Reference cycles at the nominal rate: effective GHz (Intel).
    RefCycles,
    /// L1 instruction-cache read misses.
    L1iReadMisses,
}

impl HardwareEvent {
    /// Every event, in the order a group opens them.
    pub const ALL: [HardwareEvent; 4] = [
        HardwareEvent::Cycles,
        HardwareEvent::Instructions,
        HardwareEvent::RefCycles,
        HardwareEvent::L1iReadMisses,
    ];

    /// The perf-style name: "cycles", "instructions", "ref-cycles",
    /// "L1-icache-load-misses".
    pub fn name(self) -> &'static str {
        match self {
            HardwareEvent::Cycles => "cycles",
            HardwareEvent::Instructions => "instructions",
            HardwareEvent::RefCycles => "ref-cycles",
            HardwareEvent::L1iReadMisses => "L1-icache-load-misses",
        }
    }
}

impl std::fmt::Display for HardwareEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether one hardware event is counted in the workers' groups, and if not,
/// why (this PMU lacks it, it is forbidden, it would not fit in the group).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventStatus {
    pub event: HardwareEvent,
    pub counted: bool,
    /// Why it is not counted; `None` when it is.
    pub reason: Option<String>,
}

/// How a worker's events are grouped. One group is read atomically and
/// scheduled as a unit; a PMU that cannot take the software events beside
/// its hardware ones gets two, each checked for multiplexing.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum GroupLayout {
    /// Hardware and software events in one group.
    #[default]
    OneGroup,
    /// The hardware events in one group, the software events in another.
    TwoGroups,
}

/// Whether the hardware counters could be opened, and if not, why, in words
/// that say what to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum HardwareCounters {
    /// The PMU counts cycles, so costs are core cycles. `events` says which
    /// of the other events it counts and why not the rest; `l1i_misses`
    /// repeats the L1i event's status for files of the first format.
    Available {
        l1i_misses: bool,
        #[serde(default)]
        events: Vec<EventStatus>,
        #[serde(default)]
        layout: GroupLayout,
        /// Why the events are in two groups; `None` for one group.
        #[serde(default)]
        layout_reason: Option<String>,
    },
    /// No cycles counter: ENOENT/EOPNOTSUPP/ENODEV read "no hardware PMU
    /// visible (typical of a VM)"; EACCES/EPERM name perf_event_paranoid's
    /// value and CAP_PERFMON.
    Unavailable { reason: String },
}

/// Where a worker's task-clock, context switches and migrations come from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "source", rename_all = "kebab-case")]
pub enum SoftwareCounters {
    /// perf's software events, kernel side included, in the worker's group.
    #[default]
    PerfEvents,
    /// perf_event_open refused those events (perf_event_paranoid 2 or
    /// higher without CAP_PERFMON): the thread's own accounting instead,
    /// which needs no privilege. `reason` says why, and what to change.
    ThreadAccounting { reason: String },
}

impl SoftwareCounters {
    /// Whether these are perf's software events (the default, which saved
    /// files leave out).
    pub fn is_perf_events(&self) -> bool {
        matches!(self, SoftwareCounters::PerfEvents)
    }
}

impl HardwareCounters {
    pub fn available(&self) -> bool {
        matches!(self, HardwareCounters::Available { .. })
    }

    /// The status of `event`, where the PMU was probed for it.
    pub fn event(&self, event: HardwareEvent) -> Option<&EventStatus> {
        match self {
            HardwareCounters::Available { events, .. } => events.iter().find(|s| s.event == event),
            HardwareCounters::Unavailable { .. } => None,
        }
    }
}

impl MeasurementSetup {
    /// Why instructions were not counted: the PMU's reason for that event,
    /// or the reason no hardware counter was. `None` when they were.
    pub fn why_instructions_uncounted(&self) -> Option<&str> {
        match &self.hardware_counters {
            HardwareCounters::Unavailable { reason } => Some(reason),
            counted => counted
                .event(HardwareEvent::Instructions)
                .and_then(|status| status.reason.as_deref()),
        }
    }
}

/// A counter group's time enabled and time running; unequal means the PMU
/// multiplexed it.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct GroupTimes {
    pub time_enabled_ns: u64,
    pub time_running_ns: u64,
}

impl GroupTimes {
    pub fn multiplexed(&self) -> bool {
        self.time_enabled_ns != self.time_running_ns
    }
}

/// One worker's counter group, read once after its kernel (atomic group read).
/// Hardware fields are `None` when the PMU is unavailable (or, for
/// `l1i_misses`, lacks that event).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CounterValues {
    pub cycles: Option<u64>,
    pub instructions: Option<u64>,
    pub ref_cycles: Option<u64>,
    pub l1i_misses: Option<u64>,
    pub task_clock_ns: u64,
    pub context_switches: u64,
    /// Kernel side included: any migration of the worker while counting.
    pub cpu_migrations: u64,
    /// Group time_enabled / time_running (of the hardware group, when the
    /// events are in two); unequal means the PMU multiplexed the group.
    /// Never scaled.
    pub time_enabled_ns: u64,
    pub time_running_ns: u64,
    /// The software events' group, when they are counted in a second one
    /// ([`GroupLayout::TwoGroups`]); `None` with one group.
    #[serde(default)]
    pub software_group: Option<GroupTimes>,
}

impl CounterValues {
    /// The (first) group's times.
    pub fn group_times(&self) -> GroupTimes {
        GroupTimes {
            time_enabled_ns: self.time_enabled_ns,
            time_running_ns: self.time_running_ns,
        }
    }

    /// Whether any of the worker's groups was time-shared.
    pub fn multiplexed(&self) -> bool {
        self.group_times().multiplexed() || self.software_group.is_some_and(|g| g.multiplexed())
    }
}

/// One worker in one repetition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Ticks of the setup's `tick_clock` across the kernel: rdtsc on
    /// x86_64, `cntvct_el0` on aarch64 (the name is the first format's).
    pub tsc_ticks: u64,
    /// Nanoseconds from arriving at the start barrier to being released.
    pub barrier_wait_ns: u64,
    /// Shared work (`hybrid`, `run --sweep`): CLOCK_MONOTONIC nanoseconds
    /// from the workers' release (the start of the repetition's `wall_ns`)
    /// to this worker's last item done. `None` (and absent from the JSON)
    /// in other samples and in files before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_ns: Option<u64>,
    pub counters: CounterValues,
    /// The kernel's checksum (keeps the work from being optimised away, and
    /// must be equal across workers given equal input).
    pub checksum: u64,
    /// `hybrid`'s shared work: what this worker did of it. `None` (and
    /// absent from the JSON) in every other command's samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<ItemCounts>,
    /// `run --membind`: where the pages of its buffer were once filled
    /// (`move_pages`). `None` (and absent from the JSON) without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<PageNodes>,
}

/// What one worker did of a repetition's shared items.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ItemCounts {
    /// Items it processed.
    pub items: u64,
    /// Of those, items it stole from other workers' ranges.
    pub stolen: u64,
    /// Where it processed them: the CPU each item started on, counted.
    pub per_cpu: Vec<CpuItems>,
}

/// Items one worker started on one CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuItems {
    pub cpu: u32,
    pub items: u64,
}

impl ItemCounts {
    /// Counts one more item, started on `cpu`.
    pub fn add(&mut self, cpu: u32) {
        self.items += 1;
        match self.per_cpu.iter_mut().find(|entry| entry.cpu == cpu) {
            Some(entry) => entry.items += 1,
            None => self.per_cpu.push(CpuItems { cpu, items: 1 }),
        }
    }
}

/// One repetition of one arm: all its workers ran concurrently, released
/// together by one barrier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// The constant-rate counter the samples' `tsc_ticks` count: `tsc` on
    /// x86_64, `generic-timer` on aarch64.
    #[serde(default = "tick_clock_of_first_format")]
    pub tick_clock: ClockKind,
    pub hardware_counters: HardwareCounters,
    /// Where task-clock, context switches and migrations came from; left
    /// out of the file (and absent from older files) when perf counted them.
    #[serde(default, skip_serializing_if = "SoftwareCounters::is_perf_events")]
    pub software_counters: SoftwareCounters,
    /// The tick clock's frequency, used for effective GHz and seconds, and
    /// where it came from.
    pub tsc_hz: f64,
    pub tsc_hz_source: String,
    pub warmups: usize,
}
