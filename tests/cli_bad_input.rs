//! Bad input, as a new user types it: each gives a one-line error or a
//! documented status, before anything is measured, and none destroys a
//! file, panics or hangs. Every node or link a test writes to is made in a
//! temporary folder, never the machine's own /dev.

use crate::common::placement_study;
use nix::sys::stat::{Mode, SFlag, makedev, mknod};
use std::fs::File;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The status, and stderr, which must be exactly one line.
fn one_line_error(output: &Output) -> (Option<i32>, String) {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr:?}");
    assert!(stderr.starts_with("placement-study: "), "{stderr}");
    (output.status.code(), stderr)
}

#[test]
fn a_bare_threshold_above_one_is_refused_with_the_fix() {
    let (status, stderr) = one_line_error(&placement_study(&["gate", "--threshold", "15"]));
    assert_eq!(status, Some(2));
    assert!(
        stderr.contains("write 15% for 15 per cent, or 0.15"),
        "{stderr}"
    );
    for good in ["15%", "0.15"] {
        let output = placement_study(&["gate", "--threshold", good, "-q"]);
        assert_ne!(output.status.code(), Some(2), "--threshold {good}");
    }
}

#[test]
fn an_unknown_kernel_is_a_usage_error_even_without_smt() {
    let (status, stderr) = one_line_error(&placement_study(&["gate", "--kernel", "nope"]));
    assert_eq!(status, Some(2));
    assert!(
        stderr.contains("--kernel nope: unknown kernel; known kernels are mul"),
        "{stderr}"
    );
}

#[test]
fn out_of_range_values_name_the_option_and_the_range() {
    for (args, expected) in [
        (
            &["run", "--rep-ms", "20000"][..],
            "--rep-ms 20000: out of range; use 1 to 10000",
        ),
        (
            &["run", "--max-reps", "5000"][..],
            "--max-reps 5000: out of range; use 1 to 1000",
        ),
        (
            &["run", "--workers", "100000"][..],
            "--workers 100000: out of range; use 1 to 1024",
        ),
        (
            // Odd, but out of range first: no even number past the range.
            &["run", "--workers", "1025"][..],
            "--workers 1025: out of range; use 1 to 1024",
        ),
        (
            &["run", "--workers", "3", "--arms", "sibling-packed"][..],
            "--workers 3: sibling-packed puts two workers on each core, so it needs an even number; use 4",
        ),
        (
            &["run", "--reps", "1"][..],
            "--reps 1: out of range; use 2 to 1000",
        ),
        (
            &["gate", "--min-reps", "2"][..],
            "--min-reps 2: out of range; use 6 to 1000",
        ),
        (
            &["gate", "--batch-gap", "70000"][..],
            "--batch-gap 70000: out of range; use 0 to 60000",
        ),
        (
            &["pairs", "--batches", "3", "--max-batches", "2"][..],
            "--max-batches 2 is below --batches 3: raise --max-batches",
        ),
        (
            &["run", "--cv-bar", "2"][..],
            "--cv-bar 2: a bare number is a fraction",
        ),
        (
            &["hybrid", "--rep-ms", "10"][..],
            "--rep-ms 10: out of range; use 50 to 10000",
        ),
        (
            &["hybrid", "--workers", "1"][..],
            "--workers 1: out of range; use 2 to 1024",
        ),
        (
            &["hybrid", "--reps", "1"][..],
            "--reps 1: out of range; use 2 to 1000",
        ),
        (
            &["run", "--sweep", "--order", "0,x"][..],
            "--order 0,x: use cores-first, siblings-first, spread, or a CPU list",
        ),
        (
            &["run", "--sweep", "--order", "0-99999999"][..],
            "--order 0-99999999: use cores-first",
        ),
        (
            &["run", "--sweep", "--workers", "2"][..],
            "--workers does not apply to --sweep",
        ),
        (
            &["run", "--steps", "1,2"][..],
            "--steps is for a sweep: add --sweep",
        ),
        (
            &["run", "--no-ceiling", "--", "true"][..],
            "--no-ceiling is for a sweep: add --sweep",
        ),
        (
            &["run", "--sweep", "--steps", "0"][..],
            "--steps 0: out of range; use 1 to 1024",
        ),
        (
            &["run", "--sweep", "--rep-ms", "10"][..],
            "--rep-ms 10: out of range; use 50 to 10000",
        ),
        (
            &["run", "--sweep", "--prepare", "true"][..],
            "--prepare is for a COMMAND: give one after --",
        ),
        (
            &["run", "--sweep", "--kernel", "mul", "--", "true"][..],
            "--kernel is for the built-in kernel, not a COMMAND",
        ),
        (
            &["run", "--sweep", "--threads", "2", "--", "true"][..],
            "--threads does not apply to --sweep",
        ),
        (
            &["run", "--sweep", "--tolerance", "0.01", "--", "true"][..],
            "--tolerance does not apply to a COMMAND sweep",
        ),
        (
            &["run", "--sweep", "--units", "5", "--", "true"][..],
            "--units does not apply to --sweep",
        ),
    ] {
        let (status, stderr) = one_line_error(&placement_study(args));
        assert_eq!(status, Some(2), "{args:?}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn two_outputs_on_standard_output_are_refused() {
    let (status, stderr) = one_line_error(&placement_study(&[
        "run",
        "--skip-gate",
        "--json",
        "-",
        "--csv",
        "-",
    ]));
    assert_eq!(status, Some(2));
    assert!(stderr.contains("--json and --csv"), "{stderr}");
}

#[test]
fn an_unwritable_output_path_is_found_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-folder/run.json");
    let started = std::time::Instant::now();
    let output = placement_study(&[
        "run",
        "--skip-gate",
        "--rep-ms",
        "10000",
        "--json",
        missing.to_str().unwrap(),
    ]);
    let (status, stderr) = one_line_error(&output);
    assert_eq!(status, Some(2));
    assert!(stderr.contains(missing.to_str().unwrap()), "{stderr}");
    assert!(
        !stderr.contains(".run.json."),
        "names a temporary file: {stderr}"
    );
    // A 10 s repetition would have run first before; a usage error is immediate.
    println!("refused in {:?}", started.elapsed());
}

#[test]
fn report_never_writes_over_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("gate.json");
    let gate = placement_study(&["gate", "--json"]);
    std::fs::write(&input, &gate.stdout).unwrap();
    // `--json=FILE` needs the "="; a bare word after --json is an input.
    let output = placement_study(&[
        "report",
        &format!("--json={}", input.display()),
        input.to_str().unwrap(),
    ]);
    let (status, stderr) = one_line_error(&output);
    assert_eq!(status, Some(2));
    assert!(stderr.contains("one of the files to read"), "{stderr}");
    assert_eq!(std::fs::read(&input).unwrap(), gate.stdout);
}

#[test]
fn gate_json_alone_still_prints_the_document() {
    let output = placement_study(&["gate", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["kind"], "gate");
    let dash = placement_study(&["gate", "--json", "-"]);
    let again: serde_json::Value = serde_json::from_slice(&dash.stdout).unwrap();
    assert_eq!(again["verdict"], json["verdict"]);
}

#[test]
fn a_full_standard_output_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full");
    // The numbers of /dev/full, as a node of our own.
    mknod(
        &full,
        SFlag::S_IFCHR,
        Mode::from_bits_truncate(0o666),
        makedev(1, 7),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .arg("topology")
        .stdout(File::options().write(true).open(&full).unwrap())
        .output()
        .unwrap();
    let (status, stderr) = one_line_error(&output);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(Path::new(&full).exists());
}

#[test]
fn help_and_man_page_list_every_exit_status() {
    let help = String::from_utf8_lossy(&placement_study(&["--help"]).stdout).into_owned();
    let man = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/man/placement-study.1"
    ))
    .unwrap();
    let section = man
        .split(".SH EXIT STATUS")
        .nth(1)
        .and_then(|rest| rest.split("\n.SH ").next())
        .expect("the man page has an EXIT STATUS section");
    for status in placement_study::exit::EXIT_STATUSES
        .iter()
        .map(|row| row.status)
    {
        assert!(
            help.lines()
                .any(|l| l.trim_start().starts_with(&format!("{status} "))),
            "--help lacks exit status {status}:\n{help}"
        );
        assert!(
            section.contains(&format!(".B {status}\n")),
            "the man page's EXIT STATUS lacks {status}"
        );
    }
}

#[test]
fn run_of_arms_a_host_cannot_place_is_one_usage_error_before_measuring() {
    let sysfs = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/sysfs/kvm-guest-2cpu");
    let output = placement_study(&[
        "run",
        "--sysfs-root",
        sysfs,
        "--no-cpuid",
        "--arms",
        "sibling-packed",
        "--rep-ms",
        "10000",
    ]);
    let (status, stderr) = one_line_error(&output);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(
        stderr.contains("`placement-study run --workers 2 --arms one-per-core,same-cpu`"),
        "{stderr}"
    );
}

/// A 1 ms sample is too short for 1000 round trips at a guest's 500 ns one
/// way: its pairs read as stacked on a busy guest (exit 3, "maps differ").
/// It is refused before anything is measured, naming the smallest bound
/// that reads the guest right; `latency --help` says the same range.
#[test]
fn a_latency_sample_too_short_for_its_round_trips_is_refused() {
    let (status, stderr) = one_line_error(&placement_study(&[
        "latency",
        "--samples",
        "3",
        "--sample-ms",
        "1",
    ]));
    assert_eq!(status, Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "placement-study: --sample-ms 1: out of range; use 2 to 10000"
    );
    let help =
        String::from_utf8_lossy(&placement_study(&["latency", "--help"]).stdout).into_owned();
    let words = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("Wall-time bound of one sample in milliseconds (2 to 10000)"),
        "{help}"
    );
}

/// `run --help` says each range of `--rep-ms` that `run` checks: 1 to
/// 10000, and 50 to 10000 with `--sweep`; the checks refuse just below
/// each and name the same range.
#[test]
fn run_help_says_the_rep_ms_ranges_that_run_checks() {
    let help = String::from_utf8_lossy(&placement_study(&["run", "--help"]).stdout).into_owned();
    let words = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("(1 to 10000; 50 to 10000 with --sweep)"),
        "{help}"
    );
    for (args, range) in [
        (&["run", "--rep-ms", "0"][..], "use 1 to 10000"),
        (&["run", "--rep-ms", "10001"][..], "use 1 to 10000"),
        (&["run", "--sweep", "--rep-ms", "49"][..], "use 50 to 10000"),
    ] {
        let (status, stderr) = one_line_error(&placement_study(args));
        assert_eq!(status, Some(2), "{args:?}: {stderr}");
        assert!(stderr.trim_end().ends_with(range), "{args:?}: {stderr}");
    }
}

/// `run --help` says, beside 3 and 5, that run stopped at its gate there,
/// in the words of the one table; the top-level help names run beside
/// gate for each.
#[test]
fn help_names_run_beside_gate_for_each_verdict_that_stops_it() {
    let top = String::from_utf8_lossy(&placement_study(&["--help"]).stdout).into_owned();
    let run = String::from_utf8_lossy(&placement_study(&["run", "--help"]).stdout).into_owned();
    // --help wraps the table, so compare its words, not its lines.
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let (top, run) = (words(&top), words(&run));
    for status in [3, 5] {
        let row = placement_study::exit::EXIT_STATUSES
            .iter()
            .find(|row| row.status == status && row.commands == ["run"])
            .unwrap_or_else(|| panic!("exit status {status} omits run"));
        assert!(
            row.meaning.starts_with("stopped at its gate, which said "),
            "{}",
            row.meaning
        );
        assert!(run.contains(&format!("{status} {}", row.meaning)), "{run}");
        assert!(top.contains(&format!("run: {}", row.meaning)), "{top}");
    }
}

#[test]
fn snapshot_never_removes_a_folder_it_did_not_leave() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("host");
    let users = dir.path().join("host.partial");
    std::fs::create_dir(&users).unwrap();
    std::fs::write(users.join("data"), "precious").unwrap();
    let (status, stderr) =
        one_line_error(&placement_study(&["snapshot", target.to_str().unwrap()]));
    assert_eq!(status, Some(1));
    assert!(
        stderr.contains("was not left by placement-study snapshot"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(users.join("data")).unwrap(),
        "precious"
    );
}

#[test]
fn a_bad_time_budget_is_a_usage_error_naming_the_fix() {
    for (budget, expected) in [
        ("0", "--time-budget 0: out of range; use 1 s to 604800 s"),
        (
            "5x",
            "--time-budget 5x: unknown unit 'x'; write seconds like 90, or 90s, 5m, 1h",
        ),
        ("soon", "--time-budget soon: unknown unit 'soon'"),
        (
            "-3m",
            "--time-budget -3m: must be a positive duration such as 90s",
        ),
    ] {
        // Attached with "=": clap would read "-3m" as an option.
        let (status, stderr) = one_line_error(&placement_study(&[
            "pairs",
            &format!("--time-budget={budget}"),
        ]));
        assert_eq!(status, Some(2), "{budget}: {stderr}");
        assert!(stderr.contains(expected), "{budget}: {stderr}");
    }
}

#[test]
fn one_allowed_cpu_is_an_error_saying_how_to_widen_it() {
    for (command, expected) in [
        ("pairs", "pairs needs at least two CPUs to compare"),
        ("hybrid", "hybrid needs two cores to divide work between"),
    ] {
        let output = Command::new("taskset")
            .args(["-c", "0", env!("CARGO_BIN_EXE_placement-study"), command])
            .stdin(Stdio::null())
            .output();
        let Ok(output) = output else {
            eprintln!("skipping: no taskset here");
            return;
        };
        let (status, stderr) = one_line_error(&output);
        assert_eq!(status, Some(1), "{stderr}");
        assert!(
            stderr.contains(expected) && stderr.contains("widen"),
            "{stderr}"
        );
    }
}

#[test]
fn observe_without_a_target_or_with_two_is_a_usage_error_naming_them() {
    // clap's own errors (as for every command's missing or conflicting
    // arguments): several lines, the first naming what is wrong.
    for (args, expected) in [
        (
            &["observe"][..],
            "the following required arguments were not provided",
        ),
        (
            &["observe", "--pid", "1", "--kernel", "mul"][..],
            "the argument '--pid <PID>' cannot be used with '--kernel <NAME>'",
        ),
    ] {
        let output = placement_study(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
        let first = stderr.lines().next().unwrap_or_default();
        assert!(first.contains(expected), "{args:?}: {stderr}");
        assert!(
            stderr.contains("<COMMAND|--pid <PID>|--kernel <NAME>>"),
            "{args:?} does not show the three targets: {stderr}"
        );
    }
}

#[test]
fn observe_options_that_cannot_work_are_refused_naming_the_value_and_the_fix() {
    for (args, expected) in [
        (
            &["observe", "--kernel", "nope", "--seconds", "1"][..],
            "--kernel nope: unknown kernel; known kernels are mul",
        ),
        (
            &["observe", "--kernel", "mul"][..],
            "--kernel mul needs --seconds N: how long its threads run",
        ),
        (
            &["observe", "--seconds", "1", "--", "true"][..],
            "--seconds 1: a command is followed until it exits; use `timeout` in COMMAND",
        ),
        (
            &[
                "observe",
                "--kernel",
                "mul",
                "--seconds",
                "1",
                "--threads",
                "0",
            ][..],
            "--threads 0: out of range; use 1 to 1024",
        ),
        (
            &["observe", "--interval", "0", "--", "true"][..],
            "--interval 0: out of range; use 1 to 3600000",
        ),
        (
            &["observe", "--pid", "0"][..],
            "--pid 0: not a process observe can follow; give another process's PID",
        ),
        (
            &["observe", "--seconds", "abc", "--", "true"][..],
            "--seconds abc: unknown unit 'abc'; write seconds like 90, or 90s, 5m, 1h",
        ),
        (
            &["observe", "--kernel", "mul", "--seconds", "abc"][..],
            "--seconds abc: unknown unit 'abc'",
        ),
    ] {
        let output = placement_study(args);
        assert!(output.stdout.is_empty(), "{args:?}");
        let (status, stderr) = one_line_error(&output);
        assert_eq!(status, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// Whether `stderr` says this host does not let observe open its perf
/// events (the caller skips, saying so).
fn perf_refused(stderr: &str) -> bool {
    let refused = stderr.contains("perf_event_open");
    if refused {
        eprintln!("skipping: observe cannot record here: {stderr}");
    }
    refused
}

#[test]
fn observe_of_a_program_that_cannot_run_is_one_line_naming_it_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("observe.json");
    let csv = dir.path().join("observe.csv");
    for (program, expected) in [
        (
            "/nonexistent/program",
            "cannot run COMMAND '/nonexistent/program': No such file or directory",
        ),
        (
            "placement-study-no-such-program",
            "COMMAND 'placement-study-no-such-program' not found in PATH",
        ),
    ] {
        let output = placement_study(&[
            "observe",
            "--json",
            json.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
            "--",
            program,
        ]);
        let (status, stderr) = one_line_error(&output);
        if perf_refused(&stderr) {
            return;
        }
        assert_eq!(status, Some(1), "{program}: {stderr}");
        assert!(stderr.contains(expected), "{program}: {stderr}");
        assert!(output.stdout.is_empty(), "{program}: partial output");
        assert!(
            !json.exists() && !csv.exists(),
            "{program}: an output was written"
        );
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn observe_of_a_process_that_does_not_exist_is_one_line_saying_so() {
    // The largest PID Linux can hand out (pid_max is at most 2^22): almost
    // never in use.
    let pid = "4194303";
    if Path::new("/proc").join(pid).exists() {
        eprintln!("skipping: process {pid} exists here");
        return;
    }
    let output = placement_study(&["observe", "--pid", pid]);
    let (status, stderr) = one_line_error(&output);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains("--pid 4194303: no such process (check the number with `ps -p 4194303`)"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn report_refuses_a_word_after_json_it_would_read_as_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let old_output = dir.path().join("out.json");
    let input = format!(
        "{}/fixtures/results/gate-vm-no-smt.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::copy(&input, &old_output).unwrap();
    let old = old_output.to_str().unwrap();
    for flag in ["--json", "--csv"] {
        let (status, stderr) = one_line_error(&placement_study(&["report", flag, old, &input]));
        assert_eq!(status, Some(2));
        assert!(
            stderr.contains(&format!("write {flag}={old} to save to it")),
            "{stderr}"
        );
    }
    // Behind the inputs, or with "=", it is what it says.
    let output = placement_study(&["report", &input, "--json"]);
    assert_eq!(output.status.code(), Some(0));
    let saved = dir.path().join("saved.json");
    let json = format!("--json={}", saved.display());
    assert_eq!(
        placement_study(&["report", &json, &input]).status.code(),
        Some(0)
    );
    assert!(saved.exists());
}
