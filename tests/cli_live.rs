//! The binary on the machine the tests run on, checked against what the
//! kernel says independently (so the same assertions hold on a laptop, a
//! server, or the 2-vCPU KVM guests CI runs on); and `report` on the saved
//! `pairs` results of QEMU guests in `fixtures/results/`.

use crate::common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn placement_study(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .output()
        .expect("the test binary runs")
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn topology_json_matches_the_kernel() {
    let _cpus = crate::common::cpus_to_myself();
    let output = placement_study(&["topology", "--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    let summary = &json["summary"];
    let online = std::fs::read_dir("/sys/devices/system/cpu")
        .unwrap()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            name.strip_prefix("cpu")
                .is_some_and(|n| n.parse::<u32>().is_ok())
                && e.path().join("topology").is_dir()
        })
        .count();
    assert_eq!(summary["cpus"].as_u64().unwrap() as usize, online);
    assert_eq!(json["cpus"].as_array().unwrap().len(), online);
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let hypervisor_flag = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .is_some_and(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    if hypervisor_flag && cfg!(target_arch = "x86_64") {
        assert!(
            summary["hypervisor"].is_string(),
            "hypervisor flag set but summary.hypervisor is {}",
            summary["hypervisor"]
        );
    }
    let pmu = std::fs::read_dir("/sys/bus/event_source/devices")
        .map(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("cpu"))
        })
        .unwrap_or(false);
    assert_eq!(json["environment"]["hardware_pmu"].as_bool(), Some(pmu));
    let smt = summary["smt"].as_bool().unwrap();
    let cores = summary["cores"].as_u64().unwrap() as usize;
    assert_eq!(smt, cores < online);
}

#[test]
fn topology_human_view_names_the_structure() {
    let _cpus = crate::common::cpus_to_myself();
    let output = placement_study(&["topology"]);
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("Package 0"), "{text}");
    assert!(text.contains("Core 0"), "{text}");
}

#[test]
fn gate_without_siblings_says_no_smt_and_exits_4() {
    let _cpus = crate::common::cpus_to_myself();
    let topology = stdout_json(&placement_study(&["topology", "--json"]));
    if topology["summary"]["smt"].as_bool() == Some(true) {
        eprintln!("skipping: this machine has SMT siblings; the no-smt path is tested in a guest");
        return;
    }
    let output = placement_study(&["gate", "--json"]);
    assert_eq!(
        output.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    assert_eq!(json["verdict"], "no-smt");
    assert!(json["no_smt_reason"].as_str().unwrap().contains("SMT"));
    let quiet = placement_study(&["gate", "-q"]);
    assert_eq!(String::from_utf8_lossy(&quiet.stdout).trim(), "no-smt");
}

#[test]
fn run_without_siblings_completes_on_the_available_clock_and_report_rerenders_it() {
    let _cpus = crate::common::cpus_to_myself();
    if !common::two_cpus_allowed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("run.json");
    let csv_path = dir.path().join("run.csv");
    let output = placement_study(
        &[
            common::TWO_WORKER_RUN,
            &[
                "--json",
                json_path.to_str().unwrap(),
                "--csv",
                csv_path.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Exit 0 (valid) or 6 only if a check failed; on a quiet machine pinning holds.
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(stdout.contains("UNGATED"), "{stdout}");
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(run["gated"], false);
    assert_eq!(run["complete"], true);
    // Every sample: (1 warm-up + 3 reps) x 2 arms, 2 workers each.
    let samples = run["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 8);
    assert!(
        samples
            .iter()
            .all(|s| s["workers"].as_array().unwrap().len() == 2)
    );
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    assert_eq!(csv.lines().count(), 1 + 16);
    let invariance = run["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "invariance")
        .expect("an invariance check");
    let pmu = Path::new("/sys/bus/event_source/devices/cpu").exists();
    if !pmu {
        assert_eq!(run["setup"]["clock"], "tsc");
        assert_eq!(invariance["status"], "unavailable");
        assert!(stdout.contains("TSC ticks"), "{stdout}");
    }
    let report = placement_study(&["report", json_path.to_str().unwrap()]);
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&report.stdout),
        stdout,
        "report re-renders the run identically"
    );
}

#[test]
fn bad_input_is_one_line_naming_the_path() {
    let _cpus = crate::common::cpus_to_myself();
    let output = placement_study(&["topology", "--sysfs-root", "/nonexistent/snapshot"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("/nonexistent/snapshot"), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let damaged = dir.path().join("damaged.json");
    std::fs::write(
        &damaged,
        "{\"schema_version\": 1, \"kind\": \"run\", \"host\": ",
    )
    .unwrap();
    let output = placement_study(&["report", damaged.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("damaged.json"), "{stderr}");

    let newer = dir.path().join("newer.json");
    std::fs::write(&newer, "{\"schema_version\": 99, \"kind\": \"run\"}").unwrap();
    let output = placement_study(&["report", newer.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("newer.json") && stderr.contains("schema version 99"),
        "{stderr}"
    );

    let usage = placement_study(&["gate", "--threshold"]);
    assert_eq!(usage.status.code(), Some(2));
}

/// One worker on one arm, no gate, no warm-up, millisecond repetitions: the
/// smallest real run, for the tests that only need a run to exist.
const TINY_RUN: &[&str] = &[
    "run",
    "--skip-gate",
    "--workers",
    "1",
    "--arms",
    "one-per-core",
    "--warmups",
    "0",
    "--rep-ms",
    "2",
];

/// `placement-study` with [`TINY_RUN`] and then `extra`.
fn tiny_run(extra: &[&str]) -> Output {
    placement_study(&[TINY_RUN, extra].concat())
}

/// A tiny valid run saved as JSON in `dir`, for the tests that read runs back.
fn saved_run(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("host-a.json");
    let output = tiny_run(&["--reps", "2", "--json", path.to_str().unwrap()]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    path
}

/// `run --membind local` of the kernel on this machine (node 0 has its
/// CPUs): each worker's buffer is bound to its arm's node and its pages
/// located, the membind check passes on them, and the saved run says the
/// policy and each arm's nodes.
#[test]
fn membind_binds_the_kernels_buffers_and_checks_where_their_pages_are() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bound.json");
    let output = tiny_run(&[
        "--reps",
        "2",
        "--membind",
        "local",
        "--json",
        path.to_str().unwrap(),
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(saved["options"]["membind"], "local");
    let placement = &saved["plan"]["placements"][0];
    assert_eq!(placement["membind"], serde_json::json!([0]), "{placement}");
    let check = crate::common::saved_check(&saved, "membind");
    assert_eq!(check["status"], "passed", "{check}");
    let pages = &saved["samples"][0]["workers"][0]["pages"];
    assert_eq!(pages["missing"], 0, "{pages}");
    assert_eq!(pages["by_node"]["0"], pages["pages"], "{pages}");
    let view = String::from_utf8_lossy(&output.stdout);
    assert!(
        view.contains("memory: --membind local: one-per-core on node 0;"),
        "{view}"
    );
}

#[test]
fn report_compares_hosts_one_row_each() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let first = saved_run(dir.path());
    let mut other: Value = serde_json::from_str(&std::fs::read_to_string(&first).unwrap()).unwrap();
    other["host"] = "host-b".into();
    let second = dir.path().join("host-b.json");
    std::fs::write(&second, serde_json::to_string(&other).unwrap()).unwrap();

    let output = placement_study(&["report", first.to_str().unwrap(), second.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(
        table.contains("host-b") && table.contains("UNGATED"),
        "{table}"
    );
    let rows: Value = serde_json::from_slice(
        &placement_study(&[
            "report",
            first.to_str().unwrap(),
            second.to_str().unwrap(),
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 2);
    assert_eq!(rows[1]["host"], "host-b");
}

/// Thread ids of the threads of process `pid` named `name` right now.
fn threads_named(pid: u32, name: &str) -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|comm| comm.trim_end() == name)
        })
        .map(|task| task.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Waits until process `pid` has finished at least one repetition: each
/// repetition starts a new "worker 0" thread, so a second one means the first
/// repetition is done. Panics past a generous deadline.
fn wait_until_a_repetition_is_done(pid: u32) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "process {pid} started no second repetition within 60 s"
        );
        seen.extend(threads_named(pid, "worker 0"));
        // A poll interval, not a guess at how long anything takes.
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// Starts a run of many repetitions saving JSON, sends `signal` once it has
/// done one, and checks what a stop promises: the notice, the exit status
/// 128 + the signal's number, and a complete JSON file marked incomplete.
fn stop_a_run_with(signal: nix::sys::signal::Signal) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("interrupted.json");
    let child = Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(TINY_RUN)
        .args(["--reps", "1000", "--json"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_a_repetition_is_done(child.id());
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(128 + signal as i32),
        "{signal}: {stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "placement-study: {signal}: stopping within a second"
        )),
        "{stderr}"
    );
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(run["complete"], false);
    assert!(!run["samples"].as_array().unwrap().is_empty());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("INCOMPLETE: stopped by {signal}")),
        "{stdout}"
    );
}

#[test]
fn ctrl_c_writes_the_repetitions_done_marked_incomplete() {
    let _cpus = crate::common::cpus_to_myself();
    stop_a_run_with(nix::sys::signal::Signal::SIGINT);
}

#[test]
fn sigterm_writes_the_repetitions_done_marked_incomplete() {
    let _cpus = crate::common::cpus_to_myself();
    stop_a_run_with(nix::sys::signal::Signal::SIGTERM);
}

#[test]
fn strict_turns_an_arm_over_the_cv_bar_into_an_invalid_run() {
    let _cpus = crate::common::cpus_to_myself();
    // No real run has a CV of zero, so a zero-width bar always fails.
    let output = tiny_run(&["--reps", "3", "--cv-bar", "1e-12", "--strict"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(6), "{stdout}");
    assert!(
        stdout.contains("not quotable") && stdout.contains("INVALID run"),
        "{stdout}"
    );
}

/// A result saved from a QEMU guest (`fixtures/results/`).
fn saved_result(name: &str) -> String {
    format!("{}/fixtures/results/{name}", env!("CARGO_MANIFEST_DIR"))
}

const CROSSED: &str = "pairs-guest-crossed-siblings.json";
const HIDDEN: &str = "pairs-guest-hidden-siblings.json";

#[test]
fn a_short_pairs_search_prints_its_verdict_word_and_exit_status() {
    let _cpus = crate::common::cpus_to_myself();
    if !common::two_cpus_allowed() {
        return;
    }
    let output = placement_study(&[common::SHORT_PAIRS, &["-q"]].concat());
    let verdict = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let expected = match verdict.as_str() {
        "agree" => 0,
        "differ" => 3,
        "inconclusive" => 5,
        other => panic!("not a verdict word: {other:?}"),
    };
    assert_eq!(output.status.code(), Some(expected), "{verdict}");
}

#[test]
fn report_re_renders_a_saved_pairs_search() {
    let _cpus = crate::common::cpus_to_myself();
    let output = placement_study(&["report", &saved_result(CROSSED)]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    for expected in [
        "Measured 0,2 / 1,3, published 0-1 / 2-3: the maps differ",
        "verdict: differ (exit 3)",
        "fake and hidden siblings",
        "All pairs: 6 comparisons",
        "control (both workers on CPU 0): passed",
    ] {
        assert!(text.contains(expected), "no {expected:?} in\n{text}");
    }
}

#[test]
fn report_csv_of_a_saved_pairs_search_has_one_row_per_comparison() {
    let _cpus = crate::common::cpus_to_myself();
    let output = placement_study(&["report", &saved_result(CROSSED), "--csv"]);
    let csv = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("comparison,probe,against,outcome,penalty"));
    assert_eq!(lines.len(), 1 + 6, "{csv}");
    assert!(lines[1].starts_with("1,0,\"1\","), "{csv}");
}

#[test]
fn report_compares_saved_pairs_searches_side_by_side() {
    let _cpus = crate::common::cpus_to_myself();
    // The wide table: one column per finding, each cell on one line.
    let output = placement_study(&[
        "report",
        &saved_result(CROSSED),
        &saved_result(HIDDEN),
        "--wide",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("sibling map"), "{text}");
    assert!(
        text.contains("differ: measured 0,2 / 1,3, published 0-1 / 2-3"),
        "{text}"
    );
    assert!(
        text.contains("differ: measured 0-1, published 0 / 1"),
        "{text}"
    );
    let csv = placement_study(&[
        "report",
        &saved_result(CROSSED),
        &saved_result(HIDDEN),
        "--csv",
    ]);
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .contains("map_verdict,published_map,measured_map,class_verdict,ceiling")
    );
    assert!(csv.contains(",differ,\"0-1 / 2-3\",\"0,2 / 1,3\""), "{csv}");
}

/// The `hybrid` study saved from the QEMU guest with a slow second core.
const SLOW_SECOND_CORE: &str = "hybrid-guest-slow-second-core.json";

#[test]
fn report_re_renders_a_saved_hybrid_study_and_compares_it_with_other_hosts() {
    let _cpus = crate::common::cpus_to_myself();
    let output = placement_study(&["report", &saved_result(SLOW_SECOND_CORE)]);
    assert_eq!(output.status.code(), Some(0));
    // The sentences wrap at 80 columns: compare their words.
    let words = String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for expected in [
        "measured classes DIFFER from the published ones",
        "Per-class speed: pinned single-worker baselines",
        "published class uniform (CPUs 0-1) measures as 2 classes: CPUs 0 / 1",
        "ceiling: 1.48 fastest-class CPUs' worth over 2 worker CPUs",
        "stealing, pinned: a measured 0 worker took",
        "Workers, stealing, unpinned",
        "valid study",
    ] {
        assert!(words.contains(expected), "{expected}\n{words}");
    }
    let compared = placement_study(&[
        "report",
        &saved_result(SLOW_SECOND_CORE),
        &saved_result(HIDDEN),
        "--wide",
    ]);
    let text = String::from_utf8_lossy(&compared.stdout);
    assert!(
        text.contains("differ: measured 0 1.00, measured 1 0.48; ceiling 1.48"),
        "{text}"
    );
    let csv = placement_study(&[
        "report",
        &saved_result(SLOW_SECOND_CORE),
        &saved_result(HIDDEN),
        "--csv",
    ]);
    let csv = String::from_utf8_lossy(&csv.stdout);
    let row = csv.lines().nth(1).unwrap();
    assert!(row.starts_with("\"") && row.contains(",hybrid,"), "{csv}");
    assert!(row.contains(",differ,1.47"), "{csv}");
}

#[test]
fn json_line_is_the_json_document_on_one_line() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let pretty = dir.path().join("topology.json");
    let line = dir.path().join("topology.jsonl");
    let output = placement_study(&[
        "topology",
        "--json",
        pretty.to_str().unwrap(),
        "--json-line",
        line.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line_text = std::fs::read_to_string(&line).unwrap();
    assert_eq!(line_text.matches('\n').count(), 1, "{line_text}");
    assert!(line_text.ends_with('\n'));
    let from_line: Value = serde_json::from_str(&line_text).unwrap();
    let from_pretty: Value =
        serde_json::from_str(&std::fs::read_to_string(&pretty).unwrap()).unwrap();
    assert_eq!(from_line, from_pretty);
}

#[test]
fn gate_json_line_on_stdout_names_the_host_and_moves_the_view_to_stderr() {
    let _cpus = crate::common::cpus_to_myself();
    let output = placement_study(&["gate", "--json-line", "-", "--rep-ms", "5"]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let gate: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(gate["kind"], "gate");
    let host = nix::unistd::gethostname().unwrap();
    assert_eq!(gate["host"].as_str(), host.to_str());
    assert!(gate["topology"]["cpus"].as_u64().unwrap() >= 1);
    assert!(!output.stderr.is_empty(), "the human view went nowhere");
}

#[test]
fn completions_cover_every_command_for_each_shell() {
    let _cpus = crate::common::cpus_to_myself();
    for shell in ["bash", "zsh", "fish"] {
        let output = placement_study(&["completions", shell]);
        assert!(output.status.success(), "{shell}");
        let script = String::from_utf8(output.stdout).unwrap();
        for word in [
            "topology",
            "gate",
            "pairs",
            "run",
            "hybrid",
            "observe",
            "report",
            "json-line",
            "fleet",
            "completions",
            "man",
        ] {
            assert!(script.contains(word), "{shell} script lacks {word}");
        }
    }
    let output = placement_study(&["completions", "tcsh"]);
    assert_eq!(output.status.code(), Some(2));
}

/// What bash offers for the words `line` (the cursor after the last one),
/// through the script `completions bash` prints.
fn bash_completes(script: &Path, line: &[&str]) -> Vec<String> {
    let words = line
        .iter()
        .map(|w| format!("'{w}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let program = format!(
        "source '{}'; COMP_WORDS=({words}); COMP_CWORD={}; \
         _placement__study placement-study '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        line.len() - 1,
        line[line.len() - 1],
        line[line.len() - 2],
    );
    let output = Command::new("bash")
        .args(["-c", &program])
        .output()
        .expect("bash runs");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_commands_and_each_commands_options() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("placement-study.bash");
    let output = placement_study(&["completions", "bash"]);
    std::fs::write(&script, &output.stdout).unwrap();
    assert!(bash_completes(&script, &["placement-study", "ga"]).contains(&"gate".into()));
    assert_eq!(
        bash_completes(&script, &["placement-study", "gate", "--thr"]),
        ["--threshold"]
    );
    assert!(
        bash_completes(&script, &["placement-study", "report", "--fl"]).contains(&"--fleet".into())
    );
    // Values too: run's arms, which a parser of their own reads.
    assert_eq!(
        bash_completes(&script, &["placement-study", "run", "--arms", "sib"]),
        ["sibling-packed"]
    );
    assert!(
        bash_completes(&script, &["placement-study", "run", "--baseline-arm", ""])
            .contains(&"class:0".into())
    );
}

/// A machine whose files name no core sibling sets (every `topology`
/// folder gone from a snapshot of this one): `pairs` still measures the
/// map, but compares it with nothing, so its verdict is inconclusive (exit
/// 5) and the published map reads unknown, never "no two CPUs share".
#[test]
fn pairs_on_an_unknown_structure_measures_but_gives_no_verdict() {
    let _cpus = crate::common::cpus_to_myself();
    if !common::two_cpus_allowed() {
        eprintln!("skipping: pairs needs two allowed CPUs");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("no-topology");
    let saved = placement_study(&["snapshot", root.to_str().unwrap()]);
    assert!(saved.status.success(), "{saved:?}");
    let cpu_dir = root.join("sys/devices/system/cpu");
    for entry in std::fs::read_dir(&cpu_dir).unwrap() {
        let topology = entry.unwrap().path().join("topology");
        if topology.is_dir() {
            std::fs::remove_dir_all(topology).unwrap();
        }
    }
    let json = dir.path().join("pairs.json");
    let output = placement_study(&[
        "pairs",
        "--no-cpuid",
        "--sysfs-root",
        root.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let view = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(5), "{view}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(saved["verdict"], "inconclusive", "{view}");
    let reason = saved["map"]["published_unknown"].as_str().unwrap();
    assert!(reason.contains("no core sibling set"), "{reason}");
    assert!(view.contains("published  unknown"), "{view}");
    assert!(!view.contains("no two CPUs share"), "{view}");
}

/// `run --sweep` on this machine's CPUs: every step measured, each with
/// its speedup and ceiling, the cost said before it ran, and `report`
/// re-rendering the saved sweep as printed.
#[test]
fn a_sweep_measures_every_step_and_report_re_renders_it() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("sweep.json");
    let output = placement_study(&[
        "run",
        "--sweep",
        "--skip-gate",
        "--reps",
        "3",
        "--warmups",
        "0",
        "--rep-ms",
        "50",
        "--json",
        saved.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        matches!(output.status.code(), Some(0 | 6)),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(document["kind"], "sweep");
    let steps = document["steps"].as_array().unwrap();
    let cpus = document["plan"]["order"].as_array().unwrap().len();
    assert_eq!(steps.len(), cpus, "every count from 1 to the CPUs");
    assert_eq!(steps[0]["workers"], 1);
    assert_eq!(steps[0]["added"][0]["kind"], "first");
    // Each round measured every CPU's baseline and every step after it,
    // pinned and unpinned.
    let samples = document["samples"].as_array().unwrap().len();
    assert_eq!(samples, 3 * (cpus + 2 * (cpus - 1)));
    assert!(
        stdout.contains("Steps: k workers on the first k CPUs"),
        "{stdout}"
    );
    let report = placement_study(&["report", saved.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&report.stdout),
        stdout,
        "report re-renders the sweep identically"
    );
}

/// `run --sweep -- COMMAND` on this machine's CPUs: step k runs the
/// command with `{threads}` k (k busy loops) confined to the first k CPUs
/// of the order, and each other CPU runs it alone with `{threads}` 1 (the
/// ceiling), every arm in every round; `report` re-renders it.
#[test]
fn a_command_sweep_runs_each_step_with_its_thread_count() {
    let _cpus = crate::common::cpus_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("sweep.json");
    let loops = "for i in $(seq {threads}); do \
                 (i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done) & done; wait";
    let output = placement_study(&[
        "run",
        "--sweep",
        "--skip-gate",
        "--reps",
        "3",
        "--warmups",
        "0",
        "--json",
        saved.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        loops,
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        matches!(output.status.code(), Some(0 | 6)),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(document["kind"], "sweep");
    assert_eq!(document["command"]["argv"][2], loops);
    let cpus = document["plan"]["order"].as_array().unwrap().len();
    let steps = document["steps"].as_array().unwrap();
    assert_eq!(steps.len(), cpus, "every count from 1 to the CPUs");
    assert!(steps[1]["ceiling"].is_number(), "{}", steps[1]);
    assert!(document["ceiling_unavailable"].is_null());
    assert_eq!(document["cpu_speeds"].as_array().unwrap().len(), cpus);
    // Each round ran step 1, every other CPU alone, then steps 2 and up.
    let reps = document["command"]["reps"].as_array().unwrap();
    assert_eq!(reps.len(), 3 * (2 * cpus - 1));
    let second = document["plan"]["order"][1]["cpu"].as_u64().unwrap();
    assert_eq!(reps[0]["arm"], "step:1");
    assert_eq!(reps[1]["arm"], format!("cpu:{second}"));
    assert_eq!(reps[cpus]["arm"], "step:2");
    assert!(document["samples"].as_array().unwrap().is_empty());
    assert!(stdout.contains("COMMAND: sh -c"), "{stdout}");
    let report = placement_study(&["report", saved.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&report.stdout),
        stdout,
        "report re-renders the sweep identically"
    );
}

/// `man` prints the manual page, byte for byte the file the package
/// ships, ready for `~/.local/share/man/man1`; `man -l -` renders it where
/// man is installed.
#[test]
fn man_prints_the_manual_page() {
    let output = placement_study(&["man"]);
    assert!(output.status.success());
    let page = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/man/placement-study.1"
    ))
    .unwrap();
    assert!(output.stdout == page, "man's output differs from the page");
    let help = String::from_utf8(placement_study(&["--help"]).stdout).unwrap();
    assert!(help.contains("\n  man "), "{help}");
    let Ok(mut man) = Command::new("man")
        .args(["-l", "-"])
        .env("MANWIDTH", "80")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    else {
        return;
    };
    use std::io::Write;
    man.stdin.take().unwrap().write_all(&output.stdout).unwrap();
    let rendered = man.wait_with_output().unwrap();
    assert!(rendered.status.success(), "{rendered:?}");
    // Bold and underline are overstruck ("E\x08E"): keep the last of each.
    let mut text = String::new();
    for c in String::from_utf8_lossy(&rendered.stdout).chars() {
        match c {
            '\x08' => drop(text.pop()),
            c => text.push(c),
        }
    }
    assert!(text.contains("EXIT STATUS"), "{text}");
}
