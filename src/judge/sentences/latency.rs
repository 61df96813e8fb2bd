//! The sentence a `latency` document keeps, made from what the study
//! decided (the view shows it first; scripts read it from the JSON).

use crate::judge::checks::Check;
use crate::judge::checks::CheckStatus;
use crate::judge::latency::LatencyJudgement;
use crate::judge::pairs::MapVerdict;
use crate::measure::stop::StopSignal;
use crate::units::nanos;

/// The plain sentence the view and the JSON open with.
pub fn sentence(
    judgement: &LatencyJudgement,
    control: Option<&Check>,
    pinning: &Check,
    budget_exhausted: bool,
    stopped: Option<StopSignal>,
) -> String {
    if let Some(signal) = stopped {
        return format!(
            "stopped by {} before every pair was measured: no verdict",
            signal.name()
        );
    }
    let classes: Vec<String> = judgement
        .clusters
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c.class.as_str(),
                c.low_ns.map_or_else(|| "no progress".into(), nanos)
            )
        })
        .collect();
    let found = format!(
        "{} latency {} found ({})",
        judgement.clusters.len(),
        if judgement.clusters.len() == 1 {
            "class"
        } else {
            "classes"
        },
        classes.join(", ")
    );
    if pinning.status != CheckStatus::Passed {
        return format!("{found}: inconclusive, pinning failed: {}", pinning.detail);
    }
    match control.filter(|c| c.status != CheckStatus::Passed) {
        Some(control) => {
            return format!(
                "{found}: inconclusive, the same-CPU control did not pass: {}",
                control.detail
            );
        }
        None if control.is_none() => {
            return format!("{found}: inconclusive, the same-CPU control measured nothing");
        }
        None => {}
    }
    if budget_exhausted {
        return format!("{found}: inconclusive, the time budget ran out before every pair");
    }
    let differing: Vec<&str> = judgement
        .levels
        .iter()
        .filter(|l| l.verdict == MapVerdict::Differ)
        .map(|l| l.level.as_str())
        .collect();
    match judgement.verdict {
        MapVerdict::Agree => format!("{found}: the measured domains agree with the published ones"),
        MapVerdict::Differ => format!(
            "{found}: the measured domains differ from the published ones at {}",
            differing.join(", ")
        ),
        MapVerdict::Inconclusive => format!("{found}: inconclusive"),
    }
}
