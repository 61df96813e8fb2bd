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
//! Counters observe the calling thread (pid 0) on any CPU, start disabled,
//! and are never scaled: `time_enabled` and `time_running` are reported as
//! read, and unequal values mean the PMU multiplexed the group.

use std::io;

use anyhow::{Context, bail};
use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Event, Hardware, Software};
use perf_event::{Builder, Counter, Group, GroupData};

use super::clock::duration_nanos;
use super::model::CounterValues;

/// What a hardware PMU that is missing or hidden (ENOENT, EOPNOTSUPP, ENODEV,
/// EINVAL from perf_event_open) means for a measurement.
pub const NO_PMU_REASON: &str = "no hardware PMU visible (typical of a VM): cycles and instructions cannot be counted; falling back to TSC ticks";

const PARANOID_PATH: &str = "/proc/sys/kernel/perf_event_paranoid";

const L1I_READ_MISS: Cache = Cache {
    which: CacheId::L1I,
    operation: CacheOp::READ,
    result: CacheResult::MISS,
};

/// The optional hardware events this PMU counts besides cycles and
/// instructions (which a usable PMU always has). AMD, for one, has no
/// ref-cycles event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HardwareEvents {
    pub ref_cycles: bool,
    pub l1i_misses: bool,
}

/// Opens a group like a worker's on the calling thread: cycles and
/// instructions must open, ref-cycles and L1i read misses may be missing.
/// The error is the reason to show, with the fix where there is one.
pub fn probe_hardware_events() -> Result<HardwareEvents, String> {
    let mut group = Group::new().map_err(|error| explain_hardware("group leader", &error))?;
    for (name, event) in [
        ("cycles", Hardware::CPU_CYCLES),
        ("instructions", Hardware::INSTRUCTIONS),
    ] {
        group
            .add(&hardware_builder(event))
            .map_err(|error| explain_hardware(name, &error))?;
    }
    Ok(HardwareEvents {
        ref_cycles: group
            .add(&hardware_builder(Hardware::REF_CPU_CYCLES))
            .is_ok(),
        l1i_misses: group.add(&hardware_builder(L1I_READ_MISS)).is_ok(),
    })
}

fn explain_hardware(event: &str, error: &io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL) => {
            NO_PMU_REASON.to_string()
        }
        Some(libc::EACCES | libc::EPERM) => format!(
            "hardware counters forbidden: {}; falling back to TSC ticks",
            paranoid_advice(2)
        ),
        _ => {
            format!("cannot open the {event} hardware counter ({error}); falling back to TSC ticks")
        }
    }
}

/// Says what perf_event_paranoid is now and how to allow what needs `level`.
fn paranoid_advice(level: u8) -> String {
    let current = match std::fs::read_to_string(PARANOID_PATH) {
        Ok(text) => format!("{PARANOID_PATH} is {}", text.trim()),
        Err(error) => format!("{PARANOID_PATH} is unreadable ({error})"),
    };
    format!(
        "{current}; this needs {level} or lower (`sysctl kernel.perf_event_paranoid={level}`) or the CAP_PERFMON capability (`setcap cap_perfmon+ep` on the binary)"
    )
}

/// Hardware events count user space only: the kernel is the same for every
/// arm, and user-space counting needs the least privilege.
fn hardware_builder<E: Event>(event: E) -> Builder<'static> {
    let mut builder = Builder::new(event);
    builder.exclude_kernel(true).exclude_hv(true);
    builder
}

/// Software events include the kernel side, where migrations and context
/// switches happen.
fn software_builder(event: Software) -> Builder<'static> {
    let mut builder = Builder::new(event);
    builder.include_kernel();
    builder
}

fn open_software(
    event: Software,
    name: &str,
    group: Option<&mut Group>,
) -> anyhow::Result<Counter> {
    let builder = software_builder(event);
    let opened = match group {
        Some(group) => group.add(&builder),
        None => builder.build(),
    };
    opened.map_err(|error| {
        let advice = match error.raw_os_error() {
            Some(libc::EACCES | libc::EPERM) => format!(": {}", paranoid_advice(1)),
            _ => String::new(),
        };
        anyhow::anyhow!(
            "cannot count the {name} software event on this thread, kernel side included (perf_event_open: {error}){advice}"
        )
    })
}

/// The hardware members of a worker's group.
struct HardwareMembers {
    cycles: Counter,
    instructions: Counter,
    ref_cycles: Option<Counter>,
    l1i_misses: Option<Counter>,
}

/// One worker's counter group, opened on the calling thread.
pub struct WorkerCounters {
    group: Group,
    hardware: Option<HardwareMembers>,
    task_clock: Counter,
    context_switches: Counter,
    cpu_migrations: Counter,
}

impl WorkerCounters {
    /// Opens the group, disabled, on the calling thread. `hardware` is what
    /// [`probe_hardware_events`] found, or `None` for software events only.
    pub fn open(hardware: Option<HardwareEvents>) -> anyhow::Result<WorkerCounters> {
        let mut group = Group::new().context("cannot open a perf counter group on this thread")?;
        let hardware = match hardware {
            Some(events) => Some(open_hardware(&mut group, events)?),
            None => None,
        };
        let task_clock = open_software(Software::TASK_CLOCK, "task-clock", Some(&mut group))?;
        let context_switches = open_software(
            Software::CONTEXT_SWITCHES,
            "context-switches",
            Some(&mut group),
        )?;
        let cpu_migrations =
            open_software(Software::CPU_MIGRATIONS, "cpu-migrations", Some(&mut group))?;
        Ok(WorkerCounters {
            group,
            hardware,
            task_clock,
            context_switches,
            cpu_migrations,
        })
    }

    /// Starts every counter of the group at once (one ioctl).
    pub fn enable(&mut self) -> anyhow::Result<()> {
        self.group
            .enable()
            .context("cannot enable the worker's counter group")
    }

    /// Stops every counter of the group at once (one ioctl).
    pub fn disable(&mut self) -> anyhow::Result<()> {
        self.group
            .disable()
            .context("cannot disable the worker's counter group")
    }

    /// Reads the whole group once, atomically.
    pub fn read(&mut self) -> anyhow::Result<CounterValues> {
        let data = self
            .group
            .read()
            .context("cannot read the worker's counter group")?;
        let value = |counter: &Counter, name: &str| {
            data.get(counter)
                .map(|entry| entry.value())
                .with_context(|| format!("the counter group's read lacks {name}"))
        };
        let optional = |counter: &Option<Counter>, name: &str| {
            counter.as_ref().map(|c| value(c, name)).transpose()
        };
        let (cycles, instructions, ref_cycles, l1i_misses) = match &self.hardware {
            Some(hw) => (
                Some(value(&hw.cycles, "cycles")?),
                Some(value(&hw.instructions, "instructions")?),
                optional(&hw.ref_cycles, "ref-cycles")?,
                optional(&hw.l1i_misses, "L1i read misses")?,
            ),
            None => (None, None, None, None),
        };
        let (time_enabled_ns, time_running_ns) = group_times(&data)?;
        Ok(CounterValues {
            cycles,
            instructions,
            ref_cycles,
            l1i_misses,
            task_clock_ns: value(&self.task_clock, "task-clock")?,
            context_switches: value(&self.context_switches, "context-switches")?,
            cpu_migrations: value(&self.cpu_migrations, "cpu-migrations")?,
            time_enabled_ns,
            time_running_ns,
        })
    }
}

fn open_hardware(group: &mut Group, events: HardwareEvents) -> anyhow::Result<HardwareMembers> {
    let mut open = |name: &str, builder: Builder| {
        group.add(&builder).with_context(|| {
            format!("cannot open the {name} hardware counter, though the probe could")
        })
    };
    Ok(HardwareMembers {
        cycles: open("cycles", hardware_builder(Hardware::CPU_CYCLES))?,
        instructions: open("instructions", hardware_builder(Hardware::INSTRUCTIONS))?,
        ref_cycles: if events.ref_cycles {
            Some(open(
                "ref-cycles",
                hardware_builder(Hardware::REF_CPU_CYCLES),
            )?)
        } else {
            None
        },
        l1i_misses: if events.l1i_misses {
            Some(open("L1i read-miss", hardware_builder(L1I_READ_MISS))?)
        } else {
            None
        },
    })
}

fn group_times(data: &GroupData) -> anyhow::Result<(u64, u64)> {
    match (data.time_enabled(), data.time_running()) {
        (Some(enabled), Some(running)) => Ok((duration_nanos(enabled), duration_nanos(running))),
        _ => bail!("the counter group's read lacks time_enabled/time_running"),
    }
}

/// The calling thread's task-clock (kernel side included): how much CPU time
/// the dispatcher itself used while its workers ran.
pub struct ThreadTaskClock {
    counter: Counter,
}

impl ThreadTaskClock {
    /// Opens the counter, disabled, on the calling thread.
    pub fn open() -> anyhow::Result<ThreadTaskClock> {
        Ok(ThreadTaskClock {
            counter: open_software(Software::TASK_CLOCK, "task-clock", None)?,
        })
    }

    /// Zeroes and starts the counter.
    pub fn start(&mut self) -> anyhow::Result<()> {
        self.counter
            .reset()
            .context("cannot reset the task-clock counter")?;
        self.counter
            .enable()
            .context("cannot enable the task-clock counter")
    }

    /// Stops the counter and returns the nanoseconds counted since `start`.
    pub fn stop(&mut self) -> anyhow::Result<u64> {
        self.counter
            .disable()
            .context("cannot disable the task-clock counter")?;
        self.counter
            .read()
            .context("cannot read the task-clock counter")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn software_group_counts_this_thread() -> anyhow::Result<()> {
        let mut counters = WorkerCounters::open(None)?;
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
        let mut clock = ThreadTaskClock::open()?;
        clock.start()?;
        std::thread::sleep(std::time::Duration::from_millis(5));
        let asleep = clock.stop()?;
        assert!(asleep < 2_000_000, "sleeping used {asleep} ns of CPU");
        Ok(())
    }

    #[test]
    fn paranoid_advice_names_the_file_and_the_fixes() {
        let advice = paranoid_advice(2);
        assert!(advice.starts_with(PARANOID_PATH), "{advice}");
        assert!(advice.contains("kernel.perf_event_paranoid=2"), "{advice}");
        assert!(advice.contains("CAP_PERFMON"), "{advice}");
    }

    #[test]
    fn missing_pmu_errors_read_as_no_pmu() {
        for errno in [libc::ENOENT, libc::EOPNOTSUPP, libc::ENODEV, libc::EINVAL] {
            let reason = explain_hardware("cycles", &io::Error::from_raw_os_error(errno));
            assert_eq!(reason, NO_PMU_REASON);
        }
        let forbidden = explain_hardware("cycles", &io::Error::from_raw_os_error(libc::EACCES));
        assert!(forbidden.contains("perf_event_paranoid"), "{forbidden}");
    }
}
