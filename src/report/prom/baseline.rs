//! `report --baseline OLD NEW --prom FILE` and `--baseline NAME --prom`:
//! the comparison as metrics. Per row its change as a ratio with its
//! interval, and its verdict as a state set; the whole verdict as a state
//! set; the threshold. Labelled by kind and row (a row names an arm, a
//! step, a class or a domain: bounded by the study, never a path).

use super::{Exposition, count_value, states};
use crate::judge::baseline::{BaselineVerdict, RowVerdict};
use crate::report::baseline::BaselineReport;

/// The comparison's metrics: see the module docs.
pub fn baseline(report: &BaselineReport) -> String {
    let mut m = Exposition::default();
    let kind = report.baseline.kind.to_string();
    let by_kind = [("kind", kind.as_str())];
    m.info(
        "placement_study_baseline_info",
        "The kind of the documents compared, the hosts of the baseline and of the new result, \
         and the tool's version.",
        &[
            ("kind", kind.as_str()),
            ("baseline_host", report.baseline.host.as_str()),
            (
                "host",
                report.judged.first().map_or("", |j| j.new.host.as_str()),
            ),
            ("version", report.tool_version.as_str()),
        ],
    );
    m.gauge(
        "placement_study_baseline_threshold_ratio",
        "The threshold: a row whose whole 95 % interval lies beyond ±it regressed or improved, \
         within it is unchanged.",
        &by_kind,
        report.threshold,
    );
    m.state_set(
        "placement_study_baseline_verdict",
        "1 for the comparison's verdict, 0 for the others: regressed (a row's whole interval \
         above +threshold), inconclusive, nothing-regressed.",
        &by_kind,
        "verdict",
        [
            BaselineVerdict::Regressed,
            BaselineVerdict::Inconclusive,
            BaselineVerdict::NothingRegressed,
        ]
        .map(<&str>::from),
        report.verdict.into(),
    );
    for row in report.judged.iter().flat_map(|j| &j.rows) {
        let labels = [("kind", kind.as_str()), ("row", row.row.as_str())];
        let change = &row.change;
        m.gauge(
            "placement_study_baseline_change_ratio",
            "The row's change from the baseline, new / old − 1 (Hodges–Lehmann, on log values): \
             0.1 is 10 % more cost.",
            &labels,
            change.change,
        );
        let interval = change.ci95.as_ref();
        m.gauge(
            "placement_study_baseline_change_low_ratio",
            "The lower end of the change's distribution-free 95 % interval.",
            &labels,
            interval.map(|i| i.low),
        );
        m.gauge(
            "placement_study_baseline_change_high_ratio",
            "The upper end of the change's distribution-free 95 % interval.",
            &labels,
            interval.map(|i| i.high),
        );
        m.state_set(
            "placement_study_baseline_row_verdict",
            "1 for the row's verdict, 0 for the others.",
            &labels,
            "verdict",
            states::<RowVerdict>(),
            change.verdict.into(),
        );
        m.gauge(
            "placement_study_baseline_reps_to_decide",
            "An inconclusive row: about how many repetitions a side would likely decide it.",
            &labels,
            change.reps_to_decide.map(count_value),
        );
    }
    m.render()
}
