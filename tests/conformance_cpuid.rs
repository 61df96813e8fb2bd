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

use placement_study::cpuset::CpuSet;
use placement_study::probe::CpuidReport;
use placement_study::probe::cpuid::{CpuidSource, classes_from_cpuid, read_report};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/hwloc")
}

/// One manifest row, by column name.
struct Row<'a>(BTreeMap<&'a str, &'a str>);

impl Row<'_> {
    fn get(&self, column: &str) -> &str {
        self.0
            .get(column)
            .copied()
            .unwrap_or_else(|| panic!("manifest has no column {column}"))
    }
}

fn parse_manifest(text: &str) -> Vec<Row<'_>> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .expect("manifest has a header")
        .split('\t')
        .collect();
    lines
        .filter(|line| !line.trim().is_empty())
        .map(|line| Row(header.iter().copied().zip(line.split('\t')).collect()))
        .collect()
}

fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

/// "Atom:4,Core:1" from leaf 0x1A's raw types; "-" when no CPU has one.
fn core_types(report: &CpuidReport) -> String {
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
        return "-".to_string();
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(name, count)| format!("{name}:{count}"))
        .collect();
    parts.join(",")
}

/// What we decode, as the manifest writes it, column by column.
fn observed(report: &CpuidReport) -> Vec<(&'static str, String)> {
    vec![
        ("vendor", report.vendor.clone()),
        ("family", format!("{:#x}", report.family)),
        (
            "brand",
            report.brand.clone().unwrap_or_else(|| "-".to_string()),
        ),
        ("hypervisor_bit", yes_no(report.hypervisor_bit).to_string()),
        ("hybrid_bit", yes_no(report.hybrid_bit).to_string()),
        ("core_types", core_types(report)),
        ("cpus", report.per_cpu.len().to_string()),
        ("packages", report.packages.to_string()),
        ("cores", report.cores.to_string()),
        ("threads_per_core", report.threads_per_core.clone()),
        (
            "core_classes",
            classes_from_cpuid(report)
                .map_or(1, |classes| classes.len())
                .to_string(),
        ),
    ]
}

fn check_row(row: &Row, scratch: &Path) -> Vec<String> {
    let name = row.get("name");
    let tarball = corpus_dir().join(row.get("tarball"));
    let cpuid_dir = row.get("cpuid_dir");
    // Only the dump: some tarballs also hold a whole sysfs snapshot.
    let status = Command::new("tar")
        .arg("-xjf")
        .arg(&tarball)
        .arg("-C")
        .arg(scratch)
        .arg(cpuid_dir)
        .status();
    if !matches!(status, Ok(s) if s.success()) {
        return vec![format!(
            "{name}: cannot extract {} ({status:?})",
            tarball.display()
        )];
    }
    let dump = scratch.join(cpuid_dir);
    let report = match read_report(&CpuidSource::Dump(dump), &CpuSet::default()) {
        Ok(report) => report,
        Err(error) => return vec![format!("{name}: {error:#}")],
    };
    observed(&report)
        .into_iter()
        .filter(|(column, value)| row.get(column) != value)
        .map(|(column, value)| {
            format!(
                "{name}: {column}: manifest says {:?}, decoded {value:?}",
                row.get(column)
            )
        })
        .collect()
}

#[test]
fn every_cpuid_dump_matches_its_manifest_row() {
    let manifest_path = corpus_dir().join("cpuid-manifest.tsv");
    let Ok(manifest) = std::fs::read_to_string(&manifest_path) else {
        println!(
            "skipped: no conformance corpus at {}",
            manifest_path.display()
        );
        return;
    };
    let rows = parse_manifest(&manifest);
    assert!(
        !rows.is_empty(),
        "{} lists no dump",
        manifest_path.display()
    );

    let mut failures = Vec::new();
    for row in &rows {
        let scratch = tempfile::tempdir().expect("a scratch folder");
        failures.extend(check_row(row, scratch.path()));
    }
    assert!(
        failures.is_empty(),
        "{} disagreements with the manifest across {} CPUID dumps:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
    println!("{} CPUID dumps match the manifest", rows.len());
}
