//! `--trace`: the trace of every saved observation in `fixtures/results/`
//! follows the Chrome trace-event format's structure (the fields each phase
//! needs, metadata first, each track's events in time), and each CPU's and
//! each thread's durations add up to the document's residency to the
//! microsecond. `report FILE --trace` writes it, and refuses any other kind
//! of document in one line.

use crate::common::placement_study;
use placement_study::report::trace::{CPU_TRACK_PID, chrome_trace};
use placement_study::saved::{self, ObserveResult, SavedDocument};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Output;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/results")
}

/// The saved observations, by file name, sorted.
fn observations() -> Vec<(String, ObserveResult)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with("observe-") && name.ends_with(".json")
        })
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no observe-*.json in fixtures/results");
    paths
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            match saved::load(&path).unwrap() {
                SavedDocument::Observe(result) => (name, *result),
                _ => panic!("{name} is not an observe document"),
            }
        })
        .collect()
}

fn number(event: &Value, field: &str) -> f64 {
    event[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} is not a number in {event}"))
}

/// Checks the fields each phase needs and the order of the events, and
/// returns the total duration of each track, µs by (pid, tid).
fn checked_durations(name: &str, trace: &Value) -> BTreeMap<(u64, u64), f64> {
    assert_eq!(trace["displayTimeUnit"], "ms", "{name}");
    for field in ["host", "model", "clock", "tool_version"] {
        assert!(
            trace["otherData"].get(field).is_some(),
            "{name}: otherData has no {field}"
        );
    }
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    let mut metadata_done = false;
    let mut last_ts: BTreeMap<(u64, u64), f64> = BTreeMap::new();
    let mut durations: BTreeMap<(u64, u64), f64> = BTreeMap::new();
    for event in events {
        assert!(event["name"].is_string(), "{name}: {event}");
        let track = (
            event["pid"].as_u64().expect("pid"),
            event["tid"].as_u64().expect("tid"),
        );
        let ts = number(event, "ts");
        match event["ph"].as_str().expect("ph") {
            "M" => {
                assert!(!metadata_done, "{name}: metadata after events: {event}");
                let args = &event["args"];
                match event["name"].as_str().unwrap() {
                    "process_name" | "thread_name" => {
                        assert!(args["name"].is_string(), "{name}: {event}")
                    }
                    "process_sort_index" | "thread_sort_index" => {
                        assert!(args["sort_index"].is_u64(), "{name}: {event}")
                    }
                    other => panic!("{name}: unknown metadata {other}"),
                }
            }
            phase @ ("X" | "i") => {
                metadata_done = true;
                assert!(ts >= 0.0, "{name}: negative ts: {event}");
                let last = last_ts.entry(track).or_insert(0.0);
                assert!(ts >= *last, "{name}: out of order on {track:?}: {event}");
                *last = ts;
                if phase == "X" {
                    let dur = number(event, "dur");
                    assert!(dur >= 0.0, "{name}: {event}");
                    *durations.entry(track).or_default() += dur;
                } else {
                    assert_eq!(event["s"], "t", "{name}: {event}");
                }
            }
            other => panic!("{name}: unexpected phase {other}"),
        }
    }
    durations
}

#[test]
fn every_observation_traces_to_its_residency_to_the_microsecond() {
    for (name, result) in observations() {
        let text = chrome_trace(&result);
        let trace: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let durations = checked_durations(&name, &trace);
        let cpu_pid = u64::from(CPU_TRACK_PID);
        let cpus = result.judged.cpus.iter().map(|cpu| {
            let track = (cpu_pid, cpu_pid + u64::from(cpu.cpu));
            (format!("CPU {}", cpu.cpu), track, cpu.ms)
        });
        let threads = result.judged.threads.iter().map(|thread| {
            let track = (u64::from(thread.pid), u64::from(thread.tid));
            (format!("thread {}", thread.tid), track, thread.on_cpu_ms)
        });
        for (what, track, resident_ms) in cpus.chain(threads) {
            let traced = durations.get(&track).copied().unwrap_or(0.0);
            assert!(
                (traced - resident_ms * 1e3).abs() < 1.0,
                "{name}: {what}: {traced} µs traced, {resident_ms} ms resident"
            );
        }
        let instants = trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "i")
            .count();
        assert_eq!(instants, result.judged.migrations.len(), "{name}");
        assert_eq!(chrome_trace(&result), text, "{name}: not the same bytes");
    }
}

/// `report fixtures/results/FIXTURE --trace OUT`, OUT in a new folder:
/// what it did, and where OUT is (gone with the folder).
fn report_trace_to_a_file(fixture: &str) -> (Output, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("trace.json");
    let input = fixtures().join(fixture);
    let output = placement_study(&[
        "report",
        input.to_str().unwrap(),
        "--trace",
        out.to_str().unwrap(),
    ]);
    (output, out, dir)
}

#[test]
fn report_writes_the_trace_of_a_saved_observation() {
    let (output, out, _dir) = report_trace_to_a_file("observe-kernel-vm.json");
    assert!(output.status.success(), "{output:?}");
    let trace: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert!(
        trace["traceEvents"]
            .as_array()
            .is_some_and(|e| !e.is_empty())
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("Residency per CPU"));

    // "-": the trace alone on standard output, the view on standard error.
    let input = fixtures().join("observe-kernel-vm.json");
    let output = placement_study(&["report", input.to_str().unwrap(), "--trace", "-"]);
    assert!(output.status.success(), "{output:?}");
    let trace: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(trace["displayTimeUnit"], "ms");
    assert!(String::from_utf8_lossy(&output.stderr).contains("Residency per CPU"));
}

/// The one line on standard error of a usage error (exit 2).
fn usage_error(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

#[test]
fn report_refuses_a_trace_of_any_other_kind_in_one_line() {
    let (output, out, _dir) = report_trace_to_a_file("gate-vm-no-smt.json");
    let stderr = usage_error(&output);
    assert!(
        stderr.contains("it is a gate document; only an observe document has a trace"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing is written");
    assert!(output.stdout.is_empty(), "nothing is printed");
}

#[test]
fn report_refuses_a_trace_of_several_files() {
    let input = fixtures().join("observe-kernel-vm.json");
    let input = input.to_str().unwrap();
    let output = placement_study(&["report", input, input, "--trace", "-"]);
    let stderr = usage_error(&output);
    assert!(
        stderr.contains("--trace: a trace is of one observation"),
        "{stderr}"
    );
}
