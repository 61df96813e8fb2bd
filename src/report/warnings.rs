//! The sentence naming the clock every cost in an output came from.

use crate::measure::HardwareCounters;

/// The sentence naming the clock every cost in this output came from.
pub fn clock_note(hardware: &HardwareCounters) -> String {
    match hardware {
        HardwareCounters::Available { .. } => {
            "costs are core cycles per byte, from each worker's own cycles counter".into()
        }
        HardwareCounters::Unavailable { reason } => {
            format!("costs are TSC ticks per byte (fallback clock): {reason}")
        }
    }
}
