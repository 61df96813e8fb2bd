//! Keeps the kernel's perf hooks in the scheduler switched on for the life
//! of the process, so that no repetition's counters switch them.
//!
//! The scheduler calls into perf only behind static keys: one per software
//! event type (`perf_swevent_enabled`: context switches, migrations, the
//! dummy event) and one for any per-task or switch-recording event
//! (`perf_sched_events`). The first such event the kernel opens turns its
//! key on and the last one closed turns it off, and each turn rewrites the
//! scheduler's code in place (`text_poke_bp`: an int3 written over the
//! branch, then three rounds of interrupts to every online CPU to
//! serialise them). Opened per repetition, as the studies' counters are,
//! that is two rewrites and six rounds of interrupts on every CPU, the
//! measured ones included, per repetition.
//!
//! It also stopped a guest dead: under QEMU's TCG (7.2, two vCPUs), about
//! one boot in 25 of `run --arms node:0,node:1 -- sh -c …` froze with vCPU
//! 0 waiting in `smp_call_function_many_cond` for vCPU 1, and vCPU 1, its
//! interrupts off, at a branch the rewrite was patching in `__schedule`
//! (its RIP the same for three seconds; both QEMU threads busy; no kernel
//! message for 85 s, until the boot timed out).
//!
//! [`hold`] opens one disabled event of each kind on the calling thread,
//! once per process: the keys turn on there, before anything is measured,
//! and off at exit. A disabled event counts nothing and costs the thread's
//! own switches a check of its (empty) list of enabled events.

use std::sync::OnceLock;

use perf_event::events::Software;
use perf_event::{Builder, Counter};

/// The events that hold the keys, never read; `None` where the kernel
/// refused them (then it refuses the studies' own events too, and nothing
/// turns a key).
static HELD: OnceLock<Option<Vec<Counter>>> = OnceLock::new();

/// Turns the scheduler's perf keys on for the rest of the process, once:
/// every measuring command calls it before it probes
/// (`commands::shared::Source::probe_to_measure`), so before any counter
/// opens. A refusal is not an error: the studies report their own.
pub fn hold() {
    HELD.get_or_init(|| {
        let open = |event: Software, switches: bool| {
            Builder::new(event)
                .observe_self()
                .any_cpu()
                .include_kernel()
                .enabled(false)
                .context_switch(switches)
                .build()
        };
        [
            open(Software::CONTEXT_SWITCHES, false),
            open(Software::CPU_MIGRATIONS, false),
            // The dummy event's own key, and with `context_switch` the
            // count of switch-recording events: the recorder's kind.
            open(Software::DUMMY, true),
        ]
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .ok()
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Holding twice opens once; a refusal (an unprivileged run) is quiet.
    #[test]
    fn the_keys_are_held_once_per_process() {
        hold();
        let first = HELD.get().map(|held| held.as_ref().map(Vec::len));
        hold();
        assert_eq!(HELD.get().map(|held| held.as_ref().map(Vec::len)), first);
        assert!(matches!(first, Some(None | Some(3))));
    }
}
