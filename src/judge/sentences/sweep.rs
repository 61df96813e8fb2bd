//! The sentence a `sweep` document keeps, made from what the study
//! decided (the view shows it first; scripts read it from the JSON).

use crate::units::{DASH, with_interval};

use crate::judge::sweep::Gain;
use crate::plan::sweep::Added;

use crate::judge::sweep::Knee;
use crate::judge::sweep::SweepJudgement;
use crate::units::Fixed;
use crate::units::count;

/// How a user turns an unclear knee into a clear answer.
pub const MORE_EVIDENCE: &str = "noise: more --reps, or a quieter machine, decide it";

pub fn knee_sentence(knee: &Knee, judged: &SweepJudgement) -> String {
    let fraction = judged.knee_fraction;
    let interval = judged
        .steps
        .iter()
        .find(|s| s.workers == knee.workers)
        .map(|s| gain(&s.marginal_gain))
        .unwrap_or_else(|| format!("{:.2}", Fixed(knee.marginal_gain)));
    let sentence = format!(
        "at {} the gain falls to {interval} of the first CPU (below {fraction:.2}): added {}",
        count(knee.workers, "worker"),
        added_text(&knee.added)
    );
    if knee.clear {
        sentence
    } else {
        format!(
            "{sentence}; unclear: the interval reaches {fraction:.2}, or there is none under six \
             rounds ({MORE_EVIDENCE})"
        )
    }
}

/// The sentence printed first: the largest step's speedup and efficiency,
/// and the first knee.
pub fn sentence(judged: &SweepJudgement) -> String {
    let Some(last) = judged.steps.iter().rev().find(|s| s.speedup.is_some()) else {
        return "nothing measured: no round completed".into();
    };
    let speedup = last.speedup.as_ref().map_or(0.0, |s| s.value);
    let ceiling = last.ceiling.map_or_else(String::new, |c| {
        format!(
            " (ceiling {:.2}, {:.0} % of it)",
            Fixed(c),
            speedup / c * 100.0
        )
    });
    let knee = match judged.knees.first() {
        Some(k) if k.clear => format!("first knee at {}: {}", k.workers, added_text(&k.added)),
        Some(k) => format!(
            "maybe a knee at {} (unclear: noise): {}",
            k.workers,
            added_text(&k.added)
        ),
        None if judged.unclear_steps.is_empty() => "no knee".to_string(),
        None => "no clear knee (noise)".to_string(),
    };
    format!(
        "sweep: with {}, {:.2}× the first CPU alone{ceiling}; {knee}",
        count(last.workers, "worker"),
        Fixed(speedup)
    )
}

/// A marginal gain with its interval ([`with_interval`]).
pub fn gain(g: &Option<Gain>) -> String {
    with_interval(g.as_ref().map(|g| (g.value, g.ci95_low, g.ci95_high)))
}

/// "new core of class performance", joined for a step that added several.
pub fn added_text(added: &[Added]) -> String {
    match added {
        [] => DASH.into(),
        [one] => one.describe(),
        several => several
            .iter()
            .map(Added::describe)
            .collect::<Vec<_>>()
            .join("; "),
    }
}
