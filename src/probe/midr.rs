//! Which cores an Arm machine has: each CPU's Main ID Register (`MIDR_EL1`),
//! decoded and named. Arm has no CPUID instruction; the MIDR is what says
//! "Neoverse-N1 r3p1".
//!
//! The kernel publishes the register per CPU in
//! `cpuN/regs/identification/midr_el1` (arm64, Linux 4.11 and later). Where
//! those files are absent, `/proc/cpuinfo` carries the same fields as
//! `CPU implementer`, `CPU variant`, `CPU part` and `CPU revision` lines:
//! once per processor block on arm64 kernels, but once after all the blocks
//! on old 32-bit kernels, where they apply to every CPU.
//!
//! Register layout: implementer \[31:24\], variant \[23:20\], architecture
//! \[19:16\], part number \[15:4\], revision \[3:0\]; Arm prints a value as
//! rVARIANTpREVISION. The names follow Linux's
//! `arch/arm64/include/asm/cputype.h` and util-linux's `lscpu-arm.c`; a value
//! in neither prints as hex, never as a guess.

use crate::cpuset::{CpuSet, check_cpu_number, excerpt};
use crate::probe::environment::CPUINFO_LIMIT;
use crate::probe::model::{MidrKind, MidrReport};
use crate::probe::sysfs::{CPU_DIR, SysfsRoot};
use anyhow::{Result, anyhow};
use std::collections::BTreeMap;

/// A CPU's register file, relative to its `cpuN` folder.
const MIDR_FILE: &str = "regs/identification/midr_el1";

/// One MIDR's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Midr {
    pub implementer: u32,
    pub variant: u32,
    /// `None` when read from cpuinfo, which does not print the field.
    pub architecture: Option<u32>,
    pub part: u32,
    pub revision: u32,
}

impl Midr {
    /// Decodes a register value (bits above 31 are reserved and ignored).
    pub fn from_register(value: u64) -> Midr {
        let field = |shift: u32, bits: u32| ((value >> shift) as u32) & ((1 << bits) - 1);
        Midr {
            implementer: field(24, 8),
            variant: field(20, 4),
            architecture: Some(field(16, 4)),
            part: field(4, 12),
            revision: field(0, 4),
        }
    }

    /// The register value, when every field is known.
    pub fn register(self) -> Option<u32> {
        let architecture = self.architecture?;
        Some(
            self.implementer << 24
                | self.variant << 20
                | architecture << 16
                | self.part << 4
                | self.revision,
        )
    }

    pub fn implementer_name(self) -> Option<&'static str> {
        implementer(self.implementer).map(|(name, _)| name)
    }

    pub fn part_name(self) -> Option<&'static str> {
        self.known_part().map(|(_, name, _)| *name)
    }

    /// Where the part ranks among the designs one chip may mix.
    pub fn tier(self) -> Tier {
        self.known_part()
            .map_or(Tier::Unranked, |(_, _, tier)| *tier)
    }

    fn known_part(self) -> Option<&'static Part> {
        let (_, parts) = implementer(self.implementer)?;
        parts.iter().find(|(id, _, _)| *id == self.part)
    }

    /// "Neoverse-N1", or "part 0xd99" when the part has no known name.
    pub fn part_label(self) -> String {
        self.part_name()
            .map_or_else(|| format!("part {:#05x}", self.part), str::to_owned)
    }

    /// "ARM Neoverse-N1 r3p1"; unknown values in hex.
    pub fn name(self) -> String {
        let implementer = self.implementer_name().map_or_else(
            || format!("implementer {:#04x}", self.implementer),
            str::to_owned,
        );
        format!("{implementer} {}", self.with_revision(&self.part_label()))
    }

    /// `what` followed by the revision, e.g. "Neoverse-N1 r3p1".
    fn with_revision(self, what: &str) -> String {
        format!("{what} r{}p{}", self.variant, self.revision)
    }
}

/// A design's place among the cores one chip may mix, fastest first (the
/// order [`Ord`] gives). Ranks only what Arm's own line-up says: a big
/// core (Cortex-X, Neoverse-V, Apple's P-cores) outruns a mid one
/// (Cortex-A7x/A7xx, Neoverse-N), which outruns a little one
/// (Cortex-A5x/A5xx/A3x, Neoverse-E, Apple's E-cores). Other designs, and
/// unknown parts, are `Unranked`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    Big,
    Mid,
    Little,
    Unranked,
}

/// (part number, name, tier).
type Part = (u32, &'static str, Tier);

use Tier::{Big, Little, Mid, Unranked};

/// Implementer code → name and known parts.
fn implementer(id: u32) -> Option<(&'static str, &'static [Part])> {
    IMPLEMENTERS
        .iter()
        .find(|(code, _, _)| *code == id)
        .map(|(_, name, parts)| (*name, *parts))
}

const IMPLEMENTERS: &[(u32, &str, &[Part])] = &[
    // Arm reserves implementer 0 for software use; QEMU's `-cpu max` takes it.
    (0x00, "software-reserved", &[(0x051, "QEMU max", Unranked)]),
    (0x41, "ARM", ARM_PARTS),
    (
        0x42,
        "Broadcom",
        &[
            (0x00f, "Brahma-B15", Unranked),
            (0x100, "Brahma-B53", Unranked),
            (0x516, "ThunderX2 (Vulcan)", Unranked),
        ],
    ),
    (
        0x43,
        "Cavium",
        &[
            (0x0a0, "ThunderX", Unranked),
            (0x0a1, "ThunderX 88XX", Unranked),
            (0x0a2, "ThunderX 81XX", Unranked),
            (0x0a3, "ThunderX 83XX", Unranked),
            (0x0af, "ThunderX2 99xx", Unranked),
            (0x0b8, "ThunderX3 T110", Unranked),
        ],
    ),
    (0x44, "DEC", &[]),
    (
        0x46,
        "Fujitsu",
        &[(0x001, "A64FX", Unranked), (0x003, "MONAKA", Unranked)],
    ),
    (
        0x48,
        "HiSilicon",
        &[
            (0xd01, "TaiShan v110 (Kunpeng 920)", Unranked),
            (0xd02, "HIP09", Unranked),
            (0xd06, "HIP12", Unranked),
        ],
    ),
    (0x49, "Infineon", &[]),
    (0x4d, "Motorola/Freescale", &[]),
    (
        0x4e,
        "NVIDIA",
        &[
            (0x000, "Denver", Unranked),
            (0x003, "Denver 2", Unranked),
            (0x004, "Carmel", Unranked),
            (0x010, "Olympus", Unranked),
        ],
    ),
    (0x50, "APM", &[(0x000, "X-Gene", Unranked)]),
    (0x51, "Qualcomm", QUALCOMM_PARTS),
    (
        0x53,
        "Samsung",
        &[
            (0x001, "Exynos M1", Big),
            (0x002, "Exynos M3", Big),
            (0x003, "Exynos M4", Big),
            (0x004, "Exynos M5", Big),
        ],
    ),
    (0x56, "Marvell", &[]),
    (0x61, "Apple", APPLE_PARTS),
    (0x66, "Faraday", &[]),
    (0x69, "Intel", &[]),
    (0x6d, "Microsoft", &[(0xd49, "Azure Cobalt 100", Unranked)]),
    (
        0x70,
        "Phytium",
        &[
            (0x303, "FTC310", Unranked),
            (0x660, "FTC660", Unranked),
            (0x661, "FTC661", Unranked),
            (0x662, "FTC662", Unranked),
            (0x663, "FTC663", Unranked),
            (0x664, "FTC664", Unranked),
            (0x862, "FTC862", Unranked),
        ],
    ),
    (
        0xc0,
        "Ampere",
        &[
            (0xac3, "AmpereOne", Unranked),
            (0xac4, "AmpereOne AC04", Unranked),
        ],
    ),
];

const ARM_PARTS: &[Part] = &[
    (0xc05, "Cortex-A5", Little),
    (0xc07, "Cortex-A7", Little),
    (0xc08, "Cortex-A8", Unranked),
    (0xc09, "Cortex-A9", Unranked),
    (0xc0d, "Cortex-A17", Mid),
    (0xc0e, "Cortex-A17", Mid),
    (0xc0f, "Cortex-A15", Mid),
    (0xd01, "Cortex-A32", Little),
    (0xd02, "Cortex-A34", Little),
    (0xd03, "Cortex-A53", Little),
    (0xd04, "Cortex-A35", Little),
    (0xd05, "Cortex-A55", Little),
    (0xd06, "Cortex-A65", Little),
    (0xd07, "Cortex-A57", Mid),
    (0xd08, "Cortex-A72", Mid),
    (0xd09, "Cortex-A73", Mid),
    (0xd0a, "Cortex-A75", Mid),
    (0xd0b, "Cortex-A76", Mid),
    (0xd0c, "Neoverse-N1", Mid),
    (0xd0d, "Cortex-A77", Mid),
    (0xd0e, "Cortex-A76AE", Mid),
    (0xd40, "Neoverse-V1", Big),
    (0xd41, "Cortex-A78", Mid),
    (0xd42, "Cortex-A78AE", Mid),
    (0xd43, "Cortex-A65AE", Little),
    (0xd44, "Cortex-X1", Big),
    (0xd46, "Cortex-A510", Little),
    (0xd47, "Cortex-A710", Mid),
    (0xd48, "Cortex-X2", Big),
    (0xd49, "Neoverse-N2", Mid),
    (0xd4a, "Neoverse-E1", Little),
    (0xd4b, "Cortex-A78C", Mid),
    (0xd4c, "Cortex-X1C", Big),
    (0xd4d, "Cortex-A715", Mid),
    (0xd4e, "Cortex-X3", Big),
    (0xd4f, "Neoverse-V2", Big),
    (0xd80, "Cortex-A520", Little),
    (0xd81, "Cortex-A720", Mid),
    (0xd82, "Cortex-X4", Big),
    (0xd83, "Neoverse-V3AE", Big),
    (0xd84, "Neoverse-V3", Big),
    (0xd85, "Cortex-X925", Big),
    (0xd87, "Cortex-A725", Mid),
    (0xd88, "Cortex-A520AE", Little),
    (0xd89, "Cortex-A720AE", Mid),
    (0xd8a, "C1-Nano", Little),
    (0xd8b, "C1-Pro", Mid),
    (0xd8c, "C1-Ultra", Big),
    (0xd8e, "Neoverse-N3", Mid),
    (0xd8f, "Cortex-A320", Little),
    (0xd90, "C1-Premium", Big),
];

const QUALCOMM_PARTS: &[Part] = &[
    (0x001, "Oryon", Unranked),
    (0x00f, "Scorpion", Unranked),
    (0x02d, "Scorpion", Unranked),
    (0x04d, "Krait", Unranked),
    (0x06f, "Krait", Unranked),
    (0x201, "Kryo", Unranked),
    (0x205, "Kryo", Unranked),
    (0x211, "Kryo", Unranked),
    (0x800, "Falkor V1/Kryo", Unranked),
    (0x801, "Kryo V2", Unranked),
    (0x802, "Kryo 3XX Gold", Mid),
    (0x803, "Kryo 3XX Silver", Little),
    (0x804, "Kryo 4XX Gold", Mid),
    (0x805, "Kryo 4XX Silver", Little),
    (0xc00, "Falkor", Unranked),
    (0xc01, "Saphira", Unranked),
];

const APPLE_PARTS: &[Part] = &[
    (0x020, "Icestorm (A14)", Little),
    (0x021, "Firestorm (A14)", Big),
    (0x022, "Icestorm (M1)", Little),
    (0x023, "Firestorm (M1)", Big),
    (0x024, "Icestorm (M1 Pro)", Little),
    (0x025, "Firestorm (M1 Pro)", Big),
    (0x028, "Icestorm (M1 Max)", Little),
    (0x029, "Firestorm (M1 Max)", Big),
    (0x030, "Blizzard (A15)", Little),
    (0x031, "Avalanche (A15)", Big),
    (0x032, "Blizzard (M2)", Little),
    (0x033, "Avalanche (M2)", Big),
    (0x034, "Blizzard (M2 Pro)", Little),
    (0x035, "Avalanche (M2 Pro)", Big),
    (0x036, "Sawtooth (A16)", Little),
    (0x037, "Everest (A16)", Big),
    (0x038, "Blizzard (M2 Max)", Little),
    (0x039, "Avalanche (M2 Max)", Big),
];

impl MidrReport {
    /// The cores for a one-line header: "ARM Neoverse-N1 r3p1", or for
    /// several kinds, fastest tier first, each with its CPU count:
    /// "ARM Cortex-X925 r0p1 ×10 + Cortex-A725 r0p1 ×10" (the implementer
    /// is named again only when it changes).
    pub fn cores(&self) -> String {
        let mut kinds: Vec<(Midr, &MidrKind)> = self
            .kinds
            .iter()
            .map(|kind| (kind_midr(kind), kind))
            .collect();
        if let [(_, only)] = kinds.as_slice() {
            return only.name.clone();
        }
        kinds.sort_by_key(|(midr, kind)| (midr.tier(), kind.cpus.iter().next()));
        let mut parts = Vec::with_capacity(kinds.len());
        let mut last_implementer = None;
        for (midr, kind) in kinds {
            let name = if last_implementer == Some(midr.implementer) {
                midr.with_revision(&midr.part_label())
            } else {
                kind.name.clone()
            };
            last_implementer = Some(midr.implementer);
            parts.push(format!("{name} ×{}", kind.cpus.len()));
        }
        parts.join(" + ")
    }
}

/// The fields of a reported kind.
pub fn kind_midr(kind: &MidrKind) -> Midr {
    Midr {
        implementer: kind.implementer,
        variant: kind.variant,
        architecture: kind.architecture,
        part: kind.part,
        revision: kind.revision,
    }
}

/// Reads every online CPU's MIDR: from `midr_el1` where the first online
/// CPU has that file, else from `/proc/cpuinfo`. `None` when neither says
/// anything (x86, or a snapshot without them).
pub fn read_midr(root: &SysfsRoot, online: &CpuSet) -> Result<Option<MidrReport>> {
    if let Some(per_cpu) = from_sysfs(root, online)? {
        return Ok(Some(report("midr_el1", "aarch64", per_cpu)));
    }
    const CPUINFO: &str = "proc/cpuinfo";
    // x86's cpuinfo has a `flags` line and no MIDR: reading stops there,
    // maybe mid-line, and nothing is parsed.
    let Some(text) = root.read_text_bounded(CPUINFO, CPUINFO_LIMIT, has_flags_line)? else {
        return Ok(None);
    };
    if has_flags_line(text.as_bytes()) {
        return Ok(None);
    }
    let parsed = parse_cpuinfo(&text).map_err(|why| anyhow!("{}: {why}", root.name(CPUINFO)))?;
    Ok(parsed.map(|parsed| {
        let per_cpu = parsed
            .cpus
            .into_iter()
            .filter(|(cpu, _)| online.contains(*cpu))
            .collect();
        report("cpuinfo", parsed.arch, per_cpu)
    }))
}

/// Do these cpuinfo bytes hold an x86 `flags` line (so no MIDR)?
fn has_flags_line(bytes: &[u8]) -> bool {
    bytes.starts_with(b"flags") || bytes.windows(6).any(|window| window == b"\nflags")
}

/// Each online CPU's `midr_el1`; `None` when the first one has none.
fn from_sysfs(root: &SysfsRoot, online: &CpuSet) -> Result<Option<Vec<(u32, Midr)>>> {
    let mut per_cpu = Vec::with_capacity(online.len());
    for cpu in online.iter() {
        let relative = format!("{CPU_DIR}/cpu{cpu}/{MIDR_FILE}");
        let Some(text) = root.read_value(&relative)? else {
            if per_cpu.is_empty() {
                return Ok(None);
            }
            // A CPU the kernel gives no register for is in no kind.
            continue;
        };
        let value = text
            .strip_prefix("0x")
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .ok_or_else(|| {
                anyhow!(
                    "{}: expected a MIDR_EL1 value like 0x00000000410fd0c1, found '{}'",
                    root.name(&relative),
                    excerpt(&text)
                )
            })?;
        per_cpu.push((cpu, Midr::from_register(value)));
    }
    Ok(Some(per_cpu))
}

/// Groups CPUs by value, in order of lowest CPU (`per_cpu` is ascending).
pub(crate) fn report(source: &str, arch: &str, per_cpu: Vec<(u32, Midr)>) -> MidrReport {
    let mut by_value: BTreeMap<Midr, Vec<u32>> = BTreeMap::new();
    for (cpu, midr) in per_cpu {
        by_value.entry(midr).or_default().push(cpu);
    }
    let mut kinds: Vec<MidrKind> = by_value
        .into_iter()
        .map(|(midr, cpus)| MidrKind {
            cpus: CpuSet::from_cpus(cpus),
            midr: midr.register().map(|value| format!("{value:#010x}")),
            implementer: midr.implementer,
            implementer_name: midr.implementer_name().map(str::to_owned),
            variant: midr.variant,
            architecture: midr.architecture,
            part: midr.part,
            part_name: midr.part_name().map(str::to_owned),
            revision: midr.revision,
            name: midr.name(),
        })
        .collect();
    kinds.sort_by_key(|kind| kind.cpus.iter().next());
    MidrReport {
        source: source.to_owned(),
        arch: arch.to_owned(),
        kinds,
    }
}

/// What `/proc/cpuinfo` says of the CPUs' MIDRs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuinfoMidr {
    /// "aarch64" when `CPU architecture` says 8 (or `AArch64`, as early
    /// arm64 kernels wrote), else "arm".
    pub arch: &'static str,
    /// Each processor with all four fields, ascending.
    pub cpus: Vec<(u32, Midr)>,
}

/// cpuinfo's MIDR lines: key, width in bits, an example value. The kernel
/// prints the revision in decimal, the others in hex with `0x`.
const CPUINFO_FIELDS: [(&str, u32, &str); 4] = [
    ("CPU implementer", 8, "0x41"),
    ("CPU variant", 4, "0x3"),
    ("CPU part", 12, "0xd0c"),
    ("CPU revision", 4, "1"),
];

/// The values of [`CPUINFO_FIELDS`], as far as a block has them.
type Fields = [Option<u32>; 4];

/// `own` fields, each filled from `shared` where absent.
fn combine(own: Fields, shared: Fields) -> Option<Midr> {
    let field = |index: usize| own[index].or(shared[index]);
    Some(Midr {
        implementer: field(0)?,
        variant: field(1)?,
        architecture: None,
        part: field(2)?,
        revision: field(3)?,
    })
}

/// Parses the MIDR fields of a whole `/proc/cpuinfo` text. Fields inside
/// a `processor : N` block are that CPU's; fields in a block without one
/// (old 32-bit kernels print them once, after every processor block) are
/// every CPU's that has none of its own. `None` when no processor has all
/// four (x86 has none of them). The error names the line and what was
/// expected.
pub fn parse_cpuinfo(text: &str) -> Result<Option<CpuinfoMidr>, String> {
    let mut per_cpu: BTreeMap<u32, Fields> = BTreeMap::new();
    let mut shared: Fields = [None; 4];
    let mut block_cpu: Option<u32> = None;
    let mut arch = "arm";
    for (index, line) in text.lines().enumerate() {
        let Some((key, value)) = line.split_once(':') else {
            if line.trim().is_empty() {
                block_cpu = None;
            }
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        let at = |why: String| format!("line {}: {key}: {why}", index + 1);
        // `Processor : ARMv7 ...` (capital P) names the model, not a CPU.
        if key == "processor" {
            let number = value
                .parse::<u64>()
                .map_err(|_| at(format!("expected a CPU number, found '{}'", excerpt(value))))?;
            let cpu = check_cpu_number(number).map_err(at)?;
            per_cpu.entry(cpu).or_default();
            block_cpu = Some(cpu);
            continue;
        }
        if key == "CPU architecture" {
            arch = if matches!(value, "8" | "AArch64") {
                "aarch64"
            } else {
                "arm"
            };
            continue;
        }
        let Some(slot) = CPUINFO_FIELDS.iter().position(|(name, _, _)| *name == key) else {
            continue;
        };
        let (_, bits, example) = CPUINFO_FIELDS[slot];
        let number = parse_field(value, key == "CPU revision")
            .filter(|&number| number < 1 << bits)
            .ok_or_else(|| {
                at(format!(
                    "expected a {bits}-bit number like {example}, found '{}'",
                    excerpt(value)
                ))
            })?;
        let fields = match block_cpu {
            Some(cpu) => per_cpu.entry(cpu).or_default(),
            None => &mut shared,
        };
        fields[slot] = Some(number);
    }
    let cpus: Vec<(u32, Midr)> = per_cpu
        .into_iter()
        .filter_map(|(cpu, fields)| Some((cpu, combine(fields, shared)?)))
        .collect();
    Ok((!cpus.is_empty()).then_some(CpuinfoMidr { arch, cpus }))
}

/// A field's value: decimal, or hex with `0x`.
fn parse_field(value: &str, decimal: bool) -> Option<u32> {
    if decimal {
        return value.parse().ok();
    }
    u32::from_str_radix(value.strip_prefix("0x")?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_decode_into_fields_and_names() {
        let n1 = Midr::from_register(0x0000_0000_413f_d0c1);
        assert_eq!(
            n1,
            Midr {
                implementer: 0x41,
                variant: 3,
                architecture: Some(0xf),
                part: 0xd0c,
                revision: 1
            }
        );
        assert_eq!(n1.register(), Some(0x413f_d0c1));
        assert_eq!(n1.name(), "ARM Neoverse-N1 r3p1");
        assert_eq!(n1.tier(), Tier::Mid);
        let qemu = Midr::from_register(0x000f_0510);
        assert_eq!(qemu.name(), "software-reserved QEMU max r0p0");
        assert_eq!(
            Midr::from_register(0x610f_0230).name(),
            "Apple Firestorm (M1) r0p0"
        );
        assert_eq!(
            Midr::from_register(0x481f_d010).name(),
            "HiSilicon TaiShan v110 (Kunpeng 920) r1p0"
        );
    }

    #[test]
    fn unknown_values_print_as_hex() {
        let unknown = Midr::from_register(0x990f_1230);
        assert_eq!(unknown.name(), "implementer 0x99 part 0x123 r0p0");
        assert_eq!(unknown.tier(), Tier::Unranked);
        assert_eq!(
            Midr::from_register(0x410f_d990).name(),
            "ARM part 0xd99 r0p0"
        );
    }

    #[test]
    fn tiers_rank_big_mid_little() {
        let tier = |part: u64| Midr::from_register(0x410f_0000 | part << 4).tier();
        assert!(tier(0xd85) < tier(0xd87), "Cortex-X925 above Cortex-A725");
        assert!(tier(0xd87) < tier(0xd05), "Cortex-A725 above Cortex-A55");
        assert_eq!(tier(0xc09), Tier::Unranked, "Cortex-A9 never mixes");
    }

    #[test]
    fn arm64_cpuinfo_has_fields_in_each_block() {
        let text = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU architecture: 8\n\
                    CPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n\
                    processor\t: 1\nCPU implementer\t: 0x41\nCPU architecture: 8\n\
                    CPU variant\t: 0x1\nCPU part\t: 0xd05\nCPU revision\t: 0\n";
        let parsed = parse_cpuinfo(text).unwrap().unwrap();
        assert_eq!(parsed.arch, "aarch64");
        let names: Vec<(u32, String)> = parsed
            .cpus
            .iter()
            .map(|(cpu, midr)| (*cpu, midr.name()))
            .collect();
        assert_eq!(
            names,
            [
                (0, "ARM Neoverse-N1 r3p1".to_owned()),
                (1, "ARM Cortex-A55 r1p0".to_owned())
            ]
        );
        assert_eq!(parsed.cpus[0].1.register(), None, "no architecture field");
    }

    #[test]
    fn old_arm_cpuinfo_shares_one_set_of_fields() {
        let text = "Processor\t: ARMv7 Processor rev 1 (v7l)\nprocessor\t: 0\nBogoMIPS\t: 1595.80\n\n\
                    processor\t: 1\nBogoMIPS\t: 1595.80\n\nFeatures\t: swp half thumb\n\
                    CPU implementer\t: 0x41\nCPU architecture: 7\nCPU variant\t: 0x2\n\
                    CPU part\t: 0xc09\nCPU revision\t: 1\n\nHardware\t: ST-Ericsson MOP500 platform\n";
        let parsed = parse_cpuinfo(text).unwrap().unwrap();
        assert_eq!(parsed.arch, "arm");
        assert_eq!(parsed.cpus.len(), 2);
        assert!(
            parsed
                .cpus
                .iter()
                .all(|(_, midr)| midr.name() == "ARM Cortex-A9 r2p1")
        );
    }

    #[test]
    fn x86_cpuinfo_has_no_midr_and_bad_fields_are_errors() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu\n";
        assert_eq!(parse_cpuinfo(x86).unwrap(), None);
        assert!(has_flags_line(x86.as_bytes()));
        assert!(!has_flags_line(b"processor\t: 0\nFeatures\t: fp asimd\n"));
        let bad = parse_cpuinfo("processor\t: 0\nCPU part\t: 0x10000\n").unwrap_err();
        assert_eq!(
            bad,
            "line 2: CPU part: expected a 12-bit number like 0xd0c, found '0x10000'"
        );
        let bad = parse_cpuinfo("processor\t: x\n").unwrap_err();
        assert_eq!(bad, "line 1: processor: expected a CPU number, found 'x'");
    }
}
