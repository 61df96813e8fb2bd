//! `observe`'s recorder: where the kernel ran a workload's threads, from
//! perf's context-switch records, never from polling `/proc`.
//!
//! For every CPU, and every followed thread, one `task-clock` event is
//! opened with `context_switch`, `task` and `comm` side-band records, and
//! `sample_id_all` stamping each record with thread, CPU and
//! CLOCK_MONOTONIC time. It samples nothing: the ring buffer carries only
//! the side-band records (a switch in or out, a fork, an exit, a new name),
//! and the event's count is the thread's `task-clock` on that CPU, counted
//! independently of the records, which is what the residency is checked
//! against. With `inherit`, every child and thread created later gets
//! copies that write to the same buffers, and the kernel folds a copy's
//! counts into its parent's when the copy's thread exits.
//!
//! One ring buffer per CPU: the other threads' events on that CPU write
//! into it (`PERF_EVENT_IOC_SET_OUTPUT`). Where a PMU counts, a `cycles`
//! event per CPU and thread gives the busy frequency (cycles ÷ task-clock).

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use perf_event::events::Software;
use perf_event::{Builder, Clock, Counter, ReadFormat, SampleFlag, Sampler};

use super::counters::{cycles_builder, paranoid_advice};
use super::engine::core_pmu_type;
use super::kernel::{InputBuffer, StopFlag, kernel_by_name};
use super::launch::{Foreground, HeldCommand};
use super::recording::{
    CommandEnd, CpuCounts, ParsedRecord, Recording, SchedEvent, SchedEventKind, ThreadName,
    parse_record,
};
use super::stop;
use super::tree::{OnStop, Supervisor, Tree};
use crate::affinity::pin_current_thread;
use crate::probe::{CorePmu, SysfsRoot};

/// What `observe` follows.
#[derive(Clone, Debug, PartialEq)]
pub enum ObserveTarget {
    /// Run this command (program and arguments) and follow its process tree.
    Command(Vec<OsString>),
    /// Attach to this running process: its threads, and their children
    /// from now on.
    Pid(u32),
    /// Run the built-in kernel on this many unpinned threads.
    Kernel { kernel: String, threads: usize },
}

/// A recording's options, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordOptions {
    pub target: ObserveTarget,
    /// How long to record: required for `--kernel`; for `--pid`, at most
    /// this long; a command is followed until it exits.
    pub duration: Option<Duration>,
    /// The CPUs to open events on: every online CPU.
    pub cpus: Vec<u32>,
    /// The core PMUs, so each CPU's cycles event names its own.
    pub core_pmus: Vec<CorePmu>,
    /// Count cycles (false with `--no-hardware-counters`).
    pub cycles: bool,
    /// `--leave-running`: what of a command's tree outlives it is named,
    /// not stopped.
    pub leave_running: bool,
}

/// Records a workload: the engine behind `observe`, and in tests a
/// recording replayed.
pub trait Record {
    /// Records as `options` say, calling `elapsed` with the time recorded
    /// so far each time it wakes (at most a second apart) while it follows
    /// a process or runs the kernel. Not for a command: that one owns the
    /// terminal, and a progress line would mix with its output.
    fn record(
        &mut self,
        options: &RecordOptions,
        elapsed: &mut dyn FnMut(Duration),
    ) -> Result<Recording>;
}

/// The real recorder: perf events on the live kernel.
pub struct PerfRecorder;

impl Record for PerfRecorder {
    fn record(
        &mut self,
        options: &RecordOptions,
        elapsed: &mut dyn FnMut(Duration),
    ) -> Result<Recording> {
        match &options.target {
            ObserveTarget::Command(argv) => record_command(argv, options),
            ObserveTarget::Pid(pid) => record_pid(*pid, options, elapsed),
            ObserveTarget::Kernel { kernel, threads } => {
                record_kernel(kernel, *threads, options, elapsed)
            }
        }
    }
}

/// Bytes of ring buffer per CPU (a power of two): room for about 16 000
/// switch records between two drains.
const RING_BYTES: usize = 512 * 1024;

/// The longest wait between two looks at the target. The observer wakes
/// sooner when a ring is half full, the target exits (a pidfd), the
/// deadline comes or a signal arrives; otherwise it stays off the CPUs it
/// watches, since each wake-up takes a CPU from the workload.
const POLL: Duration = Duration::from_secs(1);

/// CLOCK_MONOTONIC now, ns: the records' clock.
fn monotonic_ns() -> u64 {
    let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .expect("CLOCK_MONOTONIC is always readable");
    now.tv_sec() as u64 * 1_000_000_000 + now.tv_nsec() as u64
}

fn midpoint(a: u64, b: u64) -> u64 {
    a + (b.saturating_sub(a)) / 2
}

/// How the events attach to their threads.
#[derive(Clone, Copy)]
struct Attach {
    /// Start counting at the thread's exec (a held command).
    on_exec: bool,
}

/// Whether the events count the kernel side too: where
/// perf_event_paranoid is 2 (without CAP_PERFMON) the kernel allows a
/// user's own threads to be followed only user-side. The switch, fork and
/// comm records come all the same, and task-clock still counts the whole
/// run time (it is the scheduler's, not a sampled count); only cycles
/// would lose the kernel side, so they are left out there.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    KernelIncluded,
    UserOnly,
}

/// Every event `observe` opened, and what its buffers gave so far.
struct OpenEvents {
    /// One ring per CPU, on the first thread's event there.
    rings: Vec<(u32, Sampler)>,
    /// Every task-clock event by CPU (the rings' own included, by index).
    task_clocks: Vec<(u32, Counter)>,
    cycles: Vec<(u32, Counter)>,
    cycles_unavailable: Option<String>,
    events: Vec<SchedEvent>,
    lost: u64,
}

/// Whether permissions refused an event (EACCES, EPERM).
pub(super) fn refused(error: &io::Error) -> bool {
    matches!(error.raw_os_error(), Some(libc::EACCES | libc::EPERM))
}

/// perf_event_open's refusal, in one line with the fix.
fn open_error(error: io::Error, tid: u32) -> anyhow::Error {
    if refused(&error) {
        return anyhow::anyhow!(
            "perf_event_open refused to follow thread {tid} ({error}): {}; \
             a process of another user also needs CAP_SYS_PTRACE",
            paranoid_advice(2)
        );
    }
    match error.raw_os_error() {
        Some(libc::ESRCH) => anyhow::anyhow!("thread {tid} exited before it could be followed"),
        Some(libc::EMFILE) => anyhow::anyhow!(
            "out of file descriptors following thread {tid} (one per thread per CPU): \
             raise the limit (`ulimit -n`)"
        ),
        _ => anyhow::anyhow!("perf_event_open for thread {tid}: {error}"),
    }
}

impl OpenEvents {
    /// Opens the events on `tids` on every CPU of `options`, disabled.
    fn open(tids: &[u32], options: &RecordOptions, attach: Attach) -> Result<OpenEvents> {
        raise_fd_limit();
        let mut open = OpenEvents {
            rings: Vec::new(),
            task_clocks: Vec::new(),
            cycles: Vec::new(),
            cycles_unavailable: (!options.cycles)
                .then(|| "cycles not counted (--no-hardware-counters)".to_string()),
            events: Vec::new(),
            lost: 0,
        };
        let mut side = Side::KernelIncluded;
        for &cpu in &options.cpus {
            for (index, &tid) in tids.iter().enumerate() {
                let counter = match switch_events(tid, cpu, attach, side).build() {
                    Err(error) if side == Side::KernelIncluded && refused(&error) => {
                        side = Side::UserOnly;
                        if open.cycles_unavailable.is_none() {
                            open.cycles_unavailable = Some(format!(
                                "cycles not counted: perf_event_open allows only the user side \
                                 here ({}), and cycles without the kernel side would understate \
                                 the busy frequency",
                                paranoid_advice(1)
                            ));
                        }
                        switch_events(tid, cpu, attach, side).build()
                    }
                    opened => opened,
                }
                .map_err(|e| open_error(e, tid))?;
                if index == 0 {
                    let ring = counter
                        .sampled(RING_BYTES)
                        .with_context(|| format!("mapping the ring buffer of CPU {cpu}"))?;
                    open.rings.push((cpu, ring));
                } else {
                    let (_, ring) = open.rings.last().expect("the first thread opened a ring");
                    set_output(&counter, ring)
                        .with_context(|| format!("sharing CPU {cpu}'s ring buffer"))?;
                    open.task_clocks.push((cpu, counter));
                }
                if open.cycles_unavailable.is_none() {
                    let pmu = core_pmu_type(&options.core_pmus, cpu);
                    match cycles_events(tid, cpu, attach, pmu).build() {
                        Ok(counter) => open.cycles.push((cpu, counter)),
                        Err(error) => {
                            open.cycles_unavailable = Some(cycles_reason(&error));
                            open.cycles.clear();
                        }
                    }
                }
            }
        }
        Ok(open)
    }

    /// Opens one CPU-wide switch event (every task, the idle one
    /// included) on each of `cpus`, enabled at once: where the tree's
    /// siblings ran something else. The kernel allows it only at
    /// perf_event_paranoid 0 or below, or with CAP_PERFMON.
    fn cpu_wide(cpus: &[u32]) -> Result<OpenEvents> {
        let mut open = OpenEvents {
            rings: Vec::new(),
            task_clocks: Vec::new(),
            cycles: Vec::new(),
            cycles_unavailable: Some("cycles not counted CPU-wide".to_string()),
            events: Vec::new(),
            lost: 0,
        };
        for &cpu in cpus {
            let mut builder = Builder::new(Software::DUMMY);
            builder
                .any_pid()
                .one_cpu(cpu as usize)
                .enabled(true)
                .context_switch(true)
                .wakeup_watermark(RING_BYTES / 2)
                .sample_id_all(true)
                .sample(SampleFlag::TID | SampleFlag::TIME | SampleFlag::CPU)
                .clockid(Clock::MONOTONIC);
            let ring = builder
                .build()
                .map_err(|error| match refused(&error) {
                    true => anyhow::anyhow!(
                        "perf_event_open refused CPU-wide records of CPU {cpu} ({error}): {}",
                        paranoid_advice(0)
                    ),
                    false => anyhow::anyhow!("perf_event_open CPU-wide on CPU {cpu}: {error}"),
                })?
                .sampled(RING_BYTES)
                .with_context(|| format!("mapping the CPU-wide ring buffer of CPU {cpu}"))?;
            open.rings.push((cpu, ring));
        }
        Ok(open)
    }

    /// Enables every event at once, and returns when (CLOCK_MONOTONIC ns):
    /// one prctl enables all the events this thread opened inside the
    /// kernel, where a loop of ioctls could be preempted half-way and leave
    /// a running thread's first stretch longer than its task-clock.
    fn enable(&mut self) -> Result<u64> {
        let before = monotonic_ns();
        // SAFETY: prctl with this option takes no pointers.
        if unsafe { libc::prctl(libc::PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0) } == -1 {
            return Err(io::Error::last_os_error()).context("enabling the observe events");
        }
        Ok(midpoint(before, monotonic_ns()))
    }

    /// Disables every event at once (see [`OpenEvents::enable`]), and
    /// returns when.
    fn disable(&mut self) -> u64 {
        let before = monotonic_ns();
        // SAFETY: as in `enable`.
        unsafe { libc::prctl(libc::PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0) };
        midpoint(before, monotonic_ns())
    }

    /// Every task-clock event, the rings' own first, with its CPU.
    fn task_clock_counters(&mut self) -> impl Iterator<Item = (u32, &mut Counter)> {
        let rings = self.rings.iter_mut().map(|(cpu, ring)| (*cpu, &mut **ring));
        let others = self.task_clocks.iter_mut().map(|(cpu, c)| (*cpu, c));
        rings.chain(others)
    }

    /// Reads every record waiting in the rings.
    fn drain(&mut self) {
        for (_, ring) in &mut self.rings {
            while let Some(record) = ring.next_record() {
                match parse_record(record.ty(), record.misc(), &record.to_contiguous()) {
                    Some(ParsedRecord::Event(event)) => self.events.push(event),
                    Some(ParsedRecord::Lost(count)) => self.lost += count,
                    None => {}
                }
            }
        }
    }

    /// Drains the rings and reads the counts: the recording, but for its
    /// times, names and the command's end.
    fn finish(mut self, start_ns: u64, end_ns: u64) -> Result<Recording> {
        self.drain();
        let mut per_cpu: Vec<CpuCounts> = Vec::new();
        for (cpu, counter) in self.task_clock_counters() {
            let count = counter.read().context("reading task-clock")?;
            entry(&mut per_cpu, cpu).task_clock_ns += count;
        }
        for (cpu, counter) in &mut self.cycles {
            let data = counter.read_full().context("reading cycles")?;
            let slot = entry(&mut per_cpu, *cpu);
            let add =
                |total: &mut Option<u64>, value: u64| *total = Some(total.unwrap_or(0) + value);
            add(&mut slot.cycles, data.count());
            let nanos = |d: Option<Duration>| d.map_or(0, |d| d.as_nanos() as u64);
            add(&mut slot.cycles_enabled_ns, nanos(data.time_enabled()));
            add(&mut slot.cycles_running_ns, nanos(data.time_running()));
        }
        per_cpu.sort_by_key(|c| c.cpu);
        self.events.sort_by_key(|e| e.time_ns);
        Ok(Recording {
            start_ns,
            end_ns,
            events: self.events,
            names: Vec::new(),
            per_cpu,
            cycles_unavailable: self.cycles_unavailable,
            lost_records: self.lost,
            command: None,
            stopped: false,
            outlivers: Vec::new(),
        })
    }
}

fn entry(per_cpu: &mut Vec<CpuCounts>, cpu: u32) -> &mut CpuCounts {
    if let Some(index) = per_cpu.iter().position(|c| c.cpu == cpu) {
        return &mut per_cpu[index];
    }
    per_cpu.push(CpuCounts {
        cpu,
        task_clock_ns: 0,
        cycles: None,
        cycles_enabled_ns: None,
        cycles_running_ns: None,
    });
    per_cpu.last_mut().expect("just pushed")
}

/// `builder` on `tid` (and, inherited, every thread it creates) on `cpu`,
/// kernel side included where `side` says, disabled until enabled all at
/// once (or until the exec of a held command).
fn attached(
    mut builder: Builder<'static>,
    tid: u32,
    cpu: u32,
    attach: Attach,
    side: Side,
) -> Builder<'static> {
    builder
        .observe_pid(tid as libc::pid_t)
        .one_cpu(cpu as usize)
        .exclude_kernel(side == Side::UserOnly)
        .enabled(false)
        .inherit(true)
        .enable_on_exec(attach.on_exec);
    builder
}

/// The task-clock event that carries the switch records of `tid` on `cpu`.
fn switch_events(tid: u32, cpu: u32, attach: Attach, side: Side) -> Builder<'static> {
    let mut builder = attached(Builder::new(Software::TASK_CLOCK), tid, cpu, attach, side);
    builder
        .context_switch(true)
        .task(true)
        .comm(true)
        .comm_exec(true)
        .wakeup_watermark(RING_BYTES / 2)
        .sample_id_all(true)
        .sample(SampleFlag::TID | SampleFlag::TIME | SampleFlag::CPU)
        .clockid(Clock::MONOTONIC);
    builder
}

/// Cycles of `tid` on `cpu`, kernel side included: the busy frequency is
/// over all of the thread's time on the CPU.
fn cycles_events(tid: u32, cpu: u32, attach: Attach, pmu: Option<u32>) -> Builder<'static> {
    let mut builder = attached(cycles_builder(pmu), tid, cpu, attach, Side::KernelIncluded);
    builder.read_format(ReadFormat::TOTAL_TIME_ENABLED | ReadFormat::TOTAL_TIME_RUNNING);
    builder
}

fn cycles_reason(error: &io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL) => {
            format!("no hardware PMU visible (typical of a VM; perf_event_open: {error})")
        }
        _ => format!("cannot count cycles ({error}): no busy frequency"),
    }
}

/// Sends `counter`'s records to `ring`'s buffer.
fn set_output(counter: &Counter, ring: &Sampler) -> io::Result<()> {
    // SAFETY: both are open perf event fds, on the same CPU.
    let result =
        unsafe { perf_event_open_sys::ioctls::SET_OUTPUT(counter.as_raw_fd(), ring.as_raw_fd()) };
    if result == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// One event per thread per CPU: lift the soft descriptor limit to the
/// hard one, as `perf` does.
fn raise_fd_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((_, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    }
}

/// Drains the rings, then waits (see [`wait_for_records`]).
fn drain_and_wait(events: &mut OpenEvents, wake: Option<BorrowedFd>, timeout: Duration) {
    events.drain();
    wait_for_records(&[events], wake, timeout);
}

/// Waits until a ring of `events` is half full, `wake` is readable (the
/// target exited), a signal arrives, or `timeout` (at most [`POLL`])
/// passes; true when a ring is half full.
fn wait_for_records(events: &[&OpenEvents], wake: Option<BorrowedFd>, timeout: Duration) -> bool {
    let rings: Vec<RawFd> = events
        .iter()
        .flat_map(|events| events.rings.iter().map(|(_, ring)| ring.as_raw_fd()))
        .collect();
    let mut fds: Vec<libc::pollfd> = rings
        .iter()
        .copied()
        .chain(wake.map(|fd| fd.as_raw_fd()))
        .map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let timeout_ms = timeout.as_millis().clamp(1, POLL.as_millis()) as i32;
    // SAFETY: `fds` is a valid array of open descriptors for the call.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    fds[..rings.len()]
        .iter()
        .any(|fd| fd.revents & libc::POLLIN != 0)
}

/// A descriptor that becomes readable when process `pid` exits, where the
/// kernel has pidfds (5.3+); otherwise the wait just times out.
pub(super) fn exit_notice(pid: u32) -> Option<OwnedFd> {
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).ok()?)?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

/// `observe -- COMMAND`: the command is forked, held before its exec while
/// the events attach (counting from the exec on), released, and followed
/// until it exits. A stop signal is passed on to its whole tree: the
/// command decides when it ends, and its end is recorded (a second signal
/// kills the tree). What of its tree outlives it is named and stopped,
/// unless `leave_running` ([`Tree::stop_outlivers`]).
fn record_command(argv: &[OsString], options: &RecordOptions) -> Result<Recording> {
    let mut held = HeldCommand::fork(argv)?;
    let tree = Tree::of(held.pid);
    // It runs on this terminal: in the foreground, as it would without
    // the tool (Ctrl-C at the terminal then reaches it directly).
    let foreground = Foreground::give(held.pid);
    let tid = held.pid.as_raw() as u32;
    let mut events = OpenEvents::open(&[tid], options, Attach { on_exec: true })?;
    let start_ns = monotonic_ns();
    held.release()?;
    let exited = exit_notice(tid);
    let mut supervisor = Supervisor::new(OnStop::LetItEnd, None);
    let end = loop {
        if let Some(end) = held.try_wait()? {
            break end;
        }
        supervisor.tend(&tree);
        drain_and_wait(&mut events, exited.as_ref().map(AsFd::as_fd), POLL);
    };
    drop(foreground);
    let (outlivers, _) = tree.stop_outlivers(Instant::now(), options.leave_running);
    let mut recording = events.finish(start_ns, monotonic_ns())?;
    // The command ended at its exit, not when this loop noticed.
    if let Some(exit) = recording
        .events
        .iter()
        .find(|e| e.tid == tid && e.kind == SchedEventKind::Exit)
    {
        recording.end_ns = exit.time_ns;
    }
    recording.command = Some(end);
    recording.outlivers = outlivers;
    Ok(recording)
}

/// The context-switch records of one repetition of `run -- COMMAND`: the
/// events `observe -- COMMAND` opens, on every CPU the command could reach
/// (a program may change its own affinity), for the placement and
/// co-residency checks (`judge::command`).
///
/// They are opened on the held child, so the opening is outside the
/// repetition's wall time, and count from its exec. While the command runs
/// the rings are read only when one is half full (the kernel wakes the
/// waiter at half of the 512 KiB); otherwise only once the command was
/// reaped, so a command of a few seconds costs the measurement nothing
/// but the kernel's writing of its records. A ring the reader could not
/// keep up with drops records, counted in [`Recording::lost_records`],
/// which makes the checks unavailable.
///
/// The CPUs that share a core with the arm's CPUs are also watched whole
/// (CPU-wide switch records of every task), for the share of the time
/// their sibling ran something else; where the kernel refuses that, only
/// that share is unavailable.
pub struct TreeRecords {
    events: OpenEvents,
    siblings: Result<OpenEvents, String>,
    pid: u32,
    opened_ns: u64,
}

impl TreeRecords {
    /// Opens the events on the held process `pid` and everything it will
    /// create, on each of `cpus`, counting from its exec (no cycles: the
    /// checks need only where and when the threads ran), and CPU-wide ones
    /// on each of `siblings`.
    pub fn open(pid: u32, cpus: &[u32], siblings: &[u32]) -> Result<TreeRecords> {
        let options = RecordOptions {
            target: ObserveTarget::Pid(pid),
            duration: None,
            cpus: cpus.to_vec(),
            core_pmus: Vec::new(),
            cycles: false,
            leave_running: false,
        };
        let events = OpenEvents::open(&[pid], &options, Attach { on_exec: true })?;
        let watched = OpenEvents::cpu_wide(siblings).map_err(|error| format!("{error:#}"));
        if watched.is_ok() {
            visit(siblings);
        }
        Ok(TreeRecords {
            events,
            siblings: watched,
            pid,
            opened_ns: monotonic_ns(),
        })
    }

    /// Waits until a ring is half full (and reads the rings then), `wake`
    /// is readable (the command exited), a signal arrives, or `timeout`
    /// (at most a second) passes.
    pub fn wait(&mut self, wake: Option<BorrowedFd>, timeout: Duration) {
        let mut all = vec![&self.events];
        all.extend(self.siblings.as_ref().ok());
        if wait_for_records(&all, wake, timeout) {
            self.events.drain();
            if let Ok(siblings) = &mut self.siblings {
                siblings.drain();
            }
        }
    }

    /// The tree's recording, once the command was reaped (it ended as
    /// `end`): from the command's exec to its exit, as their records stamp
    /// them; and the siblings' CPU-wide one, or why there is none.
    pub fn finish(self, end: CommandEnd) -> Result<(Recording, Result<Recording, String>)> {
        let end_ns = monotonic_ns();
        let siblings = match self.siblings {
            Ok(siblings) => Ok(siblings.finish(self.opened_ns, end_ns)?),
            Err(reason) => Err(reason),
        };
        let mut recording = self.events.finish(self.opened_ns, end_ns)?;
        let own = || recording.events.iter().filter(|e| e.tid == self.pid);
        let exec = own().find(|e| matches!(e.kind, SchedEventKind::Comm { exec: true, .. }));
        let exit = own().find(|e| e.kind == SchedEventKind::Exit);
        let (start_ns, end_ns) = (exec.map(|e| e.time_ns), exit.map(|e| e.time_ns));
        recording.start_ns = start_ns.unwrap_or(recording.start_ns);
        recording.end_ns = end_ns.unwrap_or(recording.end_ns);
        recording.command = Some(end);
        Ok((recording, siblings))
    }
}

/// Runs a thread on each of `cpus` in turn, so that each CPU-wide ring
/// starts with the switch-out of what ran there: a task that runs all
/// along without switching writes no record of its own. A CPU this
/// process may not run on is not visited.
fn visit(cpus: &[u32]) {
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for &cpu in cpus {
                let _ = pin_current_thread(cpu);
            }
        });
    });
}

/// The threads of process `pid`, with their names, read once at attach
/// (the records follow every thread created after).
fn threads_of(pid: u32) -> Result<Vec<ThreadName>> {
    let tasks = format!("/proc/{pid}/task");
    let entries = std::fs::read_dir(&tasks).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => {
            anyhow::anyhow!("--pid {pid}: no such process (check the number with `ps -p {pid}`)")
        }
        _ => anyhow::anyhow!("--pid {pid}: cannot list {tasks}: {e}"),
    })?;
    let proc = SysfsRoot::live();
    let mut threads: Vec<ThreadName> = entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .map(|tid: u32| ThreadName {
            tid,
            comm: proc
                .read_text(&format!("proc/{pid}/task/{tid}/comm"))
                .ok()
                .flatten()
                .unwrap_or_default(),
        })
        .collect();
    threads.sort_by_key(|t| t.tid);
    if threads.is_empty() {
        bail!("--pid {pid}: the process has no threads left (it is exiting)");
    }
    Ok(threads)
}

/// `observe --pid PID`: follows the process's threads (and their children
/// from now on) until it exits, `--seconds` pass, or a stop signal (the
/// normal end without `--seconds`).
fn record_pid(
    pid: u32,
    options: &RecordOptions,
    elapsed: &mut dyn FnMut(Duration),
) -> Result<Recording> {
    let names = threads_of(pid)?;
    let tids: Vec<u32> = names.iter().map(|t| t.tid).collect();
    let mut events = OpenEvents::open(&tids, options, Attach { on_exec: false })?;
    let exited = exit_notice(pid);
    let start_ns = events.enable()?;
    let started = Instant::now();
    let alive = || nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None).is_ok();
    while alive()
        && !stop::stop_requested()
        && options.duration.is_none_or(|d| started.elapsed() < d)
    {
        let left = options
            .duration
            .map_or(POLL, |d| d.saturating_sub(started.elapsed()));
        drain_and_wait(&mut events, exited.as_ref().map(AsFd::as_fd), left);
        elapsed(started.elapsed());
    }
    let end_ns = events.disable();
    let mut recording = events.finish(start_ns, end_ns)?;
    recording.names = names;
    // Without --seconds a stop signal is how the observation ends.
    recording.stopped = options.duration.is_some() && stop::stop_requested();
    Ok(recording)
}

/// `observe --kernel NAME --threads K --seconds N`: K threads of this
/// process run the kernel, unpinned, for N seconds. They start blocked, so
/// each one's first run is a recorded switch-in.
///
/// The N seconds are one deadline for all of them, and the workers keep
/// it themselves: with many more threads than CPUs, a thread (this one
/// included) that is runnable at the deadline may wait a whole round of
/// time slices (1024 threads on two CPUs: over a second) before it runs.
/// So the first worker to see the deadline stops every running kernel
/// within its 128-byte block, a worker scheduled after it exits at once,
/// and the queue drains in microseconds per thread; this thread, asleep
/// until the deadline, then ends the recording.
fn record_kernel(
    name: &str,
    threads: usize,
    options: &RecordOptions,
    elapsed: &mut dyn FnMut(Duration),
) -> Result<Recording> {
    let kernel = kernel_by_name(name)?;
    let duration = options.duration.context("--kernel needs --seconds")?;
    // A buffer that stays in L1d, and blocks of about a millisecond, so a
    // stop or the deadline is seen at once.
    const BUFFER_BYTES: usize = 16 * 1024;
    const PASSES_PER_BLOCK: u64 = 64;
    kernel.check_buffer(BUFFER_BYTES)?;
    let input = InputBuffer::new(BUFFER_BYTES);
    let ready = std::sync::Barrier::new(threads + 1);
    // Held by this thread until the start: releasing it wakes every worker
    // at once and never makes this thread wait its turn behind them, as a
    // barrier would (with 1024 workers on two CPUs, for seconds).
    let go = std::sync::RwLock::new(());
    let start_gate = go.write().expect("a new lock");
    // Set before the workers are released; left unset when the events
    // could not be opened, which tells the released workers to return.
    let deadline = std::sync::OnceLock::new();
    // Requested at the deadline or on a stop signal; the workers' kernels
    // watch it inside their loop.
    let time_up = StopFlag::new();
    let (tid_sender, tid_receiver) = std::sync::mpsc::channel();
    std::thread::scope(|scope| -> Result<Recording> {
        let mut workers = Vec::new();
        for _ in 0..threads {
            let (kernel, input, time_up) = (&kernel, &input, &time_up);
            let deadline = &deadline;
            let (ready, go) = (&ready, &go);
            let tid_sender = tid_sender.clone();
            workers.push(scope.spawn(move || {
                let _ = tid_sender.send(nix::unistd::gettid().as_raw() as u32);
                ready.wait();
                drop(go.read());
                let Some(&deadline) = deadline.get() else {
                    return;
                };
                while !time_up.is_requested() && !stop::stop_requested() {
                    if Instant::now() >= deadline {
                        time_up.request();
                        break;
                    }
                    kernel.run(input.as_bytes(), PASSES_PER_BLOCK, time_up);
                }
            }));
        }
        drop(tid_sender);
        ready.wait();
        let mut tids: Vec<u32> = tid_receiver.iter().take(threads).collect();
        tids.sort_unstable();
        let opened = OpenEvents::open(&tids, options, Attach { on_exec: false });
        // The workers wait at `go` whatever happened: released, they never hang.
        let (mut events, start_ns) = match opened
            .and_then(|mut events| events.enable().map(|start_ns| (events, start_ns)))
        {
            Ok(opened) => opened,
            Err(error) => {
                drop(start_gate);
                return Err(error);
            }
        };
        let deadline = *deadline.get_or_init(|| Instant::now() + duration);
        drop(start_gate);
        while !stop::stop_requested() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            drain_and_wait(&mut events, None, left);
            elapsed(duration.saturating_sub(deadline.saturating_duration_since(Instant::now())));
        }
        // The time is up (or a stop was asked for): the recording ends
        // here, before the workers' teardown (thread exit is not the
        // workload).
        time_up.request();
        let end_ns = events.disable();
        for worker in workers {
            let _ = worker.join();
        }
        let mut recording = events.finish(start_ns, end_ns)?;
        recording.names = tids
            .iter()
            .map(|&tid| ThreadName {
                tid,
                comm: format!("{name} worker"),
            })
            .collect();
        recording.stopped = stop::stop_requested();
        Ok(recording)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_setting_the_capabilities_and_the_fix() {
        let error = open_error(io::Error::from_raw_os_error(libc::EACCES), 42).to_string();
        for needed in [
            "thread 42",
            "/proc/sys/kernel/perf_event_paranoid",
            "sysctl kernel.perf_event_paranoid=2",
            "CAP_PERFMON",
            "CAP_SYS_PTRACE",
        ] {
            assert!(error.contains(needed), "no {needed:?} in: {error}");
        }
        assert!(!error.contains('\n'));
        let gone = open_error(io::Error::from_raw_os_error(libc::ESRCH), 7).to_string();
        assert_eq!(gone, "thread 7 exited before it could be followed");
    }
}
