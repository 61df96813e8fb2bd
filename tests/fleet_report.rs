//! `report --fleet` on the captured fleet of `fixtures/fleet/` (see its
//! README): real pdsh and clush output, a `--json-line` capture with the
//! human view mixed in and a pretty saved gate; and, apart, a real Ansible
//! `--tree` folder. The counts, the outliers, the missing and broken hosts,
//! the gate penalties with their intervals, one JSON line per host and
//! kind, and exit 0 whatever the hosts sent. And what is not a fleet's
//! results: a terminal on standard input, a named path that is not there
//! or cannot be read, an empty folder, a hostlist with characters no host
//! name has, and lines that would redraw the terminal: each a one-line
//! error with the right exit status before anything is written, or, for
//! what the hosts sent, a report that shows it safely.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const PLACEMENT_STUDY: &str = env!("CARGO_BIN_EXE_placement-study");

fn fleet_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fleet")
}

/// The whole fixture fleet, named relative to its folder (the report names
/// broken sources by the path they were given as).
const INPUTS: &[&str] = &["pdsh.out", "clush.out", "vm-gate.json", "local.out"];

const HOSTS: &str = "--hosts=node[1-10],gpu[1-5]";

/// `report --fleet ARGS` run in the fixture folder, `stdin` fed to it.
fn report(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(PLACEMENT_STUDY)
        .current_dir(fleet_folder())
        .args(["report", "--fleet"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn whole_fleet(extra: &[&str]) -> Output {
    let args: Vec<&str> = [HOSTS].iter().chain(INPUTS).chain(extra).copied().collect();
    let output = report(&args, b"");
    assert_eq!(
        output.status.code(),
        Some(0),
        "missing and broken hosts are a report, not an error: {}",
        text(&output.stderr)
    );
    output
}

#[test]
fn the_human_view_counts_the_fleet_and_names_what_is_wrong() {
    let output = whole_fleet(&[]);
    let view = text(&output.stdout);
    let first = view.lines().next().unwrap();
    assert_eq!(
        first,
        "16 hosts: 10 with a result, 4 broken, 2 missing (1 not in --hosts)"
    );
    for line in view.lines() {
        assert!(line.chars().count() <= 80, "wider than 80 columns: {line}");
    }
    // The counts: a run's gate does not count twice for gpu3, which also
    // sent a gate.
    for row in [
        "│ gate           │ no-smt     │     3 │       0 │",
        "│ gate           │ physical   │     3 │       0 │",
        "│ gate           │ virtual    │     1 │       1 │",
        "│ pairs map      │ differ     │     1 │       1 │",
        "│ hybrid classes │ differ     │     1 │       1 │",
        "│ observe        │ reconciled │     2 │       0 │",
        "│ QEMU TCG CPU version 2.5+  │     7 │",
        "│ Intel(R) Xeon(R) Processor │     3 │",
        "│ QEMU TCG   │     7 │",
        "│ KVM        │     3 │",
    ] {
        assert!(view.contains(row), "no row {row:?} in:\n{view}");
    }
    // Outliers: the virtual guest among three physical ones of its model,
    // the crossed sibling map; flags: the run that skipped its gate, the
    // checks that failed in the noisy emulated guest.
    let outliers = section(&view, "Outliers and flags (4 hosts)");
    assert!(
        outliers.contains("gpu1 hybrid: failed checks: cv-bar"),
        "{outliers}"
    );
    assert!(
        outliers.contains("node4 gate: penalty +9.0 %"),
        "{outliers}"
    );
    assert!(
        outliers.contains("node5 pairs: sibling maps differ"),
        "{outliers}"
    );
    assert!(outliers.contains("gpu3 run: ungated"), "{outliers}");
    for physical in ["node1", "node2", "node3"] {
        assert!(!outliers.contains(physical), "{physical}: {outliers}");
    }
    assert!(view.contains("\nMissing (2): node[9-10]\n"), "{view}");
    let broken = section(&view, "Broken (4)");
    for (host, why) in [
        ("node6", "not a placement-study JSON file"),
        (
            "node7",
            "pdsh@vm: bash exited with exit code 255; last line: Permission denied",
        ),
        ("node8", "exit code 4; last line: ! no hardware PMU visible"),
        ("gpu5", "clush: command timeout"),
    ] {
        assert!(broken.contains(&format!("  {host}: ")), "{host}: {broken}");
        assert!(broken.contains(why), "{host}: {why:?} not in {broken}");
    }
    // The human view mixed into local.out is not taken for hosts.
    assert!(!view.contains("verdict:"), "{view}");
    assert!(view.contains("replaced"), "{view}");
    // Each gate penalty with its interval; the repetitions differ (5 for
    // the physical guests, 27 for the virtual one), so each row names its
    // own, and the clock and threshold every host shares are said once,
    // under the table.
    for penalty in ["+77.7 %", "[67.3, 88.7]", "+9.0 %", "[3.3, 15.0]", "n=27"] {
        assert!(
            view.contains(&format!(" {penalty} ")),
            "no {penalty}: {view}"
        );
    }
    assert!(
        view.contains("\npenalty: the gate's paired estimate, [its 95 % interval], n repetitions per arm;\n  the same for every host: TSC ticks, threshold +15.0 %\n"),
        "{view}"
    );
    // No gate here failed its bar: nothing is starred.
    assert!(!view.contains("* not valid"), "{view}");
}

/// The lines of `view` from `heading` to the next blank line, each line
/// that the view wrapped (indented by 4) joined back to the one before.
fn section(view: &str, heading: &str) -> String {
    let start = view
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no {heading:?} in:\n{view}"));
    let rest = &view[start + 1..];
    rest[..rest.find("\n\n").unwrap_or(rest.len())].replace("\n    ", " ")
}

#[test]
fn json_is_one_line_per_host_and_kind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.jsonl");
    whole_fleet(&[&format!("--json={}", path.display())]);
    let lines: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is a JSON document"))
        .collect();
    // 16 hosts; gpu3 (gate, run) and vm (gate, observe) have two kinds.
    assert_eq!(lines.len(), 18);
    let row = |host: &str, kind: Option<&str>| {
        lines
            .iter()
            .find(|l| l["host"] == host && kind.is_none_or(|k| l["kind"] == k))
            .unwrap_or_else(|| panic!("no line for {host} {kind:?}"))
    };
    let status = |host| row(host, None)["status"].as_str().unwrap().to_string();
    for host in ["node1", "node5", "gpu1", "gpu2", "gpu3", "gpu4", "vm"] {
        assert_eq!(status(host), "ok", "{host}");
    }
    for host in ["node6", "node7", "node8", "gpu5"] {
        assert_eq!(status(host), "broken", "{host}");
        assert!(row(host, None)["reason"].is_string());
    }
    for host in ["node9", "node10"] {
        assert_eq!(status(host), "missing", "{host}");
        assert!(row(host, None)["source"].is_null());
    }
    let virtual_guest = row("node4", Some("gate"));
    assert_eq!(virtual_guest["verdict"], "virtual");
    assert_eq!(virtual_guest["model"], "QEMU TCG CPU version 2.5+");
    assert_eq!(virtual_guest["hypervisor"], "QEMU TCG");
    assert_eq!(virtual_guest["cpus"], 2);
    let penalty = virtual_guest["penalty"].as_f64().unwrap();
    assert!(penalty < 0.15);
    let ci95 = &virtual_guest["penalty_ci95"];
    assert!(ci95["low"].as_f64().unwrap() < penalty, "{ci95}");
    assert!(ci95["high"].as_f64().unwrap() > penalty, "{ci95}");
    assert_eq!(virtual_guest["penalty_reps"], 27);
    assert_eq!(virtual_guest["penalty_clock"], "tsc");
    assert_eq!(virtual_guest["penalty_threshold"], 0.15);
    assert_eq!(virtual_guest["penalty_doubts"], serde_json::json!([]));
    // Without a penalty, no interval, repetitions or clock either.
    let no_smt = row("gpu4", Some("gate"));
    for field in ["penalty", "penalty_ci95", "penalty_reps", "penalty_clock"] {
        assert!(no_smt[field].is_null(), "{field}: {no_smt}");
    }
    assert_eq!(virtual_guest["source"]["file"], "pdsh.out");
    assert!(virtual_guest["source"]["line"].as_u64().unwrap() > 0);
    assert_eq!(virtual_guest["outliers"].as_array().unwrap().len(), 1);
    let pairs = row("node5", Some("pairs"));
    assert_eq!(pairs["map"]["verdict"], "differ");
    assert_ne!(pairs["map"]["published"], pairs["map"]["measured"]);
    assert_eq!(row("node1", None)["outliers"].as_array().unwrap().len(), 0);
    assert_eq!(row("gpu3", Some("run"))["gated"], false);
    assert_eq!(row("gpu4", Some("gate"))["notes"][0], "replaced 1 earlier");
    assert_eq!(row("vm", Some("observe"))["complete"], true);
}

#[test]
fn csv_is_one_row_per_host_and_kind() {
    let output = whole_fleet(&["--csv"]);
    let csv = text(&output.stdout);
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with(
        "host,file,line,status,reason,kind,verdict,penalty,penalty_ci95_low,penalty_ci95_high,\
         penalty_reps,penalty_clock,penalty_threshold,penalty_doubts,model,"
    ));
    assert_eq!(lines.count(), 18);
    // The human view went to stderr, out of the CSV's way.
    assert!(text(&output.stderr).starts_with("16 hosts: "));
}

#[test]
fn standard_input_is_read_when_no_file_is_named() {
    let pdsh = std::fs::read(fleet_folder().join("pdsh.out")).unwrap();
    let output = report(&[], &pdsh);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let view = text(&output.stdout);
    assert!(
        view.starts_with("8 hosts: 5 with a result, 3 broken, 0 missing\n"),
        "{view}"
    );
    assert!(
        view.contains("pdsh@vm: bash exited with exit code 255"),
        "{view}"
    );
}

#[test]
fn a_bad_hostlist_is_a_one_line_usage_error() {
    let output = report(&["--hosts", "node[1-", "pdsh.out"], b"");
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("never closed"), "{stderr}");
}

/// The recorded gate `name` of `fixtures/fleet/documents/`, as JSON.
fn recorded_gate(name: &str) -> Value {
    let path = fleet_folder().join(format!("documents/{name}.jsonl"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `document` with `penalty` and the interval `[low, high]` (fractions).
fn with_penalty(mut document: Value, penalty: f64, low: f64, high: f64) -> Value {
    document["penalty"] = penalty.into();
    document["ci95"] = serde_json::json!({ "low": low, "high": high });
    document
}

#[test]
fn penalties_that_failed_their_bar_are_starred_and_judged_with_no_one() {
    // The recorded fleet (node4 the outlier), then three gates the
    // outlier rule must leave out: one a signal cut short, one whose
    // control failed, both with a penalty far from the physical guests',
    // and one counted in core cycles, alone on its clock.
    let mut cut_short = with_penalty(recorded_gate("guest-physical-1"), 0.05, -0.2, 0.3);
    cut_short["complete"] = false.into();
    cut_short["verdict"] = "inconclusive".into();
    let mut uncontrolled = recorded_gate("guest-virtual");
    uncontrolled["control"]["status"] = "failed".into();
    uncontrolled["verdict"] = "inconclusive".into();
    let mut cycles = with_penalty(recorded_gate("guest-virtual"), 0.1, 0.05, 0.15);
    cycles["clock"] = "core-cycles".into();
    let hosts = [
        ("node1", recorded_gate("guest-physical-1")),
        ("node2", recorded_gate("guest-physical-2")),
        ("node3", recorded_gate("guest-physical-3")),
        ("node4", recorded_gate("guest-virtual")),
        ("node5", cut_short),
        ("node6", uncontrolled),
        ("node7", cycles),
    ];
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("pdsh.out");
    let lines: String = hosts
        .iter()
        .map(|(host, document)| format!("{host}: {document}\n"))
        .collect();
    std::fs::write(&input, lines).unwrap();
    let json = dir.path().join("fleet.jsonl");
    let output = report(
        &[
            &format!("--json={}", json.display()),
            input.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let view = text(&output.stdout);
    for line in view.lines() {
        assert!(line.chars().count() <= 80, "wider than 80 columns: {line}");
    }
    let rows: Vec<Value> = std::fs::read_to_string(&json)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let row = |host: &str| rows.iter().find(|r| r["host"] == host).unwrap();
    let penalty_outliers = |host: &str| -> Vec<String> {
        row(host)["outliers"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|o| o.as_str().filter(|o| o.starts_with("penalty")))
            .map(str::to_string)
            .collect()
    };

    // node4 is judged against the four TSC gates that held, as before.
    let node4 = penalty_outliers("node4");
    assert_eq!(node4.len(), 1, "{node4:?}");
    assert!(
        node4[0].contains("of the 4 hosts of its CPU model on TSC ticks"),
        "{node4:?}"
    );
    for host in ["node1", "node2", "node3", "node5", "node6", "node7"] {
        assert!(penalty_outliers(host).is_empty(), "{host}: {rows:#?}");
    }
    assert_eq!(
        row("node5")["penalty_doubts"],
        serde_json::json!(["incomplete"])
    );
    assert_eq!(
        row("node6")["penalty_doubts"],
        serde_json::json!(["control-failed"])
    );
    assert_eq!(row("node7")["penalty_doubts"], serde_json::json!([]));
    assert_eq!(row("node7")["penalty_clock"], "core-cycles");
    assert_eq!(row("node7")["outliers"], serde_json::json!([]));

    // The doubted penalties are starred, and the star explained; the
    // clocks differ, so each row names its own.
    for starred in ["+5.0 %*", "+9.0 %*"] {
        assert!(
            view.contains(&format!(" {starred} ")),
            "no {starred}: {view}"
        );
    }
    assert_eq!(view.matches("%* ").count(), 2, "{view}");
    assert!(view.contains(" cycles "), "{view}");
    let notes = view.replace("\n  ", " ");
    assert!(
        notes.contains(
            "\npenalty: the gate's paired estimate, [its 95 % interval], n repetitions per arm; \
             the same for every host: threshold +15.0 %\n* not valid: its gate was cut short \
             (incomplete) or its same-CPU control failed; left out of the outlier rule\n"
        ),
        "{view}"
    );
}

/// The files of `fixtures/fleet/ansible-tree/`, named as the glob
/// `ansible-tree/*` names them.
fn ansible_tree_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(fleet_folder().join("ansible-tree"))
        .unwrap()
        .map(|entry| {
            format!(
                "ansible-tree/{}",
                entry.unwrap().file_name().to_string_lossy()
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn an_ansible_tree_folder_is_read_directly() {
    let hosts = "--hosts=app[1-6],ghost.invalid";
    let output = report(&[hosts, "ansible-tree"], b"");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let view = text(&output.stdout);
    // The folder and its files, as a shell's glob names them, are one fleet.
    let files = ansible_tree_files();
    let args: Vec<&str> = [hosts]
        .into_iter()
        .chain(files.iter().map(String::as_str))
        .collect();
    assert_eq!(text(&report(&args, b"").stdout), view);
    assert!(
        view.starts_with("7 hosts: 3 with a result, 3 broken, 1 missing\n"),
        "{view}"
    );
    for row in [
        "│ gate  │ no-smt   │     2 │       0 │",
        "│ gate  │ physical │     1 │       0 │",
    ] {
        assert!(view.contains(row), "no row {row:?} in:\n{view}");
    }
    assert!(view.contains("\nMissing (1): app6\n"), "{view}");
    let broken = section(&view, "Broken (3)");
    for (host, why) in [
        // The human view alone: the exit code and its last line.
        ("app4", "ansible: exit code 4; last line: "),
        (
            "app5",
            "ansible: The module interpreter '/nonexistent/python3' was not found. (exit code \
             127); last line: /bin/sh: 1: /nonexistent/python3: not found",
        ),
        (
            "ghost.invalid",
            "ansible: Task failed: Failed to connect to the host via ssh: ssh: Could not \
             resolve hostname ghost.invalid",
        ),
    ] {
        assert!(
            broken.contains(&format!("  {host}: {why}")),
            "{host}: {broken}"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.jsonl");
    let json = format!("--json={}", path.display());
    report(&[hosts, &json, "ansible-tree/"], b"");
    let lines: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 7);
    // Each host is its file's name, not the `host` its document records
    // (the machine's, "vm", for both live gates).
    let gate = lines.iter().find(|l| l["host"] == "app1").unwrap();
    assert_eq!(gate["status"], "ok");
    assert_eq!(gate["verdict"], "no-smt");
    assert_eq!(gate["source"]["file"], "ansible-tree/app1");
    assert!(gate["source"]["line"].is_null());
    assert_eq!(lines.iter().filter(|l| l["host"] == "vm").count(), 0);
}

/// The one line on stderr of a run that failed with `status` and wrote
/// nothing to stdout.
fn one_line_error(output: &Output, status: i32) -> String {
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(status), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(output.stdout.is_empty(), "{}", text(&output.stdout));
    stderr
}

/// A saved gate of `host`, on one line as `--json-line` writes it.
fn gate_line(host: &str) -> String {
    let mut gate = recorded_gate("guest-virtual");
    gate["host"] = host.into();
    gate.to_string()
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// With no FILE, standard input is read; a terminal there is a usage error
/// (exit 2) at once, not a wait for lines nobody types. `script` (util-linux)
/// gives the command a pseudo-terminal; the test's own stdin stays open, so
/// a command that read the terminal would hang until the deadline.
#[test]
fn a_terminal_on_standard_input_is_a_usage_error_not_a_wait() {
    let dir = tempfile::tempdir().unwrap();
    let typescript = dir.path().join("typescript");
    let mut child = Command::new("script")
        .args(["--quiet", "--return", "--command"])
        .arg("\"$PLACEMENT_STUDY\" report --fleet")
        .arg(&typescript)
        .env("PLACEMENT_STUDY", PLACEMENT_STUDY)
        .env("SHELL", "/bin/sh")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (util-linux) runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("report --fleet waited on a terminal for 30 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    let said = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(2),
        "{said}{}",
        text(&output.stderr)
    );
    assert!(
        said.contains(
            "report --fleet: no FILE given and standard input is a terminal; pipe pdsh or \
             clush output in"
        ),
        "{said}"
    );
}

#[test]
fn a_named_path_that_is_not_there_fails_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let lines = dir.path().join("pdsh.out");
    std::fs::write(&lines, format!("node1: {}\n", gate_line("x"))).unwrap();
    let missing = dir.path().join("pdhs.out");
    let json = dir.path().join("fleet.jsonl");
    let output = report(
        &[
            &format!("--json={}", shown(&json)),
            &shown(&lines),
            &shown(&missing),
        ],
        b"",
    );
    let error = one_line_error(&output, 1);
    assert!(
        error.contains(&format!(
            "report --fleet: {}: no such file or folder; check the path",
            shown(&missing)
        )),
        "{error}"
    );
    assert!(!json.exists(), "--json was written before the error");
}

#[test]
fn a_named_folder_that_is_empty_is_an_error_not_a_host() {
    let dir = tempfile::tempdir().unwrap();
    let error = one_line_error(&report(&[&shown(dir.path())], b""), 1);
    assert!(
        error.contains(&format!(
            "{}: an empty folder; name the folder",
            shown(dir.path())
        )),
        "{error}"
    );
}

/// A file of mode 000. Root (or CAP_DAC_OVERRIDE) reads it all the same,
/// so there the test can only say it was skipped.
#[test]
fn a_named_file_that_cannot_be_read_is_an_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked.out");
    std::fs::write(&locked, format!("node1: {}\n", gate_line("x"))).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&locked).is_ok() {
        eprintln!("skipped: this user reads a file of mode 000");
        return;
    }
    let error = one_line_error(&report(&[&shown(&locked)], b""), 1);
    assert!(error.contains(&shown(&locked)), "{error}");
    assert!(error.contains("Permission denied"), "{error}");
    assert!(
        error.contains("check the path and its permissions"),
        "{error}"
    );
}

/// In a folder each file stands for a host (Ansible's `--tree`): one that
/// is empty or holds no result is a broken host named by its path, and the
/// report exits 0.
#[test]
fn broken_files_in_a_folder_are_broken_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let tree_file = serde_json::json!({"rc": 4, "stdout": gate_line("inside"), "stderr": ""});
    std::fs::write(dir.path().join("n1"), tree_file.to_string()).unwrap();
    std::fs::write(dir.path().join("n2"), "").unwrap();
    std::fs::write(dir.path().join("n3"), "garbage\n").unwrap();
    let output = report(&[&shown(dir.path())], b"");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let view = text(&output.stdout);
    assert!(
        view.starts_with("3 hosts: 1 with a result, 2 broken, 0 missing\n"),
        "{view}"
    );
    for (file, why) in [
        ("n2", "empty"),
        ("n3", "no result line; last line: garbage"),
    ] {
        let line = format!("  {}: {why}", shown(&dir.path().join(file)));
        assert!(view.contains(&line), "{line:?} not in {view}");
    }
}

#[test]
fn a_hostlist_with_other_characters_is_a_one_line_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let lines = dir.path().join("pdsh.out");
    std::fs::write(&lines, format!("node1: {}\n", gate_line("x"))).unwrap();
    for (hosts, says) in [
        ("ä[1-2]", "'ä' in a host name; host names are ASCII letters"),
        (
            "node\u{1b}1",
            "--hosts \"node\\u{1b}1\": '\\u{1b}' in a host name",
        ),
        (
            "node[1-2]\nnode3",
            "'\\n' in a host name; separate hosts with commas",
        ),
    ] {
        let output = report(&["--hosts", hosts, &shown(&lines)], b"");
        let error = one_line_error(&output, 2);
        assert!(error.contains(says), "{hosts:?}: {says:?} not in {error}");
    }
}

/// What hosts print reaches the terminal escaped and cut short: no escape
/// sequence of theirs redraws it, no line of theirs floods the report.
#[test]
fn what_hosts_print_is_shown_escaped_and_cut_short() {
    let lines = format!(
        "node1: {}\nnode2: \u{1b}]0;owned\u{7}\u{1b}[2J{}\npdsh@head: node3: \u{1b}[31mred\r\n",
        gate_line("x"),
        "many words ".repeat(100),
    );
    let output = report(&[], lines.as_bytes());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let view = text(&output.stdout);
    assert!(
        !view.chars().any(|c| c.is_control() && c != '\n'),
        "{view:?}"
    );
    // The Broken section, each line the view wrapped joined back.
    let broken =
        view[view.find("\nBroken (2)\n").expect("a Broken section")..].replace("\n    ", " ");
    let reason = |host: &str| {
        let start = broken.find(&format!("  {host}: ")).unwrap() + host.len() + 4;
        broken[start..].lines().next().unwrap().to_string()
    };
    let cut = reason("node2");
    assert!(
        cut.starts_with("no result line; last line: \\u{1b}]0;owned\\u{7}\\u{1b}[2Jmany"),
        "{cut}"
    );
    assert!(cut.ends_with('…') && cut.chars().count() <= 200, "{cut}");
    assert_eq!(reason("node3"), "pdsh@head: \\u{1b}[31mred");
}

/// A line break in what a document says (its CPU model, its hypervisor's
/// name) starts no line of the fleet's view, nor splits a cell: the
/// terminal's at 80 columns and `--wide`, and the Markdown, each show it
/// escaped. (The table of CPU models drew the rest of such a model on a
/// line of its own.)
#[test]
fn a_line_break_in_a_document_starts_no_line() {
    const FAKE: &str = "\n\nFAKE-LINE: every host passed";
    let mut gate = recorded_gate("guest-virtual");
    gate["model"] = format!("CPU{FAKE}").into();
    gate["evidence"]["cpuid_hypervisor_name"] = format!("KVM{FAKE}").into();
    let lines = format!("node1: {gate}\nnode2: {}\n", gate_line("x"));
    // Markdown escapes the escape's backslash too.
    for (extra, shown) in [
        (&[][..], r"CPU\n\nFAKE-LINE"),
        (&["--wide"], r"CPU\n\nFAKE-LINE"),
        (&["--markdown=-"], r"CPU\\n\\nFAKE-LINE"),
    ] {
        let output = report(extra, lines.as_bytes());
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        let view = text(&output.stdout);
        assert!(view.contains(shown), "{extra:?}: {view}");
        assert!(
            !view
                .lines()
                .any(|line| line.contains("FAKE-LINE") && !line.contains(r"\nFAKE-LINE")),
            "{extra:?}: {view}"
        );
    }
}

/// Every line is counted in a host or as unreadable: a document behind a
/// prefix no engine writes (200,000 'A's, an escape sequence, markup,
/// nothing, a NUL) is no host's, and is counted and named by its line,
/// never dropped.
#[test]
fn a_document_behind_a_prefix_that_is_no_host_name_is_counted_unreadable() {
    let bad = [
        "A".repeat(200_000),
        "\u{1b}[31mnode9".to_string(),
        "</pre><script>".to_string(),
        String::new(),
        "\0".to_string(),
    ];
    let mut lines = String::new();
    for n in 1..=6 {
        lines += &format!("node{n}: {}\n", gate_line(&format!("node{n}")));
        if let Some(prefix) = bad.get(n - 1) {
            lines += &format!("{prefix}: {}\n", gate_line("hidden"));
        }
    }
    assert_eq!(lines.lines().count(), 11);
    let output = report(&[], lines.as_bytes());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let view = text(&output.stdout);
    assert!(
        view.starts_with("6 hosts: 6 with a result, 0 broken, 0 missing; 5 lines unreadable\n"),
        "{view}"
    );
    let note = view[view
        .find("\nUnreadable (5 lines): ")
        .expect("an Unreadable note")..]
        .replace("\n  ", " ");
    assert!(
        note.contains(
            "not counted in any host: standard input:2, standard input:4, standard input:6, \
             standard input:8, standard input:10\n"
        ),
        "{note}"
    );
    assert!(!view.contains("hidden"), "{view}");
    assert!(
        !view.chars().any(|c| c.is_control() && c != '\n'),
        "{view:?}"
    );
}

/// Named files: every one of them is looked up before any is read, so a
/// FIFO named first (which would block until written) does not delay the
/// error about a missing one named after it.
#[test]
fn every_named_path_is_looked_up_before_any_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo: PathBuf = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let missing = dir.path().join("missing");
    let error = one_line_error(&report(&[&shown(&fifo), &shown(&missing)], b""), 1);
    assert!(error.contains("no such file or folder"), "{error}");
}

#[test]
fn standard_input_without_a_host_line_is_not_a_host() {
    // Every host down: pdsh's complaints went to its stderr, the pipe is
    // empty, and the hosts of --hosts are all missing.
    let output = report(&["--hosts", "n[1-2]", "-"], b"");
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        stdout.starts_with("2 hosts: 0 with a result, 0 broken, 2 missing"),
        "{stdout}"
    );
    assert!(!stdout.contains("standard input"), "{stdout}");
    // With no --hosts there is nothing to report: say what to pipe in.
    let error = one_line_error(&report(&[], b"No sibling pair to measure\n"), 1);
    assert!(
        error.contains("standard input holds no host's line"),
        "{error}"
    );
}

/// Copies the snapshot folder `from` (links and all) to `to`, as a
/// snapshot another host sent.
fn copy_folder(from: &Path, to: &Path) {
    let copied = Command::new("cp")
        .arg("-a")
        .args([from, to])
        .status()
        .unwrap();
    assert!(
        copied.success(),
        "cp -a {} {}",
        from.display(),
        to.display()
    );
}

/// The inventory a sysadmin asks of a fleet first, as the man page gives
/// the recipe: pdsh runs `topology --json-line -` on every host (here on
/// saved machines, one `--sysfs-root` per host: two identical laptops, a
/// third of the same model with SMT off, and a server), and `report
/// --fleet` counts the machines by shape, model and hypervisor and flags
/// the laptop shaped unlike its model. Needs pdsh (`.ci/run` installs it).
#[test]
fn pdsh_topology_gives_the_fleets_inventory() {
    if Command::new("pdsh").arg("-V").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "pdsh is not installed, and CI installs it"
        );
        eprintln!("skipped: pdsh is not installed (apt-get install pdsh)");
        return;
    }
    let machines = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sysfs");
    let snapshots = tempfile::tempdir().unwrap();
    for host in ["laptop1", "laptop2", "laptop3"] {
        copy_folder(
            &machines.join("laptop-i5-11300H"),
            &snapshots.path().join(host),
        );
    }
    // SMT off on laptop3: one thread of each core online.
    std::fs::write(
        snapshots
            .path()
            .join("laptop3/sys/devices/system/cpu/online"),
        "0-3\n",
    )
    .unwrap();
    copy_folder(
        &machines.join("server-2s-xeon-8462Y"),
        &snapshots.path().join("server"),
    );
    let root = format!("{}/%h", snapshots.path().display());
    let pdsh = Command::new("pdsh")
        .args(["-R", "exec", "-f", "1", "-w", "laptop[1-3],server"])
        .args([PLACEMENT_STUDY, "topology", "--json-line", "-"])
        .args(["--no-cpuid", "--sysfs-root", &root])
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let output = report(&["--hosts=laptop[1-3],server", "-"], &pdsh.stdout);
    let shown = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        shown.starts_with("4 hosts: 4 with a result, 0 broken, 0 missing\n"),
        "{shown}"
    );
    for line in [
        "│ topology │ 1 package, 4 cores × 2 threads, 1 core class   │     2 │       0 │",
        "│ topology │ 1 package, 4 cores × 1 thread, 1 core class    │     1 │       1 │",
        "│ topology │ 2 packages, 64 cores × 2 threads, 1 core class │     1 │       0 │",
        "│ 11th Gen Intel(R) Core(TM) i5-11300H @ 3.10GHz │     3 │",
    ] {
        assert!(shown.contains(line), "no {line}\n{shown}");
    }
    assert!(
        shown.contains(
            "  laptop3 topology: shaped 1 package, 4 cores × 1 thread, 1 core class, unlike\n"
        ),
        "{shown}"
    );
    assert!(shown.contains("OUTLIER"), "{shown}");
}

/// A host an upgrade left behind is reported with the version that wrote
/// its document: a table of hosts per version when they differ (none when
/// every host runs one), and each row's `tool_version`.
#[test]
fn a_host_left_on_an_older_version_is_reported_with_it() {
    let mut old = recorded_gate("guest-virtual");
    old["host"] = "node3".into();
    old["tool_version"] = "0.0.9".into();
    let lines = format!(
        "node1: {}\nnode2: {}\nnode3: {old}\n",
        gate_line("node1"),
        gate_line("node2")
    );
    let output = report(&["-"], lines.as_bytes());
    let view = text(&output.stdout);
    assert!(view.contains("placement-study version"), "{view}");
    let versions: Vec<Vec<&str>> = view
        .lines()
        .map(|line| {
            line.split('│')
                .map(str::trim)
                .filter(|cell| !cell.is_empty())
                .collect()
        })
        .filter(|cells: &Vec<&str>| cells.len() == 2 && cells[0].starts_with('0'))
        .collect();
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(versions, [vec![version, "2"], vec!["0.0.9", "1"]], "{view}");

    let output = report(&["--json", "-"], lines.as_bytes());
    let rows: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let shown: Vec<(&str, &str)> = rows
        .iter()
        .map(|row| {
            (
                row["host"].as_str().unwrap(),
                row["tool_version"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [("node1", version), ("node2", version), ("node3", "0.0.9")]
    );

    let one_version = format!("node1: {}\n", gate_line("node1"));
    let output = report(&["-"], one_version.as_bytes());
    let view = text(&output.stdout);
    assert!(!view.contains("placement-study version"), "{view}");
}
