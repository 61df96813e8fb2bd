//! Statistics over per-repetition costs: the spread of one arm, and the
//! penalty of one arm against another with its 95 % confidence interval.
//!
//! Costs are positive rates (cycles or TSC ticks per byte), and the penalty
//! is a ratio, so intervals are computed on the log scale: noise on a rate is
//! multiplicative, a log ratio's interval is symmetric, and mapped back it can
//! never claim a penalty below −100 %.

use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, StudentsT};
use statrs::statistics::Statistics;

/// The fewest repetitions per arm a t-interval is computed from. With two,
/// the t quantile has one degree of freedom (12.7 instead of about 2): the
/// interval is too wide to decide anything, and a standard deviation from two
/// points says little about the noise. Three is the smallest honest sample.
pub const MIN_INTERVAL_REPS: usize = 3;

/// The fewest values a distribution-free 95 % interval of their median
/// exists for ([`median_interval`]): with five, even the widest interval,
/// smallest to largest, covers the median only 1 − 2/2⁵ = 93.75 % of the
/// time; with six, 1 − 2/2⁶ ≈ 96.9 %.
pub const MIN_MEDIAN_INTERVAL_VALUES: usize = 6;

/// How one quantity varied over the repetitions of an arm: what every table
/// cell shows next to its median, so no number is quoted without its noise.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, schemars::JsonSchema)]
pub struct Spread {
    /// The middle value: robust to the odd repetition a daemon interrupted.
    pub median: f64,
    /// Coefficient of variation, sample standard deviation / mean: the noise
    /// relative to the value, comparable across arms and hosts.
    pub cv: f64,
    /// The lowest repetition: with `max`, how far any single repetition
    /// strayed from the median.
    pub min: f64,
    /// The highest repetition.
    pub max: f64,
    /// How many repetitions the numbers come from.
    pub reps: usize,
}

impl Spread {
    /// The same spread per unit of `count` (each value divided by it; the
    /// CV, a ratio, and n unchanged).
    pub fn per(&self, count: f64) -> Spread {
        Spread {
            median: self.median / count,
            min: self.min / count,
            max: self.max / count,
            ..*self
        }
    }
}

/// Median, CV, min, max and count of `values`.
///
/// `None` for fewer than two values (one value has no variation, and a CV of
/// 0 would wrongly pass any bar), for a non-finite value, or a zero mean (the
/// CV is undefined).
pub fn spread(values: &[f64]) -> Option<Spread> {
    if values.len() < 2 || !values.iter().all(|v| v.is_finite()) {
        return None;
    }
    let mean = values.mean();
    if mean == 0.0 {
        return None;
    }
    Some(Spread {
        median: median(values),
        cv: values.std_dev() / mean.abs(),
        min: values.min(),
        max: values.max(),
        reps: values.len(),
    })
}

/// How far apart `values` are as a ratio: highest over lowest, minus 1
/// (0.3: the highest is 30 % above the lowest). `None` with fewer than two
/// values or a lowest that is not positive.
pub fn range_ratio(values: &[f64]) -> Option<f64> {
    let (low, high) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(*v), h.max(*v))
        });
    (values.len() >= 2 && low > 0.0).then(|| high / low - 1.0)
}

/// The median of `values` (mean of the two middle ones for an even count);
/// NaN for an empty slice, as there is no middle to report.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[middle],
        _ => (sorted[middle - 1] + sorted[middle]) / 2.0,
    }
}

/// A confidence interval for a penalty (a fraction: 0.37 is 37 % more).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, schemars::JsonSchema)]
pub struct Interval {
    /// Lower bound (a fraction; −0.05 is 5 % cheaper).
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

/// The penalty of `treated` against `baseline`:
/// median(treated) / median(baseline) − 1. Medians, because one interrupted
/// repetition must not move the headline number. `None` when either arm is
/// empty or the baseline's median is not positive.
pub fn penalty(treated: &[f64], baseline: &[f64]) -> Option<f64> {
    let (treated, baseline) = (median(treated), median(baseline));
    (baseline > 0.0 && treated.is_finite()).then(|| treated / baseline - 1.0)
}

/// The 95 % confidence interval of the penalty of `treated` against
/// `baseline`, from t-intervals on log costs (statrs' Student's t quantiles).
///
/// Why not a bootstrap: the gate stops as early as it can, after as few as
/// three repetitions, and a percentile bootstrap of medians from three values
/// can only return those values: its interval is far too narrow exactly when
/// an early stop trusts it. The t-interval widens honestly with small n
/// (quantile 4.30 at three repetitions, 2.14 at fifteen).
///
/// * Equal lengths: the arms were interleaved (ABAB…), so element i of each
///   ran back to back and shares the host's drift (frequency, neighbours,
///   thermals). The interval is on the mean of the paired log ratios
///   ln(treatedᵢ / baselineᵢ) with n − 1 degrees of freedom: the shared drift
///   cancels inside each pair instead of inflating both arms' noise. The
///   caller must align the arms by repetition and drop a pair whole when one
///   half is excluded (see `gate::paired_costs`).
/// * Unequal lengths: no pairing exists, so Welch's interval on the
///   difference of mean log costs (Welch–Satterthwaite degrees of freedom).
///
/// Either way the interval is for the geometric-mean ratio
/// ([`penalty_centre`]), which with symmetric noise has the same centre as
/// the ratio of medians; an outlier widens it (the gate then keeps
/// measuring) rather than moving the verdict. `None` with fewer than [`MIN_INTERVAL_REPS`]
/// values in an arm, or a cost that is not a positive finite number.
pub fn penalty_ci95(treated: &[f64], baseline: &[f64]) -> Option<Interval> {
    let (centre, half_width) = log_ratio(treated, baseline)?;
    Some(Interval {
        low: (centre - half_width).exp() - 1.0,
        high: (centre + half_width).exp() - 1.0,
    })
}

/// The penalty at the centre of [`penalty_ci95`]'s interval: the geometric
/// mean of the paired ratios (or of the arms, when unpaired) minus 1. This
/// is the point estimate a verdict quotes, so it always lies inside its
/// interval; [`penalty`] (ratio of medians) can fall outside it when a few
/// repetitions are noisy.
pub fn penalty_centre(treated: &[f64], baseline: &[f64]) -> Option<f64> {
    log_ratio(treated, baseline).map(|(centre, _)| centre.exp() - 1.0)
}

/// Centre and 95 % half-width of the log cost ratio; see [`penalty_ci95`].
fn log_ratio(treated: &[f64], baseline: &[f64]) -> Option<(f64, f64)> {
    let valid = |arm: &[f64]| {
        arm.len() >= MIN_INTERVAL_REPS && arm.iter().all(|c| c.is_finite() && *c > 0.0)
    };
    if !valid(treated) || !valid(baseline) {
        return None;
    }
    let (centre, standard_error, freedom) = if treated.len() == baseline.len() {
        paired_log_ratio(treated, baseline)
    } else {
        welch_log_ratio(treated, baseline)
    };
    let half_width = if standard_error > 0.0 {
        let t = StudentsT::new(0.0, 1.0, freedom).ok()?;
        t.inverse_cdf(0.975) * standard_error
    } else {
        // Identical ratios in every repetition: nothing left to be unsure of.
        0.0
    };
    Some((centre, half_width))
}

/// Mean, standard error and degrees of freedom of ln(treatedᵢ / baselineᵢ).
fn paired_log_ratio(treated: &[f64], baseline: &[f64]) -> (f64, f64, f64) {
    let ratios: Vec<f64> = treated
        .iter()
        .zip(baseline)
        .map(|(t, b)| (t / b).ln())
        .collect();
    let (ratios, n) = (ratios.as_slice(), ratios.len() as f64);
    (ratios.mean(), ratios.std_dev() / n.sqrt(), n - 1.0)
}

/// Difference of mean log costs, its standard error, and Welch–Satterthwaite
/// degrees of freedom (arms of different sizes and variances).
fn welch_log_ratio(treated: &[f64], baseline: &[f64]) -> (f64, f64, f64) {
    let logs = |arm: &[f64]| arm.iter().map(|c| c.ln()).collect::<Vec<f64>>();
    let (treated, baseline) = (logs(treated), logs(baseline));
    let (treated, baseline) = (treated.as_slice(), baseline.as_slice());
    let (nt, nb) = (treated.len() as f64, baseline.len() as f64);
    let (vt, vb) = (treated.variance() / nt, baseline.variance() / nb);
    let freedom = (vt + vb).powi(2) / (vt.powi(2) / (nt - 1.0) + vb.powi(2) / (nb - 1.0));
    (treated.mean() - baseline.mean(), (vt + vb).sqrt(), freedom)
}

/// The distribution-free 95 % interval of the median of `values`: the
/// order statistics x₍ₖ₎ and x₍ₙ₊₁₋ₖ₎, with the largest k whose coverage is
/// still at least 95 %.
///
/// Why this interval: it assumes nothing about the noise's shape, only
/// that the values are independent. How many of n values fall below the
/// true median is binomial(n, ½), so [x₍ₖ₎, x₍ₙ₊₁₋ₖ₎] misses it with
/// probability 2·P(B ≤ k − 1). A few wild values (rounds a burst of host
/// load hit) move neither end unless they outnumber k, where a t-interval's
/// mean and standard deviation follow every one of them. `None` with fewer
/// than [`MIN_MEDIAN_INTERVAL_VALUES`] values or a non-finite one.
pub fn median_interval(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n < MIN_MEDIAN_INTERVAL_VALUES || !values.iter().all(|v| v.is_finite()) {
        return None;
    }
    let below = Binomial::new(0.5, n as u64).ok()?;
    // The largest k (1-based) with 2·P(B ≤ k − 1) ≤ 5 %; k = 1 always
    // qualifies from six values up.
    let k = (1..=n / 2)
        .take_while(|&k| 2.0 * below.cdf(k as u64 - 1) <= 0.05)
        .last()?;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some((sorted[k - 1], sorted[n - k]))
}

/// The median of the paired ratios treatedᵢ / baselineᵢ, minus 1, with its
/// distribution-free 95 % interval ([`median_interval`]): the gate's and
/// `pairs`' robust estimate. Element i of each arm ran back to back, so the
/// ratio cancels what the host did to both; a round a burst of load hit in
/// one arm only is one wild ratio, which the median ignores. `None` for
/// arms of unequal length, a cost that is not a positive finite number, or
/// too few rounds for the interval.
pub fn median_ratio(treated: &[f64], baseline: &[f64]) -> Option<(f64, Interval)> {
    let positive = |arm: &[f64]| arm.iter().all(|c| c.is_finite() && *c > 0.0);
    if treated.len() != baseline.len() || !positive(treated) || !positive(baseline) {
        return None;
    }
    let ratios: Vec<f64> = treated.iter().zip(baseline).map(|(t, b)| t / b).collect();
    let (low, high) = median_interval(&ratios)?;
    Some((
        median(&ratios) - 1.0,
        Interval {
            low: low - 1.0,
            high: high - 1.0,
        },
    ))
}

/// `value` with `digits` significant figures in plain decimal notation
/// ("0.000999981" for 9.99981e-4 at six), for reporting small relative
/// spreads without pretending to more precision than was measured.
pub fn significant(value: f64, digits: usize) -> String {
    if value == 0.0 || !value.is_finite() {
        return value.to_string();
    }
    let magnitude = value.abs().log10().floor() as i64;
    let decimals = (digits as i64 - 1 - magnitude).max(0) as usize;
    format!("{value:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn range_ratio_is_highest_over_lowest() {
        assert!(close(range_ratio(&[1.3, 1.0, 1.1]).unwrap(), 0.3, 1e-12));
        assert_eq!(range_ratio(&[1.0]), None);
        assert_eq!(range_ratio(&[0.0, 1.0]), None);
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn spread_uses_the_sample_standard_deviation() {
        let spread = spread(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        // mean 2.5, sample sd sqrt(5/3)
        assert!(close(spread.cv, (5.0f64 / 3.0).sqrt() / 2.5, 1e-12));
        assert_eq!(
            (spread.median, spread.min, spread.max, spread.reps),
            (2.5, 1.0, 4.0, 4)
        );
    }

    #[test]
    fn spread_needs_two_finite_values_and_a_mean() {
        assert_eq!(spread(&[]), None);
        assert_eq!(spread(&[1.0]), None);
        assert_eq!(spread(&[1.0, f64::NAN]), None);
        assert_eq!(spread(&[-1.0, 1.0]), None);
    }

    #[test]
    fn penalty_is_a_ratio_of_medians() {
        assert!(close(
            penalty(&[1.4, 1.3, 9.0], &[1.0, 1.0, 1.0]).unwrap(),
            0.4,
            1e-12
        ));
        assert_eq!(penalty(&[1.0], &[]), None);
        assert_eq!(penalty(&[1.0], &[0.0]), None);
    }

    #[test]
    fn paired_interval_matches_a_hand_computed_t_interval() {
        // log ratios ln 1.1, ln 1.2, ln 1.3: mean m, sd s, t(0.975, 2) = 4.302653
        let treated = [1.1, 2.4, 3.9];
        let baseline = [1.0, 2.0, 3.0];
        let logs = [1.1f64.ln(), 1.2f64.ln(), 1.3f64.ln()];
        let m = logs.iter().sum::<f64>() / 3.0;
        let s = (logs.iter().map(|l| (l - m).powi(2)).sum::<f64>() / 2.0).sqrt();
        let half = 4.302653 * s / 3f64.sqrt();
        let interval = penalty_ci95(&treated, &baseline).unwrap();
        assert!(close(interval.low, (m - half).exp() - 1.0, 1e-5));
        assert!(close(interval.high, (m + half).exp() - 1.0, 1e-5));
    }

    #[test]
    fn pairing_cancels_drift_shared_by_both_arms() {
        // The host drifts by ±20 % over the run; each pair ran back to back.
        let drift = [1.0, 1.2, 0.8, 1.1, 0.9];
        let baseline: Vec<f64> = drift.to_vec();
        let treated: Vec<f64> = drift.iter().map(|d| d * 1.3).collect();
        let interval = penalty_ci95(&treated, &baseline).unwrap();
        assert!(close(interval.low, 0.3, 1e-9) && close(interval.high, 0.3, 1e-9));
    }

    #[test]
    fn unequal_arms_use_welch() {
        let interval = penalty_ci95(&[1.3, 1.31, 1.29, 1.3], &[1.0, 1.01, 0.99]).unwrap();
        assert!(interval.low < 0.3 && interval.high > 0.3 && interval.high - interval.low < 0.1);
    }

    #[test]
    fn no_interval_from_too_few_or_bad_costs() {
        assert_eq!(penalty_ci95(&[1.0, 1.1], &[1.0, 1.0]), None);
        assert_eq!(penalty_ci95(&[1.0, 1.1, 0.0], &[1.0, 1.0, 1.0]), None);
        assert_eq!(
            penalty_ci95(&[1.0, 1.1, f64::INFINITY], &[1.0, 1.0, 1.0]),
            None
        );
        assert_eq!(penalty_ci95(&[], &[]), None);
    }

    #[test]
    fn the_median_interval_widens_to_the_extremes_at_six_and_narrows_with_more() {
        assert_eq!(median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0]), None);
        assert_eq!(
            median_interval(&[6.0, 1.0, 5.0, 2.0, 4.0, 3.0]),
            Some((1.0, 6.0))
        );
        // n = 9: P(B ≤ 1) = 10/512 ≈ 0.0195, so k = 2; P(B ≤ 2) ≈ 0.09.
        let nine: Vec<f64> = (1..=9).map(f64::from).collect();
        assert_eq!(median_interval(&nine), Some((2.0, 8.0)));
        // n = 20: k = 6 (P(B ≤ 5) ≈ 0.0207, P(B ≤ 6) ≈ 0.0577).
        let twenty: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(median_interval(&twenty), Some((6.0, 15.0)));
        assert_eq!(median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0, f64::NAN]), None);
    }

    #[test]
    fn a_few_wild_rounds_move_neither_the_median_ratio_nor_its_interval() {
        let baseline = [1.0; 9];
        let quiet = [1.02, 0.99, 1.01, 1.0, 0.98, 1.03, 1.0, 0.99, 1.01];
        let mut burst = quiet;
        burst[3] = 2.0;
        let (quiet_penalty, quiet_interval) = median_ratio(&quiet, &baseline).unwrap();
        let (burst_penalty, burst_interval) = median_ratio(&burst, &baseline).unwrap();
        assert!(close(quiet_penalty, burst_penalty, 0.011));
        assert!(burst_interval.high < 0.05, "{burst_interval:?}");
        assert!(close(quiet_interval.low, burst_interval.low, 1e-12));
        assert_eq!(median_ratio(&quiet[..5], &baseline[..5]), None);
        assert_eq!(median_ratio(&quiet, &baseline[..8]), None);
    }

    #[test]
    fn six_significant_figures() {
        assert_eq!(significant(9.99981234e-4, 6), "0.000999981");
        assert_eq!(significant(0.00106, 6), "0.00106000");
        assert_eq!(significant(123.456789, 6), "123.457");
        assert_eq!(significant(1234567.0, 6), "1234567");
        assert_eq!(significant(0.0, 6), "0");
    }

    proptest! {
        #[test]
        fn intervals_are_ordered_and_above_minus_one(
            treated in prop::collection::vec(0.01f64..100.0, 0..20),
            baseline in prop::collection::vec(0.01f64..100.0, 0..20),
        ) {
            if let Some(interval) = penalty_ci95(&treated, &baseline) {
                prop_assert!(interval.low <= interval.high);
                prop_assert!(interval.low >= -1.0);
            }
        }

        #[test]
        fn spread_brackets_its_median(values in prop::collection::vec(0.01f64..100.0, 0..20)) {
            if let Some(s) = spread(&values) {
                prop_assert!(s.min <= s.median && s.median <= s.max && s.cv >= 0.0);
            }
        }
    }
}
