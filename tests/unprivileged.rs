//! The tool as a user without privileges: `gate`, `run` and `observe` run as
//! `nobody` (through `setpriv`) at this machine's perf_event_paranoid, at 1
//! and at 2, and must measure, never stop at a refused perf_event_open. At 2
//! the kernel refuses software events with their kernel side, so a
//! measurement counts from each thread's own accounting and says so; at 1
//! perf counts them as for root.
//!
//! Ignored: it needs root, to become `nobody` and to set
//! `kernel.perf_event_paranoid`, which it restores when it ends, passed,
//! failed or panicked (`.ci/run` runs it, and restores the setting too if
//! the test is killed).

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";

/// Sets perf_event_paranoid for its life, and puts the value it found back
/// when dropped (also while a failed assertion unwinds).
struct ParanoidLevel {
    original: String,
}

impl ParanoidLevel {
    fn set(level: i32) -> ParanoidLevel {
        let original = std::fs::read_to_string(PARANOID).expect("perf_event_paranoid is readable");
        let guard = ParanoidLevel { original };
        std::fs::write(PARANOID, level.to_string()).expect("root may set perf_event_paranoid");
        guard
    }
}

impl Drop for ParanoidLevel {
    fn drop(&mut self) {
        if let Err(error) = std::fs::write(PARANOID, self.original.trim()) {
            eprintln!(
                "could not restore {PARANOID} to {}: {error}",
                self.original.trim()
            );
        }
    }
}

fn current_level() -> i32 {
    std::fs::read_to_string(PARANOID)
        .expect("perf_event_paranoid is readable")
        .trim()
        .parse()
        .expect("perf_event_paranoid is an integer")
}

/// The binary, run as `nobody` in `dir` (which `nobody` may write).
fn as_nobody(dir: &Path, args: &[&str]) -> Output {
    Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("setpriv runs (util-linux)")
}

/// A scratch folder `nobody` may write in.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
        .expect("chmod the temp dir");
    dir
}

fn describe(what: &str, output: &Output) -> String {
    format!(
        "{what} exited {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn saved(path: PathBuf) -> Value {
    let text = std::fs::read_to_string(&path).expect("the JSON was written");
    serde_json::from_str(&text).expect("the saved file is JSON")
}

/// What a measurement as `nobody` at `level` must show: where task-clock
/// came from, and the note that says so.
fn check_software_counters(setup: &Value, warnings: &Value, level: i32, what: &str) {
    let source = setup["software_counters"]["source"].as_str();
    let noted = warnings
        .as_array()
        .expect("warnings")
        .iter()
        .any(|w| w.as_str().is_some_and(|w| w.contains("own accounting")));
    if level >= 2 {
        assert_eq!(source, Some("thread-accounting"), "{what}: {setup}");
        assert!(noted, "{what}: no note on the clocks: {warnings}");
    } else {
        assert_eq!(
            source, None,
            "{what}: perf counts at level {level}: {setup}"
        );
        assert!(!noted, "{what}: {warnings}");
    }
    let clock = setup["clock"].as_str().expect("a clock");
    assert!(
        ["core-cycles", "tsc", "generic-timer"].contains(&clock),
        "{what}: {clock}"
    );
}

fn gate_run_and_observe(level: i32) {
    let dir = scratch();
    let quick = ["--rep-ms", "5", "--warmups", "0"];

    let mut gate = vec!["gate", "--json", "gate.json"];
    gate.extend(quick);
    let output = as_nobody(dir.path(), &gate);
    let what = format!("gate as nobody at perf_event_paranoid {level}");
    // A verdict (physical, virtual, no-smt, inconclusive), not an error.
    assert!(
        matches!(output.status.code(), Some(0 | 3 | 4 | 5)),
        "{}",
        describe(&what, &output)
    );
    let json = saved(dir.path().join("gate.json"));
    if !json["setup"].is_null() {
        check_software_counters(&json["setup"], &json["warnings"], level, &what);
    }

    let mut run = vec!["run", "--json", "run.json", "--reps", "2"];
    run.extend(quick);
    let output = as_nobody(dir.path(), &run);
    let what = format!("run as nobody at perf_event_paranoid {level}");
    // Studied (valid or not: the machine may be busy), or stopped at a gate
    // that did not say physical; never an error.
    assert!(
        matches!(output.status.code(), Some(0 | 3 | 5 | 6)),
        "{}",
        describe(&what, &output)
    );
    let json = saved(dir.path().join("run.json"));
    if json["kind"] == "run" {
        check_software_counters(&json["setup"], &json["warnings"], level, &what);
    }

    let output = as_nobody(
        dir.path(),
        &[
            "observe",
            "--json",
            "observe.json",
            "--kernel",
            "mul",
            "--threads",
            "2",
            "--seconds",
            "0.2",
        ],
    );
    let what = format!("observe --kernel as nobody at perf_event_paranoid {level}");
    assert!(
        matches!(output.status.code(), Some(0 | 6)),
        "{}",
        describe(&what, &output)
    );
    let output = as_nobody(dir.path(), &["observe", "--", "sh", "-c", "exit 7"]);
    let what = format!("observe -- COMMAND as nobody at perf_event_paranoid {level}");
    assert_eq!(
        output.status.code(),
        Some(7),
        "{}",
        describe(&what, &output)
    );
}

#[test]
#[ignore = "needs root: runs the binary as nobody and sets kernel.perf_event_paranoid"]
fn gate_run_and_observe_measure_as_nobody() {
    let machine_level = current_level();
    let mut levels = vec![machine_level, 1, 2];
    levels.sort_unstable();
    levels.dedup();
    for level in levels {
        eprintln!("perf_event_paranoid {level}: gate, run and observe as nobody");
        let _level = ParanoidLevel::set(level);
        gate_run_and_observe(level);
    }
    assert_eq!(current_level(), machine_level, "the setting is restored");
}
