//! The sentence a `gate` document keeps, made from what the study
//! decided (the view shows it first; scripts read it from the JSON).

use crate::judge::batches::Batch;
use crate::judge::batches::Side;
use crate::judge::checks::Check;
use crate::judge::checks::CheckStatus;
use crate::judge::gate::Estimate;
use crate::judge::gate::Verdict;
use crate::judge::gate::WorkerPenalty;
use crate::measure::stop::StopSignal;
use crate::plan::GateBaseline;
use crate::units::Fixed;
use std::fmt::Write;

/// The sentence a sysadmin reads first, saved with the gate: the measured
/// penalty with its interval and what the (final) verdict means, and why a
/// failed same-CPU `control` made it inconclusive.
pub fn sentence(
    verdict: Verdict,
    baseline: GateBaseline,
    estimate: Option<&Estimate>,
    workers: &[WorkerPenalty],
    batches: &[Batch],
    threshold: f64,
    control: &Check,
) -> String {
    let mut sentence = measured_sentence(verdict, baseline, estimate, workers, batches, threshold);
    if control.status == CheckStatus::Failed {
        let _ = write!(
            sentence,
            "; the same-CPU control failed: {}",
            control.detail
        );
    }
    sentence
}

/// The sentence of a gate a stop signal ended after `reps` of at most
/// `max_reps` repetitions.
pub fn stopped_sentence(signal: StopSignal, reps: usize, max_reps: usize) -> String {
    format!(
        "stopped by {} after {reps} repetitions of {max_reps}: no verdict",
        signal.name()
    )
}

/// The sentence of a gate that found no sibling pair to measure.
pub fn no_smt_sentence(reason: &str) -> String {
    format!("no sibling pair to measure: {reason}")
}

/// The sentence of a gate on a machine whose cores are unknown.
pub fn unknown_structure_sentence(reason: &str) -> String {
    format!(
        "no sibling pair can be chosen: the machine's structure is unknown ({reason}); \
         probe a complete snapshot or the live system"
    )
}

/// The penalty with its interval, and what the verdict means.
pub fn measured_sentence(
    verdict: Verdict,
    baseline: GateBaseline,
    estimate: Option<&Estimate>,
    workers: &[WorkerPenalty],
    batches: &[Batch],
    threshold: f64,
) -> String {
    let threshold_pct = format!("{:.0} %", threshold * 100.0);
    let Some(e) = estimate else {
        return format!(
            "no repetitions were measured; threshold {threshold_pct}: {}",
            verdict.as_str()
        );
    };
    let (amount, direction) = if e.penalty >= 0.0 {
        (Fixed(e.penalty * 100.0), "more")
    } else {
        (Fixed(-e.penalty * 100.0), "less")
    };
    let batch_count = format!(
        "{} batch{}",
        batches.len(),
        if batches.len() == 1 { "" } else { "es" }
    );
    let measured = if workers.is_empty() {
        format!(
            "two workers on one core's siblings cost {amount:.1} % [{:.1}, {:.1}] {direction} \
             than {} (median of {} paired rounds in {batch_count}; ratio of medians {:+.1} %); \
             threshold {threshold_pct}",
            Fixed(e.ci95.low * 100.0),
            Fixed(e.ci95.high * 100.0),
            baseline.describe(),
            e.reps,
            Fixed(e.penalty_of_medians * 100.0)
        )
    } else {
        format!(
            "working together on one core's siblings, each worker paid at least {:+.1} % \
             [{:+.1}, {:+.1}] over its own CPU alone ({}; medians of {} paired rounds in \
             {batch_count}); threshold {threshold_pct}",
            Fixed(e.penalty * 100.0),
            Fixed(e.ci95.low * 100.0),
            Fixed(e.ci95.high * 100.0),
            worker_penalties(workers),
            e.reps,
        )
    };
    let sides = |side: Side| batches.iter().any(|b| b.side == Some(side));
    let one_sided_cpu = one_sided(workers, threshold);
    let meaning = match verdict {
        Verdict::Physical => "placement is physical",
        Verdict::Virtual => {
            "placement is virtual: the affinity mask moved nothing physical (typical of a VM, \
             whose sibling map is fiction)"
        }
        Verdict::Inconclusive if one_sided_cpu.is_some() => {
            return format!(
                "{measured}: inconclusive: only the worker on CPU {} paid that much; sharing a \
                 core slows both of its threads, so something on that CPU's side slowed it (a \
                 neighbour, a burst of load); run it again at a quieter moment",
                one_sided_cpu.unwrap_or_default()
            );
        }
        Verdict::Inconclusive if sides(Side::Above) && sides(Side::Below) => {
            "inconclusive: batches measured a pause apart disagree, so the host's load changed \
             under the measurement; run it again at a quieter moment"
        }
        Verdict::Inconclusive if batches.iter().any(|b| b.estimate.is_none()) => {
            "inconclusive: a batch kept too few rounds for an interval, the rest being host \
             noise (see the batches); run it again at a quieter moment, or raise --max-reps"
        }
        Verdict::Inconclusive => {
            "inconclusive: the interval straddles the threshold; raise --max-reps or \
             --max-batches, lengthen --rep-ms, or quiet the machine (stop other load, pin the \
             governor)"
        }
        Verdict::NoSmt => "no-smt",
    };
    format!("{measured}: {meaning}")
}

/// "CPU 0 +1.2 %, CPU 1 +0.8 %": each worker's own penalty.
pub fn worker_penalties(workers: &[WorkerPenalty]) -> String {
    workers
        .iter()
        .map(|w| match &w.estimate {
            Some(e) => format!("CPU {} {:+.1} %", w.cpu, Fixed(e.penalty * 100.0)),
            None => format!("CPU {} too few rounds", w.cpu),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The one CPU whose worker's whole interval cleared `threshold` while
/// another's lay wholly below it: a one-sided slowdown.
pub fn one_sided(workers: &[WorkerPenalty], threshold: f64) -> Option<u32> {
    let above: Vec<u32> = workers
        .iter()
        .filter(|w| w.estimate.as_ref().is_some_and(|e| e.ci95.low >= threshold))
        .map(|w| w.cpu)
        .collect();
    let below = workers
        .iter()
        .any(|w| w.estimate.as_ref().is_some_and(|e| e.ci95.high < threshold));
    match above.as_slice() {
        [cpu] if below => Some(*cpu),
        _ => None,
    }
}
