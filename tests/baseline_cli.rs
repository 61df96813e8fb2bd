//! Baselines as a CI job uses them: `report --baseline OLD NEW` on
//! recorded documents (exit 7 on a regression, 0 when nothing regressed,
//! 2 for a comparison of different workloads, each error one line), and
//! `run --save-baseline` / `--baseline NAME` end to end with a tiny shell
//! loop, XDG_DATA_HOME pointing at a temporary folder.

use crate::common::placement_study;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/results")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The recorded sweep with every wall time of `arm` (`baseline`: step 1,
/// the first CPU alone) multiplied by `factor`.
fn sweep_scaled(arm: &str, factor: f64) -> Value {
    let mut document = fixture("sweep-vm-per-worker.json");
    for sample in document["samples"].as_array_mut().unwrap() {
        if sample["arm"] == arm {
            let wall = sample["wall_ns"].as_f64().unwrap();
            sample["wall_ns"] = Value::from((wall * factor) as u64);
        }
    }
    document
}

fn write(dir: &Path, name: &str, document: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(document).unwrap()).unwrap();
    path
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn report_baseline_exits_by_its_verdict_and_writes_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.json", &fixture("sweep-vm-per-worker.json"));
    let same = write(
        dir.path(),
        "same.json",
        &fixture("sweep-vm-per-worker.json"),
    );
    let slower = write(dir.path(), "slower.json", &sweep_scaled("baseline", 2.0));
    let (old, same, slower) = (
        old.to_str().unwrap(),
        same.to_str().unwrap(),
        slower.to_str().unwrap(),
    );
    // The same document: nothing regressed, but step 2 kept two rounds,
    // too few for an interval: inconclusive, which fails only when asked.
    let output = placement_study(&["report", "--baseline", old, same]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("INCONCLUSIVE (exit 0)"), "{text}");
    let output = placement_study(&[
        "report",
        "--baseline",
        old,
        same,
        "--fail-on",
        "inconclusive",
    ]);
    assert_eq!(output.status.code(), Some(5), "{}", stderr(&output));
    // Step 1 twice as slow: regressed, first, exit 7; every output written.
    let json = dir.path().join("r.json");
    let csv = dir.path().join("r.csv");
    let svg = dir.path().join("r.svg");
    let prom = dir.path().join("r.prom");
    let markdown = dir.path().join("r.md");
    let output = placement_study(&[
        "report",
        "--baseline",
        old,
        slower,
        &format!("--json={}", json.display()),
        &format!("--csv={}", csv.display()),
        "--svg",
        svg.to_str().unwrap(),
        "--prom",
        prom.to_str().unwrap(),
        "--markdown",
        markdown.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(7), "{}", stderr(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("REGRESSED (exit 7)"), "{text}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["kind"], "baseline");
    assert_eq!(report["verdict"], "regressed");
    assert_eq!(report["judged"][0]["rows"][0]["row"], "step 1");
    assert_eq!(report["judged"][0]["rows"][0]["verdict"], "regressed");
    assert!(
        std::fs::read_to_string(&csv)
            .unwrap()
            .lines()
            .nth(1)
            .unwrap()
            .contains("regressed")
    );
    assert!(
        std::fs::read_to_string(&prom)
            .unwrap()
            .contains("placement_study_baseline_change_ratio")
    );
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<?xml"));
    assert!(
        std::fs::read_to_string(&markdown)
            .unwrap()
            .contains("| row |")
    );
}

#[test]
fn a_comparison_of_other_workloads_or_kinds_is_a_one_line_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.json", &fixture("sweep-vm-per-worker.json"));
    let mut other = fixture("sweep-vm-per-worker.json");
    other["options"]["kernel"] = Value::from("add");
    let other = write(dir.path(), "other.json", &other);
    let gate = write(dir.path(), "gate.json", &fixture("gate-vm-no-smt.json"));
    for (new, expected) in [
        (&other, "its workload is the add kernel"),
        (&gate, "of its own kind"),
    ] {
        let output = placement_study(&[
            "report",
            "--baseline",
            old.to_str().unwrap(),
            new.to_str().unwrap(),
        ]);
        let error = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{error}");
        assert!(error.contains(expected), "{error}");
        assert_eq!(error.lines().count(), 1, "{error}");
        assert!(output.stdout.is_empty());
    }
    // Judged anyway when asked, the difference shown.
    let output = placement_study(&[
        "report",
        "--baseline",
        old.to_str().unwrap(),
        other.to_str().unwrap(),
        "--allow-different",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("MEASURED SOMETHING ELSE"), "{text}");
}

/// The words as `&str`s.
fn args(words: &[String]) -> Vec<&str> {
    words.iter().map(String::as_str).collect()
}

/// `run` with XDG_DATA_HOME at `data`.
fn run_with_data(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .arg("run")
        .args(args)
        .env("XDG_DATA_HOME", data)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

#[test]
fn a_named_baseline_is_kept_then_judged_against() {
    let _cpus = crate::common::cpus_to_myself();
    let data = tempfile::tempdir().unwrap();
    let quick = [
        "--skip-gate",
        "--arms",
        "one-per-core,same-cpu",
        "--threads",
        "1",
        "--warmups",
        "0",
        "--reps",
        "4",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        quick
            .iter()
            .chain(extra)
            .map(|word| word.to_string())
            .collect()
    };
    // Nothing to judge against yet: refused before anything is measured.
    let words = with(&["--baseline", "main", "--", "true"]);
    let output = run_with_data(data.path(), &args(&words));
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("save one first with --save-baseline main"));
    // A bad name: one line, exit 2.
    for bad in ["a/b", ".hidden"] {
        let words = with(&["--save-baseline", bad, "--", "true"]);
        let output = run_with_data(data.path(), &args(&words));
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
    }
    // Kept, then judged: the same command, so no refusal.
    let words = with(&["--save-baseline", "main", "--", "true"]);
    let output = run_with_data(data.path(), &args(&words));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let folder = data.path().join("placement-study/baselines");
    let hosts: Vec<_> = std::fs::read_dir(&folder).unwrap().collect();
    assert_eq!(hosts.len(), 1);
    let host = hosts[0].as_ref().unwrap().path();
    assert!(host.join("main.command.json").is_file());
    let words = with(&["--baseline", "main", "--", "true"]);
    let output = run_with_data(data.path(), &args(&words));
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        [0, 7].contains(&output.status.code().unwrap()),
        "{text}{}",
        stderr(&output)
    );
    assert!(text.contains("against the baseline"), "{text}");
    // Another command is another workload: refused, naming the fix.
    let words = with(&["--baseline", "main", "--", "sh", "-c", "true"]);
    let output = run_with_data(data.path(), &args(&words));
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("--allow-different"),
        "{}",
        stderr(&output)
    );
}
