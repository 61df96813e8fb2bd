//! Which hypervisor the machine's own files name, source by source: the
//! `hypervisor` flag in /proc/cpuinfo, `/sys/hypervisor/type`, the DMI
//! vendor and product names, the device tree (QEMU's boards, KVM on Arm
//! and POWER, PowerVM partitions, `/proc/ppc64/lparcfg`), s390's
//! `/proc/sysinfo` and `/proc/xen`. These are the files lscpu and
//! systemd-detect-virt read; reading them through the [`SysfsRoot`] seam
//! makes them work from a snapshot and on every architecture, where CPUID
//! exists only on x86.
//!
//! Identity is evidence, never a verdict: a Surface laptop's DMI says
//! Microsoft and a GCE bare-metal machine's says Google. What is named
//! here is shown and put in notes; whether a sibling map is physical is
//! for a measurement to say.

use crate::probe::sysfs::SysfsRoot;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// What one file says about the hypervisor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HypervisorSource {
    /// The file read, as its path on the machine: "/sys/hypervisor/type".
    pub file: String,
    /// What it says, as read (trimmed, one line): "xen", "VMware, Inc.".
    pub says: String,
    /// The hypervisor it names, by lscpu's vendor name ("KVM", "Xen",
    /// "Microsoft", "VMware", "IBM", "pHyp", "Innotek GmbH", "Parallels";
    /// "QEMU" for a QEMU-made machine that does not say whether KVM runs
    /// it); `None` when it names none.
    pub names: Option<String>,
    /// Does it say this is a guest (`Some(true)`), or that it is not
    /// (`Some(false)`: the cpuinfo flag clear, Xen's control domain dom0)?
    /// `None` when it says neither.
    pub guest: Option<bool>,
}

/// The device tree, where Linux publishes it, and the link to it that
/// lscpu reads (where a snapshot has only that).
const DEVICE_TREE: &str = "sys/firmware/devicetree/base";
const PROC_DEVICE_TREE: &str = "proc/device-tree";

/// The DMI files read, in systemd-detect-virt's order (product name first:
/// "KVM" there beats "QEMU" in the vendor).
pub const DMI_FILES: [&str; 4] = [
    "sys/class/dmi/id/product_name",
    "sys/class/dmi/id/sys_vendor",
    "sys/class/dmi/id/board_vendor",
    "sys/class/dmi/id/bios_vendor",
];

/// Every file [`read_sources`] may read besides /proc/cpuinfo, the kernel's
/// `osrelease`, the reading process's `status` and the DMI files: what a
/// folder snapshot copies (with the folders of [`SOURCE_FOLDERS`], which
/// say what they say by existing).
pub const SOURCE_FILES: [&str; 11] = [
    "sys/hypervisor/type",
    "proc/bus/pci/devices",
    "sys/firmware/devicetree/base/compatible",
    "sys/firmware/devicetree/base/hypervisor/compatible",
    "sys/firmware/devicetree/base/ibm,partition-name",
    "sys/firmware/devicetree/base/hmc-managed?",
    "sys/firmware/devicetree/base/chosen/qemu,graphic-width",
    "proc/ppc64/lparcfg",
    "proc/powerpc/lparcfg",
    "proc/sysinfo",
    "proc/xen/capabilities",
];

/// The folders that are evidence by existing: `/proc/xen` (a Xen domain),
/// `/proc/vz` without `/proc/bc` (an OpenVZ or Virtuozzo container).
pub const SOURCE_FOLDERS: [&str; 3] = ["proc/xen", "proc/vz", "proc/bc"];

/// lscpu's PCI devices that name a hypervisor (vendor, device): each
/// hypervisor's emulated display, as lscpu's `hv_graphics_pci` table.
const PCI_DISPLAYS: [(u16, u16, &str, &str); 3] = [
    (0x5853, 0x0001, "Xen", "Xen platform display"),
    (0x15ad, 0x0710, "VMware", "VMware SVGA display"),
    (0x80ee, 0xbeef, "Innotek GmbH", "VirtualBox display"),
];

/// DMI value prefixes that name a hypervisor: systemd-detect-virt's table
/// (src/basic/virt.c), each under lscpu's vendor name. The clouds that run
/// KVM (EC2 Nitro, GCE, OpenStack, KubeVirt) name KVM, as lscpu's CPUID
/// does there. Left out: "Oracle Corporation", which Oracle's own servers
/// carry too, and Microsoft, which needs two files (see [`dmi_names`]).
const DMI_TABLE: [(&str, &str); 15] = [
    ("KVM", "KVM"),
    ("OpenStack", "KVM"),
    ("KubeVirt", "KVM"),
    ("Amazon EC2", "KVM"),
    // GCE's vendor, and the start of its product name "Google Compute Engine".
    ("Google", "KVM"),
    ("QEMU", "QEMU"),
    ("Bochs", "QEMU"),
    ("VMware", "VMware"),
    ("VMW", "VMware"),
    ("innotek GmbH", "Innotek GmbH"),
    ("VirtualBox", "Innotek GmbH"),
    ("Xen", "Xen"),
    ("Parallels", "Parallels"),
    ("BHYVE", "bhyve"),
    ("Apple Virtualization", "Apple"),
];

/// Reads every file source under `root`; `cpuinfo_flag` is the
/// `hypervisor` flag of /proc/cpuinfo's first CPU (`None` without a flags
/// line, as on every architecture but x86), `model_name` its model name.
/// Absent files add nothing.
pub fn read_sources(
    root: &SysfsRoot,
    cpuinfo_flag: Option<bool>,
    model_name: Option<&str>,
) -> Result<Vec<HypervisorSource>> {
    let mut sources = Vec::new();
    if let Some(set) = cpuinfo_flag {
        sources.push(HypervisorSource {
            file: "/proc/cpuinfo".into(),
            says: if set {
                "hypervisor flag set"
            } else {
                "no hypervisor flag"
            }
            .into(),
            names: None,
            guest: Some(set),
        });
    }
    if let Some(kind) = root.read_value("sys/hypervisor/type")? {
        sources.push(source("sys/hypervisor/type", &kind, hypervisor_type(&kind)));
    }
    let dmi = read_dmi(root)?;
    for (file, value) in DMI_FILES.iter().zip(&dmi) {
        if let Some(value) = value {
            let names = dmi_names(file, value, &dmi);
            sources.push(source(file, value, names));
        }
    }
    sources.extend(device_tree_sources(root)?);
    if let Some(lparcfg) = read_first(root, &["proc/ppc64/lparcfg", "proc/powerpc/lparcfg"])? {
        let (file, text) = lparcfg;
        sources.push(HypervisorSource {
            file: format!("/{file}"),
            says: describe_lparcfg(&text),
            names: None,
            // Only a pseries partition (PowerVM or KVM) has one.
            guest: Some(true),
        });
    }
    if let Some(sysinfo) = root.read_text("proc/sysinfo")? {
        let (says, names) = sysinfo_control_program(&sysinfo);
        sources.push(HypervisorSource {
            file: "/proc/sysinfo".into(),
            guest: names.map(|_| true),
            names: names.map(str::to_owned),
            says,
        });
    }
    if root.exists("proc/xen") {
        sources.push(xen_source(root.read_value("proc/xen/capabilities")?));
    }
    sources.extend(lscpu_only_sources(root, model_name)?);
    Ok(sources)
}

/// The sources lscpu reads that systemd-detect-virt's files above do not
/// cover: an emulated display on the PCI bus, WSL's kernel release, an
/// OpenVZ container's `/proc/vz`, User-mode Linux's model name and a
/// Linux-VServer context in the process's status.
fn lscpu_only_sources(root: &SysfsRoot, model_name: Option<&str>) -> Result<Vec<HypervisorSource>> {
    let mut sources = Vec::new();
    if let Some(devices) = root.read_text("proc/bus/pci/devices")? {
        sources.extend(pci_display(&devices).map(|(says, names)| HypervisorSource {
            file: "/proc/bus/pci/devices".into(),
            says,
            names: Some(names.into()),
            guest: Some(true),
        }));
    }
    if let Some(release) = root.read_value("proc/sys/kernel/osrelease")?
        && release.contains("Microsoft")
    {
        sources.push(HypervisorSource {
            file: "/proc/sys/kernel/osrelease".into(),
            says: format!("{} (Windows Subsystem for Linux)", one_line(&release)),
            names: Some(WSL.into()),
            guest: Some(true),
        });
    }
    if root.exists("proc/vz") && !root.exists("proc/bc") {
        sources.push(HypervisorSource {
            file: "/proc/vz".into(),
            says: "an OpenVZ or Virtuozzo container (/proc/vz without /proc/bc)".into(),
            names: Some("Parallels".into()),
            guest: None,
        });
    }
    if let Some(model) = model_name.filter(|model| model.contains("UML")) {
        sources.push(HypervisorSource {
            file: "/proc/cpuinfo".into(),
            says: format!("model name {} (User-mode Linux)", one_line(model)),
            names: Some("User-mode Linux".into()),
            guest: Some(true),
        });
    }
    if let Some(status) = root.read_text("proc/self/status")?
        && let Some(context) = vserver_context(&status)
    {
        sources.push(HypervisorSource {
            file: "/proc/self/status".into(),
            says: format!("VxID {context} (a Linux-VServer context)"),
            names: Some("Linux-VServer".into()),
            guest: None,
        });
    }
    Ok(sources)
}

/// lscpu's vendor name for the Windows Subsystem for Linux.
const WSL: &str = "Windows Subsystem for Linux";

/// The first hypervisor display in `/proc/bus/pci/devices` (each line: bus
/// and function, a tab, vendor and device as 8 hex digits, …), as what it
/// says and the hypervisor it names.
pub fn pci_display(devices: &str) -> Option<(String, &'static str)> {
    devices.lines().find_map(|line| {
        let ids = line.split('\t').nth(1)?;
        let vendor = u16::from_str_radix(ids.get(..4)?, 16).ok()?;
        let device = u16::from_str_radix(ids.get(4..8)?, 16).ok()?;
        let (_, _, names, what) = PCI_DISPLAYS
            .iter()
            .find(|(v, d, _, _)| (*v, *d) == (vendor, device))?;
        Some((format!("a {what} ({vendor:04x}:{device:04x})"), *names))
    })
}

/// A Linux-VServer context: the `VxID` line of a process's status, where
/// it is a number.
fn vserver_context(status: &str) -> Option<&str> {
    let value = status
        .lines()
        .find_map(|line| line.strip_prefix("VxID:"))?
        .trim();
    (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())).then_some(value)
}

/// A source that names `names` (and so says this is a guest) or nothing.
fn source(relative: &str, says: &str, names: Option<&str>) -> HypervisorSource {
    HypervisorSource {
        file: format!("/{relative}"),
        says: one_line(says),
        names: names.map(str::to_owned),
        guest: names.map(|_| true),
    }
}

/// The text on one line, runs of white space made one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first of `candidates` that exists, with its text.
fn read_first(
    root: &SysfsRoot,
    candidates: &[&'static str],
) -> Result<Option<(&'static str, String)>> {
    for &candidate in candidates {
        if let Some(text) = root.read_text(candidate)? {
            return Ok(Some((candidate, text)));
        }
    }
    Ok(None)
}

/// `/sys/hypervisor/type`: "xen" names Xen (systemd-detect-virt counts
/// any other value as some hypervisor it cannot name).
fn hypervisor_type(kind: &str) -> Option<&'static str> {
    match kind {
        "xen" => Some("Xen"),
        _ => None,
    }
}

/// The DMI files' values, in [`DMI_FILES`] order.
fn read_dmi(root: &SysfsRoot) -> Result<[Option<String>; 4]> {
    let mut values: [Option<String>; 4] = Default::default();
    for (value, file) in values.iter_mut().zip(DMI_FILES) {
        *value = root.read_value(file)?;
    }
    Ok(values)
}

/// The hypervisor one DMI file's `value` names, given all of them (`dmi`,
/// in [`DMI_FILES`] order). Microsoft makes laptops as well as Hyper-V, so
/// "Microsoft Corporation" names Hyper-V only beside the product name
/// "Virtual Machine" (and that name only beside the vendor); EC2 bare metal
/// ("….metal") names none, as systemd-detect-virt decides.
pub fn dmi_names(file: &str, value: &str, dmi: &[Option<String>; 4]) -> Option<&'static str> {
    let [product, vendor, ..] = dmi;
    let product = product.as_deref().unwrap_or_default();
    let hyper_v = product == "Virtual Machine"
        && vendor
            .as_deref()
            .is_some_and(|vendor| vendor.starts_with("Microsoft Corporation"));
    if hyper_v && (file.ends_with("product_name") || value.starts_with("Microsoft Corporation")) {
        return Some("Microsoft");
    }
    // lscpu's DMI table: a Hitachi LPAR (Virtage) by maker and product.
    let hitachi = product.contains("LPAR")
        && vendor
            .as_deref()
            .is_some_and(|vendor| vendor.contains("HITACHI"));
    if hitachi && (file.ends_with("product_name") || value.contains("HITACHI")) {
        return Some("Hitachi");
    }
    let metal = product
        .split_once(".metal")
        .is_some_and(|(_, after)| after.is_empty() || after.starts_with('-'));
    DMI_TABLE
        .iter()
        .find(|(prefix, _)| value.starts_with(prefix))
        .map(|&(_, names)| names)
        .filter(|&names| !(metal && names == "KVM"))
}

/// The device tree's sources: its root `compatible` (QEMU's boards, bare
/// PowerNV), `hypervisor/compatible` (KVM, Xen, VMware on Arm and POWER),
/// and a PowerVM partition's name (with `hmc-managed?` and without QEMU's
/// `chosen/qemu,graphic-width`, as lscpu tells PowerVM from KVM).
fn device_tree_sources(root: &SysfsRoot) -> Result<Vec<HypervisorSource>> {
    let mut sources = Vec::new();
    // Snapshots made by hand or by lscpu's dumps keep the link's name.
    let tree = if root.exists(DEVICE_TREE) || !root.exists(PROC_DEVICE_TREE) {
        DEVICE_TREE
    } else {
        PROC_DEVICE_TREE
    };
    let compatible_file = format!("{tree}/compatible");
    if let Some(compatible) = root.read_value(&compatible_file)? {
        let names = strings(&compatible);
        let (says, named, guest) = match board(&names) {
            Board::Qemu(name) => (compatible_says(&names), Some(name), Some(true)),
            Board::PowerNv => (
                format!("{} (PowerNV: bare metal)", compatible_says(&names)),
                None,
                Some(false),
            ),
            Board::Other => (compatible_says(&names), None, None),
        };
        sources.push(HypervisorSource {
            file: format!("/{compatible_file}"),
            says,
            names: named.map(str::to_owned),
            guest,
        });
    }
    let hypervisor_file = format!("{tree}/hypervisor/compatible");
    if let Some(compatible) = root.read_value(&hypervisor_file)? {
        let names = strings(&compatible);
        sources.push(HypervisorSource {
            file: format!("/{hypervisor_file}"),
            says: compatible_says(&names),
            names: device_tree_hypervisor(&names).map(str::to_owned),
            guest: Some(true),
        });
    }
    let partition_file = format!("{tree}/ibm,partition-name");
    if let Some(partition) = root.read_value(&partition_file)? {
        let partition = strings(&partition).join(" ");
        let power_vm = root.exists(&format!("{tree}/hmc-managed?"))
            && !root.exists(&format!("{tree}/chosen/qemu,graphic-width"));
        let full = partition == "full";
        sources.push(HypervisorSource {
            file: format!("/{partition_file}"),
            says: if full {
                "full (the whole machine in one partition)".into()
            } else {
                format!("partition \"{partition}\"")
            },
            names: power_vm.then(|| "pHyp".to_owned()),
            guest: power_vm.then_some(!full),
        });
    }
    Ok(sources)
}

/// What a device tree's root `compatible` says of the machine.
enum Board {
    /// A board QEMU makes, under lscpu's name for it.
    Qemu(&'static str),
    /// POWER without a hypervisor (OPAL firmware).
    PowerNv,
    Other,
}

fn board(names: &[&str]) -> Board {
    if names.contains(&"qemu,pseries") {
        // lscpu names a QEMU pseries machine KVM.
        Board::Qemu("KVM")
    } else if names.contains(&"linux,dummy-virt") {
        Board::Qemu("QEMU")
    } else if names.contains(&"ibm,powernv") {
        Board::PowerNv
    } else {
        Board::Other
    }
}

/// The hypervisor a device tree's `hypervisor/compatible` names, as
/// systemd-detect-virt reads it; `None` for one it does not know.
fn device_tree_hypervisor(names: &[&str]) -> Option<&'static str> {
    if names.contains(&"linux,kvm") {
        Some("KVM")
    } else if names.iter().any(|name| name.contains("xen")) {
        Some("Xen")
    } else if names.iter().any(|name| name.contains("vmware")) {
        Some("VMware")
    } else {
        None
    }
}

/// A device tree property's NUL-separated strings.
fn strings(property: &str) -> Vec<&str> {
    property
        .split('\0')
        .filter(|name| !name.is_empty())
        .collect()
}

fn compatible_says(names: &[&str]) -> String {
    names.join(", ")
}

/// s390's `/proc/sysinfo`: the `VM00 Control Program:` line names z/VM
/// (vendor IBM) or KVM; a logical partition without one runs on PR/SM
/// alone, which lscpu names IBM too. Returns what it says and the vendor.
pub fn sysinfo_control_program(sysinfo: &str) -> (String, Option<&'static str>) {
    let control_program = sysinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.contains("Control Program").then(|| one_line(value))
    });
    match control_program {
        Some(program) if program.contains("KVM") => (program, Some("KVM")),
        Some(program) => (program, Some("IBM")),
        None => (
            "an LPAR: no VM lines (PR/SM, no second-level hypervisor)".into(),
            Some("IBM"),
        ),
    }
}

/// `/proc/ppc64/lparcfg`: the partition's number and whether its
/// processors are shared with other partitions (the hypervisor may run
/// another partition's work on this one's cores) or dedicated.
pub fn describe_lparcfg(text: &str) -> String {
    let value = |key: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix('='))
            .map(str::trim)
    };
    let mut parts = vec!["a POWER logical partition".to_owned()];
    if let Some(id) = value("partition_id") {
        parts.push(format!("partition_id {id}"));
    }
    match value("shared_processor_mode") {
        Some("1") => parts.push("shared processors".into()),
        Some("0") => parts.push("dedicated processors".into()),
        _ => {}
    }
    parts.join(", ")
}

/// `/proc/xen`: a Xen domain; its `capabilities` saying `control_d` makes
/// it dom0, Xen's control domain, which runs the host: not a guest.
fn xen_source(capabilities: Option<String>) -> HypervisorSource {
    let dom0 = capabilities
        .as_deref()
        .is_some_and(|caps| caps.split(',').any(|cap| cap.trim() == "control_d"));
    HypervisorSource {
        file: "/proc/xen".into(),
        says: if dom0 {
            "capabilities control_d: dom0, Xen's control domain, not a guest".into()
        } else {
            "a Xen domain (no control_d: a guest)".into()
        },
        names: Some("Xen".into()),
        guest: Some(!dom0),
    }
}

/// lscpu's vendor name for a hypervisor CPUID names
/// ([`CpuidReport::hypervisor_name`](crate::probe::CpuidReport)).
pub fn cpuid_vendor(name: &str) -> &str {
    match name {
        "Hyper-V" => "Microsoft",
        "VirtualBox" => "Innotek GmbH",
        other => other,
    }
}

/// Whether the evidence names one hypervisor, and where it disagrees.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    /// lscpu's vendor name when every source that names one agrees (a
    /// QEMU-made machine agrees with KVM and with QEMU TCG, and takes the
    /// more precise name); `None` when none names one, or they disagree.
    pub vendor: Option<String>,
    /// The sources that name it, by file ("CPUID" for the instruction).
    pub named_by: Vec<String>,
    /// One sentence per disagreement: sources that name different
    /// hypervisors, or one that names a hypervisor while another says this
    /// is no guest.
    pub disagreements: Vec<String>,
}

/// The identity `sources` and CPUID (its hypervisor bit and the name its
/// signature gives, where read) make together.
pub fn identity(
    cpuid_bit: Option<bool>,
    cpuid_name: Option<&str>,
    sources: &[HypervisorSource],
) -> Identity {
    let mut named: Vec<(String, String)> = Vec::new();
    if let Some(name) = cpuid_name.filter(|name| *name != "unknown") {
        named.push(("CPUID".into(), cpuid_vendor(name).to_owned()));
    }
    for source in sources {
        if let Some(names) = &source.names {
            named.push((source.file.clone(), names.clone()));
        }
    }
    let mut identity = Identity {
        named_by: named.iter().map(|(file, _)| file.clone()).collect(),
        ..Identity::default()
    };
    let mut vendor: Option<&str> = None;
    let mut agree = true;
    for (_, names) in &named {
        vendor = match vendor {
            None => Some(names),
            Some(so_far) => match merge(so_far, names) {
                Some(merged) => Some(merged),
                None => {
                    agree = false;
                    break;
                }
            },
        };
    }
    if !agree {
        let said: Vec<String> = named
            .iter()
            .map(|(file, names)| format!("{file} names {names}"))
            .collect();
        identity.disagreements.push(format!(
            "the sources name different hypervisors: {}",
            said.join(", ")
        ));
    }
    identity.vendor = vendor.filter(|_| agree).map(str::to_owned);
    if let Some((file, names)) = named.first() {
        let mut no_guest: Vec<String> = Vec::new();
        if cpuid_bit == Some(false) {
            no_guest.push("the CPUID hypervisor bit is clear".into());
        }
        for source in sources.iter().filter(|s| s.guest == Some(false)) {
            // dom0 runs under the Xen it names: no disagreement there.
            if source.names.is_none() {
                no_guest.push(format!("{} says {}", source.file, source.says));
            }
        }
        if !no_guest.is_empty() {
            identity.disagreements.push(format!(
                "{}, but {file} names {names}",
                no_guest.join(" and ")
            ));
        }
    }
    identity
}

/// Two vendor names as one, when they agree: equal, or a QEMU-made
/// machine and the KVM or QEMU TCG that runs it (the precise name wins).
fn merge<'a>(a: &'a str, b: &'a str) -> Option<&'a str> {
    match (a, b) {
        _ if a == b => Some(a),
        ("QEMU", "KVM" | "QEMU TCG") => Some(b),
        // WSL 1 runs on Windows, whose Hyper-V CPUID may show through.
        ("Microsoft", WSL) => Some(b),
        (WSL, "Microsoft") => Some(a),
        ("KVM" | "QEMU TCG", "QEMU") => Some(a),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dmi(product: &str, vendor: &str) -> [Option<String>; 4] {
        [Some(product.into()), Some(vendor.into()), None, None]
    }

    #[test]
    fn dmi_names_follow_systemds_table() {
        let vmware = dmi("VMware Virtual Platform", "VMware, Inc.");
        assert_eq!(
            dmi_names(DMI_FILES[1], "VMware, Inc.", &vmware),
            Some("VMware")
        );
        let qemu = dmi("Standard PC (Q35 + ICH9, 2009)", "QEMU");
        assert_eq!(
            dmi_names(DMI_FILES[0], "Standard PC (Q35 + ICH9, 2009)", &qemu),
            None
        );
        assert_eq!(dmi_names(DMI_FILES[1], "QEMU", &qemu), Some("QEMU"));
        let ec2 = dmi("m6i.large", "Amazon EC2");
        assert_eq!(dmi_names(DMI_FILES[1], "Amazon EC2", &ec2), Some("KVM"));
        let metal = dmi("m5.metal", "Amazon EC2");
        assert_eq!(dmi_names(DMI_FILES[1], "Amazon EC2", &metal), None);
        let vbox = dmi("VirtualBox", "innotek GmbH");
        assert_eq!(
            dmi_names(DMI_FILES[0], "VirtualBox", &vbox),
            Some("Innotek GmbH")
        );
        assert_eq!(
            dmi_names(DMI_FILES[1], "LENOVO", &dmi("20XW", "LENOVO")),
            None
        );
    }

    #[test]
    fn microsoft_is_hyper_v_only_as_a_virtual_machine() {
        let hyper_v = dmi("Virtual Machine", "Microsoft Corporation");
        assert_eq!(
            dmi_names(DMI_FILES[0], "Virtual Machine", &hyper_v),
            Some("Microsoft")
        );
        assert_eq!(
            dmi_names(DMI_FILES[3], "Microsoft Corporation", &hyper_v),
            Some("Microsoft")
        );
        let surface = dmi("Surface Laptop 3", "Microsoft Corporation");
        assert_eq!(
            dmi_names(DMI_FILES[1], "Microsoft Corporation", &surface),
            None
        );
        let not_microsoft = dmi("Virtual Machine", "Someone Else");
        assert_eq!(
            dmi_names(DMI_FILES[0], "Virtual Machine", &not_microsoft),
            None
        );
    }

    #[test]
    fn sysinfo_names_zvm_kvm_or_an_lpar() {
        let zvm = "Manufacturer:         IBM\nVM00 Name:            LINUX01\n\
                   VM00 Control Program: z/VM    7.3.0\n";
        assert_eq!(
            sysinfo_control_program(zvm),
            ("z/VM 7.3.0".to_owned(), Some("IBM"))
        );
        let kvm = "VM00 Control Program: KVM/Linux\n";
        assert_eq!(sysinfo_control_program(kvm).1, Some("KVM"));
        let lpar = "Manufacturer:         IBM\nLPAR Name:            LP01\n";
        let (says, names) = sysinfo_control_program(lpar);
        assert!(says.starts_with("an LPAR"), "{says}");
        assert_eq!(names, Some("IBM"));
    }

    #[test]
    fn lparcfg_says_partition_and_processor_mode() {
        let text =
            "lparcfg 1.9\nserial_number=IBM,0212345\npartition_id=7\nshared_processor_mode=1\n";
        assert_eq!(
            describe_lparcfg(text),
            "a POWER logical partition, partition_id 7, shared processors"
        );
        assert_eq!(describe_lparcfg(""), "a POWER logical partition");
    }

    #[test]
    fn xen_control_domain_is_not_a_guest() {
        let dom0 = xen_source(Some("control_d".into()));
        assert_eq!(dom0.guest, Some(false));
        assert!(dom0.says.contains("not a guest"));
        assert_eq!(xen_source(None).guest, Some(true));
        assert_eq!(
            xen_source(Some(String::new())).names.as_deref(),
            Some("Xen")
        );
    }

    #[test]
    fn device_tree_names_boards_and_hypervisors() {
        assert!(matches!(board(&["linux,dummy-virt"]), Board::Qemu("QEMU")));
        assert!(matches!(board(&["qemu,pseries"]), Board::Qemu("KVM")));
        assert!(matches!(board(&["ibm,powernv"]), Board::PowerNv));
        assert_eq!(device_tree_hypervisor(&["linux,kvm"]), Some("KVM"));
        assert_eq!(
            device_tree_hypervisor(&["xen,xen-4.17", "xen,xen"]),
            Some("Xen")
        );
        assert_eq!(device_tree_hypervisor(&["acme,hv"]), None);
        assert_eq!(strings("a\0b\0"), vec!["a", "b"]);
    }

    fn named(file: &str, names: &str) -> HypervisorSource {
        HypervisorSource {
            file: file.into(),
            says: String::new(),
            names: Some(names.into()),
            guest: Some(true),
        }
    }

    #[test]
    fn agreeing_sources_name_one_hypervisor() {
        let sources = [named("/sys/class/dmi/id/sys_vendor", "QEMU")];
        let kvm = identity(Some(true), Some("KVM"), &sources);
        assert_eq!(kvm.vendor.as_deref(), Some("KVM"));
        assert!(kvm.disagreements.is_empty());
        assert_eq!(kvm.named_by, ["CPUID", "/sys/class/dmi/id/sys_vendor"]);
        assert_eq!(
            identity(None, None, &sources).vendor.as_deref(),
            Some("QEMU")
        );
        let hyper_v = identity(Some(true), Some("Hyper-V"), &[named("x", "Microsoft")]);
        assert_eq!(hyper_v.vendor.as_deref(), Some("Microsoft"));
        assert_eq!(identity(None, None, &[]), Identity::default());
    }

    #[test]
    fn disagreeing_sources_are_named() {
        let sources = [named("/sys/class/dmi/id/sys_vendor", "VMware")];
        let bit_clear = identity(Some(false), None, &sources);
        assert_eq!(bit_clear.vendor.as_deref(), Some("VMware"));
        assert_eq!(
            bit_clear.disagreements,
            ["the CPUID hypervisor bit is clear, but /sys/class/dmi/id/sys_vendor names VMware"]
        );
        let two = identity(Some(true), Some("KVM"), &sources);
        assert_eq!(two.vendor, None);
        assert_eq!(
            two.disagreements,
            ["the sources name different hypervisors: CPUID names KVM, \
              /sys/class/dmi/id/sys_vendor names VMware"]
        );
        let dom0 = xen_source(Some("control_d".into()));
        assert!(identity(None, None, &[dom0]).disagreements.is_empty());
    }
}
