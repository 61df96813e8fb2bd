//! Conformance: every real-machine sysfs snapshot in
//! `../shared/conformance/hwloc/sysfs-manifest.tsv` (hwloc's test suite),
//! probed and compared with the manifest's expected counts.
//!
//! All rows run; failures are collected and reported together, one line per
//! mismatch, so a regression on one machine does not hide another.

mod conformance;

use conformance::{Corpus, Row};
use placement_study::cpuset::{CpuSet, parse_list};
use placement_study::probe::{Topology, probe};
use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

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

/// Extracts a row's tarball and probes its snapshot root; `Err` carries
/// everything wrong with the row.
fn check_row(corpus: &Corpus, row: &Row) -> Result<(), String> {
    let scratch = corpus.extract(row.get("tarball"), &[])?;
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
    let Some(corpus) = Corpus::find() else {
        return;
    };
    let rows = corpus.read_manifest("sysfs-manifest.tsv");
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|row| {
            check_row(&corpus, row)
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
