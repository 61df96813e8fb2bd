//! Relative gaps and low percentiles, shared by the judges that split
//! measured latencies into classes (`latency`'s domains, `memory`'s
//! plateaus): no nanosecond value is fixed anywhere, so one rule reads a
//! laptop, a server and a guest.

use serde::{Deserialize, Serialize};

/// Two sorted latencies at least this ratio apart lie in different
/// clusters: a relative gap, so it holds at every scale.
pub const MIN_GAP_RATIO: f64 = 1.5;

/// A gap in the sorted latencies wide enough to separate two clusters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Gap {
    pub below_ns: f64,
    pub above_ns: f64,
    /// `above_ns / below_ns`, at least [`MIN_GAP_RATIO`].
    #[schemars(range(min = 1.5))]
    pub ratio: f64,
}

impl Gap {
    /// The gap between `below` and `above` when they lie in different
    /// clusters ([`apart`]).
    pub fn between(below: f64, above: f64) -> Option<Gap> {
        apart(below, above).then(|| Gap {
            below_ns: below,
            above_ns: above,
            ratio: above / below,
        })
    }
}

/// Two latencies, `below` ≤ `above`, lie in different clusters.
pub fn apart(below: f64, above: f64) -> bool {
    above >= below * MIN_GAP_RATIO
}

/// The nearest-rank `p` percentile of `sorted`; `None` when empty.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let rank = (p * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.saturating_sub(1).min(last)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let sorted: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&sorted, 0.10), Some(1.0));
        assert_eq!(percentile(&sorted, 0.90), Some(9.0));
        assert_eq!(percentile(&sorted, 0.0), Some(1.0));
        assert_eq!(percentile(&[], 0.5), None);
    }

    #[test]
    fn gaps_are_relative() {
        assert!(apart(2.0, 3.0));
        assert!(!apart(200.0, 299.0));
        assert_eq!(Gap::between(2.0, 4.0).map(|g| g.ratio), Some(2.0));
        assert_eq!(Gap::between(2.0, 2.5), None);
    }
}
