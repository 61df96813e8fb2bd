//! `run --csv`: one row per worker per repetition, warm-ups included (marked).

use crate::measure::RepSample;
use std::fmt::Write;

pub const HEADER: &str = "arm,rep,warmup,worker,pinned_cpu,cpu_start,cpu_end,bytes,busy_ns,tsc_ticks,\
barrier_wait_ns,cycles,instructions,ref_cycles,l1i_misses,task_clock_ns,context_switches,\
cpu_migrations,time_enabled_ns,time_running_ns,checksum";

/// Renders every worker sample; absent counters are empty fields.
pub fn render(samples: &[RepSample]) -> String {
    let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
    let mut out = String::from(HEADER);
    out.push('\n');
    for rep in samples {
        for w in &rep.workers {
            let c = &w.counters;
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:#018x}",
                rep.arm,
                rep.rep,
                rep.warmup,
                w.worker,
                w.pinned_cpu.map(|c| c.to_string()).unwrap_or_default(),
                w.cpu_start,
                w.cpu_end,
                w.bytes,
                w.busy_ns,
                w.tsc_ticks,
                w.barrier_wait_ns,
                opt(c.cycles),
                opt(c.instructions),
                opt(c.ref_cycles),
                opt(c.l1i_misses),
                c.task_clock_ns,
                c.context_switches,
                c.cpu_migrations,
                c.time_enabled_ns,
                c.time_running_ns,
                w.checksum
            );
        }
    }
    out
}
