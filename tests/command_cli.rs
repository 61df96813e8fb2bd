//! `run -- COMMAND` as a user types it: the bad inputs (each one line and
//! a documented status, nothing written), a failing command, a tiny shell
//! loop end to end, and a stop signal keeping the finished rounds.

use crate::common::placement_study;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// `run --json DIR/out.json ARGS` on this machine without the gate: its
/// output, and the saved document if one was written.
fn run_saving(dir: &Path, args: &[&str]) -> (Output, Option<Value>) {
    let json = dir.join("out.json");
    let mut all = vec!["run", "--json", json.to_str().unwrap()];
    all.extend_from_slice(args);
    let output = placement_study(&all);
    let saved = std::fs::read_to_string(&json)
        .ok()
        .map(|text| serde_json::from_str(&text).expect("the saved file is JSON"));
    (output, saved)
}

/// Fast and gate-free: both arms this 2-CPU machine can place, one thread.
const QUICK: [&str; 8] = [
    "--skip-gate",
    "--arms",
    "one-per-core,same-cpu",
    "--threads",
    "1",
    "--warmups",
    "0",
    "--reps",
];

#[test]
fn bad_inputs_are_one_line_usage_errors_and_write_nothing() {
    let _cpus = crate::common::cpus_to_myself();
    for (args, expected) in [
        (&["--"][..], "no COMMAND after --"),
        (
            &["--", "no-such-program-placement-study"][..],
            "'no-such-program-placement-study' not found in PATH",
        ),
        (&["--", "./no/such/file"][..], "no executable file there"),
        (
            &["--arms", "same-cpu", "--", "sh", "-c", "echo {threads}"][..],
            "{threads} with --arms same-cpu alone",
        ),
        (
            &["--kernel", "mul", "--", "true"][..],
            "--kernel is for the built-in kernel",
        ),
        (&["--workers", "2", "--", "true"][..], "use --threads T"),
        (&["--threads", "2"][..], "--threads is for a COMMAND"),
        (&["--units", "100"][..], "--units is for a COMMAND"),
        (
            &["--unit", "byte", "--", "true"][..],
            "--unit byte: needs --units N",
        ),
        (
            &["--units", "0", "--", "true"][..],
            "--units 0: give how many",
        ),
        (
            &["--units", "5", "--unit", "", "--", "true"][..],
            "give a name of 1 to 24 printable characters",
        ),
        (
            &["--arms", "class:0"][..],
            "--arms class:N is for a COMMAND",
        ),
        (
            &[
                "--skip-gate",
                "--baseline-arm",
                "unpinned",
                "--arms",
                "one-per-core",
                "--",
                "true",
            ][..],
            "--baseline-arm unpinned: not one of the arms",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (output, saved) = run_saving(dir.path(), args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr.lines().count(),
            1,
            "{args:?}: not one line: {stderr:?}"
        );
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(saved.is_none(), "{args:?} wrote a result");
    }
}

#[test]
fn a_failing_command_stops_the_study_with_its_status_and_stderr() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let failing = ["--", "sh", "-c", "echo 'disk on fire' >&2; exit 1"];
    let mut args = QUICK.to_vec();
    args.push("2");
    args.extend(failing);
    let (output, saved) = run_saving(dir.path(), &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    // Off a terminal, a line a round comes first; the error is one line.
    let error: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("run: ")).collect();
    assert_eq!(error.len(), 1, "not one line: {stderr:?}");
    assert!(
        stderr.contains("COMMAND 'sh' exited with status 1") && stderr.contains("disk on fire"),
        "{stderr}"
    );
    assert!(saved.is_none());

    // --ignore-failure: kept, marked, out of every statistic; an arm left
    // with no number makes the study invalid.
    args.insert(0, "--ignore-failure");
    let (output, saved) = run_saving(dir.path(), &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(6), "{stderr}");
    let saved = saved.expect("a result is written");
    let reps = saved["reps"].as_array().unwrap();
    assert_eq!(reps.len(), 4);
    assert!(reps.iter().all(|r| r["failed"] == true), "{reps:?}");
    assert!(
        saved["arms"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["wall_s"].is_null())
    );
    let view = String::from_utf8_lossy(&output.stdout);
    assert!(view.contains("4 repetitions failed"), "{view}");
    assert!(
        view.contains("INVALID study (exit 6): repetitions one-per-core failed"),
        "{view}"
    );
}

/// Nothing measured is never valid: a sweep whose every step failed
/// (kept by `--ignore-failure`) says INVALID and exits 6, its JSON says
/// `"valid": false`, and its metrics read it as a failure. (It printed
/// "valid study" and exited 0.)
#[test]
fn a_sweep_with_no_kept_repetition_is_invalid() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let prom = dir.path().join("out.prom");
    let args = [
        "--sweep",
        "--skip-gate",
        "--ignore-failure",
        "--warmups",
        "0",
        "--reps",
        "2",
        "--prom",
        prom.to_str().unwrap(),
        "--",
        "false",
    ];
    let (output, saved) = run_saving(dir.path(), &args);
    let view = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(6), "{view}");
    assert!(
        view.contains("INVALID study (exit 6): nothing measured, no number left: step:1"),
        "{view}"
    );
    assert!(!view.contains("valid study"), "{view}");
    assert_eq!(saved.expect("a result is written")["valid"], false);
    let metrics = std::fs::read_to_string(&prom).unwrap();
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("placement_study_sweep_valid") && l.ends_with(" 0")),
        "{metrics}"
    );
}

#[test]
fn a_shell_loop_is_studied_end_to_end() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let mut args = QUICK.to_vec();
    args[4] = "2";
    args[6] = "1";
    args.extend([
        "3",
        "--prepare",
        "true",
        "--units",
        "1000",
        "--unit",
        "request",
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; echo {threads} {cpus}",
    ]);
    let (output, saved) = run_saving(dir.path(), &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let saved = saved.expect("a result is written");
    assert_eq!(saved["kind"], "command");
    assert_eq!(saved["complete"], true);
    assert_eq!(saved["gated"], false);
    // Saved as given: the placeholders unreplaced.
    let script = saved["options"]["argv"][2].as_str().unwrap();
    assert!(script.ends_with("{threads} {cpus}"), "{script}");
    let arms: Vec<&str> = saved["arms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["arm"].as_str().unwrap())
        .collect();
    assert_eq!(arms, ["one-per-core", "same-cpu"]);
    // One warm-up and three rounds of both arms.
    let reps = saved["reps"].as_array().unwrap();
    assert_eq!(reps.len(), 8);
    assert_eq!(reps.iter().filter(|r| r["warmup"] == true).count(), 2);
    assert_eq!(saved["arms"][0]["wall_s"]["reps"], 3);
    assert!(
        saved["arms"][1]["vs_baseline"].is_number(),
        "{}",
        saved["arms"]
    );
    // Per unit: the wall time over --units, with the same spread.
    assert_eq!(saved["options"]["units"]["name"], "request");
    let wall = saved["arms"][0]["wall_s"]["median"].as_f64().unwrap();
    let per_unit = saved["arms"][0]["wall_s_per_unit"]["median"]
        .as_f64()
        .unwrap();
    assert!((per_unit * 1000.0 / wall - 1.0).abs() < 1e-9, "{per_unit}");
    let view = String::from_utf8_lossy(&output.stdout);
    assert!(
        view.contains("UNGATED") && view.contains("│ baseline"),
        "{view}"
    );
    assert!(
        view.contains("wall time per request (--units 1000), median: one-per-core "),
        "{view}"
    );
    // The command study's own default tolerance, and the same-work check:
    // on this PMU-less VM unavailable, with the reason.
    assert_eq!(saved["options"]["tolerance"], 0.01);
    let check = |name: &str| {
        saved["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no {name} check: {}", saved["checks"]))
            .clone()
    };
    let (same_work, multiplexing) = (check("same-work"), check("multiplexing"));
    let counted = saved["reps"][0]["sample"]["hardware"]["hardware"] == "counted";
    if counted {
        assert_eq!(same_work["status"], "passed", "{same_work}");
        assert_eq!(multiplexing["status"], "passed", "{multiplexing}");
    } else {
        let reason = saved["reps"][0]["sample"]["hardware"]["reason"]
            .as_str()
            .unwrap();
        assert!(
            reason.starts_with("no hardware PMU counts here")
                || reason.contains("perf_event_paranoid"),
            "{reason}"
        );
        assert_eq!(same_work["status"], "unavailable");
        assert_eq!(same_work["detail"], reason);
        assert_eq!(multiplexing["status"], "unavailable");
        assert!(view.contains("same-work"), "{view}");
    }
}

#[test]
fn a_command_that_never_ends_is_stopped_keeping_the_finished_rounds() {
    let _cpus = crate::common::cpus_to_myself();
    for (signal, status) in [
        (nix::sys::signal::Signal::SIGINT, 130),
        (nix::sys::signal::Signal::SIGTERM, 143),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("out.json");
        // Rounds of 0.1 s, then one that never ends.
        let marker = dir.path().join("rounds");
        let script = format!(
            "echo >> {0}; [ $(wc -l < {0}) -gt 4 ] && exec sleep 1000; sleep 0.1",
            marker.display()
        );
        let child = Command::new(env!("CARGO_BIN_EXE_placement-study"))
            .args(["run", "--json", json.to_str().unwrap()])
            .args(QUICK)
            .arg("100")
            .args(["--", "sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Two whole rounds (four repetitions), then the fifth never ends.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::fs::read_to_string(&marker).map_or(0, |m| m.lines().count()) < 5 {
            assert!(std::time::Instant::now() < deadline, "the rounds never ran");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(200));
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(status), "{signal}: {stderr}");
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(saved["complete"], false);
        assert_eq!(saved["reps"].as_array().unwrap().len(), 4, "{signal}");
    }
}

/// The gate runs first, as for the kernel: where it cannot say physical
/// (here: which CPUs share a core is unknown, so inconclusive) the study
/// stops there, with the gate's document and its exit status, and never
/// runs the command.
#[test]
fn the_gate_runs_first_and_its_status_stops_the_study() {
    let _cpus = crate::common::cpus_to_myself();
    let root = crate::topology_fixtures::laptop_without_topology();
    let dir = tempfile::tempdir().unwrap();
    let ran = dir.path().join("ran");
    let script = format!("touch {}", ran.display());
    let (output, saved) = run_saving(
        dir.path(),
        &[
            "--sysfs-root",
            root.path().to_str().unwrap(),
            "--no-cpuid",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(5), "{stdout}");
    assert!(
        stdout.contains("run: stopped at the gate (inconclusive)"),
        "{stdout}"
    );
    let saved = saved.expect("the gate's document is written");
    assert_eq!(saved["kind"], "gate");
    assert_eq!(saved["run_stopped_at_gate"], true);
    assert!(!ran.exists(), "the command ran");
}

/// Started with its standard streams closed (as a daemon or cron may
/// start it), the tool still gives the command `/dev/null` as its standard
/// input and output and a pipe as its stderr, and the study completes:
/// Rust's runtime opens `/dev/null` on a closed fd 0, 1 or 2 before `main`,
/// so no file the tool opens lands there, and the view goes to that
/// `/dev/null`.
#[test]
fn a_command_gets_its_standard_streams_when_the_tool_had_none() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let script = r#"exec <&- >&- 2>&-; exec "$0" "$@""#;
    let check = "test -e /proc/self/fd/0 && test -e /proc/self/fd/1 && test -e /proc/self/fd/2";
    let status = Command::new("sh")
        .args(["-c", script, env!("CARGO_BIN_EXE_placement-study"), "run"])
        .args(["--json", json.to_str().unwrap()])
        .args(QUICK)
        .args(["2", "--", "sh", "-c", check])
        .status()
        .expect("runs");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the study was saved"))
            .expect("JSON");
    let reps = saved["reps"].as_array().expect("reps");
    assert_eq!(reps.len(), 4, "{saved}");
    assert!(reps.iter().all(|rep| rep["failed"] == false), "{saved}");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn the_command_output_goes_to_a_file_each_repetition_rewrites() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("command.out");
    std::fs::write(&file, "an older run's output\n").unwrap();
    let mut args = QUICK.to_vec();
    args.extend([
        "2",
        "--output",
        file.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "echo on {cpus}",
    ]);
    let (output, saved) = run_saving(dir.path(), &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    // Rewritten by each repetition: the last one's (same-cpu on CPU 0), alone.
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(written.lines().count(), 1, "{written:?}");
    assert!(written.starts_with("on "), "{written:?}");
    let saved = saved.expect("a result is written");
    assert_eq!(saved["options"]["output"]["file"], file.to_str().unwrap());
    let view = String::from_utf8_lossy(&output.stdout);
    assert!(view.contains("(the last repetition's)"), "{view}");
}

#[test]
fn an_output_file_that_cannot_take_the_command_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let json = dir.path().join("out.json");
    for (target, expected) in [
        (dir.path().to_path_buf(), "is a folder"),
        (fifo, "name a regular file, or use --output inherit"),
        (json, "--json names that file too"),
    ] {
        let mut args = QUICK.to_vec();
        args.extend(["2", "--output", target.to_str().unwrap(), "--", "true"]);
        let (output, saved) = run_saving(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{target:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{target:?}: {stderr:?}");
        assert!(stderr.contains(expected), "{target:?}: {stderr}");
        assert!(saved.is_none(), "{target:?} wrote a result");
    }
}

/// Domain arms: `cache:L3:0`, `node:0` and `cpus:1` run on this machine
/// (every machine the suite runs on publishes a cache and node 0), each
/// saved as its name with its CPU set; a domain the machine lacks, and a
/// malformed one, are one-line usage errors naming the value and the fix.
#[test]
fn domain_arms_run_and_bad_domains_are_one_line_errors() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let mut args = QUICK.to_vec();
    args[2] = "cache:L3:0,node:0,cpus:0";
    args.extend(["2", "--", "true"]);
    let (output, saved) = run_saving(dir.path(), &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(matches!(output.status.code(), Some(0 | 6)), "{stderr}");
    let saved = saved.expect("a result is written");
    let placements = saved["plan"]["placements"].as_array().unwrap();
    let arms: Vec<&str> = placements
        .iter()
        .map(|p| p["arm"].as_str().unwrap())
        .collect();
    assert_eq!(arms, ["cache:L3:0", "node:0", "cpus:0"]);
    assert_eq!(placements[2]["cpus"], serde_json::json!([0]));
    let checks: Vec<&str> = saved["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(checks.contains(&"cv-bar node:0"), "{checks:?}");
    let json = dir.path().join("out.json");
    let report = placement_study(&["report", json.to_str().unwrap()]);
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );

    for (arm, expected) in [
        ("node:4096", "arm 'node:4096': this machine has"),
        (
            "cache:L3:4096",
            "arm 'cache:L3:4096': this machine publishes",
        ),
        ("cache:x", "a cache is `cache:LEVEL:N`, such as cache:L3:0"),
        ("node:x", "a node is `node:N`"),
        ("cpus:", "arm 'cpus:': the list is empty"),
        ("cpus:0-2000", "CPU 1024 is above 1023"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (output, saved) = run_saving(dir.path(), &["--skip-gate", "--arms", arm, "--", "true"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{arm}: {stderr}");
        // clap adds its usual pointer to --help after a value it refuses.
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with("For more information"))
            .collect();
        assert_eq!(lines.len(), 1, "{arm}: not one line: {stderr:?}");
        assert!(stderr.contains(expected), "{arm}: {stderr}");
        assert!(saved.is_none(), "{arm} wrote a result");
    }
}

/// `run --membind` with a COMMAND on this machine (every machine the suite
/// runs on has node 0 with memory): the policy is set in the command's
/// process before its exec, each arm's nodes and `--membind` are saved,
/// the membind check says what is not located, and the view names it. A
/// node the machine lacks, a malformed value and `--sweep` are one-line
/// usage errors that write nothing.
#[test]
fn membind_reaches_the_command_and_is_saved_and_bad_values_are_refused() {
    let _cpus = crate::common::cpus_to_myself();
    for (membind, arms) in [("local", "node:0"), ("0", "one-per-core,same-cpu")] {
        let dir = tempfile::tempdir().unwrap();
        let mut args = QUICK.to_vec();
        args[2] = arms;
        args.extend(["2", "--membind", membind, "--", "true"]);
        let (output, saved) = run_saving(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{membind}: {stderr}");
        let saved = saved.expect("a result is written");
        assert_eq!(saved["options"]["membind"], membind);
        for placement in saved["plan"]["placements"].as_array().unwrap() {
            assert_eq!(placement["membind"], serde_json::json!([0]), "{placement}");
        }
        let check = crate::common::saved_check(&saved, "membind");
        assert_eq!(check["status"], "unavailable");
        assert!(
            check["detail"]
                .as_str()
                .unwrap()
                .starts_with("MPOL_BIND was set and read back in the command's process"),
            "{check}"
        );
        let json = dir.path().join("out.json");
        let report = placement_study(&["report", json.to_str().unwrap()]);
        let view = String::from_utf8_lossy(&report.stdout);
        assert!(
            view.contains(&format!("memory: --membind {membind}: ")),
            "{view}"
        );
    }

    for (args, expected) in [
        (
            &["--membind", "4096", "--", "true"][..],
            "--membind 4096: this machine has no node 4096 (it has",
        ),
        (
            &["--membind", "near", "--", "true"][..],
            "--membind near: give local (each arm's memory on its own CPUs' nodes) or a node list",
        ),
        (
            &["--sweep", "--membind", "0", "--", "true"][..],
            "--membind does not apply to --sweep",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut all = vec!["--skip-gate"];
        all.extend_from_slice(args);
        let (output, saved) = run_saving(dir.path(), &all);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr:?}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(saved.is_none(), "{args:?} wrote a result");
    }
}
