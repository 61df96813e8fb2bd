//! The sentences naming the clock every cost in an output came from, what
//! the PMU could and could not count, and the notes block every result
//! ends with.

use crate::judge::warnings::Warning;
use crate::measure::{HardwareCounters, MeasurementSetup};
use crate::report::blocks::Blocks;

/// The "Notes" block of a study: one "! …" line per warning, but for the
/// hypervisor notes ([`Warning::said_by_the_study`]); empty without any.
pub fn notes_block(warnings: &[Warning]) -> Blocks {
    let kept: Vec<&Warning> = warnings.iter().filter(|w| !w.said_by_the_study()).collect();
    notes_of(&kept)
}

/// The "Notes" block with every warning: `topology`'s, which measures
/// nothing, so its hypervisor note is the only place that says it.
pub fn all_notes(warnings: &[Warning]) -> Blocks {
    notes_of(&warnings.iter().collect::<Vec<_>>())
}

fn notes_of(warnings: &[&Warning]) -> Blocks {
    let mut blocks = Blocks::new();
    if warnings.is_empty() {
        return blocks;
    }
    blocks.gap().heading("Notes");
    for warning in warnings {
        blocks.line(format!("  ! {warning}"), 4);
    }
    blocks
}

/// The sentence naming the clock every cost in this output came from.
pub fn clock_note(setup: &MeasurementSetup) -> String {
    match &setup.hardware_counters {
        HardwareCounters::Available { .. } => {
            "costs are core cycles per byte, from each worker's own cycles counter".into()
        }
        HardwareCounters::Unavailable { reason } => format!(
            "costs are {} per byte (fallback clock): {reason}",
            setup.tick_clock.unit()
        ),
    }
}

/// One line per hardware event the PMU does not count (with the reason), and
/// one for a two-group layout; empty when everything counts, or when no PMU
/// counted at all (the clock note already says so).
pub fn counter_notes(setup: &MeasurementSetup) -> Vec<String> {
    let HardwareCounters::Available {
        events,
        layout_reason,
        ..
    } = &setup.hardware_counters
    else {
        return Vec::new();
    };
    let mut notes: Vec<String> = events
        .iter()
        .filter(|status| !status.counted)
        .map(|status| {
            format!(
                "{} unavailable: {}",
                status.event,
                status.reason.as_deref().unwrap_or("not counted")
            )
        })
        .collect();
    notes.extend(
        layout_reason
            .iter()
            .map(|why| format!("counter groups: {why}")),
    );
    notes
}
