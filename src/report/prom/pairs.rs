//! `pairs --prom`: the measured sibling map against the published one, and
//! what the search cost.

use super::Metrics;
use super::{CHECK_STATUS_HELP, common, count_value, flag_value, states};
use crate::judge::pairs::{MapVerdict, PairRelation};
use crate::saved::PairsResult;
use strum::VariantArray;

/// `pairs --prom`: the map verdict, how many pairs agree with the
/// published map, and what the search cost.
impl Metrics for PairsResult {
    fn metrics(&self) -> String {
        let result = self;
        let mut m = common(result.head.kind, &result.head);
        let verdict = result.verdict.as_str();
        let search: &str = result.search.into();
        m.info(
        "placement_study_pairs_info",
        "The map verdict, the search (all-pairs, group-testing) and the clock every comparison's \
         cost is on.",
        &[
            ("verdict", verdict),
            ("search", search),
            ("clock", result.clock.as_str()),
        ],
    );
        m.state_set(
            "placement_study_pairs_verdict",
            "1 for the map verdict, 0 for the others: agree (the measured sibling map is the \
         published one), differ (fake or hidden siblings), inconclusive (an undecided pair, a \
         failed control, or a search a signal stopped).",
            &[],
            "verdict",
            states::<MapVerdict>(),
            verdict,
        );
        let pairs_of = |relation: PairRelation| {
            let pairs = result.map.pairs.iter();
            pairs.filter(|p| p.relation == relation).count()
        };
        for &relation in PairRelation::VARIANTS {
            m.gauge(
                "placement_study_pairs_sibling_pairs",
                "CPU pairs by relation to the published map: agreed (published siblings measured \
             sharing), fake (published, measured apart), hidden (measured sharing, not \
             published), inconclusive (undecided).",
                &[("relation", relation.into())],
                count_value(pairs_of(relation)),
            );
        }
        let differ = pairs_of(PairRelation::Fake) + pairs_of(PairRelation::Hidden) > 0;
        let undecided = pairs_of(PairRelation::Inconclusive) > 0;
        m.gauge(
            "placement_study_pairs_maps_equal",
            "1 when the measured sibling map is the published one, 0 when a fake or hidden sibling \
         was found; absent when undecided pairs leave it open.",
            &[],
            (differ || !undecided).then_some(flag_value(!differ)),
        );
        m.gauge(
            "placement_study_pairs_tested_cpus",
            "CPUs compared: those the process may run on.",
            &[],
            count_value(result.tested.len()),
        );
        m.gauge(
            "placement_study_pairs_threshold_ratio",
            "The penalty at or above which a comparison says the CPUs share a core.",
            &[],
            result.options.threshold,
        );
        let effort = &result.effort;
        m.gauge(
            "placement_study_pairs_comparisons",
            "Comparisons measured (sets and pairs).",
            &[],
            count_value(effort.comparisons),
        );
        m.gauge(
            "placement_study_pairs_pair_comparisons",
            "Comparisons of exactly two workers.",
            &[],
            count_value(effort.pair_comparisons),
        );
        m.gauge(
            "placement_study_pairs_cpu_pairs",
            "Pairs of tested CPUs: what an exhaustive search compares.",
            &[],
            count_value(effort.all_pairs),
        );
        m.gauge(
            "placement_study_pairs_repetitions",
            "Measured repetitions, both arms of every comparison and the control.",
            &[],
            count_value(effort.repetitions),
        );
        m.gauge(
            "placement_study_pairs_measuring_seconds",
            "Wall time from the first warm-up to the last comparison.",
            &[],
            effort.measuring_seconds,
        );
        m.gauge(
            "placement_study_pairs_budget_exhausted",
            "1 when --time-budget ran out before the search finished.",
            &[],
            flag_value(effort.budget_exhausted),
        );
        m.checks(
            "placement_study_pairs_check_status",
            CHECK_STATUS_HELP,
            result.control.iter().chain([&result.pinning]),
        );
        m.noise("placement_study_pairs", result.noise.as_ref());
        m.render()
    }
}
