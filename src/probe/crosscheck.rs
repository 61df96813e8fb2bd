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

/// Compares the kernel's CPUs and cores (`cpus`, from sysfs) with CPUID's,
/// on the CPUs CPUID could be read on (`readable`: live CPUID is read by
/// running on each CPU, so only those in the process's affinity).
///
/// One line per disagreement: each readable CPU only one side knows, and
/// each pair of CPUs that one side puts on one core and the other does not,
/// with their APIC ids. The online CPUs outside `readable` are left out of
/// the comparison, and `not_compared` says which and why: a CPU nobody
/// could read is no evidence of disagreement.
pub fn crosscheck(cpus: &[CpuEntry], report: &CpuidReport, readable: &CpuSet) -> Crosscheck {
    let by_cpu: BTreeMap<u32, &CpuidCpu> =
        report.per_cpu.iter().map(|cpu| (cpu.cpu, cpu)).collect();
    let mut mismatches = Vec::new();

    let (compared, unreadable): (Vec<&CpuEntry>, Vec<&CpuEntry>) =
        cpus.iter().partition(|entry| readable.contains(entry.cpu));
    for entry in compared
        .iter()
        .filter(|entry| !by_cpu.contains_key(&entry.cpu))
    {
        mismatches.push(format!(
            "CPU {}: in sysfs, but CPUID was not read on it",
            entry.cpu
        ));
    }
    let in_sysfs: BTreeMap<u32, &CpuEntry> = cpus.iter().map(|entry| (entry.cpu, entry)).collect();
    for cpu in by_cpu.keys().filter(|cpu| !in_sysfs.contains_key(cpu)) {
        mismatches.push(format!(
            "CPU {cpu}: CPUID was read on it, but sysfs does not list it online"
        ));
    }

    // Pairs either side puts on one core: a CPU's sysfs siblings and the
    // CPUs of its CPUID core, each looked up, not every pair of CPUs tried.
    let both: BTreeMap<u32, (&CpuEntry, &CpuidCpu)> = compared
        .iter()
        .filter_map(|entry| Some((entry.cpu, (*entry, *by_cpu.get(&entry.cpu)?))))
        .collect();
    let mut by_cpuid_core: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (&cpu, (_, cpuid)) in &both {
        by_cpuid_core.entry(cpuid.core_id).or_default().push(cpu);
    }
    for (&a, (sysfs_a, cpuid_a)) in &both {
        let mut partners: Vec<u32> = sysfs_a
            .siblings
            .iter()
            .chain(by_cpuid_core[&cpuid_a.core_id].iter().copied())
            .filter(|&b| b > a && both.contains_key(&b))
            .collect();
        partners.sort_unstable();
        partners.dedup();
        for b in partners {
            let (sysfs_b, cpuid_b) = both[&b];
            let sysfs_shared = sysfs_a.siblings.contains(b) || sysfs_b.siblings.contains(a);
            let cpuid_shared = cpuid_a.core_id == cpuid_b.core_id;
            if sysfs_shared != cpuid_shared {
                let (sysfs_says, cpuid_says) = if sysfs_shared {
                    ("one core", "different cores")
                } else {
                    ("different cores", "one core")
                };
                mismatches.push(format!(
                    "CPUs {a} and {b}: sysfs says {sysfs_says}, CPUID says {cpuid_says} (APIC ids {:#x}, {:#x})",
                    cpuid_a.apic_id, cpuid_b.apic_id
                ));
            }
        }
    }

    let not_compared = (!unreadable.is_empty()).then(|| {
        let cpus = CpuSet::from_cpus(unreadable.iter().map(|entry| entry.cpu));
        let (cpu_word, pronoun) = if cpus.len() == 1 {
            ("CPU", "it")
        } else {
            ("CPUs", "them")
        };
        format!(
            "{cpu_word} {cpus} not compared: CPUID is read by running on each CPU, and this process's CPU affinity leaves {pronoun} out"
        )
    });
    Crosscheck {
        agrees: mismatches.is_empty(),
        mismatches,
        not_compared,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four CPUs on two cores (0+2, 1+3), as sysfs and CPUID both say.
    fn machine() -> (Vec<CpuEntry>, CpuidReport) {
        let entries = (0..4)
            .map(|cpu| {
                CpuEntry::on_core(
                    cpu,
                    (cpu % 2) as usize,
                    0,
                    CpuSet::from_cpus([cpu % 2, cpu % 2 + 2]),
                )
            })
            .collect();
        let per_cpu = (0..4)
            .map(|cpu| {
                let apic_id = (cpu % 2) * 2 + cpu / 2;
                CpuidCpu {
                    cpu,
                    apic_id,
                    package_id: 0,
                    core_id: apic_id >> 1,
                    smt_id: apic_id & 1,
                    core_type: None,
                    core_type_raw: None,
                }
            })
            .collect();
        let report = CpuidReport {
            vendor: "GenuineIntel".into(),
            family: 6,
            model: 0x8c,
            stepping: 1,
            brand: None,
            hypervisor_bit: false,
            hypervisor_signature: None,
            hypervisor_name: None,
            hybrid_bit: false,
            topology_leaf: "0xb".into(),
            smt_shift: 1,
            core_shift: 1,
            tsc_hz: None,
            tsc_hz_source: None,
            crystal_hz: None,
            packages: 1,
            cores: 2,
            threads_per_core: "2".into(),
            per_cpu,
        };
        (entries, report)
    }

    #[test]
    fn every_cpu_read_and_agreeing() {
        let (entries, report) = machine();
        let cross = crosscheck(&entries, &report, &CpuSet::from_cpus(0..4));
        assert_eq!(cross.mismatches, Vec::<String>::new());
        assert!(cross.agrees);
        assert_eq!(cross.not_compared, None);
    }

    /// As under `taskset -c 1`: CPUID was read on CPU 1 only.
    #[test]
    fn cpus_outside_the_affinity_are_left_out_not_counted_against() {
        let (entries, mut report) = machine();
        report.per_cpu.retain(|cpu| cpu.cpu == 1);
        let cross = crosscheck(&entries, &report, &CpuSet::from_cpus([1]));
        assert_eq!(cross.mismatches, Vec::<String>::new());
        assert!(cross.agrees);
        assert_eq!(
            cross.not_compared.as_deref(),
            Some(
                "CPUs 0,2-3 not compared: CPUID is read by running on each CPU, and this process's CPU affinity leaves them out"
            )
        );
    }

    #[test]
    fn a_readable_cpu_without_cpuid_and_a_split_core_still_disagree() {
        let (entries, mut report) = machine();
        report.per_cpu.retain(|cpu| cpu.cpu != 3);
        // CPUID puts CPU 2 on a core of its own.
        report.per_cpu[2].core_id = 7;
        let cross = crosscheck(&entries, &report, &CpuSet::from_cpus(0..4));
        assert!(!cross.agrees);
        assert_eq!(
            cross.mismatches,
            vec![
                "CPU 3: in sysfs, but CPUID was not read on it".to_owned(),
                "CPUs 0 and 2: sysfs says one core, CPUID says different cores (APIC ids 0x0, 0x1)"
                    .to_owned(),
            ]
        );
    }
}
