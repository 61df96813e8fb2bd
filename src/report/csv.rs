//! `--csv`: for `gate` and `run` one row per worker per repetition,
//! warm-ups included (marked); for `hybrid` the same with the items each
//! worker did; for `pairs` one row per comparison; for `topology` one row
//! per CPU; for `observe` one row per stretch of a thread on a CPU.

use crate::judge::observe::ObserveJudgement;
use crate::judge::pairs::ComparisonRecord;
use crate::judge::stats::median;
use crate::measure::{RepSample, WorkerSample};
use crate::probe::Topology;
use std::fmt::Write;

/// The columns of a samples CSV.
pub const HEADER: &str = "arm,rep,warmup,worker,pinned_cpu,cpu_start,cpu_end,bytes,busy_ns,tsc_ticks,\
barrier_wait_ns,cycles,instructions,ref_cycles,l1i_misses,task_clock_ns,context_switches,\
cpu_migrations,time_enabled_ns,time_running_ns,checksum";

/// Renders every worker sample; absent counters are empty fields.
pub fn samples(samples: &[RepSample]) -> String {
    worker_rows(HEADER, samples, |_, w| {
        let c = &w.counters;
        format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{:#018x}",
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
        )
    })
}

/// The columns of a `hybrid` CSV.
pub const HYBRID_HEADER: &str = "arm,rep,warmup,worker,pinned_cpu,cpu_start,cpu_end,items,stolen,\
items_per_cpu,busy_ns,idle_ns,wall_ns,tsc_ticks,cycles,instructions,task_clock_ns,cpu_migrations";

/// One row per worker per repetition of a `hybrid` study: the items it did
/// (and on which CPUs, "cpu:items" joined by ";"), its busy time, and its
/// idle time (the repetition's wall time minus its busy time).
pub fn hybrid(samples: &[RepSample]) -> String {
    worker_rows(HYBRID_HEADER, samples, |rep, w| {
        let items = w.items.clone().unwrap_or_default();
        let per_cpu: Vec<String> = items
            .per_cpu
            .iter()
            .map(|c| format!("{}:{}", c.cpu, c.items))
            .collect();
        format!(
            "{},{},{},{},{},{},{},{},{},{},{}",
            items.items,
            items.stolen,
            per_cpu.join(";"),
            w.busy_ns,
            rep.wall_ns.saturating_sub(w.busy_ns),
            rep.wall_ns,
            w.tsc_ticks,
            opt(w.counters.cycles),
            opt(w.counters.instructions),
            w.counters.task_clock_ns,
            w.counters.cpu_migrations,
        )
    })
}

/// `header`, then one line per worker sample: where it ran (arm, rep,
/// warmup, worker, pinned_cpu, cpu_start, cpu_end), then `rest`'s columns.
fn worker_rows(
    header: &str,
    samples: &[RepSample],
    rest: impl Fn(&RepSample, &WorkerSample) -> String,
) -> String {
    let mut out = format!("{header}\n");
    for rep in samples {
        for w in &rep.workers {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{}",
                rep.arm,
                rep.rep,
                rep.warmup,
                w.worker,
                w.pinned_cpu.map(|c| c.to_string()).unwrap_or_default(),
                w.cpu_start,
                w.cpu_end,
                rest(rep, w)
            );
        }
    }
    out
}

/// An optional value as a CSV field, unformatted: empty where there is none.
pub fn opt(value: Option<impl ToString>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

/// Text as a CSV field: quoted, its quotes doubled.
pub fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// The columns of a topology CSV.
pub const TOPOLOGY_HEADER: &str = "cpu,core,package,die,cluster,class,siblings,allowed,apic_id";

/// One row per online CPU; the sibling list is quoted (it holds commas).
pub fn topology(topology: &Topology) -> String {
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

/// The columns of a `pairs` CSV: costs are the probe worker's per byte on
/// the result's clock; CPU sets in list form, quoted.
pub const COMPARISONS_HEADER: &str = "comparison,probe,against,outcome,penalty,ci95_low,ci95_high,\
penalty_of_medians,reps,alone_median,loaded_median,excluded_reps,seconds";

/// One row per comparison, numbers unformatted.
pub fn comparisons(comparisons: &[ComparisonRecord]) -> String {
    let middle = |costs: &[f64]| (!costs.is_empty()).then(|| median(costs));
    let mut out = String::from(COMPARISONS_HEADER);
    out.push('\n');
    for c in comparisons {
        let e = c.estimate.as_ref();
        let _ = writeln!(
            out,
            "{},{},\"{}\",{},{},{},{},{},{},{},{},{},{}",
            c.index,
            c.comparison.probe,
            c.comparison.against,
            c.outcome.as_str(),
            opt(e.map(|e| e.penalty)),
            opt(e.map(|e| e.ci95.low)),
            opt(e.map(|e| e.ci95.high)),
            opt(e.map(|e| e.penalty_of_medians)),
            e.map_or(0, |e| e.reps),
            opt(middle(&c.alone_costs)),
            opt(middle(&c.loaded_costs)),
            c.excluded.len(),
            c.seconds
        );
    }
    out
}

/// The columns of an `observe` CSV: times are CLOCK_MONOTONIC ms since
/// the recording began, to the nanosecond; where the CPU is comes from the
/// topology (empty when it does not know the CPU).
pub const OBSERVE_HEADER: &str = "tid,pid,comm,cpu,package,core,class,start_ms,end_ms,ms";

/// `observe --csv`: one row per stretch of a thread on a CPU, the busiest
/// thread first, each thread's stretches in time order.
pub fn observe(judged: &ObserveJudgement) -> String {
    let mut out = String::from(OBSERVE_HEADER);
    out.push('\n');
    for thread in &judged.threads {
        for interval in &thread.intervals {
            let place = judged.cpus.iter().find(|c| c.cpu == interval.cpu);
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{:.6},{:.6},{:.6}",
                thread.tid,
                thread.pid,
                quoted(&thread.comm),
                interval.cpu,
                opt(place.and_then(|p| p.package)),
                opt(place.and_then(|p| p.core)),
                opt(place.map(|p| p.class)),
                interval.start_ms,
                interval.end_ms,
                interval.end_ms - interval.start_ms
            );
        }
    }
    out
}
