//! Which CPUID queries make up a recording of one CPU.
//!
//! The same walk records the live CPU (for `topology` and for `snapshot`), so
//! reading a snapshot's dump back decodes exactly what the live run decoded.
//! It covers the standard ranges, not only the leaves the decoder uses, so a
//! dump is useful to hwloc and to whoever reads it later.

use super::dump::CpuidRecord;
use super::leaves::{EXTENDED_BASE, HYPERVISOR_BASE};
use raw_cpuid::{CpuIdReader, CpuIdResult};

/// Guards against a garbage maximum leaf (a broken hypervisor, a bad dump).
const MAX_LEAVES_PER_RANGE: u32 = 0x100;
/// Guards subleaf walks whose end marker never comes.
const MAX_SUBLEAVES: u32 = 64;

/// How a leaf's subleaves are enumerated.
enum Subleaves {
    /// The leaf ignores ECX.
    None,
    /// Subleaves 0, 1, ... up to and including the first whose
    /// `end(result)` is true (recorded too: hwloc's loops read it).
    UntilEnd(fn(&CpuIdResult) -> bool),
    /// Subleaves 0..=EAX of subleaf 0 (leaf 7).
    CountInEax,
    /// Subleaves 0, 1, and each state component set in subleaf 0's
    /// EDX:EAX bitmap (leaf 0xD).
    XsaveComponents,
    /// Takes a subleaf, but its enumeration is leaf-specific and unused
    /// here: subleaf 0 only.
    FirstOnly,
}

fn cache_type_is_null(result: &CpuIdResult) -> bool {
    result.eax & 0x1f == 0
}

fn topology_level_is_invalid(result: &CpuIdResult) -> bool {
    (result.ecx >> 8) & 0xff == 0 || result.ebx & 0xffff == 0
}

fn subleaves_of(leaf: u32) -> Subleaves {
    match leaf {
        0x4 | 0x8000_001d => Subleaves::UntilEnd(cache_type_is_null),
        0xb | 0x1f | 0x8000_0026 => Subleaves::UntilEnd(topology_level_is_invalid),
        0x7 => Subleaves::CountInEax,
        0xd => Subleaves::XsaveComponents,
        0xf | 0x10 | 0x12 | 0x14 | 0x17 | 0x18 | 0x1b | 0x1d | 0x1e | 0x20 | 0x23 | 0x24
        | 0x8000_0020 => Subleaves::FirstOnly,
        _ => Subleaves::None,
    }
}

/// Records every leaf of the basic, hypervisor (when CPUID.1:ECX[31] says one
/// is present) and extended ranges, with their subleaves, as `reader` answers.
pub fn record_cpu(reader: &impl CpuIdReader) -> CpuidRecord {
    let mut record = CpuidRecord::default();
    let max_basic = reader.cpuid2(0, 0).eax;
    record_range(reader, &mut record, 0, max_basic);

    let hypervisor_present = reader.cpuid2(1, 0).ecx & (1 << 31) != 0;
    if hypervisor_present {
        let max_hypervisor = reader.cpuid2(HYPERVISOR_BASE, 0).eax;
        record_range(reader, &mut record, HYPERVISOR_BASE, max_hypervisor);
    }

    let max_extended = reader.cpuid2(EXTENDED_BASE, 0).eax;
    record_range(reader, &mut record, EXTENDED_BASE, max_extended);
    record
}

/// Records `base..=max`; a `max` outside the range records `base` alone.
fn record_range(reader: &impl CpuIdReader, record: &mut CpuidRecord, base: u32, max: u32) {
    let last = if (base..base + MAX_LEAVES_PER_RANGE).contains(&max) {
        max
    } else {
        base
    };
    for leaf in base..=last {
        record_leaf(reader, record, leaf);
    }
}

fn record_leaf(reader: &impl CpuIdReader, record: &mut CpuidRecord, leaf: u32) {
    let mut record_subleaf = |subleaf: u32| {
        let result = reader.cpuid2(leaf, subleaf);
        record.push(leaf, Some(subleaf), result);
        result
    };
    match subleaves_of(leaf) {
        Subleaves::None => {
            let result = reader.cpuid2(leaf, 0);
            record.push(leaf, None, result);
        }
        Subleaves::UntilEnd(end) => {
            for subleaf in 0..MAX_SUBLEAVES {
                if end(&record_subleaf(subleaf)) {
                    break;
                }
            }
        }
        Subleaves::CountInEax => {
            let count = record_subleaf(0).eax.min(MAX_SUBLEAVES);
            for subleaf in 1..=count {
                record_subleaf(subleaf);
            }
        }
        Subleaves::XsaveComponents => {
            let first = record_subleaf(0);
            let components = u64::from(first.edx) << 32 | u64::from(first.eax);
            record_subleaf(1);
            for subleaf in (2..MAX_SUBLEAVES).filter(|bit| components & (1 << bit) != 0) {
                record_subleaf(subleaf);
            }
        }
        Subleaves::FirstOnly => {
            record_subleaf(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::cpuid::dump::RecordReader;
    use std::path::Path;

    #[test]
    fn recording_a_recording_reproduces_it() {
        let text = "\
1 0 0 0 0 => b 756e6547 6c65746e 49656e69
1 1 0 0 0 => 806c1 800 80000000 bfebfbff
5 4 0 0 0 => 1c004121 2c0003f 3f 0
5 4 0 1 0 => 0 0 0 0
5 b 0 0 0 => 1 2 100 0
5 b 0 1 0 => 4 8 201 0
5 b 0 2 0 => 0 0 2 0
1 40000000 0 0 0 => 40000001 4b4d564b 564b4d56 4d
1 80000000 0 0 0 => 80000001 0 0 0
";
        let original = CpuidRecord::parse(text, Path::new("pu0")).unwrap();
        let again = record_cpu(&RecordReader(&original));
        for (leaf, subleaf) in [
            (0, 0),
            (1, 0),
            (4, 0),
            (4, 1),
            (0xb, 1),
            (0xb, 2),
            (0x4000_0000, 0),
        ] {
            assert_eq!(
                again.lookup(leaf, subleaf),
                original.lookup(leaf, subleaf),
                "{leaf:#x}.{subleaf}"
            );
        }
        // The walk stops after the terminating subleaf.
        assert_eq!(again.lookup(0xb, 3), None);
    }
}
