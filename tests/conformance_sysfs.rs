//! Conformance: every real-machine sysfs snapshot in
//! `../shared/conformance/hwloc/sysfs-manifest.tsv` (hwloc's test suite),
//! probed and compared with the manifest's expected counts.
//!
//! All rows run; failures are collected and reported together, one line per
//! mismatch, so a regression on one machine does not hide another.

use crate::conformance::{Corpus, Row};
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
    // The cpuinfo flag as a hypervisor source says it ("n/a" rows have no
    // flags line, and so no such source).
    let flag = topology
        .environment
        .hypervisor_sources
        .iter()
        .find(|source| source.file == "/proc/cpuinfo")
        .and_then(|source| source.guest);
    check(
        "hypervisor_flag",
        match flag {
            Some(true) => "yes",
            Some(false) => "no",
            None => "none read",
        }
        .to_owned(),
    );
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

/// Probes one row's snapshot, by name.
fn probe_row(corpus: &Corpus, name: &str) -> Topology {
    let rows = corpus.read_manifest("sysfs-manifest.tsv");
    let row = rows
        .iter()
        .find(|row| row.get("name") == name)
        .unwrap_or_else(|| panic!("no row {name} in the manifest"));
    let scratch = corpus
        .extract(row.get("tarball"), &[])
        .unwrap_or_else(|why| panic!("{name}: {why}"));
    probe(Some(&scratch.path().join(row.get("top_dir"))), None)
        .unwrap_or_else(|e| panic!("probing {name}: {e:#}"))
}

/// An old 32-bit ARM kernel prints the MIDR fields once, after all the
/// processor blocks: they name both CPUs.
#[test]
fn old_arm_cpuinfo_names_the_cortex_a9() {
    let Some(corpus) = Corpus::find() else {
        return;
    };
    let topology = probe_row(&corpus, "2arm-2c");
    let midr = topology.midr.as_ref().expect("cpuinfo's MIDR fields");
    assert_eq!(
        (midr.source.as_str(), midr.arch.as_str()),
        ("cpuinfo", "arm")
    );
    let [kind] = midr.kinds.as_slice() else {
        panic!("one kind of core: {:?}", midr.kinds);
    };
    assert_eq!(kind.cpus, CpuSet::from_cpus([0, 1]));
    assert_eq!((kind.implementer, kind.part), (0x41, 0xc09));
    assert_eq!(kind.name, "ARM Cortex-A9 r2p1");
    assert_eq!(topology.cpu_name().as_deref(), Some("ARM Cortex-A9 r2p1"));
    assert_eq!(
        topology.source.cpuid_absent.as_deref(),
        Some("not part of arm")
    );
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
