//! The hypervisor evidence on hand-written guests (`fixtures/sysfs/*`, each
//! README naming the real machine's published files it follows): every
//! file source, what it says and what it names, the hypervisor the summary
//! names, the notes where the evidence disagrees, and a snapshot folder of
//! each that carries the same evidence. Also a CPU whose sibling list and
//! mask disagree.

use crate::topology_fixtures::{fixture, probe_fixture};
use placement_study::judge::warnings::Warning;
use placement_study::probe::hypervisor::HypervisorSource;
use placement_study::probe::snapshot::copy_topology_files;
use placement_study::probe::{Topology, probe};

/// Each source as (file, says, names, guest).
fn sources(topology: &Topology) -> Vec<(&str, &str, Option<&str>, Option<bool>)> {
    topology
        .environment
        .hypervisor_sources
        .iter()
        .map(|s: &HypervisorSource| {
            (
                s.file.as_str(),
                s.says.as_str(),
                s.names.as_deref(),
                s.guest,
            )
        })
        .collect()
}

/// The notes about the machine, as the views print them.
fn notes(topology: &Topology) -> Vec<String> {
    Warning::about_machine(topology)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn disagreement_notes(topology: &Topology) -> Vec<String> {
    notes(topology)
        .into_iter()
        .filter(|note| note.starts_with("the hypervisor evidence disagrees"))
        .collect()
}

const GUESTS: [&str; 6] = [
    "xen-hvm-guest",
    "vmware-guest",
    "hyperv-guest",
    "zvm-guest-s390x",
    "powervm-lpar-ppc64le",
    "vmware-dmi-no-hypervisor-flag",
];

#[test]
fn xen_guest_is_named_by_every_xen_file() {
    let t = probe_fixture("xen-hvm-guest");
    assert_eq!(
        sources(&t),
        [
            ("/proc/cpuinfo", "hypervisor flag set", None, Some(true)),
            ("/sys/hypervisor/type", "xen", Some("Xen"), Some(true)),
            ("/sys/class/dmi/id/product_name", "HVM domU", None, None),
            (
                "/sys/class/dmi/id/sys_vendor",
                "Xen",
                Some("Xen"),
                Some(true)
            ),
            (
                "/sys/class/dmi/id/bios_vendor",
                "Xen",
                Some("Xen"),
                Some(true)
            ),
            (
                "/proc/xen",
                "a Xen domain (no control_d: a guest)",
                Some("Xen"),
                Some(true)
            ),
        ]
    );
    assert_eq!(t.summary.hypervisor_vendor.as_deref(), Some("Xen"));
    assert_eq!(t.summary.hypervisor, None, "no CPUID was read");
    assert!(disagreement_notes(&t).is_empty());
}

#[test]
fn vmware_guest_is_named_by_its_dmi() {
    let t = probe_fixture("vmware-guest");
    assert_eq!(
        sources(&t),
        [
            ("/proc/cpuinfo", "hypervisor flag set", None, Some(true)),
            (
                "/sys/class/dmi/id/product_name",
                "VMware Virtual Platform",
                Some("VMware"),
                Some(true)
            ),
            (
                "/sys/class/dmi/id/sys_vendor",
                "VMware, Inc.",
                Some("VMware"),
                Some(true)
            ),
            (
                "/sys/class/dmi/id/board_vendor",
                "Intel Corporation",
                None,
                None
            ),
            (
                "/sys/class/dmi/id/bios_vendor",
                "Phoenix Technologies LTD",
                None,
                None
            ),
        ]
    );
    assert_eq!(t.summary.hypervisor_vendor.as_deref(), Some("VMware"));
    assert!(disagreement_notes(&t).is_empty());
}

#[test]
fn hyper_v_guest_is_microsoft_as_lscpu_names_it() {
    let t = probe_fixture("hyperv-guest");
    let named: Vec<_> = sources(&t)
        .into_iter()
        .filter(|(file, ..)| file.starts_with("/sys/class/dmi/"))
        .map(|(file, _, names, _)| (file, names))
        .collect();
    assert_eq!(
        named,
        [
            ("/sys/class/dmi/id/product_name", Some("Microsoft")),
            ("/sys/class/dmi/id/sys_vendor", Some("Microsoft")),
            ("/sys/class/dmi/id/board_vendor", Some("Microsoft")),
            ("/sys/class/dmi/id/bios_vendor", Some("Microsoft")),
        ]
    );
    assert_eq!(t.summary.hypervisor_vendor.as_deref(), Some("Microsoft"));
    assert!(disagreement_notes(&t).is_empty());
}

#[test]
fn zvm_guest_is_named_by_sysinfo() {
    let t = probe_fixture("zvm-guest-s390x");
    assert_eq!(
        sources(&t),
        [("/proc/sysinfo", "z/VM 6.1.0", Some("IBM"), Some(true))],
        "s390's cpuinfo has no flags line"
    );
    assert_eq!(t.summary.hypervisor_vendor.as_deref(), Some("IBM"));
    assert_eq!((t.summary.cpus, t.summary.cores), (2, 2));
    assert!(
        notes(&t).iter().any(
            |note| note.starts_with("running under a hypervisor (IBM, named by /proc/sysinfo)")
        ),
        "{:?}",
        notes(&t)
    );
}

#[test]
fn powervm_partition_is_named_by_its_device_tree() {
    let t = probe_fixture("powervm-lpar-ppc64le");
    assert_eq!(
        sources(&t),
        [
            (
                "/sys/firmware/devicetree/base/ibm,partition-name",
                "partition \"lpar05\"",
                Some("pHyp"),
                Some(true)
            ),
            (
                "/proc/ppc64/lparcfg",
                "a POWER logical partition, partition_id 5, shared processors",
                None,
                Some(true)
            ),
        ]
    );
    assert_eq!(t.summary.hypervisor_vendor.as_deref(), Some("pHyp"));
    assert_eq!((t.summary.cpus, t.summary.cores), (8, 2));
    assert_eq!(t.summary.threads_per_core, "4");
}

#[test]
fn vmware_dmi_without_the_hypervisor_flag_disagrees() {
    let t = probe_fixture("vmware-dmi-no-hypervisor-flag");
    let first = &t.environment.hypervisor_sources[0];
    assert_eq!(
        (first.file.as_str(), first.says.as_str(), first.guest),
        ("/proc/cpuinfo", "no hypervisor flag", Some(false))
    );
    // Every source that names one names VMware: identity is unambiguous,
    // and the flag's disagreement is a note.
    assert_eq!(t.summary.hypervisor_vendor.as_deref(), Some("VMware"));
    assert_eq!(
        disagreement_notes(&t),
        [
            "the hypervisor evidence disagrees: /proc/cpuinfo says no hypervisor flag, but \
          /sys/class/dmi/id/product_name names VMware; identity is evidence only, a \
          measurement (`placement-study gate`) decides"
        ]
    );
}

#[test]
fn bare_metal_fixtures_name_no_hypervisor() {
    for name in [
        "laptop-i5-11300H",
        "server-2s-xeon-8462Y",
        "alderlake-i5-12600K",
    ] {
        let t = probe_fixture(name);
        assert_eq!(t.summary.hypervisor_vendor, None, "{name}");
        assert!(disagreement_notes(&t).is_empty(), "{name}");
    }
}

/// A folder snapshot of each guest (the files `snapshot DIR` copies) says
/// what the guest's own folder says, source by source.
#[test]
fn a_snapshot_folder_carries_every_source() {
    let scratch = tempfile::tempdir().unwrap();
    for name in GUESTS {
        let copy = scratch.path().join(name);
        copy_topology_files(&fixture(name), &copy).unwrap();
        let copied = probe(Some(&copy), None).unwrap();
        let original = probe_fixture(name);
        assert_eq!(
            copied.environment.hypervisor_sources, original.environment.hypervisor_sources,
            "{name}"
        );
        assert_eq!(
            copied.summary.hypervisor_vendor,
            original.summary.hypervisor_vendor
        );
    }
}

/// An older sibling list that is not symmetric (CPU 0's
/// thread_siblings_list names CPU 1, CPU 1's does not name CPU 0) under a
/// sane core_cpus_list is noted, saying which reading `topology` kept.
#[test]
fn an_older_sibling_list_that_is_not_symmetric_is_noted() {
    let t = probe_fixture("asymmetric-thread-siblings");
    assert_eq!(
        t.sibling_map_notes,
        [
            "CPU 0's thread_siblings_list lists CPU 1, but CPU 1's does not list CPU 0 (not a \
             partition); core_cpus_list was used (CPU 0: 0-1, CPU 1: 0-1)"
        ]
    );
    assert_eq!((t.summary.cores, t.summary.packages), (2, 1));
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(["topology", "--no-cpuid", "--sysfs-root"])
        .arg(fixture("asymmetric-thread-siblings"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let view = String::from_utf8_lossy(&output.stdout);
    // The view wraps its notes: compare words.
    let words = view.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "CPU 0's thread_siblings_list lists CPU 1, but CPU 1's does not list CPU 0 (not a \
             partition); core_cpus_list was used"
        ),
        "{view}"
    );
}

#[test]
fn a_list_and_mask_that_disagree_are_noted() {
    let t = probe_fixture("list-mask-disagree");
    assert_eq!(
        t.sibling_map_notes,
        [
            "CPU 1's core_siblings_list says 0-3 but its core_siblings mask 00000003 says 0-1; \
             package_cpus_list was used",
            "CPU 3's core_cpus_list says 2-3 but its core_cpus mask 00000009 says 0,3; \
             core_cpus_list was used",
        ]
    );
    // The lists were used: the cores are the lists' cores.
    assert_eq!(t.cpus[3].siblings.to_string(), "2-3");
    assert_eq!((t.summary.cores, t.summary.packages), (2, 1));
}

/// Files added to a machine, and the file, what it says and the
/// hypervisor it names.
type LscpuCase<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str, &'a str);

/// A copy of the bare-metal laptop with `add` written into it (relative
/// path, text; a path ending in "/" is a folder).
fn laptop_with(add: &[(&str, &str)]) -> tempfile::TempDir {
    let scratch = tempfile::tempdir().unwrap();
    copy_topology_files(&fixture("laptop-i5-11300H"), scratch.path()).unwrap();
    for (path, text) in add {
        let at = scratch.path().join(path);
        if path.ends_with('/') {
            std::fs::create_dir_all(&at).unwrap();
        } else {
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(&at, text).unwrap();
        }
    }
    scratch
}

/// Each source lscpu reads beyond systemd-detect-virt's files, on a copy
/// of a bare-metal machine given that one file: the source is listed with
/// what it says, and names the hypervisor (or container) lscpu names; a
/// folder snapshot of it carries the same evidence.
#[test]
fn every_source_lscpu_reads_names_what_lscpu_names() {
    let laptop_cpuinfo =
        std::fs::read_to_string(fixture("laptop-i5-11300H").join("proc/cpuinfo")).unwrap();
    let uml_cpuinfo = laptop_cpuinfo.replacen(
        "model name\t: 11th Gen Intel(R) Core(TM) i5-11300H @ 3.10GHz",
        "model name\t: UML",
        1,
    );
    assert_ne!(uml_cpuinfo, laptop_cpuinfo, "the laptop's model name moved");
    let cases: [LscpuCase; 8] = [
        (
            &[(
                "proc/bus/pci/devices",
                "0008\t80860c00\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\n\
                 0078\t15ad0710\t0\tf0000000\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\tvmwgfx\n",
            )],
            "/proc/bus/pci/devices",
            "a VMware SVGA display (15ad:0710)",
            "VMware",
        ),
        (
            &[("proc/bus/pci/devices", "0018\t58530001\t1c\tf2000008\n")],
            "/proc/bus/pci/devices",
            "a Xen platform display (5853:0001)",
            "Xen",
        ),
        (
            &[("proc/bus/pci/devices", "0010\t80eebeef\t0\te0000008\n")],
            "/proc/bus/pci/devices",
            "a VirtualBox display (80ee:beef)",
            "Innotek GmbH",
        ),
        (
            &[("proc/sys/kernel/osrelease", "4.4.0-19041-Microsoft\n")],
            "/proc/sys/kernel/osrelease",
            "4.4.0-19041-Microsoft (Windows Subsystem for Linux)",
            "Windows Subsystem for Linux",
        ),
        (
            &[("proc/vz/", "")],
            "/proc/vz",
            "an OpenVZ or Virtuozzo container (/proc/vz without /proc/bc)",
            "Parallels",
        ),
        (
            &[("proc/cpuinfo", &uml_cpuinfo)],
            "/proc/cpuinfo",
            "model name UML (User-mode Linux)",
            "User-mode Linux",
        ),
        (
            &[("proc/self/status", "Name:\tplacement-study\nVxID:\t42\n")],
            "/proc/self/status",
            "VxID 42 (a Linux-VServer context)",
            "Linux-VServer",
        ),
        (
            &[
                ("sys/class/dmi/id/sys_vendor", "HITACHI\n"),
                (
                    "sys/class/dmi/id/product_name",
                    "BladeSymphony E57A2 LPAR\n",
                ),
            ],
            "/sys/class/dmi/id/product_name",
            "BladeSymphony E57A2 LPAR",
            "Hitachi",
        ),
    ];
    for (add, file, says, names) in cases {
        let root = laptop_with(add);
        let t = probe(Some(root.path()), None).unwrap();
        let found = sources(&t);
        assert!(
            found
                .iter()
                .any(|&(f, s, n, _)| (f, s, n) == (file, says, Some(names))),
            "{add:?}: {found:?}"
        );
        assert_eq!(
            t.summary.hypervisor_vendor.as_deref(),
            Some(names),
            "{add:?}"
        );
        // The process's own status is not a machine file: a snapshot leaves it.
        if file != "/proc/self/status" {
            let copy = tempfile::tempdir().unwrap();
            copy_topology_files(root.path(), copy.path()).unwrap();
            let copied = probe(Some(copy.path()), None).unwrap();
            assert_eq!(
                copied.environment.hypervisor_sources, t.environment.hypervisor_sources,
                "{add:?}"
            );
        }
    }
    // /proc/bc beside /proc/vz: the host of the containers, no container.
    let host = laptop_with(&[("proc/vz/", ""), ("proc/bc/", "")]);
    let t = probe(Some(host.path()), None).unwrap();
    assert_eq!(t.summary.hypervisor_vendor, None);
}
