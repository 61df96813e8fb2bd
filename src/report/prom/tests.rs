//! The metrics of every kind, read back from the text as a scrape would,
//! on the saved results of `fixtures/results/`; and the writer's escaping
//! and ordering.

use super::Metrics;
use super::*;
use crate::judge::checks::CheckName;
use crate::judge::gate::Interval;
use crate::judge::gate::Verdict;
use crate::measure::ClockKind;
use crate::plan::GateBaseline;
use crate::report::document;
use crate::saved::load::from_bytes;
use crate::saved::{GateResult, SavedDocument};
use std::collections::BTreeSet;
use std::path::Path;

/// The metrics `report FILE --prom` writes for `saved`.
fn metrics_of(saved: &SavedDocument) -> String {
    document::of(saved).metrics()
}

/// A saved result of `fixtures/results/`, parsed as `report` parses it.
fn fixture(name: &str, json: &str) -> SavedDocument {
    from_bytes(json.as_bytes(), Path::new(name)).unwrap()
}

fn gate_fixture() -> GateResult {
    let json = include_str!("../../../fixtures/results/gate-vm-no-smt.json");
    match fixture("gate-vm-no-smt.json", json) {
        SavedDocument::Gate(result) => *result,
        other => panic!("not a gate document: {other:?}"),
    }
}

/// The value of the sample whose series (name and labels, as written)
/// is `series`; `None` when there is none.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap())
}

fn has_family(text: &str, name: &str) -> bool {
    text.lines().any(|line| {
        line.strip_prefix(name)
            .is_some_and(|rest| rest.starts_with(['{', ' ']))
    })
}

#[test]
fn a_no_smt_gate_has_its_verdict_and_no_penalty() {
    let text = gate_fixture().metrics();
    assert_eq!(
        value(&text, r#"placement_study_gate_verdict{verdict="no-smt"}"#),
        Some(1.0)
    );
    assert_eq!(
        value(&text, r#"placement_study_gate_verdict{verdict="physical"}"#),
        Some(0.0)
    );
    assert!(!has_family(&text, "placement_study_gate_penalty_ratio"));
    assert!(!has_family(&text, "placement_study_gate_check_status"));
    assert!(text.contains(
        r#"placement_study_info{kind="gate",version="0.1.0",host="vm",model="Intel(R) Xeon(R) Processor",kernel="6.18.44-fc-v1147",hypervisor="KVMKVMKVM"} 1"#
    ));
    assert!(text.contains(r#"placement_study_gate_info{verdict="no-smt",clock="",baseline=""} 1"#));
    assert_eq!(
        value(&text, r#"placement_study_start_time_seconds{kind="gate"}"#),
        Some(1796415782.0)
    );
    assert_eq!(
        value(&text, r#"placement_study_smt{kind="gate"}"#),
        Some(0.0)
    );
    assert!(text.ends_with('\n'));
}

#[test]
fn a_physical_gate_writes_its_penalty_interval_and_control() {
    let mut result = gate_fixture();
    result.verdict = Verdict::Physical;
    result.penalty = Some(0.37);
    result.penalty_of_medians = Some(0.36);
    result.ci95 = Some(Interval {
        low: 0.31,
        high: 0.43,
    });
    result.clock = Some(ClockKind::CoreCycles);
    result.baseline = Some(GateBaseline::SeparateCores);
    result.reps = 5;
    result.control = Some(Check::failed(CheckName::Control, "ran in parallel"));
    let text = result.metrics();
    assert_eq!(
        value(&text, "placement_study_gate_penalty_ratio"),
        Some(0.37)
    );
    assert_eq!(
        value(&text, "placement_study_gate_penalty_interval_low_ratio"),
        Some(0.31)
    );
    assert_eq!(
        value(&text, "placement_study_gate_penalty_interval_high_ratio"),
        Some(0.43)
    );
    assert_eq!(
        value(&text, "placement_study_gate_threshold_ratio"),
        Some(0.15)
    );
    assert_eq!(value(&text, "placement_study_gate_repetitions"), Some(5.0));
    assert!(text.contains(
        r#"placement_study_gate_info{verdict="physical",clock="core-cycles",baseline="separate-cores"} 1"#
    ));
    assert_eq!(
        value(
            &text,
            r#"placement_study_gate_check_status{check="control",status="failed"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_gate_check_status{check="control",status="passed"}"#
        ),
        Some(0.0)
    );
}

#[test]
fn a_gate_file_from_before_host_and_topology_were_saved() {
    let mut json: serde_json::Value = serde_json::from_str(include_str!(
        "../../../fixtures/results/gate-vm-no-smt.json"
    ))
    .unwrap();
    let fields = json.as_object_mut().unwrap();
    for field in ["host", "started_unix", "model", "topology", "environment"] {
        fields.remove(field).unwrap();
    }
    let old = match fixture("old.json", &json.to_string()) {
        SavedDocument::Gate(result) => result,
        other => panic!("not a gate document: {other:?}"),
    };
    let text = old.metrics();
    assert!(text.contains(
        r#"placement_study_info{kind="gate",version="0.1.0",host="",model="",kernel="",hypervisor="KVMKVMKVM"} 1"#
    ));
    assert!(!has_family(&text, "placement_study_start_time_seconds"));
    assert!(!has_family(&text, "placement_study_cpus"));
    assert_eq!(
        value(&text, r#"placement_study_complete{kind="gate"}"#),
        Some(1.0)
    );
}

#[test]
fn a_run_marks_what_may_not_be_quoted() {
    let json = include_str!("../../../fixtures/results/run-vm-skip-gate.json");
    let text = metrics_of(&fixture("run-vm-skip-gate.json", json));
    assert_eq!(value(&text, "placement_study_run_valid"), Some(1.0));
    assert_eq!(value(&text, "placement_study_run_gated"), Some(0.0));
    assert_eq!(
        value(&text, "placement_study_run_stopped_at_gate"),
        Some(0.0)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_run_gate_verdict{verdict="not-run"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_run_arm_quotable{arm="one-per-core"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        value(&text, r#"placement_study_run_arm_quotable{arm="unpinned"}"#),
        Some(0.0)
    );
    // TSC ticks per byte over the calibrated TSC frequency.
    let by_arm = r#"{arm="one-per-core"}"#;
    let seconds = value(
        &text,
        &format!("placement_study_run_arm_wall_seconds_per_byte{by_arm}"),
    )
    .unwrap();
    assert!((seconds - 0.47932248178811065 / 2599812481.772169).abs() < 1e-20);
    assert_eq!(
        value(
            &text,
            &format!("placement_study_run_arm_wall_repetitions{by_arm}")
        ),
        Some(2.0)
    );
    assert!(
        value(
            &text,
            &format!("placement_study_run_arm_wall_cv_ratio{by_arm}")
        )
        .is_some()
    );
    // No PMU: no cycles, and no name whose unit a label changes.
    assert!(!has_family(
        &text,
        "placement_study_run_arm_cycles_per_byte"
    ));
    assert!(!text.contains("clock=\"tsc\"}"));
    assert_eq!(
        value(
            &text,
            r#"placement_study_run_arm_change_vs_one_per_core_ratio{arm="one-per-core"}"#
        ),
        Some(0.0)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_run_check_status{check="cv-bar unpinned",status="failed"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_run_check_status{check="invariance",status="unavailable"}"#
        ),
        Some(1.0)
    );
    assert!(!has_family(
        &text,
        "placement_study_run_invariance_spread_ratio"
    ));
    assert!(text.contains(
        r#"placement_study_run_info{clock="tsc",workload="mul",gate_verdict="not-run"} 1"#
    ));
}

#[test]
fn a_run_on_core_cycles_writes_cycles_per_byte() {
    let json = include_str!("../../../fixtures/results/run-vm-skip-gate.json");
    let SavedDocument::Run(mut result) = fixture("run-vm-skip-gate.json", json) else {
        panic!("not a run document");
    };
    result.setup.clock = ClockKind::CoreCycles;
    for arm in &mut result.arms {
        arm.clock = ClockKind::CoreCycles;
        arm.cost = Some(Spread {
            median: 0.625,
            cv: 0.002,
            min: 0.624,
            max: 0.626,
            reps: 2,
        });
    }
    let text = result.metrics();
    let by_arm = r#"{arm="same-cpu"}"#;
    for (metric, expected) in [
        ("placement_study_run_arm_cycles_per_byte", 0.625),
        ("placement_study_run_arm_cycles_cv_ratio", 0.002),
        ("placement_study_run_arm_cycles_repetitions", 2.0),
    ] {
        assert_eq!(value(&text, &format!("{metric}{by_arm}")), Some(expected));
    }
    // The wall time per byte is there beside the cycles.
    assert!(
        value(
            &text,
            &format!("placement_study_run_arm_wall_seconds_per_byte{by_arm}")
        )
        .is_some()
    );
    assert!(text.contains(r#"placement_study_run_info{clock="core-cycles","#));
}

#[test]
fn a_saved_gate_that_a_run_wrote_is_exported_as_that_run() {
    let mut gate = gate_fixture();
    assert!(metrics_of(&SavedDocument::Gate(Box::new(gate.clone()))).contains(r#"kind="gate""#));
    gate.run_stopped_at_gate = true;
    let text = metrics_of(&SavedDocument::Gate(Box::new(gate.clone())));
    assert_eq!(text, run_stopped_at_gate(&gate));
    assert!(!text.contains(r#"kind="gate""#));
}

#[test]
fn a_run_stopped_at_its_gate_writes_run_metrics_without_arms() {
    let mut gate = gate_fixture();
    let text = run_stopped_at_gate(&gate);
    assert!(text.contains(
        r#"placement_study_info{kind="run",version="0.1.0",host="vm",model="Intel(R) Xeon(R) Processor",kernel="6.18.44-fc-v1147",hypervisor="KVMKVMKVM"} 1"#
    ));
    assert_eq!(
        value(&text, r#"placement_study_complete{kind="run"}"#),
        Some(1.0)
    );
    assert_eq!(
        value(&text, r#"placement_study_smt{kind="run"}"#),
        Some(0.0)
    );
    assert_eq!(value(&text, "placement_study_run_gated"), Some(0.0));
    assert_eq!(
        value(&text, "placement_study_run_stopped_at_gate"),
        Some(1.0)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_run_gate_verdict{verdict="no-smt"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_run_gate_verdict{verdict="not-run"}"#
        ),
        Some(0.0)
    );
    assert!(
        text.contains(r#"placement_study_run_info{clock="",workload="",gate_verdict="no-smt"} 1"#)
    );
    assert!(!text.contains("placement_study_gate_"));
    assert!(!text.contains("kind=\"gate\""));
    for absent in [
        "placement_study_run_valid",
        "placement_study_run_workers",
        "placement_study_run_arm_",
        "placement_study_run_check_status",
        "placement_study_run_excluded_repetitions",
    ] {
        assert!(!text.contains(absent), "{absent} in {text}");
    }

    // A signal during the gate: inconclusive, and the run incomplete.
    gate.verdict = Verdict::Inconclusive;
    gate.head.complete = false;
    let text = run_stopped_at_gate(&gate);
    assert_eq!(
        value(&text, r#"placement_study_complete{kind="run"}"#),
        Some(0.0)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_run_gate_verdict{verdict="inconclusive"}"#
        ),
        Some(1.0)
    );
}

#[test]
fn every_run_writes_its_header_with_one_help() {
    let json = include_str!("../../../fixtures/results/run-vm-skip-gate.json");
    let measured = metrics_of(&fixture("run-vm-skip-gate.json", json));
    let stopped = run_stopped_at_gate(&gate_fixture());
    let help = |text: &str| -> BTreeSet<String> {
        text.lines()
            .filter(|line| line.starts_with("# "))
            .map(str::to_string)
            .collect()
    };
    let (measured, stopped) = (help(&measured), help(&stopped));
    assert!(
        stopped.is_subset(&measured),
        "{:?}",
        stopped.difference(&measured).collect::<Vec<_>>()
    );
}

#[test]
fn pairs_count_hidden_siblings() {
    let json = include_str!("../../../fixtures/results/pairs-guest-hidden-siblings.json");
    let text = metrics_of(&fixture("pairs-guest-hidden-siblings.json", json));
    assert_eq!(
        value(&text, r#"placement_study_pairs_verdict{verdict="differ"}"#),
        Some(1.0)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_pairs_sibling_pairs{relation="hidden"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_pairs_sibling_pairs{relation="agreed"}"#
        ),
        Some(0.0)
    );
    assert_eq!(value(&text, "placement_study_pairs_maps_equal"), Some(0.0));
    assert_eq!(value(&text, "placement_study_pairs_comparisons"), Some(1.0));
    assert!(text.contains(r#"search="all-pairs""#));
}

#[test]
fn hybrid_speeds_ceiling_and_schemes() {
    let json = include_str!("../../../fixtures/results/hybrid-guest-slow-second-core.json");
    let text = metrics_of(&fixture("hybrid-guest-slow-second-core.json", json));
    let speed = value(
        &text,
        r#"placement_study_hybrid_class_speed_ratio{class="measured 1"}"#,
    )
    .unwrap();
    assert!((speed - 0.4786).abs() < 1e-4);
    assert!(
        value(
            &text,
            r#"placement_study_hybrid_class_speed_interval_low_ratio{class="measured 1"}"#
        )
        .is_some()
    );
    let ceiling = value(&text, "placement_study_hybrid_ceiling_speedup_ratio").unwrap();
    assert!((ceiling - 1.4786).abs() < 1e-4);
    let wall = value(
        &text,
        r#"placement_study_hybrid_class_wall_seconds{class="measured 0"}"#,
    )
    .unwrap();
    assert!((wall - 0.090028921).abs() < 1e-12);
    assert_eq!(
        value(
            &text,
            r#"placement_study_hybrid_scheme_class_items_ratio{arm="stealing-pinned",class="measured 0"}"#
        ),
        Some(0.69)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_hybrid_scheme_quotable{arm="stealing-pinned"}"#
        ),
        Some(0.0)
    );
    // Every median with its spread and repetitions.
    let by_arm = r#"{arm="static-pinned"}"#;
    let idle = value(
        &text,
        &format!("placement_study_hybrid_scheme_idle_ratio{by_arm}"),
    )
    .unwrap();
    assert!((idle - 0.2672511739687657).abs() < 1e-15);
    assert!(
        value(
            &text,
            &format!("placement_study_hybrid_scheme_idle_cv_ratio{by_arm}")
        )
        .is_some()
    );
    assert_eq!(
        value(
            &text,
            &format!("placement_study_hybrid_scheme_idle_repetitions{by_arm}")
        ),
        Some(11.0)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_hybrid_scheme_class_idle_repetitions{arm="static-pinned",class="measured 1"}"#
        ),
        Some(11.0)
    );
    assert_eq!(
        value(&text, r#"placement_study_hybrid_verdict{verdict="differ"}"#),
        Some(1.0)
    );
    assert_eq!(value(&text, "placement_study_hybrid_valid"), Some(1.0));
}

#[test]
fn observe_residency_and_reconciliation() {
    let json = include_str!("../../../fixtures/results/observe-pipeline-vm.json");
    let text = metrics_of(&fixture("observe-pipeline-vm.json", json));
    let residency = value(
        &text,
        r#"placement_study_observe_class_residency_seconds{class="uniform"}"#,
    )
    .unwrap();
    assert!((residency - 0.047826594).abs() < 1e-9);
    assert_eq!(
        value(&text, "placement_study_observe_reconciled"),
        Some(1.0)
    );
    assert_eq!(
        value(&text, "placement_study_observe_command_exit_status"),
        Some(3.0)
    );
    assert_eq!(value(&text, "placement_study_observe_threads"), Some(4.0));
    assert_eq!(
        value(&text, "placement_study_observe_migrations"),
        Some(2.0)
    );
    assert!(!has_family(
        &text,
        "placement_study_observe_class_busy_frequency_hertz"
    ));
    assert!(text.contains(r#"placement_study_observe_info{mode="command"} 1"#));
}

/// A sharing that differs makes the caches differ, whatever the ladder
/// said, and each shared level is a state set; a file saved before the
/// check has no such family.
#[test]
fn a_shared_level_that_differs_makes_the_caches_differ() {
    use crate::cpuset::CpuSet;
    use crate::judge::latency::recorded::pair;
    use crate::judge::memory_sharing::judge_sharing;
    use crate::plan::memory::SharingPlan;
    let json = include_str!("../../../fixtures/results/memory-vm.json");
    let SavedDocument::Memory(mut result) = fixture("memory-vm.json", json) else {
        panic!("not a memory document");
    };
    let status = "placement_study_memory_sharing_status";
    // A file saved before the check has no sharing family.
    result.sharing = None;
    assert!(!has_family(&result.metrics(), status));
    result.ladder_judgement.verdict = crate::judge::pairs::MapVerdict::Agree;
    let plan = SharingPlan {
        level: 3,
        kind: "Unified".into(),
        cpus: CpuSet::from_cpus(0..8),
        inside: Some([0, 1]),
        outside: Some([0, 8]),
    };
    let measured = [pair(0, 1, Some(118.0)), pair(0, 8, Some(121.0))];
    result.sharing = Some(judge_sharing(0, &[plan], &measured));
    let text = result.metrics();
    assert_eq!(
        value(
            &text,
            r#"placement_study_memory_verdict{part="caches",verdict="differ"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_memory_sharing_status{level="L3",status="differs"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &text,
            r#"placement_study_memory_sharing_status{level="L3",status="agreed"}"#
        ),
        Some(0.0)
    );
}

#[test]
fn label_values_and_help_are_escaped() {
    let mut m = Exposition::default();
    m.gauge(
        "placement_study_x",
        "a \\ and a\nnewline",
        &[("model", "a\\b\"c\nd")],
        1.0,
    );
    assert_eq!(
        m.render(),
        "# HELP placement_study_x a \\\\ and a\\nnewline\n\
         # TYPE placement_study_x gauge\n\
         placement_study_x{model=\"a\\\\b\\\"c\\nd\"} 1\n"
    );
}

#[test]
fn unknown_values_are_left_out_and_families_stay_together() {
    let mut m = Exposition::default();
    for value in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        m.gauge("placement_study_x", "x", &[], value);
    }
    m.gauge("placement_study_y", "y", &[], None);
    assert_eq!(m.render(), "");
    let mut m = Exposition::default();
    m.gauge("placement_study_a", "a", &[("arm", "one")], 1.0);
    m.gauge("placement_study_b", "b", &[("arm", "one")], 2.0);
    m.gauge("placement_study_a", "a", &[("arm", "two")], 0.5);
    let lines: Vec<String> = m.render().lines().map(str::to_string).collect();
    assert_eq!(
        lines,
        [
            "# HELP placement_study_a a",
            "# TYPE placement_study_a gauge",
            r#"placement_study_a{arm="one"} 1"#,
            r#"placement_study_a{arm="two"} 0.5"#,
            "# HELP placement_study_b b",
            "# TYPE placement_study_b gauge",
            r#"placement_study_b{arm="one"} 2"#,
        ]
    );
}

/// Every variant's strum name (label values, tables) is the word serde
/// saves it as: one spelling, whichever of the two writes it.
fn strum_spells_as_serde<E: VariantArray + Copy + Into<&'static str> + serde::Serialize>() {
    for &variant in E::VARIANTS {
        let word: &str = variant.into();
        assert_eq!(
            serde_json::to_value(variant).unwrap(),
            serde_json::Value::from(word),
            "{}",
            std::any::type_name::<E>()
        );
    }
}

#[test]
fn every_enum_named_by_strum_is_spelled_as_serde_spells_it() {
    use crate::judge::{checks, fleet, hybrid, pairs};
    use crate::plan::pairs::{Contention, SearchKind};
    use crate::plan::{Arm, hybrid::Scheme};
    use crate::saved::ObserveMode;
    strum_spells_as_serde::<Arm>();
    strum_spells_as_serde::<GateBaseline>();
    strum_spells_as_serde::<Scheme>();
    strum_spells_as_serde::<SearchKind>();
    strum_spells_as_serde::<Contention>();
    strum_spells_as_serde::<ClockKind>();
    strum_spells_as_serde::<checks::CheckStatus>();
    strum_spells_as_serde::<Verdict>();
    strum_spells_as_serde::<hybrid::ClassVerdict>();
    strum_spells_as_serde::<pairs::MapVerdict>();
    strum_spells_as_serde::<crate::judge::memory_sharing::SharingStatus>();
    strum_spells_as_serde::<pairs::PairRelation>();
    strum_spells_as_serde::<pairs::CpuRelation>();
    strum_spells_as_serde::<fleet::PenaltyDoubt>();
    strum_spells_as_serde::<ObserveMode>();
    strum_spells_as_serde::<DocumentKind>();
}
