//! Decoding one CPU's CPUID into the facts `topology` reports.
//!
//! raw-cpuid decodes the vendor, feature bits, brand string and frequency
//! leaves. The topology leaves (0xB, 0x1F, 0x8000_0026, 0x8000_001E) are
//! parsed here from raw subleaves: raw-cpuid panics on level types above 5,
//! which real 0x1F leaves report (die, die group). The choice of leaf and the
//! legacy fallbacks follow hwloc's `topology-x86.c`, so a dump gives the
//! packages and cores hwloc finds in it.

use raw_cpuid::{CpuId, CpuIdReader, CpuIdResult};

/// First leaf of the hypervisor range (present when CPUID.1:ECX[31] is set).
pub(super) const HYPERVISOR_BASE: u32 = 0x4000_0000;
/// First leaf of the extended range; its EAX is the highest extended leaf.
pub(super) const EXTENDED_BASE: u32 = 0x8000_0000;

/// The vendors whose CPUID layouts differ in ways the decoder cares about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vendor {
    Intel,
    Amd,
    /// Hygon Dhyana: AMD Zen under another name, with AMD's leaves.
    Hygon,
    /// Zhaoxin ("CentaurHauls", "  Shanghai  "): Intel's leaves.
    Zhaoxin,
    Other,
}

impl Vendor {
    fn from_id(id: &str) -> Self {
        match id {
            "GenuineIntel" => Vendor::Intel,
            "AuthenticAMD" => Vendor::Amd,
            "HygonGenuine" => Vendor::Hygon,
            "CentaurHauls" | "  Shanghai  " => Vendor::Zhaoxin,
            _ => Vendor::Other,
        }
    }

    fn has_amd_leaves(self) -> bool {
        matches!(self, Vendor::Amd | Vendor::Hygon)
    }
}

/// Where a CPU sits, read from its APIC id: the id's low `smt_shift` bits
/// number threads within a core, the bits below `package_shift` number
/// threads within a package.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApicLayout {
    pub apic_id: u32,
    pub smt_shift: u32,
    pub package_shift: u32,
    /// The leaf the layout came from, as `CpuidReport::topology_leaf` names it.
    pub leaf: &'static str,
}

/// A hybrid part's per-CPU core type, in its vendor's encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreType {
    /// Intel leaf 0x1A EAX[31:24]: 0x20 Atom (E-core), 0x40 Core (P-core).
    Intel(u32),
    /// AMD leaf 0x8000_0026 EBX[31:28]: 0 performance, 1 efficiency.
    Amd(u32),
}

#[derive(Clone, Debug, PartialEq)]
pub struct TscFrequency {
    pub hz: u64,
    pub source: &'static str,
    pub crystal_hz: Option<u64>,
}

/// Everything decoded from one CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuFacts {
    pub vendor_id: String,
    pub vendor: Vendor,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    pub brand: Option<String>,
    pub hypervisor_bit: bool,
    /// Leaf 0x4000_0000 EBX:ECX:EDX, NULs removed.
    pub hypervisor_signature: Option<String>,
    pub hybrid_bit: bool,
    pub layout: ApicLayout,
    pub core_type: Option<CoreType>,
    /// Deepest cache level leaf 4 lists (Intel-style leaves only).
    pub deepest_cache_level: Option<u32>,
    pub tsc: Option<TscFrequency>,
}

/// Decodes one CPU. Never fails: a leaf the CPU lacks reads as zeros and
/// decodes to "unknown" (`None`) or to the next fallback.
pub fn decode_cpu<R: CpuIdReader>(reader: R) -> CpuFacts {
    let cpuid = CpuId::with_cpuid_reader(reader.clone());
    let leaves = Leaves::new(reader);

    let vendor_id = cpuid
        .get_vendor_info()
        .map(|v| v.as_str().to_string())
        .unwrap_or_default();
    let vendor = Vendor::from_id(&vendor_id);
    let features = cpuid.get_feature_info();
    let signature = leaves.get(1, 0).eax;
    let (family, model) = family_and_model(vendor, signature);
    let hypervisor_bit = features.as_ref().is_some_and(|f| f.has_hypervisor());
    let hybrid_bit = leaves.basic(7, 0).is_some_and(|r| r.edx & (1 << 15) != 0);

    CpuFacts {
        family,
        model,
        stepping: signature & 0xf,
        brand: cpuid
            .get_processor_brand_string()
            .map(|b| b.as_str().to_string())
            .filter(|b| !b.is_empty()),
        hypervisor_bit,
        hypervisor_signature: hypervisor_bit
            .then(|| hypervisor_signature(&leaves))
            .flatten(),
        hybrid_bit,
        layout: apic_layout(&leaves, vendor, family),
        core_type: core_type(&leaves, vendor, hybrid_bit),
        deepest_cache_level: (!vendor.has_amd_leaves())
            .then(|| deepest_cache_level(&leaves))
            .flatten(),
        tsc: tsc_frequency(&cpuid, hypervisor_bit),
        vendor_id,
        vendor,
    }
}

/// Raw access to one CPU's leaves, knowing which ones it implements.
struct Leaves<R> {
    reader: R,
    max_basic: u32,
    max_extended: u32,
}

impl<R: CpuIdReader> Leaves<R> {
    fn new(reader: R) -> Self {
        let max_basic = reader.cpuid2(0, 0).eax;
        let max_extended = reader.cpuid2(EXTENDED_BASE, 0).eax;
        Leaves {
            reader,
            max_basic,
            max_extended,
        }
    }

    fn get(&self, leaf: u32, subleaf: u32) -> CpuIdResult {
        self.reader.cpuid2(leaf, subleaf)
    }

    /// A basic leaf, if this CPU's leaf 0 says it implements it.
    fn basic(&self, leaf: u32, subleaf: u32) -> Option<CpuIdResult> {
        (leaf <= self.max_basic).then(|| self.get(leaf, subleaf))
    }

    /// An extended leaf, if this CPU's leaf 0x8000_0000 says it implements it.
    fn extended(&self, leaf: u32, subleaf: u32) -> Option<CpuIdResult> {
        (EXTENDED_BASE..=self.max_extended)
            .contains(&leaf)
            .then(|| self.get(leaf, subleaf))
    }

    fn has_topology_extensions(&self) -> bool {
        self.extended(0x8000_0001, 0)
            .is_some_and(|r| r.ecx & (1 << 22) != 0)
    }
}

/// Display family and model from leaf 1 EAX, with the extended-field rules
/// each vendor documents (and hwloc applies).
fn family_and_model(vendor: Vendor, signature: u32) -> (u32, u32) {
    let base_family = (signature >> 8) & 0xf;
    let extended_family = (signature >> 20) & 0xff;
    let base_model = (signature >> 4) & 0xf;
    let extended_model = (signature >> 16) & 0xf;
    let uses_extended_family =
        base_family == 0xf && matches!(vendor, Vendor::Intel | Vendor::Amd | Vendor::Hygon);
    let uses_extended_model = match vendor {
        Vendor::Intel => base_family == 0x6 || base_family == 0xf,
        Vendor::Amd | Vendor::Hygon => base_family == 0xf,
        Vendor::Zhaoxin => base_family == 0x6 || base_family == 0x7,
        Vendor::Other => false,
    };
    let family = if uses_extended_family {
        base_family + extended_family
    } else {
        base_family
    };
    let model = if uses_extended_model {
        base_model | extended_model << 4
    } else {
        base_model
    };
    (family, model)
}

fn hypervisor_signature<R: CpuIdReader>(leaves: &Leaves<R>) -> Option<String> {
    let r = leaves.get(HYPERVISOR_BASE, 0);
    let bytes: Vec<u8> = [r.ebx, r.ecx, r.edx]
        .iter()
        .flat_map(|register| register.to_le_bytes())
        .filter(|&byte| byte != 0)
        .collect();
    let signature = String::from_utf8_lossy(&bytes).into_owned();
    (!signature.is_empty()).then_some(signature)
}

/// The hypervisor a signature names, as users call it.
pub fn hypervisor_name(signature: &str) -> &'static str {
    match signature {
        "KVMKVMKVM" | "Linux KVM Hv" => "KVM",
        "Microsoft Hv" => "Hyper-V",
        "VMwareVMware" => "VMware",
        "XenVMMXenVMM" => "Xen",
        "TCGTCGTCGTCG" => "QEMU TCG",
        "bhyve bhyve " | "BHyVE BHyVE " => "bhyve",
        "ACRNACRNACRN" => "ACRN",
        " lrpepyh  vr" | "prl hyperv  " => "Parallels",
        "VBoxVBoxVBox" => "VirtualBox",
        "QNXQVMBSQG" => "QNX",
        "UnisysSpar64" => "Unisys s-Par",
        "Jailhouse" => "Jailhouse",
        "VirtualApple" => "Apple Rosetta",
        _ => "unknown",
    }
}

/// Picks the most precise topology leaf this CPU implements, like hwloc:
/// AMD 0x8000_0026, then 0x1F, then 0xB, then AMD's 0x8000_001E, then the
/// legacy leaf-1 APIC id split by AMD 0x8000_0008 or Intel leaf 4.
fn apic_layout<R: CpuIdReader>(leaves: &Leaves<R>, vendor: Vendor, family: u32) -> ApicLayout {
    let extended_levels = [
        (vendor == Vendor::Amd).then_some((0x8000_0026, "0x80000026")),
        Some((0x1f, "0x1f")),
        Some((0xb, "0xb")),
    ];
    for (leaf, name) in extended_levels.into_iter().flatten() {
        if let Some(layout) = extended_topology(leaves, leaf, name) {
            return layout;
        }
    }
    if vendor.has_amd_leaves() {
        if let Some(layout) = amd_topology_extensions(leaves, family) {
            return layout;
        }
        if let Some(layout) = amd_legacy(leaves) {
            return layout;
        }
    }
    legacy_leaf1(leaves, vendor)
}

/// Leaves 0xB, 0x1F and 0x8000_0026 share one layout: subleaf N describes
/// level N from the bottom (type in ECX[15:8]: 1 SMT, 2 core, then module,
/// tile, die...; the shift to the next level in EAX[4:0]); the x2APIC id is in
/// EDX. The walk ends at an invalid level (type 0) or one with no logical
/// processors (EBX[15:0] = 0), which is what Intel and AMD respectively
/// specify.
fn extended_topology<R: CpuIdReader>(
    leaves: &Leaves<R>,
    leaf: u32,
    name: &'static str,
) -> Option<ApicLayout> {
    let implemented = if leaf >= EXTENDED_BASE {
        leaves.extended(leaf, 0).is_some()
    } else {
        leaves.basic(leaf, 0).is_some()
    };
    if !implemented {
        return None;
    }
    let mut layout: Option<ApicLayout> = None;
    for subleaf in 0..32 {
        let r = leaves.get(leaf, subleaf);
        let level_type = (r.ecx >> 8) & 0xff;
        if level_type == 0 || r.ebx & 0xffff == 0 {
            break;
        }
        let shift = r.eax & 0x1f;
        let layout = layout.get_or_insert(ApicLayout {
            apic_id: r.edx,
            smt_shift: 0,
            package_shift: 0,
            leaf: name,
        });
        if level_type == 1 {
            layout.smt_shift = shift;
        }
        layout.package_shift = shift;
    }
    layout
}

/// AMD topology extensions (leaf 0x8000_001E): the extended APIC id in EAX;
/// from family 17h, threads per core in EBX[15:8]. On families 15h-16h,
/// EBX counts cores per compute unit instead, and each of those is a core
/// (hwloc makes each a Core sharing L2 and L1i), so no APIC bits are SMT.
/// Bits per package come from leaf 0x8000_0008.
fn amd_topology_extensions<R: CpuIdReader>(leaves: &Leaves<R>, family: u32) -> Option<ApicLayout> {
    if !leaves.has_topology_extensions() {
        return None;
    }
    let r = leaves.extended(0x8000_001e, 0)?;
    let smt_shift = if family >= 0x17 {
        bits_for(((r.ebx >> 8) & 0xff) + 1)
    } else {
        0
    };
    Some(ApicLayout {
        apic_id: r.eax,
        smt_shift,
        package_shift: amd_package_shift(leaves)?.max(smt_shift),
        leaf: "0x8000001e",
    })
}

/// Pre-topology-extension AMD: leaf 1's 8-bit APIC id, one thread per core,
/// 0x8000_0008 for the cores per package.
fn amd_legacy<R: CpuIdReader>(leaves: &Leaves<R>) -> Option<ApicLayout> {
    Some(ApicLayout {
        apic_id: leaves.get(1, 0).ebx >> 24,
        smt_shift: 0,
        package_shift: amd_package_shift(leaves)?,
        leaf: "0x80000008/0x1",
    })
}

/// Leaf 0x8000_0008 ECX: ApicIdSize in [15:12], or when that is 0, the core
/// count minus one in [7:0].
fn amd_package_shift<R: CpuIdReader>(leaves: &Leaves<R>) -> Option<u32> {
    let ecx = leaves.extended(0x8000_0008, 0)?.ecx;
    let apic_id_size = (ecx >> 12) & 0xf;
    Some(if apic_id_size != 0 {
        apic_id_size
    } else {
        bits_for((ecx & 0xff) + 1)
    })
}

/// Parts without leaf 0xB: leaf 1's 8-bit APIC id, EBX[23:16] logical
/// processors per package (when EDX.HTT says the field is valid), and on
/// Intel-style parts leaf 4 EAX[31:26] + 1 cores per package; the rest of
/// each package's ids are threads.
fn legacy_leaf1<R: CpuIdReader>(leaves: &Leaves<R>, vendor: Vendor) -> ApicLayout {
    let leaf1 = leaves.get(1, 0);
    let has_htt = leaf1.edx & (1 << 28) != 0;
    let logical_per_package = if has_htt {
        ((leaf1.ebx >> 16) & 0xff).max(1)
    } else {
        1
    };
    let package_ids = logical_per_package.next_power_of_two();
    let package_shift = bits_for(package_ids);
    let apic_id = leaf1.ebx >> 24;
    let leaf4 = leaves
        .basic(4, 0)
        .filter(|r| r.eax & 0x1f != 0 && !vendor.has_amd_leaves());
    match leaf4 {
        Some(r) => {
            let cores = ((r.eax >> 26) & 0x3f) + 1;
            let threads_per_core = (package_ids / cores).max(1);
            ApicLayout {
                apic_id,
                smt_shift: bits_for(threads_per_core),
                package_shift,
                leaf: "0x4/0x1",
            }
        }
        // Intel before leaf 4 had one core per package: extra logical
        // processors are Hyper-Threads. Others: assume cores.
        None => ApicLayout {
            apic_id,
            smt_shift: if vendor == Vendor::Intel {
                package_shift
            } else {
                0
            },
            package_shift,
            leaf: "0x1",
        },
    }
}

/// Bits needed to number `count` things (ceil(log2(count))).
fn bits_for(count: u32) -> u32 {
    count.max(1).next_power_of_two().trailing_zeros()
}

/// Intel hybrids (CPUID.7:EDX[15]) report the core type in leaf 0x1A;
/// AMD heterogeneous parts in 0x8000_0026's SMT level (EAX[30] set).
fn core_type<R: CpuIdReader>(
    leaves: &Leaves<R>,
    vendor: Vendor,
    hybrid_bit: bool,
) -> Option<CoreType> {
    if vendor == Vendor::Amd {
        let r = leaves.extended(0x8000_0026, 0)?;
        let heterogeneous = r.eax & (1 << 30) != 0;
        return heterogeneous.then_some(CoreType::Amd(r.ebx >> 28));
    }
    if !hybrid_bit {
        return None;
    }
    let raw = leaves.basic(0x1a, 0)?.eax >> 24;
    (raw != 0).then_some(CoreType::Intel(raw))
}

/// Deepest cache level in leaf 4's list (which ends at a null type).
fn deepest_cache_level<R: CpuIdReader>(leaves: &Leaves<R>) -> Option<u32> {
    leaves.basic(4, 0)?;
    (0..16)
        .map(|subleaf| leaves.get(4, subleaf).eax)
        .take_while(|eax| eax & 0x1f != 0)
        .map(|eax| (eax >> 5) & 0x7)
        .max()
}

/// TSC frequency: the hypervisor's own timing leaf when there is one (the
/// guest's TSC is what the host made it), else leaf 0x15's crystal ratio,
/// else the 0x16 base frequency (the TSC runs at base on parts with an
/// invariant TSC), deriving the crystal from the 0x15 ratio where it can.
fn tsc_frequency<R: CpuIdReader>(cpuid: &CpuId<R>, hypervisor_bit: bool) -> Option<TscFrequency> {
    if hypervisor_bit {
        let khz = cpuid
            .get_hypervisor_info()
            .and_then(|h| h.tsc_frequency())
            .filter(|&k| k != 0);
        if let Some(khz) = khz {
            return Some(TscFrequency {
                hz: u64::from(khz) * 1000,
                source: "cpuid-0x40000010",
                crystal_hz: None,
            });
        }
    }
    let ratio = cpuid
        .get_tsc_info()
        .filter(|t| t.numerator() != 0 && t.denominator() != 0)
        .map(|t| {
            (
                u64::from(t.numerator()),
                u64::from(t.denominator()),
                u64::from(t.nominal_frequency()),
            )
        });
    if let Some((numerator, denominator, crystal_hz)) = ratio.filter(|r| r.2 != 0) {
        return Some(TscFrequency {
            hz: crystal_hz * numerator / denominator,
            source: "cpuid-0x15",
            crystal_hz: Some(crystal_hz),
        });
    }
    let base_mhz = cpuid
        .get_processor_frequency_info()
        .map(|f| f.processor_base_frequency())
        .filter(|&m| m != 0)?;
    let hz = u64::from(base_mhz) * 1_000_000;
    Some(TscFrequency {
        hz,
        source: "cpuid-0x16",
        crystal_hz: ratio
            .and_then(|(numerator, denominator, _)| Some(hz.checked_mul(denominator)? / numerator)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extended_family_and_model_follow_each_vendor() {
        // Skylake-SP 0x50654: family 6 takes the extended model.
        assert_eq!(family_and_model(Vendor::Intel, 0x50654), (0x6, 0x55));
        // Zen 3 0xa00f11: family 0xf + 0xa.
        assert_eq!(family_and_model(Vendor::Amd, 0xa00f11), (0x19, 0x1));
        // Knights Corner 0xb13: family 0xb, no extended model.
        assert_eq!(family_and_model(Vendor::Intel, 0xb13), (0xb, 0x1));
        // Zhaoxin KH-40000 0x507bb: family 7 takes the extended model.
        assert_eq!(family_and_model(Vendor::Zhaoxin, 0x507bb), (0x7, 0x5b));
    }

    #[test]
    fn bits_round_up() {
        assert_eq!(
            [0, 1, 2, 3, 4, 6, 62, 64].map(bits_for),
            [0, 0, 1, 2, 2, 3, 6, 6]
        );
    }

    #[test]
    fn hypervisor_names() {
        assert_eq!(hypervisor_name("KVMKVMKVM"), "KVM");
        assert_eq!(hypervisor_name(" lrpepyh  vr"), "Parallels");
        // lscpu names s-Par by its CPUID signature.
        assert_eq!(hypervisor_name("UnisysSpar64"), "Unisys s-Par");
        assert_eq!(hypervisor_name("SomethingNew"), "unknown");
    }
}
