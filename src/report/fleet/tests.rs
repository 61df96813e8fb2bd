//! Tests of the fleet's rows, counts, flags and penalty cells.

use super::view::{penalty_notes, shared_basis, verdict_cell};
use super::*;
use crate::judge::fleet::PenaltyDoubt;
use crate::judge::gate::{Interval, Verdict};
use crate::measure::ClockKind;
use crate::report::compare;
use crate::report::compare::Finding;
use crate::report::view::View;
use crate::saved::load;
use std::path::Path;

/// The summary inside a row that holds a result.
fn summary(row: &mut FleetRow) -> &mut HostSummary {
    &mut row.result_mut().expect("a row with a result").summary
}

/// The gate's penalty inside a gate row.
fn penalty(row: &mut FleetRow) -> &mut GatePenalty {
    match &mut summary(row).finding {
        Finding::Gate { penalty, .. } => penalty,
        other => panic!("not a gate: {other:?}"),
    }
}

/// The result inside a row that holds one.
fn result(row: &FleetRow) -> &FleetResult {
    row.result().expect("a row with a result")
}

#[test]
fn no_signature_is_bare_metal_only_when_the_cpu_says_so() {
    let evidence = |bit, flag| Evidence {
        cpuid_hypervisor_bit: bit,
        cpuid_hypervisor_signature: None,
        cpuid_hypervisor_name: None,
        cpuinfo_hypervisor_flag: flag,
        dmi_vendor: None,
        dmi_product: None,
        crosscheck: None,
        cpuid_absent: None,
        devicetree_compatible: None,
        hypervisor_sources: Vec::new(),
    };
    assert_eq!(
        hypervisor_label(Some("KVMKVMKVM"), &evidence(Some(true), None)),
        "KVMKVMKVM"
    );
    let named = Evidence {
        cpuid_hypervisor_name: Some("KVM".into()),
        ..evidence(Some(true), None)
    };
    assert_eq!(hypervisor_label(Some("KVMKVMKVM"), &named), "KVM");
    assert_eq!(hypervisor_label(None, &evidence(Some(false), None)), "none");
    assert_eq!(hypervisor_label(None, &evidence(None, Some(false))), "none");
    assert_eq!(hypervisor_label(None, &evidence(None, None)), "unknown");
}

/// A gate row of `host` with `penalty` (a fraction), its interval, 5
/// repetitions on TSC ticks and a 15 % threshold.
fn gate_row(host: &str, penalty: f64) -> FleetRow {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fleet/documents/guest-virtual.jsonl");
    let saved = load(&path).unwrap();
    let mut summary = document::of(&saved).summary(host.into());
    summary.counted = Counted::gate(Some(Verdict::Physical));
    let Finding::Gate { penalty: saved, .. } = &mut summary.finding else {
        panic!("not a gate: {summary:?}");
    };
    *saved = GatePenalty {
        value: Some(penalty),
        ci95: Some(Interval {
            low: penalty - 0.05,
            high: penalty + 0.05,
        }),
        reps: Some(5),
        clock: Some(ClockKind::Tsc),
        threshold: Some(0.15),
        doubts: Vec::new(),
    };
    FleetRow {
        host: host.into(),
        state: RowState::Result(Box::new(FleetResult {
            source: Origin {
                file: host.into(),
                line: None,
            },
            summary,
            hypervisor: "QEMU TCG".into(),
            tool_version: "0.1.0".into(),
            outliers: Vec::new(),
            notes: Vec::new(),
        })),
    }
}

#[test]
fn a_shared_basis_is_said_once_and_the_rest_per_host() {
    let mut rows = vec![gate_row("a", 0.5), gate_row("b", -0.02)];
    let shared = shared_basis(&rows);
    assert_eq!(
        shared,
        [
            Some("n=5".to_string()),
            Some("TSC ticks".to_string()),
            Some("threshold +15.0 %".to_string())
        ]
    );
    let view = View::default();
    assert_eq!(
        verdict_cell(result(&rows[1]), &shared, &view),
        ["physical", "\u{2212}2.0 %", "[\u{2212}7.0, 3.0]"]
    );
    assert_eq!(
        penalty_notes(&rows, &shared),
        [
            "penalty: the gate's paired estimate, [its 95 % interval], n repetitions per arm; \
          the same for every host: n=5, TSC ticks, threshold +15.0 %"
        ]
    );
    // Another host on core cycles, of 9 repetitions: each row names its own.
    penalty(&mut rows[1]).clock = Some(ClockKind::CoreCycles);
    penalty(&mut rows[1]).reps = Some(9);
    let shared = shared_basis(&rows);
    assert_eq!(shared, [None, None, Some("threshold +15.0 %".to_string())]);
    assert_eq!(
        verdict_cell(result(&rows[1]), &shared, &View { wide: true, ..view }),
        ["physical \u{2212}2.0 % [\u{2212}7.0, 3.0] n=9, cycles"]
    );
    assert!(penalty_notes(&rows, &shared)[0].ends_with("host: threshold +15.0 %"));
    // A row without a penalty neither shows one nor changes what is shared.
    let mut pairs = gate_row("c", 0.0);
    summary(&mut pairs).kind = DocumentKind::Pairs;
    summary(&mut pairs).counted = Counted {
        study: DocumentKind::Pairs,
        label: "pairs map",
        verdict: Some("agree".into()),
    };
    summary(&mut pairs).finding = Finding::Pairs {
        map: SiblingMaps {
            what: "sibling maps",
            verdict: MapVerdict::Agree,
            published: "0-1".into(),
            measured: "0-1".into(),
        },
        failed_checks: Vec::new(),
    };
    rows.push(pairs);
    assert_eq!(shared_basis(&rows), shared);
    assert_eq!(verdict_cell(result(&rows[2]), &shared, &view), ["agree"]);
}

#[test]
fn a_doubted_penalty_is_starred_explained_and_judged_with_no_one() {
    let mut rows = vec![
        gate_row("a", 0.30),
        gate_row("b", 0.31),
        gate_row("c", 0.29),
        gate_row("d", 0.02),
    ];
    for row in &mut rows {
        summary(row).model = Some("m".into());
    }
    penalty(&mut rows[3]).doubts = vec![PenaltyDoubt::Incomplete];
    flag_penalties(&mut rows);
    flag_shapes(&mut rows);
    assert!(rows.iter().all(|r| r.outliers().is_empty()), "{rows:#?}");
    let shared = shared_basis(&rows);
    let cell = |row| verdict_cell(result(row), &shared, &View::default());
    assert_eq!(cell(&rows[3])[1], "+2.0 %*");
    assert!(!cell(&rows[0]).iter().any(|line| line.contains('*')));
    let notes = penalty_notes(&rows, &shared);
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[1].starts_with("* not valid: "), "{notes:?}");
    // Without the doubt, the same host is the odd one out.
    penalty(&mut rows[3]).doubts.clear();
    flag_penalties(&mut rows);
    flag_shapes(&mut rows);
    assert_eq!(rows[3].outliers().len(), 1);
    assert!(
        rows[3].outliers()[0].to_string().starts_with(
            "penalty +2.0 % [\u{2212}3.0, 7.0] is far from the median +29.5 % (MAD 1.0 \
             points) of the 4 hosts of its CPU model on TSC ticks"
        ),
        "{:?}",
        rows[3].outliers()
    );
    assert_eq!(penalty_notes(&rows, &shared).len(), 1);
}

#[test]
fn both_csvs_carry_the_penalty_columns() {
    let columns = crate::report::csv::header::<compare::PenaltyCells>();
    for header in [&*CSV_HEADER, &*compare::CSV_HEADER] {
        assert!(header.contains(&columns), "{header}");
    }
    assert!(CSV_HEADER.contains(&format!("penalty,{columns}")));
    let mut row = gate_row("a", 0.5);
    penalty(&mut row).doubts = vec![PenaltyDoubt::Incomplete, PenaltyDoubt::ControlFailed];
    let fleet = Fleet {
        rows: vec![row],
        hosts: 1,
        answered: 1,
        broken: 0,
        missing: 0,
        unexpected: 0,
        verdicts: Vec::new(),
        models: Vec::new(),
        hypervisors: Vec::new(),
        versions: Vec::new(),
        unread: Vec::new(),
    };
    let csv = csv(&fleet);
    let line = csv.lines().nth(1).unwrap();
    assert!(
        line.contains(",0.5,0.45,0.55,5,tsc,0.15,\"incomplete;control-failed\","),
        "{line}"
    );
    assert_eq!(
        line.split(',').count(),
        CSV_HEADER.split(',').count(),
        "{csv}"
    );
}
