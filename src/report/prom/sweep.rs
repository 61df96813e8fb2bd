//! `run --sweep --prom`: each step's speedup, ceiling, efficiency and
//! marginal gain, and the knees.

use super::Metrics;
use super::{CHECK_STATUS_HELP, common, count_value, flag_value};
use crate::saved::SweepResult;

/// `run --sweep --prom`: one sample per step of each family, labelled by
/// its worker count.
impl Metrics for SweepResult {
    fn metrics(&self) -> String {
        let result = self;
        let mut m = common(result.head.kind, &result.head);
        let judged = &result.judged;
        m.info(
            "placement_study_sweep_info",
            "The order the CPUs were added in, and the kernel or COMMAND line (the workload).",
            &[
                ("order", &result.plan.order_name),
                ("workload", &result.workload()),
            ],
        );
        m.gauge(
            "placement_study_sweep_valid",
            "1 when pinning, multiplexing and invariance held, every step and CPU alone kept a \
         repetition (and, with --strict, every step is quotable); at 0 no number of this sweep \
         may be quoted.",
            &[],
            flag_value(judged.valid),
        );
        m.gauge(
            "placement_study_sweep_noise_floor_ratio",
            "Step 1 against itself: half its time's 95 % interval over its median.",
            &[],
            judged.noise_floor,
        );
        for step in &judged.steps {
            let workers = step.workers.to_string();
            let by_step = [("workers", workers.as_str())];
            m.spread(
                "placement_study_sweep_step_wall",
                "_seconds",
                "Wall time of all the work on the step's workers",
                &by_step,
                step.wall_ms.as_ref(),
                1e-3,
            );
            m.ratio(
                "placement_study_sweep_step_speedup",
                "Step 1's time over the step's, paired by round",
                &by_step,
                step.speedup.as_ref(),
            );
            m.ratio(
                "placement_study_sweep_step_unpinned_speedup",
                "Step 1's time over the step's workers' left to the scheduler, paired by round",
                &by_step,
                step.unpinned_speedup.as_ref(),
            );
            m.gauge(
                "placement_study_sweep_step_ceiling_ratio",
                "The step's CPUs' single-worker speeds added up, in units of the first CPU.",
                &by_step,
                step.ceiling,
            );
            m.gauge(
                "placement_study_sweep_step_efficiency_ratio",
                "The step's speedup over its ceiling.",
                &by_step,
                step.efficiency,
            );
            m.gauge(
                "placement_study_sweep_step_marginal_gain_ratio",
                "What each CPU the step added is worth, in units of the first CPU: the median \
             per-round rise of the speedup per added CPU.",
                &by_step,
                step.marginal_gain.as_ref().map(|g| g.value),
            );
            m.gauge(
                "placement_study_sweep_step_busy_hertz",
                "The step's workers' mean busy clock: core cycles per busy second.",
                &by_step,
                step.busy_mhz.map(|mhz| mhz * 1e6),
            );
            m.gauge(
                "placement_study_sweep_step_quotable",
                "1 when the step's wall-time CV is under the bar.",
                &by_step,
                flag_value(step.quotable),
            );
        }
        m.gauge(
            "placement_study_sweep_knees",
            "Steps at which the marginal gain fell clearly below the knee fraction (its 95 % \
         interval wholly below).",
            &[],
            count_value(judged.knees.iter().filter(|k| k.clear).count()),
        );
        m.gauge(
            "placement_study_sweep_unclear_steps",
            "Steps whose marginal gain's 95 % interval reaches across the knee fraction (or has \
         none): neither a knee nor no knee can be said there.",
            &[],
            count_value(
                judged.knees.iter().filter(|k| !k.clear).count() + judged.unclear_steps.len(),
            ),
        );
        m.checks(
            "placement_study_sweep_check_status",
            CHECK_STATUS_HELP,
            &judged.checks,
        );
        m.render()
    }
}
