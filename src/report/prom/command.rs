//! `run --prom -- COMMAND`: the command study's gate, per arm its wall
//! time with spread and its ratio to the baseline, and its checks.

use super::Metrics;
use super::{CHECK_STATUS_HELP, common, count_value, flag_value, states};
use crate::judge::command_checks::quotable;
use crate::judge::gate::Verdict;
use crate::saved::CommandResult;

/// `run --prom -- COMMAND`: see the module docs.
impl Metrics for CommandResult {
    fn metrics(&self) -> String {
        let result = self;
        let mut m = common(result.head.kind, &result.head);
        let gate_verdict = Verdict::word_of(result.gate.as_ref().map(|g| g.verdict));
        let program = result.options.argv.first().map_or("", String::as_str);
        m.info(
        "placement_study_command_info",
        "The measured program (the command's first word) and the verdict of the gate before the \
         study (not-run with --skip-gate).",
        &[("program", program), ("gate_verdict", gate_verdict)],
    );
        m.state_set(
            "placement_study_command_gate_verdict",
            "1 for the verdict of the gate before the study, 0 for the others (not-run with \
         --skip-gate).",
            &[],
            "verdict",
            states::<Verdict>().chain([Verdict::word_of(None)]),
            gate_verdict,
        );
        m.gauge(
            "placement_study_command_gated",
            "1 when the gate said physical before the arms were measured; 0 with --skip-gate.",
            &[],
            flag_value(result.gated),
        );
        m.gauge(
            "placement_study_command_valid",
            "1 when no check that breaks every number failed (and, with --strict, every arm is \
         under the CV bar).",
            &[],
            flag_value(result.valid),
        );
        m.gauge(
            "placement_study_command_threads",
            "What {threads} stood for in the command.",
            &[],
            count_value(result.plan.threads),
        );
        m.gauge(
            "placement_study_command_failed_repetitions",
            "Repetitions whose command did not exit 0, kept by --ignore-failure and left out of \
         every statistic.",
            &[],
            count_value(result.reps.iter().filter(|r| r.failed).count()),
        );
        for arm in &result.arms {
            let name = arm.arm.to_string();
            let by_arm = [("arm", name.as_str())];
            m.spread(
                "placement_study_command_arm_wall",
                "_seconds",
                "Wall time of one run of the command in the arm, release to reaping of its tree",
                &by_arm,
                arm.wall_s.as_ref(),
                1.0,
            );
            m.gauge(
                "placement_study_command_arm_quotable",
                "1 when the arm's wall-time CV is under the bar.",
                &by_arm,
                flag_value(quotable(&result.checks, arm.arm)),
            );
            m.gauge(
            "placement_study_command_arm_vs_baseline_ratio",
            "The arm's wall time against the baseline arm's, paired by round, minus 1 (0.3: 30 % \
             slower); absent for the baseline.",
            &by_arm,
            arm.vs_baseline,
        );
            m.gauge(
                "placement_study_command_arm_user_instructions",
                "Median user-space instructions of the command's tree in the arm, over the \
             repetitions whose counters ran all their enabled time; absent where no PMU counted.",
                &by_arm,
                arm.user_instructions,
            );
            m.gauge(
            "placement_study_command_arm_user_instructions_vs_baseline_ratio",
            "The arm's median user-space instructions against the baseline arm's, minus 1 (0.02: \
             2 % more work); beyond --tolerance the same-work check fails. Absent for the \
             baseline and where no PMU counted.",
            &by_arm,
            arm.instructions_vs_baseline,
        );
        }
        m.checks(
            "placement_study_command_check_status",
            CHECK_STATUS_HELP,
            &result.checks,
        );
        m.render()
    }
}
