//! Conformance: every real-machine sysfs snapshot in
//! `../shared/conformance/hwloc/sysfs-manifest.tsv` (hwloc's test suite),
//! probed and compared with the manifest's expected counts.
//!
//! All rows run; failures are collected and reported together, one line per
//! mismatch, so a regression on one machine does not hide another.

use crate::common;
use crate::conformance::{CORPUS_ENV, Corpus, Row};
use placement_study::cpuset::{CpuSet, parse_list};
use placement_study::probe::{Topology, probe};
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

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

/// hwloc's NUMA nodes in lstopo's console output (`linux/NAME.console`):
/// each `NumaNode L#i (P#j ...)` line's OS number `j` → the PUs' OS numbers
/// under the object it hangs from. lstopo prints a node as a memory child
/// of that object (the first line above it indented less that is not
/// itself memory: a `MemCache` may wrap the node), before its other
/// children; the object's CPUs are the `PU L#k (P#n)` lines of its subtree.
fn hwloc_nodes(console: &str) -> Result<BTreeMap<u32, CpuSet>, String> {
    let lines: Vec<(usize, &str)> = console
        .lines()
        .map(|line| {
            let text = line.trim_start();
            (line.len() - text.len(), text)
        })
        .collect();
    let os_number = |text: &str| -> Result<u32, String> {
        let after = text
            .split_once("(P#")
            .map(|(_, after)| after)
            .ok_or_else(|| format!("no P# in '{text}'"))?;
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().map_err(|_| format!("bad P# in '{text}'"))
    };
    let mut nodes = BTreeMap::new();
    for (at, &(indent, text)) in lines.iter().enumerate() {
        // `NUMANode L#0 (P#0 …)` or `NUMANode(GPUMemory) L#1 (P#253 …)`;
        // not the attribute lines after the tree (`NUMANode L#0 = 1000 …`).
        let is_node = text.starts_with("NUMANode")
            && text.split_once(" L#").is_some_and(|(_, after)| {
                let rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
                rest.len() < after.len() && rest.starts_with(" (P#")
            });
        if !is_node {
            continue;
        }
        let mut level = indent;
        let parent = lines[..at].iter().enumerate().rev().find(|(_, (i, t))| {
            if *i >= level {
                return false;
            }
            level = *i;
            !t.starts_with("MemCache") && !t.starts_with("NUMANode")
        });
        let (start, floor) = match parent {
            Some((index, (indent, _))) => (index + 1, Some(*indent)),
            None => (0, None),
        };
        let mut pus = Vec::new();
        for &(i, t) in &lines[start..] {
            if floor.is_some_and(|floor| i <= floor) {
                break;
            }
            if t.starts_with("PU ") {
                pus.push(os_number(t)?);
            }
        }
        nodes.insert(os_number(text)?, CpuSet::from_cpus(pus));
    }
    Ok(nodes)
}

/// lstopo's nodes: beside a package's cores, inside a `MemCache`, a GPU's
/// memory node, and not the attribute lines after the tree.
#[test]
fn hwlocs_nodes_are_read_from_lstopos_tree() {
    let console = "\
Machine (P#0 total=8GiB)
  Package L#0
    NUMANode L#0 (P#0 local=4GiB)
    Core L#0
      PU L#0 (P#0)
      PU L#1 (P#2)
  Package L#1
    MemCache L#0 (size=1GiB)
      NUMANode L#1 (P#1 local=4GiB)
    NUMANode(GPUMemory) L#2 (P#253 local=15GiB)
    Core L#1
      PU L#2 (P#1)
Relative latency matrix between 3 NUMANodes
  NUMANode L#0 = 1000 from cpuset 0x00000003 (Group L#0)
";
    let nodes = hwloc_nodes(console).unwrap();
    let expected = BTreeMap::from([
        (0, CpuSet::from_cpus([0, 2])),
        (1, CpuSet::from_cpus([1])),
        (253, CpuSet::from_cpus([1])),
    ]);
    assert_eq!(nodes, expected);
    assert!(hwloc_nodes("NUMANode L#0 (P#x)").is_err());
}

/// Compares the probed nodes with hwloc's, where the snapshot `root` has
/// node folders and the corpus lstopo's output for it: the node numbers,
/// and each node's online CPUs (a node whose own list is empty, memory
/// alone, hangs in hwloc from whatever is nearest, so only its presence is
/// compared). `None` where there is nothing to compare; else the
/// mismatches, one line each.
fn compare_nodes(
    corpus: &Corpus,
    row: &Row,
    root: &Path,
    topology: &Topology,
) -> Option<Vec<String>> {
    let has_node_folders = std::fs::read_dir(root.join("sys/devices/system/node"))
        .ok()?
        .flatten()
        .any(|entry| entry.file_name().to_string_lossy().starts_with("node"));
    if !has_node_folders {
        return None;
    }
    // The output that shows every node the files have: hwloc's
    // `--disallowed` one where a cpuset hides some, the one keeping
    // NVIDIA GPU memory nodes where hwloc hides those by default.
    let base = row.get("tarball").replace(".tar.bz2", "");
    let (console_name, console) = ["-disallowed", "-kept", ""].iter().find_map(|variant| {
        let name = format!("{base}{variant}.console");
        corpus.read_text(&name).ok().map(|text| (name, text))
    })?;
    let expected = match hwloc_nodes(&console) {
        Ok(expected) => expected,
        Err(why) => return Some(vec![format!("{console_name}: {why}")]),
    };
    let online = CpuSet::from_cpus(topology.cpus.iter().map(|entry| entry.cpu));
    // hwloc makes no NUMANode of a node without memory (its CPUs hang
    // from the nodes near them), so those are left out of the comparison.
    let probed: BTreeMap<u32, CpuSet> = topology
        .nodes
        .iter()
        .filter(|node| node.memory_kib != Some(0))
        .map(|node| (node.node, node.cpus.intersection(&online)))
        .collect();
    // hwloc merges nodes whose lists overlap (a buggy kernel listing
    // every CPU in every node); the probe keeps the kernel's nodes and
    // says that they overlap, which is what is checked there.
    let overlap_noted = topology
        .node_notes
        .iter()
        .any(|note| note.contains("node lists should not overlap"));
    if expected.len() < probed.len() && overlap_noted {
        println!(
            "{}: hwloc merges its {} overlapping nodes into {}; the probe keeps them and notes it",
            row.get("name"),
            probed.len(),
            expected.len()
        );
        return Some(Vec::new());
    }
    println!(
        "{}: {} NUMA nodes compared with hwloc's ({console_name})",
        row.get("name"),
        probed.len()
    );
    let mut mismatches = Vec::new();
    if expected.keys().ne(probed.keys()) {
        mismatches.push(format!(
            "nodes: hwloc has {:?}, probed {:?}",
            expected.keys().collect::<Vec<_>>(),
            probed.keys().collect::<Vec<_>>()
        ));
    }
    for (node, cpus) in &probed {
        match expected.get(node) {
            Some(hwloc) if !cpus.is_empty() && hwloc != cpus => mismatches.push(format!(
                "node {node}: hwloc has CPUs {hwloc}, probed {cpus}"
            )),
            _ => {}
        }
    }
    Some(mismatches)
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
            let mut mismatches = compare(row, &topology);
            if let Some(node_mismatches) = compare_nodes(corpus, row, &root, &topology) {
                mismatches.extend(node_mismatches);
            }
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
    let Some(corpus) = Corpus::find("conformance_sysfs::old_arm_cpuinfo_names_the_cortex_a9")
    else {
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
    let Some(corpus) = Corpus::find("conformance_sysfs::every_sysfs_snapshot_matches_the_manifest")
    else {
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

/// Without its corpus a conformance test says on the terminal that it is
/// skipped, naming itself (the harness, which captures what a passing test
/// prints, would show only "ok"); under `CI=true` it fails instead.
#[test]
fn a_missing_corpus_is_a_visible_skip_and_a_failure_under_ci() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-corpus");
    let run = |ci: Option<&str>| {
        let mut command = common::rerun_test(module_path!(), "old_arm_cpuinfo_names_the_cortex_a9");
        command.env(CORPUS_ENV, &missing).env_remove("CI");
        if let Some(ci) = ci {
            command.env("CI", ci);
        }
        command.output().unwrap()
    };
    let skipped = run(None);
    let stderr = String::from_utf8_lossy(&skipped.stderr);
    assert!(skipped.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "SKIPPED conformance_sysfs::old_arm_cpuinfo_names_the_cortex_a9: no conformance \
             corpus at {} (CI=true makes this a failure)",
            missing.display()
        )),
        "{stderr}"
    );
    let failed = run(Some("true"));
    let stdout = String::from_utf8_lossy(&failed.stdout);
    assert!(!failed.status.success(), "{stdout}");
    assert!(
        stdout.contains("no conformance corpus at") && stdout.contains("CI is set"),
        "{stdout}"
    );
}
