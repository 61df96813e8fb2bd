//! Core classes: which CPUs are performance cores, which efficiency cores.
//!
//! Sources, most direct first; the first one that classifies every online
//! CPU wins:
//!
//! 1. the hybrid PMUs the kernel registers, `/sys/devices/cpu_core/cpus`,
//!    `cpu_atom/cpus` and `cpu_lowpower/cpus` (Intel hybrid parts);
//! 2. CPUID's core type (leaf 0x1A on Intel, 0x80000026 on AMD), through
//!    [`classes_from_cpuid`];
//! 3. what the kernel derived itself: `cpu_capacity` (Arm big.LITTLE);
//! 4. on Arm, where capacities do not differ, the MIDR part numbers:
//!    different core designs, ranked by [`Tier`] (Cortex-X/Neoverse-V above
//!    Cortex-A7xx/Neoverse-N above Cortex-A5xx/A3x/Neoverse-E);
//! 5. the cpufreq maximum and base frequencies (Lakefield before the hybrid
//!    PMUs existed).
//!
//! On Arm each class's detail also names its cores' parts, e.g. "capacity
//! 1024, Cortex-X925". A machine with one kind of core has one class,
//! "uniform".

use crate::cpuset::CpuSet;
use crate::probe::midr::{Midr, Tier, kind_midr};
use crate::probe::model::{ClassSource, CoreClass, CoreKind, CpuidCpu, CpuidReport, MidrReport};
use crate::probe::sysfs::{CPU_DIR, SetForm, SysfsRoot};
use anyhow::Result;
use std::cmp::Reverse;
use std::collections::BTreeMap;

/// The hybrid PMU folders and the class each one names.
const HYBRID_PMUS: [(&str, CoreKind); 3] = [
    ("cpu_core", CoreKind::Performance),
    ("cpu_atom", CoreKind::Efficiency),
    ("cpu_lowpower", CoreKind::LowPowerEfficiency),
];

/// Turbo Boost Max 3.0 gives a few "favoured" cores a slightly higher
/// `cpuinfo_max_freq` than their identical neighbours; maximum frequencies
/// closer than this (in percent) do not make a class of their own.
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
    if let Some(root) = root {
        let mut classes = from_capacity_and_frequency(root, online)?;
        let by_capacity = classes.len() > 1 && classes[0].source == ClassSource::CpuCapacity;
        if !by_capacity {
            if let Some(classes) = covering(midr.and_then(from_midr_parts), online) {
                return Ok(classes);
            }
        }
        if let Some(midr) = midr {
            name_parts(&mut classes, midr);
        }
        return Ok(one_kind_is_uniform(classes, online));
    }
    Ok(vec![uniform(online)])
}

/// Classes from the MIDR part numbers, when the CPUs are of more than one
/// design: fastest [`Tier`] first, named by rank ("performance",
/// "efficiency", ...).
///
/// When the tiers do not rank every class apart (an unranked or unknown
/// part, or two parts of one tier), nothing says which design is faster:
/// the classes are "class 0", "class 1", ... in (tier, implementer, part)
/// order, and each detail says the speed rank is unknown. A guess would
/// call Jetson TX2's Denver 2 cores "efficiency" next to its Cortex-A57s.
fn from_midr_parts(midr: &MidrReport) -> Option<Vec<CoreClass>> {
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
    let mut tiers: Vec<Tier> = parts.keys().map(|(tier, _, _)| *tier).collect();
    tiers.dedup();
    let ranked = tiers.len() == parts.len() && !tiers.contains(&Tier::Unranked);
    let classes = parts
        .into_values()
        .enumerate()
        .map(|(position, (fields, cpus))| CoreClass {
            name: if ranked {
                CoreKind::by_rank(position)
            } else {
                CoreKind::Ranked(position)
            },
            cpus: CpuSet::from_cpus(cpus),
            source: ClassSource::Midr,
            detail: Some(if ranked {
                fields.part_label()
            } else {
                format!(
                    "{}; speed rank unknown: listed by design tier, then part number",
                    fields.part_label()
                )
            }),
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

/// Groups CPUs by `cpu_capacity`, then `cpuinfo_max_freq`, then
/// `base_frequency`, ranked fastest first.
fn from_capacity_and_frequency(root: &SysfsRoot, online: &CpuSet) -> Result<Vec<CoreClass>> {
    let mut speeds: Vec<(u32, Speed)> = Vec::with_capacity(online.len());
    for cpu in online.iter() {
        // The first CPU shows which files this kernel writes: cpufreq and
        // cpu_capacity exist for every CPU or for none.
        let first = speeds.first().map(|(_, speed)| *speed);
        speeds.push((cpu, read_speed(root, cpu, first)?));
    }
    if favoured_cores_only(&speeds) {
        for (_, speed) in &mut speeds {
            speed.max_khz = None;
        }
    }
    let mut groups: BTreeMap<Reverse<Speed>, Vec<u32>> = BTreeMap::new();
    for (cpu, speed) in &speeds {
        groups.entry(Reverse(*speed)).or_default().push(*cpu);
    }
    let first_capacity = speeds.first().and_then(|(_, speed)| speed.capacity);
    let capacities_differ = groups.keys().any(|s| s.0.capacity != first_capacity);
    let source = if capacities_differ {
        ClassSource::CpuCapacity
    } else {
        ClassSource::Cpufreq
    };
    Ok(groups
        .into_iter()
        .enumerate()
        .map(|(rank, (Reverse(speed), cpus))| CoreClass {
            name: CoreKind::by_rank(rank),
            cpus: CpuSet::from_cpus(cpus),
            source,
            detail: describe(speed),
        })
        .collect())
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

/// Do the CPUs differ only by a small maximum-frequency spread, with equal
/// capacity and base frequency? Then that spread is Turbo Boost Max 3.0's
/// favoured cores, not different kinds of core.
fn favoured_cores_only(speeds: &[(u32, Speed)]) -> bool {
    let Some((_, first)) = speeds.first() else {
        return false;
    };
    let same_otherwise = speeds
        .iter()
        .all(|(_, s)| s.capacity == first.capacity && s.base_khz == first.base_khz);
    let max_freqs = || speeds.iter().filter_map(|(_, s)| s.max_khz);
    match (max_freqs().min(), max_freqs().max()) {
        (Some(low), Some(high)) => {
            same_otherwise && high * 100 < low * (100 + FAVOURED_CORE_SPREAD_PERCENT)
        }
        _ => false,
    }
}

/// "capacity 1024, max 3000 MHz, base 2500 MHz", from what is known.
fn describe(speed: Speed) -> Option<String> {
    let parts: Vec<String> = [
        speed.capacity.map(|c| format!("capacity {c}")),
        speed.max_khz.map(|k| format!("max {} MHz", k / 1000)),
        speed.base_khz.map(|k| format!("base {} MHz", k / 1000)),
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

    #[test]
    fn favoured_cores_are_not_a_class() {
        let tbm3 = [(0, speed(5300, 3700)), (1, speed(5100, 3700))];
        assert!(favoured_cores_only(&tbm3));
        let lakefield = [(0, speed(2800, 1400)), (4, speed(3000, 2000))];
        assert!(!favoured_cores_only(&lakefield));
        let big_spread = [(0, speed(3000, 2000)), (1, speed(2000, 2000))];
        assert!(!favoured_cores_only(&big_spread));
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
        let classes = from_midr_parts(&two_designs(0x410f_d871, 0x410f_d851)).unwrap();
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
            from_midr_parts(&two_designs(0x410f_d850, 0x411f_d851)),
            None
        );
    }

    #[test]
    fn midr_parts_without_a_rank_are_numbered_not_guessed() {
        let classes = from_midr_parts(&two_designs(0x990f_1230, 0x410f_d050)).unwrap();
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
            describe(speed(3000, 2500)).as_deref(),
            Some("max 3000 MHz, base 2500 MHz")
        );
        assert_eq!(describe(Speed::default()), None);
    }
}
