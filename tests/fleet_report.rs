//! `report --fleet` on the captured fleet of `fixtures/fleet/` (see its
//! README): real pdsh and clush output, a `--json-line` capture with the
//! human view mixed in, a pretty saved gate and a file that does not
//! exist; and, apart, a real Ansible `--tree` folder. The counts, the
//! outliers, the missing and broken hosts, one JSON line per host and kind,
//! and exit 0 whatever the hosts sent.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn fleet_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fleet")
}

/// The whole fixture fleet, named relative to its folder (the report names
/// broken sources by the path they were given as).
const INPUTS: &[&str] = &[
    "pdsh.out",
    "clush.out",
    "vm-gate.json",
    "local.out",
    "no-such-file.out",
];

const HOSTS: &str = "--hosts=node[1-10],gpu[1-5]";

/// `report --fleet ARGS` run in the fixture folder, `stdin` fed to it.
fn report(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_placement-study"))
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
        "17 hosts: 10 with a result, 5 broken, 2 missing (2 not in --hosts)"
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
    let broken = section(&view, "Broken (5)");
    for (host, why) in [
        ("node6", "not a placement-study JSON file"),
        (
            "node7",
            "pdsh@vm: bash exited with exit code 255; last line: Permission denied",
        ),
        ("node8", "exit code 4; last line: ! no hardware PMU visible"),
        ("gpu5", "clush: command timeout"),
        ("no-such-file.out", "cannot open: No such file"),
    ] {
        assert!(broken.contains(&format!("  {host}: ")), "{host}: {broken}");
        assert!(broken.contains(why), "{host}: {why:?} not in {broken}");
    }
    // The human view mixed into local.out is not taken for hosts.
    assert!(!view.contains("verdict:"), "{view}");
    assert!(view.contains("replaced"), "{view}");
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
    // 17 hosts; gpu3 (gate, run) and vm (gate, observe) have two kinds.
    assert_eq!(lines.len(), 19);
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
    for host in ["node6", "node7", "node8", "gpu5", "no-such-file.out"] {
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
    assert!(virtual_guest["penalty"].as_f64().unwrap() < 0.15);
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
    assert!(lines.next().unwrap().starts_with("host,file,line,status,"));
    assert_eq!(lines.count(), 19);
    // The human view went to stderr, out of the CSV's way.
    assert!(text(&output.stderr).starts_with("17 hosts: "));
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
