//! What `observe` records: the kernel's own account of where a workload's
//! threads ran, as perf side-band records, and the per-CPU counts to check
//! it against.
//!
//! Every time is CLOCK_MONOTONIC in nanoseconds: the records carry it
//! because the events ask for it (`use_clockid`), so they share a clock with
//! the observer's own start and end stamps and with `date`-free schedules
//! such as a test's `taskset` moves.

use serde::{Deserialize, Serialize};

use super::tree::Outliver;

/// One record from a perf ring buffer, reduced to what placement needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedEvent {
    /// CLOCK_MONOTONIC, ns.
    pub time_ns: u64,
    /// The CPU the record was written on.
    pub cpu: u32,
    /// Process and thread the record is about.
    pub pid: u32,
    pub tid: u32,
    #[serde(flatten)]
    pub kind: SchedEventKind,
}

/// What happened to the thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum SchedEventKind {
    /// `PERF_RECORD_SWITCH`: the thread was switched in on `cpu` (or
    /// `PERF_RECORD_SWITCH_CPU_WIDE`, of any thread on a CPU watched whole).
    SwitchIn,
    /// `PERF_RECORD_SWITCH` (or `_CPU_WIDE`) with `SWITCH_OUT`: it left `cpu`.
    SwitchOut,
    /// `PERF_RECORD_FORK`: the thread was created by `parent_tid`.
    Fork { parent_tid: u32 },
    /// `PERF_RECORD_EXIT`: the thread exited; it runs no more.
    Exit,
    /// `PERF_RECORD_COMM`: the thread took a new name (`exec` true when an
    /// exec gave it).
    Comm { comm: String, exec: bool },
}

/// The per-CPU counters of the followed threads (their inherited copies
/// included, folded in by the kernel as each thread exited).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuCounts {
    pub cpu: u32,
    /// `task-clock` on this CPU, ns: the kernel's CPU time, kernel side
    /// included, counted independently of the switch records.
    pub task_clock_ns: u64,
    /// Core `cycles` on this CPU, kernel side included, when a PMU counts.
    pub cycles: Option<u64>,
    /// The cycles counter's enabled and running time, ns: unequal means
    /// the PMU multiplexed it.
    pub cycles_enabled_ns: Option<u64>,
    pub cycles_running_ns: Option<u64>,
}

/// How the observed command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "how")]
pub enum CommandEnd {
    /// It exited with `code`.
    Exited { code: i32 },
    /// A signal ended it.
    Signaled {
        #[schemars(range(min = 1))]
        signal: i32,
    },
}

impl CommandEnd {
    /// The status a shell reports for it: the code, or 128 + the signal.
    pub fn shell_status(self) -> u8 {
        match self {
            CommandEnd::Exited { code } => (code & 0xff) as u8,
            CommandEnd::Signaled { signal } => 128u8.wrapping_add(signal as u8),
        }
    }
}

/// A whole recording, as the recorder hands it to the judge.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recording {
    /// When recording began (the exec of the command, or the enable of the
    /// events on a running process), CLOCK_MONOTONIC ns.
    pub start_ns: u64,
    /// When it ended.
    pub end_ns: u64,
    /// Every record, in time order.
    pub events: Vec<SchedEvent>,
    /// The threads' names when recording began (`--pid`, `--kernel`); a
    /// command's come from its exec's record.
    pub names: Vec<ThreadName>,
    pub per_cpu: Vec<CpuCounts>,
    /// Why no cycles were counted, when none were.
    pub cycles_unavailable: Option<String>,
    /// Records the kernel dropped because a ring buffer was full.
    pub lost_records: u64,
    /// The command's end (`observe -- COMMAND`).
    pub command: Option<CommandEnd>,
    /// A stop signal ended the recording before its natural end.
    pub stopped: bool,
    /// What of the command's tree outlived it (`observe -- COMMAND`).
    #[serde(default)]
    pub outlivers: Vec<Outliver>,
}

/// A thread's name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadName {
    pub tid: u32,
    pub comm: String,
}

/// The kernel's record types and flags `observe` reads
/// (`include/uapi/linux/perf_event.h`).
pub mod abi {
    pub const PERF_RECORD_LOST: u32 = 2;
    pub const PERF_RECORD_COMM: u32 = 3;
    pub const PERF_RECORD_EXIT: u32 = 4;
    pub const PERF_RECORD_FORK: u32 = 7;
    pub const PERF_RECORD_SWITCH: u32 = 14;
    /// A CPU-wide event's switch record: the same, with the other task's
    /// pid and tid before the trailer.
    pub const PERF_RECORD_SWITCH_CPU_WIDE: u32 = 15;
    /// On a SWITCH record: the thread is leaving the CPU.
    pub const MISC_SWITCH_OUT: u16 = 1 << 13;
    /// On a COMM record: an exec set the name.
    pub const MISC_COMM_EXEC: u16 = 1 << 13;
    /// The `sample_id` trailer of every record with `sample_id_all` and
    /// `sample_type` = TID | TIME | CPU: pid, tid (u32 each), time (u64),
    /// cpu, reserved (u32 each).
    pub const SAMPLE_ID_BYTES: usize = 24;
}

/// What one raw record (type, misc and the bytes after its header) says:
/// `Lost(n)` for a LOST record, an event for the ones `observe` follows,
/// nothing for the rest. Malformed records are skipped, never trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParsedRecord {
    Event(SchedEvent),
    Lost(u64),
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// Parses one record body (see [`ParsedRecord`]).
pub fn parse_record(ty: u32, misc: u16, body: &[u8]) -> Option<ParsedRecord> {
    use abi::*;
    let trailer = body.len().checked_sub(SAMPLE_ID_BYTES)?;
    let (pid, tid) = (u32_at(body, trailer)?, u32_at(body, trailer + 4)?);
    let time_ns = u64_at(body, trailer + 8)?;
    let cpu = u32_at(body, trailer + 16)?;
    let event = |pid, tid, time_ns, kind| {
        Some(ParsedRecord::Event(SchedEvent {
            time_ns,
            cpu,
            pid,
            tid,
            kind,
        }))
    };
    match ty {
        PERF_RECORD_SWITCH | PERF_RECORD_SWITCH_CPU_WIDE => {
            let kind = if misc & MISC_SWITCH_OUT != 0 {
                SchedEventKind::SwitchOut
            } else {
                SchedEventKind::SwitchIn
            };
            event(pid, tid, time_ns, kind)
        }
        // pid, ppid, tid, ptid, time: the record's own task and time.
        // Four u32s and a u64 before the trailer.
        PERF_RECORD_FORK | PERF_RECORD_EXIT if trailer >= 24 => {
            let (pid, ptid) = (u32_at(body, 0)?, u32_at(body, 12)?);
            let (tid, time) = (u32_at(body, 8)?, u64_at(body, 16)?);
            let kind = if ty == PERF_RECORD_FORK {
                SchedEventKind::Fork { parent_tid: ptid }
            } else {
                SchedEventKind::Exit
            };
            event(pid, tid, time, kind)
        }
        PERF_RECORD_COMM => {
            let name = body.get(8..trailer)?;
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            let kind = SchedEventKind::Comm {
                comm: String::from_utf8_lossy(&name[..end]).into_owned(),
                exec: misc & MISC_COMM_EXEC != 0,
            };
            event(u32_at(body, 0)?, u32_at(body, 4)?, time_ns, kind)
        }
        PERF_RECORD_LOST if trailer >= 16 => Some(ParsedRecord::Lost(u64_at(body, 8)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::abi::*;
    use super::*;

    fn sample_id(pid: u32, tid: u32, time: u64, cpu: u32) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend(pid.to_ne_bytes());
        bytes.extend(tid.to_ne_bytes());
        bytes.extend(time.to_ne_bytes());
        bytes.extend(cpu.to_ne_bytes());
        bytes.extend(0u32.to_ne_bytes());
        bytes
    }

    fn event(record: Option<ParsedRecord>) -> SchedEvent {
        match record {
            Some(ParsedRecord::Event(event)) => event,
            other => panic!("not an event: {other:?}"),
        }
    }

    #[test]
    fn switch_records_say_in_or_out() {
        let body = sample_id(10, 11, 5_000, 3);
        let switch_in = event(parse_record(PERF_RECORD_SWITCH, 0, &body));
        assert_eq!(
            (
                switch_in.pid,
                switch_in.tid,
                switch_in.time_ns,
                switch_in.cpu
            ),
            (10, 11, 5_000, 3)
        );
        assert_eq!(switch_in.kind, SchedEventKind::SwitchIn);
        let out = event(parse_record(PERF_RECORD_SWITCH, MISC_SWITCH_OUT, &body));
        assert_eq!(out.kind, SchedEventKind::SwitchOut);
        // A CPU-wide record names the thread switching, not the other one.
        let mut cpu_wide = Vec::new();
        cpu_wide.extend(20u32.to_ne_bytes());
        cpu_wide.extend(21u32.to_ne_bytes());
        cpu_wide.extend(&body);
        let wide = event(parse_record(PERF_RECORD_SWITCH_CPU_WIDE, 0, &cpu_wide));
        assert_eq!(wide, switch_in);
    }

    #[test]
    fn fork_and_exit_take_their_own_task_and_time() {
        let mut body = Vec::new();
        for field in [20u32, 10, 21, 11] {
            body.extend(field.to_ne_bytes());
        }
        body.extend(7_000u64.to_ne_bytes());
        body.extend(sample_id(10, 11, 6_999, 1));
        let fork = event(parse_record(PERF_RECORD_FORK, 0, &body));
        assert_eq!(
            (fork.pid, fork.tid, fork.time_ns, fork.cpu),
            (20, 21, 7_000, 1)
        );
        assert_eq!(fork.kind, SchedEventKind::Fork { parent_tid: 11 });
        let exit = event(parse_record(PERF_RECORD_EXIT, 0, &body));
        assert_eq!(exit.kind, SchedEventKind::Exit);
    }

    #[test]
    fn comm_records_carry_the_name_and_whether_exec_set_it() {
        let mut body = Vec::new();
        body.extend(30u32.to_ne_bytes());
        body.extend(31u32.to_ne_bytes());
        body.extend(b"yes\0\0\0\0\0");
        body.extend(sample_id(30, 31, 9_000, 0));
        let comm = event(parse_record(PERF_RECORD_COMM, MISC_COMM_EXEC, &body));
        assert_eq!(
            comm.kind,
            SchedEventKind::Comm {
                comm: "yes".into(),
                exec: true
            }
        );
    }

    #[test]
    fn lost_and_short_records() {
        let mut body = Vec::new();
        body.extend(1u64.to_ne_bytes());
        body.extend(42u64.to_ne_bytes());
        body.extend(sample_id(0, 0, 0, 0));
        assert_eq!(
            parse_record(PERF_RECORD_LOST, 0, &body),
            Some(ParsedRecord::Lost(42))
        );
        assert_eq!(parse_record(PERF_RECORD_SWITCH, 0, &[0; 10]), None);
        assert_eq!(
            parse_record(PERF_RECORD_FORK, 0, &sample_id(1, 1, 1, 1)),
            None
        );
    }

    #[test]
    fn a_signal_ends_as_a_shell_says() {
        assert_eq!(CommandEnd::Exited { code: 3 }.shell_status(), 3);
        assert_eq!(CommandEnd::Signaled { signal: 15 }.shell_status(), 143);
    }
}
