//! `--csv`: for `gate` and `run` one row per worker per repetition,
//! warm-ups included (marked); for `topology` one row per CPU.

use crate::measure::RepSample;
use crate::probe::Topology;
use std::fmt::Write;

/// The columns of a samples CSV.
pub const HEADER: &str = "arm,rep,warmup,worker,pinned_cpu,cpu_start,cpu_end,bytes,busy_ns,tsc_ticks,\
barrier_wait_ns,cycles,instructions,ref_cycles,l1i_misses,task_clock_ns,context_switches,\
cpu_migrations,time_enabled_ns,time_running_ns,checksum";

/// Renders every worker sample; absent counters are empty fields.
pub fn samples(samples: &[RepSample]) -> String {
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

/// The columns of a topology CSV.
pub const TOPOLOGY_HEADER: &str = "cpu,core,package,die,cluster,class,siblings,allowed,apic_id";

/// One row per online CPU; the sibling list is quoted (it holds commas).
pub fn topology(topology: &Topology) -> String {
    let opt = |v: Option<usize>| v.map(|v| v.to_string()).unwrap_or_default();
    let mut out = String::from(TOPOLOGY_HEADER);
    out.push('\n');
    for cpu in &topology.cpus {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},\"{}\",{},{}",
            cpu.cpu,
            cpu.core,
            cpu.package,
            opt(cpu.die),
            opt(cpu.cluster),
            cpu.class,
            cpu.siblings,
            cpu.allowed,
            cpu.apic_id.map(|a| format!("{a:#x}")).unwrap_or_default()
        );
    }
    out
}
