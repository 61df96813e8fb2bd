//! One repetition of `run -- COMMAND` (issue 24; the design is in
//! [`crate::plan::command`]): the command run once, confined to one arm's
//! CPUs, and measured as a whole process tree.
//!
//! The command is forked and held before its exec ([`HeldCommand`]); its
//! affinity is set on the held child, so every thread and child it makes
//! inherits the arm's CPUs, and its counters attach with `inherit` and
//! `enable_on_exec`, so they count the exec'd program and its whole tree,
//! not this process's preparation. Standard input is `/dev/null`; its
//! output goes to `/dev/null` unless inherited; stderr, when not
//! inherited, goes through a pipe of which the last [`STDERR_TAIL_BYTES`]
//! are kept for the error a failed repetition gives.
//!
//! The tree's task-clock, context switches and migrations are perf
//! software events with their kernel side, as the kernel's workers count
//! them ([`super::counters`]); where perf_event_paranoid refuses them, the
//! rusage `wait4` returns (the child with every descendant it waited for)
//! gives the task-clock and context switches, and migrations are not
//! counted. The wall time is CLOCK_MONOTONIC (`Instant`) from the release
//! of the held child to its reaping.
//!
//! Where the tree ran is recorded as `observe -- COMMAND` records it: its
//! context-switch records on every online CPU ([`TreeRecords`]), opened on
//! the held child and read when it was reaped (or sooner, where a ring
//! fills), for the placement and co-residency checks of `judge::command`;
//! and the CPU-wide switch records of the CPUs that share a core with the
//! arm's CPUs ([`SiblingRecords`]), for the share of time a sibling ran
//! something else (they need perf_event_paranoid 0 or CAP_PERFMON; without
//! them only that share is unavailable).
//! The tree's records cost the kernel two records per context switch:
//! about 0.7 µs per switch in a KVM guest, so a pipeline switching 400 000
//! times a second ran 40 % slower, and a program switching a few thousand
//! times a second well under 1 %. Where they cannot be opened
//! (perf_event_paranoid above 2 without CAP_PERFMON, out of descriptors),
//! the repetition is measured all the same and
//! [`PlacementRecords::Unavailable`] says why.
//!
//! Where a PMU counts, the tree's user-space cycles and user-space
//! instructions are counted as well ([`TreeHardware`]), opened as the
//! software events are (`inherit`, `enable_on_exec`, on the held child, on
//! any CPU), each event a counter of its own (the kernel will not read an
//! inherited group), read with its `time_enabled` and `time_running`, never
//! scaled. On a machine with a core PMU per kind of core (`cpu_core` and
//! `cpu_atom`), a generic event counts only while the tree runs on the
//! CPUs of the one PMU it landed on, so each PMU whose CPUs the arm holds
//! gets its own pair, named, and the judge sums them. Where no PMU counts
//! (ENOENT, EOPNOTSUPP: typical of a VM) or perf refuses hardware events,
//! they are absent with the reason, and the repetition is measured all the
//! same.
//!
//! To do (see the plan module): `--output FILE`.

use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use perf_event::events::Software;
use perf_event::{Builder, Counter};
use serde::{Deserialize, Serialize};

use super::counters::{hardware_builder, paranoid_advice};
use super::model::{GroupTimes, HardwareEvent};

use super::launch::{ChildStdio, HeldCommand};
use super::recorder::{TreeRecords, exit_notice, refused};
use super::recording::{CommandEnd, Recording};
use super::tree::{OUTLIVER_GRACE, OnStop, Outliver, Reaped, Supervisor, Tree};
use crate::affinity::confine_process;
use crate::cpuset::CpuSet;
use crate::plan::command::CommandArm;
use crate::probe::{CorePmu, Topology};

/// How much of the end of a failing command's stderr is kept.
pub const STDERR_TAIL_BYTES: usize = 4096;
/// How many of its last lines the error quotes.
pub const STDERR_TAIL_LINES: usize = 5;
/// How often the wait looks for a stop signal to pass on.
pub(super) const POLL: Duration = Duration::from_millis(100);
/// How long a failed command's stderr may take to reach its end after the
/// command was reaped.
const STDERR_GRACE: Duration = Duration::from_secs(1);

/// Where the command's output goes; saved as `--output` spells it
/// (`"null"`, `"inherit"`, or `{"file": PATH}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Output {
    /// `/dev/null` for stdout; stderr through a pipe, its end kept
    /// (`--output null`).
    #[serde(rename = "null")]
    Discard,
    /// This process's stdout and stderr (`--output inherit`).
    Inherit,
    /// A regular file (checked by `options`) that each repetition's stdout
    /// rewrites, as hyperfine's `--output FILE` does, so it ends holding
    /// the last repetition's output, there to be checked; stderr as for
    /// [`Output::Discard`].
    File(PathBuf),
}

/// Where the tree's software counts came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "source", rename_all = "kebab-case")]
pub enum TreeCounterSource {
    /// perf software events with `inherit`.
    PerfInherit,
    /// The rusage of the reaped children; `reason` says why perf was not
    /// used.
    Rusage { reason: String },
}

/// One run of the command in one arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommandSample {
    /// Release to reaping, ns: the cost.
    pub wall_ns: u64,
    /// CPU time of the whole tree (user and kernel), ns.
    pub task_clock_ns: u64,
    pub context_switches: u64,
    /// `None` where only rusage counted (it has no migrations).
    pub migrations: Option<u64>,
    pub counters: TreeCounterSource,
    /// The tree's user-space cycles and instructions, or why there are
    /// none (a document saved before they were counted reads as not
    /// recorded).
    #[serde(default = "TreeHardware::not_recorded")]
    pub hardware: TreeHardware,
    pub end: CommandEnd,
    /// Where the tree's threads ran, for the placement and co-residency
    /// checks. Not saved: the document keeps each arm's judgement of them
    /// (the records of a busy build run to megabytes a repetition).
    #[serde(skip, default = "PlacementRecords::not_saved")]
    pub placement: PlacementRecords,
    /// The processes of its tree still running when the command exited
    /// (stopped then, unless `--leave-running`), with what ended them.
    #[serde(default)]
    pub outlivers: Vec<Outliver>,
}

/// The tree's user-space hardware counts of one repetition, or why there
/// are none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "hardware", rename_all = "kebab-case")]
pub enum TreeHardware {
    /// One entry per core PMU counted on: one where the machine has one.
    Counted {
        #[schemars(length(min = 1))]
        pmus: Vec<PmuCounts>,
    },
    /// No PMU counts here, or perf refused; `reason` says which.
    Unavailable { reason: String },
}

impl TreeHardware {
    /// A repetition from a document saved before the tree's hardware
    /// counts were recorded.
    pub fn not_recorded() -> TreeHardware {
        TreeHardware::Unavailable {
            reason: "not recorded: the document was saved by a version that did not count the \
                     tree's hardware events"
                .into(),
        }
    }

    /// The tree's user-space instructions, summed over its PMUs.
    pub fn user_instructions(&self) -> Option<u64> {
        self.sum(|pmu| pmu.user_instructions.count)
    }

    /// The tree's user-space cycles, summed over its PMUs.
    pub fn cycles(&self) -> Option<u64> {
        self.sum(|pmu| pmu.cycles.count)
    }

    fn sum(&self, value: impl Fn(&PmuCounts) -> u64) -> Option<u64> {
        match self {
            TreeHardware::Counted { pmus } => Some(pmus.iter().map(value).sum()),
            TreeHardware::Unavailable { .. } => None,
        }
    }
}

/// The tree's user-space cycles and instructions on one core PMU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PmuCounts {
    /// The core PMU (`cpu_core`, `cpu_atom`) where the machine has one per
    /// kind of core; `None`: the generic events of a machine with one.
    pub pmu: Option<String>,
    pub cycles: EventCount,
    pub user_instructions: EventCount,
}

/// One counter's value as read, unscaled, with its times: running less
/// than enabled means the PMU multiplexed it (or, on a machine with a PMU
/// per kind of core, the tree ran on another PMU's CPUs for the rest).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventCount {
    pub count: u64,
    #[serde(flatten)]
    pub times: GroupTimes,
}

/// The tree's hardware counters being counted, or why there are none.
struct TreeHardwareCounters {
    /// Per PMU: its name, cycles and user-space instructions.
    pmus: Vec<(Option<String>, Counter, Counter)>,
}

/// The core PMUs to count the tree on when it runs on `arm`: with one
/// core PMU (or none known), the generic events (`None`); with a PMU per
/// kind of core, each PMU whose CPUs the arm holds, by name and type.
fn tree_pmus(core_pmus: &[CorePmu], arm: &CpuSet) -> Vec<Option<(String, u32)>> {
    let named: Vec<Option<(String, u32)>> = core_pmus
        .iter()
        .filter(|pmu| arm.cpus().iter().any(|&cpu| pmu.cpus.contains(cpu)))
        .map(|pmu| Some((pmu.name.clone(), pmu.pmu_type)))
        .collect();
    if core_pmus.len() < 2 || named.is_empty() {
        vec![None]
    } else {
        named
    }
}

impl TreeHardwareCounters {
    /// Opens cycles and user-space instructions on the held `pid` and
    /// everything it will create, per PMU of [`tree_pmus`], counting from
    /// its exec; any failure leaves the reason, never a failed repetition.
    fn open(
        pid: libc::pid_t,
        core_pmus: &[CorePmu],
        arm: &CpuSet,
    ) -> Result<TreeHardwareCounters, String> {
        let open = |event: HardwareEvent, pmu_type: Option<u32>| {
            hardware_builder(event, pmu_type)
                .observe_pid(pid)
                .any_cpu()
                .inherit(true)
                .enabled(false)
                .enable_on_exec(true)
                .build()
                .map_err(|error| hardware_unavailable(event, &error))
        };
        let pmus = tree_pmus(core_pmus, arm)
            .into_iter()
            .map(|pmu| {
                let pmu_type = pmu.as_ref().map(|(_, pmu_type)| *pmu_type);
                Ok((
                    pmu.map(|(name, _)| name),
                    open(HardwareEvent::Cycles, pmu_type)?,
                    open(HardwareEvent::Instructions, pmu_type)?,
                ))
            })
            .collect::<Result<_, String>>()?;
        Ok(TreeHardwareCounters { pmus })
    }

    /// The counts once the tree has ended.
    fn finish(self) -> Result<TreeHardware> {
        let read = |counter: &mut Counter, what: &str| -> Result<EventCount> {
            let read = counter
                .read_count_and_time()
                .with_context(|| format!("reading the command's {what}"))?;
            Ok(EventCount {
                count: read.count,
                times: GroupTimes {
                    time_enabled_ns: read.time_enabled,
                    time_running_ns: read.time_running,
                },
            })
        };
        let pmus = self
            .pmus
            .into_iter()
            .map(|(pmu, mut cycles, mut instructions)| {
                Ok(PmuCounts {
                    pmu,
                    cycles: read(&mut cycles, "cycles")?,
                    user_instructions: read(&mut instructions, "user-space instructions")?,
                })
            })
            .collect::<Result<_>>()?;
        Ok(TreeHardware::Counted { pmus })
    }
}

/// Why the tree's `event` cannot be counted.
fn hardware_unavailable(event: HardwareEvent, error: &std::io::Error) -> String {
    let not_counted = "the tree's cycles and user-space instructions are not counted";
    match error.raw_os_error() {
        // Cycles open first: a PMU that has them but not this event.
        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL)
            if event != HardwareEvent::Cycles =>
        {
            format!("this PMU has no {event} event (perf_event_open: {error}): {not_counted}")
        }
        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL) => format!(
            "no hardware PMU counts here (perf_event_open for {event}: {error}; typical of a \
             VM): {not_counted}"
        ),
        Some(libc::EACCES | libc::EPERM) => format!(
            "perf_event_open refused the {event} hardware event ({error}): {not_counted}; {}",
            paranoid_advice(2)
        ),
        _ => format!("cannot open the {event} hardware event ({error}): {not_counted}"),
    }
}

/// The tree's context-switch records, or why there are none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "records", rename_all = "kebab-case")]
pub enum PlacementRecords {
    /// The tree's, from the command's exec to its exit, as `observe`
    /// records them, and the CPU-wide ones of its arm's siblings.
    Recorded {
        tree: Box<Recording>,
        siblings: SiblingRecords,
    },
    /// They could not be opened; `reason` says why and what would fix it.
    Unavailable { reason: String },
}

#[cfg(test)]
impl CommandSample {
    /// A repetition that took `wall_ns`, all of it on a CPU, and exited 0,
    /// with nothing else recorded: what the unit tests of the layers above
    /// judge, their own fields set by struct update.
    pub fn of_wall(wall_ns: u64) -> CommandSample {
        CommandSample {
            wall_ns,
            task_clock_ns: wall_ns,
            context_switches: 0,
            migrations: Some(0),
            counters: TreeCounterSource::PerfInherit,
            hardware: TreeHardware::not_recorded(),
            end: CommandEnd::Exited { code: 0 },
            placement: PlacementRecords::Unavailable {
                reason: "not recorded".into(),
            },
            outlivers: Vec::new(),
        }
    }
}

impl PlacementRecords {
    /// A repetition read back from a saved document.
    pub fn not_saved() -> PlacementRecords {
        PlacementRecords::Unavailable {
            reason: "not saved: the document keeps each arm's judgement of the records".into(),
        }
    }
}

/// The CPU-wide switch records (every task, idle included) of the CPUs
/// that share a core with the arm's CPUs, or why there are none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "records", rename_all = "kebab-case")]
pub enum SiblingRecords {
    /// Every CPU in `cpus`, watched from before the release to after the
    /// reaping; no CPUs where no CPU of the arm has a sibling.
    Recorded {
        cpus: CpuSet,
        recording: Box<Recording>,
    },
    Unavailable {
        reason: String,
    },
}

/// The records being taken while the command runs, and which siblings
/// they watch (or why none).
struct OpenRecords {
    records: TreeRecords,
    siblings: Result<CpuSet, String>,
}

impl OpenRecords {
    /// Opens the records on the held `pid` on every online CPU, and
    /// CPU-wide ones on the arm's siblings, as `watched` names them; a
    /// failure leaves the repetition without them, never without its
    /// measurement.
    fn open(pid: libc::pid_t, watched: &Watched) -> Result<OpenRecords, PlacementRecords> {
        let siblings = watched.siblings.clone();
        let sibling_cpus = siblings.as_ref().map_or(&[][..], CpuSet::cpus);
        let records = TreeRecords::open(pid as u32, watched.online.cpus(), sibling_cpus).map_err(
            |error| PlacementRecords::Unavailable {
                reason: format!("no context-switch records: {error:#}"),
            },
        )?;
        Ok(OpenRecords { records, siblings })
    }

    fn finish(self, end: CommandEnd) -> Result<PlacementRecords> {
        let (tree, recorded) = self.records.finish(end)?;
        let siblings = match (self.siblings, recorded) {
            (Ok(cpus), Ok(recording)) => SiblingRecords::Recorded {
                cpus,
                recording: Box::new(recording),
            },
            (Err(reason), _) | (_, Err(reason)) => SiblingRecords::Unavailable {
                reason: format!("no CPU-wide records of the siblings: {reason}"),
            },
        };
        Ok(PlacementRecords::Recorded {
            tree: Box::new(tree),
            siblings,
        })
    }
}

/// The CPUs a repetition's records watch: every online CPU for the tree,
/// and CPU-wide the SMT siblings of the arm's CPUs (for other load), from
/// the topology the study probed once, not re-read per repetition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Watched {
    pub online: CpuSet,
    /// The CPUs sharing a core with a CPU of the arm, those CPUs left out;
    /// or why which CPUs share a core is unknown.
    pub siblings: Result<CpuSet, String>,
}

impl Watched {
    /// What to watch when the command runs on `arm` of `topology`.
    pub fn of(topology: &Topology, arm: &CpuSet) -> Watched {
        let online = topology.cpus.iter().map(|entry| entry.cpu).collect();
        let siblings = match &topology.summary.structure_unknown {
            Some(reason) => Err(reason.clone()),
            None => Ok(topology
                .cpus
                .iter()
                .filter(|entry| arm.contains(entry.cpu))
                .flat_map(|entry| entry.siblings.iter().filter(move |&cpu| cpu != entry.cpu))
                .collect()),
        };
        Watched { online, siblings }
    }
}

/// One repetition of one arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommandRep {
    pub arm: CommandArm,
    /// The round, from 0, warm-ups included.
    pub round: usize,
    pub warmup: bool,
    /// The command did not exit 0 (kept by `ignore_failure`).
    pub failed: bool,
    pub sample: CommandSample,
}

/// A repetition whose command did not exit 0: its status and the end of
/// its stderr, with the sample (a study with `--ignore-failure` keeps it,
/// marked).
#[derive(Debug)]
pub struct CommandFailed {
    pub program: String,
    pub sample: CommandSample,
    /// The last lines of stderr joined into one ([`last_lines`]); empty
    /// where stderr was inherited.
    pub stderr_tail: String,
}

impl std::fmt::Display for CommandFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = match self.sample.end {
            CommandEnd::Exited { code } => format!("exited with status {code}"),
            CommandEnd::Signaled { signal } => format!("was killed by signal {signal}"),
        };
        write!(f, "COMMAND '{}' {status}", self.program)?;
        if self.stderr_tail.is_empty() {
            return Ok(());
        }
        write!(f, "; the end of its stderr: {}", self.stderr_tail)
    }
}

impl std::error::Error for CommandFailed {}

/// The tree's software counters, or why there are none.
enum TreeCounters {
    Perf {
        task_clock: Counter,
        context_switches: Counter,
        migrations: Counter,
    },
    Refused(String),
}

impl TreeCounters {
    /// Opens the three software events on the held `pid` and everything it
    /// will create, kernel side included, counting from its exec. A refusal
    /// (EACCES, EPERM) leaves rusage; any other failure is an error.
    fn open(pid: libc::pid_t) -> Result<TreeCounters> {
        let open = |event: Software| {
            Builder::new(event)
                .observe_pid(pid)
                .any_cpu()
                .exclude_kernel(false)
                .exclude_hv(false)
                .inherit(true)
                .enabled(false)
                .enable_on_exec(true)
                .build()
        };
        let opened = (|| {
            Ok::<_, std::io::Error>(TreeCounters::Perf {
                task_clock: open(Software::TASK_CLOCK)?,
                context_switches: open(Software::CONTEXT_SWITCHES)?,
                migrations: open(Software::CPU_MIGRATIONS)?,
            })
        })();
        match opened {
            Ok(counters) => Ok(counters),
            Err(error) if refused(&error) => Ok(TreeCounters::Refused(format!(
                "perf_event_open refused the tree's software events ({error}): task-clock and \
                 context switches come from the children's rusage, and migrations are not \
                 counted; {}",
                super::counters::paranoid_advice(2)
            ))),
            Err(error) => Err(error).context("perf_event_open for the command's task-clock"),
        }
    }

    /// The counts once the tree has ended; `usage` is the reaped child's
    /// with that of every outliver reaped.
    fn finish(self, usage: Reaped) -> Result<(u64, u64, Option<u64>, TreeCounterSource)> {
        match self {
            TreeCounters::Perf {
                mut task_clock,
                mut context_switches,
                mut migrations,
            } => Ok((
                task_clock
                    .read()
                    .context("reading the command's task-clock")?,
                context_switches
                    .read()
                    .context("reading the command's context switches")?,
                Some(
                    migrations
                        .read()
                        .context("reading the command's migrations")?,
                ),
                TreeCounterSource::PerfInherit,
            )),
            TreeCounters::Refused(reason) => Ok((
                usage.cpu_ns,
                usage.context_switches,
                None,
                TreeCounterSource::Rusage { reason },
            )),
        }
    }
}

/// Reads a pipe to its end, keeping the last [`STDERR_TAIL_BYTES`].
pub(super) fn keep_tail(pipe: OwnedFd) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut file = File::from(pipe);
        let mut tail = Vec::new();
        let mut buffer = [0u8; 4096];
        while let Ok(read) = file.read(&mut buffer) {
            if read == 0 {
                break;
            }
            tail.extend_from_slice(&buffer[..read]);
            let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
            tail.drain(..excess);
        }
        tail
    })
}

/// What `reader` ([`keep_tail`]) kept, once the pipe's writers are gone:
/// the pipe closes when the last process of the tree holding it ends, and a
/// daemonised grandchild could keep it open, so it is waited for only
/// `grace`; nothing where it took longer.
pub(super) fn tail_within(reader: JoinHandle<Vec<u8>>, grace: Duration) -> Vec<u8> {
    let deadline = Instant::now() + grace;
    while !reader.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    if reader.is_finished() {
        reader.join().unwrap_or_default()
    } else {
        Vec::new()
    }
}

/// The last [`STDERR_TAIL_LINES`] lines of a failed command's stderr
/// `tail` that say something, lossily decoded and joined with " | ", so
/// that the error quoting them stays one line (a failing COMMAND's, and a
/// failing `--prepare`'s).
pub fn last_lines(tail: &[u8]) -> String {
    let text = String::from_utf8_lossy(tail);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|line| !line.is_empty())
        .collect();
    lines[lines.len().saturating_sub(STDERR_TAIL_LINES)..].join(" | ")
}

/// Runs `argv` once, confined to `cpus` (its memory bound to the nodes
/// `membind` names, where given), and measures its whole tree. A
/// command that exits non-zero or is killed is an error, a
/// [`CommandFailed`] (downcast it to keep the sample). A stop signal
/// (SIGINT, SIGTERM) is passed on to the command's whole tree, which is
/// killed if it has not ended within [`OUTLIVER_GRACE`]. Whatever of the
/// tree outlives the command is named in the sample and stopped, unless
/// `leave_running` ([`Tree::stop_outlivers`]). `core_pmus` are the
/// machine's ([`crate::probe::Environment`]'s): with two or more, the
/// tree's hardware events are counted on each.
pub fn run_once(
    argv: &[OsString],
    cpus: &CpuSet,
    membind: Option<&[u32]>,
    watched: &Watched,
    output: &Output,
    core_pmus: &[CorePmu],
    leave_running: bool,
) -> Result<CommandSample> {
    let stdin = File::open("/dev/null").context("opening /dev/null for COMMAND's stdin")?;
    let (stdio, stderr_pipe) = match output {
        Output::Inherit => (
            ChildStdio {
                stdin: Some(stdin.into()),
                ..ChildStdio::default()
            },
            None,
        ),
        Output::Discard | Output::File(_) => {
            let stdout = match output {
                Output::File(path) => File::create(path).with_context(|| {
                    format!(
                        "--output {}: cannot write the command's output",
                        path.display()
                    )
                })?,
                _ => std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/null")
                    .context("opening /dev/null for COMMAND's stdout")?,
            };
            let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
                .context("pipe for COMMAND's stderr")?;
            (
                ChildStdio {
                    stdin: Some(stdin.into()),
                    stdout: Some(stdout.into()),
                    stderr: Some(write),
                },
                Some(read),
            )
        }
    };
    let mut held = HeldCommand::fork_with(argv, stdio, membind)?;
    let pid = held.pid.as_raw();
    let tree = Tree::of(held.pid);
    confine_process(pid, cpus)?;
    let counters = TreeCounters::open(pid)?;
    let hardware = TreeHardwareCounters::open(pid, core_pmus, cpus);
    let mut records = OpenRecords::open(pid, watched);
    let tail = stderr_pipe.map(keep_tail);
    let start = Instant::now();
    held.release()?;
    let exited = exit_notice(pid as u32);
    let mut supervisor = Supervisor::new(OnStop::KillAfter(OUTLIVER_GRACE), None);
    let (end, usage) = loop {
        if let Some(ended) = held.try_wait_with_usage()? {
            break ended;
        }
        supervisor.tend(&tree);
        let wake = exited.as_ref().map(AsFd::as_fd);
        match &mut records {
            Ok(open) => open.records.wait(wake, POLL),
            Err(_) => wait_readable(wake, POLL),
        }
    };
    let ended = Instant::now();
    let wall_ns = start.elapsed().as_nanos() as u64;
    let (outlivers, mut reaped) = tree.stop_outlivers(ended, leave_running);
    reaped.add(Reaped::of(&usage));
    let (task_clock_ns, context_switches, migrations, source) = counters.finish(reaped)?;
    let hardware = match hardware {
        Ok(counters) => counters.finish()?,
        Err(reason) => TreeHardware::Unavailable { reason },
    };
    let placement = match records {
        Ok(open) => open.finish(end)?,
        Err(unavailable) => unavailable,
    };
    let sample = CommandSample {
        wall_ns,
        task_clock_ns,
        context_switches,
        migrations,
        counters: source,
        hardware,
        end,
        placement,
        outlivers,
    };
    if end == (CommandEnd::Exited { code: 0 }) {
        return Ok(sample);
    }
    let stderr_tail = tail.map_or_else(String::new, |reader| {
        last_lines(&tail_within(reader, STDERR_GRACE))
    });
    Err(CommandFailed {
        program: argv[0].to_string_lossy().into_owned(),
        sample,
        stderr_tail,
    }
    .into())
}

/// Waits until `fd` is readable (the command exited) or `timeout` passes;
/// without a pidfd, just the timeout.
pub(super) fn wait_readable(fd: Option<std::os::fd::BorrowedFd>, timeout: Duration) {
    let Some(fd) = fd else {
        std::thread::sleep(timeout);
        return;
    };
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let timeout = PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX);
    // Readable, interrupted or failed: the caller reads or waits again.
    let _ = poll(&mut [PollFd::new(fd, PollFlags::POLLIN)], timeout);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_lines_of_stderr_are_kept() {
        let text: String = (1..=8).map(|n| format!("line {n}\n")).collect();
        assert_eq!(
            last_lines(text.as_bytes()),
            "line 4 | line 5 | line 6 | line 7 | line 8"
        );
        assert_eq!(last_lines(b"usage: xz\n\n  \n"), "usage: xz");
    }

    #[test]
    fn where_perf_is_refused_the_rusage_gives_task_clock_and_switches() {
        // SAFETY: rusage is plain data; all zeroes is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        usage.ru_utime = libc::timeval {
            tv_sec: 1,
            tv_usec: 500,
        };
        usage.ru_stime = libc::timeval {
            tv_sec: 0,
            tv_usec: 250_000,
        };
        usage.ru_nvcsw = 3;
        usage.ru_nivcsw = 4;
        let refused = TreeCounters::Refused("refused".into());
        let (task_clock, switches, migrations, source) =
            refused.finish(Reaped::of(&usage)).unwrap();
        assert_eq!(task_clock, 1_250_500_000);
        assert_eq!((switches, migrations), (7, None));
        assert_eq!(
            source,
            TreeCounterSource::Rusage {
                reason: "refused".into()
            }
        );
    }

    fn pmu(name: &str, pmu_type: u32, cpus: &[u32]) -> CorePmu {
        CorePmu {
            name: name.into(),
            pmu_type,
            cpus: cpus.iter().copied().collect(),
        }
    }

    /// A hybrid's tree is counted on each core PMU its arm's CPUs belong
    /// to; a machine with one core PMU uses the generic events.
    #[test]
    fn the_tree_is_counted_on_each_core_pmu_its_arm_holds() {
        let hybrid = [pmu("cpu_core", 4, &[0, 1]), pmu("cpu_atom", 10, &[2, 3])];
        let arm = |cpus: &[u32]| cpus.iter().copied().collect::<CpuSet>();
        assert_eq!(
            tree_pmus(&hybrid, &arm(&[2, 3])),
            vec![Some(("cpu_atom".to_string(), 10))]
        );
        assert_eq!(
            tree_pmus(&hybrid, &arm(&[1, 2])),
            vec![
                Some(("cpu_core".to_string(), 4)),
                Some(("cpu_atom".to_string(), 10))
            ]
        );
        assert_eq!(tree_pmus(&hybrid[..1], &arm(&[0])), vec![None]);
        assert_eq!(tree_pmus(&[], &arm(&[0])), vec![None]);
    }

    #[test]
    fn the_tree_hardware_counts_sum_over_its_pmus() {
        let count = |count| EventCount {
            count,
            times: GroupTimes {
                time_enabled_ns: 10,
                time_running_ns: 10,
            },
        };
        let counted = TreeHardware::Counted {
            pmus: vec![
                PmuCounts {
                    pmu: Some("cpu_core".into()),
                    cycles: count(100),
                    user_instructions: count(300),
                },
                PmuCounts {
                    pmu: Some("cpu_atom".into()),
                    cycles: count(50),
                    user_instructions: count(20),
                },
            ],
        };
        assert_eq!(counted.user_instructions(), Some(320));
        assert_eq!(counted.cycles(), Some(150));
        assert_eq!(TreeHardware::not_recorded().user_instructions(), None);
    }

    #[test]
    fn a_missing_pmu_and_a_refusal_say_why_nothing_is_counted() {
        let enoent = std::io::Error::from_raw_os_error(libc::ENOENT);
        let reason = hardware_unavailable(HardwareEvent::Cycles, &enoent);
        assert!(
            reason.starts_with("no hardware PMU counts here"),
            "{reason}"
        );
        // QEMU's arm64 PMU without icount has cycles but no instructions.
        let reason = hardware_unavailable(HardwareEvent::Instructions, &enoent);
        assert!(
            reason.starts_with("this PMU has no instructions event"),
            "{reason}"
        );
        let eacces = std::io::Error::from_raw_os_error(libc::EACCES);
        let reason = hardware_unavailable(HardwareEvent::Instructions, &eacces);
        assert!(reason.contains("perf_event_paranoid"), "{reason}");
        assert!(reason.contains("refused the instructions"), "{reason}");
    }

    #[test]
    fn a_failure_gives_the_status_and_the_end_of_stderr() {
        let failed = CommandFailed {
            program: "xz".into(),
            sample: CommandSample {
                wall_ns: 1,
                task_clock_ns: 1,
                context_switches: 0,
                migrations: Some(0),
                counters: TreeCounterSource::PerfInherit,
                hardware: TreeHardware::not_recorded(),
                end: CommandEnd::Exited { code: 1 },
                placement: PlacementRecords::Unavailable {
                    reason: "not recorded".into(),
                },
                outlivers: Vec::new(),
            },
            stderr_tail: "xz: FILE: No such file or directory".into(),
        };
        assert_eq!(
            failed.to_string(),
            "COMMAND 'xz' exited with status 1; the end of its stderr: \
             xz: FILE: No such file or directory"
        );
    }
}
