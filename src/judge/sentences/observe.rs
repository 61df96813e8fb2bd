//! The sentence a `observe` document keeps, made from what the study
//! decided (the view shows it first; scripts read it from the JSON).

use crate::judge::observe::ObserveJudgement;
use crate::units::Fixed;

/// The plain sentence printed first; `target` names what was observed
/// ("2 mul threads", the command).
pub fn sentence(target: &str, judged: &ObserveJudgement) -> String {
    let classes: Vec<String> = judged
        .classes
        .iter()
        .filter(|c| c.ms > 0.0)
        .map(|c| format!("{:.1} % on {}", Fixed(c.share * 100.0), c.class))
        .collect();
    let moves = judged.migrations.len();
    let mut text = format!(
        "{} ran {:.2} s: {:.1} ms on CPUs in {} thread{}, {}; {} migration{}.",
        target,
        Fixed(judged.wall_ms / 1000.0),
        Fixed(judged.reconciliation.residency_ms),
        judged.threads.len(),
        if judged.threads.len() == 1 { "" } else { "s" },
        if classes.is_empty() {
            "nothing on any CPU".into()
        } else {
            classes.join(", ")
        },
        moves,
        if moves == 1 { "" } else { "s" },
    );
    let reconciliation = &judged.reconciliation;
    if did_not_run(judged) {
        text += " It did not run while it was observed: no time on any CPU, none on task-clock.";
    } else if judged.valid && reconciliation.handovers > 0 {
        text += &format!(
            " Σ residency plus {:.1} ms of hand-overs between its threads matches task-clock within {:.2} %.",
            Fixed(reconciliation.handover_ms),
            Fixed(reconciliation.difference * 100.0)
        );
    } else if judged.valid {
        text += &format!(
            " Σ residency matches task-clock within {:.2} %.",
            Fixed(reconciliation.difference * 100.0)
        );
    } else {
        text += &format!(" INVALID: {}.", judged.problems.join("; "));
    }
    text
}

/// A valid observation of a target that never ran (it slept): zero time,
/// in its records and on task-clock alike.
pub fn did_not_run(judged: &ObserveJudgement) -> bool {
    judged.valid && judged.reconciliation.residency_ms == 0.0
}
