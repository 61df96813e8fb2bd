//! `latency --prom`: the verdict on the measured domains, each class's
//! fastest latency, and each published level's fake and hidden pairs.

use super::Metrics;
use super::{CHECK_STATUS_HELP, common, count_value, flag_value, states};
use crate::judge::pairs::{MapVerdict, PairRelation};
use crate::saved::LatencyResult;

/// `latency --prom`: the verdict, the classes' latencies in seconds, and
/// the pairs that differ from the published map at each level.
impl Metrics for LatencyResult {
    fn metrics(&self) -> String {
        let result = self;
        let mut m = common(result.head.kind, &result.head);
        m.state_set(
            "placement_study_latency_verdict",
            "1 for the verdict, 0 for the others: agree (the measured domains are the published \
         ones at every level), differ (fake or hidden pairs at some level), inconclusive (a pair \
         not measured, a failed control, or a run a signal stopped).",
            &[],
            "verdict",
            states::<MapVerdict>(),
            result.verdict.as_str(),
        );
        for cluster in &result.judgement.clusters {
            m.gauge(
                "placement_study_latency_class_seconds",
                "The fastest one-way latency of each latency class (absent for a stacked class \
             without progress).",
                &[("class", cluster.class.as_str())],
                cluster.low_ns.map(|ns| ns * 1e-9),
            );
        }
        for level in &result.judgement.levels {
            for relation in [PairRelation::Fake, PairRelation::Hidden] {
                let pairs = level.map.pairs.iter().filter(|p| p.relation == relation);
                m.gauge(
                    "placement_study_latency_differing_pairs",
                    "CPU pairs at each published level that the measured domains contradict: fake \
                 (published together, measured apart) or hidden (measured together, not \
                 published).",
                    &[
                        ("level", level.level.as_str()),
                        ("relation", relation.into()),
                    ],
                    count_value(pairs.count()),
                );
            }
        }
        m.gauge(
            "placement_study_latency_tested_cpus",
            "CPUs measured: those the process may run on.",
            &[],
            count_value(result.tested.len()),
        );
        let effort = &result.effort;
        m.gauge(
            "placement_study_latency_pairs_measured",
            "Pairs of CPUs measured.",
            &[],
            count_value(effort.pairs_measured),
        );
        m.gauge(
            "placement_study_latency_pairs_inferred",
            "--one-per-domain: pairs not measured but inferred from a representative's row.",
            &[],
            count_value(effort.pairs_inferred),
        );
        m.gauge(
        "placement_study_latency_bridges_not_borne_out",
        "--one-per-domain: pairs measured across two classes of a row that lay in another class \
         than the row inferred (every pair across those classes was then measured).",
        &[],
        count_value(effort.bridges_not_borne_out),
    );
        m.gauge(
            "placement_study_latency_measuring_seconds",
            "Wall time from the control to the last pair.",
            &[],
            effort.measuring_seconds,
        );
        m.gauge(
            "placement_study_latency_samples_taken",
            "Samples kept over every pair (each pair stops once its latency settles, unless \
         --all-samples).",
            &[],
            count_value(effort.samples_taken),
        );
        m.gauge(
        "placement_study_latency_pairs_at_once",
        "Pairs measured at once after the first round: 1 when the parallel check failed there or \
         --parallel 1.",
        &[],
        count_value(effort.pairs_at_once),
    );
        m.gauge(
            "placement_study_latency_budget_exhausted",
            "1 when --time-budget ran out before every pair was measured.",
            &[],
            flag_value(effort.budget_exhausted),
        );
        m.checks(
            "placement_study_latency_check_status",
            CHECK_STATUS_HELP,
            result
                .control_check
                .iter()
                .chain(&result.parallel_check)
                .chain([&result.pinning]),
        );
        m.render()
    }
}
