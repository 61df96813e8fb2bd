//! Issue 38: every process a command, a `--prepare` or an observed
//! command starts is stopped, waited for and counted, whatever signals
//! come; and nothing the tool writes lands where it should not.
//!
//! Each test's processes carry a marker of their own (a `sleep` of a
//! unique length), and survivors are found by scanning `/proc` for it;
//! a guard kills what it finds by PID, so a failing test leaves nothing
//! behind. Nothing is ever killed by name.

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

use crate::common::placement_study;

const BIN: &str = env!("CARGO_BIN_EXE_placement-study");

use crate::common::QUICK_RUN as QUICK;

/// A `sleep` length no other process has: 300-something seconds, with this
/// test process's PID and a counter as its decimals.
struct Marker(String);

impl Marker {
    fn new() -> Marker {
        static NEXT: AtomicU32 = AtomicU32::new(1);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        Marker(format!("30{}.{}0{n}", n % 10, std::process::id()))
    }

    /// `sleep MARKER`, for a shell command line.
    fn sleep(&self) -> String {
        format!("sleep {}", self.0)
    }

    /// The PIDs of the living processes whose command line holds the
    /// marker as a word (a zombie's is empty): its `sleep`s, and the shells
    /// whose scripts name them.
    fn alive(&self) -> Vec<i32> {
        self.matching(|args| {
            args.iter()
                .any(|arg| arg.split([' ', '\'', '"', ';']).any(|word| word == self.0))
        })
    }

    /// The PIDs of the processes that are `sleep MARKER` itself.
    fn sleeping(&self) -> Vec<i32> {
        self.matching(|args| args.len() == 2 && args[0] == "sleep" && args[1] == self.0)
    }

    fn matching(&self, test: impl Fn(&[String]) -> bool) -> Vec<i32> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                    let args: Vec<String> = cmdline
                        .split(|&byte| byte == 0)
                        .filter(|arg| !arg.is_empty())
                        .map(|arg| String::from_utf8_lossy(arg).into_owned())
                        .collect();
                    test(&args)
                })
            })
            .collect()
    }

    /// Waits (up to 10 s) for `sleep MARKER` to run.
    fn wait_running(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.sleeping().is_empty() {
            assert!(Instant::now() < deadline, "{} never started", self.0);
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Asserts that no process with the marker is left: `what` names the
    /// case. A killed process may take a moment to leave `/proc`.
    fn assert_none_left(&self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(2);
        while !self.alive().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(self.alive(), Vec::<i32>::new(), "{what}: left running");
    }
}

impl Drop for Marker {
    /// Whatever a failed test left running is killed, by PID.
    fn drop(&mut self) {
        for pid in self.alive() {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

fn run_saving(json: &Path, args: &[&str]) -> (Output, Option<Value>) {
    let mut all = vec!["run", "--json", json.to_str().unwrap()];
    all.extend_from_slice(args);
    let output = placement_study(&all);
    let saved = std::fs::read_to_string(json)
        .ok()
        .map(|text| serde_json::from_str(&text).expect("the saved file is JSON"));
    (output, saved)
}

/// The repetitions of a saved `run -- COMMAND` document (a sweep keeps
/// them under `command`).
fn reps(saved: &Value) -> &Vec<Value> {
    saved["reps"]
        .as_array()
        .or_else(|| saved["command"]["reps"].as_array())
        .expect("reps")
}

/// Every repetition's outlivers in a saved `run -- COMMAND` document.
fn outlivers(saved: &Value) -> Vec<Value> {
    reps(saved)
        .iter()
        .flat_map(|rep| {
            rep["sample"]["outlivers"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .collect()
}

/// Waits for `child` at most `limit`; a tool that hangs is killed and the
/// test fails.
fn finish(mut child: Child, limit: Duration, what: &str) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            // Its output is not read: what it left running may hold the
            // pipes open.
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn spawn(args: &[&str]) -> Child {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn what_a_command_leaves_running_is_named_and_stopped() {
    let _cpus = crate::common::cpus_to_myself();
    for study in ["run", "sweep"] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("out.json");
        let marker = Marker::new();
        let script = format!("{} & exit 0", marker.sleep());
        let mut args = match study {
            "run" => QUICK.to_vec(),
            _ => vec!["--sweep", "--skip-gate", "--reps", "2", "--no-ceiling"],
        };
        args.extend(["--", "sh", "-c", &script]);
        let (output, saved) = run_saving(&json, &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{study}: {stderr}");
        marker.assert_none_left(&format!("{study} after a normal exit"));
        let saved = saved.expect("a result");
        let outlivers = outlivers(&saved);
        let reps = reps(&saved).len();
        assert_eq!(outlivers.len(), reps, "one a repetition: {outlivers:?}");
        for outliver in &outlivers {
            // The shell's child, named before or after its exec.
            let name = outliver["name"].as_str().unwrap();
            assert!(["sleep", "sh"].contains(&name), "{outliver}");
            assert!(outliver["pid"].as_i64().unwrap() > 0, "{outliver}");
            assert!(outliver["outlived_ms"].is_u64(), "{outliver}");
            // SIGTERM ends a sleep at once, unless the machine is so busy
            // that it is not scheduled within the grace.
            let ended_by = outliver["ended_by"].as_str().unwrap();
            assert!(["sigterm", "sigkill"].contains(&ended_by), "{outliver}");
        }
        assert!(stderr.contains(" (PID "), "{stderr}");
    }
}

#[test]
fn a_setsid_child_that_ignores_sigterm_comes_back_and_is_killed() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let marker = Marker::new();
    // Its own session, deaf to SIGTERM, its parent gone at once.
    let script = format!(
        "setsid sh -c 'trap \"\" TERM; {}; {}' & sleep 0.3; exit 0",
        marker.sleep(),
        marker.sleep()
    );
    let mut args = QUICK.to_vec();
    args.extend(["--", "sh", "-c", &script]);
    let (output, saved) = run_saving(&json, &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    marker.assert_none_left("run with a setsid child");
    let outlivers = outlivers(&saved.expect("a result"));
    assert!(
        outlivers.iter().any(|o| o["ended_by"] == "sigkill"),
        "the SIGTERM-deaf shell needed SIGKILL: {outlivers:?}"
    );
}

#[test]
fn leave_running_names_the_outlivers_and_leaves_them() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let marker = Marker::new();
    let script = format!("{} & exit 0", marker.sleep());
    let mut args = QUICK.to_vec();
    args.extend(["--leave-running", "--", "sh", "-c", &script]);
    let (output, saved) = run_saving(&json, &args);
    assert_eq!(output.status.code(), Some(0));
    let outlivers = outlivers(&saved.expect("a result"));
    assert_eq!(outlivers.len(), 2, "{outlivers:?}");
    assert!(outlivers.iter().all(|o| o["ended_by"] == "left-running"));
    assert_eq!(marker.alive().len(), 2, "both were left running");
    // The marker's guard kills them, by PID.
}

#[test]
fn the_cpu_time_of_a_repetition_counts_its_outlivers() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    // The command ends once its child is deaf to SIGTERM (and so is the
    // child's own sleep); the child sleeps past that, then loops, writing
    // its own CPU time and its children's (/proc/PID/stat) as it goes, through the grace until
    // SIGKILL. Its last written CPU time, all spent after the command
    // ended, is a lower bound of what the repetition must count.
    let marker = Marker::new();
    let ready = dir.path().join("ready");
    let ready = ready.to_str().unwrap();
    let script = format!(
        "sh -c 'trap \"\" TERM; touch \"$1\"; sleep 0.2; while :; do \
         cat /proc/$$/stat > \"$1.t\"; mv \"$1.t\" \"$1.cpu\"; done; {}' spinner \
         {ready}.$$ & while [ ! -e {ready}.$$ ]; do sleep 0.01; done; exit 0",
        marker.sleep()
    );
    let mut args = QUICK.to_vec();
    args.extend(["--", "sh", "-c", &script]);
    let (output, saved) = run_saving(&json, &args);
    assert_eq!(output.status.code(), Some(0));
    marker.assert_none_left("a looping outliver");
    let saved = saved.expect("a result");
    let counted: u64 = reps(&saved)
        .iter()
        .map(|rep| rep["sample"]["task_clock_ns"].as_u64().unwrap())
        .sum();
    // utime, stime, cutime and cstime (its own and its waited-for
    // children's), fields 14 to 17, in clock ticks.
    let tick_ns = 1_000_000_000
        / nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
            .unwrap()
            .unwrap() as u64;
    let spent_ns: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().ends_with(".cpu"))
        .map(|entry| {
            let stat = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
            // After the name: state is field 3, so utime (14) is at 11.
            let ticks: u64 = fields
                .get(11..15)
                .unwrap_or_default()
                .iter()
                .filter_map(|field| field.parse::<u64>().ok())
                .sum();
            ticks * tick_ns
        })
        .sum();
    if spent_ns < 3 * tick_ns {
        eprintln!("the outlivers got under three clock ticks of CPU here; nothing to tell");
        return;
    }
    assert!(
        counted >= spent_ns,
        "the outlivers spent {spent_ns} ns of CPU after the command ended; the repetitions \
         count {counted} ns in all"
    );
}

/// Run, sweep, prepare and observe, each stopped by one signal and by two:
/// nothing of the command's tree survives, and one signal still writes the
/// result, marked incomplete.
#[test]
fn one_or_two_stop_signals_leave_nothing_running() {
    let _cpus = crate::common::cpus_to_myself();
    for signals in [1, 2] {
        for case in ["run", "sweep", "prepare", "observe"] {
            if case == "observe" && signals == 1 {
                // The command decides when it ends, and this one ignores
                // the signal: see observe_passes_one_signal_on_and_says_so.
                continue;
            }
            let what = format!("{case} stopped by {signals} signal(s)");
            let dir = tempfile::tempdir().unwrap();
            let json = dir.path().join("out.json");
            let marker = Marker::new();
            // Deaf to SIGINT and SIGTERM, with a child in its own session.
            let deaf = format!(
                "setsid {} & trap '' INT TERM; {}; {}",
                marker.sleep(),
                marker.sleep(),
                marker.sleep()
            );
            let json_arg = json.to_str().unwrap();
            let mut args: Vec<&str> = match case {
                "observe" => vec!["observe", "--json", json_arg],
                _ => vec!["run", "--json", json_arg],
            };
            match case {
                "run" => args.extend(QUICK),
                "sweep" => args.extend(["--sweep", "--skip-gate", "--reps", "2", "--no-ceiling"]),
                "prepare" => args.extend(QUICK),
                _ => {}
            }
            if case == "prepare" {
                args.extend(["--prepare", &deaf, "--", "true"]);
            } else {
                args.extend(["--", "sh", "-c", &deaf]);
            }
            let child = spawn(&args);
            marker.wait_running();
            std::thread::sleep(Duration::from_millis(200));
            let pid = Pid::from_raw(child.id() as i32);
            kill(pid, Signal::SIGINT).unwrap();
            if signals == 2 {
                std::thread::sleep(Duration::from_millis(100));
                kill(pid, Signal::SIGTERM).unwrap();
            }
            let output = finish(child, Duration::from_secs(20), &what);
            let stderr = String::from_utf8_lossy(&output.stderr);
            marker.assert_none_left(&what);
            if signals == 2 {
                // Killed by the second signal; or, on a machine so busy that
                // it came after the first one's grace, ended by the first.
                assert!(
                    output.status.signal() == Some(libc::SIGTERM)
                        || output.status.code() == Some(130),
                    "{what}: {:?}; {stderr}",
                    output.status
                );
                continue;
            }
            assert_eq!(output.status.code(), Some(130), "{what}: {stderr}");
            let saved: Value =
                serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
            assert_eq!(saved["complete"], false, "{what}");
        }
    }
}

#[test]
fn observe_passes_one_signal_on_and_says_so() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let marker = Marker::new();
    let script = format!("trap 'exit 3' INT; {} & wait", marker.sleep());
    let child = spawn(&[
        "observe",
        "--json",
        json.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        &script,
    ]);
    marker.wait_running();
    std::thread::sleep(Duration::from_millis(200));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let output = finish(child, Duration::from_secs(20), "observe and one SIGINT");
    let stderr = String::from_utf8_lossy(&output.stderr);
    marker.assert_none_left("observe and one SIGINT");
    assert!(
        stderr.contains("SIGINT: passed on to COMMAND's process tree; its report follows"),
        "{stderr}"
    );
    assert!(!stderr.contains("repetitions done so far"), "{stderr}");
    assert_eq!(
        output.status.code(),
        Some(3),
        "the command's status: {stderr}"
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(saved["command_end"]["code"], 3);
}

#[test]
fn observe_names_and_stops_what_its_command_leaves_running() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let marker = Marker::new();
    let script = format!("{} & exit 0", marker.sleep());
    let json_arg = json.to_str().unwrap();
    let output = placement_study(&["observe", "--json", json_arg, "--", "sh", "-c", &script]);
    assert_eq!(output.status.code(), Some(0));
    marker.assert_none_left("observe after a normal exit");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let outlivers = saved["outlivers"].as_array().expect("outlivers");
    assert_eq!(outlivers.len(), 1, "{saved}");
    // The shell's child, named before or after its exec.
    let name = outlivers[0]["name"].as_str().unwrap();
    assert!(["sleep", "sh"].contains(&name), "{saved}");
}

#[test]
fn a_prepare_that_backgrounds_a_child_does_not_hang_the_study() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let marker = Marker::new();
    let prepare = format!("{} &", marker.sleep());
    let mut args = vec!["run", "--json", json.to_str().unwrap()];
    args.extend(QUICK);
    args.extend(["--prepare", &prepare, "--", "true"]);
    let output = finish(spawn(&args), Duration::from_secs(30), "--prepare 'sleep &'");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    marker.assert_none_left("--prepare with a background child");
    assert!(
        stderr.contains("--prepare"),
        "its outliver is named: {stderr}"
    );
}

#[test]
fn a_prepare_past_its_timeout_is_killed_with_its_tree() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let marker = Marker::new();
    let prepare = marker.sleep();
    let mut args = vec!["run", "--json", json.to_str().unwrap()];
    args.extend(QUICK);
    args.extend([
        "--prepare-timeout",
        "1",
        "--prepare",
        &prepare,
        "--",
        "true",
    ]);
    let output = finish(spawn(&args), Duration::from_secs(30), "--prepare-timeout");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("did not end within --prepare-timeout 1s and was killed"),
        "{stderr}"
    );
    marker.assert_none_left("--prepare-timeout");
}

#[test]
fn observe_leaves_standard_output_to_the_command() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.txt");
    let text: String = (0..20_000)
        .map(|n| format!("line {n} of the input\n"))
        .collect();
    std::fs::write(&input, &text).unwrap();
    let input = input.to_str().unwrap();
    let alone = Command::new("xz").args(["-c", input]).output();
    let Ok(alone) = alone else {
        eprintln!("xz is not installed: the comparison with xz is skipped");
        return;
    };
    let observed = placement_study(&["observe", "--", "xz", "-c", input]);
    assert_eq!(observed.status.code(), Some(0));
    assert!(
        observed.stdout == alone.stdout,
        "observe's stdout is xz's alone"
    );
    let report = String::from_utf8_lossy(&observed.stderr);
    assert!(
        report.contains("`xz -c"),
        "the report is on stderr: {report}"
    );
    // -o FILE: the report in a file, stderr quiet.
    let file = dir.path().join("report.txt");
    let observed = placement_study(&["observe", "-o", file.to_str().unwrap(), "--", "echo", "hi"]);
    assert_eq!(observed.stdout, b"hi\n");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("`echo hi`")
    );
}

/// `topology --json LINK` as nobody, in `dir`.
fn topology_as_nobody(dir: &Path, link: &Path) -> Output {
    Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .arg(BIN)
        .args(["topology", "--json", link.to_str().unwrap()])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("setpriv runs (util-linux)")
}

/// A result written through a symbolic link to a file. As root, never
/// followed: root owns every system folder, so `ln -s /etc/passwd link`
/// replaced /etc/passwd (a root-owned decoy in a root-owned folder stands
/// for it here). As nobody: refused where the file, the folder it is in or
/// the link is someone else's (root's decoys), followed where all are the
/// user's.
#[test]
fn outputs_through_links_that_are_not_the_users_are_refused() {
    let _cpus = crate::common::cpus_to_myself();
    if !nix::unistd::geteuid().is_root() {
        eprintln!("not root: the decoys cannot be given away; skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let other = 65534;
    // As root: a root-owned file in a root-owned folder, and another
    // user's file, each behind root's own link.
    let system_file = dir.path().join("passwd");
    std::fs::write(&system_file, "root:x:0:0\n").unwrap();
    let decoy = dir.path().join("decoy");
    std::fs::write(&decoy, "decoy\n").unwrap();
    std::os::unix::fs::chown(&decoy, Some(other), None).unwrap();
    for (option, target) in [
        ("--output", &system_file),
        ("--json", &system_file),
        ("--json", &decoy),
    ] {
        let link = dir.path().join("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(target, &link).unwrap();
        let before = std::fs::read(target).unwrap();
        let mut args = vec!["run", option, link.to_str().unwrap()];
        args.extend(QUICK);
        args.extend(["--", "echo", "pwned"]);
        let output = placement_study(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{option} {target:?}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("as root an output never follows a link to a file"),
            "{stderr}"
        );
        assert_eq!(
            std::fs::read(target).unwrap(),
            before,
            "{target:?} untouched"
        );
    }

    // As nobody, in a folder of nobody's: root's file, a file in root's
    // folder, and a link root planted, all refused; nobody's own link to
    // nobody's own file followed, and still a link.
    let home = dir.path().join("nobodys");
    std::fs::create_dir(&home).unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let roots = home.join("roots");
    std::fs::write(&roots, "root's\n").unwrap();
    let roots_folder = dir.path().join("roots-folder");
    std::fs::create_dir(&roots_folder).unwrap();
    let in_roots_folder = roots_folder.join("file");
    std::fs::write(&in_roots_folder, "theirs\n").unwrap();
    std::os::unix::fs::chown(&in_roots_folder, Some(other), None).unwrap();
    let mine = home.join("mine");
    std::fs::write(&mine, "mine\n").unwrap();
    std::os::unix::fs::chown(&mine, Some(other), None).unwrap();
    let planted = home.join("planted");
    std::os::unix::fs::symlink(&mine, &planted).unwrap();
    let to_roots = home.join("to-roots");
    std::os::unix::fs::symlink(&roots, &to_roots).unwrap();
    std::os::unix::fs::lchown(&to_roots, Some(other), None).unwrap();
    let into_roots_folder = home.join("into-roots-folder");
    std::os::unix::fs::symlink(&in_roots_folder, &into_roots_folder).unwrap();
    std::os::unix::fs::lchown(&into_roots_folder, Some(other), None).unwrap();
    let own = home.join("own-link");
    std::os::unix::fs::symlink(&mine, &own).unwrap();
    std::os::unix::fs::lchown(&own, Some(other), None).unwrap();
    std::os::unix::fs::chown(&home, Some(other), None).unwrap();
    for (link, target, why) in [
        (&to_roots, &roots, "a file of uid 0"),
        (&into_roots_folder, &in_roots_folder, "a folder of uid 0"),
        (&planted, &mine, "made by uid 0"),
    ] {
        let before = std::fs::read(target).unwrap();
        let output = topology_as_nobody(&home, link);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{link:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(why), "{stderr}");
        assert_eq!(
            std::fs::read(target).unwrap(),
            before,
            "{target:?} untouched"
        );
    }
    let output = topology_as_nobody(&home, &own);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        std::fs::symlink_metadata(&own)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&mine)
            .unwrap()
            .contains("\"kind\": \"topology\"")
    );
}

/// As nobody, in a folder anyone may write to (no sticky bit), a file of
/// root's that nobody may not write is never replaced, though renaming
/// over it would be allowed.
#[test]
fn a_file_the_user_may_not_write_is_never_replaced() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("not root: nobody cannot be become; skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let roots = open.join("roots.json");
    std::fs::write(&roots, "root's\n").unwrap();
    assert_eq!(std::fs::metadata(&roots).unwrap().uid(), 0);
    let output = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .arg(BIN)
        .args(["topology", "--json", roots.to_str().unwrap()])
        .current_dir(&open)
        .stdin(Stdio::null())
        .output()
        .expect("setpriv runs (util-linux)");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("you may not write this file"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&roots).unwrap(), "root's\n");
}

/// A folder where no file can be made (a read-only file system mounted in
/// a temporary folder) is refused with status 2 before anything runs.
#[test]
fn a_read_only_folder_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "ro", "none"])
        .arg(dir.path())
        .status();
    if !mounted.is_ok_and(|status| status.success()) {
        eprintln!("cannot mount a read-only tmpfs here; skipped");
        return;
    }
    let marker = Marker::new();
    let target = dir.path().join("out.json");
    let script = format!("{}; exit 0", marker.sleep());
    let mut args = vec!["run", "--json", target.to_str().unwrap()];
    args.extend(QUICK);
    args.extend(["--", "sh", "-c", &script]);
    let output = placement_study(&args);
    let _ = Command::new("umount").arg(dir.path()).status();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("cannot create a file in"), "{stderr}");
    marker.assert_none_left("a refused output");
}

#[test]
fn a_study_says_its_plan_and_each_round_and_stops_at_max_seconds() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    // QUICK, but 1000 repetitions that --max-seconds cuts short.
    let mut args = QUICK[..QUICK.len() - 1].to_vec();
    args.extend(["1000", "--max-seconds", "2", "--", "sleep", "0.3"]);
    let (output, saved) = run_saving(&json, &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("run: round 1/1000"),
        "a line a round: {stderr}"
    );
    let saved = saved.expect("a result");
    let reps = reps(&saved).len();
    let round_lines = stderr
        .lines()
        .filter(|l| l.starts_with("run: round "))
        .count();
    assert_eq!(round_lines, reps, "a line a round: {stderr}");
    assert!(
        stderr.contains("1000 rounds × 1 run ×"),
        "the plan: {stderr}"
    );
    assert!(stderr.contains("--max-seconds 2 reached"), "{stderr}");
    assert!((1..40).contains(&reps), "{reps} repetitions");
    let warnings = saved["warnings"].to_string();
    assert!(
        warnings.contains("--max-seconds ended the study"),
        "{warnings}"
    );
}

#[test]
fn a_study_whose_arms_all_miss_their_cv_bar_says_nothing_is_quotable() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    // Sleeps of 10 to 90 ms by the shell's PID: far above a 1 % CV.
    let mut args = QUICK.to_vec();
    args[8] = "4";
    args.extend(["--", "sh", "-c", "sleep 0.0$(( $$ % 9 + 1 ))"]);
    let (output, _) = run_saving(&json, &args);
    let view = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{view}");
    assert!(!view.contains("\nvalid study\n"), "{view}");
    assert!(view.contains("no arm's wall time is quotable"), "{view}");
}

/// On a terminal, observe's command (a process group of its own) is put in
/// the foreground, so it can read the terminal rather than be stopped by
/// SIGTTIN. `script` gives it a terminal of its own (a new pty).
#[test]
fn observe_hands_its_terminal_to_the_command() {
    let command = format!("{BIN} observe -- sh -c 'read line; echo got $line'");
    let child = Command::new("timeout")
        .args(["20", "script", "-qec", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("script (util-linux) is not installed; skipped");
        return;
    };
    std::thread::sleep(Duration::from_millis(1500));
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"typed\n").unwrap();
    let output = child.wait_with_output().unwrap();
    drop(stdin);
    let shown = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "stopped by SIGTTIN? {shown}");
    assert!(shown.contains("got typed"), "{shown}");
}
