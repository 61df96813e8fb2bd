//! Evidence spread in time: a penalty decided batch by batch, so that one
//! burst of load on the host cannot decide it.
//!
//! A gate's repetitions used to last about a second in all. One burst of
//! load on the host during that second (another tenant, or the
//! hypervisor's own threads) slowed every repetition of one arm alike, and
//! a t-interval over them saw a steady penalty, not noise: a 1-core guest
//! whose two threads ran on separate host CPUs was once called physical at
//! +46 %. So a comparison (the gate's, or each of `pairs`') measures its
//! paired rounds in batches, with a pause between them
//! ([`Batching::gap`]), and:
//!
//! * a round whose baseline cost is far off its batch's median
//!   ([`NOISY_BASELINE`]) is host noise: flagged, shown, and kept out of
//!   every estimate (the baseline is the arm that should not change, so a
//!   baseline that did saw the host, not the placement); so is a round in
//!   which one arm's workers came out much further apart than in the
//!   batch's typical round ([`crate::judge::gate::UNEVEN_WORKERS`]: a burst
//!   on one worker's CPU slows that worker alone, where sharing a core
//!   slows both);
//! * each batch decides a side of the threshold on its own: the
//!   distribution-free interval of its median ratio
//!   ([`crate::judge::stats::median_ratio`]) wholly above or below, or it
//!   straddles after the most rounds a batch may take;
//! * a verdict needs [`Batching::batches`] batches on one side, none on the
//!   other, and the pooled estimate of every kept round on that side too.
//!   A batch that straddles buys another batch; a batch on the other side
//!   makes the verdict inconclusive at once, since no later batch can make
//!   every batch agree; and after [`Batching::max_batches`] it is
//!   inconclusive too.
//!
//! * the gate has one comparison per sibling worker, each worker together
//!   against its own CPU alone, judged in the same batches: a round that
//!   is noise for one is left out of that one's estimates, and a batch is
//!   above only when
//!   every worker is, below as soon as one is ([`joint_side`]). A steady
//!   neighbour on one CPU (another tenant, a capped vCPU) slows that CPU
//!   alone and together alike, so it cancels in its worker's ratio; it
//!   never passes for a penalty, as it did when both workers' mean was set
//!   against one CPU alone (+44 % to +89 % on a split guest);
//!
//! * [`Evidence::with_prior`]: another method, at another time, already put
//!   the comparison on one side (`pairs --first-pass latency`: a stacked
//!   pair); it counts as one batch on that side, so one measured batch
//!   there, with the pooled estimate, decides. A batch on the other side
//!   still needs the usual agreement: the prior never makes a verdict
//!   inconclusive, nor decides against a measurement.
//!
//! A burst now has to cover nearly every round of two batches a pause
//! apart, on the right CPU, to pass for a penalty; one that covers a single
//! batch costs a batch, or makes the verdict inconclusive, but never wrong.

use crate::judge::gate::{Estimate, GateRule, PairedCosts, UNEVEN_WORKERS, Verdict, estimate};
use crate::judge::stats::{median, range_ratio};
use serde::{Deserialize, Serialize};

pub use crate::judge::gate::Batching;

/// How far (a fraction) a round's baseline cost may be from its batch's
/// median before the round counts as host noise. On a quiet host a
/// baseline repetition strays a few per cent (CVs of 1–3 % in our guests);
/// a burst on the baseline's CPU doubles it.
pub const NOISY_BASELINE: f64 = 0.2;

/// Where a batch's interval lies against the threshold.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// Wholly at or above it (the gate: physical; `pairs`: shares).
    Above,
    /// Wholly below it (virtual; apart).
    Below,
    /// Across it after the most rounds a batch may take.
    Straddles,
}

/// One batch of paired rounds and what it says on its own.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, schemars::JsonSchema)]
pub struct Batch {
    /// 1-based, in the order measured.
    #[schemars(range(min = 1))]
    pub index: usize,
    /// The repetition numbers of its rounds.
    pub rounds: Vec<usize>,
    /// Rounds whose baseline was more than [`NOISY_BASELINE`] off the
    /// batch's median, or one of whose arms had its workers much further
    /// apart than usual: host noise, kept out of every estimate (with
    /// several comparisons, each one's own in [`WorkerBatch::noisy_rounds`]
    /// is kept out of its estimates; these are all of them).
    pub noisy_rounds: Vec<usize>,
    /// The median baseline cost of its kept rounds: how the host's speed
    /// moved between batches.
    pub baseline_median: Option<f64>,
    /// Its own estimate, from its kept rounds.
    pub estimate: Option<Estimate>,
    /// Its side of the threshold; `None` while it is still being measured
    /// (saved so only when a stop signal ended it). With several
    /// comparisons (the gate's, one per worker), see [`joint_side`].
    pub side: Option<Side>,
    /// Each comparison's own reading of the batch, when there are several
    /// (the gate: one per sibling worker, against its own CPU alone);
    /// empty with one (`pairs`) and in older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers: Vec<WorkerBatch>,
}

/// One comparison's reading of a batch: the gate's worker on one sibling,
/// together against its CPU alone.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, schemars::JsonSchema)]
pub struct WorkerBatch {
    /// The median cost of its baseline (its CPU alone) in the kept rounds.
    pub baseline_median: Option<f64>,
    /// Its estimate from the batch's kept rounds.
    pub estimate: Option<Estimate>,
    /// Its side of the threshold; `None` while undecided.
    pub side: Option<Side>,
    /// The rounds that were host noise for it (its CPU alone far off the
    /// batch's median, or the siblings' workers unusually far apart), left
    /// out of its estimates; the batch's `noisy_rounds` are every worker's.
    pub noisy_rounds: Vec<usize>,
}

/// What to measure next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Another round of the open batch.
    Round,
    /// Pause, then start another batch.
    Batch,
    /// Stop: the verdict is final.
    Decided(Verdict),
}

/// How noisy the host was while a comparison was measured.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, schemars::JsonSchema)]
pub struct HostNoise {
    /// The batches' baseline medians, highest over lowest, minus 1: how far
    /// the host's speed moved between batches (`None` from one batch).
    pub baseline_drift: Option<f64>,
    /// Rounds flagged as host noise.
    pub noisy_rounds: usize,
    /// Rounds measured in all batches.
    pub rounds: usize,
}

/// A baseline drift between batches above which the text view names the
/// noise: a quiet host stays within a few per cent.
pub const HIGH_DRIFT: f64 = 0.1;

/// A share of noisy rounds above which the text view names the noise.
pub const HIGH_NOISY_SHARE: f64 = 0.1;

impl HostNoise {
    /// The noise of `batches`; `None` before any round.
    pub fn of(batches: &[Batch]) -> Option<HostNoise> {
        let rounds: usize = batches.iter().map(|b| b.rounds.len()).sum();
        if rounds == 0 {
            return None;
        }
        // Each comparison's baseline drifts on its own CPU: the largest
        // drift of any one of them (two CPUs' speeds do not compare).
        let comparisons = batches.iter().map(|b| b.workers.len()).max().unwrap_or(0);
        let drift_of = |median: &dyn Fn(&Batch) -> Option<f64>| {
            range_ratio(&batches.iter().filter_map(median).collect::<Vec<f64>>())
        };
        let baseline_drift = match comparisons {
            0 => drift_of(&|b| b.baseline_median),
            n => (0..n)
                .filter_map(|i| drift_of(&|b| b.workers.get(i).and_then(|w| w.baseline_median)))
                .max_by(f64::total_cmp),
        };
        Some(HostNoise {
            baseline_drift,
            noisy_rounds: batches.iter().map(|b| b.noisy_rounds.len()).sum(),
            rounds,
        })
    }

    /// The noise of several comparisons together (`pairs`): their noisy
    /// rounds summed, and the largest drift any one of them saw (drifts of
    /// different CPUs' baselines do not compare); `None` from none.
    pub fn combined<'a>(noises: impl Iterator<Item = &'a HostNoise>) -> Option<HostNoise> {
        noises.fold(None, |total: Option<HostNoise>, one| {
            Some(match total {
                None => one.clone(),
                Some(total) => HostNoise {
                    baseline_drift: match (total.baseline_drift, one.baseline_drift) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    },
                    noisy_rounds: total.noisy_rounds + one.noisy_rounds,
                    rounds: total.rounds + one.rounds,
                },
            })
        })
    }

    /// The share of rounds flagged as host noise.
    pub fn noisy_share(&self) -> f64 {
        self.noisy_rounds as f64 / self.rounds.max(1) as f64
    }

    /// Noisy enough that a reader should be told.
    pub fn is_high(&self) -> bool {
        self.baseline_drift.is_some_and(|d| d > HIGH_DRIFT) || self.noisy_share() > HIGH_NOISY_SHARE
    }
}

/// One comparison's batches so far. The study measures a round, tells
/// [`Evidence::round_measured`] its repetition number and the paired costs
/// of every round so far, and does what it says next.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evidence {
    /// Every batch, the open one (side `None`) last.
    pub batches: Vec<Batch>,
    /// The side another measurement already found (see the module docs).
    prior: Option<Side>,
}

impl Evidence {
    /// Evidence that starts with another measurement's `side`.
    pub fn with_prior(side: Side) -> Evidence {
        Evidence {
            batches: Vec::new(),
            prior: Some(side),
        }
    }

    /// Round `rep` of the open batch (a new one, if none is open) was
    /// measured; `paired` holds every comparison's costs of every round so
    /// far, aligned by repetition (one comparison for `pairs`, one per
    /// worker for the gate). Judges the open batch again, then the batches
    /// together.
    pub fn round_measured(&mut self, rule: &GateRule, rep: usize, paired: &[PairedCosts]) -> Next {
        if self.batches.last().is_none_or(|b| b.side.is_some()) {
            let index = self.batches.len() + 1;
            self.batches.push(Batch {
                index,
                rounds: Vec::new(),
                noisy_rounds: Vec::new(),
                baseline_median: None,
                estimate: None,
                side: None,
                workers: Vec::new(),
            });
        }
        let open = self.batches.last_mut().expect("a batch was just opened");
        open.rounds.push(rep);
        *open = judge_batch(rule, open.index, std::mem::take(&mut open.rounds), paired);
        self.next(rule, paired)
    }

    /// What the batches say together; see the module docs.
    fn next(&self, rule: &GateRule, paired: &[PairedCosts]) -> Next {
        if self.batches.last().is_some_and(|b| b.side.is_none()) {
            return Next::Round;
        }
        let count = |side: Side| self.batches.iter().filter(|b| b.side == Some(side)).count();
        let (above, below) = (count(Side::Above), count(Side::Below));
        let prior = |side: Side| usize::from(self.prior == Some(side));
        let pooled_side = pooled_side(rule, &self.pooled_each(paired));
        if above > 0 && below > 0 {
            Next::Decided(Verdict::Inconclusive)
        } else if above > 0
            && above + prior(Side::Above) >= rule.batching.batches
            && pooled_side == Some(Side::Above)
        {
            Next::Decided(Verdict::Physical)
        } else if below > 0
            && below + prior(Side::Below) >= rule.batching.batches
            && pooled_side == Some(Side::Below)
        {
            Next::Decided(Verdict::Virtual)
        } else if self.batches.len() >= rule.batching.max_batches {
            Next::Decided(Verdict::Inconclusive)
        } else {
            Next::Batch
        }
    }

    /// The estimate from every kept round of every batch: the headline.
    /// With several comparisons, the one that decides ([`deciding`]).
    pub fn pooled(&self, rule: &GateRule, paired: &[PairedCosts]) -> Option<Estimate> {
        headline(rule, self.pooled_each(paired))
    }

    /// Each comparison's estimate from every round of every batch that it
    /// kept.
    pub fn pooled_each(&self, paired: &[PairedCosts]) -> Vec<Option<Estimate>> {
        paired
            .iter()
            .enumerate()
            .map(|(i, one)| {
                let kept = |rep: &usize| {
                    self.batches.iter().any(|b| {
                        let noisy = b
                            .workers
                            .get(i)
                            .map_or(&b.noisy_rounds, |w| &w.noisy_rounds);
                        b.rounds.contains(rep) && !noisy.contains(rep)
                    })
                };
                let (treated, baseline) = one.select(kept);
                estimate(&treated, &baseline)
            })
            .collect()
    }

    /// How noisy the host was; see [`HostNoise`].
    pub fn noise(&self) -> Option<HostNoise> {
        HostNoise::of(&self.batches)
    }
}

/// The estimate that stands for several comparisons on `side` (of those
/// that have one; `None` when none has): below, the one wholly below with
/// the lowest upper end (the worker that showed the two share nothing);
/// otherwise the one with the lowest lower end (above: what every worker
/// paid at least).
pub fn deciding(
    estimates: Vec<Option<Estimate>>,
    side: Option<Side>,
    rule: &GateRule,
) -> Option<Estimate> {
    let estimates: Vec<Estimate> = estimates.into_iter().flatten().collect();
    let below = estimates
        .iter()
        .filter(|e| side == Some(Side::Below) && side_of(rule, e) == Some(Side::Below))
        .min_by(|a, b| a.ci95.high.total_cmp(&b.ci95.high));
    below
        .or_else(|| {
            estimates
                .iter()
                .min_by(|a, b| a.ci95.low.total_cmp(&b.ci95.low))
        })
        .cloned()
}

/// The estimate that stands for comparisons whose pooled estimates are
/// `each` (as [`Evidence::pooled_each`] gives them): the one that decides
/// the side they take together ([`deciding`]).
pub fn headline(rule: &GateRule, each: Vec<Option<Estimate>>) -> Option<Estimate> {
    let side = pooled_side(rule, &each);
    deciding(each, side, rule)
}

/// The side that pooled estimates `each` take together ([`joint_side`]).
fn pooled_side(rule: &GateRule, each: &[Option<Estimate>]) -> Option<Side> {
    joint_side(
        &each
            .iter()
            .map(|e| e.as_ref().and_then(|e| side_of(rule, e)))
            .collect::<Vec<_>>(),
    )
}

/// The side several comparisons take together (the gate's: one per
/// sibling worker, each against its own CPU alone). Sharing a core slows
/// both of its hardware threads, while a neighbour or a burst slows only
/// the CPU it sits on. So: above only when every worker is above; below as
/// soon as any worker is below, since a worker that paid nothing for
/// working beside the other shares nothing with it (the other's slowdown
/// came from its own CPU's side); `None` otherwise.
pub fn joint_side(sides: &[Option<Side>]) -> Option<Side> {
    if sides.contains(&Some(Side::Below)) {
        Some(Side::Below)
    } else if !sides.is_empty() && sides.iter().all(|s| *s == Some(Side::Above)) {
        Some(Side::Above)
    } else {
        None
    }
}

/// The rounds of `rounds` in `paired` that look like host noise: a
/// baseline far off the batch's median, or an arm's workers much further
/// apart than in the batch's typical round.
fn noisy_rounds_of(rounds: &[usize], paired: &PairedCosts) -> Vec<usize> {
    let spread = |spreads: &[f64], i: usize| spreads.get(i).copied().unwrap_or(0.0);
    let in_batch: Vec<(usize, f64, f64, f64)> = paired
        .reps
        .iter()
        .enumerate()
        .filter(|(_, rep)| rounds.contains(rep))
        .map(|(i, rep)| {
            (
                *rep,
                paired.baseline[i],
                spread(&paired.treated_spread, i),
                spread(&paired.baseline_spread, i),
            )
        })
        .collect();
    let typical = |pick: fn(&(usize, f64, f64, f64)) -> f64| {
        median(&in_batch.iter().map(pick).collect::<Vec<f64>>())
    };
    let (baseline_typical, treated_spread, baseline_spread) =
        (typical(|r| r.1), typical(|r| r.2), typical(|r| r.3));
    in_batch
        .iter()
        .filter(|(_, b, ts, bs)| {
            (baseline_typical > 0.0 && (b / baseline_typical - 1.0).abs() > NOISY_BASELINE)
                || ts - treated_spread > UNEVEN_WORKERS
                || bs - baseline_spread > UNEVEN_WORKERS
        })
        .map(|(rep, ..)| *rep)
        .collect()
}

/// Batch `index` of `rounds`, judged from each comparison's paired costs
/// (a round whose pair was excluded is simply absent from `paired`). Each
/// comparison leaves out the rounds that are noise for it: a burst on one
/// worker's CPU alone says nothing of the other's rounds, and dropping a
/// round from both (as a first version did) left batches too few rounds
/// for an interval on a noisy host.
fn judge_batch(rule: &GateRule, index: usize, rounds: Vec<usize>, paired: &[PairedCosts]) -> Batch {
    let workers: Vec<WorkerBatch> = paired
        .iter()
        .map(|one| {
            let noisy_rounds = noisy_rounds_of(&rounds, one);
            let kept = |rep: &usize| rounds.contains(rep) && !noisy_rounds.contains(rep);
            let (treated, baseline) = one.select(kept);
            let estimate = estimate(&treated, &baseline);
            WorkerBatch {
                baseline_median: (!baseline.is_empty()).then(|| median(&baseline)),
                side: estimate
                    .as_ref()
                    .filter(|_| rounds.len() >= rule.min_reps)
                    .and_then(|e| side_of(rule, e)),
                estimate,
                noisy_rounds,
            }
        })
        .collect();
    let mut noisy_rounds: Vec<usize> = workers
        .iter()
        .flat_map(|w| w.noisy_rounds.iter().copied())
        .collect();
    noisy_rounds.sort_unstable();
    noisy_rounds.dedup();
    let side = match joint_side(&workers.iter().map(|w| w.side).collect::<Vec<_>>()) {
        Some(side) => Some(side),
        None if rounds.len() >= rule.max_reps => Some(Side::Straddles),
        None => None,
    };
    Batch {
        index,
        baseline_median: workers.first().and_then(|w| w.baseline_median),
        estimate: deciding(
            workers.iter().map(|w| w.estimate.clone()).collect(),
            side,
            rule,
        ),
        rounds,
        noisy_rounds,
        side,
        workers: if workers.len() > 1 {
            workers
        } else {
            Vec::new()
        },
    }
}

/// The side of the threshold `estimate` is wholly on, if any. The ratio
/// of medians must agree with the interval: a verdict that contradicts the
/// arms table's medians is worth another round.
fn side_of(rule: &GateRule, estimate: &Estimate) -> Option<Side> {
    let threshold = rule.threshold;
    if estimate.ci95.low >= threshold && estimate.penalty_of_medians >= threshold {
        Some(Side::Above)
    } else if estimate.ci95.high < threshold && estimate.penalty_of_medians < threshold {
        Some(Side::Below)
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
