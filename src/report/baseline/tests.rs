//! Baseline comparisons of recorded documents: fixtures whose repetitions
//! are rewritten to a known change and spread.

use super::*;
use crate::judge::baseline::RowVerdict;
use crate::report::view::View;
use crate::saved::from_bytes;
use serde_json::Value;
use std::path::Path;

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/results")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn parsed(value: &Value) -> SavedDocument {
    from_bytes(&serde_json::to_vec(value).unwrap(), Path::new("test.json")).unwrap()
}

/// `n` wall times (ns) around `centre_s` seconds with a CV of about `cv`,
/// spread evenly (a uniform's CV) in a shuffled order.
fn walls(centre_s: f64, cv: f64, n: usize) -> Vec<f64> {
    let width = 3f64.sqrt() * cv;
    (0..n)
        .map(|i| {
            let at = ((i * 7) % n) as f64 / (n - 1) as f64;
            centre_s * 1e9 * (1.0 + width * (2.0 * at - 1.0))
        })
        .collect()
}

/// The recorded `run -- COMMAND` study, its repetitions replaced: per
/// arm, one kept repetition per round with the wall time given.
fn command_study(arms: &[(&str, Vec<f64>)]) -> Value {
    let mut document = fixture("command-vm-skip-gate.json");
    let template = document["reps"][4].clone();
    let rounds = arms[0].1.len();
    let mut reps = Vec::new();
    for round in 0..rounds {
        for (arm, times) in arms {
            let mut rep = template.clone();
            rep["arm"] = Value::from(*arm);
            rep["round"] = Value::from(round);
            rep["sample"]["wall_ns"] = Value::from(times[round] as u64);
            reps.push(rep);
        }
    }
    document["reps"] = Value::Array(reps);
    document
}

fn rules() -> BaselineRules {
    BaselineRules {
        threshold: 0.05,
        allow_different: false,
        fail_on_inconclusive: false,
    }
}

fn judged(old: &Value, new: &Value, rules: &BaselineRules) -> Result<BaselineReport> {
    let (old, new) = (parsed(old), parsed(new));
    BaselineReport::judge("old.json", &old, &[("new.json".into(), &new)], rules)
}

fn verdict_of(report: &BaselineReport, row: &str) -> RowVerdict {
    report.judged[0]
        .rows
        .iter()
        .find(|r| r.row == row)
        .unwrap_or_else(|| panic!("no row {row}"))
        .change
        .verdict
}

#[test]
fn ten_percent_at_a_cv_of_two_percent_is_regressed_one_percent_unchanged() {
    let old = command_study(&[
        ("one-per-core", walls(1.0, 0.02, 15)),
        ("same-cpu", walls(2.0, 0.02, 15)),
    ]);
    let new = command_study(&[
        ("one-per-core", walls(1.01, 0.02, 15)),
        ("same-cpu", walls(2.2, 0.02, 15)),
    ]);
    let report = judged(&old, &new, &rules()).unwrap();
    assert_eq!(verdict_of(&report, "one-per-core"), RowVerdict::Unchanged);
    assert_eq!(verdict_of(&report, "same-cpu"), RowVerdict::Regressed);
    assert_eq!(report.verdict, BaselineVerdict::Regressed);
    assert_eq!(report.exit_status, 7);
    assert_eq!(report.outcome(false), Outcome::Regressed);
    // The regressed row comes first, in every output.
    assert_eq!(report.judged[0].rows[0].row, "same-cpu");
    let text = view::blocks(&report, &View::default()).to_terminal(&View::default());
    assert!(text.starts_with("REGRESSED (exit 7)"), "{text}");
    assert!(text.contains("next:"), "{text}");
    let csv = csv::csv(&report);
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.lines().nth(1).unwrap().contains("regressed"), "{csv}");
    let metrics = crate::report::prom::baseline(&report);
    assert!(
        metrics.contains(
            "placement_study_baseline_row_verdict{kind=\"command\",row=\"same-cpu\",verdict=\"regressed\"} 1"
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains("placement_study_baseline_change_ratio{"),
        "{metrics}"
    );
    let figure = crate::report::figure::baseline::figure(&report);
    roxmltree::Document::parse(&figure).unwrap();
}

#[test]
fn noisy_data_is_inconclusive_and_fails_only_when_asked() {
    let old = command_study(&[
        ("one-per-core", walls(1.0, 0.15, 8)),
        ("same-cpu", walls(2.0, 0.15, 8)),
    ]);
    let new = command_study(&[
        ("one-per-core", walls(1.15, 0.15, 8)),
        ("same-cpu", walls(2.0, 0.15, 8)),
    ]);
    let report = judged(&old, &new, &rules()).unwrap();
    assert_eq!(
        verdict_of(&report, "one-per-core"),
        RowVerdict::Inconclusive
    );
    assert_eq!(report.verdict, BaselineVerdict::Inconclusive);
    assert_eq!(report.outcome(false).exit_status(), 0);
    assert_eq!(report.outcome(true).exit_status(), 5);
    let row = &report.judged[0].rows[0];
    assert!(row.change.reps_to_decide.is_some_and(|n| n > 8), "{row:?}");
    let text = view::blocks(&report, &View::default()).to_terminal(&View::default());
    assert!(text.starts_with("INCONCLUSIVE (exit 0)"), "{text}");
    assert!(text.contains("repetitions a side"), "{text}");
}

#[test]
fn another_workload_is_refused_unless_allowed() {
    let old = command_study(&[("one-per-core", walls(1.0, 0.02, 10))]);
    let mut new = old.clone();
    new["options"]["argv"] = serde_json::json!(["sh", "-c", "sleep 1"]);
    let error = judged(&old, &new, &rules()).unwrap_err().to_string();
    assert!(error.contains("workload"), "{error}");
    assert!(error.contains("--allow-different"), "{error}");
    assert_eq!(error.lines().count(), 1, "{error}");
    let allowed = BaselineRules {
        allow_different: true,
        ..rules()
    };
    let report = judged(&old, &new, &allowed).unwrap();
    let difference = &report.judged[0].differences[0];
    assert!(
        difference.decisive && difference.what == "workload",
        "{difference:?}"
    );
    // Another kernel is shown beside the result, never refused.
    let mut new = old.clone();
    new["environment"]["kernel"] = Value::from("9.9.9-test");
    let report = judged(&old, &new, &rules()).unwrap();
    let difference = &report.judged[0].differences[0];
    assert!(
        !difference.decisive && difference.what == "kernel",
        "{difference:?}"
    );
    // So is another memory policy: binding elsewhere is what is tested.
    let mut new = old.clone();
    new["options"]["membind"] = Value::from("1");
    let report = judged(&old, &new, &rules()).unwrap();
    let difference = &report.judged[0].differences[0];
    assert_eq!(
        (difference.decisive, difference.what.as_str()),
        (false, "memory policy"),
        "{difference:?}"
    );
    assert_eq!(
        (difference.old.as_str(), difference.new.as_str()),
        ("the kernel's default (first touch)", "--membind 1"),
        "{difference:?}"
    );
}

#[test]
fn documents_of_other_kinds_are_refused() {
    let old = fixture("gate-vm-no-smt.json");
    let new = fixture("run-vm-skip-gate.json");
    let error = judged(&old, &new, &rules()).unwrap_err().to_string();
    assert!(error.contains("of its own kind"), "{error}");
    let topology = fixture("topology-laptop-i5-11300H.json");
    let error = judged(&topology, &topology, &rules())
        .unwrap_err()
        .to_string();
    assert!(error.contains("measures nothing twice"), "{error}");
}

#[test]
fn a_changed_verdict_is_a_finding() {
    let old = fixture("gate-guest-siblings-split.json");
    let mut new = old.clone();
    new["verdict"] = Value::from("physical");
    let report = judged(&old, &new, &rules()).unwrap();
    let finding = &report.judged[0].findings[0];
    assert_eq!(
        (
            finding.what.as_str(),
            finding.old.as_deref(),
            finding.new.as_deref()
        ),
        ("gate", Some("virtual"), Some("physical"))
    );
}

/// Every fixture of a kind with rows, against itself: no row regressed,
/// every row matched, and every output draws.
#[test]
fn every_fixture_against_itself_regresses_nothing() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results");
    for entry in std::fs::read_dir(folder).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.starts_with("topology-") || name.starts_with("observe-") {
            continue;
        }
        let document = fixture(&name);
        let report = judged(&document, &document, &rules()).unwrap();
        assert_ne!(report.verdict, BaselineVerdict::Regressed, "{name}");
        let judged = &report.judged[0];
        assert!(judged.findings.is_empty(), "{name}: {:?}", judged.findings);
        assert!(judged.differences.is_empty(), "{name}");
        for row in &judged.rows {
            assert!(
                matches!(
                    row.change.verdict,
                    RowVerdict::Unchanged | RowVerdict::Inconclusive
                ),
                "{name}: {row:?}"
            );
        }
        let wide = View {
            wide: true,
            ..View::default()
        };
        view::blocks(&report, &wide).to_terminal(&wide);
        roxmltree::Document::parse(&crate::report::figure::baseline::figure(&report)).unwrap();
    }
}

/// A sweep's steps are matched by their worker counts, each with the
/// repetitions its judgement kept.
#[test]
fn a_sweep_has_a_row_per_step() {
    let document = parsed(&fixture("sweep-vm-per-worker.json"));
    let rows = crate::report::document::of(&document).baseline_rows();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["step 1", "step 2"]);
    let SavedDocument::Sweep(sweep) = &document else {
        panic!("a sweep");
    };
    for (row, step) in rows.iter().zip(&sweep.judged.steps) {
        let kept = step.wall_ms.as_ref().map_or(0, |s| s.reps);
        assert_eq!(row.values.len(), kept, "{row:?}");
    }
}
