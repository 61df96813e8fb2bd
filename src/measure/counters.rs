//! Per-thread perf counters: each worker opens its own group on itself.
//!
//! A worker's group holds, where the PMU has them, the user-space hardware
//! events cycles, instructions, ref-cycles and L1i read misses, plus the
//! software events task-clock, context-switches and cpu-migrations with the
//! kernel side included (a migration or a context switch happens in the
//! kernel: excluding it would count none). Hardware and software events share
//! ONE group: the kernel allows software events in a hardware group, and one
//! group means one enable, one disable and one atomic read covering exactly
//! the same interval for every value.
//!
//! [`probe_hardware`] finds out once which hardware events this PMU counts
//! (cycles is required for core-cycle costs; each missing event is reported
//! with the reason and what it costs) and proves the group opens. An event
//! that opens alone but not in the group is left out; software events that
//! will not join the hardware group get a second group of their own
//! ([`GroupLayout::TwoGroups`]), and the multiplexing check covers both.
//!
//! Counters observe the calling thread (pid 0) on any CPU, start disabled,
//! and are never scaled: `time_enabled` and `time_running` are reported as
//! read, and unequal values mean the PMU multiplexed the group.
//!
//! Where perf_event_paranoid (2 and up, without CAP_PERFMON) refuses the
//! software events with their kernel side, [`probe_software`] falls back to
//! the thread's own accounting ([`SoftwareCounters::ThreadAccounting`]),
//! which needs no privilege: CLOCK_THREAD_CPUTIME_ID for task-clock (the
//! same run time, kernel side included), getrusage(RUSAGE_THREAD) for
//! context switches and `/proc/thread-self/sched` for migrations. Not the
//! user-only software events level 2 would allow: with `exclude_kernel`,
//! context-switches and cpu-migrations count nothing (a switch happens in
//! the kernel), as `perf stat -e context-switches:u` shows.

use std::io;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Event, Hardware, Software};
use perf_event::{Builder, Counter, Group, GroupData};
use perf_event_open_sys::bindings::perf_event_attr;

use super::clock::{TICK_CLOCK, duration_nanos};
use super::model::{
    CounterValues, EventStatus, GroupLayout, GroupTimes, HardwareCounters, HardwareEvent,
    SoftwareCounters,
};
use crate::input::{ReadLimit, read_bounded};
use crate::probe::SysfsRoot;
use crate::probe::environment::hardware_pmus;
use std::path::Path;

/// Relative to `/`, as the probe's reader takes it.
const PARANOID_FILE: &str = "proc/sys/kernel/perf_event_paranoid";

const L1I_READ_MISS: Cache = Cache {
    which: CacheId::L1I,
    operation: CacheOp::READ,
    result: CacheResult::MISS,
};

/// What a hardware PMU that is missing or hidden (ENOENT, EOPNOTSUPP,
/// ENODEV, EINVAL from perf_event_open for both cycles and instructions)
/// means for a measurement.
pub fn no_pmu_reason() -> String {
    format!(
        "no hardware PMU visible (typical of a VM): cycles and instructions cannot be counted; falling back to {}",
        TICK_CLOCK.unit()
    )
}

/// The events a worker's group holds besides cycles (which a usable PMU
/// always has), and how they are grouped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HardwareEvents {
    pub instructions: bool,
    pub ref_cycles: bool,
    pub l1i_misses: bool,
    pub layout: GroupLayout,
}

impl HardwareEvents {
    /// Whether the group counts `event`.
    pub fn counts(&self, event: HardwareEvent) -> bool {
        match event {
            HardwareEvent::Cycles => true,
            HardwareEvent::Instructions => self.instructions,
            HardwareEvent::RefCycles => self.ref_cycles,
            HardwareEvent::L1iReadMisses => self.l1i_misses,
        }
    }

    /// The events `statuses` say are counted, grouped as `layout`.
    fn of(statuses: &[EventStatus], layout: GroupLayout) -> HardwareEvents {
        let counted = |event| statuses.iter().any(|s| s.event == event && s.counted);
        HardwareEvents {
            instructions: counted(HardwareEvent::Instructions),
            ref_cycles: counted(HardwareEvent::RefCycles),
            l1i_misses: counted(HardwareEvent::L1iReadMisses),
            layout,
        }
    }
}

/// What [`probe_hardware`] found: the status to save, and the events the
/// workers' groups open (`None`: software events only).
#[derive(Clone, Debug, PartialEq)]
pub struct HardwareProbe {
    pub counters: HardwareCounters,
    pub events: Option<HardwareEvents>,
}

impl HardwareProbe {
    /// Software events only, for the reason given.
    pub fn unavailable(reason: String) -> HardwareProbe {
        HardwareProbe {
            counters: HardwareCounters::Unavailable { reason },
            events: None,
        }
    }
}

/// Probes the PMU on the calling thread: opens each hardware event alone
/// to learn which this PMU counts (cycles is required for core-cycle
/// costs; the others are reported one by one), then opens a worker's whole
/// group, leaving out an event that will not fit and splitting off the
/// software events if they will not join, until it opens. Each reason says
/// what the missing piece costs and, where there is one, the fix.
pub fn probe_hardware(software: &SoftwareCounters) -> HardwareProbe {
    let solo: Vec<(HardwareEvent, io::Result<Counter>)> = HardwareEvent::ALL
        .iter()
        .map(|&event| (event, hardware_builder(event, None).build()))
        .collect();
    let mut statuses: Vec<EventStatus> = solo
        .iter()
        .map(|(event, result)| EventStatus {
            event: *event,
            counted: result.is_ok(),
            reason: result.as_ref().err().map(|e| explain_missing(*event, e)),
        })
        .collect();
    if let Some((_, Err(error))) = solo.first() {
        let instructions_too = !HardwareEvents::of(&statuses, GroupLayout::OneGroup).instructions;
        // Where the folder cannot be read, a PMU may be there.
        let pmu_visible = hardware_pmus(&SysfsRoot::live()).map_or(true, |pmus| !pmus.is_empty());
        return HardwareProbe::unavailable(explain_no_cycles(error, instructions_too, pmu_visible));
    }
    drop(solo);
    let mut layout = GroupLayout::OneGroup;
    let mut layout_reason = None;
    // The statuses say what the group holds; each refit changes them or the
    // layout, so the loop ends.
    let events = loop {
        let events = HardwareEvents::of(&statuses, layout);
        let failure = match WorkerCounters::try_open(Some(events), software, None) {
            Ok(_) => break events,
            Err(failure) => failure,
        };
        match refit(events, &failure) {
            Some(Refit::Drop(event, why)) => {
                if let Some(status) = statuses.iter_mut().find(|s| s.event == event) {
                    status.counted = false;
                    status.reason = Some(why);
                }
            }
            Some(Refit::Split(why)) => {
                layout = GroupLayout::TwoGroups;
                layout_reason = Some(why);
            }
            None => return HardwareProbe::unavailable(failure.explain()),
        }
    };
    HardwareProbe {
        counters: HardwareCounters::Available {
            l1i_misses: events.l1i_misses,
            events: statuses,
            layout: events.layout,
            layout_reason,
        },
        events: Some(events),
    }
}

/// Finds where a worker's task-clock, context switches and migrations will
/// come from: perf's software events where the kernel allows them with
/// their kernel side, the thread's own accounting where it refuses them
/// (EACCES or EPERM); any other failure is an error.
pub fn probe_software() -> anyhow::Result<SoftwareCounters> {
    match WorkerCounters::try_open(None, &SoftwareCounters::PerfEvents, None) {
        Ok(_) => Ok(SoftwareCounters::PerfEvents),
        Err(failure) => software_after(&failure),
    }
}

/// What a refused software group leaves: the thread's own accounting, with
/// the refusal and what it costs as the reason.
fn software_after(failure: &OpenFailure) -> anyhow::Result<SoftwareCounters> {
    if !failure.refused() {
        bail!(failure.explain());
    }
    let migrations = match thread_switches_and_migrations()?.1 {
        Some(_) => "",
        None => {
            "; migrations are not counted (no /proc/thread-self/sched in this kernel): \
             pinning is checked by each worker's start and end CPU only"
        }
    };
    Ok(SoftwareCounters::ThreadAccounting {
        reason: format!(
            "perf_event_open refused the software events on this thread ({}): {}; \
             task-clock, context switches and migrations come from each thread's own accounting \
             instead (CLOCK_THREAD_CPUTIME_ID, getrusage, {THREAD_SCHED_PATH}){migrations}",
            failure.error,
            paranoid_advice(1)
        ),
    })
}

/// A change that may let a group open that did not.
#[derive(Debug, PartialEq)]
enum Refit {
    /// Leave out this optional event, for this reason.
    Drop(HardwareEvent, String),
    /// Count the software events in a second group, for this reason.
    Split(String),
}

/// What to try after `failure` opening a group of `events`: an optional
/// event that opened alone but not in the group is left out; software
/// events that would not join a hardware group get their own. `None`:
/// nothing left to try.
fn refit(events: HardwareEvents, failure: &OpenFailure) -> Option<Refit> {
    match failure.member {
        Member::Hardware(HardwareEvent::Cycles) | Member::Leader => None,
        Member::Hardware(event) if events.counts(event) => Some(Refit::Drop(
            event,
            format!(
                "{event} opens alone but not in one group with the events before it (perf_event_open: {}): not counted",
                failure.error
            ),
        )),
        Member::Hardware(_) => None,
        Member::Software(name) if events.layout == GroupLayout::OneGroup => {
            Some(Refit::Split(format!(
                "the {name} software event would not join the hardware events' group (perf_event_open: {}): \
             hardware and software events are counted in two groups, each checked for multiplexing",
                failure.error
            )))
        }
        Member::Software(_) => None,
    }
}

/// Why cycles cannot be counted, and the fallback. `instructions_too`: the
/// instructions event failed as well, so no PMU is visible at all.
/// `pmu_visible`: the kernel registers a CPU PMU. Without one, a refusal
/// (perf_event_paranoid, a seccomp filter) is not the cause a fix would
/// change: with no PMU, no setting counts cycles, so the missing PMU is
/// named (root sees the same).
fn explain_no_cycles(error: &io::Error, instructions_too: bool, pmu_visible: bool) -> String {
    let fallback = TICK_CLOCK.unit();
    if !pmu_visible {
        return no_pmu_reason();
    }
    match error.raw_os_error() {
        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL) if instructions_too => {
            no_pmu_reason()
        }
        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL) => format!(
            "this PMU has no cycles event (perf_event_open: {error}); falling back to {fallback}"
        ),
        Some(libc::EACCES | libc::EPERM) => format!(
            "hardware counters forbidden: {}; falling back to {fallback}",
            paranoid_advice(2)
        ),
        _ => {
            format!("cannot open the cycles hardware counter ({error}); falling back to {fallback}")
        }
    }
}

/// Why an event other than cycles is not counted, and what that costs.
fn explain_missing(event: HardwareEvent, error: &io::Error) -> String {
    let costs = match event {
        HardwareEvent::Cycles => "costs fall back to ticks",
        HardwareEvent::Instructions => "the invariance check cannot run",
        HardwareEvent::RefCycles => "no effective GHz",
        HardwareEvent::L1iReadMisses => "no L1i misses per 1000 instructions",
    };
    match error.raw_os_error() {
        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL) => {
            format!("this PMU has no {event} event (perf_event_open: {error}); {costs}")
        }
        Some(libc::EACCES | libc::EPERM) => {
            format!("{event} forbidden: {}; {costs}", paranoid_advice(2))
        }
        _ => format!("cannot open {event} (perf_event_open: {error}); {costs}"),
    }
}

/// Says what perf_event_paranoid is now and how to allow what needs `level`.
pub fn paranoid_advice(level: u8) -> String {
    let root = SysfsRoot::live();
    let path = root.name(PARANOID_FILE);
    let current = match root.read_value(PARANOID_FILE) {
        Ok(Some(value)) => format!("{path} is {value}"),
        Ok(None) => format!("{path} is missing"),
        Err(error) => format!("{path} is unreadable ({error:#})"),
    };
    format!(
        "{current}; this needs {level} or lower (`sysctl kernel.perf_event_paranoid={level}`) or the CAP_PERFMON capability (`setcap cap_perfmon+ep` on the binary)"
    )
}

/// Where the upper half of a generic hardware or cache event's config names
/// its PMU (the kernel's `PERF_PMU_TYPE_SHIFT`).
const PMU_TYPE_SHIFT: u32 = 32;

/// A generic event on one named core PMU. On a machine with a PMU per kind
/// of core (Intel hybrids' `cpu_core` and `cpu_atom`, Arm big.LITTLE), a
/// generic event that names no PMU lands on one of them and counts only
/// while its thread runs on that PMU's CPUs: a worker pinned to an
/// efficiency core would read as multiplexed with nothing counted. Naming
/// the PMU of the worker's CPU makes it count there.
struct OnPmu<E> {
    event: E,
    pmu_type: Option<u32>,
}

impl<E: Event> Event for OnPmu<E> {
    fn update_attrs(self, attr: &mut perf_event_attr) {
        self.event.update_attrs(attr);
        if let Some(pmu_type) = self.pmu_type {
            attr.config |= u64::from(pmu_type) << PMU_TYPE_SHIFT;
        }
    }
}

/// Hardware events count user space only: the kernel is the same for every
/// arm, and user-space counting needs the least privilege. `pmu_type` names
/// the core PMU to count on, where the machine has several.
pub fn hardware_builder(event: HardwareEvent, pmu_type: Option<u32>) -> Builder<'static> {
    fn user_only<E: Event>(event: E, pmu_type: Option<u32>) -> Builder<'static> {
        let mut builder = Builder::new(OnPmu { event, pmu_type });
        builder.exclude_kernel(true).exclude_hv(true);
        builder
    }
    match event {
        HardwareEvent::Cycles => user_only(Hardware::CPU_CYCLES, pmu_type),
        HardwareEvent::Instructions => user_only(Hardware::INSTRUCTIONS, pmu_type),
        HardwareEvent::RefCycles => user_only(Hardware::REF_CPU_CYCLES, pmu_type),
        HardwareEvent::L1iReadMisses => user_only(L1I_READ_MISS, pmu_type),
    }
}

/// The `cycles` event on the core PMU `pmu_type` names (the generic event
/// where the machine has one core PMU), user space only; a caller that
/// needs the kernel side too asks for it.
pub fn cycles_builder(pmu_type: Option<u32>) -> Builder<'static> {
    hardware_builder(HardwareEvent::Cycles, pmu_type)
}

/// Software events include the kernel side, where migrations and context
/// switches happen.
fn software_builder(event: Software) -> Builder<'static> {
    let mut builder = Builder::new(event);
    builder.include_kernel();
    builder
}

/// The thread's CPU time, kernel side included, and its name.
const TASK_CLOCK: (Software, &str) = (Software::TASK_CLOCK, "task-clock");

/// The member of a group that failed to open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Member {
    /// The group's (software, dummy) leader.
    Leader,
    Hardware(HardwareEvent),
    Software(&'static str),
}

/// A group that did not open, and the member that failed.
#[derive(Debug)]
struct OpenFailure {
    member: Member,
    error: io::Error,
}

impl OpenFailure {
    fn at(member: Member) -> impl FnOnce(io::Error) -> OpenFailure {
        move |error| OpenFailure { member, error }
    }

    /// Whether permissions refused the event (EACCES, EPERM).
    fn refused(&self) -> bool {
        matches!(self.error.raw_os_error(), Some(libc::EACCES | libc::EPERM))
    }

    /// The one-line error, with the fix where permissions are the cause.
    fn explain(&self) -> String {
        let error = &self.error;
        let advice = if self.refused() {
            format!(": {}", paranoid_advice(1))
        } else {
            String::new()
        };
        match self.member {
            Member::Leader => format!("cannot open a perf counter group on this thread ({error})"),
            Member::Hardware(event) => format!(
                "cannot open the {event} hardware counter in the worker's group, though the probe could ({error})"
            ),
            Member::Software(name) => format!(
                "cannot count the {name} software event on this thread, kernel side included (perf_event_open: {error}){advice}"
            ),
        }
    }
}

/// The hardware members of a worker's group.
struct HardwareMembers {
    group: Option<Group>,
    cycles: Counter,
    instructions: Option<Counter>,
    ref_cycles: Option<Counter>,
    l1i_misses: Option<Counter>,
}

/// One worker's counter group (or two, see [`GroupLayout`]), opened on the
/// calling thread, or its own accounting where perf refuses the software
/// events (see [`SoftwareCounters`]).
pub struct WorkerCounters {
    /// The software events' group, which also holds the hardware events
    /// with [`GroupLayout::OneGroup`]; with the thread's own accounting, the
    /// hardware events' group, and `None` where there are none.
    group: Option<Group>,
    hardware: Option<HardwareMembers>,
    software: SoftwareMembers,
}

/// Where a worker's software values come from.
enum SoftwareMembers {
    /// perf's software events, in the worker's group.
    Perf {
        task_clock: Counter,
        context_switches: Counter,
        cpu_migrations: Counter,
    },
    /// The thread's own accounting: read at enable, and what it counted
    /// from there to the disable.
    Thread {
        started: Option<ThreadUsage>,
        counted: ThreadUsage,
        enabled_ns: u64,
    },
}

impl WorkerCounters {
    /// Opens the group, disabled, on the calling thread. `hardware` is what
    /// [`probe_hardware`] found, or `None` for software events only;
    /// `software` is what [`probe_software`] found.
    pub fn open(
        hardware: Option<HardwareEvents>,
        software: &SoftwareCounters,
    ) -> anyhow::Result<WorkerCounters> {
        WorkerCounters::open_on(hardware, software, None)
    }

    /// Like [`WorkerCounters::open`], the hardware events on the core PMU
    /// of type `pmu_type` where one is named: on a machine with a PMU per
    /// kind of core, the PMU of the CPU the worker is pinned to.
    pub fn open_on(
        hardware: Option<HardwareEvents>,
        software: &SoftwareCounters,
        pmu_type: Option<u32>,
    ) -> anyhow::Result<WorkerCounters> {
        WorkerCounters::try_open(hardware, software, pmu_type)
            .map_err(|failure| anyhow::anyhow!(failure.explain()))
    }

    fn try_open(
        hardware: Option<HardwareEvents>,
        software: &SoftwareCounters,
        pmu_type: Option<u32>,
    ) -> Result<WorkerCounters, OpenFailure> {
        let thread_accounting = !software.is_perf_events();
        let mut group = if thread_accounting && hardware.is_none() {
            None
        } else {
            Some(Group::new().map_err(OpenFailure::at(Member::Leader))?)
        };
        let hardware = match (hardware, group.as_mut()) {
            (Some(events), Some(group)) => Some(open_hardware(group, events, pmu_type)?),
            _ => None,
        };
        let software = match group.as_mut().filter(|_| !thread_accounting) {
            None => SoftwareMembers::Thread {
                started: None,
                counted: ThreadUsage::default(),
                enabled_ns: 0,
            },
            Some(group) => {
                let mut add_software = |(event, name): (Software, &'static str)| {
                    group
                        .add(&software_builder(event))
                        .map_err(OpenFailure::at(Member::Software(name)))
                };
                SoftwareMembers::Perf {
                    task_clock: add_software(TASK_CLOCK)?,
                    context_switches: add_software((
                        Software::CONTEXT_SWITCHES,
                        "context-switches",
                    ))?,
                    cpu_migrations: add_software((Software::CPU_MIGRATIONS, "cpu-migrations"))?,
                }
            }
        };
        Ok(WorkerCounters {
            group,
            hardware,
            software,
        })
    }

    /// Starts every counter of the group at once (one ioctl; two with two
    /// groups, the hardware one last so it counts the least besides the
    /// work); the thread's own accounting is read first.
    pub fn enable(&mut self) -> anyhow::Result<()> {
        if let SoftwareMembers::Thread { started, .. } = &mut self.software {
            *started = Some(ThreadUsage::at_start()?);
        }
        if let Some(group) = self.group.as_mut() {
            group
                .enable()
                .context("cannot enable the worker's counter group")?;
        }
        if let Some(group) = self.hardware.as_mut().and_then(|h| h.group.as_mut()) {
            group
                .enable()
                .context("cannot enable the worker's hardware counter group")?;
        }
        Ok(())
    }

    /// Stops every counter of the group at once (the hardware group first
    /// with two); the thread's own accounting is read last.
    pub fn disable(&mut self) -> anyhow::Result<()> {
        if let Some(group) = self.hardware.as_mut().and_then(|h| h.group.as_mut()) {
            group
                .disable()
                .context("cannot disable the worker's hardware counter group")?;
        }
        if let Some(group) = self.group.as_mut() {
            group
                .disable()
                .context("cannot disable the worker's counter group")?;
        }
        if let SoftwareMembers::Thread {
            started,
            counted,
            enabled_ns,
        } = &mut self.software
        {
            let start = started.take().context("the counters were never enabled")?;
            let end = ThreadUsage::at_end()?;
            *counted = end.since(&start);
            *enabled_ns = duration_nanos(end.at.saturating_duration_since(start.at));
        }
        Ok(())
    }

    /// Reads each group once, atomically.
    pub fn read(&mut self) -> anyhow::Result<CounterValues> {
        let data = match self.group.as_mut() {
            Some(group) => Some(
                group
                    .read()
                    .context("cannot read the worker's counter group")?,
            ),
            None => None,
        };
        let hardware_data = match self.hardware.as_mut().and_then(|h| h.group.as_mut()) {
            Some(group) => Some(
                group
                    .read()
                    .context("cannot read the worker's hardware counter group")?,
            ),
            None => None,
        };
        let hw_data = hardware_data.as_ref().or(data.as_ref());
        let value = |data: Option<&GroupData>, counter: &Counter, name: &str| {
            data.and_then(|data| data.get(counter))
                .map(|entry| entry.value())
                .with_context(|| format!("the counter group's read lacks {name}"))
        };
        let optional = |counter: &Option<Counter>, event: HardwareEvent| {
            counter
                .as_ref()
                .map(|c| value(hw_data, c, event.name()))
                .transpose()
        };
        let (cycles, instructions, ref_cycles, l1i_misses) = match &self.hardware {
            Some(hw) => (
                Some(value(hw_data, &hw.cycles, "cycles")?),
                optional(&hw.instructions, HardwareEvent::Instructions)?,
                optional(&hw.ref_cycles, HardwareEvent::RefCycles)?,
                optional(&hw.l1i_misses, HardwareEvent::L1iReadMisses)?,
            ),
            None => (None, None, None, None),
        };
        let (task_clock_ns, context_switches, cpu_migrations, first) = match &self.software {
            SoftwareMembers::Perf {
                task_clock,
                context_switches,
                cpu_migrations,
            } => (
                value(data.as_ref(), task_clock, "task-clock")?,
                value(data.as_ref(), context_switches, "context-switches")?,
                value(data.as_ref(), cpu_migrations, "cpu-migrations")?,
                hw_data.map(group_times).transpose()?,
            ),
            SoftwareMembers::Thread {
                counted,
                enabled_ns,
                ..
            } => (
                counted.cpu_ns,
                counted.context_switches,
                counted.migrations.unwrap_or(0),
                // No group to time-share without hardware events: the
                // span between enable and disable, never multiplexed.
                Some(hw_data.map(group_times).transpose()?.unwrap_or(GroupTimes {
                    time_enabled_ns: *enabled_ns,
                    time_running_ns: *enabled_ns,
                })),
            ),
        };
        let first = first.context("the worker has no counter group to read")?;
        let software_group = match (&hardware_data, &data) {
            (Some(_), Some(data)) => Some(group_times(data)?),
            _ => None,
        };
        Ok(CounterValues {
            cycles,
            instructions,
            ref_cycles,
            l1i_misses,
            task_clock_ns,
            context_switches,
            cpu_migrations,
            time_enabled_ns: first.time_enabled_ns,
            time_running_ns: first.time_running_ns,
            software_group,
        })
    }
}

/// Where the kernel keeps a thread's scheduler statistics, migrations
/// among them (with CONFIG_SCHED_DEBUG, as Debian's and Ubuntu's kernels
/// build it).
const THREAD_SCHED_PATH: &str = "/proc/thread-self/sched";

/// The calling thread's own accounting at one moment.
#[derive(Clone, Copy, Debug)]
struct ThreadUsage {
    /// CLOCK_THREAD_CPUTIME_ID: the thread's run time, kernel side
    /// included, which is what task-clock counts.
    cpu_ns: u64,
    /// getrusage(RUSAGE_THREAD): voluntary and involuntary switches.
    context_switches: u64,
    /// `se.nr_migrations` of [`THREAD_SCHED_PATH`]; `None` where the
    /// kernel has no such file.
    migrations: Option<u64>,
    at: Instant,
}

impl Default for ThreadUsage {
    fn default() -> ThreadUsage {
        ThreadUsage {
            cpu_ns: 0,
            context_switches: 0,
            migrations: None,
            at: Instant::now(),
        }
    }
}

impl ThreadUsage {
    /// The calling thread's accounting at the start of what it counts: its
    /// CPU time read last, so the other reads are not counted.
    fn at_start() -> anyhow::Result<ThreadUsage> {
        let (context_switches, migrations) = thread_switches_and_migrations()?;
        Ok(ThreadUsage {
            cpu_ns: thread_cpu_ns()?,
            context_switches,
            migrations,
            at: Instant::now(),
        })
    }

    /// The calling thread's accounting at the end of what it counts: its
    /// CPU time read first, for the same reason.
    fn at_end() -> anyhow::Result<ThreadUsage> {
        let at = Instant::now();
        let cpu_ns = thread_cpu_ns()?;
        let (context_switches, migrations) = thread_switches_and_migrations()?;
        Ok(ThreadUsage {
            cpu_ns,
            context_switches,
            migrations,
            at,
        })
    }

    /// What the thread did from `start` to `self`.
    fn since(&self, start: &ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            cpu_ns: self.cpu_ns.saturating_sub(start.cpu_ns),
            context_switches: self.context_switches.saturating_sub(start.context_switches),
            migrations: self
                .migrations
                .zip(start.migrations)
                .map(|(end, start)| end.saturating_sub(start)),
            at: self.at,
        }
    }
}

/// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID: kernel side
/// included, as task-clock counts it), ns.
fn thread_cpu_ns() -> anyhow::Result<u64> {
    let cpu = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .context("cannot read CLOCK_THREAD_CPUTIME_ID")?;
    Ok(duration_nanos(Duration::from(cpu)))
}

/// The calling thread's context switches (getrusage(RUSAGE_THREAD)) and
/// migrations ([`THREAD_SCHED_PATH`], through the one bounded reader;
/// `None` where the kernel has no such file).
fn thread_switches_and_migrations() -> anyhow::Result<(u64, Option<u64>)> {
    use nix::sys::resource::{UsageWho, getrusage};
    const SCHED_LIMIT: ReadLimit = ReadLimit {
        max_bytes: 64 * 1024,
        expected: "a procfs scheduler statistics file",
    };
    let migrations = read_bounded(Path::new(THREAD_SCHED_PATH), SCHED_LIMIT, |_| false)
        .ok()
        .flatten()
        .and_then(|bytes| sched_migrations(&String::from_utf8_lossy(&bytes)));
    let usage =
        getrusage(UsageWho::RUSAGE_THREAD).context("cannot read getrusage(RUSAGE_THREAD)")?;
    let switches = usage.voluntary_context_switches() + usage.involuntary_context_switches();
    Ok((u64::try_from(switches).unwrap_or(0), migrations))
}

/// `se.nr_migrations` of a `/proc/…/sched` file.
fn sched_migrations(text: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name.trim() == "se.nr_migrations")
            .then(|| value.trim().parse().ok())
            .flatten()
    })
}

/// Opens the hardware members into `group`, or into a group of their own
/// with [`GroupLayout::TwoGroups`].
fn open_hardware(
    group: &mut Group,
    events: HardwareEvents,
    pmu_type: Option<u32>,
) -> Result<HardwareMembers, OpenFailure> {
    let mut own = match events.layout {
        GroupLayout::OneGroup => None,
        GroupLayout::TwoGroups => Some(Group::new().map_err(OpenFailure::at(Member::Leader))?),
    };
    let target = own.as_mut().unwrap_or(group);
    let cycles = target
        .add(&hardware_builder(HardwareEvent::Cycles, pmu_type))
        .map_err(OpenFailure::at(Member::Hardware(HardwareEvent::Cycles)))?;
    let mut optional = |event: HardwareEvent| -> Result<Option<Counter>, OpenFailure> {
        if !events.counts(event) {
            return Ok(None);
        }
        target
            .add(&hardware_builder(event, pmu_type))
            .map(Some)
            .map_err(OpenFailure::at(Member::Hardware(event)))
    };
    let instructions = optional(HardwareEvent::Instructions)?;
    let ref_cycles = optional(HardwareEvent::RefCycles)?;
    let l1i_misses = optional(HardwareEvent::L1iReadMisses)?;
    Ok(HardwareMembers {
        group: own,
        cycles,
        instructions,
        ref_cycles,
        l1i_misses,
    })
}

fn group_times(data: &GroupData) -> anyhow::Result<GroupTimes> {
    match (data.time_enabled(), data.time_running()) {
        (Some(enabled), Some(running)) => Ok(GroupTimes {
            time_enabled_ns: duration_nanos(enabled),
            time_running_ns: duration_nanos(running),
        }),
        _ => bail!("the counter group's read lacks time_enabled/time_running"),
    }
}

/// The calling thread's task-clock (kernel side included): how much CPU time
/// the dispatcher itself used while its workers ran. From perf's
/// task-clock event, or with the thread's own accounting from
/// CLOCK_THREAD_CPUTIME_ID.
pub enum ThreadTaskClock {
    Perf(Counter),
    /// The thread's CPU time at the start.
    Thread(Option<u64>),
}

impl ThreadTaskClock {
    /// Opens the counter, disabled, on the calling thread.
    pub fn open(software: &SoftwareCounters) -> anyhow::Result<ThreadTaskClock> {
        if !software.is_perf_events() {
            return Ok(ThreadTaskClock::Thread(None));
        }
        let (event, name) = TASK_CLOCK;
        let counter = software_builder(event).build().map_err(|error| {
            anyhow::anyhow!(
                OpenFailure {
                    member: Member::Software(name),
                    error
                }
                .explain()
            )
        })?;
        Ok(ThreadTaskClock::Perf(counter))
    }

    /// Zeroes and starts the counter.
    pub fn start(&mut self) -> anyhow::Result<()> {
        match self {
            ThreadTaskClock::Perf(counter) => {
                counter
                    .reset()
                    .context("cannot reset the task-clock counter")?;
                counter
                    .enable()
                    .context("cannot enable the task-clock counter")
            }
            ThreadTaskClock::Thread(started) => {
                *started = Some(thread_cpu_ns()?);
                Ok(())
            }
        }
    }

    /// Stops the counter and returns the nanoseconds counted since `start`.
    pub fn stop(&mut self) -> anyhow::Result<u64> {
        match self {
            ThreadTaskClock::Perf(counter) => {
                counter
                    .disable()
                    .context("cannot disable the task-clock counter")?;
                counter.read().context("cannot read the task-clock counter")
            }
            ThreadTaskClock::Thread(started) => {
                let start = started.take().context("the task clock was never started")?;
                Ok(thread_cpu_ns()?.saturating_sub(start))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn software_group_counts_this_thread() -> anyhow::Result<()> {
        let mut counters = WorkerCounters::open(None, &probe_software()?)?;
        counters.enable()?;
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(5) {
            std::hint::spin_loop();
        }
        counters.disable()?;
        let values = counters.read()?;
        assert!(values.task_clock_ns > 1_000_000, "{values:?}");
        assert_eq!(values.cycles, None);
        assert!(!values.multiplexed(), "{values:?}");
        assert!(
            values.time_enabled_ns >= values.task_clock_ns / 2,
            "{values:?}"
        );
        Ok(())
    }

    #[test]
    fn thread_task_clock_counts_only_while_started() -> anyhow::Result<()> {
        let mut clock = ThreadTaskClock::open(&probe_software()?)?;
        clock.start()?;
        std::thread::sleep(std::time::Duration::from_millis(5));
        let asleep = clock.stop()?;
        assert!(asleep < 2_000_000, "sleeping used {asleep} ns of CPU");
        Ok(())
    }

    fn thread_accounting() -> SoftwareCounters {
        SoftwareCounters::ThreadAccounting {
            reason: "a test".into(),
        }
    }

    #[test]
    fn thread_accounting_counts_this_thread_without_perf() -> anyhow::Result<()> {
        let mut counters = WorkerCounters::open(None, &thread_accounting())?;
        assert!(counters.group.is_none(), "no perf event is opened");
        counters.enable()?;
        // 2 ms of this thread's CPU time, however busy the machine is.
        let begin = thread_cpu_ns()?;
        while thread_cpu_ns()? - begin < 2_000_000 {
            std::hint::spin_loop();
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
        counters.disable()?;
        let values = counters.read()?;
        assert!(values.task_clock_ns >= 2_000_000, "{values:?}");
        assert!(
            values.context_switches >= 1,
            "the sleep is a switch: {values:?}"
        );
        assert_eq!(values.cycles, None);
        assert!(!values.multiplexed(), "{values:?}");
        assert!(
            values.time_enabled_ns >= values.task_clock_ns + 1_000_000,
            "{values:?}"
        );
        Ok(())
    }

    #[test]
    fn thread_accounting_task_clock_counts_only_while_started() -> anyhow::Result<()> {
        let mut clock = ThreadTaskClock::open(&thread_accounting())?;
        clock.start()?;
        std::thread::sleep(std::time::Duration::from_millis(5));
        let asleep = clock.stop()?;
        assert!(asleep < 2_000_000, "sleeping used {asleep} ns of CPU");
        Ok(())
    }

    #[test]
    fn a_refused_software_group_falls_back_to_the_threads_accounting() {
        let refused = OpenFailure {
            member: Member::Software("task-clock"),
            error: io::Error::from_raw_os_error(libc::EACCES),
        };
        let Ok(SoftwareCounters::ThreadAccounting { reason }) = software_after(&refused) else {
            panic!("EACCES must fall back");
        };
        for needed in [
            "perf_event_open refused the software events on this thread",
            "/proc/sys/kernel/perf_event_paranoid",
            "CAP_PERFMON",
            "CLOCK_THREAD_CPUTIME_ID, getrusage",
        ] {
            assert!(reason.contains(needed), "no {needed:?} in: {reason}");
        }
        let broken = OpenFailure {
            member: Member::Software("task-clock"),
            error: io::Error::from_raw_os_error(libc::EINVAL),
        };
        let error = software_after(&broken).unwrap_err().to_string();
        assert!(
            error.starts_with("cannot count the task-clock software event"),
            "{error}"
        );
    }

    #[test]
    fn migrations_come_from_the_sched_file() {
        let text = "worker 0 (1234, #threads: 3)\n---\nse.exec_start  :  5.1\nse.nr_migrations                             :                    7\n";
        assert_eq!(sched_migrations(text), Some(7));
        assert_eq!(sched_migrations("se.exec_start : 5.1\n"), None);
    }

    #[test]
    fn a_named_core_pmu_goes_in_the_configs_upper_half() {
        let instructions = hardware_builder(HardwareEvent::Instructions, Some(10));
        let attrs = instructions.attrs();
        assert_eq!(
            attrs.type_,
            perf_event_open_sys::bindings::PERF_TYPE_HARDWARE
        );
        assert_eq!(
            attrs.config,
            (10 << 32) | u64::from(perf_event_open_sys::bindings::PERF_COUNT_HW_INSTRUCTIONS)
        );
        let misses = hardware_builder(HardwareEvent::L1iReadMisses, Some(4));
        assert_eq!(misses.attrs().config >> 32, 4);
        assert_eq!(
            misses.attrs().type_,
            perf_event_open_sys::bindings::PERF_TYPE_HW_CACHE
        );
        // No PMU named: the generic event, as on a machine with one PMU.
        let cycles = hardware_builder(HardwareEvent::Cycles, None);
        assert_eq!(
            cycles.attrs().config,
            u64::from(perf_event_open_sys::bindings::PERF_COUNT_HW_CPU_CYCLES)
        );
    }

    #[test]
    fn paranoid_advice_names_the_file_and_the_fixes() {
        let advice = paranoid_advice(2);
        assert!(
            advice.starts_with("/proc/sys/kernel/perf_event_paranoid is"),
            "{advice}"
        );
        assert!(advice.contains("kernel.perf_event_paranoid=2"), "{advice}");
        assert!(advice.contains("CAP_PERFMON"), "{advice}");
    }

    #[test]
    fn missing_pmu_errors_read_as_no_pmu() {
        for errno in [libc::ENOENT, libc::EOPNOTSUPP, libc::ENODEV, libc::EINVAL] {
            let error = io::Error::from_raw_os_error(errno);
            assert_eq!(explain_no_cycles(&error, true, true), no_pmu_reason());
            let reason = explain_no_cycles(&error, false, true);
            assert!(
                reason.starts_with("this PMU has no cycles event"),
                "{reason}"
            );
        }
        let refused = io::Error::from_raw_os_error(libc::EACCES);
        let forbidden = explain_no_cycles(&refused, true, true);
        assert!(forbidden.contains("perf_event_paranoid"), "{forbidden}");
        // Without a PMU, the refusal is not what a fix would change.
        assert_eq!(explain_no_cycles(&refused, true, false), no_pmu_reason());
        assert!(no_pmu_reason().ends_with(TICK_CLOCK.unit()));
    }

    #[test]
    fn a_missing_event_is_named_with_what_it_costs() {
        let enoent = io::Error::from_raw_os_error(libc::ENOENT);
        let reason = explain_missing(HardwareEvent::Instructions, &enoent);
        assert!(
            reason.starts_with("this PMU has no instructions event (perf_event_open: "),
            "{reason}"
        );
        assert!(
            reason.ends_with("; the invariance check cannot run"),
            "{reason}"
        );
        let reason = explain_missing(HardwareEvent::RefCycles, &enoent);
        assert!(reason.ends_with("; no effective GHz"), "{reason}");
    }

    fn all_events() -> HardwareEvents {
        HardwareEvents {
            instructions: true,
            ref_cycles: true,
            l1i_misses: true,
            layout: GroupLayout::OneGroup,
        }
    }

    fn failure(member: Member) -> OpenFailure {
        OpenFailure {
            member,
            error: io::Error::from_raw_os_error(libc::EINVAL),
        }
    }

    #[test]
    fn an_optional_event_that_will_not_fit_is_left_out() {
        let refit = refit(
            all_events(),
            &failure(Member::Hardware(HardwareEvent::L1iReadMisses)),
        );
        let Some(Refit::Drop(HardwareEvent::L1iReadMisses, why)) = refit else {
            panic!("{refit:?}");
        };
        assert!(
            why.starts_with("L1-icache-load-misses opens alone but not in one group"),
            "{why}"
        );
        let statuses: Vec<EventStatus> = HardwareEvent::ALL
            .map(|event| EventStatus {
                event,
                counted: event != HardwareEvent::L1iReadMisses,
                reason: None,
            })
            .to_vec();
        let fewer = HardwareEvents::of(&statuses, GroupLayout::OneGroup);
        assert!(!fewer.counts(HardwareEvent::L1iReadMisses));
        assert!(fewer.counts(HardwareEvent::Cycles) && fewer.counts(HardwareEvent::RefCycles));
    }

    #[test]
    fn software_events_that_will_not_join_get_a_group_of_their_own() {
        let refit = refit(all_events(), &failure(Member::Software("task-clock")));
        let Some(Refit::Split(why)) = refit else {
            panic!("{refit:?}");
        };
        assert!(why.contains("counted in two groups, each checked for multiplexing"));
        let split = HardwareEvents {
            layout: GroupLayout::TwoGroups,
            ..all_events()
        };
        assert_eq!(refit_none(split, Member::Software("task-clock")), None);
        assert_eq!(
            refit_none(split, Member::Hardware(HardwareEvent::Cycles)),
            None
        );
        assert_eq!(refit_none(split, Member::Leader), None);
    }

    fn refit_none(events: HardwareEvents, member: Member) -> Option<Refit> {
        refit(events, &failure(member))
    }

    #[test]
    /// Needs a PMU: the arm64 guest suite runs it on QEMU's
    /// (`arm64_counter_unit_tests_pass_on_a_real_pmu` in tests/guest.rs).
    fn two_groups_count_and_are_both_checked() -> anyhow::Result<()> {
        let software = probe_software()?;
        let probe = probe_hardware(&software);
        let Some(events) = probe.events else {
            // The split only applies to hardware groups.
            println!("skipped: no hardware PMU here");
            return Ok(());
        };
        let mut counters = WorkerCounters::open(
            Some(HardwareEvents {
                layout: GroupLayout::TwoGroups,
                ..events
            }),
            &software,
        )?;
        counters.enable()?;
        std::hint::black_box((0..100_000u64).sum::<u64>());
        counters.disable()?;
        let values = counters.read()?;
        assert!(values.cycles.is_some_and(|c| c > 0), "{values:?}");
        assert!(values.task_clock_ns > 0, "{values:?}");
        let software = values.software_group.expect("the second group's times");
        assert!(!values.multiplexed(), "{values:?}");
        assert!(software.time_enabled_ns > 0, "{values:?}");
        Ok(())
    }
}
