//! The gate's decision: does putting two workers on one core's two hardware
//! threads cost more than putting them on two separate cores? If it does,
//! the affinity mask moves something physical; if it does not, the "cores"
//! this host shows are not what they claim (typically vCPUs whose placement
//! on host cores the guest cannot see).

use crate::judge::checks::{Check, CheckName, CheckStatus, excluded_reps};
use crate::judge::cost::{rep_cost, worker_cost_per_byte};
use crate::judge::stats::{
    median, median_ratio, penalty as penalty_of_medians, penalty_centre, penalty_ci95, range_ratio,
};
use crate::measure::{ClockKind, RepSample};
use crate::plan::Arm;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The interval an [`Estimate`] carries (defined with the statistics).
pub use crate::judge::stats::Interval;

/// What the gate concluded. Each verdict has its own exit code (see
/// `exit.rs`): the interface scripts use (`placement-study gate -q &&
/// run-the-study`), so they never change.
#[derive(
    Serialize,
    Deserialize,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    strum::IntoStaticStr,
    strum::VariantArray,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Verdict {
    /// Siblings cost at least the threshold more: placement is physical.
    Physical,
    /// Below the threshold: the affinity mask moved nothing physical.
    Virtual,
    /// No sibling pair among the allowed CPUs: nothing to measure. Distinct
    /// from `Virtual`: a bare-metal host with SMT off is not a VM.
    NoSmt,
    /// The evidence is weak: batches disagreed or none agreed within the
    /// most batches allowed, or the control failed every time it was
    /// measured. More repetitions or a quieter host are needed.
    Inconclusive,
}

impl Verdict {
    /// The verdict word, as `-q` prints it and JSON spells it.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The word for a gate that did not run (`run --skip-gate`), where a
    /// verdict word would stand: in the fleet report and in the metrics.
    pub fn word_of(verdict: Option<Verdict>) -> &'static str {
        verdict.map_or("not-run", Verdict::as_str)
    }
}

/// How a study spreads its evidence in time: the gate, each `pairs`
/// comparison and `hybrid`'s class verdict alike.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Batching {
    /// Batches that must agree for a verdict (the gate and `pairs`: land
    /// on one side of the threshold, with none on the other; `hybrid`:
    /// group the CPUs alike).
    pub batches: usize,
    /// Batches after which a verdict without that agreement is
    /// inconclusive.
    pub max_batches: usize,
    /// The pause between batches: a burst of host load shorter than it
    /// cannot reach two batches.
    pub gap: Duration,
}

/// When the gate may stop, and which side of what it must land on. `pairs`
/// decides each of its comparisons by the same rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GateRule {
    /// The penalty (a fraction; 0.15 by default) at or above which sharing a
    /// core counts as physical. Real SMT siblings on a port-bound kernel cost
    /// tens of per cent; vCPUs that do not share a host core cost about zero.
    pub threshold: f64,
    /// Rounds of a batch before it may decide a side. Its interval needs
    /// [`crate::judge::stats::MIN_MEDIAN_INTERVAL_VALUES`] kept rounds.
    pub min_reps: usize,
    /// Rounds after which a batch whose interval still straddles the
    /// threshold is closed as straddling.
    pub max_reps: usize,
    /// How many batches must agree, at most how many, how far apart.
    pub batching: Batching,
}

/// The penalty of a treated arm over its baseline, with its interval: the
/// gate's siblings over separate cores (or one worker alone), a `pairs`
/// comparison's probe beside its set over the probe alone.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, schemars::JsonSchema)]
pub struct Estimate {
    /// The median of the per-round ratios treatedᵢ / baselineᵢ, minus 1:
    /// 0.37 is 37 % more. (Before 0.2: the geometric mean; see `mean_based`.)
    pub penalty: f64,
    /// median(treated) / median(baseline) − 1, for comparison; with noisy
    /// repetitions it can differ from `penalty`.
    pub penalty_of_medians: f64,
    /// The distribution-free 95 % interval of `penalty` (see
    /// [`median_ratio`]).
    pub ci95: Interval,
    /// Rounds it comes from (noisy and excluded ones left out).
    pub reps: usize,
    /// The estimate before 0.2, from the same rounds, kept for one release
    /// so the two can be compared; absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_based: Option<MeanBased>,
}

/// The mean-based estimate: the geometric mean of the paired ratios with
/// its t-interval ([`penalty_ci95`]). A burst of host load that covers
/// every round moves it as far as the median, but a few wild rounds move
/// it too, where they move the median not at all.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, schemars::JsonSchema)]
pub struct MeanBased {
    /// Geometric mean of the per-round ratios, minus 1.
    pub penalty: f64,
    /// Its 95 % t-interval.
    pub ci95: Interval,
}

/// The penalty of `treated` over `baseline` (costs per round, aligned by
/// repetition) with its 95 % interval; `None` until there are enough
/// rounds for the interval.
pub fn estimate(treated: &[f64], baseline: &[f64]) -> Option<Estimate> {
    let (penalty, ci95) = median_ratio(treated, baseline)?;
    Some(Estimate {
        penalty,
        penalty_of_medians: penalty_of_medians(treated, baseline)?,
        ci95,
        reps: treated.len(),
        mean_based: Some(MeanBased {
            penalty: penalty_centre(treated, baseline)?,
            ci95: penalty_ci95(treated, baseline)?,
        }),
    })
}

/// Costs of two interleaved arms aligned by repetition, for the paired
/// interval: element i of each ran back to back. Warm-ups are skipped, and a
/// repetition [`excluded_reps`] lists drops its partner too, so drift stays
/// matched; the exclusion itself is reported by `excluded_reps`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairedCosts {
    /// The arm whose penalty is measured (siblings).
    pub treated: Vec<f64>,
    /// The arm it is measured against (separate cores).
    pub baseline: Vec<f64>,
    /// The repetition number of each pair.
    pub reps: Vec<usize>,
    /// How far apart each pair's treated workers came out: their highest
    /// cost over their lowest, minus 1 (0 for one worker; a pair without
    /// an entry was not looked at). See [`UNEVEN_WORKERS`].
    pub treated_spread: Vec<f64>,
    /// The same for the baseline arm's workers.
    pub baseline_spread: Vec<f64>,
}

impl PairedCosts {
    /// The treated and baseline costs of the rounds `keep` accepts.
    pub fn select(&self, keep: impl Fn(&usize) -> bool) -> (Vec<f64>, Vec<f64>) {
        self.reps
            .iter()
            .zip(self.treated.iter().zip(&self.baseline))
            .filter(|(rep, _)| keep(rep))
            .map(|(_, (t, b))| (*t, *b))
            .unzip()
    }
}

/// How much further apart (a fraction) one arm's workers may come out in a
/// round than they typically do in its batch. Workers on one core's two
/// hardware threads share it evenly, whether SMT slows them or not; workers
/// on two host CPUs of unequal speed (one with a steady neighbour) come out
/// apart in every round, which is the host's shape, not noise. A burst of
/// load on one worker's CPU slows that worker alone, in the rounds it
/// lasts: a round whose workers came out this much further apart than the
/// batch's typical round saw the host, not the placement.
pub const UNEVEN_WORKERS: f64 = 0.2;

/// How far apart `rep`'s workers' costs on `clock` are: highest over
/// lowest, minus 1; 0 with fewer than two costs.
fn worker_spread(rep: &RepSample, clock: ClockKind) -> f64 {
    let costs: Vec<f64> = rep
        .workers
        .iter()
        .filter_map(|w| worker_cost_per_byte(w, clock))
        .collect();
    range_ratio(&costs).unwrap_or(0.0)
}

/// Pairs the costs (on `clock`) of `treated_arm` and `baseline_arm` in
/// `reps` by repetition number; see [`PairedCosts`].
pub fn paired_costs(
    reps: &[RepSample],
    treated_arm: Arm,
    baseline_arm: Arm,
    clock: ClockKind,
) -> PairedCosts {
    paired_by(reps, (treated_arm, baseline_arm), clock, |t| {
        rep_cost(t, clock)
    })
}

/// The gate's comparisons, one per sibling worker: the worker on each
/// sibling CPU of `siblings` (the `siblings` arm), against one worker
/// alone on the same CPU (the `alone` arm on the first, `alone-second` on
/// the second), paired by round.
///
/// Sharing a core slows both of its hardware threads; a neighbour (another
/// tenant on one vCPU's host CPU, a slower core) slows the CPU it sits on,
/// whether or not the other works. Set against its own CPU alone, a worker
/// on a steadily slower CPU pays nothing for being together, so only what
/// both workers pay reads as sharing. The siblings' mean against one CPU
/// alone read a neighbour's +44 % to +89 % as a penalty.
pub fn worker_paired_costs(
    reps: &[RepSample],
    siblings: [u32; 2],
    clock: ClockKind,
) -> Vec<PairedCosts> {
    [(siblings[0], Arm::Alone), (siblings[1], Arm::AloneSecond)]
        .into_iter()
        .map(|(cpu, alone)| {
            paired_by(reps, (Arm::Siblings, alone), clock, |together| {
                together
                    .workers
                    .iter()
                    .find(|w| w.pinned_cpu == Some(cpu))
                    .and_then(|w| worker_cost_per_byte(w, clock))
            })
        })
        .collect()
}

/// Pairs `treated_cost` of each `treated` repetition with the baseline's
/// cost in the same round; see [`PairedCosts`].
fn paired_by(
    reps: &[RepSample],
    (treated_arm, baseline_arm): (Arm, Arm),
    clock: ClockKind,
    treated_cost: impl Fn(&RepSample) -> Option<f64>,
) -> PairedCosts {
    let excluded = excluded_reps(reps);
    let measured = |arm: Arm, index: usize| {
        let excluded = excluded.iter().any(|e| e.covers(arm, index));
        reps.iter()
            .find(|rep| rep.arm == arm && rep.rep == index && !rep.warmup && !excluded)
    };
    let mut paired = PairedCosts::default();
    let treated_reps = reps
        .iter()
        .filter(|rep| rep.arm == treated_arm && !rep.warmup);
    for index in treated_reps.map(|rep| rep.rep) {
        let (Some(t), Some(b)) = (measured(treated_arm, index), measured(baseline_arm, index))
        else {
            continue;
        };
        if let (Some(t_cost), Some(b_cost)) = (treated_cost(t), rep_cost(b, clock)) {
            paired.treated.push(t_cost);
            paired.baseline.push(b_cost);
            paired.reps.push(index);
            paired.treated_spread.push(worker_spread(t, clock));
            paired.baseline_spread.push(worker_spread(b, clock));
        }
    }
    paired
}

/// One sibling worker's penalty over its own CPU alone, from every kept
/// round of every batch.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, schemars::JsonSchema)]
pub struct WorkerPenalty {
    /// The sibling CPU the worker ran on.
    pub cpu: u32,
    /// Its penalty together over alone there; `None` with too few rounds.
    pub estimate: Option<Estimate>,
}

/// How much slower (a fraction of cost) one sibling CPU may run alone than
/// the other before the view names it: a quiet host's two CPUs agree within
/// a few per cent; a neighbour on one vCPU's host CPU, or a cap on it, makes
/// it tens of per cent slower.
pub const SLOW_CPU: f64 = 0.1;

/// One sibling CPU ran steadily slower alone than the other, in every
/// batch: evidence about the host (a neighbour on its host CPU, a capped
/// vCPU, a slower core), never a cost of sharing.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, schemars::JsonSchema)]
pub struct SlowCpu {
    /// The slower CPU.
    pub cpu: u32,
    /// The CPU it is compared with.
    pub other: u32,
    /// The median of the per-round cost ratios, slower over other, alone,
    /// minus 1: 0.48 is 48 % more time for the same work.
    pub slower: f64,
    /// Its distribution-free 95 % interval.
    pub ci95: Interval,
    /// Kept rounds it comes from.
    pub rounds: usize,
    /// Batches, every one of which saw it beyond [`SLOW_CPU`].
    pub batches: usize,
}

/// The sibling CPU that ran slower alone than the other by more than
/// [`SLOW_CPU`], with the whole interval beyond it and every batch's own
/// median beyond it too ("for the whole gate"); `None` when neither did.
/// `kept` says which rounds the batches kept, `batches` their rounds.
pub fn slow_cpu(
    reps: &[RepSample],
    siblings: [u32; 2],
    clock: ClockKind,
    batches: &[Vec<usize>],
) -> Option<SlowCpu> {
    let paired = paired_by(reps, (Arm::AloneSecond, Arm::Alone), clock, |r| {
        rep_cost(r, clock)
    });
    let in_batches = |rep: &usize| batches.iter().any(|b| b.contains(rep));
    let costs = |keep: &dyn Fn(&usize) -> bool| paired.select(keep);
    let (second, first) = costs(&in_batches);
    [
        (siblings[1], siblings[0], &second, &first, true),
        (siblings[0], siblings[1], &first, &second, false),
    ]
    .into_iter()
    .find_map(|(cpu, other, slow, fast, second_slow)| {
        let (slower, ci95) = median_ratio(slow, fast)?;
        let every_batch = batches.iter().all(|batch| {
            let (s, f) = costs(&|rep| batch.contains(rep));
            let (s, f) = if second_slow { (s, f) } else { (f, s) };
            median_ratio(&s, &f).is_none_or(|(ratio, _)| ratio > SLOW_CPU)
        });
        (ci95.low > SLOW_CPU && every_batch).then_some(SlowCpu {
            cpu,
            other,
            slower,
            ci95,
            rounds: slow.len(),
            batches: batches.len(),
        })
    })
}

/// The accepted ratio of same-CPU to alone cost for the control.
///
/// Two CPU-bound threads pinned to one logical CPU are time-sliced: each
/// gets half of it, so each one's kernel takes about twice the wall time.
/// The first to finish may be up to a scheduler slice early, and switching
/// costs a little, so a working control lands near 1.8–2.1 on a quiet host;
/// on a noisy one (seen: 1.54–1.93 in QEMU TCG guests sharing a 2-CPU host)
/// it spreads further. Threads that were not pinned at all run in parallel
/// on two CPUs and land near 1.0. The bounds sit log-symmetrically around 2
/// (2 / 1.4 ≈ 2.8 / 2), the lower one at the geometric midpoint between
/// parallel (1×) and time-sliced (2×), so noise alone does not fail a working
/// control and a broken one cannot pass. Above 2.8, something else shared
/// that CPU (a third runnable thread, or the two buffers evicting each
/// other), and the control measured that.
pub const CONTROL_RATIO: (f64, f64) = (1.4, 2.8);

/// Times a control is measured at most, the first included, before a
/// failed one makes the verdict inconclusive: a burst of host load on the
/// control's CPU fails it as surely as broken pinning does, and does not
/// last, so a failure is measured again after a pause.
pub const CONTROL_ATTEMPTS: usize = 3;

/// The control arm: both workers pinned to one logical CPU must cost about
/// twice what one worker costs alone on that CPU, or pinning is not working
/// at all and neither verdict means anything.
///
/// The baseline is one worker alone, not the separate pair: in a VM the
/// "separate" guest cores may share one host CPU (that is what the gate is
/// there to find), and then the separate pair costs twice as much too.
///
/// The gate's verdict once everything is in: what the repetitions
/// `decided`, unless pinning did not work (the same-CPU `control` failed:
/// neither verdict means anything then) or a stop signal cut the gate short
/// (`stopped`): both leave it inconclusive.
pub fn final_verdict(decided: Verdict, control: &Check, stopped: bool) -> Verdict {
    if stopped || control.status == CheckStatus::Failed {
        Verdict::Inconclusive
    } else {
        decided
    }
}

/// Pass costs on the tick clock (`rep_cost(rep, tick_clock)`: TSC or
/// generic-timer ticks, recorded in every sample whatever the gate's clock),
/// named by `tick_clock`: a time-sliced thread's own cycle counter stops
/// while it waits, so in core cycles the control costs the same as separate
/// CPUs whether pinning works or not. Only a wall clock sees the wait.
pub fn control_check(same_cpu: &[f64], alone: &[f64], tick_clock: ClockKind) -> Check {
    const NAME: CheckName = CheckName::Control;
    if same_cpu.is_empty() || alone.is_empty() {
        return Check::unavailable(
            NAME,
            format!(
                "no control to compare: {} same-CPU and {} alone repetitions kept (the rest \
                 were left out: the exclusions below say why)",
                same_cpu.len(),
                alone.len()
            ),
        );
    }
    let (same, apart) = (median(same_cpu), median(alone));
    if !(same.is_finite() && apart.is_finite() && apart > 0.0) {
        return Check::unavailable(
            NAME,
            format!("no usable {} per byte in the control", tick_clock.unit()),
        );
    }
    let ratio = same / apart;
    let (low, high) = CONTROL_RATIO;
    let finding = format!(
        "both workers on one CPU cost {ratio:.2}× what one worker costs alone there \
         ({} per byte, medians of {} and {} repetitions; expected about 2×, \
         accepted {low}–{high})",
        tick_clock.unit(),
        same_cpu.len(),
        alone.len()
    );
    if ratio < low {
        Check::failed(
            NAME,
            format!("pinning is not working at all: {finding}: they ran in parallel"),
        )
    } else if ratio > high {
        Check::failed(
            NAME,
            format!(
                "the control CPU was not the workers' alone: {finding}: \
                 something else ran there or their buffers evicted each other"
            ),
        )
    } else {
        Check::passed(NAME, finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::checks::CheckStatus;

    #[test]
    fn control_accepts_about_twice_the_cost() {
        assert_eq!(
            control_check(&[2.0, 2.1, 1.9], &[1.0, 1.0, 1.0], ClockKind::Tsc).status,
            CheckStatus::Passed
        );
        let parallel = control_check(&[1.0, 1.0], &[1.0, 1.0], ClockKind::Tsc);
        assert_eq!(parallel.status, CheckStatus::Failed);
        assert!(
            parallel
                .detail
                .starts_with("pinning is not working at all: both workers on one CPU cost 1.00×")
        );
        assert_eq!(
            control_check(&[3.0], &[1.0], ClockKind::Tsc).status,
            CheckStatus::Failed
        );
        assert_eq!(
            control_check(&[], &[1.0], ClockKind::Tsc).status,
            CheckStatus::Unavailable
        );
        assert_eq!(
            control_check(&[1.0], &[0.0], ClockKind::Tsc).status,
            CheckStatus::Unavailable
        );
    }

    #[test]
    fn a_failed_control_or_a_stop_leaves_any_verdict_inconclusive() {
        let passed = Check::passed(CheckName::Control, "");
        let failed = Check::failed(CheckName::Control, "");
        assert_eq!(
            final_verdict(Verdict::Physical, &passed, false),
            Verdict::Physical
        );
        assert_eq!(
            final_verdict(Verdict::Virtual, &failed, false),
            Verdict::Inconclusive
        );
        assert_eq!(
            final_verdict(Verdict::Physical, &passed, true),
            Verdict::Inconclusive
        );
    }
}
