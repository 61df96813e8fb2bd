//! `observe` on the machine the tests run on: perf's context-switch records
//! of real commands, a running process and the built-in kernel, checked
//! against the kernel's own task-clock. Software events are all it needs,
//! so it runs on CI's PMU-less guests too.

use serde_json::Value;
use std::process::{Command, Output};

fn placement_study(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .output()
        .expect("the test binary runs")
}

/// The JSON on stdout, with stderr shown on failure.
fn observed(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// Exit 0, with stderr shown otherwise.
fn assert_succeeded(output: &Output) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Valid, and Σ residency (with hand-overs) within 1 % of task-clock.
fn assert_reconciled(json: &Value) {
    assert_eq!(json["valid"], true, "{:#}", json["problems"]);
    let difference = json["reconciliation"]["difference"].as_f64().unwrap();
    assert!(difference <= 0.01, "{:#}", json["reconciliation"]);
}

#[test]
fn a_command_is_followed_and_its_status_passed_through() {
    let _cpus = crate::common::cpus_to_myself();
    let output = placement_study(&[
        "observe",
        "--json",
        "-",
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; exit 3",
    ]);
    assert_eq!(output.status.code(), Some(3));
    let json = observed(&output);
    assert_reconciled(&json);
    assert_eq!(json["exit_status"], 3);
    assert_eq!(json["command_end"]["how"], "exited");
    assert_eq!(json["threads"][0]["comm"], "sh");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Reconciliation"), "{stderr}");
}

#[test]
fn a_command_a_signal_ended_exits_as_a_shell_reports_it() {
    let _cpus = crate::common::cpus_to_myself();
    let output = placement_study(&["observe", "--json", "-", "--", "sh", "-c", "kill -9 $$"]);
    assert_eq!(output.status.code(), Some(137));
    let json = observed(&output);
    assert_eq!(json["command_end"]["how"], "signaled");
    assert_eq!(json["command_end"]["signal"], 9);
}

#[test]
fn a_running_process_is_followed_by_pid() {
    let _cpus = crate::common::cpus_to_myself();
    let mut busy = Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let pid = busy.id().to_string();
    let output = placement_study(&["observe", "--pid", &pid, "--seconds", "0.5", "--json", "-"]);
    busy.kill().unwrap();
    busy.wait().unwrap();
    assert_succeeded(&output);
    let json = observed(&output);
    assert_reconciled(&json);
    assert_eq!(json["options"]["mode"], "pid");
    assert_eq!(json["threads"][0]["tid"].to_string(), pid);
    assert_eq!(json["complete"], true);
}

#[test]
fn the_kernel_runs_unpinned_with_a_timeline_and_report_re_renders_it() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("observe.json");
    let csv = dir.path().join("observe.csv");
    let output = placement_study(&[
        "observe",
        "--kernel",
        "mul",
        "--threads",
        "2",
        "--seconds",
        "0.3",
        "--interval",
        "100",
        "--json",
        saved.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_succeeded(&output);
    let json: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_reconciled(&json);
    let threads = json["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    assert!(threads.iter().all(|t| t["comm"] == "mul worker"));
    // Rows of 100 ms up to the end; the last one may be short.
    let wall = json["wall_ms"].as_f64().unwrap();
    let rows = json["timeline"].as_array().unwrap().len();
    assert_eq!(rows, (wall / 100.0).ceil() as usize, "{wall} ms");
    let intervals: usize = threads
        .iter()
        .map(|t| t["intervals"].as_array().unwrap().len())
        .sum();
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count();
    assert_eq!(
        rows,
        intervals + 1,
        "one CSV row per interval, and a header"
    );

    // observe's report is on stderr; report's on stdout.
    let shown = String::from_utf8_lossy(&output.stderr).to_string();
    let again = placement_study(&["report", saved.to_str().unwrap()]);
    assert!(again.status.success());
    assert_eq!(String::from_utf8_lossy(&again.stdout), shown);
}

/// `--seconds` is one deadline for every thread, however many more there
/// are than CPUs: before, each worker timed itself from its first run and
/// 1024 of them on two CPUs took 17.8 s over a `--seconds 1`. The bound
/// catches that, with room for the other tests of this binary and a busy
/// host: how close it keeps the time is measured in `benches/observe.rs`.
#[test]
fn a_thousand_threads_keep_the_seconds_asked_for() {
    let _cpus = crate::common::cpus_to_myself();
    let output = placement_study(&[
        "observe",
        "--kernel",
        "mul",
        "--threads",
        "1024",
        "--seconds",
        "0.5",
        "--json",
        "-",
    ]);
    let json = observed(&output);
    // What this checks is the seconds, and that the observation says what
    // it is. With 1024 threads on two CPUs, many start or end between the
    // context-switch records and the task-clock reads: in one CI run 582
    // threads ran and Σ residency came out 2.67 % above Σ task-clock, over
    // the 1 % bar, and the product said so (exit 6, INVALID, the
    // reconciliation named). Valid, or invalid for exactly that reason.
    if output.status.code() != Some(0) {
        assert_eq!(
            output.status.code(),
            Some(6),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(json["valid"], false);
        let problems = json["problems"].to_string();
        assert!(problems.contains("task-clock"), "{problems}");
    }
    // Not every thread need have run: 1024 on two CPUs for half a second.
    assert!(!json["threads"].as_array().unwrap().is_empty());
    let wall = json["wall_ms"].as_f64().unwrap();
    assert!(
        (500.0..1500.0).contains(&wall),
        "{wall} ms for --seconds 0.5"
    );
}
