//! The whole prober on both sources at once: each hand-written sysfs fixture
//! with the CPUID dump of the same machine, through `probe()` and through the
//! binary, and the snapshot a live machine saves read back.
#![cfg(target_arch = "x86_64")]

use placement_study::plan::Arm;
use placement_study::plan::{self, GatePlan};
use placement_study::probe::{CpuidSource, Topology, probe};
use std::path::{Path, PathBuf};
use std::process::Command;

/// (sysfs fixture, CPUID fixture) of the same machine.
const SAME_MACHINE: &[(&str, &str)] = &[
    ("laptop-i5-11300H", "i5-11300H"),
    ("alderlake-i5-12600K", "alder-lake-i5-12600K"),
    ("core-ultra-7-356H", "core-ultra-7-356h"),
    ("kvm-guest-2cpu", "kvm-guest-2vcpu"),
];

fn fixture(kind: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(kind)
        .join(name)
}

fn probe_pair(sysfs: &str, cpuid: &str) -> Topology {
    let source = CpuidSource::Dump(fixture("cpuid", cpuid));
    probe(Some(&fixture("sysfs", sysfs)), Some(&source))
        .unwrap_or_else(|e| panic!("probing {sysfs} with {cpuid}: {e:#}"))
}

#[test]
fn cpuid_and_sysfs_of_one_machine_agree() {
    for (sysfs, cpuid) in SAME_MACHINE {
        let topology = probe_pair(sysfs, cpuid);
        let cross = topology
            .crosscheck
            .as_ref()
            .expect("both sources were read");
        assert!(cross.agrees, "{sysfs} + {cpuid}: {:?}", cross.mismatches);
        assert!(
            topology.cpus.iter().all(|c| c.apic_id.is_some()),
            "{sysfs}: every CPU gets its APIC id"
        );
    }
}

#[test]
fn a_guest_kernel_that_invents_siblings_shows_in_the_crosscheck() {
    let topology = probe_pair("kvm-guest-claims-smt", "guest-fake-siblings");
    assert!(
        topology.summary.smt == Some(true),
        "sysfs claims SMT and gives the structure"
    );
    let cross = topology.crosscheck.expect("both sources were read");
    assert!(!cross.agrees);
    assert!(
        cross.mismatches.iter().any(|m| m.contains("CPUs 0 and 1")),
        "{:?}",
        cross.mismatches
    );

    let output = Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(["topology", "--sysfs-root"])
        .arg(fixture("sysfs", "kvm-guest-claims-smt"))
        .arg("--cpuid-dump")
        .arg(fixture("cpuid", "guest-fake-siblings"))
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("CPUID and sysfs disagree"), "{text}");
}

#[test]
fn gate_pairs_and_run_arms_follow_the_sibling_map() {
    let laptop = probe_pair("laptop-i5-11300H", "i5-11300H");
    let GatePlan::Pairs(pairs) = plan::gate_pairs(&laptop).unwrap() else {
        panic!("the laptop has SMT");
    };
    assert_eq!(pairs.siblings, [0, 4]);
    // Each sibling's worker is measured against its own CPU alone.
    assert_eq!(pairs.separate, None);
    assert_eq!(plan::default_workers(&laptop), Some(4));
    let arms = [Arm::OnePerCore, Arm::SiblingPacked, Arm::SameCpu];
    let run = plan::run_arms(&laptop, 4, &arms).unwrap();
    let cpus: Vec<Vec<Option<u32>>> = run.placements.iter().map(|p| p.cpus.clone()).collect();
    assert_eq!(cpus[0], [Some(0), Some(1), Some(2), Some(3)]);
    assert_eq!(cpus[1], [Some(0), Some(4), Some(1), Some(5)]);
    assert_eq!(cpus[2], [Some(0); 4]);

    // Hybrid: only the P-cores have two threads; the pairs never mix classes.
    let alder = probe_pair("alderlake-i5-12600K", "alder-lake-i5-12600K");
    let GatePlan::Pairs(pairs) = plan::gate_pairs(&alder).unwrap() else {
        panic!("Alder Lake P-cores have SMT");
    };
    assert_eq!(pairs.class, placement_study::probe::CoreKind::Performance);
    assert_eq!(plan::default_workers(&alder), Some(6));

    // No SMT anywhere: the reason says SMT is absent; packing cannot be planned.
    let ultra = probe_pair("core-ultra-7-356H", "core-ultra-7-356h");
    let GatePlan::NoSmt { reason } = plan::gate_pairs(&ultra).unwrap() else {
        panic!("the Core Ultra has no SMT");
    };
    assert!(reason.contains("absent"), "{reason}");
    assert_eq!(plan::default_workers(&ultra), None);
    let error = plan::run_arms(&ultra, 2, &[Arm::SiblingPacked]).unwrap_err();
    assert!(error.to_string().contains("sibling-packed"), "{error}");
}

#[test]
fn study_arms_leave_out_what_needs_siblings_where_no_core_has_two() {
    let laptop = probe_pair("laptop-i5-11300H", "i5-11300H");
    let chosen = plan::study_arms(&laptop, None, None).unwrap();
    assert_eq!(chosen.arms, plan::DEFAULT_ARMS);
    assert_eq!((chosen.workers, chosen.left_out), (4, None));
    let odd = plan::study_arms(&laptop, Some(3), None).unwrap_err();
    assert!(odd.contains("use 4"), "{odd}");

    let ultra = probe_pair("core-ultra-7-356H", "core-ultra-7-356h");
    let chosen = plan::study_arms(&ultra, None, None).unwrap();
    assert_eq!(chosen.arms, plan::NO_SMT_ARMS);
    assert_eq!(chosen.workers, 2);
    let note = chosen.left_out.expect("a note");
    assert!(note.starts_with("sibling-packed left out: "), "{note}");
    let asked = [Arm::OnePerCore, Arm::SiblingPacked, Arm::Unpinned];
    let chosen = plan::study_arms(&ultra, Some(4), Some(&asked)).unwrap();
    assert_eq!(chosen.arms, [Arm::OnePerCore, Arm::Unpinned]);
    assert_eq!(chosen.workers, 4);
    assert!(chosen.left_out.is_some());
    let none_left = plan::study_arms(&ultra, None, Some(&[Arm::SiblingPacked])).unwrap_err();
    assert!(
        none_left.contains("`placement-study run --workers 2 --arms one-per-core,same-cpu`"),
        "{none_left}"
    );
}

#[test]
fn a_saved_snapshot_reads_back_as_the_live_machine() {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = dir.path().join("host");
    let binary = env!("CARGO_BIN_EXE_placement-study");
    let saved = Command::new(binary)
        .arg("snapshot")
        .arg(&snapshot)
        .output()
        .unwrap();
    assert!(
        saved.status.success(),
        "{}",
        String::from_utf8_lossy(&saved.stderr)
    );
    let read = |extra: &[&std::ffi::OsStr]| -> serde_json::Value {
        let output = Command::new(binary)
            .args(["topology", "--json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let mut json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        // Where the facts came from, and when they were read, differ.
        for field in ["source", "started_unix"] {
            json.as_object_mut().unwrap().remove(field);
        }
        json
    };
    assert_eq!(
        read(&[]),
        read(&["--sysfs-root".as_ref(), snapshot.as_os_str()])
    );

    // A second snapshot into the same folder refuses, naming it.
    let again = Command::new(binary)
        .arg("snapshot")
        .arg(&snapshot)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"));
}

#[test]
fn hybrid_plans_one_worker_per_core_and_a_baseline_per_class() {
    // Alder Lake: 6 P-cores of two threads (CPUs 0-11), 4 E-cores (12-15).
    let alder = probe_pair("alderlake-i5-12600K", "alder-lake-i5-12600K");
    let by_class = plan::hybrid::hybrid_plan(&alder, None, false).unwrap();
    assert_eq!(
        by_class.worker_cpus,
        [0, 2, 4, 6, 8, 10, 12, 13, 14, 15],
        "the first thread of every core, P-cores first"
    );
    assert_eq!(by_class.baseline_cpus, [0, 12]);
    let every = plan::hybrid::hybrid_plan(&alder, Some(8), true).unwrap();
    assert_eq!(every.worker_cpus, [0, 2, 4, 6, 8, 10, 12, 13]);
    assert_eq!(every.baseline_cpus, every.worker_cpus);
    let error = plan::hybrid::hybrid_plan(&alder, Some(11), false).unwrap_err();
    assert!(
        error.to_string().contains("only 10 allowed cores"),
        "{error}"
    );

    // Three classes (P, E, LP-E): one baseline each, fastest class first.
    let ultra = probe_pair("core-ultra-7-356H", "core-ultra-7-356h");
    let plan = plan::hybrid::hybrid_plan(&ultra, None, false).unwrap();
    let classes: Vec<String> = plan
        .baseline_cpus
        .iter()
        .map(|cpu| {
            ultra
                .cpus
                .iter()
                .find(|c| c.cpu == *cpu)
                .unwrap()
                .class
                .to_string()
        })
        .collect();
    assert_eq!(
        classes,
        ["performance", "efficiency", "low-power efficiency"]
    );
}
