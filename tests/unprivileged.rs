//! The tool as a user without privileges: `gate`, `run` and `observe` run as
//! `nobody` (through `setpriv`) at this machine's perf_event_paranoid, at 1
//! and at 2, and must measure, never stop at a refused perf_event_open. At 2
//! the kernel refuses software events with their kernel side, so a
//! measurement counts from each thread's own accounting and says so; at 1
//! perf counts them as for root. Debian's and Ubuntu's levels 3 and 4, which
//! refuse every perf_event_open (mainline reads them as 2), are played by a
//! seccomp filter that makes the call fail with EACCES: `gate` and `run`
//! still measure, on the tick clock; `observe` is one line naming the fix.
//!
//! Ignored: it needs root, to become `nobody` and to set
//! `kernel.perf_event_paranoid`, which it restores when it ends, passed,
//! failed or panicked (`.ci/run` runs it, and restores the setting too if
//! the test is killed).

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
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

/// Does the kernel register a CPU PMU (`cpu*`, `armv*`, `apple_*`)?
fn pmu_visible() -> bool {
    std::fs::read_dir("/sys/bus/event_source/devices")
        .map(|devices| {
            devices.flatten().any(|device| {
                let name = device.file_name().to_string_lossy().into_owned();
                ["cpu", "armv", "apple_"]
                    .iter()
                    .any(|p| name.starts_with(p))
            })
        })
        .unwrap_or(true)
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
    nobody(dir, args)
        .output()
        .expect("setpriv runs (util-linux)")
}

fn nobody(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("setpriv");
    command
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .current_dir(dir);
    command
}

/// Like [`as_nobody`], with every perf_event_open failing with EACCES, as
/// at Debian's and Ubuntu's levels 3 and 4: a seccomp filter installed
/// between fork and exec, which setpriv and the binary inherit.
fn as_nobody_without_perf(dir: &Path, args: &[&str]) -> Output {
    let mut command = nobody(dir, args);
    // SAFETY: between fork and exec the closure makes two prctl calls on
    // data it owns, and allocates nothing.
    unsafe {
        command.pre_exec(|| {
            let nr = u32::try_from(libc::SYS_perf_event_open).expect("a small syscall number");
            // seccomp_data: the syscall number at offset 0; one filter per
            // native call, so the architecture word needs no check here.
            let mut program = [
                libc::BPF_STMT((libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16, 0),
                libc::BPF_JUMP(
                    (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
                    nr,
                    0,
                    1,
                ),
                libc::BPF_STMT(
                    (libc::BPF_RET | libc::BPF_K) as u16,
                    libc::SECCOMP_RET_ERRNO | libc::EACCES as u32,
                ),
                libc::BPF_STMT(
                    (libc::BPF_RET | libc::BPF_K) as u16,
                    libc::SECCOMP_RET_ALLOW,
                ),
            ];
            let filter = libc::sock_fprog {
                len: program.len() as u16,
                filter: program.as_mut_ptr(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &filter as *const libc::sock_fprog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.output().expect("setpriv runs (util-linux)")
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

fn measure_as_nobody(level: i32) {
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
        // As nobody, the busy-MHz line blamed perf_event_paranoid where no
        // PMU is there to count: the missing PMU is the cause to name.
        if !pmu_visible() {
            let reason = json["setup"]["hardware_counters"]["reason"].as_str();
            let reason = reason.unwrap_or_default();
            assert!(
                reason.starts_with("no hardware PMU visible"),
                "{what}: {reason}"
            );
        }
    }

    // A user's command under the arms: its tree's switch records are the
    // user's own, so placement is judged at every level tried here.
    let output = as_nobody(dir.path(), &command_study("command.json"));
    let what = format!("run -- COMMAND as nobody at perf_event_paranoid {level}");
    assert!(
        matches!(output.status.code(), Some(0 | 6)),
        "{}",
        describe(&what, &output)
    );
    let json = saved(dir.path().join("command.json"));
    assert_eq!(json["kind"], "command", "{what}");
    assert_eq!(
        check_status(&json, "placement-held"),
        "passed",
        "{what}: {json}"
    );

    // pairs and hybrid: a map or a study (any verdict), never an error;
    // pairs is held to a few seconds by its time budget.
    let studies: [(&str, &[i32]); 2] = [("pairs", &[0, 3, 5]), ("hybrid", &[0, 3, 5, 6])];
    for (command, statuses) in studies {
        let file = format!("{command}.json");
        let mut args = vec![command, "--json", file.as_str(), "--warmups", "0"];
        args.extend(match command {
            "pairs" => ["--rep-ms", "5", "--time-budget", "5s"],
            _ => ["--rep-ms", "50", "--reps", "6"],
        });
        let output = as_nobody(dir.path(), &args);
        let what = format!("{command} as nobody at perf_event_paranoid {level}");
        assert!(
            output
                .status
                .code()
                .is_some_and(|code| statuses.contains(&code)),
            "{}",
            describe(&what, &output)
        );
        let json = saved(dir.path().join(&file));
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

/// `run -- COMMAND`'s arguments: a short shell loop, ungated (this
/// machine has no SMT), written to `file`.
fn command_study(file: &str) -> Vec<&str> {
    vec![
        "run",
        "--skip-gate",
        "--json",
        file,
        "--reps",
        "2",
        "--warmups",
        "0",
        "--arms",
        "one-per-core,same-cpu",
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done",
    ]
}

/// The status of the check `name` in a saved document.
fn check_status<'json>(json: &'json Value, name: &str) -> &'json str {
    json["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|check| check["name"] == name)
        .and_then(|check| check["status"].as_str())
        .expect("the check is there")
}

#[test]
#[ignore = "needs root: runs the binary as nobody and sets kernel.perf_event_paranoid"]
fn every_study_measures_as_nobody() {
    let machine_level = current_level();
    let mut levels = vec![machine_level, 1, 2];
    levels.sort_unstable();
    levels.dedup();
    for level in levels {
        eprintln!("perf_event_paranoid {level}: gate, run, pairs, hybrid and observe as nobody");
        let _level = ParanoidLevel::set(level);
        measure_as_nobody(level);
    }
    assert_eq!(current_level(), machine_level, "the setting is restored");
}

#[test]
#[ignore = "needs root: runs the binary as nobody"]
fn without_perf_event_open_run_measures_on_the_tick_clock_and_observe_says_why() {
    let dir = scratch();
    let output = as_nobody_without_perf(
        dir.path(),
        &[
            "run",
            "--json",
            "run.json",
            "--reps",
            "2",
            "--rep-ms",
            "5",
            "--warmups",
            "0",
        ],
    );
    let what = "run as nobody without perf_event_open";
    assert!(
        matches!(output.status.code(), Some(0 | 3 | 5 | 6)),
        "{}",
        describe(what, &output)
    );
    let json = saved(dir.path().join("run.json"));
    if json["kind"] == "run" {
        let setup = &json["setup"];
        check_software_counters(setup, &json["warnings"], 3, what);
        assert_ne!(setup["clock"], "core-cycles", "{what}: {setup}");
        let reason = setup["hardware_counters"]["reason"].as_str().unwrap_or("");
        // The cause a fix would change: without a PMU none would, so the
        // missing PMU is named, not the refusal.
        let expected = match pmu_visible() {
            true => "hardware counters forbidden: /proc/sys/kernel/perf_event_paranoid is ",
            false => "no hardware PMU visible",
        };
        assert!(reason.starts_with(expected), "{what}: {reason}");
    }

    // Without perf a command is still measured (its children's rusage),
    // and where its threads ran is unknown: unavailable, never held.
    let output = as_nobody_without_perf(dir.path(), &command_study("command.json"));
    let what = "run -- COMMAND as nobody without perf_event_open";
    assert!(
        matches!(output.status.code(), Some(0 | 6)),
        "{}",
        describe(what, &output)
    );
    let json = saved(dir.path().join("command.json"));
    assert_eq!(
        check_status(&json, "placement-held"),
        "unavailable",
        "{what}: {json}"
    );
    // Nor are its hardware counts: same work is unavailable, saying why.
    assert_eq!(
        check_status(&json, "same-work"),
        "unavailable",
        "{what}: {json}"
    );
    let refused = json["reps"][0]["sample"]["hardware"]["reason"]
        .as_str()
        .unwrap_or_default();
    assert!(
        refused.starts_with("perf_event_open refused the cycles hardware event"),
        "{what}: {json}"
    );

    let output = as_nobody_without_perf(dir.path(), &["observe", "--", "true"]);
    let what = "observe as nobody without perf_event_open";
    assert_eq!(output.status.code(), Some(1), "{}", describe(what, &output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{}", describe(what, &output));
    for needed in [
        "perf_event_paranoid",
        "CAP_PERFMON",
        "setcap cap_perfmon+ep",
    ] {
        assert!(stderr.contains(needed), "{what}: no {needed:?} in {stderr}");
    }
}

/// `run --membind local` as nobody: set_mempolicy, get_mempolicy, mbind and
/// move_pages on one's own memory need no privilege. The kernel's buffers
/// are bound and located (the membind check passes); a command gets the
/// policy before its exec (the check says its pages are not located).
#[test]
#[ignore = "needs root: runs the binary as nobody"]
fn membind_needs_no_privilege() {
    let dir = scratch();
    let quick = [
        "--skip-gate",
        "--warmups",
        "0",
        "--reps",
        "2",
        "--membind",
        "local",
    ];
    let kernel = [
        &[
            "run",
            "--json",
            "kernel.json",
            "--workers",
            "1",
            "--arms",
            "one-per-core",
        ][..],
        &["--rep-ms", "2"],
        &quick,
    ]
    .concat();
    let command = [
        &[
            "run",
            "--json",
            "command.json",
            "--threads",
            "1",
            "--arms",
            "one-per-core",
        ][..],
        &quick,
        &["--", "true"],
    ]
    .concat();
    for (args, file, status) in [
        (kernel, "kernel.json", "passed"),
        (command, "command.json", "unavailable"),
    ] {
        let output = as_nobody(dir.path(), &args);
        let what = format!("{file}: run --membind local as nobody");
        assert!(
            matches!(output.status.code(), Some(0 | 6)),
            "{}",
            describe(&what, &output)
        );
        let json = saved(dir.path().join(file));
        assert_eq!(json["options"]["membind"], "local", "{what}");
        assert_eq!(check_status(&json, "membind"), status, "{what}: {json}");
    }
}
