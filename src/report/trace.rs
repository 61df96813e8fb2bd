//! `--trace`: an observation as Chrome trace-event JSON, the format that
//! Perfetto's UI (ui.perfetto.dev) and `chrome://tracing` open, so the
//! schedule can be zoomed and searched where a figure only shows it.
//!
//! The file is the format's object form: `traceEvents`, `displayTimeUnit`
//! and `otherData` (host, model, clock, tool version). It holds two kinds
//! of track:
//!
//! - **one per CPU**, in a process named "CPUs": each thread's stretches
//!   on that CPU as complete events (`ph` "X") named by the thread's comm
//!   and tid. Its process and thread ids are [`CPU_TRACK_PID`] and
//!   `CPU_TRACK_PID + cpu`, above the largest pid Linux hands out, so they
//!   never meet a real one (the viewers key threads by id);
//! - **one per followed thread**, in a process per observed pid (its real
//!   pid and tid): the CPU it was on, as complete events named "CPU n", and
//!   each migration as an instant event (`ph` "i", scope thread) with the
//!   CPUs and classes it moved between.
//!
//! Metadata events (`ph` "M") come first: the process and thread names, the
//! CPU tracks' names carrying class, package and core, and sort indices
//! (CPUs first, in CPU order). Then each track's events, track by track, in
//! time. Times are CLOCK_MONOTONIC in microseconds since the recording
//! began, to the nanosecond the records had, so each CPU's and each
//! thread's durations add up to the document's residency.

use crate::judge::observe::{CpuResidency, Migration, OnCpu, ThreadStats};
use crate::saved::ObserveResult;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The process id of the "CPUs" process; CPU n is its thread
/// `CPU_TRACK_PID + n`. Linux's pids stay below 2^22 (`PID_MAX_LIMIT`).
pub const CPU_TRACK_PID: u32 = 1 << 22;

/// What `otherData` says the clock is.
pub const CLOCK: &str = "CLOCK_MONOTONIC, microseconds since the recording began";

/// One trace event, its fields in the format's order of mention.
#[derive(Debug, Serialize)]
struct Event {
    name: String,
    ph: &'static str,
    /// Microseconds; a metadata event's is 0 (viewers ignore it).
    ts: f64,
    /// Complete events only.
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    /// Instant events only: "t", the thread's track.
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    pid: u32,
    tid: u32,
    args: Value,
}

impl Event {
    /// A metadata event `kind` (process_name, thread_sort_index…) for the
    /// track `pid`/`tid`.
    fn metadata(kind: &str, pid: u32, tid: u32, args: Value) -> Event {
        Event {
            name: kind.to_owned(),
            ph: "M",
            ts: 0.0,
            dur: None,
            s: None,
            pid,
            tid,
            args,
        }
    }

    /// A complete event: `stretch` on the track `pid`/`tid`.
    fn complete(name: String, stretch: &OnCpu, pid: u32, tid: u32, args: Value) -> Event {
        let (start, end) = (nanoseconds(stretch.start_ms), nanoseconds(stretch.end_ms));
        Event {
            name,
            ph: "X",
            ts: microseconds(start),
            dur: Some(microseconds(end.saturating_sub(start))),
            s: None,
            pid,
            tid,
            args,
        }
    }
}

/// `otherData`: where and by what the trace was recorded.
#[derive(Debug, Serialize)]
struct About<'a> {
    host: &'a str,
    model: Option<&'a str>,
    clock: &'static str,
    tool_version: &'a str,
    wall_ms: f64,
}

/// The trace of `result`, as the file is written: one event per line,
/// the same bytes for the same document.
pub fn chrome_trace(result: &ObserveResult) -> String {
    let mut events = metadata(result);
    events.extend(cpu_tracks(result));
    events.extend(thread_tracks(result));
    let lines: Vec<String> = events.iter().map(to_json).collect();
    let about = About {
        host: &result.head.host,
        model: result.head.model.as_deref(),
        clock: CLOCK,
        tool_version: &result.head.tool_version,
        wall_ms: result.judged.wall_ms,
    };
    format!(
        "{{\"traceEvents\":[\n{}\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{}}}\n",
        lines.join(",\n"),
        to_json(&about)
    )
}

/// A value as one line of JSON. Serializing these plain structs cannot
/// fail (string keys, finite or null numbers).
fn to_json(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A time in the document's ms back in the records' whole nanoseconds
/// (the document divided them by 10^6, so this is exact).
fn nanoseconds(ms: f64) -> u64 {
    (ms * 1e6).round().max(0.0) as u64
}

fn microseconds(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// The followed threads grouped by process, pids ascending; within a
/// process, in the document's order (most time on a CPU first).
fn by_process(result: &ObserveResult) -> BTreeMap<u32, Vec<&ThreadStats>> {
    let mut processes: BTreeMap<u32, Vec<&ThreadStats>> = BTreeMap::new();
    for thread in &result.judged.threads {
        processes.entry(thread.pid).or_default().push(thread);
    }
    processes
}

/// A thread as a CPU track names its stretches: "comm tid".
fn thread_label(thread: &ThreadStats) -> String {
    format!("{} {}", thread.comm, thread.tid)
}

/// A CPU as its track and the figure's lane name it: "CPU 3 (performance,
/// package 0 core 1)".
pub fn cpu_name(cpu: &CpuResidency) -> String {
    match (cpu.package, cpu.core) {
        (Some(package), Some(core)) => {
            format!(
                "CPU {} ({}, package {package} core {core})",
                cpu.cpu, cpu.class
            )
        }
        _ => format!("CPU {} ({})", cpu.cpu, cpu.class),
    }
}

/// The two metadata events of a track, a process's or a thread's (`scope`):
/// its name, and its place among its kind (`sort_index`, ascending).
fn name_and_place(scope: &str, pid: u32, tid: u32, name: String, sort_index: usize) -> [Event; 2] {
    [
        Event::metadata(&format!("{scope}_name"), pid, tid, json!({ "name": name })),
        Event::metadata(
            &format!("{scope}_sort_index"),
            pid,
            tid,
            json!({ "sort_index": sort_index }),
        ),
    ]
}

fn metadata(result: &ObserveResult) -> Vec<Event> {
    let mut events = Vec::new();
    events.extend(name_and_place(
        "process",
        CPU_TRACK_PID,
        CPU_TRACK_PID,
        "CPUs".into(),
        0,
    ));
    for cpu in &result.judged.cpus {
        let tid = CPU_TRACK_PID + cpu.cpu;
        events.extend(name_and_place(
            "thread",
            CPU_TRACK_PID,
            tid,
            cpu_name(cpu),
            cpu.cpu as usize,
        ));
    }
    for (rank, (&pid, threads)) in by_process(result).iter().enumerate() {
        let name = threads
            .iter()
            .find(|t| t.tid == pid)
            .map_or_else(|| format!("pid {pid}"), |t| t.comm.clone());
        events.extend(name_and_place("process", pid, pid, name, rank + 1));
        for (index, thread) in threads.iter().enumerate() {
            events.extend(name_and_place(
                "thread",
                pid,
                thread.tid,
                thread_label(thread),
                index,
            ));
        }
    }
    events
}

/// Each CPU's track: every thread's stretches there, by start (then tid).
fn cpu_tracks(result: &ObserveResult) -> Vec<Event> {
    let mut events = Vec::new();
    for cpu in &result.judged.cpus {
        let mut stretches: Vec<(&OnCpu, &ThreadStats)> = result
            .judged
            .threads
            .iter()
            .flat_map(|t| t.intervals.iter().map(move |i| (i, t)))
            .filter(|(i, _)| i.cpu == cpu.cpu)
            .collect();
        stretches.sort_by(|a, b| {
            a.0.start_ms
                .total_cmp(&b.0.start_ms)
                .then(a.1.tid.cmp(&b.1.tid))
        });
        events.extend(stretches.into_iter().map(|(stretch, thread)| {
            Event::complete(
                thread_label(thread),
                stretch,
                CPU_TRACK_PID,
                CPU_TRACK_PID + cpu.cpu,
                json!({"tid": thread.tid, "pid": thread.pid, "comm": thread.comm}),
            )
        }));
    }
    events
}

/// Each thread's track, process by process: the CPU it was on, and its
/// migrations as instants (a move first, then the stretch it starts).
fn thread_tracks(result: &ObserveResult) -> Vec<Event> {
    let mut moves: BTreeMap<u32, Vec<&Migration>> = BTreeMap::new();
    for migration in &result.judged.migrations {
        moves.entry(migration.tid).or_default().push(migration);
    }
    let class_of = |cpu: u32| {
        result
            .judged
            .cpus
            .iter()
            .find(|c| c.cpu == cpu)
            .map(|c| c.class.to_string())
    };
    let mut events = Vec::new();
    for thread in by_process(result).into_values().flatten() {
        let mut track: Vec<(u64, u8, Event)> = thread
            .intervals
            .iter()
            .map(|stretch| {
                let event = Event::complete(
                    format!("CPU {}", stretch.cpu),
                    stretch,
                    thread.pid,
                    thread.tid,
                    json!({"cpu": stretch.cpu, "class": class_of(stretch.cpu)}),
                );
                (nanoseconds(stretch.start_ms), 1, event)
            })
            .collect();
        for migration in moves.get(&thread.tid).into_iter().flatten() {
            let at = nanoseconds(migration.time_ms);
            let event = Event {
                name: "migration".into(),
                ph: "i",
                ts: microseconds(at),
                dur: None,
                s: Some("t"),
                pid: thread.pid,
                tid: thread.tid,
                args: json!({
                    "from_cpu": migration.from_cpu,
                    "to_cpu": migration.to_cpu,
                    "from_class": migration.from_class.to_string(),
                    "to_class": migration.to_class.to_string(),
                }),
            };
            track.push((at, 0, event));
        }
        track.sort_by_key(|(at, order, _)| (*at, *order));
        events.extend(track.into_iter().map(|(_, _, event)| event));
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL_VM: &str = include_str!("../../fixtures/results/observe-kernel-vm.json");
    const SLOW_SECOND_CORE: &str =
        include_str!("../../fixtures/results/observe-guest-slow-second-core.json");

    fn parsed(text: &str) -> Value {
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    #[test]
    fn times_are_whole_nanoseconds_in_microseconds() {
        assert_eq!(nanoseconds(4.584416), 4_584_416);
        assert_eq!(microseconds(nanoseconds(4.584416)), 4584.416);
        assert_eq!(nanoseconds(-0.0), 0);
    }

    #[test]
    fn the_cpu_tracks_are_named_with_class_package_and_core() {
        let result: ObserveResult = serde_json::from_str(KERNEL_VM).unwrap();
        let trace = parsed(&chrome_trace(&result));
        let names: Vec<&str> = trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == "thread_name" && e["pid"] == CPU_TRACK_PID)
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "CPU 0 (uniform, package 0 core 0)",
                "CPU 1 (uniform, package 0 core 1)"
            ]
        );
        assert_eq!(trace["otherData"]["clock"], CLOCK);
        assert_eq!(trace["displayTimeUnit"], "ms");
    }

    #[test]
    fn a_migration_is_an_instant_on_the_threads_track_before_its_stretch() {
        let result: ObserveResult = serde_json::from_str(SLOW_SECOND_CORE).unwrap();
        let trace = parsed(&chrome_trace(&result));
        let events = trace["traceEvents"].as_array().unwrap();
        let at = events
            .iter()
            .position(|e| e["ph"] == "i" && e["tid"] == 108)
            .unwrap();
        let instant = &events[at];
        assert_eq!(instant["s"], "t");
        assert_eq!(instant["ts"], 3772.918);
        assert_eq!(instant["args"]["from_cpu"], 1);
        assert_eq!(instant["args"]["to_cpu"], 0);
        assert_eq!(instant["args"]["to_class"], "uniform");
        let next = &events[at + 1];
        assert_eq!((&next["ph"], &next["name"]), (&json!("X"), &json!("CPU 0")));
        assert_eq!(next["ts"], 3772.918);
    }

    #[test]
    fn the_same_document_gives_the_same_bytes() {
        let result: ObserveResult = serde_json::from_str(SLOW_SECOND_CORE).unwrap();
        assert_eq!(chrome_trace(&result), chrome_trace(&result));
        assert!(chrome_trace(&result).ends_with("}\n"));
    }
}
