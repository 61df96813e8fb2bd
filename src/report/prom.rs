//! `--prom FILE`: a result as Prometheus metrics, in the text exposition
//! format node_exporter's textfile collector reads (a `*.prom` file in its
//! `--collector.textfile.directory`), one function per document kind, each
//! returning the whole file.
//!
//! The conventions every kind follows:
//!
//! * Names start `placement_study_` and end in their unit: a base unit
//!   (`_seconds`, `_ratio`, `_bytes_per_second`, `_hertz`,
//!   `_seconds_per_byte`), `_cycles_per_byte` (core cycles have no base
//!   unit), or a plain count. No label changes a unit: a cost on another
//!   clock is another name. Every metric is a gauge: a file describes one
//!   result, and nothing in it only ever goes up.
//! * Metadata are labels of `_info` gauges whose value is 1. Labels have low
//!   cardinality: kind, arm, core class, check, verdict state, and (in
//!   `_info` only) clock. Never a repetition, PID, thread, command line or
//!   path.
//! * A median over repetitions comes as three families, `…{unit}`,
//!   `…_cv_ratio` and `…_repetitions` (`Metrics::spread`), wherever the
//!   document keeps its spread.
//! * A verdict is also a state set (`…_verdict{verdict="…"}`, 1 for the
//!   verdict, 0 for every other), as a check is (`…_check_status`), so an
//!   alert matches `== 1`, and a series does not vanish when it changes.
//! * A value the document does not have (no interval after too few
//!   repetitions, no cycles without a PMU) is left out: never NaN, never a
//!   made-up zero.
//! * A number that failed its validity bar stays marked: it sits next to
//!   the gauges that say so (`placement_study_run_valid`, `…_quotable`,
//!   `…_check_status`), which a query joins on before quoting it.
//! * A command writes its own kind whatever its verdict: a run stopped at
//!   its gate writes run metrics ([`run_stopped_at_gate`]), so a file's
//!   series never change kind from one run to the next.
//! * The metrics every kind writes carry a `kind` label and the same HELP
//!   text, so one textfile folder can hold one file per kind without two
//!   files writing one series (node_exporter refuses a scrape that does).
//!   A folder is one host's: beyond `placement_study_info`'s `host`
//!   label, only the scrape's `instance` tells two hosts' series apart.

use crate::judge::checks::{Check, CheckStatus};
use crate::judge::gate::Verdict;
use crate::judge::hybrid::{ClassVerdict, Ratio};
use crate::judge::pairs::{MapVerdict, PairRelation};
use crate::judge::stats::Spread;
use crate::measure::ClockKind;
use crate::probe::Summary;
use crate::saved::{
    DocumentKind, Evidence, GateResult, HybridResult, ObserveResult, PairsResult, RunResult,
    SavedDocument,
};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The exposition of a saved document, whichever command wrote it.
pub fn document(saved: &SavedDocument) -> String {
    match saved {
        SavedDocument::Gate(result) if result.run_stopped_at_gate => run_stopped_at_gate(result),
        SavedDocument::Gate(result) => gate(result),
        SavedDocument::Run(result) => run(result),
        SavedDocument::Pairs(result) => pairs(result),
        SavedDocument::Hybrid(result) => hybrid(result),
        SavedDocument::Observe(result) => observe(result),
    }
}

/// The [`Common`] of a `pairs`, `hybrid` or `observe` document: the same
/// fields under the same names in each.
macro_rules! study_common {
    ($result:expr) => {
        Common {
            kind: $result.kind,
            tool_version: &$result.tool_version,
            host: Some(&$result.host),
            started_unix: Some($result.started_unix),
            complete: $result.complete,
            model: $result.model.as_deref(),
            kernel: $result
                .environment
                .as_ref()
                .and_then(|e| e.kernel.as_deref()),
            topology: Some(&$result.topology),
            evidence: &$result.evidence,
        }
    };
}

/// The gate's verdicts, in the order their state sets list them.
const GATE_VERDICTS: [Verdict; 4] = [
    Verdict::Physical,
    Verdict::Virtual,
    Verdict::NoSmt,
    Verdict::Inconclusive,
];

/// `gate --prom`: the verdict, the penalty with its interval, and the
/// threshold it was judged against.
pub fn gate(result: &GateResult) -> String {
    let mut m = common(Common {
        kind: result.kind,
        tool_version: &result.tool_version,
        host: result.host.as_deref(),
        started_unix: result.started_unix,
        complete: result.complete,
        model: result.model.as_deref(),
        kernel: result
            .environment
            .as_ref()
            .and_then(|e| e.kernel.as_deref()),
        topology: result.topology.as_ref(),
        evidence: &result.evidence,
    });
    let verdict = result.verdict.as_str();
    let clock = result.clock.map_or("", |c| c.as_str());
    let baseline = result.baseline.as_ref().map(saved_word).unwrap_or_default();
    m.info(
        "placement_study_gate_info",
        "The gate's verdict, the clock its costs are on and what the siblings were measured \
         against (empty when nothing was measured).",
        &[
            ("verdict", verdict),
            ("clock", clock),
            ("baseline", &baseline),
        ],
    );
    m.state_set(
        "placement_study_gate_verdict",
        "1 for the gate's verdict, 0 for the others: physical (placement is physical), virtual \
         (sharing a core costs less than the threshold), no-smt (no sibling pair), inconclusive \
         (also a gate a signal stopped: see placement_study_complete).",
        &[],
        "verdict",
        GATE_VERDICTS.map(Verdict::as_str),
        verdict,
    );
    m.gauge(
        "placement_study_gate_penalty_ratio",
        "What sharing a core costs: the paired estimate of siblings' cost over the baseline's, \
         minus 1 (0.37 is 37 % more); absent when too few repetitions were measured.",
        &[],
        result.penalty,
    );
    if let Some(ci95) = &result.ci95 {
        m.gauge(
            "placement_study_gate_penalty_interval_low_ratio",
            "Lower bound of the penalty's 95 % confidence interval.",
            &[],
            ci95.low,
        );
        m.gauge(
            "placement_study_gate_penalty_interval_high_ratio",
            "Upper bound of the penalty's 95 % confidence interval.",
            &[],
            ci95.high,
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
        "Measured repetitions per arm the penalty comes from.",
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
    m.checks(
        "placement_study_gate_check_status",
        CHECK_STATUS_HELP,
        result.control.as_ref(),
    );
    m.render()
}

/// `run --prom`: what the gate before it said, then per arm its cost with
/// spread and repetitions and whether it is quotable, and the checks that
/// say whether the run is valid.
pub fn run(result: &RunResult) -> String {
    let mut m = common(Common {
        kind: result.kind,
        tool_version: &result.tool_version,
        host: Some(&result.host),
        started_unix: Some(result.started_unix),
        complete: result.complete,
        model: result.model.as_deref(),
        kernel: result.environment.kernel.as_deref(),
        topology: Some(&result.topology),
        evidence: &result.evidence,
    });
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

/// `run --prom` of a run that stopped at its gate (the gate did not say
/// physical, or a signal stopped it): run metrics, not the gate's, so a
/// textfile folder's `run.prom` keeps its kind whatever the verdict. They
/// are [`run`]'s header with the gate's verdict, `…_stopped_at_gate` 1 and
/// no arm, validity or check series, for nothing of the run was measured.
pub fn run_stopped_at_gate(gate: &GateResult) -> String {
    let mut m = common(Common {
        kind: DocumentKind::Run,
        tool_version: &gate.tool_version,
        host: gate.host.as_deref(),
        started_unix: gate.started_unix,
        complete: gate.complete,
        model: gate.model.as_deref(),
        kernel: gate.environment.as_ref().and_then(|e| e.kernel.as_deref()),
        topology: gate.topology.as_ref(),
        evidence: &gate.evidence,
    });
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
fn run_head(m: &mut Metrics, head: &RunHead) {
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
        GATE_VERDICTS
            .map(Verdict::as_str)
            .into_iter()
            .chain([Verdict::word_of(None)]),
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

/// `pairs --prom`: the map verdict, how many pairs agree with the
/// published map, and what the search cost.
pub fn pairs(result: &PairsResult) -> String {
    let mut m = common(study_common!(result));
    let verdict = result.verdict.as_str();
    let search = saved_word(&result.search);
    m.info(
        "placement_study_pairs_info",
        "The map verdict, the search (all-pairs, group-testing) and the clock every comparison's \
         cost is on.",
        &[
            ("verdict", verdict),
            ("search", &search),
            ("clock", result.clock.as_str()),
        ],
    );
    let verdicts = [
        MapVerdict::Agree,
        MapVerdict::Differ,
        MapVerdict::Inconclusive,
    ];
    m.state_set(
        "placement_study_pairs_verdict",
        "1 for the map verdict, 0 for the others: agree (the measured sibling map is the \
         published one), differ (fake or hidden siblings), inconclusive (an undecided pair, a \
         failed control, or a search a signal stopped).",
        &[],
        "verdict",
        verdicts.map(MapVerdict::as_str),
        verdict,
    );
    let relations = [
        PairRelation::Agreed,
        PairRelation::Fake,
        PairRelation::Hidden,
        PairRelation::Inconclusive,
    ];
    let pairs_of = |relation: PairRelation| {
        let pairs = result.map.pairs.iter();
        pairs.filter(|p| p.relation == relation).count()
    };
    for relation in relations {
        m.gauge(
            "placement_study_pairs_sibling_pairs",
            "CPU pairs by relation to the published map: agreed (published siblings measured \
             sharing), fake (published, measured apart), hidden (measured sharing, not \
             published), inconclusive (undecided).",
            &[("relation", &saved_word(&relation))],
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
    m.render()
}

/// `hybrid --prom`: each speed class's speed, the ceiling, and what each
/// scheme made of it.
pub fn hybrid(result: &HybridResult) -> String {
    let mut m = common(study_common!(result));
    let judged = &result.judged;
    let verdict = judged.class_judgement.verdict.as_str();
    m.info(
        "placement_study_hybrid_info",
        "Whether the measured core classes are the published ones, and the kernel (the \
         workload).",
        &[("verdict", verdict), ("workload", &result.options.kernel)],
    );
    let verdicts = [
        ClassVerdict::Agree,
        ClassVerdict::Differ,
        ClassVerdict::Inconclusive,
    ];
    m.state_set(
        "placement_study_hybrid_verdict",
        "1 for the class verdict, 0 for the others: agree (each published class measured as one \
         class, apart from the others), differ, inconclusive (a baseline without repetitions).",
        &[],
        "verdict",
        verdicts.map(ClassVerdict::as_str),
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
    m.render()
}

/// `observe --prom`: where the workload ran, per core class, and whether
/// the residency reconciled with the kernel's task-clock.
pub fn observe(result: &ObserveResult) -> String {
    let mut m = common(study_common!(result));
    let judged = &result.judged;
    let reconciliation = &judged.reconciliation;
    m.info(
        "placement_study_observe_info",
        "What was observed: command (a command and its process tree), pid (a running process) \
         or kernel (the built-in kernel, unpinned).",
        &[("mode", &saved_word(&result.options.mode))],
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

/// The HELP of every kind's `…_check_status`.
const CHECK_STATUS_HELP: &str = "1 for the check's status, 0 for the others: passed, failed, or \
unavailable (this host cannot tell: not a pass). Checks: pinning, multiplexing, invariance, \
cv-bar ARM (the arm is quotable), control (both workers on one CPU).";

/// What every kind's document says about where and when it was measured.
struct Common<'a> {
    kind: DocumentKind,
    tool_version: &'a str,
    host: Option<&'a str>,
    started_unix: Option<u64>,
    complete: bool,
    model: Option<&'a str>,
    /// The OS kernel's release (`uname -r`).
    kernel: Option<&'a str>,
    topology: Option<&'a Summary>,
    evidence: &'a Evidence,
}

/// The metrics every kind writes, each labelled with the kind.
fn common(c: Common) -> Metrics {
    let mut m = Metrics::default();
    let kind = c.kind.to_string();
    let by_kind = [("kind", kind.as_str())];
    // The CPUID signature: the summary's, or (a gate file from before the
    // gate saved its topology) the evidence's.
    let hypervisor = c
        .topology
        .and_then(|t| t.hypervisor.as_deref())
        .or(c.evidence.cpuid_hypervisor_signature.as_deref());
    m.info(
        "placement_study_info",
        "The result's kind and the tool's version; the host, CPU model, kernel release and CPUID \
         hypervisor signature it was measured on (empty where unknown or none).",
        &[
            ("kind", &kind),
            ("version", c.tool_version),
            ("host", c.host.unwrap_or_default()),
            ("model", c.model.unwrap_or_default()),
            ("kernel", c.kernel.unwrap_or_default()),
            ("hypervisor", hypervisor.unwrap_or_default()),
        ],
    );
    m.gauge(
        "placement_study_start_time_seconds",
        "When the measurement started, seconds since the Unix epoch (node_textfile_mtime_seconds \
         says when the file was written).",
        &by_kind,
        c.started_unix.map(|s| s as f64),
    );
    m.gauge(
        "placement_study_complete",
        "0 when a stop signal ended the measurement: only what was done is here, and there is \
         no verdict.",
        &by_kind,
        flag_value(c.complete),
    );
    if let Some(topology) = c.topology {
        for (name, help, value) in [
            (
                "placement_study_cpus",
                "Online logical CPUs.",
                count_value(topology.cpus),
            ),
            (
                "placement_study_allowed_cpus",
                "CPUs the process was allowed to run on.",
                count_value(topology.allowed),
            ),
            (
                "placement_study_cores",
                "Cores, from the kernel's sibling maps.",
                count_value(topology.cores),
            ),
            (
                "placement_study_packages",
                "Packages (sockets).",
                count_value(topology.packages),
            ),
            (
                "placement_study_core_classes",
                "Published core classes (performance, efficiency, ...).",
                count_value(topology.core_classes),
            ),
            (
                "placement_study_smt",
                "1 when some core has more than one online hardware thread.",
                flag_value(topology.smt),
            ),
        ] {
            m.gauge(name, help, &by_kind, value);
        }
    }
    m
}

/// The word a unit variant is saved as in JSON ("separate-cores",
/// "all-pairs"): label values spell things as the saved files do.
fn saved_word(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(word)) => word,
        _ => String::new(),
    }
}

/// A yes/no as a gauge value.
fn flag_value(yes: bool) -> f64 {
    if yes { 1.0 } else { 0.0 }
}

/// A count as a gauge value (exact below 2⁵³).
fn count_value(n: usize) -> f64 {
    n as f64
}

/// An exposition being built: metric families in the order first written,
/// each with its samples, so a family's lines stay together however the
/// samples were visited.
#[derive(Default)]
struct Metrics {
    families: Vec<Family>,
}

/// One metric family: its HELP and its sample lines.
struct Family {
    name: String,
    help: String,
    samples: Vec<String>,
}

impl Metrics {
    /// One gauge sample. No value, or one that is not a finite number, writes
    /// nothing: absence is how the format says "unknown".
    fn gauge(
        &mut self,
        name: &str,
        help: &str,
        labels: &[(&str, &str)],
        value: impl Into<Option<f64>>,
    ) {
        let Some(value) = value.into().filter(|v| v.is_finite()) else {
            return;
        };
        let index = match self.families.iter().position(|f| f.name == name) {
            Some(index) => index,
            None => {
                self.families.push(Family {
                    name: name.to_string(),
                    help: help.to_string(),
                    samples: Vec::new(),
                });
                self.families.len() - 1
            }
        };
        let mut line = name.to_string();
        if !labels.is_empty() {
            let pairs: Vec<String> = labels
                .iter()
                .map(|(label, text)| format!("{label}=\"{}\"", escape_label(text)))
                .collect();
            let _ = write!(line, "{{{}}}", pairs.join(","));
        }
        let _ = write!(line, " {value}");
        self.families[index].samples.push(line);
    }

    /// An `_info` gauge: metadata as labels, value 1.
    fn info(&mut self, name: &str, help: &str, labels: &[(&str, &str)]) {
        self.gauge(name, help, labels, 1.0);
    }

    /// A state set: one sample per state, `label` naming it, 1 for
    /// `current` and 0 for every other.
    fn state_set<'s>(
        &mut self,
        name: &str,
        help: &str,
        labels: &[(&str, &str)],
        label: &str,
        states: impl IntoIterator<Item = &'s str>,
        current: &str,
    ) {
        for state in states {
            let mut with_state = labels.to_vec();
            with_state.push((label, state));
            self.gauge(name, help, &with_state, flag_value(state == current));
        }
    }

    /// Each check as a state set of its status, labelled `check`.
    fn checks<'c>(&mut self, name: &str, help: &str, checks: impl IntoIterator<Item = &'c Check>) {
        let statuses = [
            CheckStatus::Passed,
            CheckStatus::Failed,
            CheckStatus::Unavailable,
        ];
        for check in checks {
            let check_name = check.name.to_string();
            self.state_set(
                name,
                help,
                &[("check", &check_name)],
                "status",
                statuses.map(CheckStatus::as_str),
                check.status.as_str(),
            );
        }
    }

    /// A median with its spread, as three families: `{stem}{unit}` the
    /// median (times `scale`, into the base unit), `{stem}_cv_ratio` its
    /// coefficient of variation, `{stem}_repetitions` how many repetitions
    /// both come from. `what` starts each HELP.
    fn spread(
        &mut self,
        stem: &str,
        unit: &str,
        what: &str,
        labels: &[(&str, &str)],
        spread: Option<&Spread>,
        scale: f64,
    ) {
        let Some(spread) = spread else {
            return;
        };
        self.gauge(
            &format!("{stem}{unit}"),
            &format!("{what}: median over repetitions."),
            labels,
            spread.median * scale,
        );
        self.gauge(
            &format!("{stem}_cv_ratio"),
            &format!("{what}: coefficient of variation over repetitions (stddev / mean)."),
            labels,
            spread.cv,
        );
        self.gauge(
            &format!("{stem}_repetitions"),
            &format!("{what}: repetitions the median and CV come from."),
            labels,
            count_value(spread.reps),
        );
    }

    /// A ratio with its 95 % interval: `{stem}_ratio`, and
    /// `{stem}_interval_low_ratio`/`_high_ratio` where there is one.
    fn ratio(&mut self, stem: &str, what: &str, labels: &[(&str, &str)], ratio: Option<&Ratio>) {
        let Some(ratio) = ratio else {
            return;
        };
        self.gauge(
            &format!("{stem}_ratio"),
            &format!("{what}."),
            labels,
            ratio.value,
        );
        self.gauge(
            &format!("{stem}_interval_low_ratio"),
            &format!("{what}: lower bound of its 95 % confidence interval."),
            labels,
            ratio.ci95_low,
        );
        self.gauge(
            &format!("{stem}_interval_high_ratio"),
            &format!("{what}: upper bound of its 95 % confidence interval."),
            labels,
            ratio.ci95_high,
        );
    }

    /// The exposition text: per family its HELP, TYPE and samples, ending
    /// in a newline.
    fn render(self) -> String {
        let mut out = String::new();
        for family in self.families {
            let _ = writeln!(out, "# HELP {} {}", family.name, escape_help(&family.help));
            let _ = writeln!(out, "# TYPE {} gauge", family.name);
            for sample in family.samples {
                let _ = writeln!(out, "{sample}");
            }
        }
        out
    }
}

/// A label value as the exposition format quotes it: backslash, double
/// quote and newline escaped.
fn escape_label(text: &str) -> String {
    text.replace('\\', r"\\")
        .replace('"', r#"\""#)
        .replace('\n', r"\n")
}

/// HELP text as the format needs it: backslash and newline escaped.
fn escape_help(text: &str) -> String {
    text.replace('\\', r"\\").replace('\n', r"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::checks::CheckName;
    use crate::judge::gate::Interval;
    use crate::plan::GateBaseline;
    use crate::saved::load::from_bytes;
    use std::path::Path;

    /// A saved result of `fixtures/results/`, parsed as `report` parses it.
    fn fixture(name: &str, json: &str) -> SavedDocument {
        from_bytes(json.as_bytes(), Path::new(name)).unwrap()
    }

    fn gate_fixture() -> GateResult {
        let json = include_str!("../../fixtures/results/gate-vm-no-smt.json");
        match fixture("gate-vm-no-smt.json", json) {
            SavedDocument::Gate(result) => *result,
            other => panic!("not a gate document: {other:?}"),
        }
    }

    /// The value of the sample whose series (name and labels, as written)
    /// is `series`; `None` when there is none.
    fn value(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
            .map(|v| v.parse().unwrap())
    }

    fn has_family(text: &str, name: &str) -> bool {
        text.lines().any(|line| {
            line.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(['{', ' ']))
        })
    }

    #[test]
    fn a_no_smt_gate_has_its_verdict_and_no_penalty() {
        let text = gate(&gate_fixture());
        assert_eq!(
            value(&text, r#"placement_study_gate_verdict{verdict="no-smt"}"#),
            Some(1.0)
        );
        assert_eq!(
            value(&text, r#"placement_study_gate_verdict{verdict="physical"}"#),
            Some(0.0)
        );
        assert!(!has_family(&text, "placement_study_gate_penalty_ratio"));
        assert!(!has_family(&text, "placement_study_gate_check_status"));
        assert!(text.contains(
            r#"placement_study_info{kind="gate",version="0.1.0",host="vm",model="Intel(R) Xeon(R) Processor",kernel="6.18.44-fc-v1147",hypervisor="KVMKVMKVM"} 1"#
        ));
        assert!(
            text.contains(r#"placement_study_gate_info{verdict="no-smt",clock="",baseline=""} 1"#)
        );
        assert_eq!(
            value(&text, r#"placement_study_start_time_seconds{kind="gate"}"#),
            Some(1796415782.0)
        );
        assert_eq!(
            value(&text, r#"placement_study_smt{kind="gate"}"#),
            Some(0.0)
        );
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn a_physical_gate_writes_its_penalty_interval_and_control() {
        let mut result = gate_fixture();
        result.verdict = Verdict::Physical;
        result.penalty = Some(0.37);
        result.penalty_of_medians = Some(0.36);
        result.ci95 = Some(Interval {
            low: 0.31,
            high: 0.43,
        });
        result.clock = Some(ClockKind::CoreCycles);
        result.baseline = Some(GateBaseline::SeparateCores);
        result.reps = 5;
        result.control = Some(Check::failed(CheckName::Control, "ran in parallel"));
        let text = gate(&result);
        assert_eq!(
            value(&text, "placement_study_gate_penalty_ratio"),
            Some(0.37)
        );
        assert_eq!(
            value(&text, "placement_study_gate_penalty_interval_low_ratio"),
            Some(0.31)
        );
        assert_eq!(
            value(&text, "placement_study_gate_penalty_interval_high_ratio"),
            Some(0.43)
        );
        assert_eq!(
            value(&text, "placement_study_gate_threshold_ratio"),
            Some(0.15)
        );
        assert_eq!(value(&text, "placement_study_gate_repetitions"), Some(5.0));
        assert!(text.contains(
            r#"placement_study_gate_info{verdict="physical",clock="core-cycles",baseline="separate-cores"} 1"#
        ));
        assert_eq!(
            value(
                &text,
                r#"placement_study_gate_check_status{check="control",status="failed"}"#
            ),
            Some(1.0)
        );
        assert_eq!(
            value(
                &text,
                r#"placement_study_gate_check_status{check="control",status="passed"}"#
            ),
            Some(0.0)
        );
    }

    #[test]
    fn a_gate_file_from_before_host_and_topology_were_saved() {
        let mut json: serde_json::Value =
            serde_json::from_str(include_str!("../../fixtures/results/gate-vm-no-smt.json"))
                .unwrap();
        let fields = json.as_object_mut().unwrap();
        for field in ["host", "started_unix", "model", "topology", "environment"] {
            fields.remove(field).unwrap();
        }
        let old = match fixture("old.json", &json.to_string()) {
            SavedDocument::Gate(result) => result,
            other => panic!("not a gate document: {other:?}"),
        };
        let text = gate(&old);
        assert!(text.contains(
            r#"placement_study_info{kind="gate",version="0.1.0",host="",model="",kernel="",hypervisor="KVMKVMKVM"} 1"#
        ));
        assert!(!has_family(&text, "placement_study_start_time_seconds"));
        assert!(!has_family(&text, "placement_study_cpus"));
        assert_eq!(
            value(&text, r#"placement_study_complete{kind="gate"}"#),
            Some(1.0)
        );
    }

    #[test]
    fn a_run_marks_what_may_not_be_quoted() {
        let json = include_str!("../../fixtures/results/run-vm-skip-gate.json");
        let text = document(&fixture("run-vm-skip-gate.json", json));
        assert_eq!(value(&text, "placement_study_run_valid"), Some(1.0));
        assert_eq!(value(&text, "placement_study_run_gated"), Some(0.0));
        assert_eq!(
            value(&text, "placement_study_run_stopped_at_gate"),
            Some(0.0)
        );
        assert_eq!(
            value(
                &text,
                r#"placement_study_run_gate_verdict{verdict="not-run"}"#
            ),
            Some(1.0)
        );
        assert_eq!(
            value(
                &text,
                r#"placement_study_run_arm_quotable{arm="one-per-core"}"#
            ),
            Some(1.0)
        );
        assert_eq!(
            value(&text, r#"placement_study_run_arm_quotable{arm="unpinned"}"#),
            Some(0.0)
        );
        // TSC ticks per byte over the calibrated TSC frequency.
        let by_arm = r#"{arm="one-per-core"}"#;
        let seconds = value(
            &text,
            &format!("placement_study_run_arm_wall_seconds_per_byte{by_arm}"),
        )
        .unwrap();
        assert!((seconds - 0.47932248178811065 / 2599812481.772169).abs() < 1e-20);
        assert_eq!(
            value(
                &text,
                &format!("placement_study_run_arm_wall_repetitions{by_arm}")
            ),
            Some(2.0)
        );
        assert!(
            value(
                &text,
                &format!("placement_study_run_arm_wall_cv_ratio{by_arm}")
            )
            .is_some()
        );
        // No PMU: no cycles, and no name whose unit a label changes.
        assert!(!has_family(
            &text,
            "placement_study_run_arm_cycles_per_byte"
        ));
        assert!(!text.contains("clock=\"tsc\"}"));
        assert_eq!(
            value(
                &text,
                r#"placement_study_run_arm_change_vs_one_per_core_ratio{arm="one-per-core"}"#
            ),
            Some(0.0)
        );
        assert_eq!(
            value(
                &text,
                r#"placement_study_run_check_status{check="cv-bar unpinned",status="failed"}"#
            ),
            Some(1.0)
        );
        assert_eq!(
            value(
                &text,
                r#"placement_study_run_check_status{check="invariance",status="unavailable"}"#
            ),
            Some(1.0)
        );
        assert!(!has_family(
            &text,
            "placement_study_run_invariance_spread_ratio"
        ));
        assert!(text.contains(
            r#"placement_study_run_info{clock="tsc",workload="mul",gate_verdict="not-run"} 1"#
        ));
    }

    #[test]
    fn a_run_on_core_cycles_writes_cycles_per_byte() {
        let json = include_str!("../../fixtures/results/run-vm-skip-gate.json");
        let SavedDocument::Run(mut result) = fixture("run-vm-skip-gate.json", json) else {
            panic!("not a run document");
        };
        result.setup.clock = ClockKind::CoreCycles;
        for arm in &mut result.arms {
            arm.clock = ClockKind::CoreCycles;
            arm.cost = Some(Spread {
                median: 0.625,
                cv: 0.002,
                min: 0.624,
                max: 0.626,
                reps: 2,
            });
        }
        let text = run(&result);
        let by_arm = r#"{arm="same-cpu"}"#;
        for (metric, expected) in [
            ("placement_study_run_arm_cycles_per_byte", 0.625),
            ("placement_study_run_arm_cycles_cv_ratio", 0.002),
            ("placement_study_run_arm_cycles_repetitions", 2.0),
        ] {
            assert_eq!(value(&text, &format!("{metric}{by_arm}")), Some(expected));
        }
        // The wall time per byte is there beside the cycles.
        assert!(
            value(
                &text,
                &format!("placement_study_run_arm_wall_seconds_per_byte{by_arm}")
            )
            .is_some()
        );
        assert!(text.contains(r#"placement_study_run_info{clock="core-cycles","#));
    }

    #[test]
    fn a_saved_gate_that_a_run_wrote_is_exported_as_that_run() {
        let mut gate = gate_fixture();
        assert!(document(&SavedDocument::Gate(Box::new(gate.clone()))).contains(r#"kind="gate""#));
        gate.run_stopped_at_gate = true;
        let text = document(&SavedDocument::Gate(Box::new(gate.clone())));
        assert_eq!(text, run_stopped_at_gate(&gate));
        assert!(!text.contains(r#"kind="gate""#));
    }

    #[test]
    fn a_run_stopped_at_its_gate_writes_run_metrics_without_arms() {
        let mut gate = gate_fixture();
        let text = run_stopped_at_gate(&gate);
        assert!(text.contains(
            r#"placement_study_info{kind="run",version="0.1.0",host="vm",model="Intel(R) Xeon(R) Processor",kernel="6.18.44-fc-v1147",hypervisor="KVMKVMKVM"} 1"#
        ));
        assert_eq!(
            value(&text, r#"placement_study_complete{kind="run"}"#),
            Some(1.0)
        );
        assert_eq!(
            value(&text, r#"placement_study_smt{kind="run"}"#),
            Some(0.0)
        );
        assert_eq!(value(&text, "placement_study_run_gated"), Some(0.0));
        assert_eq!(
            value(&text, "placement_study_run_stopped_at_gate"),
            Some(1.0)
        );
        assert_eq!(
            value(
                &text,
                r#"placement_study_run_gate_verdict{verdict="no-smt"}"#
            ),
            Some(1.0)
        );
        assert_eq!(
            value(
                &text,
                r#"placement_study_run_gate_verdict{verdict="not-run"}"#
            ),
            Some(0.0)
        );
        assert!(
            text.contains(
                r#"placement_study_run_info{clock="",workload="",gate_verdict="no-smt"} 1"#
            )
        );
        assert!(!text.contains("placement_study_gate_"));
        assert!(!text.contains("kind=\"gate\""));
        for absent in [
            "placement_study_run_valid",
            "placement_study_run_workers",
            "placement_study_run_arm_",
            "placement_study_run_check_status",
            "placement_study_run_excluded_repetitions",
        ] {
            assert!(!text.contains(absent), "{absent} in {text}");
        }

        // A signal during the gate: inconclusive, and the run incomplete.
        gate.verdict = Verdict::Inconclusive;
        gate.complete = false;
        let text = run_stopped_at_gate(&gate);
        assert_eq!(
            value(&text, r#"placement_study_complete{kind="run"}"#),
            Some(0.0)
        );
        assert_eq!(
            value(
                &text,
                r#"placement_study_run_gate_verdict{verdict="inconclusive"}"#
            ),
            Some(1.0)
        );
    }

    #[test]
    fn every_run_writes_its_header_with_one_help() {
        let json = include_str!("../../fixtures/results/run-vm-skip-gate.json");
        let measured = document(&fixture("run-vm-skip-gate.json", json));
        let stopped = run_stopped_at_gate(&gate_fixture());
        let help = |text: &str| -> BTreeSet<String> {
            text.lines()
                .filter(|line| line.starts_with("# "))
                .map(str::to_string)
                .collect()
        };
        let (measured, stopped) = (help(&measured), help(&stopped));
        assert!(
            stopped.is_subset(&measured),
            "{:?}",
            stopped.difference(&measured).collect::<Vec<_>>()
        );
    }

    #[test]
    fn pairs_count_hidden_siblings() {
        let json = include_str!("../../fixtures/results/pairs-guest-hidden-siblings.json");
        let text = document(&fixture("pairs-guest-hidden-siblings.json", json));
        assert_eq!(
            value(&text, r#"placement_study_pairs_verdict{verdict="differ"}"#),
            Some(1.0)
        );
        assert_eq!(
            value(
                &text,
                r#"placement_study_pairs_sibling_pairs{relation="hidden"}"#
            ),
            Some(1.0)
        );
        assert_eq!(
            value(
                &text,
                r#"placement_study_pairs_sibling_pairs{relation="agreed"}"#
            ),
            Some(0.0)
        );
        assert_eq!(value(&text, "placement_study_pairs_maps_equal"), Some(0.0));
        assert_eq!(value(&text, "placement_study_pairs_comparisons"), Some(1.0));
        assert!(text.contains(r#"search="all-pairs""#));
    }

    #[test]
    fn hybrid_speeds_ceiling_and_schemes() {
        let json = include_str!("../../fixtures/results/hybrid-guest-slow-second-core.json");
        let text = document(&fixture("hybrid-guest-slow-second-core.json", json));
        let speed = value(
            &text,
            r#"placement_study_hybrid_class_speed_ratio{class="measured 1"}"#,
        )
        .unwrap();
        assert!((speed - 0.4786).abs() < 1e-4);
        assert!(
            value(
                &text,
                r#"placement_study_hybrid_class_speed_interval_low_ratio{class="measured 1"}"#
            )
            .is_some()
        );
        let ceiling = value(&text, "placement_study_hybrid_ceiling_speedup_ratio").unwrap();
        assert!((ceiling - 1.4786).abs() < 1e-4);
        let wall = value(
            &text,
            r#"placement_study_hybrid_class_wall_seconds{class="measured 0"}"#,
        )
        .unwrap();
        assert!((wall - 0.090028921).abs() < 1e-12);
        assert_eq!(
            value(
                &text,
                r#"placement_study_hybrid_scheme_class_items_ratio{arm="stealing-pinned",class="measured 0"}"#
            ),
            Some(0.69)
        );
        assert_eq!(
            value(
                &text,
                r#"placement_study_hybrid_scheme_quotable{arm="stealing-pinned"}"#
            ),
            Some(0.0)
        );
        // Every median with its spread and repetitions.
        let by_arm = r#"{arm="static-pinned"}"#;
        let idle = value(
            &text,
            &format!("placement_study_hybrid_scheme_idle_ratio{by_arm}"),
        )
        .unwrap();
        assert!((idle - 0.2672511739687657).abs() < 1e-15);
        assert!(
            value(
                &text,
                &format!("placement_study_hybrid_scheme_idle_cv_ratio{by_arm}")
            )
            .is_some()
        );
        assert_eq!(
            value(
                &text,
                &format!("placement_study_hybrid_scheme_idle_repetitions{by_arm}")
            ),
            Some(11.0)
        );
        assert_eq!(
            value(
                &text,
                r#"placement_study_hybrid_scheme_class_idle_repetitions{arm="static-pinned",class="measured 1"}"#
            ),
            Some(11.0)
        );
        assert_eq!(
            value(&text, r#"placement_study_hybrid_verdict{verdict="differ"}"#),
            Some(1.0)
        );
        assert_eq!(value(&text, "placement_study_hybrid_valid"), Some(1.0));
    }

    #[test]
    fn observe_residency_and_reconciliation() {
        let json = include_str!("../../fixtures/results/observe-pipeline-vm.json");
        let text = document(&fixture("observe-pipeline-vm.json", json));
        let residency = value(
            &text,
            r#"placement_study_observe_class_residency_seconds{class="uniform"}"#,
        )
        .unwrap();
        assert!((residency - 0.047826594).abs() < 1e-9);
        assert_eq!(
            value(&text, "placement_study_observe_reconciled"),
            Some(1.0)
        );
        assert_eq!(
            value(&text, "placement_study_observe_command_exit_status"),
            Some(3.0)
        );
        assert_eq!(value(&text, "placement_study_observe_threads"), Some(4.0));
        assert_eq!(
            value(&text, "placement_study_observe_migrations"),
            Some(2.0)
        );
        assert!(!has_family(
            &text,
            "placement_study_observe_class_busy_frequency_hertz"
        ));
        assert!(text.contains(r#"placement_study_observe_info{mode="command"} 1"#));
    }

    #[test]
    fn label_values_and_help_are_escaped() {
        let mut m = Metrics::default();
        m.gauge(
            "placement_study_x",
            "a \\ and a\nnewline",
            &[("model", "a\\b\"c\nd")],
            1.0,
        );
        assert_eq!(
            m.render(),
            "# HELP placement_study_x a \\\\ and a\\nnewline\n\
             # TYPE placement_study_x gauge\n\
             placement_study_x{model=\"a\\\\b\\\"c\\nd\"} 1\n"
        );
    }

    #[test]
    fn unknown_values_are_left_out_and_families_stay_together() {
        let mut m = Metrics::default();
        for value in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            m.gauge("placement_study_x", "x", &[], value);
        }
        m.gauge("placement_study_y", "y", &[], None);
        assert_eq!(m.render(), "");
        let mut m = Metrics::default();
        m.gauge("placement_study_a", "a", &[("arm", "one")], 1.0);
        m.gauge("placement_study_b", "b", &[("arm", "one")], 2.0);
        m.gauge("placement_study_a", "a", &[("arm", "two")], 0.5);
        let lines: Vec<String> = m.render().lines().map(str::to_string).collect();
        assert_eq!(
            lines,
            [
                "# HELP placement_study_a a",
                "# TYPE placement_study_a gauge",
                r#"placement_study_a{arm="one"} 1"#,
                r#"placement_study_a{arm="two"} 0.5"#,
                "# HELP placement_study_b b",
                "# TYPE placement_study_b gauge",
                r#"placement_study_b{arm="one"} 2"#,
            ]
        );
    }
}
