//! The sentence a `pairs` document keeps, made from what the study
//! decided (the view shows it first; scripts read it from the JSON).

use crate::judge::checks::Check;
use crate::judge::checks::CheckStatus;
use crate::judge::pairs::MapJudgement;
use crate::judge::pairs::MapVerdict;
use crate::judge::pairs::PairRelation;
use crate::judge::pairs::map_text;
use crate::measure::stop::StopSignal;
use crate::units::count;

/// The one line a sysadmin reads first.
pub fn sentence(
    verdict: MapVerdict,
    map: &MapJudgement,
    control: Option<&Check>,
    budget_exhausted: bool,
    stopped: Option<StopSignal>,
) -> String {
    let pairs =
        |relation: PairRelation| map.pairs.iter().filter(|p| p.relation == relation).count();
    let maps = format!(
        "measured {}, published {}",
        map_text(&map.measured),
        map_text(&map.published)
    );
    if let Some(signal) = stopped {
        return format!(
            "stopped by {} before the search finished: no verdict",
            signal.name()
        );
    }
    if let Some(reason) = &map.published_unknown {
        return format!(
            "measured {}; the published map is unknown ({reason}): nothing to compare it with, \
             so no verdict on the kernel's map",
            map_text(&map.measured)
        );
    }
    if let Some(control) = control.filter(|c| c.status != CheckStatus::Passed) {
        return format!(
            "{maps}: inconclusive, the same-CPU control did not pass: {}",
            control.detail
        );
    }
    match verdict {
        MapVerdict::Agree => match pairs(PairRelation::Agreed) {
            0 => format!("{maps}: the maps agree: no two CPUs share a core"),
            agreed => format!(
                "{maps}: the maps agree ({} confirmed)",
                count(agreed, "sibling pair")
            ),
        },
        MapVerdict::Differ => {
            let mut parts = Vec::new();
            let (fake, hidden) = (pairs(PairRelation::Fake), pairs(PairRelation::Hidden));
            if fake > 0 {
                parts.push(format!(
                    "{} published as siblings measured apart (fake)",
                    count(fake, "pair")
                ));
            }
            if hidden > 0 {
                parts.push(format!(
                    "{} not published as siblings measured sharing (hidden)",
                    count(hidden, "pair")
                ));
            }
            format!("{maps}: the maps differ: {}", parts.join(", "))
        }
        MapVerdict::Inconclusive => {
            let why = if budget_exhausted {
                "the time budget ran out first; raise --time-budget"
            } else {
                "raise --max-reps, lengthen --rep-ms, or quiet the machine"
            };
            format!(
                "{maps}: inconclusive, {} undecided; {why}",
                count(pairs(PairRelation::Inconclusive), "pair")
            )
        }
    }
}
