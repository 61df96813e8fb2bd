//! Conformance: every CPUID dump of hwloc's test suite (listed in
//! `../shared/conformance/hwloc/cpuid-manifest.tsv`) decodes to the vendor,
//! bits, core types and package/core/thread counts hwloc finds in it.
//!
//! Columns checked: vendor, family, brand, hypervisor_bit, hybrid_bit,
//! core_types, cpus, packages, cores, threads_per_core, core_classes. Not
//! `model`: the manifest's 0xb for the Zhaoxin KH-40000 ignores Zhaoxin's
//! extended model (hwloc's own XML for it says 91 = 0x5b, which we decode).
//!
//! Intel-CPUID.1A-1p2co2t is hand-edited: only pu0's leaf 0 admits leaf 0x1A,
//! so only pu0 has a core type ("Atom:1"); the other CPUs form an "unknown"
//! class, and the part has two classes as hwloc says.

#![cfg(target_arch = "x86_64")]

use crate::conformance::{Corpus, Row};
use placement_study::cpuset::CpuSet;
use placement_study::probe::classes::classes_from_cpuid;
use placement_study::probe::cpuid::read_report;
use placement_study::probe::{CpuidReport, CpuidSource};
use std::collections::BTreeMap;

fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

/// "Atom:4,Core:1" from leaf 0x1A's raw types; `None` when no CPU has one.
fn core_types(report: &CpuidReport) -> Option<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for raw in report.per_cpu.iter().filter_map(|cpu| cpu.core_type_raw) {
        let name = match raw {
            0x20 => "Atom".to_string(),
            0x40 => "Core".to_string(),
            other => format!("{other:#x}"),
        };
        *counts.entry(name).or_default() += 1;
    }
    if counts.is_empty() {
        return None;
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(name, count)| format!("{name}:{count}"))
        .collect();
    Some(parts.join(","))
}

/// What we decode, as the manifest writes it, column by column; `None`
/// where the manifest writes "-" (no brand string, no core types).
fn observed(report: &CpuidReport) -> Vec<(&'static str, Option<String>)> {
    let present = |column, value: String| (column, Some(value));
    vec![
        present("vendor", report.vendor.clone()),
        present("family", format!("{:#x}", report.family)),
        ("brand", report.brand.clone()),
        present("hypervisor_bit", yes_no(report.hypervisor_bit).to_string()),
        present("hybrid_bit", yes_no(report.hybrid_bit).to_string()),
        ("core_types", core_types(report)),
        present("cpus", report.per_cpu.len().to_string()),
        present("packages", report.packages.to_string()),
        present("cores", report.cores.to_string()),
        present("threads_per_core", report.threads_per_core.clone()),
        present(
            "core_classes",
            classes_from_cpuid(report)
                .map_or(1, |classes| classes.len())
                .to_string(),
        ),
    ]
}

fn check_row(corpus: &Corpus, row: &Row) -> Vec<String> {
    let name = row.get("name");
    let cpuid_dir = row.get("cpuid_dir");
    // Only the dump: some tarballs also hold a whole sysfs snapshot.
    let scratch = match corpus.extract(row.get("tarball"), &[cpuid_dir]) {
        Ok(scratch) => scratch,
        Err(error) => return vec![format!("{name}: {error}")],
    };
    let dump = scratch.path().join(cpuid_dir);
    let report = match read_report(&CpuidSource::Dump(dump), &CpuSet::default()) {
        Ok(report) => report,
        Err(error) => return vec![format!("{name}: {error:#}")],
    };
    observed(&report)
        .into_iter()
        .filter(|(column, decoded)| row.expected(column) != decoded.as_deref())
        .map(|(column, decoded)| {
            format!(
                "{name}: {column}: manifest says {:?}, decoded {}",
                row.get(column),
                decoded.map_or_else(|| "nothing".to_string(), |value| format!("{value:?}"))
            )
        })
        .collect()
}

#[test]
fn every_cpuid_dump_matches_its_manifest_row() {
    let Some(corpus) = Corpus::find("conformance_cpuid::every_cpuid_dump_matches_its_manifest_row")
    else {
        return;
    };
    let rows = corpus.read_manifest("cpuid-manifest.tsv");

    let failures: Vec<String> = rows
        .iter()
        .flat_map(|row| check_row(&corpus, row))
        .collect();
    assert!(
        failures.is_empty(),
        "{} disagreements with the manifest across {} CPUID dumps:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
    println!("{} CPUID dumps match the manifest", rows.len());
}
