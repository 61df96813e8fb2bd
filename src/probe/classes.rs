//! Core classes: which CPUs are performance cores, which efficiency cores.
//! A class is a microarchitecture, not a clock: cores of one design that
//! run at different speeds are one class.
//!
//! Sources, most direct first; the first one that classifies every online
//! CPU wins:
//!
//! 1. the hybrid PMUs the kernel registers, `/sys/devices/cpu_core/cpus`,
//!    `cpu_atom/cpus` and `cpu_lowpower/cpus` (Intel hybrid parts);
//! 2. CPUID's core type (leaf 0x1A on Intel, 0x80000026 on AMD), through
//!    [`classes_from_cpuid`];
//! 3. on Arm, the MIDR part numbers, as hwloc's cpukinds take them where
//!    `midr_el1` exists: one class per design, ranked by [`Tier`]
//!    (Cortex-X/Neoverse-V above Cortex-A7xx/Neoverse-N above
//!    Cortex-A5xx/A3x/Neoverse-E), then by `cpu_capacity` where the tiers
//!    tie. Clusters of one design at different capacities (CIX P1's two
//!    Cortex-A720 clusters) are one class, and one design is "uniform";
//! 4. what the kernel derived itself, `cpu_capacity` (Arm big.LITTLE without
//!    a per-CPU MIDR), and the cpufreq maximum and base frequencies
//!    (Lakefield before the hybrid PMUs existed), with Turbo Boost Max 3.0's
//!    favoured cores merged into their kind.
//!
//! Where `cpu_capacity` alone gives exactly the MIDR classes it names them,
//! and each class's detail names its cores' parts, e.g. "capacity 1024,
//! Cortex-X925". A machine with one kind of core has one class, "uniform".

use crate::cpuset::CpuSet;
use crate::probe::midr::{Midr, Tier, kind_midr};
use crate::probe::model::{
    ClassSource, CoreClass, CoreKind, CpuidCpu, CpuidReport, MidrKind, MidrReport,
};
use crate::probe::sysfs::{CPU_DIR, SetForm, SysfsRoot};
use anyhow::Result;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

/// The hybrid PMU folders and the class each one names.
const HYBRID_PMUS: [(&str, CoreKind); 3] = [
    ("cpu_core", CoreKind::Performance),
    ("cpu_atom", CoreKind::Efficiency),
    ("cpu_lowpower", CoreKind::LowPowerEfficiency),
];

/// Turbo Boost Max 3.0 gives a few "favoured" cores a higher
/// `cpuinfo_max_freq` than their identical neighbours (an i9-13900K's P
/// cores: 5.4 GHz, favoured ones up to 5.8 GHz, 7 % more); maximum
/// frequencies less than this (in percent) above the slowest of their kind
/// make no class of their own. hwloc's cpukinds adjust by the same 10 %.
const FAVOURED_CORE_SPREAD_PERCENT: u64 = 10;

/// The classes of the online CPUs, performance first; together they cover
/// every online CPU exactly once.
pub fn core_classes(
    root: Option<&SysfsRoot>,
    online: &CpuSet,
    report: Option<&CpuidReport>,
    midr: Option<&MidrReport>,
) -> Result<Vec<CoreClass>> {
    if let Some(root) = root {
        if let Some(classes) = covering(from_hybrid_pmus(root, online)?, online) {
            return Ok(one_kind_is_uniform(classes, online));
        }
    }
    let from_cpuid = report
        .and_then(classes_from_cpuid)
        .map(|classes| restricted(classes, online));
    if let Some(classes) = covering(from_cpuid, online) {
        return Ok(one_kind_is_uniform(classes, online));
    }
    let Some(root) = root else {
        return Ok(vec![uniform(online)]);
    };
    let speeds = read_speeds(root, online)?;
    let mut classes = from_capacity_and_frequency(&speeds);
    if let Some(midr) = midr {
        if let Some(parts) = covering(from_midr_parts(midr, &speeds), online) {
            // Capacity classes that are the parts stay as they were named.
            let by_capacity = classes
                .first()
                .is_some_and(|class| class.source == ClassSource::CpuCapacity);
            if !(by_capacity && same_sets(&parts, &classes)) {
                return Ok(parts);
            }
        } else if one_design(midr, online) {
            return Ok(vec![uniform(online)]);
        }
        name_parts(&mut classes, midr);
    }
    Ok(one_kind_is_uniform(classes, online))
}

/// Do both lists hold the same CPU sets?
fn same_sets(a: &[CoreClass], b: &[CoreClass]) -> bool {
    let sets = |classes: &[CoreClass]| -> BTreeSet<CpuSet> {
        classes.iter().map(|class| class.cpus.clone()).collect()
    };
    sets(a) == sets(b)
}

/// Does every online CPU's own register (`midr_el1`) name one design?
/// Then capacities or frequencies that differ are clusters clocked apart,
/// not kinds of core: hwloc finds no cpukinds from a single MIDR either.
/// cpuinfo's fields do not count here: old kernels print them once, the
/// boot CPU's, for every CPU.
fn one_design(midr: &MidrReport, online: &CpuSet) -> bool {
    let design = |kind: &MidrKind| (kind.implementer, kind.part);
    let cpus = CpuSet::from_cpus(midr.kinds.iter().flat_map(|kind| kind.cpus.iter()));
    midr.source == "midr_el1"
        && midr
            .kinds
            .windows(2)
            .all(|pair| design(&pair[0]) == design(&pair[1]))
        && cpus == *online
}

/// Classes from the MIDR part numbers, when the CPUs are of more than one
/// design: one class per part, whatever capacities or clocks its CPUs have,
/// named by rank ("performance", "efficiency", ...), each detail naming the
/// part and what cpufreq and `cpu_capacity` say of its CPUs.
///
/// Parts rank by [`Tier`], then, where tiers tie (or any part has none), by
/// their slowest CPU's `cpu_capacity` (the kernel's estimate of the core's
/// speed, and what hwloc ranks MIDR kinds by); never by frequency alone,
/// which says nothing across designs. When that does not rank every part
/// apart, nothing says which design is faster: the classes are "class 0",
/// "class 1", ... in (tier, implementer, part) order, and each detail says
/// the speed rank is unknown. A guess would call Jetson TX2's Denver 2
/// cores "efficiency" next to its Cortex-A57s.
fn from_midr_parts(midr: &MidrReport, speeds: &[(u32, Speed)]) -> Option<Vec<CoreClass>> {
    let mut parts: BTreeMap<(Tier, u32, u32), (Midr, Vec<u32>)> = BTreeMap::new();
    for kind in &midr.kinds {
        let fields = kind_midr(kind);
        let key = (fields.tier(), fields.implementer, fields.part);
        let (_, cpus) = parts.entry(key).or_insert((fields, Vec::new()));
        cpus.extend(kind.cpus.iter());
    }
    if parts.len() < 2 {
        return None;
    }
    let tiered = parts.keys().all(|(tier, _, _)| *tier != Tier::Unranked);
    let mut parts: Vec<_> = parts
        .into_values()
        .map(|(fields, cpus)| {
            let cpus = CpuSet::from_cpus(cpus);
            let members: Vec<Speed> = speeds
                .iter()
                .filter(|(cpu, _)| cpus.contains(*cpu))
                .map(|(_, speed)| *speed)
                .collect();
            let capacity = members.iter().filter_map(|speed| speed.capacity).min();
            let rank = (tiered.then(|| fields.tier()), Reverse(capacity));
            (rank, fields, cpus, members)
        })
        .collect();
    let mut ranks: Vec<_> = parts.iter().map(|(rank, ..)| *rank).collect();
    ranks.sort();
    ranks.dedup();
    let ranked = ranks.len() == parts.len();
    if ranked {
        parts.sort_by_key(|(rank, ..)| *rank);
    }
    let classes = parts
        .into_iter()
        .enumerate()
        .map(|(position, (_, fields, cpus, members))| {
            let label = [Some(fields.part_label()), describe(&members)]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(", ");
            CoreClass {
                name: if ranked {
                    CoreKind::by_rank(position)
                } else {
                    CoreKind::Ranked(position)
                },
                cpus,
                source: ClassSource::Midr,
                detail: Some(if ranked {
                    label
                } else {
                    format!("{label}; speed rank unknown: listed by design tier, then part number")
                }),
            }
        })
        .collect();
    Some(classes)
}

/// Appends the parts of each class's CPUs to its detail: "capacity 1024,
/// Cortex-X925".
fn name_parts(classes: &mut [CoreClass], midr: &MidrReport) {
    for class in classes {
        let mut labels: Vec<String> = Vec::new();
        for kind in &midr.kinds {
            let label = kind_midr(kind).part_label();
            if !kind.cpus.intersection(&class.cpus).is_empty() && !labels.contains(&label) {
                labels.push(label);
            }
        }
        if labels.is_empty() {
            continue;
        }
        let parts = labels.join(" + ");
        class.detail = Some(match class.detail.take() {
            Some(detail) => format!("{detail}, {parts}"),
            None => parts,
        });
    }
}

/// Core classes from the per-CPU core types of a hybrid part: performance,
/// efficiency, low-power efficiency, in that order, plus "unknown" for CPUs
/// of the same part that report no type. `None` when no CPU reports a type
/// (not hybrid, or the leaf is absent).
pub fn classes_from_cpuid(report: &CpuidReport) -> Option<Vec<CoreClass>> {
    if report.per_cpu.iter().all(|cpu| cpu.core_type_raw.is_none()) {
        return None;
    }
    let source = if report.vendor == "AuthenticAMD" {
        ClassSource::CpuidLeaf80000026
    } else {
        ClassSource::CpuidLeaf1a
    };
    // CPUs of a hybrid part that report no (or an undocumented) core type
    // are "unknown".
    let order = [
        CoreKind::Performance,
        CoreKind::Efficiency,
        CoreKind::LowPowerEfficiency,
        CoreKind::Unknown,
    ];
    let classes = order
        .into_iter()
        .filter_map(|name| {
            let members: Vec<&CpuidCpu> = report
                .per_cpu
                .iter()
                .filter(|cpu| cpu.core_type.as_ref().unwrap_or(&CoreKind::Unknown) == &name)
                .collect();
            let first = members.first()?;
            let detail = match (first.core_type_raw, &name) {
                (Some(raw), CoreKind::LowPowerEfficiency) if source == ClassSource::CpuidLeaf1a => {
                    format!("core type {raw:#x}, no L3")
                }
                (Some(raw), _) => format!("core type {raw:#x}"),
                (None, _) => "no core type reported".to_string(),
            };
            Some(CoreClass {
                name,
                cpus: members.iter().map(|cpu| cpu.cpu).collect(),
                source,
                detail: Some(detail),
            })
        })
        .collect();
    Some(classes)
}

/// Classes from `cpu_core/cpus`, `cpu_atom/cpus`, `cpu_lowpower/cpus`.
fn from_hybrid_pmus(root: &SysfsRoot, online: &CpuSet) -> Result<Option<Vec<CoreClass>>> {
    // One listing instead of three failed opens on a machine that is not hybrid.
    root.list_dir("sys/devices")?;
    let mut classes = Vec::new();
    for (pmu, name) in HYBRID_PMUS {
        let list = format!("sys/devices/{pmu}/cpus");
        let Some(cpus) = root.read_cpuset(&[(&list, SetForm::List)])? else {
            continue;
        };
        let cpus = cpus.intersection(online);
        if !cpus.is_empty() {
            classes.push(CoreClass {
                name,
                cpus,
                source: ClassSource::SysfsPmu,
                detail: Some(pmu.to_owned()),
            });
        }
    }
    Ok(Some(classes).filter(|classes| !classes.is_empty()))
}

/// What the kernel knows per CPU that can tell core kinds apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Speed {
    capacity: Option<u64>,
    max_khz: Option<u64>,
    base_khz: Option<u64>,
}

/// Each online CPU's [`Speed`], in CPU order, with only the values every
/// CPU has.
fn read_speeds(root: &SysfsRoot, online: &CpuSet) -> Result<Vec<(u32, Speed)>> {
    let mut speeds: Vec<(u32, Speed)> = Vec::with_capacity(online.len());
    for cpu in online.iter() {
        // The first CPU shows which files this kernel writes: cpufreq and
        // cpu_capacity exist for every CPU or for none.
        let first = speeds.first().map(|(_, speed)| *speed);
        speeds.push((cpu, read_speed(root, cpu, first)?));
    }
    // A value some CPUs lack tells no kinds apart (2arm-2c has cpufreq
    // for CPU 0 alone): it counts only where every CPU has it.
    let all = |has: fn(&Speed) -> bool| speeds.iter().all(|(_, speed)| has(speed));
    let (capacity, max, base) = (
        all(|s| s.capacity.is_some()),
        all(|s| s.max_khz.is_some()),
        all(|s| s.base_khz.is_some()),
    );
    for (_, speed) in &mut speeds {
        *speed = Speed {
            capacity: speed.capacity.filter(|_| capacity),
            max_khz: speed.max_khz.filter(|_| max),
            base_khz: speed.base_khz.filter(|_| base),
        };
    }
    Ok(speeds)
}

/// Groups CPUs by `cpu_capacity`, `base_frequency` and `cpuinfo_max_freq`
/// (favoured cores merged, see [`kind_speeds`]), ranked fastest first.
fn from_capacity_and_frequency(speeds: &[(u32, Speed)]) -> Vec<CoreClass> {
    let mut groups: BTreeMap<Reverse<Speed>, Vec<(u32, Speed)>> = BTreeMap::new();
    for ((cpu, speed), kind) in speeds.iter().zip(kind_speeds(speeds)) {
        groups
            .entry(Reverse(kind))
            .or_default()
            .push((*cpu, *speed));
    }
    let first_capacity = speeds.first().and_then(|(_, speed)| speed.capacity);
    let capacities_differ = groups.keys().any(|s| s.0.capacity != first_capacity);
    let source = if capacities_differ {
        ClassSource::CpuCapacity
    } else {
        ClassSource::Cpufreq
    };
    groups
        .into_values()
        .enumerate()
        .map(|(rank, members)| CoreClass {
            name: CoreKind::by_rank(rank),
            cpus: members.iter().map(|(cpu, _)| *cpu).collect(),
            source,
            detail: describe(&members.iter().map(|(_, speed)| *speed).collect::<Vec<_>>()),
        })
        .collect()
}

/// Each CPU's speed as its kind of core has it: the maximum frequency
/// lowered to the slowest of its run, where a run is the maxima of CPUs
/// with the same capacity and base frequency that lie less than
/// [`FAVOURED_CORE_SPREAD_PERCENT`] above the run's slowest.
///
/// This is hwloc's `hwloc_linux_cpukinds_adjust_maxfreqs`: Turbo Boost Max
/// 3.0 raises a few cores' maximum, never their base frequency, so favoured
/// cores (5.5, 5.6, 5.8 GHz next to 5.4) join their kind while P and E
/// cores, whose base frequencies differ, stay apart however close their
/// maxima (Lakefield: 2.8 and 3.0 GHz). Where hwloc differs: it leaves a
/// base-frequency group whose maxima spread 10 % or more as it is, and
/// adjusts nothing where `base_frequency` is missing; runs merge favoured
/// cores there too (E 4.3 GHz, P 5.4-5.8 GHz, no base frequency: two runs,
/// where hwloc finds five kinds).
fn kind_speeds(speeds: &[(u32, Speed)]) -> Vec<Speed> {
    let mut maxima: BTreeMap<(Option<u64>, Option<u64>), BTreeSet<u64>> = BTreeMap::new();
    for (_, speed) in speeds {
        if let Some(max) = speed.max_khz {
            let group = (speed.capacity, speed.base_khz);
            maxima.entry(group).or_default().insert(max);
        }
    }
    // (capacity, base, maximum) → the slowest maximum of its run.
    let mut floors: BTreeMap<(Option<u64>, Option<u64>, u64), u64> = BTreeMap::new();
    for ((capacity, base), values) in maxima {
        let mut start = None;
        for max in values {
            let run = match start {
                Some(start) if max * 100 < start * (100 + FAVOURED_CORE_SPREAD_PERCENT) => start,
                _ => max,
            };
            start = Some(run);
            floors.insert((capacity, base, max), run);
        }
    }
    speeds
        .iter()
        .map(|(_, speed)| Speed {
            max_khz: speed
                .max_khz
                .map(|max| floors[&(speed.capacity, speed.base_khz, max)]),
            ..*speed
        })
        .collect()
}

/// One CPU's [`Speed`]; with `like`, only the values `like` has.
fn read_speed(root: &SysfsRoot, cpu: u32, like: Option<Speed>) -> Result<Speed> {
    let dir = format!("{CPU_DIR}/cpu{cpu}");
    if like.is_none() {
        // Later CPUs read only what this first one has.
        root.list_dir(&dir)?;
        root.list_dir(&format!("{dir}/cpufreq"))?;
    }
    let read = |wanted: bool, file: &str, what: &str| -> Result<Option<u64>> {
        if wanted {
            root.read_parsed(&format!("{dir}/{file}"), what)
        } else {
            Ok(None)
        }
    };
    Ok(Speed {
        capacity: read(
            like.is_none_or(|s| s.capacity.is_some()),
            "cpu_capacity",
            "a capacity number",
        )?,
        max_khz: read(
            like.is_none_or(|s| s.max_khz.is_some()),
            "cpufreq/cpuinfo_max_freq",
            "a frequency in kHz",
        )?,
        base_khz: read(
            like.is_none_or(|s| s.base_khz.is_some()),
            "cpufreq/base_frequency",
            "a frequency in kHz",
        )?,
    })
}

/// "capacity 1024, max 5400-5800 MHz, base 3000 MHz": each value the
/// CPUs have, as a range where they differ.
fn describe(speeds: &[Speed]) -> Option<String> {
    let range = |pick: fn(&Speed) -> Option<u64>, scale: u64| -> Option<String> {
        let values = speeds.iter().filter_map(pick).map(|value| value / scale);
        let (low, high) = (values.clone().min()?, values.max()?);
        Some(if low == high {
            low.to_string()
        } else {
            format!("{low}-{high}")
        })
    };
    let parts: Vec<String> = [
        range(|s| s.capacity, 1).map(|c| format!("capacity {c}")),
        range(|s| s.max_khz, 1000).map(|mhz| format!("max {mhz} MHz")),
        range(|s| s.base_khz, 1000).map(|mhz| format!("base {mhz} MHz")),
    ]
    .into_iter()
    .flatten()
    .collect();
    Some(parts.join(", ")).filter(|text| !text.is_empty())
}

/// Keeps the online CPUs of each class, dropping classes left empty.
fn restricted(classes: Vec<CoreClass>, online: &CpuSet) -> Vec<CoreClass> {
    classes
        .into_iter()
        .map(|class| CoreClass {
            cpus: class.cpus.intersection(online),
            ..class
        })
        .filter(|class| !class.cpus.is_empty())
        .collect()
}

/// The classes, if they cover every online CPU exactly once.
fn covering(classes: Option<Vec<CoreClass>>, online: &CpuSet) -> Option<Vec<CoreClass>> {
    let classes = classes?;
    let classified: usize = classes.iter().map(|class| class.cpus.len()).sum();
    let union = CpuSet::from_cpus(classes.iter().flat_map(|class| class.cpus.iter()));
    (classified == online.len() && union == *online).then_some(classes)
}

fn one_kind_is_uniform(classes: Vec<CoreClass>, online: &CpuSet) -> Vec<CoreClass> {
    if classes.len() > 1 {
        classes
    } else {
        vec![uniform(online)]
    }
}

fn uniform(online: &CpuSet) -> CoreClass {
    CoreClass {
        name: CoreKind::Uniform,
        cpus: online.clone(),
        source: ClassSource::Uniform,
        detail: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn speed(max_mhz: u64, base_mhz: u64) -> Speed {
        Speed {
            capacity: None,
            max_khz: Some(max_mhz * 1000),
            base_khz: Some(base_mhz * 1000),
        }
    }

    /// CPUs numbered from 0 with these (max, base) MHz.
    fn cpus(speeds: &[(u64, u64)]) -> Vec<(u32, Speed)> {
        (0..)
            .zip(speeds.iter().map(|&(max, base)| speed(max, base)))
            .collect()
    }

    /// Each class's CPUs and detail.
    fn sets_and_details(classes: &[CoreClass]) -> Vec<(Vec<u32>, Option<&str>)> {
        classes
            .iter()
            .map(|class| (class.cpus.iter().collect(), class.detail.as_deref()))
            .collect()
    }

    #[test]
    fn favoured_cores_join_their_kind() {
        // i9-13900K: P cores 5.4 GHz, favoured 5.5, 5.6 and 5.8; E cores 4.3.
        let raptor_lake = [
            (5400, 3000),
            (5800, 3000),
            (5500, 3000),
            (5600, 3000),
            (4300, 2200),
            (4300, 2200),
        ];
        let classes = from_capacity_and_frequency(&cpus(&raptor_lake));
        assert_eq!(
            sets_and_details(&classes),
            [
                (vec![0, 1, 2, 3], Some("max 5400-5800 MHz, base 3000 MHz")),
                (vec![4, 5], Some("max 4300 MHz, base 2200 MHz"))
            ]
        );
        assert_eq!(classes[0].name, CoreKind::Performance);
        assert_eq!(classes[0].source, ClassSource::Cpufreq);
        // Without base_frequency the P cores' maxima still form one run.
        let no_base: Vec<(u32, Speed)> = cpus(&raptor_lake)
            .into_iter()
            .map(|(cpu, s)| {
                (
                    cpu,
                    Speed {
                        base_khz: None,
                        ..s
                    },
                )
            })
            .collect();
        assert_eq!(from_capacity_and_frequency(&no_base).len(), 2);
        // A desktop part with Turbo Boost Max 3.0 and one kind of core.
        let tbm3 = cpus(&[(5300, 3700), (5100, 3700)]);
        assert_eq!(from_capacity_and_frequency(&tbm3).len(), 1);
    }

    #[test]
    fn close_maxima_of_different_base_frequencies_stay_apart() {
        // Lakefield: Tremont 2.8 GHz (base 1.4), Sunny Cove 3.0 (base 2.0).
        let lakefield = from_capacity_and_frequency(&cpus(&[(2800, 1400), (3000, 2000)]));
        assert_eq!(
            sets_and_details(&lakefield),
            [
                (vec![1], Some("max 3000 MHz, base 2000 MHz")),
                (vec![0], Some("max 2800 MHz, base 1400 MHz"))
            ]
        );
        // A run ends 10 % above its slowest maximum.
        let apart = from_capacity_and_frequency(&cpus(&[(3000, 2000), (2000, 2000)]));
        assert_eq!(apart.len(), 2);
    }

    /// A report of CPUs 0-1 of `first` and CPUs 2-3 of `second` (MIDRs).
    fn two_designs(first: u64, second: u64) -> MidrReport {
        let per_cpu = [(0, first), (1, first), (2, second), (3, second)]
            .map(|(cpu, value)| (cpu, Midr::from_register(value)));
        crate::probe::midr::report("midr_el1", "aarch64", per_cpu.to_vec())
    }

    fn names_and_details(classes: &[CoreClass]) -> Vec<(String, Option<&str>)> {
        classes
            .iter()
            .map(|class| (class.name.to_string(), class.detail.as_deref()))
            .collect()
    }

    #[test]
    fn midr_parts_of_known_tiers_are_ranked() {
        // Cortex-A725 on CPUs 0-1, Cortex-X925 on 2-3: the X925 is faster.
        let classes = from_midr_parts(&two_designs(0x410f_d871, 0x410f_d851), &[]).unwrap();
        assert_eq!(
            names_and_details(&classes),
            [
                ("performance".to_owned(), Some("Cortex-X925")),
                ("efficiency".to_owned(), Some("Cortex-A725"))
            ]
        );
        assert_eq!(classes[0].cpus, CpuSet::from_cpus([2, 3]));
        assert_eq!(classes[0].source, ClassSource::Midr);
        // Revisions of one part are one design: no classes.
        assert_eq!(
            from_midr_parts(&two_designs(0x410f_d850, 0x411f_d851), &[]),
            None
        );
    }

    /// CPUs 0-3 at these capacities.
    fn capacities(values: [u64; 4]) -> Vec<(u32, Speed)> {
        (0..)
            .zip(values)
            .map(|(cpu, capacity)| {
                let speed = Speed {
                    capacity: Some(capacity),
                    ..Speed::default()
                };
                (cpu, speed)
            })
            .collect()
    }

    #[test]
    fn capacity_ranks_parts_the_tiers_cannot() {
        // Cortex-A78 (CPUs 0-1) and Cortex-A715 (2-3): one tier.
        let mids = two_designs(0x410f_d410, 0x410f_d4d0);
        assert_eq!(
            names_and_details(&from_midr_parts(&mids, &[]).unwrap())[0].0,
            "class 0"
        );
        let classes = from_midr_parts(&mids, &capacities([800, 800, 1024, 1000])).unwrap();
        assert_eq!(
            names_and_details(&classes),
            [
                (
                    "performance".to_owned(),
                    Some("Cortex-A715, capacity 1000-1024")
                ),
                ("efficiency".to_owned(), Some("Cortex-A78, capacity 800"))
            ]
        );
        // Denver 2 has no tier: capacity alone ranks it against Cortex-A57.
        let tx2 = two_designs(0x411f_d073, 0x4e0f_0030);
        let classes = from_midr_parts(&tx2, &capacities([1024, 1024, 900, 900])).unwrap();
        assert_eq!(
            classes[0].detail.as_deref(),
            Some("Cortex-A57, capacity 1024")
        );
        assert_eq!(classes[1].name, CoreKind::Efficiency);
        // The tier outranks capacity: X925 above A725 whatever the numbers.
        let spark = two_designs(0x410f_d871, 0x410f_d851);
        let classes = from_midr_parts(&spark, &capacities([1024, 1024, 900, 900])).unwrap();
        assert_eq!(classes[0].cpus, CpuSet::from_cpus([2, 3]));
    }

    #[test]
    fn one_design_only_from_each_cpus_own_register() {
        let online = CpuSet::from_cpus(0..4);
        // Cortex-A720 r0p0 and r0p1: one design.
        let one = two_designs(0x410f_d810, 0x410f_d811);
        assert!(one_design(&one, &online));
        assert!(!one_design(&one, &CpuSet::from_cpus(0..5)), "CPU 4 unread");
        let from_cpuinfo = MidrReport {
            source: "cpuinfo".to_owned(),
            ..one
        };
        assert!(!one_design(&from_cpuinfo, &online));
        assert!(!one_design(&two_designs(0x410f_d810, 0x410f_d800), &online));
    }

    #[test]
    fn midr_parts_without_a_rank_are_numbered_not_guessed() {
        let classes = from_midr_parts(&two_designs(0x990f_1230, 0x410f_d050), &[]).unwrap();
        assert_eq!(
            names_and_details(&classes),
            [
                (
                    "class 0".to_owned(),
                    Some("Cortex-A55; speed rank unknown: listed by design tier, then part number")
                ),
                (
                    "class 1".to_owned(),
                    Some("part 0x123; speed rank unknown: listed by design tier, then part number")
                )
            ]
        );
    }

    #[test]
    fn capacity_classes_gain_their_part_names() {
        let mut classes = vec![CoreClass {
            name: CoreKind::Performance,
            cpus: CpuSet::from_cpus([0, 1, 2]),
            source: ClassSource::CpuCapacity,
            detail: Some("capacity 1024".to_owned()),
        }];
        name_parts(&mut classes, &two_designs(0x410f_d850, 0x410f_d870));
        assert_eq!(
            classes[0].detail.as_deref(),
            Some("capacity 1024, Cortex-X925 + Cortex-A725")
        );
    }

    #[test]
    fn detail_names_what_is_known() {
        assert_eq!(
            describe(&[speed(3000, 2500)]).as_deref(),
            Some("max 3000 MHz, base 2500 MHz")
        );
        assert_eq!(
            describe(&[speed(3000, 2500), speed(3100, 2500)]).as_deref(),
            Some("max 3000-3100 MHz, base 2500 MHz")
        );
        assert_eq!(describe(&[Speed::default()]), None);
        assert_eq!(describe(&[]), None);
    }
}
