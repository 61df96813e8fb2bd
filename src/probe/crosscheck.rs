//! CPUID against sysfs: does the kernel's sibling map match the APIC ids?
//!
//! Both usually derive from the same CPUID, so they agree on bare metal. A
//! guest kernel may be handed (or invent) a sibling map the vCPUs' APIC ids
//! do not support, and then "two threads of one core" means nothing physical:
//! this is where that shows.

use crate::cpuset::CpuSet;
use crate::probe::classes::classes_from_cpuid;
use crate::probe::model::{CoreKind, CpuEntry, CpuidCpu, CpuidReport, Crosscheck};
use std::collections::BTreeMap;

/// The machine as CPUID alone describes it, one entry per CPU read: cores
/// are CPUs with the same APIC id above the SMT bits, packages those with the
/// same id above the package bits, both numbered in order of their lowest CPU.
/// Classes come from [`classes_from_cpuid`], else every CPU is "uniform".
pub fn entries_from_cpuid(report: &CpuidReport) -> Vec<CpuEntry> {
    let mut per_cpu: Vec<&CpuidCpu> = report.per_cpu.iter().collect();
    per_cpu.sort_by_key(|cpu| cpu.cpu);

    let core_index = index_by_first_appearance(per_cpu.iter().map(|cpu| cpu.core_id));
    let package_index = index_by_first_appearance(per_cpu.iter().map(|cpu| cpu.package_id));
    let mut siblings: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for cpu in &per_cpu {
        siblings.entry(cpu.core_id).or_default().push(cpu.cpu);
    }
    let classes = classes_from_cpuid(report).unwrap_or_default();
    let class_of = |cpu: u32| {
        classes
            .iter()
            .find(|class| class.cpus.contains(cpu))
            .map_or(CoreKind::Uniform, |class| class.name)
    };

    per_cpu
        .iter()
        .map(|cpu| CpuEntry {
            cpu: cpu.cpu,
            core: core_index[&cpu.core_id],
            package: package_index[&cpu.package_id],
            die: None,
            cluster: None,
            siblings: CpuSet::from_cpus(siblings[&cpu.core_id].iter().copied()),
            class: class_of(cpu.cpu),
            allowed: true,
            apic_id: Some(cpu.apic_id),
        })
        .collect()
}

/// Numbers distinct ids 0, 1, ... in the order they first appear.
fn index_by_first_appearance(ids: impl Iterator<Item = u32>) -> BTreeMap<u32, usize> {
    let mut index = BTreeMap::new();
    for id in ids {
        let next = index.len();
        index.entry(id).or_insert(next);
    }
    index
}

/// Compares the kernel's CPUs and cores (`cpus`, from sysfs) with CPUID's.
///
/// One line per disagreement: each CPU only one side knows, and each pair of
/// CPUs that one side puts on one core and the other does not, with their
/// APIC ids.
pub fn crosscheck(cpus: &[CpuEntry], report: &CpuidReport) -> Crosscheck {
    let by_cpu: BTreeMap<u32, &CpuidCpu> =
        report.per_cpu.iter().map(|cpu| (cpu.cpu, cpu)).collect();
    let mut mismatches = Vec::new();

    for entry in cpus.iter().filter(|entry| !by_cpu.contains_key(&entry.cpu)) {
        mismatches.push(format!(
            "CPU {}: in sysfs, but CPUID was not read on it",
            entry.cpu
        ));
    }
    for cpu in by_cpu
        .keys()
        .filter(|cpu| !cpus.iter().any(|entry| entry.cpu == **cpu))
    {
        mismatches.push(format!(
            "CPU {cpu}: CPUID was read on it, but sysfs does not list it online"
        ));
    }

    let mut both: Vec<(&CpuEntry, &CpuidCpu)> = cpus
        .iter()
        .filter_map(|entry| Some((entry, *by_cpu.get(&entry.cpu)?)))
        .collect();
    both.sort_by_key(|(entry, _)| entry.cpu);
    for (i, (sysfs_a, cpuid_a)) in both.iter().enumerate() {
        for (sysfs_b, cpuid_b) in &both[i + 1..] {
            let sysfs_shared =
                sysfs_a.siblings.contains(sysfs_b.cpu) || sysfs_b.siblings.contains(sysfs_a.cpu);
            let cpuid_shared = cpuid_a.core_id == cpuid_b.core_id;
            if sysfs_shared != cpuid_shared {
                let (sysfs_says, cpuid_says) = if sysfs_shared {
                    ("one core", "different cores")
                } else {
                    ("different cores", "one core")
                };
                mismatches.push(format!(
                    "CPUs {} and {}: sysfs says {sysfs_says}, CPUID says {cpuid_says} (APIC ids {:#x}, {:#x})",
                    sysfs_a.cpu, sysfs_b.cpu, cpuid_a.apic_id, cpuid_b.apic_id
                ));
            }
        }
    }

    Crosscheck {
        agrees: mismatches.is_empty(),
        mismatches,
    }
}
