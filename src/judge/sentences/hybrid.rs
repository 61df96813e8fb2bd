//! The sentence a `hybrid` document keeps, made from what the study
//! decided (the view shows it first; scripts read it from the JSON).

use crate::judge::hybrid::ClassVerdict;
use crate::judge::hybrid::SchemeStats;

/// The sentence printed first: each scheme's speedup and its share of the
/// ceiling, then whether the measured classes are the published ones.
pub fn sentence(schemes: &[SchemeStats], ceiling: Option<f64>, classes: ClassVerdict) -> String {
    let reached: Vec<String> = schemes
        .iter()
        .filter_map(|s| {
            let speedup = s.speedup.as_ref()?.value;
            let of_ceiling = s
                .of_ceiling
                .map(|f| format!(", {:.0} % of the ceiling", f * 100.0))
                .unwrap_or_default();
            Some(format!("{} {speedup:.2}×{of_ceiling}", s.name()))
        })
        .collect();
    if reached.is_empty() {
        return "nothing measured: no round completed".into();
    }
    let ceiling = ceiling.map_or_else(
        || "no ceiling (a worker CPU has no measured speed)".into(),
        |c| format!("ceiling {c:.2} fastest-class CPUs"),
    );
    let classes = match classes {
        ClassVerdict::Agree => "measured classes agree with the published ones",
        ClassVerdict::Differ => "measured classes DIFFER from the published ones",
        ClassVerdict::Inconclusive => "measured classes inconclusive",
    };
    format!("{ceiling}; {}; {classes}", reached.join("; "))
}
