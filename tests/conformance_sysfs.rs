//! Conformance: every real-machine sysfs snapshot in
//! `../shared/conformance/hwloc/sysfs-manifest.tsv` (hwloc's test suite),
//! probed and compared with the manifest's expected counts.
//!
//! All rows run; failures are collected and reported together, one line per
//! mismatch, so a regression on one machine does not hide another.

use placement_study::cpuset::{CpuSet, parse_list};
use placement_study::probe::{Topology, probe};
use std::collections::{BTreeSet, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Command;

fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/hwloc")
}

/// One manifest row, by column name.
struct Row(HashMap<String, String>);

impl Row {
    fn get(&self, column: &str) -> &str {
        self.0.get(column).map_or("", String::as_str)
    }

    /// The expected value, unless the manifest says "-" or "n/a".
    fn expected(&self, column: &str) -> Option<&str> {
        let value = self.get(column);
        (!value.is_empty() && value != "-" && !value.starts_with("n/a")).then_some(value)
    }
}

fn read_manifest(path: &Path) -> Vec<Row> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .expect("manifest has a header")
        .split('\t')
        .collect();
    lines
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            Row(header
                .iter()
                .zip(line.split('\t'))
                .map(|(column, value)| ((*column).to_owned(), value.to_owned()))
                .collect())
        })
        .collect()
}

/// The CPU sets of `class_sets`, e.g.
/// `eff0:0-3[FrequencyMaxMHz=2800,...] ; eff1:4[...]`.
fn expected_class_sets(class_sets: &str) -> Result<BTreeSet<CpuSet>, String> {
    class_sets
        .split(" ; ")
        .map(|class| {
            let after_name = class.split_once(':').map_or(class, |(_, rest)| rest);
            let list = after_name.split('[').next().unwrap_or(after_name);
            parse_list(list)
        })
        .collect()
}

/// Compares one probed snapshot with its row; returns one line per mismatch.
fn compare(row: &Row, topology: &Topology) -> Vec<String> {
    let summary = &topology.summary;
    let mut mismatches = Vec::new();
    let mut check = |column: &str, actual: String| {
        if let Some(expected) = row.expected(column) {
            if expected != actual {
                mismatches.push(format!("{column}: expected {expected}, got {actual}"));
            }
        }
    };
    check("cpus", summary.cpus.to_string());
    check("packages", summary.packages.to_string());
    check("cores", summary.cores.to_string());
    check("threads_per_core", summary.threads_per_core.clone());
    check("core_classes", summary.core_classes.to_string());
    match row.get("class_sets") {
        "-" if summary.core_classes != 1 => mismatches.push(format!(
            "class_sets: expected 1 class, got {}",
            summary.core_classes
        )),
        "-" | "" => {}
        class_sets => match expected_class_sets(class_sets) {
            Ok(expected) => {
                let actual: BTreeSet<CpuSet> = topology
                    .classes
                    .iter()
                    .map(|class| class.cpus.clone())
                    .collect();
                if expected != actual {
                    mismatches.push(format!("class_sets: expected {expected:?}, got {actual:?}"));
                }
            }
            Err(why) => mismatches.push(format!("class_sets column unreadable: {why}")),
        },
    }
    mismatches
}

/// A scratch folder in RAM where there is one: a snapshot is thousands of
/// tiny files, and creating them on disk costs ten times more.
fn scratch_dir() -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("conformance-")
        .tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
}

/// Extracts a row's tarball and probes its snapshot root; `Err` carries
/// everything wrong with the row.
fn check_row(row: &Row) -> Result<(), String> {
    let tarball = conformance_dir().join(row.get("tarball"));
    let scratch = scratch_dir().map_err(|e| format!("tempdir: {e}"))?;
    let status = Command::new("tar")
        .arg("-xjf")
        .arg(&tarball)
        .arg("-C")
        .arg(scratch.path())
        .status()
        .map_err(|e| format!("running tar: {e}"))?;
    if !status.success() {
        return Err(format!("tar -xjf {} failed: {status}", tarball.display()));
    }
    let root = scratch.path().join(row.get("top_dir"));
    let probed = catch_unwind(AssertUnwindSafe(|| probe(Some(&root), None)))
        .map_err(|_| "probe panicked".to_owned())?;
    match (row.get("use"), probed) {
        ("no-crash", Ok(_)) => Ok(()),
        ("no-crash", Err(error)) => {
            let message = format!("{error:#}");
            if message.contains('\n') {
                Err(format!("error is not one line: {message:?}"))
            } else {
                Ok(())
            }
        }
        (_, Err(error)) => Err(format!("probe failed: {error:#}")),
        (_, Ok(topology)) => {
            let summary = &topology.summary;
            println!(
                "{}: cpus={} packages={} cores={} threads_per_core={} core_classes={}",
                row.get("name"),
                summary.cpus,
                summary.packages,
                summary.cores,
                summary.threads_per_core,
                summary.core_classes
            );
            let mismatches = compare(row, &topology);
            if mismatches.is_empty() {
                Ok(())
            } else {
                Err(mismatches.join("; "))
            }
        }
    }
}

#[test]
fn every_sysfs_snapshot_matches_the_manifest() {
    let manifest = conformance_dir().join("sysfs-manifest.tsv");
    if !manifest.exists() {
        println!("skipping: ../shared/conformance not found");
        return;
    }
    let rows = read_manifest(&manifest);
    assert!(!rows.is_empty(), "{}: no rows", manifest.display());
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|row| {
            check_row(row)
                .err()
                .map(|why| format!("{} ({}): {why}", row.get("name"), row.get("use")))
        })
        .collect();
    println!(
        "{} snapshots checked, {} failed",
        rows.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} snapshots disagree with the manifest:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}
