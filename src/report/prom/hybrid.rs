//! `hybrid --prom`: the measured core classes' speeds, the ceiling, and
//! what each work-sharing scheme made of them.

use super::Metrics;
use super::{CHECK_STATUS_HELP, common, count_value, flag_value, states};
use crate::judge::hybrid::ClassVerdict;
use crate::saved::HybridResult;

/// `hybrid --prom`: each speed class's speed, the ceiling, and what each
/// scheme made of it.
impl Metrics for HybridResult {
    fn metrics(&self) -> String {
        let result = self;
        let mut m = common(result.head.kind, &result.head);
        let judged = &result.judged;
        let verdict = judged.class_judgement.verdict.as_str();
        m.info(
            "placement_study_hybrid_info",
            "Whether the measured core classes are the published ones, and the kernel (the \
         workload).",
            &[("verdict", verdict), ("workload", &result.options.kernel)],
        );
        m.state_set(
        "placement_study_hybrid_verdict",
        "1 for the class verdict, 0 for the others: agree (each published class measured as one \
         class, apart from the others), differ, inconclusive (a baseline without repetitions).",
        &[],
        "verdict",
        states::<ClassVerdict>(),
        verdict,
    );
        m.gauge(
            "placement_study_hybrid_valid",
            "1 when pinning, multiplexing and invariance held (and, with --strict, every baseline \
         and scheme is quotable); at 0 no number of this study may be quoted.",
            &[],
            flag_value(judged.valid),
        );
        m.gauge(
            "placement_study_hybrid_workers",
            "Workers each scheme shares the work among.",
            &[],
            count_value(result.options.workers),
        );
        for class in &judged.speed_classes {
            let by_class = [("class", class.label.as_str())];
            m.ratio(
                "placement_study_hybrid_class_speed",
                "The class's speed relative to the fastest class (1 for the fastest; from pinned \
             single-worker baselines, paired by round)",
                &by_class,
                class.speed.as_ref(),
            );
            m.gauge(
                "placement_study_hybrid_class_cpus",
                "Worker CPUs the class speaks for.",
                &by_class,
                count_value(class.cpus.len()),
            );
            m.spread(
            "placement_study_hybrid_class_wall",
            "_seconds",
            "Wall time of all the work on one of the class's CPUs (its baselines, per round the \
             mean of its CPUs)",
            &by_class,
            class.wall_ms.as_ref(),
            1e-3,
        );
        }
        m.gauge(
        "placement_study_hybrid_ceiling_speedup_ratio",
        "The worker CPUs' speeds added up, in fastest-class CPUs: the speedup no scheme can beat.",
        &[],
        judged.ceiling,
    );
        for scheme in &judged.schemes {
            let arm = scheme.arm.as_str();
            let by_arm = [("arm", arm)];
            m.ratio(
                "placement_study_hybrid_scheme_speedup",
                "The fastest class's single-worker time over the scheme's (static or stealing \
             shares, pinned or not), paired by round",
                &by_arm,
                scheme.speedup.as_ref(),
            );
            m.gauge(
                "placement_study_hybrid_scheme_of_ceiling_ratio",
                "The scheme's speedup as a fraction of the ceiling.",
                &by_arm,
                scheme.of_ceiling,
            );
            m.spread(
                "placement_study_hybrid_scheme_wall",
                "_seconds",
                "Wall time of the scheme's repetitions",
                &by_arm,
                scheme.wall_ms.as_ref(),
                1e-3,
            );
            m.spread(
                "placement_study_hybrid_scheme_idle",
                "_ratio",
                "Idle fraction of all the scheme's workers, Σ idle / (workers × wall)",
                &by_arm,
                scheme.idle.as_ref(),
                1.0,
            );
            m.gauge(
                "placement_study_hybrid_scheme_quotable",
                "1 when the scheme's wall-time CV is under the bar; its numbers are quotable only \
             where placement_study_hybrid_valid is 1 too.",
                &by_arm,
                flag_value(scheme.quotable),
            );
            for share in &scheme.classes {
                let by_arm_and_class = [("arm", arm), ("class", share.class.as_str())];
                m.gauge(
                    "placement_study_hybrid_scheme_class_items_ratio",
                    "Fraction of all the scheme's items done on the class's CPUs, median over the \
                 scheme's repetitions (the result keeps no spread for it).",
                    &by_arm_and_class,
                    share.items,
                );
                m.spread(
                    "placement_study_hybrid_scheme_class_idle",
                    "_ratio",
                    "Idle fraction of the class's workers in the scheme (pinned to its CPUs, or, \
                 unpinned, those that did most of a repetition's items there)",
                    &by_arm_and_class,
                    share.idle.as_ref(),
                    1.0,
                );
            }
        }
        m.gauge(
            "placement_study_hybrid_invariance_spread_ratio",
            "Observed relative spread of instructions per byte over every sample; absent when \
         instructions were not counted.",
            &[],
            judged.invariance_spread,
        );
        let excluded = judged.excluded.len()
            + judged
                .baselines
                .iter()
                .map(|b| b.excluded.len())
                .sum::<usize>();
        m.gauge(
            "placement_study_hybrid_excluded_repetitions",
            "Repetitions left out of the statistics (a pinned worker moved, or a counter group was \
         multiplexed), baselines and schemes.",
            &[],
            count_value(excluded),
        );
        m.checks(
            "placement_study_hybrid_check_status",
            CHECK_STATUS_HELP,
            &judged.checks,
        );
        m.noise("placement_study_hybrid", result.judged.noise.as_ref());
        m.render()
    }
}
