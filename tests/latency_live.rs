//! `latency` on this machine: it completes, pins, and keeps its samples
//! (no timing is asserted: the machine may be loaded), and a stop signal
//! keeps what was measured.

use crate::common;
use serde_json::Value;
use std::process::Command;

fn latency_json(args: &[&str]) -> (Option<i32>, Value) {
    document_of(&[&["latency"], args].concat())
}

/// `placement-study ARGS --json FILE`: its exit status and the document.
fn document_of(args: &[&str]) -> (Option<i32>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("document.json");
    let output = common::placement_study(&[args, &["--json", path.to_str().unwrap()]].concat());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let document = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (
        output.status.code(),
        serde_json::from_str(&document).unwrap(),
    )
}

#[test]
fn every_pair_is_measured_pinned_with_its_samples() {
    if !common::two_cpus_allowed() {
        return;
    }
    let _cpus = common::cpus_to_myself();
    let (status, document) = latency_json(&["--samples", "5"]);
    // The map verdicts: agree, differ, inconclusive.
    assert!(matches!(status, Some(0 | 3 | 5)), "{status:?}");
    assert_eq!(document["kind"], "latency");
    assert_eq!(document["complete"], true);
    assert_eq!(document["pinning"]["status"], "passed");
    let pairs = document["pairs"].as_array().unwrap();
    assert_eq!(
        pairs.len() as u64,
        document["effort"]["all_pairs"].as_u64().unwrap()
    );
    for pair in pairs {
        let samples = pair["samples"].as_u64().unwrap();
        // Five samples, or fewer once three of them ran into their bound.
        assert!((1..=5).contains(&samples), "{pair}");
        assert_eq!(pair["pinned"], true, "{pair}");
    }
    let control = &document["control"];
    assert_eq!(control["cpus"][0], control["cpus"][1]);
    assert!(
        !document["judgement"]["levels"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn one_per_domain_measures_rows_and_counts_what_it_inferred() {
    if !common::two_cpus_allowed() {
        return;
    }
    let _cpus = common::cpus_to_myself();
    let (status, document) = latency_json(&["--one-per-domain", "--all-samples", "--samples", "5"]);
    assert!(matches!(status, Some(0 | 3 | 5)), "{status:?}");
    assert_eq!(document["options"]["one_per_domain"], true);
    assert_eq!(document["options"]["early_stop"], false);
    let effort = &document["effort"];
    let count = |field: &str| effort[field].as_u64().unwrap();
    assert_eq!(
        count("pairs_measured") + count("pairs_inferred"),
        count("all_pairs")
    );
    assert_eq!(count("pairs_at_once"), 1);
    // Rows are measured one pair at a time: no parallel check.
    assert!(document.get("parallel_check").is_none(), "{document}");
}

/// `pairs --first-pass latency` runs the latency pass first and searches
/// within its sets; what the pass found is in the document.
#[test]
fn pairs_with_a_latency_first_pass_says_what_the_pass_found() {
    if !common::two_cpus_allowed() {
        return;
    }
    let _cpus = common::cpus_to_myself();
    let (status, document) = document_of(&["pairs", "--first-pass", "latency", "--rep-ms", "20"]);
    assert!(matches!(status, Some(0 | 3 | 5)), "{status:?}");
    assert_eq!(document["search"], "latency-domains", "{document}");
    let first_pass = &document["first_pass"];
    assert_eq!(first_pass["all_pairs"], document["effort"]["all_pairs"]);
    let sets = first_pass["candidate_sets"].as_array().unwrap();
    let covered: u64 = sets
        .iter()
        .map(|s| s["cpus"].as_array().unwrap().len() as u64)
        .sum();
    assert_eq!(
        covered,
        document["tested"].as_array().unwrap().len() as u64,
        "{first_pass}"
    );
    assert!(
        first_pass["seconds"].as_f64().unwrap()
            <= document["effort"]["measuring_seconds"].as_f64().unwrap()
    );
}

/// A SIGTERM or SIGINT during the same-CPU control (each of its samples
/// bounded at a second) ends the study with the signal's status and a
/// document marked incomplete; the view says it was stopped, and the
/// status it exits with, not the inconclusive verdict's.
#[test]
fn a_stop_signal_keeps_what_was_measured_marked_incomplete() {
    if !common::two_cpus_allowed() {
        return;
    }
    let _cpus = common::cpus_to_myself();
    for (signal, name) in [
        (nix::sys::signal::Signal::SIGTERM, "SIGTERM"),
        (nix::sys::signal::Signal::SIGINT, "SIGINT"),
    ] {
        stopped_by(signal, name);
    }
}

fn stopped_by(signal: nix::sys::signal::Signal, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stopped.json");
    let child = Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(["latency", "--sample-ms", "1000", "--json"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The responder thread is up once the process has two threads.
    let tasks = format!("/proc/{}/task", child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_dir(&tasks).map_or(0, |d| d.count()) < 2 {
        assert!(std::time::Instant::now() < deadline, "no responder thread");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, signal).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let status = 128 + signal as i32;
    assert_eq!(output.status.code(), Some(status), "{name}: {stderr}");
    let document: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(document["complete"], false);
    assert_eq!(document["verdict"], "inconclusive");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("INCOMPLETE"), "{stdout}");
    let verdict = format!("\nverdict: none, stopped by {name} (exit {status})\n");
    assert!(stdout.contains(&verdict), "{name}: {stdout}");
    assert!(!stdout.contains("(exit 5)"), "{name}: {stdout}");
    // The saved document reads back the same way.
    let report = Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .arg("report")
        .arg(&path)
        .output()
        .unwrap();
    let view = String::from_utf8_lossy(&report.stdout);
    assert!(view.contains(&verdict), "{name}: {view}");
}
