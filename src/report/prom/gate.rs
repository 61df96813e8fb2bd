//! `gate --prom`: the gate's verdict, its penalty with the interval, and
//! the threshold it was judged against.

use super::Metrics;
use super::{CHECK_STATUS_HELP, common, count_value, states};
use crate::judge::gate::Verdict;
use crate::saved::GateResult;

/// `gate --prom`: the verdict, the penalty with its interval, and the
/// threshold it was judged against.
/// A gate a run stopped at writes run metrics: a textfile's series keep
/// their kind whatever the verdict.
impl Metrics for GateResult {
    fn metrics(&self) -> String {
        if self.run_stopped_at_gate {
            return super::run_stopped_at_gate(self);
        }
        let result = self;
        let mut m = common(result.head.kind, &result.head);
        let verdict = result.verdict.as_str();
        let clock = result.clock.map_or("", |c| c.as_str());
        let baseline = result.baseline.map_or("", <&str>::from);
        m.info(
            "placement_study_gate_info",
            "The gate's verdict, the clock its costs are on and what the siblings were measured \
         against (empty when nothing was measured).",
            &[
                ("verdict", verdict),
                ("clock", clock),
                ("baseline", baseline),
            ],
        );
        m.state_set(
            "placement_study_gate_verdict",
            "1 for the gate's verdict, 0 for the others: physical (placement is physical), virtual \
         (sharing a core costs less than the threshold), no-smt (no sibling pair), inconclusive \
         (also a gate a signal stopped: see placement_study_complete).",
            &[],
            "verdict",
            states::<Verdict>(),
            verdict,
        );
        m.gauge(
            "placement_study_gate_penalty_ratio",
            "What sharing a core costs: the median of the per-round ratios of siblings' cost over \
         the baseline's, minus 1 (0.37 is 37 % more); with each worker against its own CPU \
         alone, the deciding worker's; absent when too few rounds were measured.",
            &[],
            result.penalty,
        );
        if let Some(ci95) = &result.ci95 {
            m.gauge(
                "placement_study_gate_penalty_interval_low_ratio",
                "Lower bound of the penalty's distribution-free 95 % confidence interval.",
                &[],
                ci95.low,
            );
            m.gauge(
                "placement_study_gate_penalty_interval_high_ratio",
                "Upper bound of the penalty's distribution-free 95 % confidence interval.",
                &[],
                ci95.high,
            );
        }
        for worker in &result.workers {
            let cpu = worker.cpu.to_string();
            m.gauge(
                "placement_study_gate_worker_penalty_ratio",
                "Each sibling worker's penalty: the median of its per-round ratios of its cost \
             beside the other over its own CPU alone, minus 1; physical needs every worker's \
             interval at or above the threshold.",
                &[("cpu", cpu.as_str())],
                worker.estimate.as_ref().map(|e| e.penalty),
            );
        }
        if let Some(slow) = &result.slow_cpu {
            let (cpu, other) = (slow.cpu.to_string(), slow.other.to_string());
            m.gauge(
                "placement_study_gate_slow_cpu_ratio",
                "A sibling CPU that ran steadily slower alone than the other, in every batch: the \
             median of the paired cost ratios minus 1 (a neighbour on its host CPU, never a \
             sharing penalty).",
                &[("cpu", cpu.as_str()), ("other", other.as_str())],
                slow.slower,
            );
        }
        m.gauge(
            "placement_study_gate_penalty_of_medians_ratio",
            "median(siblings) / median(baseline) - 1, beside the paired estimate.",
            &[],
            result.penalty_of_medians,
        );
        m.gauge(
            "placement_study_gate_threshold_ratio",
            "The penalty at or above which the gate says physical.",
            &[],
            result.threshold,
        );
        m.gauge(
            "placement_study_gate_repetitions",
            "Paired rounds the penalty comes from (noisy and excluded ones left out).",
            &[],
            count_value(result.reps),
        );
        m.gauge(
            "placement_study_gate_excluded_repetitions",
            "Repetitions left out of the statistics (a pinned worker moved, or a counter group was \
         multiplexed).",
            &[],
            count_value(result.excluded.len()),
        );
        if !result.batches.is_empty() {
            m.gauge(
                "placement_study_gate_batches",
                "Batches measured a pause apart; a verdict needs them to agree.",
                &[],
                count_value(result.batches.len()),
            );
        }
        m.noise("placement_study_gate", result.noise.as_ref());
        m.gauge(
            "placement_study_gate_control_attempts",
            "Times the same-CPU control was measured (a failed one is measured again).",
            &[],
            count_value(result.control_attempts.len() + usize::from(result.control.is_some())),
        );
        m.checks(
            "placement_study_gate_check_status",
            CHECK_STATUS_HELP,
            result.control.as_ref(),
        );
        m.render()
    }
}
