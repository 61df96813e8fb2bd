//! CPUID: what each logical CPU says about itself.
//!
//! A [`CpuidSource`] yields one recording per CPU, in hwloc-gather-cpuid's
//! `puN` format whether it came from the live machine (`live`: the real
//! instruction on a thread pinned to each CPU) or from a dump folder
//! (`dump`). `leaves` decodes each recording; this module puts the CPUs
//! together into a [`CpuidReport`]: the machine's identity, and packages,
//! cores and threads from the APIC ids alone, independent of what the kernel
//! says.

mod dump;
mod leaves;
mod live;
mod record;

use crate::cpuset::CpuSet;
use crate::probe::model::{CoreKind, CpuidCpu, CpuidReport};
use crate::probe::model::{CpuidSource, describe_threads_per_core};
use crate::probe::recording::CPUID_DIR;
use crate::probe::recording::{RecordedBytes, Recording};
use crate::probe::sysfs::SysfsRoot;
use anyhow::{Result, bail};
use dump::{CpuidRecord, RecordReader};
pub use dump::{DumpFile, PU_FILE_LIMIT};
use leaves::{CoreType, CpuFacts, decode_cpu, hypervisor_name};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Reads and decodes CPUID for every CPU the source has.
///
/// `Live` visits the CPUs of `cpus` this process may run on (others are
/// skipped); a CPU that refuses the pin is an error naming it. `Dump` ignores
/// `cpus` and reads every `puN` file. A dump folder that is missing or holds
/// no `puN` file, a garbled line, or a file without leaves 0x0 and 0x1 is a
/// one-line error naming the path.
/// `Recorded` is read through the document's root: see [`read_report_in`].
pub fn read_report(source: &CpuidSource, cpus: &CpuSet) -> Result<CpuidReport> {
    read_report_in(source, cpus, None)
}

/// Like [`read_report`], with `root`, the [`SysfsRoot`] of a snapshot
/// document, to read the dump it holds (`Recorded`).
pub fn read_report_in(
    source: &CpuidSource,
    cpus: &CpuSet,
    root: Option<&SysfsRoot>,
) -> Result<CpuidReport> {
    match (source, root) {
        (CpuidSource::Live, _) => report_from_records(&live::record_cpus(cpus)?),
        (CpuidSource::Dump(dir), _) => report_from_dump_files(&dump::read_dump_dir(dir)?),
        (CpuidSource::Recorded(_), Some(root)) => {
            report_from_dump_files(&dump::recorded_dump(root)?)
        }
        (CpuidSource::Recorded(document), None) => bail!(
            "{}: a snapshot document's CPUID dump is read with the document as --sysfs-root",
            document.display()
        ),
    }
}

/// Records this host's CPUID on each CPU of `cpus` it may run on into a
/// snapshot document's `recording`, as the `puN` files of the dump folder
/// [`write_dump`] writes (a listing and the files).
pub fn record_dump(recording: &mut Recording, cpus: &CpuSet) -> Result<()> {
    let records = live::record_cpus(cpus)?;
    let mut names = Vec::with_capacity(records.len());
    for (cpu, record) in &records {
        let name = format!("pu{cpu}");
        let bytes = RecordedBytes(record.render().into_bytes());
        recording.files.insert(format!("{CPUID_DIR}/{name}"), bytes);
        names.push(name);
    }
    names.sort_unstable();
    recording.listings.insert(CPUID_DIR.to_owned(), names);
    Ok(())
}

/// Parses and decodes the `puN` files of a dump, as [`read_report`] does
/// with a dump folder's: a garbled line, or a file without leaves 0x0 and
/// 0x1, is a one-line error naming the file (and line); no file at all is an
/// error too.
pub fn report_from_dump_files(files: &[DumpFile]) -> Result<CpuidReport> {
    let records = files
        .iter()
        .map(|file| Ok((file.cpu, CpuidRecord::parse(&file.text, &file.path)?)))
        .collect::<Result<Vec<_>>>()?;
    report_from_records(&records)
}

/// Records this host's CPUID on each CPU of `cpus` it may run on, into `dir`
/// in the `puN` format [`read_report`] (and hwloc) read back: reading it
/// gives the same report as the live run.
pub fn write_dump(dir: &Path, cpus: &CpuSet) -> Result<()> {
    let records = live::record_cpus(cpus)?;
    dump::write_dump_dir(dir, &records)
}

fn report_from_records(records: &[(u32, CpuidRecord)]) -> Result<CpuidReport> {
    let facts: Vec<(u32, CpuFacts)> = records
        .iter()
        .map(|(cpu, record)| (*cpu, decode_cpu(RecordReader(record))))
        .collect();
    let Some((_, first)) = facts.first() else {
        bail!("no CPU was read, so there is no CPUID to report");
    };
    let deepest_cache_level = facts
        .iter()
        .filter_map(|(_, f)| f.deepest_cache_level)
        .max();
    let per_cpu: Vec<CpuidCpu> = facts
        .iter()
        .map(|(cpu, facts)| cpu_entry(*cpu, facts, deepest_cache_level))
        .collect();

    let packages: BTreeSet<u32> = per_cpu.iter().map(|c| c.package_id).collect();
    let mut threads_by_core: BTreeMap<u32, usize> = BTreeMap::new();
    for cpu in &per_cpu {
        *threads_by_core.entry(cpu.core_id).or_default() += 1;
    }

    // Machine-wide facts are the lowest CPU's, as hwloc takes them from PU 0.
    Ok(CpuidReport {
        vendor: first.vendor_id.clone(),
        family: first.family,
        model: first.model,
        stepping: first.stepping,
        brand: first.brand.clone(),
        hypervisor_bit: first.hypervisor_bit,
        hypervisor_name: first
            .hypervisor_signature
            .as_deref()
            .map(|s| hypervisor_name(s).to_string()),
        hypervisor_signature: first.hypervisor_signature.clone(),
        hybrid_bit: first.hybrid_bit,
        topology_leaf: first.layout.leaf.to_string(),
        smt_shift: first.layout.smt_shift,
        core_shift: first.layout.package_shift,
        tsc_hz: first.tsc.as_ref().map(|t| t.hz),
        tsc_hz_source: first.tsc.as_ref().map(|t| t.source.to_string()),
        crystal_hz: first.tsc.as_ref().and_then(|t| t.crystal_hz),
        packages: packages.len(),
        cores: threads_by_core.len(),
        threads_per_core: describe_threads_per_core(threads_by_core.values().copied()),
        per_cpu,
    })
}

fn cpu_entry(cpu: u32, facts: &CpuFacts, deepest_cache_level: Option<u32>) -> CpuidCpu {
    let layout = facts.layout;
    CpuidCpu {
        cpu,
        apic_id: layout.apic_id,
        package_id: layout
            .apic_id
            .checked_shr(layout.package_shift)
            .unwrap_or(0),
        core_id: layout.apic_id.checked_shr(layout.smt_shift).unwrap_or(0),
        smt_id: layout.apic_id & low_bits(layout.smt_shift),
        core_type: facts
            .core_type
            .and_then(|core_type| core_type_name(core_type, facts, deepest_cache_level)),
        core_type_raw: facts.core_type.map(|core_type| match core_type {
            CoreType::Intel(raw) | CoreType::Amd(raw) => raw,
        }),
    }
}

fn low_bits(count: u32) -> u32 {
    1u32.checked_shl(count).map_or(u32::MAX, |bit| bit - 1)
}

/// Names a core type.
///
/// Intel gives low-power E-cores (Meteor Lake's SoC tile and its successors)
/// the same type as E-cores, 0x20 Atom; no CPUID bit tells them apart. Like
/// hwloc, a family-6 Atom core whose leaf 4 lists no cache as deep as other
/// cores' (it has no L3) is taken as low-power.
fn core_type_name(
    core_type: CoreType,
    facts: &CpuFacts,
    deepest_cache_level: Option<u32>,
) -> Option<CoreKind> {
    match core_type {
        CoreType::Intel(0x40) => Some(CoreKind::Performance),
        CoreType::Intel(0x20) => {
            let lacks_last_level_cache =
                facts.family == 6 && facts.deepest_cache_level < deepest_cache_level;
            Some(if lacks_last_level_cache {
                CoreKind::LowPowerEfficiency
            } else {
                CoreKind::Efficiency
            })
        }
        CoreType::Amd(0) => Some(CoreKind::Performance),
        CoreType::Amd(1) => Some(CoreKind::Efficiency),
        CoreType::Amd(2) => Some(CoreKind::LowPowerEfficiency),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn low_bits_saturate() {
        assert_eq!(low_bits(0), 0);
        assert_eq!(low_bits(3), 7);
        assert_eq!(low_bits(32), u32::MAX);
    }
}
