//! Tests of the hosts table, its JSON and CSV, and the gate penalty cell.

use super::view::row;
use super::*;
use crate::judge::checks::CheckStatus;
use crate::report::document;
use crate::saved::{SavedDocument, load};
use std::path::Path;

/// The virtual guest's gate of `fixtures/fleet/documents/`: +9.0 %
/// [3.3, 15.0] over 27 repetitions per arm on TSC ticks.
fn recorded_gate() -> GateResult {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fleet/documents/guest-virtual.jsonl");
    match load(&path).unwrap() {
        SavedDocument::Gate(gate) => *gate,
        other => panic!("not a gate: {other:?}"),
    }
}

#[test]
fn a_gate_penalty_carries_its_interval_repetitions_clock_and_threshold() {
    let gate = recorded_gate();
    let penalty = GatePenalty::of(&gate);
    assert_eq!(penalty.value, gate.penalty);
    assert_eq!(penalty.ci95, gate.ci95);
    assert_eq!(penalty.reps, Some(27));
    assert_eq!(penalty.clock, Some(ClockKind::Tsc));
    assert_eq!(penalty.threshold, Some(0.15));
    assert!(penalty.doubts.is_empty());
    assert_eq!(
        penalty.text().unwrap(),
        "+9.0 % [3.3, 15.0] (n=27, TSC ticks, threshold +15.0 %)"
    );
    let summary = document::of(&SavedDocument::Gate(Box::new(gate))).summary("virtual.json".into());
    let cell = row(&summary).gate;
    assert_eq!(cell, format!("virtual {}", penalty.text().unwrap()));
    // In JSON the fields sit beside the host's others.
    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(json["penalty"], summary.penalty().unwrap().value.unwrap());
    assert_eq!(json["penalty_ci95"]["low"], penalty.ci95.unwrap().low);
    assert_eq!(json["penalty_reps"], 27);
    assert_eq!(json["penalty_clock"], "tsc");
    assert_eq!(json["penalty_threshold"], 0.15);
    assert_eq!(json["penalty_doubts"], serde_json::json!([]));
    let line = csv(&[summary]);
    let line = line.lines().nth(1).unwrap();
    assert!(line.ends_with(",27,tsc,0.15,\"\""), "{line}");
}

#[test]
fn a_penalty_that_failed_its_bar_says_why() {
    let mut gate = recorded_gate();
    gate.head.complete = false;
    gate.control.as_mut().unwrap().status = CheckStatus::Failed;
    let penalty = GatePenalty::of(&gate);
    assert_eq!(
        penalty.doubts,
        [PenaltyDoubt::Incomplete, PenaltyDoubt::ControlFailed]
    );
    assert!(
        penalty
            .text()
            .unwrap()
            .ends_with(") not valid: incomplete, control-failed"),
        "{penalty:?}"
    );
    assert_eq!(
        penalty.csv_cells().penalty_doubts,
        "\"incomplete;control-failed\""
    );
}

#[test]
fn no_penalty_means_no_basis_either() {
    let mut gate = recorded_gate();
    gate.penalty = None;
    gate.head.complete = false;
    let penalty = GatePenalty::of(&gate);
    assert_eq!(penalty, GatePenalty::default());
    assert_eq!(penalty.estimate_text(), None);
    assert_eq!(
        penalty.csv_cells(),
        PenaltyCells {
            penalty_doubts: "\"\"".into(),
            ..PenaltyCells::default()
        }
    );
    // Below zero, each number keeps its minus sign.
    gate.penalty = Some(-0.021);
    gate.ci95 = Some(Interval {
        low: -0.05,
        high: 0.012,
    });
    assert_eq!(
        GatePenalty::of(&gate).estimate_text().unwrap(),
        "\u{2212}2.1 % [\u{2212}5.0, 1.2]"
    );
}

/// A saved sweep's row: its curve and knees in the cell, the JSON and the
/// CSV, every other kind's sweep fields empty.
#[test]
fn a_sweep_row_gives_its_curve_and_knees() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results/sweep-vm-skip-gate.json");
    let mut saved = load(&path).unwrap();
    let SavedDocument::Sweep(sweep) = &mut saved else {
        panic!("not a sweep: {saved:?}");
    };
    let knee_at = sweep.judged.steps[1].workers;
    let speedup = sweep.judged.steps[1].speedup.as_ref().unwrap().value;
    let efficiency = sweep.judged.steps[1].efficiency.unwrap();
    sweep.judged.knees.push(crate::judge::sweep::Knee {
        workers: knee_at,
        marginal_gain: 0.2,
        added: sweep.judged.steps[1].added.clone(),
        clear: true,
    });
    let summary = document::of(&saved).summary("sweep.json".into());
    assert!(summary.ungated(), "a sweep with --skip-gate is ungated");
    let cell = row(&summary).sweep;
    assert_eq!(
        cell,
        format!(
            "cores-first: 1 1.00×, 2 {speedup:.2}×; {:.0} % of the ceiling; knee at 2: new \
             uniform core",
            efficiency * 100.0
        )
    );
    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(json["sweep"]["order"], "cores-first");
    assert_eq!(json["sweep"]["knees"][0][0], 2);
    let gate = document::of(&SavedDocument::Gate(Box::new(recorded_gate()))).summary("g".into());
    assert!(serde_json::to_value(&gate).unwrap()["sweep"].is_null());
    let table = csv(&[summary]);
    let header: Vec<&str> = CSV_HEADER.split(',').collect();
    let line = table.lines().nth(1).unwrap();
    let cells: Vec<&str> = line.split(',').collect();
    let cell = |name: &str| cells[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(cell("sweep_order"), "\"cores-first\"");
    assert!(cell("sweep_speedups").starts_with("\"1:1;2:1.9"), "{line}");
    assert_eq!(cell("sweep_knees"), "\"2\"");
}
