//! The fleet's outlier rule: which hosts' SMT penalty is far from that of
//! the other hosts with the same CPU model.
//!
//! Hosts of one model that place threads the same way pay the same penalty
//! for sharing a core, give or take the gate's noise; one that does not is
//! set up differently (SMT off in the firmware, a hypervisor that pins
//! vCPUs otherwise, a noisy neighbour). Per model, over the hosts with a
//! measured penalty: the median, and the median absolute deviation (MAD),
//! which one wild host cannot drag along as it would a mean and standard
//! deviation. A host is an outlier when
//!
//! ```text
//! |penalty − median| > max(SIGMAS × MAD_TO_SIGMA × MAD, FLOOR)
//! ```
//!
//! and only in a model with at least [`MIN_PEERS`] such hosts.

use super::stats::median;
use serde::Serialize;
use std::collections::HashMap;

/// Fewest hosts of one model with a measured penalty for the rule to
/// apply: of two hosts that disagree, neither is the odd one out.
pub const MIN_PEERS: usize = 3;

/// How many standard deviations away is far: three, which leaves 0.3 % of
/// normally spread honest hosts outside, so a fleet of a thousand flags
/// about three by chance, not dozens.
pub const SIGMAS: f64 = 3.0;

/// MAD × 1.4826 estimates the standard deviation of normally spread values.
pub const MAD_TO_SIGMA: f64 = 1.4826;

/// The least distance called far, as a fraction: 10 percentage points.
/// Identical hosts measure nearly identical penalties, so their MAD is
/// near 0 and a point of noise would flag one. Ten points is well above
/// that noise (the gate's repetitions vary by a few percent), and below the
/// gate's default 15 % threshold, so a host whose penalty moved far enough
/// to change its verdict is caught.
pub const FLOOR: f64 = 0.10;

/// Why one host's penalty is an outlier among its model's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PenaltyOutlier {
    /// The median penalty of the model's hosts (a fraction), this one included.
    pub median: f64,
    /// How far from it a penalty may be: max(3 × 1.4826 × MAD, FLOOR).
    pub bound: f64,
    /// Hosts of the model with a measured penalty, this one included.
    pub peers: usize,
}

/// For each `(model, penalty)`, in order, whether it is an outlier among
/// those of the same model. A penalty that is not a finite number takes no
/// part.
pub fn penalty_outliers(penalties: &[(&str, f64)]) -> Vec<Option<PenaltyOutlier>> {
    let mut by_model: HashMap<&str, Vec<f64>> = HashMap::new();
    for &(model, penalty) in penalties.iter().filter(|(_, p)| p.is_finite()) {
        by_model.entry(model).or_default().push(penalty);
    }
    let rules: HashMap<&str, PenaltyOutlier> = by_model
        .into_iter()
        .filter(|(_, values)| values.len() >= MIN_PEERS)
        .map(|(model, values)| {
            let centre = median(&values);
            let deviations: Vec<f64> = values.iter().map(|v| (v - centre).abs()).collect();
            let bound = (SIGMAS * MAD_TO_SIGMA * median(&deviations)).max(FLOOR);
            (
                model,
                PenaltyOutlier {
                    median: centre,
                    bound,
                    peers: values.len(),
                },
            )
        })
        .collect();
    penalties
        .iter()
        .map(|&(model, penalty)| {
            let rule = rules.get(model)?;
            ((penalty - rule.median).abs() > rule.bound).then(|| rule.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flagged(penalties: &[(&str, f64)]) -> Vec<usize> {
        penalty_outliers(penalties)
            .iter()
            .enumerate()
            .filter_map(|(i, o)| o.as_ref().map(|_| i))
            .collect()
    }

    #[test]
    fn the_odd_host_of_a_model_is_flagged() {
        let fleet = [
            ("epyc", 0.30),
            ("epyc", 0.31),
            ("epyc", 0.29),
            ("epyc", 0.02),
            ("xeon", 0.60),
        ];
        assert_eq!(flagged(&fleet), [3]);
        let rule = penalty_outliers(&fleet)[3].clone().unwrap();
        assert!((rule.median - 0.295).abs() < 1e-12);
        assert_eq!(rule.peers, 4);
        // MAD 0.01: 3 × 1.4826 × 0.01 < 10 points, so the floor decides.
        assert_eq!(rule.bound, FLOOR);
    }

    #[test]
    fn the_floor_keeps_identical_hosts_from_flagging_noise() {
        // MAD 0: any difference would be "infinitely many sigmas" away.
        let fleet = [("m", 0.30), ("m", 0.30), ("m", 0.30), ("m", 0.35)];
        assert!(flagged(&fleet).is_empty());
        let fleet = [("m", 0.30), ("m", 0.30), ("m", 0.30), ("m", 0.41)];
        assert_eq!(flagged(&fleet), [3]);
    }

    #[test]
    fn a_widely_spread_model_widens_its_bound() {
        // MAD 0.2: bound 3 × 1.4826 × 0.2 ≈ 0.89; the 1.0 host is inside it.
        let fleet = [("m", 0.0), ("m", 0.2), ("m", 0.4), ("m", 0.6), ("m", 1.0)];
        assert!(flagged(&fleet).is_empty());
        assert!(flagged(&[("m", 0.0), ("m", 0.2), ("m", 0.4), ("m", 2.0)]) == [3]);
    }

    #[test]
    fn too_few_peers_or_no_number_decide_nothing() {
        assert!(flagged(&[("m", 0.0), ("m", 0.9)]).is_empty());
        assert!(flagged(&[("a", 0.0), ("a", 0.0), ("b", 0.9), ("b", 0.9)]).is_empty());
        assert_eq!(
            flagged(&[("m", 0.1), ("m", 0.1), ("m", f64::NAN), ("m", 0.9)]),
            [3]
        );
    }
}
