//! Probe: read the machine into a [`Topology`].
//!
//! Everything that reads the system goes through a seam: sysfs/procfs under a
//! root folder ([`SysfsRoot`]), CPUID through a [`CpuidSource`] (the real
//! instruction, pinned per CPU, or a recorded hwloc-gather-cpuid dump).
//! [`probe`] puts the pieces together.
//!
//! CPUID is an x86 instruction: the `cpuid` module that reads and decodes
//! it is built for x86_64 only. Arm machines say which cores they have in
//! their MIDR instead ([`midr`]).

pub mod caches;
pub mod classes;
#[cfg(target_arch = "x86_64")]
pub mod cpuid;
pub mod crosscheck;
pub mod environment;
pub mod hypervisor;
pub mod list_mask;
pub mod midr;
pub mod model;
pub mod nodes;
pub mod recording;
pub mod sibling_map;
pub mod snapshot;
pub mod sysfs;

pub use model::*;
pub use sysfs::SysfsRoot;

use crate::cpuset::CpuSet;
use anyhow::{Result, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use sysfs::SiblingSets;

#[cfg(target_arch = "x86_64")]
fn read_cpuid(
    source: &CpuidSource,
    cpus: &CpuSet,
    root: Option<&SysfsRoot>,
) -> Result<CpuidReport> {
    cpuid::read_report_in(source, cpus, root)
}

/// Other architectures have no CPUID to read, nor a decoder for dumps.
#[cfg(not(target_arch = "x86_64"))]
fn read_cpuid(
    source: &CpuidSource,
    _cpus: &CpuSet,
    _root: Option<&SysfsRoot>,
) -> Result<CpuidReport> {
    bail!(
        "reading CPUID ({source}): CPUID is an x86 instruction; this {} build does not decode CPUID (use an x86_64 build of placement-study)",
        std::env::consts::ARCH
    )
}

/// Probes a machine.
///
/// * `sysfs_root`: a snapshot folder holding `sys/` and `proc/`, or `None`
///   for this machine's `/`;
/// * `cpuid`: where to read CPUID from, or `None` not to.
///
/// The kernel's sibling sets give the structure. With only a CPUID dump (no
/// root) it comes from the dump's APIC ids instead
/// (`summary.structure_from = "cpuid"`); with both, the two are
/// cross-checked.
pub fn probe(sysfs_root: Option<&Path>, cpuid: Option<&CpuidSource>) -> Result<Topology> {
    match (sysfs_root, cpuid) {
        (None, Some(source @ CpuidSource::Dump(_))) => probe_cpuid_dump(source),
        (Some(dir), _) => probe_root(&SysfsRoot::snapshot(dir)?, cpuid),
        (None, _) => probe_sysfs(&SysfsRoot::live(), cpuid),
    }
}

/// Probes a snapshot: a folder, or a snapshot document, as [`probe`] does
/// with `sysfs_root`. A document's own CPUID dump
/// ([`CpuidSource::Recorded`]) is read where it has one.
pub fn probe_root(root: &SysfsRoot, cpuid: Option<&CpuidSource>) -> Result<Topology> {
    if cpuid == Some(&CpuidSource::Live) {
        bail!(
            "sysfs root {}: this machine's CPUID does not describe a snapshot (expected its CPUID dump, or none)",
            root.root().display()
        );
    }
    let has_dump = |source: &&CpuidSource| {
        !matches!(source, CpuidSource::Recorded(_)) || root.exists(recording::CPUID_DIR)
    };
    probe_sysfs(root, cpuid.filter(has_dump))
}

/// Structure from sysfs; CPUID, when given, adds classes, APIC ids, the
/// hypervisor and the cross-check.
fn probe_sysfs(root: &SysfsRoot, cpuid_source: Option<&CpuidSource>) -> Result<Topology> {
    let online = sysfs::online_cpus(root)?;
    let sibling_map = sysfs::sibling_sets(root, &online)?;
    let sets = &sibling_map.cpus;
    let mut environment = environment::read_environment(root, &online)?;
    let allowed = environment
        .allowed_cpus
        .as_ref()
        .map(|allowed| allowed.intersection(&online));
    // Live CPUID is read on each CPU in turn, which needs leave to run there.
    let readable = allowed.as_ref().unwrap_or(&online);
    let report = cpuid_source
        .map(|source| read_cpuid(source, readable, Some(root)))
        .transpose()?;
    let midr = midr::read_midr(root, &online)?;
    let classes = classes::core_classes(Some(root), &online, report.as_ref(), midr.as_ref())?;
    let caches = caches::read_caches(root, sets)?;
    let node_map = nodes::read_nodes(root, &online)?;
    // arm64 cpuinfo has no `model name`: the MIDR names the CPU instead.
    if environment.model_name.is_none() {
        environment.model_name = midr.as_ref().map(MidrReport::cores);
    }

    let mut cpus = entries_from_sibling_sets(sets, &online);
    for entry in &mut cpus {
        entry.allowed = allowed.as_ref().is_none_or(|set| set.contains(entry.cpu));
    }
    if let Some(report) = &report {
        fill_apic_ids(&mut cpus, report);
    }
    label_classes(&mut cpus, &classes);
    let crosscheck = report
        .as_ref()
        .map(|report| crosscheck::crosscheck(&cpus, report, readable));
    let allowed_count = allowed.as_ref().map_or(online.len(), CpuSet::len);
    Ok(Topology {
        schema_version: TOPOLOGY_SCHEMA_VERSION,
        source: ProbeSource {
            sysfs_root: (!root.is_live()).then(|| root.root().display().to_string()),
            cpuid: cpuid_source.map(CpuidSource::to_string),
            cpuid_absent: cpuid_source
                .is_none()
                .then(|| cpuid_absent(root, midr.as_ref()))
                .flatten(),
        },
        summary: summarize(
            &cpus,
            &classes,
            allowed_count,
            (report.as_ref(), &environment),
            "sysfs",
            sibling_map.cores_unknown,
        ),
        cpus,
        classes,
        caches,
        environment,
        cpuid: report,
        midr,
        crosscheck,
        sibling_map_notes: [
            sibling_map.notes,
            list_mask::list_mask_notes(root, &online)?,
        ]
        .concat(),
        nodes: node_map.nodes,
        node_notes: node_map.notes,
    })
}

/// Structure from a CPUID dump's APIC ids alone (no sysfs to read).
fn probe_cpuid_dump(source: &CpuidSource) -> Result<Topology> {
    let report = read_cpuid(source, &CpuSet::default(), None)?;
    let mut cpus = crosscheck::entries_from_cpuid(&report);
    if cpus.is_empty() {
        bail!("CPUID dump {source}: no CPUs (expected one puN file per CPU)");
    }
    cpus.sort_by_key(|entry| entry.cpu);
    let online = CpuSet::from_cpus(cpus.iter().map(|entry| entry.cpu));
    let classes = classes::core_classes(None, &online, Some(&report), None)?;
    for entry in &mut cpus {
        entry.allowed = true;
    }
    label_classes(&mut cpus, &classes);
    Ok(Topology {
        schema_version: TOPOLOGY_SCHEMA_VERSION,
        source: ProbeSource {
            sysfs_root: None,
            cpuid: Some(source.to_string()),
            cpuid_absent: None,
        },
        summary: summarize(
            &cpus,
            &classes,
            online.len(),
            (Some(&report), &Environment::default()),
            "cpuid",
            None,
        ),
        cpus,
        classes,
        caches: Vec::new(),
        environment: Environment::default(),
        cpuid: Some(report),
        midr: None,
        crosscheck: None,
        sibling_map_notes: Vec::new(),
        nodes: Vec::new(),
        node_notes: Vec::new(),
    })
}

/// Why a machine read without CPUID has none: "not part of aarch64" when
/// it is an Arm machine (it has a MIDR, or it is this non-x86 host).
/// `None` for an x86 machine whose CPUID was merely not read.
fn cpuid_absent(root: &SysfsRoot, midr: Option<&MidrReport>) -> Option<String> {
    let arch = match midr {
        Some(midr) => midr.arch.as_str(),
        None if root.is_live() && !cfg!(target_arch = "x86_64") => std::env::consts::ARCH,
        None => return None,
    };
    Some(format!("not part of {arch}"))
}

/// One entry per online CPU, numbered by sets: cores and packages 0.. in
/// order of their lowest CPU. A CPU without a package set belongs to the
/// one package of the whole machine. Dies and clusters are numbered only
/// where they add structure (some die is not its package, some cluster is
/// neither its core nor its die).
fn entries_from_sibling_sets(sets: &[SiblingSets], online: &CpuSet) -> Vec<CpuEntry> {
    let packages: Vec<&CpuSet> = sets
        .iter()
        .map(|s| s.package.as_ref().unwrap_or(online))
        .collect();
    let dies: Vec<&CpuSet> = sets
        .iter()
        .zip(&packages)
        .map(|(s, package)| s.die.as_ref().unwrap_or(package))
        .collect();
    let clusters: Vec<&CpuSet> = sets
        .iter()
        .map(|s| s.cluster.as_ref().unwrap_or(&s.core))
        .collect();
    let dies_add_structure = dies
        .iter()
        .zip(&packages)
        .any(|(die, package)| die != package);
    let clusters_add_structure = sets
        .iter()
        .zip(clusters.iter().zip(&dies))
        .any(|(s, (cluster, die))| **cluster != s.core && cluster != die);

    let core_numbers = number_by_lowest_cpu(&sets.iter().map(|s| &s.core).collect::<Vec<_>>());
    let package_numbers = number_by_lowest_cpu(&packages);
    let die_numbers = dies_add_structure.then(|| number_by_lowest_cpu(&dies));
    let cluster_numbers = clusters_add_structure.then(|| number_by_lowest_cpu(&clusters));
    sets.iter()
        .enumerate()
        .map(|(i, s)| CpuEntry {
            die: die_numbers.as_ref().map(|numbers| numbers[i]),
            cluster: cluster_numbers.as_ref().map(|numbers| numbers[i]),
            // Uniform until label_classes knows the classes.
            ..CpuEntry::on_core(s.cpu, core_numbers[i], package_numbers[i], s.core.clone())
        })
        .collect()
}

/// Numbers each set 0.. in order of its lowest CPU; equal sets share a
/// number. Sorting positions (not hashing sets) keeps this O(n log n).
fn number_by_lowest_cpu(sets: &[&CpuSet]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sets.len()).collect();
    order.sort_by(|&a, &b| sets[a].cmp(sets[b]));
    let mut numbers = vec![0; sets.len()];
    let mut next = 0;
    for (rank, pair) in order.iter().enumerate() {
        if rank > 0 && sets[*pair] != sets[order[rank - 1]] {
            next += 1;
        }
        numbers[*pair] = next;
    }
    numbers
}

/// Sets each entry's `class` (`cpus` is sorted by CPU; the classes cover it).
fn label_classes(cpus: &mut [CpuEntry], classes: &[CoreClass]) {
    for class in classes {
        for cpu in class.cpus.iter() {
            if let Ok(at) = cpus.binary_search_by_key(&cpu, |entry| entry.cpu) {
                cpus[at].class.clone_from(&class.name);
            }
        }
    }
}

fn fill_apic_ids(cpus: &mut [CpuEntry], report: &CpuidReport) {
    for read in &report.per_cpu {
        if let Ok(at) = cpus.binary_search_by_key(&read.cpu, |entry| entry.cpu) {
            cpus[at].apic_id = Some(read.apic_id);
        }
    }
}

fn summarize(
    cpus: &[CpuEntry],
    classes: &[CoreClass],
    allowed: usize,
    (report, environment): (Option<&CpuidReport>, &Environment),
    structure_from: &str,
    structure_unknown: Option<String>,
) -> Summary {
    // Where which CPUs share a core is unknown, what rests on the cores
    // says so: never a "no SMT" made of missing files.
    let known = structure_unknown.is_none();
    let threads_by_core: BTreeMap<usize, usize> = cpus
        .iter()
        .map(|entry| (entry.core, entry.siblings.len()))
        .collect();
    let packages: BTreeSet<usize> = cpus.iter().map(|entry| entry.package).collect();
    Summary {
        cpus: cpus.len(),
        allowed,
        packages: packages.len(),
        cores: threads_by_core.len(),
        threads_per_core: if known {
            describe_threads_per_core(threads_by_core.values().copied())
        } else {
            "unknown".into()
        },
        core_classes: classes.len(),
        smt: known.then(|| threads_by_core.values().any(|&threads| threads > 1)),
        hypervisor: report.and_then(|report| {
            report
                .hypervisor_signature
                .clone()
                .or_else(|| report.hypervisor_bit.then(|| "unknown".to_owned()))
        }),
        hypervisor_vendor: hypervisor_vendor(report, environment),
        structure_from: structure_from.to_owned(),
        structure_unknown,
    }
}

/// The hypervisor CPUID and the files agree on (see [`hypervisor::identity`]).
fn hypervisor_vendor(report: Option<&CpuidReport>, environment: &Environment) -> Option<String> {
    hypervisor::identity(
        report.map(|report| report.hypervisor_bit),
        report.and_then(|report| report.hypervisor_name.as_deref()),
        &environment.hypervisor_sources,
    )
    .vendor
}

#[cfg(test)]
pub fn fixture(name: &str) -> Topology {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/sysfs")
        .join(name);
    probe(Some(root.as_path()), None).unwrap_or_else(|e| panic!("probing {name}: {e:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_displays_as_recorded() {
        assert_eq!(CpuidSource::Live.to_string(), "live");
        assert_eq!(CpuidSource::Dump("/tmp/d".into()).to_string(), "/tmp/d");
    }

    #[test]
    fn sets_are_numbered_by_lowest_cpu() {
        let a = CpuSet::from_cpus([4, 5]);
        let b = CpuSet::from_cpus([0, 8]);
        let c = CpuSet::from_cpus([1]);
        assert_eq!(
            number_by_lowest_cpu(&[&a, &b, &a, &c, &b]),
            vec![2, 0, 2, 1, 0]
        );
        assert!(number_by_lowest_cpu(&[]).is_empty());
    }

    #[test]
    fn threads_per_core_reads_like_the_manifests() {
        assert_eq!(describe_threads_per_core([2, 2].into_iter()), "2");
        assert_eq!(
            describe_threads_per_core([1, 2, 2, 1, 1].into_iter()),
            "mixed(2x2,3x1)"
        );
    }
}
