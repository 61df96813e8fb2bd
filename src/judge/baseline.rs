//! Did it change? One quantity measured twice, in two studies that were
//! not paired (a saved baseline, then a new run): the change from the old
//! repetitions to the new ones, with a distribution-free 95 % interval, and
//! the row's verdict against a threshold.
//!
//! # The estimate: Hodges–Lehmann, on log values
//!
//! Costs are positive and their noise is multiplicative, so the change is
//! a ratio: on the log scale, the shift Δ between the two samples. The
//! Hodges–Lehmann estimate of Δ is the median of the m·n differences
//! ln(newᵢ) − ln(oldⱼ); its 95 % interval is the k-th smallest and the
//! k-th largest of those differences, where k − 1 is the Mann–Whitney
//! statistic's lower 2.5 % critical value. It assumes only that each
//! study's repetitions are independent draws and that the change shifts the
//! whole distribution (on the log scale): no normality, no equal spreads.
//! A few wild repetitions move it only when they outnumber k, where a
//! t-interval follows every one of them. Exactly (the Mann–Whitney
//! statistic's null distribution counted) up to [`EXACT_UP_TO`]
//! repetitions in all; above, the normal approximation of that
//! distribution. A bootstrap was the other candidate: with the 10 to 20
//! repetitions a study keeps, its percentile interval is too narrow (it can
//! only return values the samples hold), and it would need a seed.
//!
//! Mapped back, the change is exp(Δ) − 1: +0.10 is 10 % more cost, and
//! the interval can never reach below −100 %.
//!
//! # The verdict
//!
//! A row is **regressed** when its whole interval lies above +threshold
//! (the quantity costs more), **improved** when it lies below −threshold,
//! **unchanged** when it lies within ±threshold, and otherwise
//! **inconclusive**: then the repetitions per side that would likely decide
//! it are estimated from the interval's width, which shrinks as
//! √(1/m + 1/n).

use crate::judge::stats::{Interval, median};
use serde::{Deserialize, Serialize};

/// The default `--threshold`: a change within ±5 % is no change.
pub const DEFAULT_THRESHOLD: f64 = 0.05;

/// The most repetitions (both sides together) whose Mann–Whitney null
/// distribution is counted exactly: C(120, 60) ≈ 10³⁵ arrangements still
/// fit a u128. Above, the normal approximation.
pub const EXACT_UP_TO: usize = 120;

/// The fewest repetitions a side may have for an interval: with four
/// against four, P(U = 0) = 1/70 ≈ 1.4 % ≤ 2.5 %, so the widest interval
/// (smallest to largest difference) has at least 95 % coverage; three
/// against three (1/20 = 5 %) has none.
pub const MIN_REPS: usize = 4;

/// The most repetitions per side [`Change::reps_to_decide`] names: above,
/// the change sits so near the threshold that no affordable study decides
/// it.
pub const MOST_REPS: usize = 1000;

/// A row's verdict.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::Display,
    strum::IntoStaticStr,
    strum::VariantArray,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum RowVerdict {
    /// The whole interval above +threshold: it costs more now.
    Regressed,
    /// The interval reaches across a threshold, or there are too few
    /// repetitions for one.
    Inconclusive,
    /// The whole interval below −threshold: it costs less now.
    Improved,
    /// The whole interval within ±threshold.
    Unchanged,
}

/// How the interval's critical value was found.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::Display,
    strum::IntoStaticStr,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum IntervalMethod {
    /// The Mann–Whitney statistic's null distribution, counted.
    Exact,
    /// Its normal approximation (more than [`EXACT_UP_TO`] repetitions).
    Normal,
}

/// One quantity's change from the old repetitions to the new.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Change {
    /// new / old − 1, the Hodges–Lehmann estimate on log values; `None`
    /// where a side has no positive finite value.
    #[schemars(extend("exclusiveMinimum" = -1))]
    pub change: Option<f64>,
    /// Its 95 % interval (as changes, like `change`); `None` under
    /// [`MIN_REPS`] a side.
    pub ci95: Option<Interval>,
    /// How the interval was found; `None` without one.
    pub method: Option<IntervalMethod>,
    pub verdict: RowVerdict,
    /// Inconclusive only: about how many repetitions per side would likely
    /// decide it (the interval's width scaled as √(1/m + 1/n)); `None`
    /// where the change sits at the threshold (more than [`MOST_REPS`]),
    /// and for the other verdicts.
    #[schemars(range(min = 1))]
    pub reps_to_decide: Option<usize>,
}

/// Judges `new` against `old` (each a quantity's kept repetitions, positive
/// costs: higher is worse) at `threshold` (0.05: ±5 %).
pub fn judge_change(old: &[f64], new: &[f64], threshold: f64) -> Change {
    let logs = |values: &[f64]| -> Vec<f64> {
        values
            .iter()
            .filter(|v| v.is_finite() && **v > 0.0)
            .map(|v| v.ln())
            .collect()
    };
    let (old, new) = (logs(old), logs(new));
    let Some(shift) = hodges_lehmann(&old, &new) else {
        return Change {
            change: None,
            ci95: None,
            method: None,
            verdict: RowVerdict::Inconclusive,
            reps_to_decide: Some(MIN_REPS),
        };
    };
    let Some((low, high, method)) = shift_interval(&old, &new) else {
        return Change {
            change: Some(shift.exp_m1()),
            ci95: None,
            method: None,
            verdict: RowVerdict::Inconclusive,
            reps_to_decide: Some(MIN_REPS.max(old.len()).max(new.len())),
        };
    };
    let (above, below) = ((1.0 + threshold).ln(), (1.0 - threshold.min(0.99)).ln());
    let verdict = if low > above {
        RowVerdict::Regressed
    } else if high < below {
        RowVerdict::Improved
    } else if low >= below && high <= above {
        RowVerdict::Unchanged
    } else {
        RowVerdict::Inconclusive
    };
    let reps_to_decide = (verdict == RowVerdict::Inconclusive)
        .then(|| reps_to_decide((low, high), (below, above), (old.len(), new.len())))
        .flatten();
    Change {
        change: Some(shift.exp_m1()),
        ci95: Some(Interval {
            low: low.exp_m1(),
            high: high.exp_m1(),
        }),
        method: Some(method),
        verdict,
        reps_to_decide,
    }
}

/// The Hodges–Lehmann shift of `new` from `old`: the median of every
/// difference newᵢ − oldⱼ. `None` when either side is empty.
pub fn hodges_lehmann(old: &[f64], new: &[f64]) -> Option<f64> {
    (!old.is_empty() && !new.is_empty()).then(|| median(&differences(old, new)))
}

/// Every difference newᵢ − oldⱼ, sorted.
fn differences(old: &[f64], new: &[f64]) -> Vec<f64> {
    let mut all: Vec<f64> = new
        .iter()
        .flat_map(|n| old.iter().map(move |o| n - o))
        .collect();
    all.sort_by(f64::total_cmp);
    all
}

/// The distribution-free 95 % interval of the shift: the k-th smallest and
/// k-th largest difference, k from [`critical_k`]. `None` under
/// [`MIN_REPS`] a side, or where no k reaches 95 %.
pub fn shift_interval(old: &[f64], new: &[f64]) -> Option<(f64, f64, IntervalMethod)> {
    let (m, n) = (old.len(), new.len());
    if m < MIN_REPS || n < MIN_REPS {
        return None;
    }
    let (k, method) = critical_k(m, n)?;
    let all = differences(old, new);
    Some((all[k - 1], all[all.len() - k], method))
}

/// The largest k ≥ 1 with P(U ≤ k − 1) ≤ 2.5 % for the Mann–Whitney
/// statistic U of m against n values under no shift, and how it was found.
pub fn critical_k(m: usize, n: usize) -> Option<(usize, IntervalMethod)> {
    if m + n <= EXACT_UP_TO {
        let counts = mann_whitney_counts(m, n);
        let total: f64 = counts.iter().map(|&c| c as f64).sum();
        let mut below = 0.0;
        let mut k = 0;
        for &count in &counts {
            below += count as f64;
            if below / total > 0.025 {
                break;
            }
            k += 1;
        }
        return (k >= 1).then_some((k, IntervalMethod::Exact));
    }
    let (m, n) = (m as f64, n as f64);
    let sigma = (m * n * (m + n + 1.0) / 12.0).sqrt();
    let k = (m * n / 2.0 - 1.959_963_984_540_054 * sigma).floor();
    (k >= 1.0).then_some((k as usize, IntervalMethod::Normal))
}

/// How many of the C(m + n, m) orderings of m old and n new values give
/// each value u = 0 … m·n of the Mann–Whitney statistic: the coefficients
/// of the Gaussian binomial ∏ᵢ₌₁..ₘ (1 − q^(n+i)) / (1 − q^i). Wrapping
/// arithmetic: intermediate coefficients may go below zero, and the final
/// ones are exact as long as they fit a u128 ([`EXACT_UP_TO`]).
fn mann_whitney_counts(m: usize, n: usize) -> Vec<u128> {
    let mut counts = vec![0u128; m * n + 1];
    counts[0] = 1;
    for i in 1..=m {
        // × (1 − q^(n+i)), from the top so each term reads the old value.
        for u in (n + i..counts.len()).rev() {
            counts[u] = counts[u].wrapping_sub(counts[u - n - i]);
        }
        // ÷ (1 − q^i): a running sum with stride i.
        for u in i..counts.len() {
            counts[u] = counts[u].wrapping_add(counts[u - i]);
        }
    }
    counts
}

/// About how many repetitions per side would put the log interval
/// `(low, high)` on one side of a bound in `(below, above)`, from the
/// `(m, n)` it has: its half-width shrinks as √(1/m + 1/n). `None` where
/// the interval's centre sits at a bound, or more than [`MOST_REPS`] are
/// needed.
fn reps_to_decide(
    (low, high): (f64, f64),
    (below, above): (f64, f64),
    (m, n): (usize, usize),
) -> Option<usize> {
    let (centre, half) = ((low + high) / 2.0, (high - low) / 2.0);
    let room = if centre >= above {
        centre - above
    } else if centre <= below {
        below - centre
    } else {
        (above - centre).min(centre - below)
    };
    if room <= 0.0 || half <= 0.0 {
        return None;
    }
    let scale = 1.0 / m as f64 + 1.0 / n as f64;
    // Equal sides of N: √(2/N) = (room/half)·√scale.
    let needed = (2.0 / ((room / half).powi(2) * scale)).ceil();
    (needed <= MOST_REPS as f64).then(|| (needed as usize).max(m.max(n) + 1))
}

/// What a whole comparison says, worst first: what `report --baseline`
/// and `--baseline NAME` exit with.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::Display,
    strum::IntoStaticStr,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum BaselineVerdict {
    /// A row regressed.
    Regressed,
    /// Nothing regressed, but a row is inconclusive.
    Inconclusive,
    /// Every row unchanged or improved.
    NothingRegressed,
}

impl BaselineVerdict {
    /// The verdict of rows judged `verdicts`.
    pub fn of(verdicts: impl IntoIterator<Item = RowVerdict>) -> BaselineVerdict {
        verdicts
            .into_iter()
            .map(|verdict| match verdict {
                RowVerdict::Regressed => BaselineVerdict::Regressed,
                RowVerdict::Inconclusive => BaselineVerdict::Inconclusive,
                RowVerdict::Improved | RowVerdict::Unchanged => BaselineVerdict::NothingRegressed,
            })
            .min()
            .unwrap_or(BaselineVerdict::NothingRegressed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` repetitions around `centre` with a CV of about `cv`, spread
    /// evenly over ±√3·cv (a uniform's CV), in a shuffled order.
    fn reps(centre: f64, cv: f64, n: usize) -> Vec<f64> {
        let width = 3f64.sqrt() * cv;
        (0..n)
            .map(|i| {
                let at = ((i * 7) % n) as f64 / (n - 1) as f64;
                centre * (1.0 + width * (2.0 * at - 1.0))
            })
            .collect()
    }

    #[test]
    fn the_exact_counts_are_the_mann_whitney_distribution() {
        // m = n = 2: orderings 6, U = 0,1,2,3,4 in 1,1,2,1,1 ways.
        assert_eq!(mann_whitney_counts(2, 2), [1, 1, 2, 1, 1]);
        let counts = mann_whitney_counts(10, 12);
        let total: u128 = counts.iter().sum();
        assert_eq!(total, 646_646); // C(22, 10)
        // Symmetric about m·n/2.
        assert!(counts.iter().eq(counts.iter().rev()));
        // Exact where the total nears a u128's range.
        let counts = mann_whitney_counts(60, 60);
        assert_eq!(counts.first(), Some(&1));
        assert_eq!(counts.last(), Some(&1));
    }

    #[test]
    fn critical_values_match_the_published_tables() {
        // Two-sided 5 % Mann–Whitney critical values (U ≤ c rejects):
        // n1 = n2 = 4: c = 0; 8: 13; 10: 23; 15: 64; 20: 127. k = c + 1.
        for (n, c) in [(4, 0), (8, 13), (10, 23), (15, 64), (20, 127)] {
            assert_eq!(
                critical_k(n, n),
                Some((c + 1, IntervalMethod::Exact)),
                "{n}"
            );
        }
        assert_eq!(critical_k(3, 3), None);
        // The normal approximation, above 120 in all, is close to exact.
        let (exact, _) = critical_k(60, 60).unwrap();
        let (normal, method) = critical_k(61, 60).unwrap();
        assert_eq!(method, IntervalMethod::Normal);
        assert!(normal.abs_diff(exact) <= 60, "{exact} {normal}");
    }

    #[test]
    fn a_change_of_ten_percent_at_a_cv_of_two_percent_is_regressed() {
        let change = judge_change(&reps(100.0, 0.02, 15), &reps(110.0, 0.02, 15), 0.05);
        assert_eq!(change.verdict, RowVerdict::Regressed, "{change:?}");
        let estimate = change.change.unwrap();
        assert!((estimate - 0.10).abs() < 0.01, "{estimate}");
        let interval = change.ci95.unwrap();
        assert!(interval.low > 0.05 && interval.high < 0.15, "{interval:?}");
        assert_eq!(change.method, Some(IntervalMethod::Exact));
    }

    #[test]
    fn a_change_of_one_percent_is_unchanged_and_ten_percent_less_improved() {
        let old = reps(100.0, 0.02, 15);
        let change = judge_change(&old, &reps(101.0, 0.02, 15), 0.05);
        assert_eq!(change.verdict, RowVerdict::Unchanged, "{change:?}");
        assert_eq!(change.reps_to_decide, None);
        let change = judge_change(&old, &reps(90.0, 0.02, 15), 0.05);
        assert_eq!(change.verdict, RowVerdict::Improved, "{change:?}");
    }

    #[test]
    fn noisy_data_is_inconclusive_and_names_the_repetitions_that_would_decide() {
        let change = judge_change(&reps(100.0, 0.15, 8), &reps(108.0, 0.15, 8), 0.05);
        assert_eq!(change.verdict, RowVerdict::Inconclusive, "{change:?}");
        let needed = change.reps_to_decide.unwrap();
        assert!(needed > 8 && needed <= MOST_REPS, "{needed}");
        // Too few repetitions for any interval.
        let change = judge_change(&[1.0, 1.1, 0.9], &[2.0, 2.1, 1.9], 0.05);
        assert_eq!(change.verdict, RowVerdict::Inconclusive);
        assert_eq!(change.ci95, None);
        assert!(change.change.unwrap() > 0.8);
    }

    #[test]
    fn the_interval_covers_the_true_shift_of_pure_noise() {
        // Identical distributions: the interval holds 0.
        let old = reps(50.0, 0.03, 12);
        let change = judge_change(&old, &old, 0.05);
        let interval = change.ci95.unwrap();
        assert!(interval.low <= 0.0 && interval.high >= 0.0);
        assert_eq!(change.change, Some(0.0));
    }

    #[test]
    fn the_worst_row_decides() {
        use RowVerdict::*;
        assert_eq!(
            BaselineVerdict::of([Unchanged, Inconclusive, Improved]),
            BaselineVerdict::Inconclusive
        );
        assert_eq!(
            BaselineVerdict::of([Inconclusive, Regressed]),
            BaselineVerdict::Regressed
        );
        assert_eq!(BaselineVerdict::of([]), BaselineVerdict::NothingRegressed);
    }
}
