//! The prober on hand-written machines (`fixtures/sysfs/*`, modelled on real
//! ones), on this machine, and on broken input.

use crate::common::copy_tree;
use placement_study::cpuset::CpuSet;
use placement_study::probe::{ClassSource, CoreKind, Topology, probe};
use placement_study::report::view::View;
use std::path::{Path, PathBuf};

pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/sysfs")
        .join(name)
}

pub(crate) fn probe_fixture(name: &str) -> Topology {
    probe(Some(&fixture(name)), None).unwrap_or_else(|e| panic!("probing {name}: {e:#}"))
}

fn set(cpus: impl IntoIterator<Item = u32>) -> CpuSet {
    CpuSet::from_cpus(cpus)
}

/// Class → its CPUs, in the order the prober lists them.
fn classes(topology: &Topology) -> Vec<(CoreKind, CpuSet)> {
    topology
        .classes
        .iter()
        .map(|class| (class.name, class.cpus.clone()))
        .collect()
}

fn siblings(topology: &Topology, cpu: u32) -> &CpuSet {
    &topology.cpus[cpu as usize].siblings
}

/// The instance of a cache level/type that CPU `cpu` uses.
fn cache_of(topology: &Topology, level: u32, kind: &str, cpu: u32) -> (Option<u64>, CpuSet) {
    let cache = topology
        .caches
        .iter()
        .find(|c| c.level == level && c.kind == kind && c.cpus.contains(cpu))
        .unwrap_or_else(|| panic!("no L{level} {kind} cache for CPU {cpu}"));
    (cache.size_bytes, cache.cpus.clone())
}

#[test]
fn laptop_i5_11300h_pairs_n_with_n_plus_4() {
    let t = probe_fixture("laptop-i5-11300H");
    let s = &t.summary;
    assert_eq!((s.cpus, s.packages, s.cores), (8, 1, 4));
    assert_eq!(s.threads_per_core, "2");
    assert_eq!(s.smt, Some(true));
    assert_eq!(s.structure_from, "sysfs");
    for cpu in 0..4 {
        assert_eq!(*siblings(&t, cpu), set([cpu, cpu + 4]));
        assert_eq!(t.cpus[cpu as usize].core, t.cpus[cpu as usize + 4].core);
    }
    assert_eq!(t.cpus[3].core, 3, "cores are numbered by their lowest CPU");
    assert_eq!(classes(&t), vec![(CoreKind::Uniform, set(0..8))]);
    assert_eq!(
        cache_of(&t, 2, "Unified", 1),
        (Some(1280 << 10), set([1, 5]))
    );
    assert_eq!(cache_of(&t, 3, "Unified", 0), (Some(8 << 20), set(0..8)));
    assert_eq!(t.caches.len(), 13, "L1d, L1i, L2 per core and one L3");

    let env = &t.environment;
    assert_eq!(env.turbo, Some(true));
    assert_eq!(env.turbo_source.as_deref(), Some("intel_pstate/no_turbo"));
    assert_eq!(env.governors, vec!["powersave"]);
    assert_eq!(env.scaling_driver.as_deref(), Some("intel_pstate"));
    assert_eq!(env.clocksource.as_deref(), Some("tsc"));
    assert_eq!(env.perf_event_paranoid, Some(4));
    assert_eq!(
        (env.constant_tsc, env.nonstop_tsc),
        (Some(true), Some(true))
    );
    assert_eq!(env.hypervisor_flag, Some(false));
    assert!(env.hardware_pmu);
    assert_eq!(env.pmu_devices, vec!["cpu"]);
    assert!(env.nohz_full.is_empty(), "nohz_full holds only \\0\\n");
    assert_eq!(env.allowed_cpus, None, "a snapshot has no process affinity");
    assert_eq!(env.dmi_vendor.as_deref(), Some("LENOVO"));
    assert_eq!(
        env.model_name.as_deref(),
        Some("11th Gen Intel(R) Core(TM) i5-11300H @ 3.10GHz")
    );
    assert_eq!(env.kernel.as_deref(), Some("6.8.0-45-generic"));
}

#[test]
fn alder_lake_has_smt_p_cores_and_a_cluster_of_e_cores() {
    let t = probe_fixture("alderlake-i5-12600K");
    let s = &t.summary;
    assert_eq!((s.cpus, s.packages, s.cores), (16, 1, 10));
    assert_eq!(s.threads_per_core, "mixed(6x2,4x1)");
    assert_eq!(s.smt, Some(true));
    assert_eq!(*siblings(&t, 0), set([0, 1]));
    assert_eq!(*siblings(&t, 12), set([12]));
    assert_eq!(
        classes(&t),
        vec![
            (CoreKind::Performance, set(0..12)),
            (CoreKind::Efficiency, set(12..16))
        ]
    );
    assert!(
        t.classes
            .iter()
            .all(|class| class.source == ClassSource::SysfsPmu)
    );
    assert_eq!(t.cpus[13].class, CoreKind::Efficiency);

    // The E-cores form one cluster sharing an L2; each P-core is its own.
    let cluster = |cpu: usize| t.cpus[cpu].cluster;
    assert_eq!(cluster(12), cluster(15));
    assert_eq!(cluster(0), cluster(1));
    assert_ne!(cluster(0), cluster(2));
    assert_eq!(cache_of(&t, 2, "Unified", 14), (Some(2 << 20), set(12..16)));

    let env = &t.environment;
    assert_eq!(env.pmu_devices, vec!["cpu_atom", "cpu_core"]);
    assert!(env.nohz_full.is_empty(), "nohz_full says (null)");
    assert_eq!(env.dmi_product.as_deref(), Some("MS-7D25"));
}

#[test]
fn core_ultra_has_three_classes_and_no_smt() {
    let t = probe_fixture("core-ultra-7-356H");
    let s = &t.summary;
    assert_eq!(
        (s.cpus, s.packages, s.cores, s.core_classes),
        (16, 1, 16, 3)
    );
    assert_eq!(s.threads_per_core, "1");
    assert_eq!(s.smt, Some(false));
    assert_eq!(
        classes(&t),
        vec![
            (CoreKind::Performance, set(0..4)),
            (CoreKind::Efficiency, set(4..12)),
            (CoreKind::LowPowerEfficiency, set(12..16)),
        ]
    );
    assert_eq!(t.cpus[14].class, CoreKind::LowPowerEfficiency);
    // The low-power island has its own L2 and no L3.
    assert_eq!(cache_of(&t, 2, "Unified", 12).1, set(12..16));
    assert!(!t.caches.iter().any(|c| c.level == 3 && c.cpus.contains(12)));

    let env = &t.environment;
    assert_eq!(env.smt_control.as_deref(), Some("notsupported"));
    assert_eq!(env.smt_active, Some(false));
    assert_eq!(env.turbo, Some(false), "no_turbo is 1");
}

#[test]
fn two_socket_server_pairs_n_with_n_plus_64() {
    let t = probe_fixture("server-2s-xeon-8462Y");
    let s = &t.summary;
    assert_eq!((s.cpus, s.packages, s.cores), (128, 2, 64));
    assert_eq!(s.threads_per_core, "2");
    assert_eq!(*siblings(&t, 0), set([0, 64]));
    assert_eq!(*siblings(&t, 127), set([63, 127]));
    assert_eq!(t.cpus[64].core, 0);
    assert_eq!(t.cpus[32].core, 32);
    assert_eq!((t.cpus[0].package, t.cpus[64].package), (0, 0));
    assert_eq!((t.cpus[32].package, t.cpus[96].package), (1, 1));
    let l3s: Vec<&CpuSet> = t
        .caches
        .iter()
        .filter(|c| c.level == 3)
        .map(|c| &c.cpus)
        .collect();
    assert_eq!(l3s.len(), 2);
    assert!(l3s.iter().all(|cpus| cpus.len() == 64));
    assert_eq!(cache_of(&t, 3, "Unified", 0).0, Some(60 << 20));

    let env = &t.environment;
    let package_1 = set((32..64).chain(96..128));
    assert_eq!(env.isolated, package_1);
    assert_eq!(env.nohz_full, package_1);
    assert_eq!(env.governors, vec!["performance"]);
    assert_eq!(env.kernel.as_deref(), Some("5.14.0-427.13.1.el9_4.x86_64"));
}

#[test]
fn kvm_guest_without_smt_or_pmu() {
    let t = probe_fixture("kvm-guest-2cpu");
    let s = &t.summary;
    assert_eq!((s.cpus, s.packages, s.cores, s.allowed), (2, 1, 2, 2));
    assert_eq!(s.smt, Some(false));
    assert_eq!(s.hypervisor, None, "no CPUID was read");
    assert_eq!(classes(&t), vec![(CoreKind::Uniform, set([0, 1]))]);
    assert!(
        t.cpus
            .iter()
            .all(|cpu| cpu.die.is_none() && cpu.cluster.is_none())
    );

    let env = &t.environment;
    assert!(!env.hardware_pmu);
    assert!(env.pmu_devices.is_empty());
    assert_eq!(env.hypervisor_flag, Some(true));
    assert_eq!(env.smt_control.as_deref(), Some("notsupported"));
    assert_eq!(env.turbo, None);
    assert!(env.governors.is_empty());
    assert_eq!(env.dmi_vendor, None);
    assert_eq!(
        cache_of(&t, 3, "Unified", 1),
        (Some(266_240 << 10), set([0, 1]))
    );
}

/// Fails, printing `text`, unless one of its lines is `line`.
fn assert_has_line(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l == line),
        "no line {line:?} in:\n{text}"
    );
}

/// Each MIDR kind's name and CPUs, in the order the prober lists them.
fn midr_kinds(topology: &Topology) -> Vec<(String, CpuSet)> {
    let midr = topology.midr.as_ref().expect("an Arm machine has a MIDR");
    midr.kinds
        .iter()
        .map(|kind| (kind.name.clone(), kind.cpus.clone()))
        .collect()
}

#[test]
fn graviton2_names_its_neoverse_n1_cores_from_midr_el1() {
    let t = probe_fixture("graviton2-m6g-xlarge");
    let s = &t.summary;
    assert_eq!((s.cpus, s.cores, s.packages), (4, 4, 1));
    assert_eq!(s.smt, Some(false));
    assert_eq!(classes(&t), vec![(CoreKind::Uniform, set(0..4))]);
    let midr = t.midr.as_ref().expect("midr_el1 files");
    assert_eq!(
        (midr.source.as_str(), midr.arch.as_str()),
        ("midr_el1", "aarch64")
    );
    let [kind] = midr.kinds.as_slice() else {
        panic!("one kind of core: {:?}", midr.kinds);
    };
    assert_eq!(kind.midr.as_deref(), Some("0x413fd0c1"));
    assert_eq!(
        (
            kind.implementer,
            kind.variant,
            kind.architecture,
            kind.part,
            kind.revision
        ),
        (0x41, 3, Some(0xf), 0xd0c, 1)
    );
    assert_eq!(kind.implementer_name.as_deref(), Some("ARM"));
    assert_eq!(kind.part_name.as_deref(), Some("Neoverse-N1"));
    assert_eq!(t.cpu_name().as_deref(), Some("ARM Neoverse-N1 r3p1"));
    assert_eq!(
        t.environment.model_name.as_deref(),
        Some("ARM Neoverse-N1 r3p1"),
        "arm64 cpuinfo has no model name: the MIDR names the CPU"
    );
    assert_eq!(t.cpuid, None);
    assert_eq!(
        t.source.cpuid_absent.as_deref(),
        Some("not part of aarch64")
    );
    assert_eq!(cache_of(&t, 2, "Unified", 3), (Some(1 << 20), set([3])));
    assert_eq!(cache_of(&t, 3, "Unified", 0), (Some(32 << 20), set(0..4)));
    assert_eq!(t.environment.pmu_devices, vec!["armv8_pmuv3_0"]);
}

#[test]
fn dgx_spark_classes_come_from_capacity_and_name_their_parts() {
    let t = probe_fixture("dgx-spark-gb10");
    let x925 = set((0..5).chain(10..15));
    let a725 = set((5..10).chain(15..20));
    assert_eq!(
        classes(&t),
        vec![
            (CoreKind::Performance, x925.clone()),
            (CoreKind::Efficiency, a725.clone())
        ]
    );
    let details: Vec<(ClassSource, Option<&str>)> = t
        .classes
        .iter()
        .map(|class| (class.source, class.detail.as_deref()))
        .collect();
    assert_eq!(
        details,
        [
            (ClassSource::CpuCapacity, Some("capacity 1024, Cortex-X925")),
            (ClassSource::CpuCapacity, Some("capacity 560, Cortex-A725")),
        ]
    );
    assert_eq!(
        midr_kinds(&t),
        [
            ("ARM Cortex-X925 r0p1".to_owned(), x925),
            ("ARM Cortex-A725 r0p1".to_owned(), a725)
        ]
    );
    assert_eq!(
        t.cpu_name().as_deref(),
        Some("ARM Cortex-X925 r0p1 ×10 + Cortex-A725 r0p1 ×10")
    );
    let text = placement_study::report::topology::blocks(&t, &View::default())
        .to_terminal(&View::default());
    assert!(
        text.starts_with("ARM Cortex-X925 r0p1 ×10 + Cortex-A725 r0p1 ×10\n"),
        "{text}"
    );
    assert_has_line(
        &text,
        "  cpuid           not part of aarch64 (CPU identity from MIDR_EL1)",
    );
    assert_has_line(
        &text,
        "  midr            ARM Cortex-A725 r0p1 on CPUs 5-9,15-19 (0x410fd871)",
    );
}

#[test]
fn jetson_tx2_identity_comes_from_cpuinfo_and_its_classes_are_not_ranked() {
    let t = probe_fixture("jetson-tx2-cpuinfo-only");
    let midr = t.midr.as_ref().expect("cpuinfo's MIDR fields");
    assert_eq!(
        (midr.source.as_str(), midr.arch.as_str()),
        ("cpuinfo", "aarch64")
    );
    assert!(midr.kinds.iter().all(|kind| kind.midr.is_none()));
    let a57 = set([0, 3, 4, 5]);
    let denver = set([1, 2]);
    assert_eq!(
        midr_kinds(&t),
        [
            ("ARM Cortex-A57 r1p3".to_owned(), a57.clone()),
            ("NVIDIA Denver 2 r0p0".to_owned(), denver.clone())
        ]
    );
    // The board's device tree: NUL-separated strings, most specific first.
    assert_eq!(
        t.environment.devicetree_compatible.as_deref(),
        Some("nvidia,p2771-0000, nvidia,tegra186")
    );
    // Nothing ranks Denver 2 against Cortex-A57: no "performance" guess.
    assert_eq!(
        classes(&t),
        vec![(CoreKind::Ranked(0), a57), (CoreKind::Ranked(1), denver)]
    );
    assert!(
        t.classes
            .iter()
            .all(|class| class.source == ClassSource::Midr)
    );
    assert_eq!(
        t.classes[1].detail.as_deref(),
        Some("Denver 2; speed rank unknown: listed by design tier, then part number")
    );
    assert_eq!(
        t.cpu_name().as_deref(),
        Some("ARM Cortex-A57 r1p3 ×4 + NVIDIA Denver 2 r0p0 ×2")
    );
    assert_eq!(
        t.environment.model_name.as_deref(),
        Some("ARMv8 Processor rev 3 (v8l)"),
        "this kernel prints a model name: it is kept"
    );
    let text = placement_study::report::topology::blocks(&t, &View::default())
        .to_terminal(&View::default());
    assert_has_line(
        &text,
        "  cpuid           not part of aarch64 (CPU identity from the MIDR fields of /proc/cpuinfo)",
    );
}

/// Each class's name, source and detail, in the order the prober lists them.
fn class_details(topology: &Topology) -> Vec<(CoreKind, ClassSource, Option<&str>)> {
    topology
        .classes
        .iter()
        .map(|class| (class.name, class.source, class.detail.as_deref()))
        .collect()
}

#[test]
fn orion_o6_classes_are_its_two_designs_not_its_three_capacities() {
    let t = probe_fixture("orion-o6-cix-p1");
    let (a720, a520) = (set(4..12), set(0..4));
    assert_eq!(
        classes(&t),
        vec![
            (CoreKind::Performance, a720.clone()),
            (CoreKind::Efficiency, a520.clone())
        ]
    );
    assert_eq!(
        class_details(&t),
        [
            (
                CoreKind::Performance,
                ClassSource::Midr,
                Some("Cortex-A720, capacity 877-1024, max 2400-2800 MHz")
            ),
            (
                CoreKind::Efficiency,
                ClassSource::Midr,
                Some("Cortex-A520, capacity 259, max 1800 MHz")
            ),
        ]
    );
    assert_eq!(
        midr_kinds(&t),
        [
            ("ARM Cortex-A520 r0p1".to_owned(), a520),
            ("ARM Cortex-A720 r0p1".to_owned(), a720)
        ]
    );
    assert_eq!(
        t.cpu_name().as_deref(),
        Some("ARM Cortex-A720 r0p1 ×8 + Cortex-A520 r0p1 ×4")
    );
    assert_eq!(t.summary.core_classes, 2);
    assert_eq!(t.cpus[9].class, CoreKind::Performance);
}

#[test]
fn one_design_at_three_capacities_is_uniform() {
    // The same machine, had its little cluster been Cortex-A720s too.
    let root = damaged_copy("orion-o6-cix-p1");
    for cpu in 0..4 {
        let midr = format!("cpu{cpu}/regs/identification/midr_el1");
        std::fs::write(root.path().join(CPU_DIR).join(midr), "0x00000000410fd811\n")
            .expect("write");
    }
    let t = probe(Some(root.path()), None).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(classes(&t), vec![(CoreKind::Uniform, set(0..12))]);
}

#[test]
fn raptor_lake_without_hybrid_pmus_has_p_and_e_from_cpufreq() {
    let t = probe_fixture("raptorlake-i9-13900K-no-hybrid-pmu");
    let s = &t.summary;
    assert_eq!((s.cpus, s.packages, s.cores), (32, 1, 24));
    assert_eq!(s.threads_per_core, "mixed(8x2,16x1)");
    assert_eq!(t.environment.pmu_devices, vec!["cpu"]);
    // Favoured cores (5.5, 5.6, 5.8 GHz) are P cores like the 5.4 GHz ones.
    assert_eq!(
        classes(&t),
        vec![
            (CoreKind::Performance, set(0..16)),
            (CoreKind::Efficiency, set(16..32))
        ]
    );
    assert_eq!(
        class_details(&t),
        [
            (
                CoreKind::Performance,
                ClassSource::Cpufreq,
                Some("max 5400-5800 MHz, base 3000 MHz")
            ),
            (
                CoreKind::Efficiency,
                ClassSource::Cpufreq,
                Some("max 4300 MHz, base 2200 MHz")
            ),
        ]
    );

    // Without base_frequency the maxima alone keep P and E apart.
    let root = damaged_copy("raptorlake-i9-13900K-no-hybrid-pmu");
    for cpu in 0..32 {
        let base = format!("cpufreq/policy{cpu}/base_frequency");
        std::fs::remove_file(root.path().join(CPU_DIR).join(base)).expect("remove");
    }
    let t = probe(Some(root.path()), None).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(
        class_details(&t),
        [
            (
                CoreKind::Performance,
                ClassSource::Cpufreq,
                Some("max 5400-5800 MHz")
            ),
            (
                CoreKind::Efficiency,
                ClassSource::Cpufreq,
                Some("max 4300 MHz")
            ),
        ]
    );
    assert_eq!(t.classes[0].cpus, set(0..16));
}

#[test]
fn x86_machines_have_no_midr_and_no_cpuid_absence() {
    for name in ["laptop-i5-11300H", "kvm-guest-2cpu"] {
        let t = probe_fixture(name);
        assert_eq!(t.midr, None, "{name}");
        assert_eq!(
            t.source.cpuid_absent, None,
            "{name}: CPUID was only not read"
        );
    }
}

#[test]
fn a_garbled_midr_is_an_error_naming_the_file() {
    let root = damaged_copy("graviton2-m6g-xlarge");
    let file = "cpu2/regs/identification/midr_el1";
    std::fs::write(root.path().join(CPU_DIR).join(file), "Neoverse\n").expect("write");
    let error = one_line_error_naming(root.path(), file);
    assert!(
        error.contains("expected a MIDR_EL1 value like 0x"),
        "{error}"
    );

    let root = damaged_copy("jetson-tx2-cpuinfo-only");
    let cpuinfo = root.path().join("proc/cpuinfo");
    let text = std::fs::read_to_string(&cpuinfo).expect("read cpuinfo");
    let garbled = text.replacen("CPU part\t: 0xd07", "CPU part\t: A57", 1);
    std::fs::write(&cpuinfo, garbled).expect("write cpuinfo");
    let error = one_line_error_naming(root.path(), "proc/cpuinfo");
    assert!(
        error.ends_with("CPU part: expected a 12-bit number like 0xd0c, found 'A57'"),
        "{error}"
    );
}

#[test]
fn kvm_guest_claiming_siblings_is_taken_at_its_word_by_sysfs() {
    let t = probe_fixture("kvm-guest-claims-smt");
    let s = &t.summary;
    assert_eq!((s.cpus, s.cores, s.packages), (4, 2, 1));
    assert_eq!(s.smt, Some(true));
    assert_eq!(*siblings(&t, 0), set([0, 1]));
    assert_eq!(*siblings(&t, 3), set([2, 3]));
    assert_eq!(t.crosscheck, None, "nothing to cross-check without CPUID");
    let env = &t.environment;
    assert_eq!(env.clocksource.as_deref(), Some("kvm-clock"));
    assert_eq!(env.dmi_vendor.as_deref(), Some("QEMU"));
    assert_eq!(env.perf_event_paranoid, Some(3));
}

#[test]
fn a_corrupt_sibling_map_becomes_a_partition_with_notes() {
    let t = probe_fixture("corrupt-sibling-map");
    let s = &t.summary;
    assert_eq!((s.cpus, s.cores, s.packages), (7, 3, 1));
    assert_eq!(s.threads_per_core, "mixed(1x3,2x2)");
    assert_eq!(*siblings(&t, 1), set([0, 1]), "CPU 0 listed CPU 1");
    assert_eq!(*siblings(&t, 4), set([4, 5, 6]), "overlapping sets merge");
    assert_eq!(t.cpus[0].core, t.cpus[1].core);
    assert_eq!((t.cpus[4].core, t.cpus[6].core), (2, 2));
    assert!(t.cpus.iter().all(|cpu| cpu.package == 0));
    assert_eq!(
        t.sibling_map_notes,
        vec![
            "CPU 0's core_cpus_list lists CPU 1, but CPU 1's does not list CPU 0: treated as one core (CPUs 0-1)",
            "CPU 4's core_cpus_list (CPUs 4-5) and CPU 5's (CPUs 4-6) overlap but differ: treated as one core (CPUs 4-6)",
            "CPU 0's package_cpus_list lists CPU 6, but CPU 6's does not list CPU 0: treated as one package (CPUs 0-6)",
            "CPU 1's package_cpus_list lists CPU 6, but CPU 6's does not list CPU 1: treated as one package (CPUs 0-6)",
            "CPU 2's package_cpus_list lists CPU 6, but CPU 6's does not list CPU 2: treated as one package (CPUs 0-6)",
            "CPU 3's package_cpus_list lists CPU 6, but CPU 6's does not list CPU 3: treated as one package (CPUs 0-6)",
        ]
    );
    // Notes are part of the saved topology, and a file without them reads.
    let json = serde_json::to_value(&t).expect("serializes");
    assert_eq!(json["sibling_map_notes"].as_array().map(Vec::len), Some(6));
    let mut older = json;
    older
        .as_object_mut()
        .expect("an object")
        .remove("sibling_map_notes");
    let back: Topology = serde_json::from_value(older).expect("reads without notes");
    assert!(back.sibling_map_notes.is_empty());
}

#[test]
fn sane_sibling_maps_have_no_notes() {
    for name in [
        "laptop-i5-11300H",
        "alderlake-i5-12600K",
        "server-2s-xeon-8462Y",
    ] {
        assert_eq!(
            probe_fixture(name).sibling_map_notes,
            Vec::<String>::new(),
            "{name}"
        );
    }
}

#[test]
fn topology_round_trips_through_json() {
    let t = probe_fixture("alderlake-i5-12600K");
    let json = serde_json::to_string(&t).expect("serializes");
    // Class names and sources are saved as the strings they always were.
    assert!(
        json.contains(
            r#""name":"performance","cpus":[0,1,2,3,4,5,6,7,8,9,10,11],"source":"sysfs-pmu""#
        ),
        "{json}"
    );
    assert!(json.contains(r#""class":"efficiency""#), "{json}");
    let back: Topology = serde_json::from_str(&json).expect("deserializes");
    assert_eq!(back, t);
}

#[test]
fn this_machine_probes_consistently() {
    let t = probe(None, None).unwrap_or_else(|e| panic!("probing this machine: {e:#}"));
    let s = &t.summary;
    assert!(s.cpus >= 1);
    assert!(s.cores >= 1 && s.cores <= s.cpus);
    assert!(s.packages >= 1 && s.packages <= s.cores);
    assert!(s.allowed >= 1 && s.allowed <= s.cpus);
    assert_eq!(t.cpus.len(), s.cpus);
    assert_eq!(t.source.sysfs_root, None);
    let allowed = t
        .environment
        .allowed_cpus
        .as_ref()
        .expect("live affinity is read");
    assert!(!allowed.is_empty());
    let classified: usize = t.classes.iter().map(|class| class.cpus.len()).sum();
    assert_eq!(classified, s.cpus, "every CPU has exactly one class");
}

// Damaged snapshots: a scratch copy of a fixture with one thing broken.

fn damaged_copy(name: &str) -> tempfile::TempDir {
    let scratch = tempfile::tempdir().expect("tempdir");
    copy_tree(&fixture(name), scratch.path());
    scratch
}

/// The error of probing `root`, checked to be one line naming `path`.
fn one_line_error_naming(root: &Path, path: &str) -> String {
    let error = match probe(Some(root), None) {
        Ok(_) => panic!("probing {} should fail", root.display()),
        Err(error) => format!("{error:#}"),
    };
    assert!(!error.contains('\n'), "not one line: {error:?}");
    assert!(error.contains(path), "{error:?} does not name {path}");
    error
}

const CPU_DIR: &str = "sys/devices/system/cpu";

#[test]
fn missing_root_is_an_error_naming_it() {
    let error = one_line_error_naming(Path::new("/nonexistent/snapshot"), "/nonexistent/snapshot");
    assert!(error.contains("sys/ and proc/"), "{error}");
    let empty = tempfile::tempdir().expect("tempdir");
    one_line_error_naming(empty.path(), CPU_DIR);
}

#[test]
fn garbled_online_list_is_an_error_naming_the_file() {
    let root = damaged_copy("kvm-guest-claims-smt");
    std::fs::write(root.path().join(CPU_DIR).join("online"), "0-3x\n").expect("write");
    let error = one_line_error_naming(root.path(), "cpu/online");
    assert!(error.contains("CPU list"), "{error}");
}

#[test]
fn garbled_sibling_list_is_an_error_naming_the_file() {
    let root = damaged_copy("kvm-guest-claims-smt");
    let file = "cpu2/topology/thread_siblings_list";
    std::fs::write(root.path().join(CPU_DIR).join(file), "two,three\n").expect("write");
    one_line_error_naming(root.path(), file);
}

#[test]
fn garbled_environment_value_is_an_error_naming_the_file() {
    let root = damaged_copy("kvm-guest-2cpu");
    let file = "proc/sys/kernel/perf_event_paranoid";
    std::fs::write(root.path().join(file), "paranoid\n").expect("write");
    one_line_error_naming(root.path(), file);
}

#[test]
fn a_huge_attribute_file_is_refused_without_reading_it_whole() {
    let root = damaged_copy("kvm-guest-2cpu");
    let file = "cpu1/topology/core_cpus_list";
    let huge = std::fs::File::create(root.path().join(CPU_DIR).join(file)).expect("create");
    // Sparse: 300 MB that take no disk; reading them whole would take seconds.
    huge.set_len(300 << 20).expect("set_len");
    let error = one_line_error_naming(root.path(), file);
    assert!(
        error.ends_with("larger than 1 MiB; not a sysfs attribute file"),
        "{error}"
    );
}

#[test]
fn a_huge_cpuinfo_is_read_only_to_its_first_block() {
    let root = damaged_copy("kvm-guest-2cpu");
    let cpuinfo = root.path().join("proc/cpuinfo");
    let mut text = std::fs::read(&cpuinfo).expect("read cpuinfo");
    text.extend(std::iter::repeat_n(b'x', 20 << 20));
    std::fs::write(&cpuinfo, text).expect("write cpuinfo");
    let t = probe(Some(root.path()), None).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(t.environment.hypervisor_flag, Some(true));

    // No blank line ever ends the first block: the limit ends the read.
    std::fs::write(&cpuinfo, "processor : 0\n".repeat(2 << 20)).expect("write cpuinfo");
    let error = one_line_error_naming(root.path(), "proc/cpuinfo");
    assert!(
        error.ends_with("larger than 16 MiB; not a /proc/cpuinfo file"),
        "{error}"
    );
}

#[test]
fn cpu_numbers_past_the_limit_are_refused() {
    let root = damaged_copy("kvm-guest-claims-smt");
    let online = root.path().join(CPU_DIR).join("online");
    std::fs::write(&online, "0-3,16384\n").expect("write");
    let error = one_line_error_naming(root.path(), "cpu/online");
    assert!(
        error.contains("CPU 16384") && error.contains("below 16384"),
        "{error}"
    );

    // Without an online file, the cpuN folders count: one past the limit is named.
    std::fs::remove_file(&online).expect("remove online");
    std::fs::create_dir(root.path().join(CPU_DIR).join("cpu20000")).expect("mkdir");
    let error = one_line_error_naming(root.path(), CPU_DIR);
    assert!(
        error.contains("cpu20000") && error.contains("below 16384"),
        "{error}"
    );
}

#[test]
fn masks_and_cpu_folders_stand_in_for_missing_lists_and_online() {
    let root = damaged_copy("kvm-guest-claims-smt");
    let cpu_dir = root.path().join(CPU_DIR);
    std::fs::remove_file(cpu_dir.join("online")).expect("remove online");
    for cpu in 0..4 {
        let topology = cpu_dir.join(format!("cpu{cpu}/topology"));
        for list in ["thread_siblings_list", "core_siblings_list"] {
            std::fs::remove_file(topology.join(list)).expect("remove list");
        }
    }
    // An offline CPU: its online file says 0 and it has no topology/.
    let offline = cpu_dir.join("cpu3");
    std::fs::write(offline.join("online"), "0\n").expect("write");
    std::fs::remove_dir_all(offline.join("topology")).expect("remove topology");

    let t = probe(Some(root.path()), None).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!((t.summary.cpus, t.summary.cores), (3, 2));
    assert_eq!(t.cpus[2].siblings, set([2]), "offline CPU 3 is no sibling");
    assert_eq!(t.summary.threads_per_core, "mixed(1x2,1x1)");
}

#[test]
fn a_cpu_lacking_its_neighbours_list_file_falls_back_to_the_mask() {
    let root = damaged_copy("laptop-i5-11300H");
    let topology = root.path().join(CPU_DIR).join("cpu6/topology");
    for list in ["core_cpus_list", "thread_siblings_list"] {
        std::fs::remove_file(topology.join(list)).expect("remove list");
    }
    std::fs::write(topology.join("core_cpus"), "44\n").expect("write");
    let t = probe(Some(root.path()), None).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(t.cpus[6].siblings, set([2, 6]));
    assert_eq!(t.summary.cores, 4);
}

#[test]
fn a_hybrids_core_pmus_name_their_types_and_cpus() {
    let t = probe_fixture("alderlake-i5-12600K");
    let pmus: Vec<(&str, u32, String)> = t
        .environment
        .core_pmus
        .iter()
        .map(|p| (p.name.as_str(), p.pmu_type, p.cpus.to_string()))
        .collect();
    assert_eq!(
        pmus,
        [
            ("cpu_atom", 10, "12-15".to_string()),
            ("cpu_core", 4, "0-11".to_string())
        ]
    );
    // One PMU for every core names no CPUs.
    assert!(
        probe_fixture("kvm-guest-2cpu")
            .environment
            .core_pmus
            .is_empty()
    );
}

/// A generated machine of 256 CPUs (tests/big_machine) probes as written:
/// two threads per core, first threads first, 32 cores per die, two dies
/// per package; the same CPUs in one package; and that one with only the
/// even CPUs online.
#[test]
fn generated_machines_probe_as_written() {
    use crate::big_machine::BigMachine;
    let dir = tempfile::tempdir().unwrap();
    BigMachine::with_cpus(256).write(dir.path()).unwrap();
    let t = probe(Some(dir.path()), None).unwrap();
    let s = &t.summary;
    assert_eq!((s.cpus, s.packages, s.cores), (256, 2, 128));
    assert_eq!((s.threads_per_core.as_str(), s.smt), ("2", Some(true)));
    assert_eq!(*siblings(&t, 5), set([5, 133]));
    assert_eq!(t.cpus[133].core, 5);
    assert_eq!(t.cpus[200].package, 1, "core 72 is in die 2, package 1");
    assert_eq!(
        cache_of(&t, 3, "Unified", 40),
        (Some(64 << 20), set((32..64).chain(160..192)))
    );
    assert_eq!(
        t.caches.len(),
        3 * 128 + 4,
        "L1d, L1i, L2 per core, L3 per die"
    );
    assert!(t.sibling_map_notes.is_empty(), "{:?}", t.sibling_map_notes);
    // Each core's mask would be 8 words: the view leaves the masks out,
    // and says so once.
    let text = placement_study::report::topology::blocks(&t, &View::default())
        .to_terminal(&View::default());
    assert!(
        text.contains("\n  Core 5    uniform                CPUs 5,133\n"),
        "{text}"
    );
    assert!(!text.contains("mask "), "{text}");
    assert_eq!(
        text.matches("(masks left out: with CPU 255, each is 71")
            .count(),
        1
    );

    let dir = tempfile::tempdir().unwrap();
    BigMachine::one_package(256).write(dir.path()).unwrap();
    let t = probe(Some(dir.path()), None).unwrap();
    assert_eq!((t.summary.packages, t.summary.cores), (1, 128));
    assert_eq!(cache_of(&t, 3, "Unified", 255).1, set(0..256));
    assert!(t.cpus.iter().all(|entry| entry.package == 0));

    // Online CPUs that are not one range: every set is restricted to them.
    let evens: Vec<String> = (0..256)
        .step_by(2)
        .map(|cpu: u32| cpu.to_string())
        .collect();
    std::fs::write(dir.path().join(CPU_DIR).join("online"), evens.join(",")).unwrap();
    let t = probe(Some(dir.path()), None).unwrap();
    assert_eq!((t.summary.cpus, t.summary.cores), (128, 64));
    assert_eq!(t.summary.threads_per_core, "2");
    let cpu6 = t.cpus.iter().find(|entry| entry.cpu == 6).unwrap();
    assert_eq!(cpu6.siblings, set([6, 134]));
    assert_eq!(cache_of(&t, 3, "Unified", 254).1, set((0..256).step_by(2)));
}

/// The laptop with every `cpuN/topology` folder removed: which CPUs share
/// a core is unknown, and the probe says so instead of "no SMT".
pub(crate) fn laptop_without_topology() -> tempfile::TempDir {
    let root = damaged_copy("laptop-i5-11300H");
    for cpu in 0..8 {
        let topology = root.path().join(CPU_DIR).join(format!("cpu{cpu}/topology"));
        std::fs::remove_dir_all(topology).expect("remove topology");
    }
    root
}

#[test]
fn missing_topology_folders_make_the_structure_unknown() {
    let root = laptop_without_topology();
    let t = probe(Some(root.path()), None).expect("probes");
    let s = &t.summary;
    assert_eq!(s.smt, None, "never 'no SMT' for lack of files");
    assert_eq!(s.threads_per_core, "unknown");
    let why = s.structure_unknown.as_deref().expect("says why");
    assert!(
        why.starts_with("no core sibling set for CPUs 0-7 (expected ")
            && why.ends_with("cpu0/topology/core_cpus_list or thread_siblings)"),
        "{why}"
    );
    let text = placement_study::report::topology::blocks(&t, &View::default())
        .to_terminal(&View::default());
    assert!(text.contains("SMT unknown"), "{text}");
    assert!(
        text.contains("the machine's structure is unknown"),
        "{text}"
    );
    let json = serde_json::to_value(&t).expect("serializes");
    assert_eq!(json["summary"]["smt"], serde_json::Value::Null);
    assert_eq!(json["summary"]["structure_unknown"], why);

    // One online CPU shares its core with none, folder or not.
    std::fs::write(root.path().join(CPU_DIR).join("online"), "0\n").expect("write");
    let one = probe(Some(root.path()), None).expect("probes");
    assert_eq!(
        (one.summary.smt, one.summary.structure_unknown),
        (Some(false), None)
    );

    // A complete snapshot writes no structure_unknown at all.
    let known = serde_json::to_value(probe_fixture("laptop-i5-11300H")).expect("serializes");
    assert_eq!(known["summary"]["smt"], true);
    assert!(known["summary"].get("structure_unknown").is_none());
}

#[test]
fn one_cpu_without_topology_or_a_cpu_that_is_a_file_is_unknown_too() {
    let root = damaged_copy("laptop-i5-11300H");
    std::fs::remove_dir_all(root.path().join(CPU_DIR).join("cpu6/topology")).expect("remove");
    let t = probe(Some(root.path()), None).expect("probes");
    let why = t.summary.structure_unknown.expect("unknown");
    assert!(why.starts_with("no core sibling set for CPU 6 "), "{why}");

    let root = damaged_copy("laptop-i5-11300H");
    let cpu1 = root.path().join(CPU_DIR).join("cpu1");
    std::fs::remove_dir_all(&cpu1).expect("remove");
    std::fs::write(&cpu1, "not a folder\n").expect("write");
    let t = probe(Some(root.path()), None).expect("probes");
    assert_eq!(t.summary.smt, None);
    let why = t.summary.structure_unknown.expect("unknown");
    assert!(
        why.starts_with("no core sibling set for CPU 1 ")
            && why.ends_with("; cpuN is not a folder for N = 1"),
        "{why}"
    );
}

/// `gate` on a machine whose cores are unknown: inconclusive (exit 5),
/// saying why; not no-smt (exit 4), which would be a verdict made of
/// missing files.
#[test]
fn gate_on_unknown_structure_is_inconclusive_not_no_smt() {
    let root = laptop_without_topology();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(["gate", "--no-cpuid", "--json=-", "--sysfs-root"])
        .arg(root.path())
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(document["verdict"], "inconclusive");
    assert_eq!(document["no_smt_reason"], serde_json::Value::Null);
    let sentence = document["sentence"].as_str().expect("a sentence");
    assert!(
        sentence.starts_with("no sibling pair can be chosen: the machine's structure is unknown"),
        "{sentence}"
    );
    assert!(!sentence.contains("SMT is absent"), "{sentence}");
}

/// As under `taskset -c 1`: live CPUID can be read only on CPU 1, so the
/// cross-check compares CPU 1 alone and names the CPUs it left out; CPU 0
/// is no evidence of disagreement.
#[cfg(target_arch = "x86_64")]
#[test]
fn restricted_affinity_leaves_cpus_out_of_the_crosscheck() {
    use std::os::unix::process::CommandExt;
    if !crate::common::two_cpus_allowed() {
        return;
    }
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_placement-study"));
    command.args(["topology", "--json=-"]);
    // SAFETY: between fork and exec the child only sets its own affinity,
    // which is async-signal-safe (one system call).
    unsafe {
        command.pre_exec(|| {
            let mut only_cpu1 = nix::sched::CpuSet::new();
            only_cpu1.set(1).map_err(std::io::Error::other)?;
            nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &only_cpu1)
                .map_err(std::io::Error::other)
        });
    }
    let output = command.output().expect("runs");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let cross = &document["crosscheck"];
    let mismatches = cross["mismatches"].as_array().expect("mismatches");
    assert!(
        !mismatches
            .iter()
            .any(|m| m.as_str().unwrap().contains("CPUID was not read on it")),
        "{mismatches:?}"
    );
    let left_out = cross["not_compared"]
        .as_str()
        .expect("names the CPUs left out");
    assert!(
        left_out.contains("this process's CPU affinity leaves"),
        "{left_out}"
    );
    assert!(
        left_out.starts_with("CPU 0") || left_out.starts_with("CPUs 0"),
        "{left_out}"
    );
}

/// Where which CPUs share a core is unknown, `run` places no arm on a
/// guess: one-per-core and sibling-packed are left out with a note (or,
/// asked for alone, refused with a command that works), and no view counts
/// the CPUs as cores.
#[test]
fn run_on_unknown_structure_places_no_arm_on_a_guess() {
    use placement_study::plan::{self, Arm};
    let root = laptop_without_topology();
    let t = probe(Some(root.path()), None).expect("probes");
    let chosen = plan::study_arms(&t, None, None).unwrap();
    assert_eq!(chosen.arms, plan::UNKNOWN_STRUCTURE_ARMS);
    assert_eq!(chosen.workers, 2);
    let note = chosen.left_out.expect("a note");
    assert!(
        note.starts_with("one-per-core and sibling-packed left out: which CPUs share a core is unknown (no core sibling set"),
        "{note}"
    );
    let asked = [Arm::OnePerCore, Arm::SameCpu];
    let chosen = plan::study_arms(&t, Some(3), Some(&asked)).unwrap();
    assert_eq!(
        (chosen.arms.as_slice(), chosen.workers),
        (&[Arm::SameCpu][..], 3)
    );
    assert!(
        chosen
            .left_out
            .unwrap()
            .starts_with("one-per-core left out: ")
    );
    let refused = plan::study_arms(&t, None, Some(&[Arm::SiblingPacked])).unwrap_err();
    assert!(
        refused.ends_with(
            "`placement-study run --workers 2 --arms unpinned,same-cpu` measures what can be"
        ),
        "{refused}"
    );

    let text = placement_study::report::topology::blocks(&t, &View::default())
        .to_terminal(&View::default());
    assert!(
        text.contains("8 CPUs (8 allowed), cores unknown, 1 package"),
        "{text}"
    );
    let shape = placement_study::report::compare::MachineShape::of(&t.summary);
    assert_eq!(shape.to_string(), "1 package, cores unknown, 1 core class");
}

/// `run -- COMMAND` watches, CPU-wide, the SMT siblings of the arm's CPUs
/// that the study's topology names; where which CPUs share a core is
/// unknown, it says so instead of watching a guess.
#[test]
fn a_command_arm_watches_the_siblings_its_topology_names() {
    use placement_study::measure::command::Watched;
    let laptop = probe(Some(Path::new("fixtures/sysfs/laptop-i5-11300H")), None).expect("probes");
    let watched = Watched::of(&laptop, &CpuSet::from_cpus([0, 1]));
    assert_eq!(watched.online, CpuSet::from_cpus(0..8));
    assert_eq!(watched.siblings, Ok(CpuSet::from_cpus([4, 5])));
    // Sibling-packed: each CPU is the other's sibling, watched for what
    // else runs there while the tree runs beside it.
    let both_threads = Watched::of(&laptop, &CpuSet::from_cpus([0, 4]));
    assert_eq!(both_threads.siblings, Ok(CpuSet::from_cpus([0, 4])));
    let root = laptop_without_topology();
    let unknown = probe(Some(root.path()), None).expect("probes");
    let reason = Watched::of(&unknown, &CpuSet::from_cpus([0]))
        .siblings
        .unwrap_err();
    assert!(reason.contains("no core sibling set"), "{reason}");
}

/// Each node of a probed machine: (node, CPUs, MemTotal KiB, distances).
fn nodes(topology: &Topology) -> Vec<(u32, CpuSet, Option<u64>, Vec<u32>)> {
    topology
        .nodes
        .iter()
        .map(|node| {
            (
                node.node,
                node.cpus.clone(),
                node.memory_kib,
                node.distances.clone(),
            )
        })
        .collect()
}

/// Several nodes to a package, node by node: sub-NUMA clustering (two
/// nodes in each of two packages, 11 within a package and 20 across) and
/// an EPYC in NPS4 (four nodes in one package, 11 beside and 12 across).
#[test]
fn several_nodes_to_a_package_read_node_by_node() {
    // Each node: 8 cores from `first` and their siblings, 32 CPUs on.
    let node_cpus = |first: u32| set((first..first + 8).chain(first + 32..first + 40));
    // Each machine: its packages, each node's MemTotal, and the distance
    // to the node paired with it (0-1, 2-3) and to the others.
    let machines = [
        (
            "server-2s-xeon-4314-snc2",
            2,
            [65_280_724, 66_036_932, 66_036_928, 66_023_384],
            (11, 20),
        ),
        (
            "epyc-7543-nps4",
            1,
            [65_828_016, 66_058_152, 66_058_152, 66_044_716],
            (11, 12),
        ),
    ];
    for (name, packages, memory, (paired, across)) in machines {
        let t = probe_fixture(name);
        assert_eq!(
            (t.summary.cpus, t.summary.packages),
            (64, packages),
            "{name}"
        );
        let distance = |from: u32, to: u32| match (from, to) {
            _ if from == to => 10,
            _ if from / 2 == to / 2 => paired,
            _ => across,
        };
        let expected: Vec<_> = (0..4u32)
            .map(|n| {
                let distances = (0..4).map(|to| distance(n, to)).collect();
                (n, node_cpus(8 * n), Some(memory[n as usize]), distances)
            })
            .collect();
        assert_eq!(nodes(&t), expected, "{name}");
        for cpu in &t.cpus {
            let node = t.node_of(cpu.cpu).unwrap();
            assert_eq!(
                cpu.package,
                node as usize * packages / 4,
                "{name} CPU {}",
                cpu.cpu
            );
        }
        assert!(t.node_notes.is_empty(), "{name}: {:?}", t.node_notes);
    }
}

/// A CXL expander: a node with memory and no CPU, farther than local DRAM.
#[test]
fn a_memory_only_node_has_memory_and_no_cpus() {
    let t = probe_fixture("xeon-cxl-memory-node");
    assert_eq!(
        nodes(&t),
        vec![
            (0, set(0..24), Some(130_563_416), vec![10, 21]),
            (1, set([]), Some(134_217_728), vec![21, 10]),
        ]
    );
    assert!(t.node_notes.is_empty(), "{:?}", t.node_notes);
    let text = placement_study::report::topology::blocks(&t, &View::default())
        .to_terminal(&View::default());
    assert!(
        text.contains("node 1  memory  128.0 GiB  no CPUs"),
        "{text}"
    );
    // A file saved before nodes were read still reads, with none.
    let mut older = serde_json::to_value(&t).expect("serializes");
    let fields = older.as_object_mut().expect("an object");
    fields.remove("nodes");
    fields.remove("node_notes");
    let back: Topology = serde_json::from_value(older).expect("reads without nodes");
    assert!(back.nodes.is_empty() && back.node_notes.is_empty());
}

/// A machine without node files has no nodes, and says so.
#[test]
fn a_machine_without_node_files_has_no_nodes() {
    let t = probe_fixture("laptop-i5-11300H");
    assert!(t.nodes.is_empty() && t.node_notes.is_empty());
    let text = placement_study::report::topology::blocks(&t, &View::default())
        .to_terminal(&View::default());
    assert!(text.contains("none: no NUMA node files"), "{text}");
}

/// Node lists that overlap, and a CPU in no node, each a note naming the
/// CPUs, in the view's notes too.
#[test]
fn overlapping_node_lists_and_a_cpu_in_no_node_are_noted() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("machine");
    copy_tree(&fixture("epyc-7543-nps4"), &root);
    let node = root.join("sys/devices/system/node");
    std::fs::write(node.join("node1/cpulist"), "7-15,40-47\n").unwrap();
    std::fs::write(node.join("node3/cpulist"), "24-30,56-63\n").unwrap();
    let t = probe(Some(&root), None).unwrap();
    assert_eq!(
        t.node_notes,
        [
            "CPU 7 is in the cpulist of nodes 0 and 1: node lists should not overlap; \
             each CPU is counted in its lowest node",
            "online CPU 31 is in no node's cpulist",
        ]
    );
    assert_eq!(t.node_of(7), Some(0));
    assert_eq!(t.node_of(31), None);
    let by_cpu = t.nodes_by_cpu();
    assert_eq!((by_cpu.get(&7), by_cpu.get(&31)), (Some(&0), None));
    let text = placement_study::report::topology::blocks(&t, &View::default())
        .to_terminal(&View::default());
    assert!(
        text.contains("the kernel's NUMA node files disagree: CPU 7"),
        "{text}"
    );
}
