//! The probed machine, as every later stage sees it and as `topology --json`
//! prints it. Field names here ARE the JSON schema (documented in the man
//! page): add fields, never rename them without bumping
//! [`TOPOLOGY_SCHEMA_VERSION`].

use crate::cpuset::CpuSet;
use crate::probe::hypervisor::HypervisorSource;
use crate::probe::recording::CPUID_DIR;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

pub const TOPOLOGY_SCHEMA_VERSION: u32 = 1;

/// Everything `topology` knows about one machine.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Topology {
    pub schema_version: u32,
    /// Where the facts came from: "live", or the snapshot root / dump folder.
    pub source: ProbeSource,
    pub summary: Summary,
    /// One entry per online CPU, ascending by `cpu`.
    pub cpus: Vec<CpuEntry>,
    pub classes: Vec<CoreClass>,
    pub caches: Vec<Cache>,
    pub environment: Environment,
    /// CPUID facts; `None` when no CPUID source was read (non-x86, or a
    /// snapshot without a dump).
    pub cpuid: Option<CpuidReport>,
    /// Which cores these are, from Arm's Main ID Register (`MIDR_EL1`);
    /// `None` where the kernel publishes none (x86 has no MIDR), and in
    /// files saved before this field existed.
    #[serde(default)]
    pub midr: Option<MidrReport>,
    /// CPUID vs sysfs; `None` unless both were read.
    pub crosscheck: Option<Crosscheck>,
    /// One line per problem in the kernel's sibling sets, naming the CPUs
    /// and the file: a CPU listing another that does not list it back, or
    /// sets that overlap without being equal, e.g. "CPU 3's core_cpus_list
    /// lists CPU 4, but CPU 4's does not list CPU 3: treated as one core
    /// (CPUs 3-4)". Such CPUs are merged into one core (or package), so
    /// `cpus` never puts a CPU in two. Also a CPU whose list and mask of
    /// one set disagree, naming both and the file used (see
    /// [`list_mask`](crate::probe::list_mask)). Empty for a sane kernel,
    /// and in files saved before this field existed.
    #[serde(default)]
    pub sibling_map_notes: Vec<String>,
    /// The NUMA nodes, ascending by node number: empty where the machine
    /// (or snapshot) has no node files, and in files saved before this
    /// field existed.
    #[serde(default)]
    pub nodes: Vec<NumaNode>,
    /// One line per disagreement in the node files, naming the CPUs or
    /// nodes: CPUs two nodes list, online CPUs no node lists, `has_cpu` or
    /// `has_memory` against a node's own files. Empty for a sane kernel.
    #[serde(default)]
    pub node_notes: Vec<String>,
}

impl Topology {
    /// The node of `cpu`: the lowest node whose CPU list has it; `None`
    /// without nodes, or for a CPU no node lists.
    pub fn node_of(&self, cpu: u32) -> Option<u32> {
        self.nodes
            .iter()
            .find(|node| node.cpus.contains(cpu))
            .map(|node| node.node)
    }

    /// Every listed CPU's node, as [`Topology::node_of`] says it, read in
    /// one pass: for the planners, which ask of every CPU over and over.
    pub fn nodes_by_cpu(&self) -> BTreeMap<u32, u32> {
        let mut nodes = BTreeMap::new();
        for node in &self.nodes {
            for cpu in node.cpus.iter() {
                nodes.entry(cpu).or_insert(node.node);
            }
        }
        nodes
    }

    /// The CPU's name for a header: CPUID's brand string, else the cores
    /// the MIDR names ("ARM Neoverse-N1 r3p1"), else cpuinfo's model name.
    pub fn cpu_name(&self) -> Option<String> {
        let brand = self.cpuid.as_ref().and_then(|cpuid| cpuid.brand.clone());
        brand
            .or_else(|| self.midr.as_ref().map(MidrReport::cores))
            .or_else(|| self.environment.model_name.clone())
    }
}

/// One NUMA node, as `numactl -H` shows it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct NumaNode {
    /// The kernel's node number (`nodeN`): numbers may have gaps.
    pub node: u32,
    /// Its CPUs as its `cpulist` (or `cpumap`) says, offline ones
    /// included; empty for a node of memory alone (CXL, HBM).
    pub cpus: CpuSet,
    /// `MemTotal` of its `meminfo`, in KiB: 0 for a memoryless node;
    /// `None` where the file is absent.
    pub memory_kib: Option<u64>,
    /// Its `distance` file: the relative cost of reaching each node's
    /// memory from here, in the order of `nodes` (10: its own). Empty
    /// where the file is absent.
    pub distances: Vec<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ProbeSource {
    /// `None` for the live system's `/`.
    pub sysfs_root: Option<String>,
    /// "live", a dump folder path, or `None` when CPUID was not read.
    pub cpuid: Option<String>,
    /// Why there is no CPUID at all: "not part of aarch64" (or "arm") when
    /// the machine's architecture has no such instruction. `None` when
    /// CPUID was read, or merely not asked for on an x86 machine.
    #[serde(default)]
    pub cpuid_absent: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Summary {
    /// Online logical CPUs.
    pub cpus: usize,
    /// CPUs this process may run on (sched_getaffinity) for the live system;
    /// for a snapshot, the online CPUs.
    pub allowed: usize,
    pub packages: usize,
    pub cores: usize,
    /// "1", "2", or "mixed(8x2,8x1)" (count x threads, most threads first).
    pub threads_per_core: String,
    pub core_classes: usize,
    /// Some core has more than one online hardware thread; `None` when
    /// which CPUs share a core is unknown (see `structure_unknown`).
    pub smt: Option<bool>,
    /// Hypervisor signature from CPUID leaf 0x40000000 ("KVMKVMKVM", ...),
    /// or "unknown" when only the hypervisor bit is set; `None` on bare metal
    /// or when CPUID was not read.
    pub hypervisor: Option<String>,
    /// The hypervisor every source that names one agrees on (CPUID and the
    /// files of `environment.hypervisor_sources`), by lscpu's vendor name:
    /// "KVM", "Xen", "Microsoft", "VMware", "IBM", "pHyp", ...; `None`
    /// when none names one or they disagree, and in files saved before it.
    /// Evidence only: it decides no verdict.
    #[serde(default)]
    pub hypervisor_vendor: Option<String>,
    /// Where the CPU/core/package structure came from: "sysfs" or "cpuid".
    #[schemars(extend("enum" = ["sysfs", "cpuid"]))]
    pub structure_from: String,
    /// Why which CPUs share a core is unknown (some CPU's core sibling set
    /// is missing); `None`, and not written, when it is known. Then `smt`
    /// is `None`, `threads_per_core` is "unknown", and `cores` counts
    /// each CPU without a core set as a core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structure_unknown: Option<String>,
}

impl Summary {
    /// "on", "off", or "unknown", as the views say SMT.
    pub fn smt_word(&self) -> &'static str {
        match self.smt {
            Some(true) => "on",
            Some(false) => "off",
            None => "unknown",
        }
    }
}

/// `cpus` by package, then by core within it, each in ascending order: the
/// nesting the topology view and the machine figure draw.
pub fn cores_by_package(cpus: &[CpuEntry]) -> BTreeMap<usize, BTreeMap<usize, Vec<&CpuEntry>>> {
    let mut packages: BTreeMap<usize, BTreeMap<usize, Vec<&CpuEntry>>> = BTreeMap::new();
    for cpu in cpus {
        packages
            .entry(cpu.package)
            .or_default()
            .entry(cpu.core)
            .or_default()
            .push(cpu);
    }
    packages
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CpuEntry {
    pub cpu: u32,
    /// Machine-wide core index, 0.., numbered in order of each core's lowest CPU.
    pub core: usize,
    /// Package index, 0.., numbered in order of each package's lowest CPU.
    pub package: usize,
    /// Die index within the machine, where the kernel publishes dies.
    pub die: Option<usize>,
    /// Cluster index within the machine, where the kernel publishes clusters.
    pub cluster: Option<usize>,
    /// CPUs sharing this CPU's core, itself included.
    pub siblings: CpuSet,
    /// This CPU's core class (the name of an entry of `Topology::classes`).
    pub class: CoreKind,
    /// May this process run here (live system only; true for snapshots).
    pub allowed: bool,
    /// x2APIC (or initial APIC) id from CPUID, when read.
    pub apic_id: Option<u32>,
}

impl CpuEntry {
    /// An allowed uniform-class CPU on `core` of `package`, sharing it with
    /// `siblings`, with no die, cluster or APIC id: what a machine drawn
    /// from a saved document (or built in a test) knows of a CPU.
    pub fn on_core(cpu: u32, core: usize, package: usize, siblings: CpuSet) -> CpuEntry {
        CpuEntry {
            cpu,
            core,
            package,
            die: None,
            cluster: None,
            siblings,
            class: CoreKind::Uniform,
            allowed: true,
            apic_id: None,
        }
    }
}

/// The CPUs of one kind of core.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CoreClass {
    pub name: CoreKind,
    pub cpus: CpuSet,
    /// How the class was found.
    pub source: ClassSource,
    /// The value that separated it, where one did (capacity, kHz, core type).
    pub detail: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Cache {
    pub level: u32,
    /// "Data", "Instruction", "Unified".
    #[serde(rename = "type")]
    pub kind: String,
    pub size_bytes: Option<u64>,
    pub line_bytes: Option<u32>,
    pub ways: Option<u32>,
    /// CPUs sharing this cache instance.
    pub cpus: CpuSet,
}

/// Facts about the running kernel and platform that change what a
/// measurement means. Every field is optional: a snapshot or a container
/// may lack any of them.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Environment {
    pub kernel: Option<String>,
    /// `cpu/smt/control`: on, off, forceoff, notsupported, notimplemented.
    pub smt_control: Option<String>,
    /// `cpu/smt/active`.
    pub smt_active: Option<bool>,
    /// Turbo/boost enabled: from intel_pstate/no_turbo (inverted) or cpufreq/boost.
    pub turbo: Option<bool>,
    /// Which file `turbo` came from.
    pub turbo_source: Option<String>,
    /// scaling_governor of each distinct value, e.g. ["performance"].
    pub governors: Vec<String>,
    pub scaling_driver: Option<String>,
    pub clocksource: Option<String>,
    pub constant_tsc: Option<bool>,
    pub nonstop_tsc: Option<bool>,
    /// "hypervisor" flag in /proc/cpuinfo.
    pub hypervisor_flag: Option<bool>,
    pub perf_event_paranoid: Option<i32>,
    /// A hardware PMU is registered (`/sys/bus/event_source/devices/cpu*`),
    /// with the names found, e.g. ["cpu"] or ["cpu_atom","cpu_core"].
    pub pmu_devices: Vec<String>,
    pub hardware_pmu: bool,
    /// The core PMUs that name their CPUs (`type` and `cpus` files): one
    /// per kind of core on hybrids (`cpu_core`, `cpu_atom`; Arm's
    /// `armv8_pmuv3_0`, `_1`), where a generic hardware event counts only
    /// on the CPUs of one of them unless it names its PMU.
    #[serde(default)]
    pub core_pmus: Vec<CorePmu>,
    pub isolated: CpuSet,
    pub nohz_full: CpuSet,
    /// CPUs this process may run on (live system only).
    pub allowed_cpus: Option<CpuSet>,
    /// `/sys/class/dmi/id/sys_vendor`, `product_name`.
    pub dmi_vendor: Option<String>,
    pub dmi_product: Option<String>,
    /// `model name` from /proc/cpuinfo (first CPU); where cpuinfo has
    /// none (arm64 kernels), the cores the MIDR names, as in
    /// [`MidrReport::cores`], e.g. "ARM Neoverse-N1 r3p1".
    pub model_name: Option<String>,
    /// The device tree's root `compatible` strings, joined with ", "
    /// (`/sys/firmware/devicetree/base/compatible`; Arm boards and VMs booted
    /// with a device tree): "linux,dummy-virt" is QEMU's virt machine.
    #[serde(default)]
    pub devicetree_compatible: Option<String>,
    /// What each file that can name a hypervisor says (see
    /// [`hypervisor`](crate::probe::hypervisor)); empty in files saved
    /// before it.
    #[serde(default)]
    pub hypervisor_sources: Vec<HypervisorSource>,
}

/// The device tree `compatible` of QEMU's `-M virt` board.
const QEMU_VIRT_BOARD: &str = "linux,dummy-virt";

/// A core PMU and the CPUs it counts on.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct CorePmu {
    pub name: String,
    /// Its `type`: what `perf_event_attr.type` (or, for a generic hardware
    /// event, the config's upper 32 bits) names it by.
    pub pmu_type: u32,
    pub cpus: CpuSet,
}

impl Environment {
    /// A virtual board the device tree names: "QEMU's virt machine" for
    /// `linux,dummy-virt`. `None` for real boards and without a device tree.
    pub fn virtual_board(&self) -> Option<&'static str> {
        virtual_board(self.devicetree_compatible.as_deref()?)
    }
}

/// The virtual board a device tree's `compatible` strings (joined with
/// ", ", as [`Environment::devicetree_compatible`] holds them) name.
pub fn virtual_board(compatible: &str) -> Option<&'static str> {
    compatible
        .split(", ")
        .any(|name| name == QEMU_VIRT_BOARD)
        .then_some("QEMU's virt machine")
}

/// What CPUID says, machine-wide and per CPU.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CpuidReport {
    pub vendor: String,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    pub brand: Option<String>,
    /// CPUID.1:ECX\[31\].
    pub hypervisor_bit: bool,
    /// Leaf 0x40000000 signature (e.g. "KVMKVMKVM", "Microsoft Hv",
    /// "VMwareVMware", "XenVMMXenVMM", "TCGTCGTCGTCG").
    pub hypervisor_signature: Option<String>,
    /// Friendly name for the signature: "KVM", "Hyper-V", "VMware", "Xen", "QEMU TCG".
    pub hypervisor_name: Option<String>,
    /// CPUID.7.0:EDX\[15\].
    pub hybrid_bit: bool,
    /// Which leaf the topology came from: "0x1f", "0xb", "0x80000026",
    /// "0x8000001e", "0x80000008/0x1", "0x4/0x1" or "0x1".
    pub topology_leaf: String,
    /// Width of the SMT field, and of everything below the package (SMT,
    /// core, and any module or die levels), in the APIC id.
    pub smt_shift: u32,
    pub core_shift: u32,
    /// TSC frequency in Hz from leaf 0x15 (or 0x16, or the hypervisor leaf 0x40000010).
    pub tsc_hz: Option<u64>,
    pub tsc_hz_source: Option<String>,
    pub crystal_hz: Option<u64>,
    /// Topology derived from the APIC ids alone.
    pub packages: usize,
    pub cores: usize,
    pub threads_per_core: String,
    pub per_cpu: Vec<CpuidCpu>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CpuidCpu {
    /// Logical CPU number (the dump's `puN`, or the CPU it was read on).
    pub cpu: u32,
    pub apic_id: u32,
    /// APIC id >> core_shift.
    pub package_id: u32,
    /// APIC id >> smt_shift (unique core id within the machine).
    pub core_id: u32,
    /// APIC id & ((1 << smt_shift) - 1).
    pub smt_id: u32,
    /// Leaf 0x1A (Intel) or 0x80000026 (AMD) core type: performance (0x40,
    /// Core), efficiency (0x20, Atom), low-power efficiency (an Atom core
    /// with no L3 in leaf 4), or `None` (no type, or an undocumented one).
    pub core_type: Option<CoreKind>,
    /// Raw leaf 0x1A EAX\[31:24\].
    pub core_type_raw: Option<u32>,
}

/// The CPUs' Main ID Register values, grouped: what Arm machines say about
/// their cores where x86 ones have CPUID.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct MidrReport {
    /// Where the values came from: "midr_el1" (each CPU's
    /// `regs/identification/midr_el1`) or "cpuinfo" (the `CPU implementer`,
    /// `CPU variant`, `CPU part` and `CPU revision` lines of /proc/cpuinfo,
    /// on kernels without the sysfs files).
    #[schemars(extend("enum" = ["midr_el1", "cpuinfo"]))]
    pub source: String,
    /// The instruction set the kernel runs: "aarch64" (it publishes
    /// `midr_el1`, or cpuinfo says `CPU architecture: 8`), else "arm".
    #[schemars(extend("enum" = ["aarch64", "arm"]))]
    pub arch: String,
    /// One per distinct (implementer, variant, part, revision), in order
    /// of lowest CPU. Online CPUs the kernel gives no value for are in none.
    pub kinds: Vec<MidrKind>,
}

/// One MIDR value and the CPUs that report it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct MidrKind {
    pub cpus: CpuSet,
    /// The register as read, e.g. "0x413fd0c1"; `None` from cpuinfo, which
    /// has no architecture field to rebuild it with.
    #[schemars(regex(pattern = "^0x[0-9a-f]{8}$"))]
    pub midr: Option<String>,
    /// Bits \[31:24\]: 0x41 for Arm Ltd, 0x61 Apple, 0xc0 Ampere, ...
    #[schemars(range(max = 255))]
    pub implementer: u32,
    /// The implementer's name, where known.
    pub implementer_name: Option<String>,
    /// Bits \[23:20\]: the major revision, the N of rNpM.
    #[schemars(range(max = 15))]
    pub variant: u32,
    /// Bits \[19:16\] (0xf: "see the ID registers"); `None` from cpuinfo.
    #[schemars(range(max = 15))]
    pub architecture: Option<u32>,
    /// Bits \[15:4\]: the implementer's part number, e.g. 0xd0c.
    #[schemars(range(max = 4095))]
    pub part: u32,
    /// The part's name, where known, e.g. "Neoverse-N1"; never a guess.
    pub part_name: Option<String>,
    /// Bits \[3:0\]: the minor revision, the M of rNpM.
    #[schemars(range(max = 15))]
    pub revision: u32,
    /// Human name, e.g. "ARM Neoverse-N1 r3p1"; unknown values in hex:
    /// "implementer 0x99 part 0x123 r0p0".
    pub name: String,
}

/// Does CPUID's sibling structure agree with the kernel's?
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Crosscheck {
    pub agrees: bool,
    /// One human-readable line per disagreement, naming the CPUs, e.g.
    /// "CPUs 0 and 1: sysfs says one core, CPUID says different cores (APIC ids 0x0, 0x2)".
    pub mismatches: Vec<String>,
    /// Which online CPUs were left out, and why (CPUID is read by running
    /// on a CPU, so those outside the process's affinity are not read);
    /// `None`, and not written, when every online CPU was compared.
    /// `agrees` speaks only of the CPUs compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_compared: Option<String>,
}

/// A kind of core, named as users say it. Serialized as that name:
/// "performance", "efficiency", "low-power efficiency", "unknown" (CPUs of
/// a hybrid part that report no core type), "uniform" (the one class of a
/// machine with one kind of core), "class N" (the Nth fastest of more kinds
/// than have names, told apart by capacity or frequency; or, for Arm core
/// designs that nothing ranks, the Nth in MIDR part-number order, from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CoreKind {
    Performance,
    Efficiency,
    LowPowerEfficiency,
    Unknown,
    Uniform,
    /// Rank, 0 fastest; only ranks past the named ones (3 and up) are used,
    /// except for unranked MIDR classes, numbered from 0 in part order.
    Ranked(usize),
}

impl CoreKind {
    /// Every kind with a name of its own (not `class N`).
    pub const NAMED: [CoreKind; 5] = [
        CoreKind::Performance,
        CoreKind::Efficiency,
        CoreKind::LowPowerEfficiency,
        CoreKind::Unknown,
        CoreKind::Uniform,
    ];

    /// Kinds by speed rank, fastest first, for classes told apart by
    /// capacity or frequency: the three named ones, then "class N".
    pub fn by_rank(rank: usize) -> CoreKind {
        match rank {
            0 => CoreKind::Performance,
            1 => CoreKind::Efficiency,
            2 => CoreKind::LowPowerEfficiency,
            rank => CoreKind::Ranked(rank),
        }
    }
}

/// The name, padded as the formatter asks (`{:<22}` in tables).
impl fmt::Display for CoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            CoreKind::Performance => "performance",
            CoreKind::Efficiency => "efficiency",
            CoreKind::LowPowerEfficiency => "low-power efficiency",
            CoreKind::Unknown => "unknown",
            CoreKind::Uniform => "uniform",
            CoreKind::Ranked(rank) => return f.pad(&format!("class {rank}")),
        })
    }
}

impl FromStr for CoreKind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if let Some(kind) = CoreKind::NAMED
            .into_iter()
            .find(|kind| kind.to_string() == text)
        {
            return Ok(kind);
        }
        text.strip_prefix("class ")
            .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse().ok())
            .map(CoreKind::Ranked)
            .ok_or_else(|| {
                format!(
                    "unknown core class '{}' (expected performance, efficiency, low-power efficiency, unknown, uniform or class N)",
                    crate::cpuset::excerpt(text)
                )
            })
    }
}

impl Serialize for CoreKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Written by hand, as its Serialize is: the name [`fmt::Display`] writes,
/// one of the named kinds or `class N`.
impl schemars::JsonSchema for CoreKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CoreKind".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let named: Vec<String> = CoreKind::NAMED.iter().map(CoreKind::to_string).collect();
        schemars::json_schema!({
            "description": "A kind of core: performance, efficiency, low-power efficiency, unknown, uniform, or class N (the Nth fastest past the named ones; for Arm designs the MIDR tier table cannot rank, the Nth from 0 in part-number order).",
            "type": "string",
            "pattern": format!("^({}|class [0-9]+)$", named.join("|")),
        })
    }
}

impl<'de> Deserialize<'de> for CoreKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// How a core class was found, serialized as the names saved files use.
/// Each name is spelled once, in its `strum` attribute: [`ClassSource::name`],
/// `Display`, `FromStr` and serde all read it.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantArray,
)]
pub enum ClassSource {
    /// The hybrid PMUs the kernel registers (cpu_core, cpu_atom, cpu_lowpower).
    #[strum(serialize = "sysfs-pmu")]
    SysfsPmu,
    /// Intel's CPUID leaf 0x1A core type.
    #[strum(serialize = "cpuid-0x1a")]
    CpuidLeaf1a,
    /// AMD's CPUID leaf 0x80000026 core type.
    #[strum(serialize = "cpuid-0x80000026")]
    CpuidLeaf80000026,
    /// The kernel's `cpu_capacity` (Arm big.LITTLE).
    #[strum(serialize = "cpu_capacity")]
    CpuCapacity,
    /// cpufreq maximum and base frequencies.
    #[strum(serialize = "cpufreq")]
    Cpufreq,
    /// Different MIDR part numbers (Arm cores of several designs, whatever
    /// capacities the kernel gives them), ranked by design tier, then
    /// capacity.
    #[strum(serialize = "midr")]
    Midr,
    /// One kind of core: nothing told CPUs apart.
    #[strum(serialize = "uniform")]
    Uniform,
}

impl ClassSource {
    /// The name saved files use, e.g. "cpuid-0x1a".
    pub fn name(self) -> &'static str {
        self.into()
    }
}

impl Serialize for ClassSource {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// Written by hand, as its Serialize is: one of the names [`ClassSource::name`]
/// gives.
impl schemars::JsonSchema for ClassSource {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ClassSource".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = <ClassSource as strum::VariantArray>::VARIANTS
            .iter()
            .map(|source| source.name())
            .collect();
        schemars::json_schema!({
            "description": "How a core class was found.",
            "type": "string",
            "enum": names,
        })
    }
}

impl<'de> Deserialize<'de> for ClassSource {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(|_| {
            let names: Vec<&str> = <ClassSource as strum::VariantArray>::VARIANTS
                .iter()
                .map(|source| source.name())
                .collect();
            serde::de::Error::custom(format!(
                "unknown class source '{}' (expected {})",
                crate::cpuset::excerpt(&text),
                names.join(", ")
            ))
        })
    }
}

/// The saved name, padded as the formatter asks.
impl fmt::Display for ClassSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Where CPUID comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuidSource {
    /// The instruction itself, executed on each CPU in turn.
    Live,
    /// A hwloc-gather-cpuid dump folder (`--cpuid-dump DIR`).
    Dump(PathBuf),
    /// The dump a snapshot document holds (its `cpuid/` records), read
    /// through the document's [`SysfsRoot`](crate::probe::SysfsRoot); the path names the document.
    Recorded(PathBuf),
}

/// Prints "live" or the dump folder, as `ProbeSource::cpuid` records it.
impl fmt::Display for CpuidSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuidSource::Live => f.write_str("live"),
            CpuidSource::Dump(dir) => write!(f, "{}", dir.display()),
            CpuidSource::Recorded(document) => {
                write!(f, "{}: {}", document.display(), CPUID_DIR)
            }
        }
    }
}

/// Reads and decodes CPUID (see `cpuid::read_report_in`).
/// "2" when every core has two threads; "mixed(6x2,8x1)" (cores x threads,
/// most threads first) otherwise.
pub(crate) fn describe_threads_per_core(threads: impl Iterator<Item = usize>) -> String {
    let mut cores_by_threads: BTreeMap<Reverse<usize>, usize> = BTreeMap::new();
    for count in threads {
        *cores_by_threads.entry(Reverse(count)).or_default() += 1;
    }
    if cores_by_threads.is_empty() {
        return "0".into();
    }
    if cores_by_threads.len() == 1 {
        if let Some(Reverse(threads)) = cores_by_threads.keys().next() {
            return threads.to_string();
        }
    }
    let parts: Vec<String> = cores_by_threads
        .iter()
        .map(|(Reverse(threads), cores)| format!("{cores}x{threads}"))
        .collect();
    format!("mixed({})", parts.join(","))
}

/// The machine saved as `fixtures/sysfs/NAME`, probed (for unit tests of
/// the layers above, which plan and judge on saved machines).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_qemus_virt_board_is_named_virtual() {
        let board = |compatible: Option<&str>| {
            Environment {
                devicetree_compatible: compatible.map(str::to_owned),
                ..Environment::default()
            }
            .virtual_board()
        };
        assert_eq!(board(Some("linux,dummy-virt")), Some("QEMU's virt machine"));
        assert_eq!(board(Some("nvidia,p2771-0000, nvidia,tegra186")), None);
        assert_eq!(board(Some("linux,dummy-virt-not")), None);
        assert_eq!(board(None), None);
    }

    #[test]
    fn core_kinds_serialize_as_their_names() {
        for (kind, name) in [
            (CoreKind::Performance, "performance"),
            (CoreKind::Efficiency, "efficiency"),
            (CoreKind::LowPowerEfficiency, "low-power efficiency"),
            (CoreKind::Unknown, "unknown"),
            (CoreKind::Uniform, "uniform"),
            (CoreKind::Ranked(3), "class 3"),
        ] {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<CoreKind>(&json).unwrap(), kind);
            assert_eq!(kind.to_string(), name);
        }
        assert_eq!(format!("{:<8}|", CoreKind::Ranked(4)), "class 4 |");
        for bad in [
            "\"fast\"",
            "\"class \"",
            "\"class -1\"",
            "\"class +1\"",
            "3",
        ] {
            assert!(serde_json::from_str::<CoreKind>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn class_sources_serialize_as_their_names() {
        let names: Vec<String> = <ClassSource as strum::VariantArray>::VARIANTS
            .iter()
            .map(|source| serde_json::to_string(source).unwrap())
            .collect();
        // The saved files' names: changing one is a schema change.
        assert_eq!(
            names,
            [
                "\"sysfs-pmu\"",
                "\"cpuid-0x1a\"",
                "\"cpuid-0x80000026\"",
                "\"cpu_capacity\"",
                "\"cpufreq\"",
                "\"midr\"",
                "\"uniform\""
            ]
        );
        for source in <ClassSource as strum::VariantArray>::VARIANTS {
            let json = serde_json::to_string(source).unwrap();
            assert_eq!(json, format!("\"{source}\""));
            assert_eq!(serde_json::from_str::<ClassSource>(&json).unwrap(), *source);
        }
        let error = serde_json::from_str::<ClassSource>("\"cpuid\"").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("unknown class source 'cpuid' (expected sysfs-pmu, "),
            "{error}"
        );
    }
}
