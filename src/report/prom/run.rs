//! `run --prom`: a run's header (the gate before it), then per arm its
//! costs, and the checks that say whether the run is valid; a run that
//! stopped at its gate writes the header alone.

use super::Metrics;
use super::{CHECK_STATUS_HELP, Exposition, common, count_value, flag_value, states};
use crate::judge::gate::Verdict;
use crate::measure::ClockKind;
use crate::saved::{DocumentKind, GateResult, RunResult};

/// `run --prom`: what the gate before it said, then per arm its cost with
/// spread and repetitions and whether it is quotable, and the checks that
/// say whether the run is valid.
impl Metrics for RunResult {
    fn metrics(&self) -> String {
        let result = self;
        let mut m = common(result.head.kind, &result.head);
        run_head(
            &mut m,
            &RunHead {
                clock: result.setup.clock.as_str(),
                workload: &result.options.kernel,
                gate: result.gate.as_ref().map(|g| g.verdict),
                gated: result.gated,
                stopped_at_gate: false,
            },
        );
        m.gauge(
            "placement_study_run_valid",
            "1 when pinning, multiplexing and invariance held (and, with --strict, every arm is \
         quotable); at 0 no number of this run may be quoted. Absent when the run stopped at its \
         gate.",
            &[],
            flag_value(result.valid),
        );
        m.gauge(
            "placement_study_run_workers",
            "Workers per arm.",
            &[],
            count_value(result.options.workers),
        );
        // One name per unit: cycles where the PMU counts them, and the tick
        // clock's wall time in seconds always, rather than one name whose unit
        // a label would change.
        let seconds_per_tick = 1.0 / result.setup.tsc_hz;
        for arm in &result.arms {
            let by_arm = [("arm", arm.name.as_str())];
            if arm.clock == ClockKind::CoreCycles {
                m.spread(
                    "placement_study_run_arm_cycles",
                    "_per_byte",
                    "Core cycles per byte of one of the arm's workers (its own cycles counter)",
                    &by_arm,
                    arm.cost.as_ref(),
                    1.0,
                );
            }
            m.spread(
            "placement_study_run_arm_wall",
            "_seconds_per_byte",
            "Wall time per byte of one of the arm's workers (TSC or generic-timer ticks over the \
             counter's frequency; time the worker was descheduled counts too)",
            &by_arm,
            arm.tsc_per_byte.as_ref(),
            seconds_per_tick,
        );
            m.spread(
                "placement_study_run_arm_throughput",
                "_bytes_per_second",
                "All the arm's workers' bytes per second of wall time",
                &by_arm,
                arm.throughput_bytes_per_s.as_ref(),
                1.0,
            );
            m.gauge(
                "placement_study_run_arm_quotable",
                "1 when the arm's cost CV (of cycles per byte where counted, else of wall time per \
             byte) is under the bar; its numbers are quotable only where placement_study_run_valid \
             is 1 too.",
                &by_arm,
                flag_value(arm.quotable),
            );
            m.gauge(
            "placement_study_run_arm_change_vs_one_per_core_ratio",
            "median(cost) / median(one-per-core cost) - 1, on the clock placement_study_run_info \
             names: what this placement costs against one worker per core.",
            &by_arm,
            arm.change_vs_one_per_core,
        );
        }
        m.gauge(
            "placement_study_run_invariance_spread_ratio",
            "Observed relative spread of instructions per byte over every sample; absent when \
         instructions were not counted.",
            &[],
            result.invariance_spread,
        );
        m.gauge(
            "placement_study_run_excluded_repetitions",
            "Repetitions left out of the statistics (a pinned worker moved, or a counter group was \
         multiplexed).",
            &[],
            count_value(result.excluded.len()),
        );
        m.checks(
            "placement_study_run_check_status",
            CHECK_STATUS_HELP,
            &result.checks,
        );
        m.render()
    }
}

/// `run --prom` of a run that stopped at its gate (the gate did not say
/// physical, or a signal stopped it): run metrics, not the gate's, so a
/// textfile folder's `run.prom` keeps its kind whatever the verdict. They
/// are a run's metrics header (`Metrics for RunResult`) with the gate's verdict, `…_stopped_at_gate` 1 and
/// no arm, validity or check series, for nothing of the run was measured.
pub fn run_stopped_at_gate(gate: &GateResult) -> String {
    let mut m = common(DocumentKind::Run, &gate.head);
    run_head(
        &mut m,
        &RunHead {
            clock: "",
            // The gate measured with the kernel the run would have used.
            workload: gate.setup.as_ref().map_or("", |s| s.kernel.as_str()),
            gate: Some(gate.verdict),
            gated: false,
            stopped_at_gate: true,
        },
    );
    m.render()
}

/// What every run's metrics say first, whether its arms were measured or
/// it stopped at its gate.
struct RunHead<'a> {
    /// The clock the arms' costs are on; empty when no arm was measured.
    clock: &'a str,
    /// The kernel the workers ran; empty when nothing was measured.
    workload: &'a str,
    /// The gate's verdict; `None` when `--skip-gate` skipped it.
    gate: Option<Verdict>,
    /// The gate said physical before the arms were measured.
    gated: bool,
    stopped_at_gate: bool,
}

/// Writes a run's [`RunHead`]: its `_info`, the gate's verdict as a state
/// set, and whether the gate let the arms be measured.
fn run_head(m: &mut Exposition, head: &RunHead) {
    let gate_verdict = Verdict::word_of(head.gate);
    m.info(
        "placement_study_run_info",
        "The run's clock (empty when no arm was measured), its kernel (the workload) and the \
         verdict of the gate before it (not-run with --skip-gate).",
        &[
            ("clock", head.clock),
            ("workload", head.workload),
            ("gate_verdict", gate_verdict),
        ],
    );
    m.state_set(
        "placement_study_run_gate_verdict",
        "1 for the verdict of the gate before the run, 0 for the others: physical (the arms \
         were measured), virtual, no-smt or inconclusive (the run stopped at its gate), not-run \
         (--skip-gate).",
        &[],
        "verdict",
        states::<Verdict>().chain([Verdict::word_of(None)]),
        gate_verdict,
    );
    m.gauge(
        "placement_study_run_stopped_at_gate",
        "1 when the gate did not say physical (or a signal stopped it) and the run measured \
         nothing else: no arm, validity or check series follow.",
        &[],
        flag_value(head.stopped_at_gate),
    );
    m.gauge(
        "placement_study_run_gated",
        "1 when the gate said physical before the arms were measured; 0 when the run stopped at \
         its gate, or with --skip-gate (then the numbers may describe a hypervisor's \
         scheduling, not SMT).",
        &[],
        flag_value(head.gated),
    );
}
