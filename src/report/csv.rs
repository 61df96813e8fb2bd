//! `--csv`: for `gate` and `run` one row per worker per repetition,
//! warm-ups included (marked); for `hybrid` the same with the items each
//! worker did; for `pairs` one row per comparison; for `topology` one row
//! per CPU; for `observe` one row per stretch of a thread on a CPU; for
//! `run -- COMMAND` one row per repetition of the command.

use crate::judge::command::multiplexing_offence;
use crate::judge::latency::PairLatency;
use crate::judge::observe::ObserveJudgement;
use crate::judge::pairs::ComparisonRecord;
use crate::judge::stats::median;
use crate::measure::command::{CommandRep, TreeHardware};
use crate::measure::{RepSample, WorkerSample};
use crate::probe::Topology;
use crate::saved::{
    CommandResult, GateResult, HybridResult, LatencyResult, MemoryResult, ObserveResult,
    PairsResult, RunResult, SweepResult, TopologyResult,
};
use serde::Serialize;

/// `rows` as CSV, the header first: `R`'s field names, so a header cannot
/// drift from its rows, written even when there is no row. Fields are
/// written as given and never quoted by the writer: the few columns that
/// are always quoted (CPU lists, command names) come quoted ([`quoted`]),
/// and floats come formatted as strings, as Rust prints them.
pub fn rows<R: Serialize + Default>(rows: impl IntoIterator<Item = R>) -> String {
    let writer = || {
        csv::WriterBuilder::new()
            .quote_style(csv::QuoteStyle::Never)
            .from_writer(Vec::new())
    };
    let write = |out: &mut csv::Writer<Vec<u8>>, row: R| {
        out.serialize(row)
            .expect("a row of plain fields serializes into memory");
    };
    let mut out = writer();
    let mut empty = true;
    for row in rows {
        write(&mut out, row);
        empty = false;
    }
    let bytes = out.into_inner().expect("a CSV in memory flushes");
    let text = String::from_utf8(bytes).expect("CSV of UTF-8 fields is UTF-8");
    if !empty {
        return text;
    }
    let mut header_only = writer();
    write(&mut header_only, R::default());
    let bytes = header_only.into_inner().expect("a CSV in memory flushes");
    let text = String::from_utf8(bytes).expect("CSV of UTF-8 fields is UTF-8");
    let end = text.find('\n').map_or(text.len(), |newline| newline + 1);
    text[..end].to_string()
}

/// `R`'s CSV header: its field names, comma-separated, without the newline.
pub(crate) fn header<R: Serialize + Default>() -> String {
    rows(std::iter::empty::<R>()).trim_end().to_string()
}

/// A samples CSV row: one worker of one repetition; absent counters are
/// empty fields.
#[derive(Serialize, Default)]
struct SampleRow {
    arm: &'static str,
    rep: usize,
    warmup: bool,
    worker: usize,
    pinned_cpu: Option<u32>,
    cpu_start: u32,
    cpu_end: u32,
    bytes: u64,
    busy_ns: u64,
    tsc_ticks: u64,
    barrier_wait_ns: u64,
    cycles: Option<u64>,
    instructions: Option<u64>,
    ref_cycles: Option<u64>,
    l1i_misses: Option<u64>,
    task_clock_ns: u64,
    context_switches: u64,
    cpu_migrations: u64,
    time_enabled_ns: u64,
    time_running_ns: u64,
    /// `0x` and 16 hex digits.
    checksum: String,
}

/// Renders every worker sample, warm-ups included (marked).
pub fn samples(samples: &[RepSample]) -> String {
    rows(workers(samples).map(|(rep, w)| {
        let c = &w.counters;
        SampleRow {
            arm: rep.arm.into(),
            rep: rep.rep,
            warmup: rep.warmup,
            worker: w.worker,
            pinned_cpu: w.pinned_cpu,
            cpu_start: w.cpu_start,
            cpu_end: w.cpu_end,
            bytes: w.bytes,
            busy_ns: w.busy_ns,
            tsc_ticks: w.tsc_ticks,
            barrier_wait_ns: w.barrier_wait_ns,
            cycles: c.cycles,
            instructions: c.instructions,
            ref_cycles: c.ref_cycles,
            l1i_misses: c.l1i_misses,
            task_clock_ns: c.task_clock_ns,
            context_switches: c.context_switches,
            cpu_migrations: c.cpu_migrations,
            time_enabled_ns: c.time_enabled_ns,
            time_running_ns: c.time_running_ns,
            checksum: format!("{:#018x}", w.checksum),
        }
    }))
}

/// A `hybrid` CSV row: one worker of one repetition, with the items it did.
#[derive(Serialize, Default)]
struct HybridRow {
    arm: &'static str,
    rep: usize,
    warmup: bool,
    worker: usize,
    pinned_cpu: Option<u32>,
    cpu_start: u32,
    cpu_end: u32,
    items: u64,
    stolen: u64,
    /// "cpu:items" joined by ";".
    items_per_cpu: String,
    busy_ns: u64,
    /// The repetition's wall time minus the worker's busy time.
    idle_ns: u64,
    /// From the workers' release to this worker's last item done (empty
    /// in files before it was recorded).
    finish_ns: Option<u64>,
    wall_ns: u64,
    tsc_ticks: u64,
    cycles: Option<u64>,
    instructions: Option<u64>,
    task_clock_ns: u64,
    cpu_migrations: u64,
}

/// One row per worker per repetition of a `hybrid` study: the items it did
/// (and on which CPUs), its busy time, and its idle time.
pub fn hybrid(samples: &[RepSample]) -> String {
    rows(workers(samples).map(|(rep, w)| {
        let items = w.items.clone().unwrap_or_default();
        let per_cpu: Vec<String> = items
            .per_cpu
            .iter()
            .map(|c| format!("{}:{}", c.cpu, c.items))
            .collect();
        HybridRow {
            arm: rep.arm.into(),
            rep: rep.rep,
            warmup: rep.warmup,
            worker: w.worker,
            pinned_cpu: w.pinned_cpu,
            cpu_start: w.cpu_start,
            cpu_end: w.cpu_end,
            items: items.items,
            stolen: items.stolen,
            items_per_cpu: per_cpu.join(";"),
            busy_ns: w.busy_ns,
            idle_ns: rep.wall_ns.saturating_sub(w.busy_ns),
            finish_ns: w.finish_ns,
            wall_ns: rep.wall_ns,
            tsc_ticks: w.tsc_ticks,
            cycles: w.counters.cycles,
            instructions: w.counters.instructions,
            task_clock_ns: w.counters.task_clock_ns,
            cpu_migrations: w.counters.cpu_migrations,
        }
    }))
}

/// Every worker sample with its repetition, in order.
fn workers(samples: &[RepSample]) -> impl Iterator<Item = (&RepSample, &WorkerSample)> {
    samples
        .iter()
        .flat_map(|rep| rep.workers.iter().map(move |w| (rep, w)))
}

/// An optional value as a CSV field, unformatted: empty where there is none.
pub fn opt(value: Option<impl ToString>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

/// Text as a CSV field: quoted, its quotes doubled.
pub fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// A topology CSV row: one online CPU; the sibling list is quoted (it
/// holds commas).
#[derive(Serialize, Default)]
struct TopologyRow {
    cpu: u32,
    core: usize,
    package: usize,
    die: Option<usize>,
    cluster: Option<usize>,
    class: String,
    siblings: String,
    allowed: bool,
    /// In hex; empty where there is none.
    apic_id: String,
}

/// One row per online CPU.
pub fn topology(topology: &Topology) -> String {
    rows(topology.cpus.iter().map(|cpu| TopologyRow {
        cpu: cpu.cpu,
        core: cpu.core,
        package: cpu.package,
        die: cpu.die,
        cluster: cpu.cluster,
        class: cpu.class.to_string(),
        siblings: quoted(&cpu.siblings.to_string()),
        allowed: cpu.allowed,
        apic_id: cpu.apic_id.map(|a| format!("{a:#x}")).unwrap_or_default(),
    }))
}

/// A `pairs` CSV row: one comparison. Costs are the probe worker's per
/// byte on the result's clock, numbers unformatted; the CPU set in list
/// form, quoted.
#[derive(Serialize, Default)]
struct ComparisonRow {
    comparison: usize,
    probe: u32,
    against: String,
    outcome: &'static str,
    penalty: String,
    ci95_low: String,
    ci95_high: String,
    penalty_of_medians: String,
    reps: usize,
    alone_median: String,
    loaded_median: String,
    excluded_reps: usize,
    seconds: String,
}

/// One row per comparison.
pub fn comparisons(comparisons: &[ComparisonRecord]) -> String {
    let middle = |costs: &[f64]| (!costs.is_empty()).then(|| median(costs));
    rows(comparisons.iter().map(|c| {
        let e = c.estimate.as_ref();
        ComparisonRow {
            comparison: c.index,
            probe: c.comparison.probe,
            against: quoted(&c.comparison.against.to_string()),
            outcome: c.outcome.into(),
            penalty: opt(e.map(|e| e.penalty)),
            ci95_low: opt(e.map(|e| e.ci95.low)),
            ci95_high: opt(e.map(|e| e.ci95.high)),
            penalty_of_medians: opt(e.map(|e| e.penalty_of_medians)),
            reps: e.map_or(0, |e| e.reps),
            alone_median: opt(middle(&c.alone_costs)),
            loaded_median: opt(middle(&c.loaded_costs)),
            excluded_reps: c.excluded.len(),
            seconds: c.seconds.to_string(),
        }
    }))
}

/// A `latency` CSV row: one pair (the control's CPUs are the same twice).
/// Latencies are one-way, in nanoseconds; empty without progress.
#[derive(Serialize, Default)]
struct LatencyRow {
    cpu_a: u32,
    cpu_b: u32,
    one_way_ns: String,
    p10_ns: String,
    p90_ns: String,
    samples: usize,
    bounded_samples: usize,
    no_progress_samples: usize,
    pinned: bool,
    /// `--one-per-domain`: the representative whose row it was taken from
    /// (empty for a measured pair).
    inferred_from: Option<u32>,
}

/// `latency --csv`: one row per pair (measured or inferred), the control
/// first.
pub fn latency<'a>(pairs: impl IntoIterator<Item = &'a PairLatency>) -> String {
    rows(pairs.into_iter().map(|p| LatencyRow {
        cpu_a: p.cpus[0],
        cpu_b: p.cpus[1],
        one_way_ns: opt(p.one_way_ns),
        p10_ns: opt(p.p10_ns),
        p90_ns: opt(p.p90_ns),
        samples: p.samples,
        bounded_samples: p.bounded_samples,
        no_progress_samples: p.no_progress_samples,
        pinned: p.pinned,
        inferred_from: p.inferred_from,
    }))
}

/// An `observe` CSV row: one stretch of a thread on a CPU. Times are
/// CLOCK_MONOTONIC ms since the recording began, to the nanosecond; where
/// the CPU is comes from the topology (empty when it does not know the
/// CPU).
#[derive(Serialize, Default)]
struct ObserveRow {
    tid: u32,
    pid: u32,
    /// Quoted.
    comm: String,
    cpu: u32,
    package: Option<usize>,
    core: Option<usize>,
    class: String,
    start_ms: String,
    end_ms: String,
    ms: String,
}

/// `observe --csv`: one row per stretch of a thread on a CPU, the busiest
/// thread first, each thread's stretches in time order.
pub fn observe(judged: &ObserveJudgement) -> String {
    rows(judged.threads.iter().flat_map(|thread| {
        thread.intervals.iter().map(move |interval| {
            let place = judged.cpus.iter().find(|c| c.cpu == interval.cpu);
            ObserveRow {
                tid: thread.tid,
                pid: thread.pid,
                comm: quoted(&thread.comm),
                cpu: interval.cpu,
                package: place.and_then(|p| p.package),
                core: place.and_then(|p| p.core),
                class: opt(place.map(|p| p.class)),
                start_ms: format!("{:.6}", interval.start_ms),
                end_ms: format!("{:.6}", interval.end_ms),
                ms: format!("{:.6}", interval.end_ms - interval.start_ms),
            }
        })
    }))
}

/// A `run -- COMMAND` CSV row: one repetition of the command in one arm.
#[derive(Serialize, Default)]
struct CommandRow {
    arm: String,
    round: usize,
    warmup: bool,
    failed: bool,
    wall_ns: u64,
    task_clock_ns: u64,
    context_switches: u64,
    /// Empty where only rusage counted.
    migrations: String,
    /// The tree's user-space cycles and instructions, summed over its core
    /// PMUs; empty where no PMU counted (or perf refused).
    cycles: String,
    user_instructions: String,
    /// Whether those counters ran less than their enabled time (not
    /// scaled); empty where none counted.
    multiplexed: String,
    /// `exited` or `signaled`, and its code or signal.
    end: String,
    status: i32,
}

/// One row per repetition, warm-ups and kept failures included (marked).
pub fn command(reps: &[CommandRep]) -> String {
    rows(reps.iter().map(|rep| {
        let sample = &rep.sample;
        let (end, status) = match sample.end {
            crate::measure::recording::CommandEnd::Exited { code } => ("exited", code),
            crate::measure::recording::CommandEnd::Signaled { signal } => ("signaled", signal),
        };
        CommandRow {
            arm: rep.arm.to_string(),
            round: rep.round,
            warmup: rep.warmup,
            failed: rep.failed,
            wall_ns: sample.wall_ns,
            task_clock_ns: sample.task_clock_ns,
            context_switches: sample.context_switches,
            migrations: opt(sample.migrations),
            cycles: opt(sample.hardware.cycles()),
            user_instructions: opt(sample.hardware.user_instructions()),
            multiplexed: match sample.hardware {
                TreeHardware::Counted { .. } => {
                    multiplexing_offence(&sample.hardware).is_some().to_string()
                }
                TreeHardware::Unavailable { .. } => String::new(),
            },
            end: end.into(),
            status,
        }
    }))
}

/// `--csv`: the document's rows (samples, comparisons, CPUs…); each kind's
/// in `report::csv`.
pub trait Csv {
    fn csv(&self) -> String;
}

/// Each kind's `--csv`, from the row writers above.
impl Csv for GateResult {
    fn csv(&self) -> String {
        samples(&self.samples)
    }
}

impl Csv for RunResult {
    fn csv(&self) -> String {
        samples(&self.samples)
    }
}

impl Csv for CommandResult {
    fn csv(&self) -> String {
        command(&self.reps)
    }
}

impl Csv for PairsResult {
    fn csv(&self) -> String {
        comparisons(&self.comparisons)
    }
}

impl Csv for LatencyResult {
    fn csv(&self) -> String {
        latency(self.control.iter().chain(&self.pairs))
    }
}

impl Csv for HybridResult {
    fn csv(&self) -> String {
        hybrid(&self.samples)
    }
}

/// A command sweep's rows are its command's repetitions; a kernel sweep's,
/// its workers' samples as `hybrid` writes them.
impl Csv for SweepResult {
    fn csv(&self) -> String {
        match &self.command {
            Some(sweep) => command(&sweep.reps),
            None => hybrid(&self.samples),
        }
    }
}

impl Csv for ObserveResult {
    fn csv(&self) -> String {
        observe(&self.judged)
    }
}

/// One row per sample of the ladder, then of each NUMA cell: where it
/// was measured and its ns per load.
impl Csv for MemoryResult {
    fn csv(&self) -> String {
        #[derive(Default, Serialize)]
        struct MemoryRow {
            part: &'static str,
            size_bytes: u64,
            cpu_node: Option<u32>,
            memory_node: Option<u32>,
            sample: usize,
            ns_per_load: f64,
        }
        let ladder = self.ladder.points.iter().flat_map(|point| {
            point
                .ns_per_load
                .iter()
                .enumerate()
                .map(|(sample, &ns)| MemoryRow {
                    part: "ladder",
                    size_bytes: point.size_bytes,
                    sample,
                    ns_per_load: ns,
                    ..MemoryRow::default()
                })
        });
        let cells = self.matrix.cells.iter().flat_map(|cell| {
            cell.ns_per_load
                .iter()
                .enumerate()
                .map(|(sample, &ns)| MemoryRow {
                    part: "numa",
                    size_bytes: self.matrix.buffer_bytes,
                    cpu_node: Some(cell.cpu_node),
                    memory_node: Some(cell.memory_node),
                    sample,
                    ns_per_load: ns,
                })
        });
        rows(ladder.chain(cells))
    }
}

impl Csv for TopologyResult {
    fn csv(&self) -> String {
        topology(&self.machine())
    }
}
