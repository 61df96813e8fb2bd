//! `observe --prom`: where a workload ran, per core class, and whether
//! the residency reconciled with the kernel's task-clock.

use super::Metrics;
use super::{common, count_value, flag_value};
use crate::saved::ObserveResult;
use std::collections::{BTreeMap, BTreeSet};

/// `observe --prom`: where the workload ran, per core class, and whether
/// the residency reconciled with the kernel's task-clock.
impl Metrics for ObserveResult {
    fn metrics(&self) -> String {
        let result = self;
        let mut m = common(result.head.kind, &result.head);
        let judged = &result.judged;
        let reconciliation = &judged.reconciliation;
        m.info(
            "placement_study_observe_info",
            "What was observed: command (a command and its process tree), pid (a running process) \
         or kernel (the built-in kernel, unpinned).",
            &[("mode", result.options.mode.into())],
        );
        m.gauge(
            "placement_study_observe_valid",
            "1 when the residency reconciled, no record was lost and some time on a CPU was \
         recorded; at 0 the residency may not be quoted.",
            &[],
            flag_value(judged.valid),
        );
        m.gauge(
            "placement_study_observe_reconciled",
            "1 when Σ residency (plus hand-overs) is within the bar of the kernel's task-clock.",
            &[],
            flag_value(reconciliation.holds),
        );
        m.gauge(
            "placement_study_observe_reconciliation_difference_ratio",
            "|residency + hand-overs - task-clock| / task-clock.",
            &[],
            reconciliation.difference,
        );
        m.gauge(
            "placement_study_observe_reconciliation_bar_ratio",
            "The largest difference that reconciles.",
            &[],
            reconciliation.bar,
        );
        m.gauge(
            "placement_study_observe_residency_seconds",
            "Σ time the followed threads were on a CPU, from the kernel's context-switch records.",
            &[],
            reconciliation.residency_ms / 1e3,
        );
        m.gauge(
            "placement_study_observe_handover_seconds",
            "Direct hand-overs between followed threads on one CPU, which task-clock counts and no \
         thread's records cover.",
            &[],
            reconciliation.handover_ms / 1e3,
        );
        m.gauge(
            "placement_study_observe_task_clock_seconds",
            "Σ task-clock of the followed threads, the kernel's own counter.",
            &[],
            reconciliation.task_clock_ms / 1e3,
        );
        m.gauge(
            "placement_study_observe_wall_seconds",
            "From the start of the recording to its end.",
            &[],
            judged.wall_ms / 1e3,
        );
        let processes: BTreeSet<u32> = judged.threads.iter().map(|t| t.pid).collect();
        m.gauge(
            "placement_study_observe_processes",
            "Processes followed.",
            &[],
            count_value(processes.len()),
        );
        m.gauge(
            "placement_study_observe_threads",
            "Threads followed.",
            &[],
            count_value(judged.threads.len()),
        );
        m.gauge(
            "placement_study_observe_migrations",
            "Moves of a followed thread to another CPU.",
            &[],
            count_value(judged.migrations.len()),
        );
        let mut between: BTreeMap<(String, String), usize> = BTreeMap::new();
        for migration in &judged.migrations {
            let classes = (
                migration.from_class.to_string(),
                migration.to_class.to_string(),
            );
            *between.entry(classes).or_default() += 1;
        }
        for ((from, to), moves) in &between {
            m.gauge(
            "placement_study_observe_class_migrations",
            "Moves of a followed thread to another CPU, by the core classes it left and entered.",
            &[("from_class", from), ("to_class", to)],
            count_value(*moves),
        );
        }
        for class in &judged.classes {
            let name = class.class.to_string();
            let by_class = [("class", name.as_str())];
            m.gauge(
                "placement_study_observe_class_residency_seconds",
                "Time the followed threads were on the class's CPUs.",
                &by_class,
                class.ms / 1e3,
            );
            m.gauge(
                "placement_study_observe_class_residency_share_ratio",
                "The class's share of the residency.",
                &by_class,
                class.share,
            );
            m.gauge(
                "placement_study_observe_class_busy_frequency_hertz",
                "Core cycles / task-clock on the class's CPUs while the threads ran there; absent \
             where no PMU counts cycles.",
                &by_class,
                class.busy_mhz.map(|mhz| mhz * 1e6),
            );
        }
        m.gauge(
            "placement_study_observe_lost_records",
            "Context-switch records the kernel dropped.",
            &[],
            judged.lost_records as f64,
        );
        m.gauge(
            "placement_study_observe_command_exit_status",
            "The observed command's exit status, as a shell reports it (command mode only).",
            &[],
            result.exit_status.map(f64::from),
        );
        m.render()
    }
}
