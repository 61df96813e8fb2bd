//! The CPUID reader on our own fixtures (`fixtures/cpuid/<machine>/puN`,
//! hand-written after real machines), on bad dumps, and on this machine.
#![cfg(target_arch = "x86_64")]

use placement_study::cpuset::CpuSet;
use placement_study::probe::classes::classes_from_cpuid;
use placement_study::probe::cpuid::{read_report, write_dump};
use placement_study::probe::crosscheck::{crosscheck, entries_from_cpuid};
use placement_study::probe::{ClassSource, CoreKind, CpuEntry, CpuidReport, CpuidSource};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/cpuid")
        .join(name)
}

fn read_fixture(name: &str) -> CpuidReport {
    read_report(&CpuidSource::Dump(fixture(name)), &CpuSet::default())
        .unwrap_or_else(|error| panic!("fixture {name}: {error:#}"))
}

fn set(cpus: impl IntoIterator<Item = u32>) -> CpuSet {
    CpuSet::from_cpus(cpus)
}

/// The error a dump gives, as the one line a user would see.
fn dump_error(dir: &Path) -> String {
    let error = read_report(&CpuidSource::Dump(dir.to_path_buf()), &CpuSet::default())
        .expect_err("a bad dump must be an error");
    format!("{error:#}")
}

/// A sysfs-style entry, as the sysfs prober would build it.
fn sysfs_entry(cpu: u32, core: usize, siblings: CpuSet) -> CpuEntry {
    CpuEntry::on_core(cpu, core, 0, siblings)
}

#[test]
fn laptop_with_siblings_n_and_n_plus_4() {
    let report = read_fixture("i5-11300H");
    assert_eq!(report.vendor, "GenuineIntel");
    assert_eq!((report.family, report.model, report.stepping), (6, 0x8c, 1));
    assert_eq!(
        report.brand.as_deref(),
        Some("11th Gen Intel(R) Core(TM) i5-11300H @ 3.10GHz")
    );
    assert!(!report.hypervisor_bit && !report.hybrid_bit);
    assert_eq!(report.hypervisor_signature, None);
    assert_eq!(
        (
            report.topology_leaf.as_str(),
            report.smt_shift,
            report.core_shift
        ),
        ("0xb", 1, 4)
    );
    assert_eq!(
        (
            report.packages,
            report.cores,
            report.threads_per_core.as_str()
        ),
        (1, 4, "2")
    );
    assert_eq!(report.tsc_hz, Some(3_110_400_000));
    assert_eq!(report.tsc_hz_source.as_deref(), Some("cpuid-0x15"));
    assert_eq!(report.crystal_hz, Some(38_400_000));
    assert_eq!(classes_from_cpuid(&report), None);

    let entries = entries_from_cpuid(&report);
    assert_eq!(entries.len(), 8);
    for entry in &entries {
        let first = entry.cpu % 4;
        assert_eq!(entry.siblings, set([first, first + 4]), "CPU {}", entry.cpu);
        assert_eq!(entry.core, first as usize);
        assert_eq!(entry.class, CoreKind::Uniform);
    }
    assert_eq!(entries[5].apic_id, Some(3));
}

#[test]
fn alder_lake_has_smt_performance_cores_and_single_thread_efficiency_cores() {
    let report = read_fixture("alder-lake-i5-12600K");
    assert!(report.hybrid_bit);
    assert_eq!(report.topology_leaf, "0x1f");
    assert_eq!((report.packages, report.cores), (1, 10));
    assert_eq!(report.threads_per_core, "mixed(6x2,4x1)");
    assert_eq!(report.per_cpu[12].core_type, Some(CoreKind::Efficiency));
    assert_eq!(report.per_cpu[12].core_type_raw, Some(0x20));

    let classes = classes_from_cpuid(&report).expect("a hybrid part has classes");
    let summary: Vec<(CoreKind, String, ClassSource, Option<&str>)> = classes
        .iter()
        .map(|c| (c.name, c.cpus.to_string(), c.source, c.detail.as_deref()))
        .collect();
    assert_eq!(
        summary,
        [
            (
                CoreKind::Performance,
                "0-11".to_string(),
                ClassSource::CpuidLeaf1a,
                Some("core type 0x40")
            ),
            (
                CoreKind::Efficiency,
                "12-15".to_string(),
                ClassSource::CpuidLeaf1a,
                Some("core type 0x20")
            ),
        ]
    );
    let entries = entries_from_cpuid(&report);
    assert_eq!(entries[3].siblings, set([2, 3]));
    assert_eq!(entries[13].siblings, set([13]));
    assert_eq!(
        (&entries[3].class, &entries[13].class),
        (&CoreKind::Performance, &CoreKind::Efficiency)
    );
}

#[test]
fn low_power_efficiency_cores_are_the_atom_cores_without_l3() {
    let report = read_fixture("core-ultra-7-356h");
    assert_eq!((report.cores, report.threads_per_core.as_str()), (16, "1"));
    let classes: Vec<(String, String)> = classes_from_cpuid(&report)
        .expect("a hybrid part has classes")
        .into_iter()
        .map(|c| (c.name.to_string(), c.cpus.to_string()))
        .collect();
    let expected = [
        ("performance", "0-3"),
        ("efficiency", "4-11"),
        ("low-power efficiency", "12-15"),
    ];
    assert_eq!(
        classes,
        expected.map(|(name, cpus)| (name.to_string(), cpus.to_string()))
    );
}

#[test]
fn kvm_guest_reports_its_hypervisor_and_no_smt() {
    let report = read_fixture("kvm-guest-2vcpu");
    assert!(report.hypervisor_bit);
    assert_eq!(report.hypervisor_signature.as_deref(), Some("KVMKVMKVM"));
    assert_eq!(report.hypervisor_name.as_deref(), Some("KVM"));
    assert_eq!(
        (
            report.packages,
            report.cores,
            report.threads_per_core.as_str()
        ),
        (1, 2, "1")
    );
    assert_eq!(report.tsc_hz, None);
    let apic_ids: Vec<u32> = report.per_cpu.iter().map(|cpu| cpu.apic_id).collect();
    assert_eq!(apic_ids, [0, 1]);
}

#[test]
fn crosscheck_catches_a_guest_kernel_that_invents_siblings() {
    let report = read_fixture("guest-fake-siblings");
    assert_eq!((report.cores, report.threads_per_core.as_str()), (4, "1"));
    assert_eq!(report.hypervisor_name.as_deref(), Some("KVM"));

    // What the guest's sysfs says: 2 cores x 2 threads.
    let sysfs: Vec<CpuEntry> = (0..4)
        .map(|cpu| sysfs_entry(cpu, cpu as usize / 2, set([cpu & !1, cpu | 1])))
        .collect();
    let check = crosscheck(&sysfs, &report, &set(0..8));
    assert!(!check.agrees);
    assert_eq!(
        check.mismatches,
        [
            "CPUs 0 and 1: sysfs says one core, CPUID says different cores (APIC ids 0x0, 0x1)",
            "CPUs 2 and 3: sysfs says one core, CPUID says different cores (APIC ids 0x2, 0x3)",
        ]
    );

    let agreeing = crosscheck(&entries_from_cpuid(&report), &report, &set(0..8));
    assert!(agreeing.agrees, "{:?}", agreeing.mismatches);
}

#[test]
fn crosscheck_catches_hidden_siblings_and_missing_cpus() {
    let report = read_fixture("i5-11300H");
    // A sysfs that lost the sibling map (every CPU its own core) and CPU 7.
    let sysfs: Vec<CpuEntry> = (0..7)
        .map(|cpu| sysfs_entry(cpu, cpu as usize, set([cpu])))
        .collect();
    let check = crosscheck(&sysfs, &report, &set(0..8));
    assert!(!check.agrees);
    assert!(
        check.mismatches.contains(
            &"CPU 7: CPUID was read on it, but sysfs does not list it online".to_string()
        )
    );
    assert!(
        check.mismatches.contains(
            &"CPUs 0 and 4: sysfs says different cores, CPUID says one core (APIC ids 0x0, 0x1)"
                .to_string()
        )
    );
    assert_eq!(check.mismatches.len(), 4, "{:#?}", check.mismatches);
}

// ---------------------------------------------------------------- bad input

/// A dump folder with one `pu0` holding `text`.
fn dump_with_pu0(text: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a scratch folder");
    fs::write(dir.path().join("pu0"), text).expect("writable scratch folder");
    dir
}

#[test]
fn missing_or_empty_dump_folders_are_named() {
    let missing = Path::new("/nonexistent/cpuid-dump");
    assert!(dump_error(missing).contains("/nonexistent/cpuid-dump"));

    let empty = tempfile::tempdir().unwrap();
    let message = dump_error(empty.path());
    assert!(
        message.contains(&empty.path().display().to_string()) && message.contains("no puN files"),
        "{message}"
    );
}

#[test]
fn garbled_lines_name_the_file_and_line() {
    let dir = dump_with_pu0(b"1 0 0 0 0 => d 756e6547 6c65746e 49656e69\nthis is not cpuid\n");
    let message = dump_error(dir.path());
    assert!(
        message.contains(&format!("{}:2:", dir.path().join("pu0").display())),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");
}

#[test]
fn a_truncated_file_is_an_error_not_a_guess() {
    let text = fs::read_to_string(fixture("i5-11300H/pu0")).unwrap();
    let cut = text.find("80000002").unwrap() + 20;
    let dir = dump_with_pu0(&text.as_bytes()[..cut]);
    let message = dump_error(dir.path());
    assert!(
        message.contains("pu0:") && message.contains("expected `MASK"),
        "{message}"
    );

    // Cut at a line boundary before leaf 1: the missing leaf is named.
    let dir = dump_with_pu0(
        text.lines()
            .take(3)
            .collect::<Vec<_>>()
            .join("\n")
            .as_bytes(),
    );
    let message = dump_error(dir.path());
    assert!(
        message.contains("pu0") && message.contains("leaf 0x1"),
        "{message}"
    );
}

#[test]
fn unreadable_bytes_are_an_error_naming_the_file() {
    let dir = dump_with_pu0(&[0xff, 0xfe, 0x00, 0x31]);
    assert!(dump_error(dir.path()).contains("pu0"));
}

#[test]
fn a_huge_pu_file_is_refused_without_reading_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let pu0 = fs::File::create(dir.path().join("pu0")).unwrap();
    // Sparse: 300 MB that take no disk; reading them whole would take seconds.
    pu0.set_len(300 << 20).unwrap();
    let message = dump_error(dir.path());
    assert!(
        message.contains("pu0: larger than 1 MiB; not a hwloc-gather-cpuid puN file"),
        "{message}"
    );
}

#[test]
fn pu_numbers_past_the_cpu_limit_are_refused() {
    let dir = dump_with_pu0(&fs::read(fixture("kvm-guest-2vcpu/pu0")).unwrap());
    fs::write(dir.path().join("pu16384"), "").unwrap();
    let message = dump_error(dir.path());
    assert!(
        message.contains("pu16384") && message.contains("below 16384"),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");
}

proptest! {
    /// Whatever bytes a dump file holds, reading it never panics, and a
    /// failure names the file.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let dir = dump_with_pu0(&bytes);
        if let Err(error) = read_report(&CpuidSource::Dump(dir.path().to_path_buf()), &CpuSet::default()) {
            let message = format!("{error:#}");
            prop_assert!(message.contains("pu0"), "{}", message);
        }
    }

    /// Well-formed dumps with arbitrary register values (absurd leaf maxima,
    /// shifts, counts, frequencies) decode without a panic.
    #[test]
    fn arbitrary_register_values_never_panic(
        leaves in proptest::collection::vec(
            (prop_oneof![0u32..0x28, 0x4000_0000u32..0x4000_0012, 0x8000_0000u32..0x8000_0028],
             0u32..4, any::<[u32; 4]>()),
            1..60),
    ) {
        let mut text = String::from("1 0 0 0 0 => ffffffff 756e6547 6c65746e 49656e69\n");
        text.push_str("1 1 0 0 0 => ffffffff ffffffff ffffffff ffffffff\n");
        for (leaf, subleaf, [a, b, c, d]) in &leaves {
            text.push_str(&format!("5 {leaf:x} 0 {subleaf:x} 0 => {a:x} {b:x} {c:x} {d:x}\n"));
        }
        let dir = dump_with_pu0(text.as_bytes());
        let report = read_report(&CpuidSource::Dump(dir.path().to_path_buf()), &CpuSet::default());
        prop_assert!(report.is_ok());
    }
}

// ------------------------------------------------------------- this machine

/// The CPUs this test process may run on.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn allowed_cpus() -> CpuSet {
    let mask =
        nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).expect("sched_getaffinity");
    let count = nix::sched::CpuSet::count() as u32;
    (0..count)
        .filter(|&cpu| mask.is_set(cpu as usize).unwrap_or(false))
        .collect()
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[test]
fn live_reads_every_allowed_cpu_once() {
    let allowed = allowed_cpus();
    // A CPU outside the allowed set is skipped, not an error.
    let asked = allowed.iter().chain([4095]).collect();
    let report = read_report(&CpuidSource::Live, &asked).expect("live CPUID");
    let visited: Vec<u32> = report.per_cpu.iter().map(|cpu| cpu.cpu).collect();
    assert_eq!(visited, allowed.cpus());
    let apic_ids: BTreeSet<u32> = report.per_cpu.iter().map(|cpu| cpu.apic_id).collect();
    assert_eq!(
        apic_ids.len(),
        report.per_cpu.len(),
        "APIC ids repeat: {:?}",
        report.per_cpu
    );
    assert!(report.packages >= 1 && report.cores >= 1);
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[test]
fn a_written_dump_reads_back_as_the_live_report() {
    let allowed = allowed_cpus();
    let dir = tempfile::tempdir().unwrap();
    write_dump(dir.path(), &allowed).expect("write_dump");
    let from_dump = read_report(
        &CpuidSource::Dump(dir.path().to_path_buf()),
        &CpuSet::default(),
    )
    .unwrap();
    let live = read_report(&CpuidSource::Live, &allowed).unwrap();
    assert_eq!(from_dump, live);
    assert!(dir.path().join("hwloc-cpuid-info").exists());
}
