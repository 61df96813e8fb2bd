//! `observe`'s judgement: a recording's switch records turned into each
//! thread's on-CPU intervals, and those into residency per CPU, core and
//! class, migrations, settling, a timeline, the busy frequency, and the
//! check that the residency adds up to the kernel's own task-clock.
//!
//! Every time is CLOCK_MONOTONIC, given in milliseconds since the
//! recording began.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::measure::recording::{Recording, SchedEventKind};
use crate::probe::{CoreKind, CpuEntry};

/// How far Σ residency may stray from Σ task-clock, as a fraction of the
/// task-clock, before the recording is not trusted.
pub const RECONCILIATION_BAR: f64 = 0.01;

/// The longest gap between one followed thread's switch-out and another's
/// switch-in on the same CPU that is a direct hand-over. Measured on a
/// pipeline (`yes | head | md5sum`): the gaps are ~0.5 µs, or 20 µs and
/// more when the CPU ran something else or idled in between.
pub const HANDOVER_MAX_NS: u64 = 20_000;

/// One stretch of a thread on one CPU: `[cpu, start_ms, end_ms]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OnCpu {
    pub cpu: u32,
    pub start_ms: f64,
    pub end_ms: f64,
}

impl OnCpu {
    fn ms(&self) -> f64 {
        self.end_ms - self.start_ms
    }
}

/// One thread, as the records followed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadStats {
    pub tid: u32,
    pub pid: u32,
    pub comm: String,
    pub on_cpu_ms: f64,
    /// The CPU of its first recorded stretch.
    pub first_cpu: Option<u32>,
    /// The CPU it spent the most time on, and the fraction of its time there.
    pub home_cpu: Option<u32>,
    pub home_share: f64,
    /// From its first stretch to the start of the run of stretches on its
    /// home CPU that it never left again; `None` when its last stretch was
    /// elsewhere (it never settled).
    pub settled_after_ms: Option<f64>,
    /// Moves to another CPU (a wake-up elsewhere counts, as the kernel's
    /// cpu-migrations does).
    pub migrations: usize,
    pub intervals: Vec<OnCpu>,
}

/// Time on one CPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuResidency {
    pub cpu: u32,
    pub package: Option<usize>,
    pub core: Option<usize>,
    pub class: CoreKind,
    pub ms: f64,
    pub share: f64,
    /// Direct hand-overs between followed threads on this CPU (see
    /// [`Reconciliation::handover_ms`]).
    pub handover_ms: f64,
    /// The kernel's task-clock on this CPU, for comparison.
    pub task_clock_ms: f64,
}

/// Time on one core (all of its hardware threads).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CoreResidency {
    pub package: usize,
    pub core: usize,
    pub class: CoreKind,
    #[schemars(extend("uniqueItems" = true))]
    pub cpus: Vec<u32>,
    pub ms: f64,
    pub share: f64,
}

/// Time on one core class, with its busy frequency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClassResidency {
    pub class: CoreKind,
    #[schemars(extend("uniqueItems" = true))]
    pub cpus: Vec<u32>,
    pub ms: f64,
    pub share: f64,
    /// Core cycles ÷ task-clock on the class's CPUs, in MHz.
    #[schemars(range(min = 0.0))]
    pub busy_mhz: Option<f64>,
    /// Why there is no busy frequency.
    pub busy_mhz_unavailable: Option<String>,
}

/// A thread's move from one CPU to another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Migration {
    /// When it started on the new CPU.
    pub time_ms: f64,
    pub tid: u32,
    pub comm: String,
    pub from_cpu: u32,
    pub to_cpu: u32,
    pub from_class: CoreKind,
    pub to_class: CoreKind,
}

/// One row of the `--interval` timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimelineRow {
    pub start_ms: f64,
    pub end_ms: f64,
    /// Time on each class in this interval, in the order of `classes`.
    pub class_ms: Vec<f64>,
    pub migrations: usize,
}

/// Σ residency against Σ task-clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reconciliation {
    pub residency_ms: f64,
    /// Time between one followed thread's switch-out and another's switch-in
    /// on the same CPU, at most [`HANDOVER_MAX_NS`] apart. The threads of one
    /// tree share equivalent perf contexts, which the kernel swaps at such a
    /// switch without stopping task-clock: task-clock counts the scheduler's
    /// hand-over, which neither thread's records cover.
    pub handover_ms: f64,
    /// How many direct hand-overs there were.
    pub handovers: usize,
    pub task_clock_ms: f64,
    /// Stretches on a CPU recorded: each costs perf the time to write its
    /// switch records, which task-clock counts and the stretch does not
    /// (well under a microsecond on hardware; far more under emulation).
    pub stretches: usize,
    /// |residency + hand-overs − task-clock| ÷ task-clock.
    #[schemars(range(min = 0.0))]
    pub difference: f64,
    #[schemars(range(min = 0.0))]
    pub bar: f64,
    pub holds: bool,
}

/// Everything `observe` concludes from a recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ObserveJudgement {
    /// From the start of the recording to its end (the command's exit).
    pub wall_ms: f64,
    pub threads: Vec<ThreadStats>,
    pub cpus: Vec<CpuResidency>,
    pub cores: Vec<CoreResidency>,
    /// Saved as `class_residency`: a document's `classes` are the published ones.
    #[serde(rename = "class_residency")]
    pub classes: Vec<ClassResidency>,
    pub migrations: Vec<Migration>,
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub interval_ms: Option<f64>,
    pub timeline: Vec<TimelineRow>,
    pub reconciliation: Reconciliation,
    pub lost_records: u64,
    /// Reconciled, nothing lost, and some time on a CPU recorded.
    pub valid: bool,
    /// What made it invalid, in words.
    pub problems: Vec<String>,
}

/// A thread while the records are read.
struct Following {
    pid: u32,
    comm: String,
    /// Where and since when it is on a CPU.
    on: Option<(u32, u64)>,
    /// Where an interval that began before any record starts: the
    /// recording's start, or the exec that enabled the events.
    anchor_ns: u64,
    seen_switch: bool,
    intervals: Vec<(u32, u64, u64)>,
}

/// Direct hand-overs per CPU: (count, ns).
type Handovers = BTreeMap<u32, (usize, u64)>;

/// Reads the switch records into each thread's intervals, by tid, and the
/// direct hand-overs between followed threads, by CPU.
fn intervals(recording: &Recording) -> (BTreeMap<u32, Following>, Handovers) {
    let mut threads: BTreeMap<u32, Following> = BTreeMap::new();
    let mut handovers = Handovers::new();
    // Per CPU, the last followed thread to switch out there, and when.
    let mut last_out: BTreeMap<u32, (u32, u64)> = BTreeMap::new();
    let named = |tid: u32| {
        recording
            .names
            .iter()
            .find(|n| n.tid == tid)
            .map(|n| n.comm.clone())
    };
    for event in &recording.events {
        let parent_comm = match &event.kind {
            SchedEventKind::Fork { parent_tid } => threads.get(parent_tid).map(|p| p.comm.clone()),
            _ => None,
        };
        let thread = threads.entry(event.tid).or_insert_with(|| Following {
            pid: event.pid,
            comm: named(event.tid).or(parent_comm).unwrap_or_default(),
            on: None,
            anchor_ns: recording.start_ns,
            seen_switch: false,
            intervals: Vec::new(),
        });
        let close = |thread: &mut Following, at: u64| {
            if let Some((cpu, since)) = thread.on.take() {
                thread.intervals.push((cpu, since, at.max(since)));
            } else if !thread.seen_switch {
                // On a CPU when the events were enabled: from then on.
                thread
                    .intervals
                    .push((event.cpu, thread.anchor_ns, at.max(thread.anchor_ns)));
            }
            thread.seen_switch = true;
        };
        match &event.kind {
            SchedEventKind::SwitchIn => {
                // A switch-out went missing: the stretch ends here.
                if thread.on.is_some() {
                    close(thread, event.time_ns);
                }
                thread.seen_switch = true;
                thread.on = Some((event.cpu, event.time_ns));
                if let Some((tid, out)) = last_out.remove(&event.cpu) {
                    let gap = event.time_ns.saturating_sub(out);
                    if tid != event.tid && gap <= HANDOVER_MAX_NS {
                        let slot = handovers.entry(event.cpu).or_default();
                        *slot = (slot.0 + 1, slot.1 + gap);
                    }
                }
            }
            SchedEventKind::SwitchOut => {
                close(thread, event.time_ns);
                last_out.insert(event.cpu, (event.tid, event.time_ns));
            }
            // An exiting thread's events are gone before its last switch.
            SchedEventKind::Exit => {
                close(thread, event.time_ns);
                last_out.remove(&event.cpu);
            }
            SchedEventKind::Fork { .. } => {
                thread.seen_switch = true;
                thread.pid = event.pid;
            }
            SchedEventKind::Comm { comm, exec } => {
                thread.comm = comm.clone();
                if *exec && !thread.seen_switch && thread.on.is_none() {
                    thread.anchor_ns = event.time_ns;
                }
            }
        }
    }
    for thread in threads.values_mut() {
        if let Some((cpu, since)) = thread.on.take() {
            thread
                .intervals
                .push((cpu, since, recording.end_ns.max(since)));
        }
    }
    (threads, handovers)
}

/// What the topology says of a CPU: package, core and class.
fn place(cpus: &[CpuEntry], cpu: u32) -> (Option<usize>, Option<usize>, CoreKind) {
    match cpus.iter().find(|c| c.cpu == cpu) {
        Some(entry) => (Some(entry.package), Some(entry.core), entry.class),
        None => (None, None, CoreKind::Unknown),
    }
}

fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { part / whole } else { 0.0 }
}

/// Judges a recording on the machine whose CPUs are `cpus`.
pub fn judge_observation(
    recording: &Recording,
    cpus: &[CpuEntry],
    interval_ms: Option<f64>,
) -> ObserveJudgement {
    let ms_since_start = |ns: u64| ns.saturating_sub(recording.start_ns) as f64 / 1e6;
    let class_of = |cpu: u32| place(cpus, cpu).2;
    let (followed, handovers) = intervals(recording);
    let handover_ms = |cpu: u32| handovers.get(&cpu).map_or(0.0, |h| h.1 as f64 / 1e6);
    let mut threads: Vec<ThreadStats> = followed
        .into_iter()
        .filter(|(_, t)| !t.intervals.is_empty())
        .map(|(tid, t)| {
            let intervals: Vec<OnCpu> = t
                .intervals
                .iter()
                .map(|&(cpu, start, end)| OnCpu {
                    cpu,
                    start_ms: ms_since_start(start),
                    end_ms: ms_since_start(end),
                })
                .collect();
            thread_stats(tid, t.pid, t.comm, intervals)
        })
        .collect();
    threads.sort_by(|a, b| b.on_cpu_ms.total_cmp(&a.on_cpu_ms).then(a.tid.cmp(&b.tid)));

    let mut migrations: Vec<Migration> = threads
        .iter()
        .flat_map(|t| {
            t.intervals
                .windows(2)
                .filter(|w| w[0].cpu != w[1].cpu)
                .map(|w| Migration {
                    time_ms: w[1].start_ms,
                    tid: t.tid,
                    comm: t.comm.clone(),
                    from_cpu: w[0].cpu,
                    to_cpu: w[1].cpu,
                    from_class: class_of(w[0].cpu),
                    to_class: class_of(w[1].cpu),
                })
        })
        .collect();
    migrations.sort_by(|a, b| a.time_ms.total_cmp(&b.time_ms));

    // Folded from +0.0: an empty f64 sum is −0.0, which a process that
    // never ran would carry into its document.
    let residency_ms = threads.iter().fold(0.0, |total, t| total + t.on_cpu_ms);
    let mut on_cpu: BTreeMap<u32, f64> = BTreeMap::new();
    for interval in threads.iter().flat_map(|t| &t.intervals) {
        *on_cpu.entry(interval.cpu).or_default() += interval.ms();
    }
    for counts in &recording.per_cpu {
        on_cpu.entry(counts.cpu).or_default();
    }
    let task_clock_ms = |cpu: u32| {
        recording
            .per_cpu
            .iter()
            .find(|c| c.cpu == cpu)
            .map_or(0.0, |c| c.task_clock_ns as f64 / 1e6)
    };
    let cpu_rows: Vec<CpuResidency> = on_cpu
        .iter()
        .map(|(&cpu, &ms)| {
            let (package, core, class) = place(cpus, cpu);
            CpuResidency {
                cpu,
                package,
                core,
                class,
                ms,
                share: share(ms, residency_ms),
                handover_ms: handover_ms(cpu),
                task_clock_ms: task_clock_ms(cpu),
            }
        })
        .collect();
    let cores = core_rows(cpus, &cpu_rows, residency_ms);
    let classes = class_rows(recording, &cpu_rows, residency_ms);

    let task_clock_total = recording
        .per_cpu
        .iter()
        .fold(0.0, |total, c| total + c.task_clock_ns as f64 / 1e6);
    let stretches: usize = threads.iter().map(|t| t.intervals.len()).sum();
    let handover_total = handovers
        .keys()
        .fold(0.0, |total, &cpu| total + handover_ms(cpu));
    let difference = share(
        (residency_ms + handover_total - task_clock_total).abs(),
        task_clock_total,
    );
    let reconciliation = Reconciliation {
        residency_ms,
        handover_ms: handover_total,
        handovers: handovers.values().map(|h| h.0).sum(),
        task_clock_ms: task_clock_total,
        stretches,
        difference,
        bar: RECONCILIATION_BAR,
        // A process that never ran while observed (it slept) has no
        // time in its records and none on task-clock: the two agree.
        holds: if task_clock_total > 0.0 {
            difference <= RECONCILIATION_BAR
        } else {
            residency_ms + handover_total == 0.0
        },
    };
    let timeline = interval_ms.map_or_else(Vec::new, |step| {
        timeline(
            &threads,
            &migrations,
            &classes,
            cpus,
            ms_since_start(recording.end_ns),
            step,
        )
    });
    let mut problems = Vec::new();
    if !reconciliation.holds {
        problems.push(format!(
            "Σ residency {residency_ms:.1} ms + hand-overs {handover_total:.1} ms and Σ task-clock {task_clock_total:.1} ms differ by {:.2} %, over the {:.0} % bar",
            difference * 100.0,
            RECONCILIATION_BAR * 100.0
        ));
        let unexplained = task_clock_total - residency_ms - handover_total;
        if unexplained > 0.0 && stretches > 0 {
            problems.push(format!(
                "task-clock is {:.1} µs more per stretch on a CPU ({stretches} stretches): perf's cost of writing each switch record, large under emulation; fewer context switches reconcile",
                unexplained * 1000.0 / stretches as f64
            ));
        }
    }
    if recording.lost_records > 0 {
        problems.push(format!(
            "the kernel dropped {} records (a ring buffer was full)",
            recording.lost_records
        ));
    }
    ObserveJudgement {
        wall_ms: ms_since_start(recording.end_ns),
        threads,
        cpus: cpu_rows,
        cores,
        classes,
        migrations,
        interval_ms,
        timeline,
        reconciliation,
        lost_records: recording.lost_records,
        valid: problems.is_empty(),
        problems,
    }
}

fn thread_stats(tid: u32, pid: u32, comm: String, intervals: Vec<OnCpu>) -> ThreadStats {
    let on_cpu_ms: f64 = intervals.iter().map(OnCpu::ms).sum();
    let mut by_cpu: BTreeMap<u32, f64> = BTreeMap::new();
    for interval in &intervals {
        *by_cpu.entry(interval.cpu).or_default() += interval.ms();
    }
    let home = by_cpu
        .iter()
        .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(&cpu, &ms)| (cpu, ms));
    let settled_after_ms = home.and_then(|(cpu, _)| {
        let away = intervals.iter().rposition(|i| i.cpu != cpu);
        let settled = match away {
            None => intervals.first()?,
            Some(last_away) => intervals.get(last_away + 1)?,
        };
        Some(settled.start_ms - intervals.first()?.start_ms)
    });
    ThreadStats {
        tid,
        pid,
        comm,
        on_cpu_ms,
        first_cpu: intervals.first().map(|i| i.cpu),
        home_cpu: home.map(|(cpu, _)| cpu),
        home_share: home.map_or(0.0, |(_, ms)| share(ms, on_cpu_ms)),
        settled_after_ms,
        migrations: intervals
            .windows(2)
            .filter(|w| w[0].cpu != w[1].cpu)
            .count(),
        intervals,
    }
}

/// Time per core; a core lists all of its hardware threads.
fn core_rows(topology: &[CpuEntry], cpus: &[CpuResidency], total: f64) -> Vec<CoreResidency> {
    let mut cores: BTreeMap<(usize, usize), CoreResidency> = BTreeMap::new();
    for cpu in cpus {
        let (Some(package), Some(core)) = (cpu.package, cpu.core) else {
            continue;
        };
        let row = cores
            .entry((package, core))
            .or_insert_with(|| CoreResidency {
                package,
                core,
                class: cpu.class,
                cpus: topology
                    .iter()
                    .find(|entry| entry.cpu == cpu.cpu)
                    .map_or_else(|| vec![cpu.cpu], |entry| entry.siblings.cpus().to_vec()),
                ms: 0.0,
                share: 0.0,
            });
        row.ms += cpu.ms;
    }
    cores
        .into_values()
        .map(|mut row| {
            row.share = share(row.ms, total);
            row
        })
        .collect()
}

fn class_rows(recording: &Recording, cpus: &[CpuResidency], total: f64) -> Vec<ClassResidency> {
    let mut classes: Vec<ClassResidency> = Vec::new();
    for cpu in cpus {
        let index = match classes.iter().position(|c| c.class == cpu.class) {
            Some(index) => index,
            None => {
                classes.push(ClassResidency {
                    class: cpu.class,
                    cpus: Vec::new(),
                    ms: 0.0,
                    share: 0.0,
                    busy_mhz: None,
                    busy_mhz_unavailable: None,
                });
                classes.len() - 1
            }
        };
        classes[index].cpus.push(cpu.cpu);
        classes[index].ms += cpu.ms;
    }
    for class in &mut classes {
        class.share = share(class.ms, total);
        match busy_mhz(recording, &class.cpus) {
            Ok(mhz) => class.busy_mhz = mhz,
            Err(reason) => class.busy_mhz_unavailable = Some(reason),
        }
    }
    classes.sort_by_key(|c| c.class);
    classes
}

/// Core cycles ÷ task-clock over `cpus`, in MHz: `None` with no time
/// there; an error saying why when it cannot be known.
fn busy_mhz(recording: &Recording, cpus: &[u32]) -> Result<Option<f64>, String> {
    if let Some(reason) = &recording.cycles_unavailable {
        return Err(reason.clone());
    }
    let counts: Vec<_> = recording
        .per_cpu
        .iter()
        .filter(|c| cpus.contains(&c.cpu))
        .collect();
    let (mut cycles, mut task_clock_ns, mut enabled, mut running) = (0u64, 0u64, 0u64, 0u64);
    for c in &counts {
        cycles += c.cycles.ok_or("cycles not counted on every CPU")?;
        task_clock_ns += c.task_clock_ns;
        enabled += c.cycles_enabled_ns.unwrap_or(0);
        running += c.cycles_running_ns.unwrap_or(0);
    }
    if running < enabled {
        return Err(format!(
            "cycles multiplexed (counted {:.1} % of the time): not scaled, not shown",
            share(running as f64, enabled as f64) * 100.0
        ));
    }
    if task_clock_ns == 0 {
        return Ok(None);
    }
    Ok(Some(cycles as f64 / task_clock_ns as f64 * 1000.0))
}

/// The `--interval` rows. Each stretch and each migration is added to the
/// rows it falls in, so the cost grows with stretches plus rows, not their
/// product (a long recording at `--interval 1` has both by the thousand).
fn timeline(
    threads: &[ThreadStats],
    migrations: &[Migration],
    classes: &[ClassResidency],
    cpus: &[CpuEntry],
    end_ms: f64,
    step: f64,
) -> Vec<TimelineRow> {
    let rows = (end_ms / step).ceil().max(1.0) as usize;
    let row_of = |ms: f64| ((ms / step).floor().max(0.0) as usize).min(rows - 1);
    let mut timeline: Vec<TimelineRow> = (0..rows)
        .map(|row| TimelineRow {
            start_ms: row as f64 * step,
            end_ms: ((row + 1) as f64 * step).min(end_ms),
            class_ms: vec![0.0; classes.len()],
            migrations: 0,
        })
        .collect();
    for interval in threads.iter().flat_map(|t| &t.intervals) {
        let class = place(cpus, interval.cpu).2;
        let Some(index) = classes.iter().position(|c| c.class == class) else {
            continue;
        };
        for row in &mut timeline[row_of(interval.start_ms)..=row_of(interval.end_ms)] {
            let overlap = interval.end_ms.min(row.end_ms) - interval.start_ms.max(row.start_ms);
            if overlap > 0.0 {
                row.class_ms[index] += overlap;
            }
        }
    }
    for migration in migrations.iter().filter(|m| m.time_ms < end_ms) {
        timeline[row_of(migration.time_ms)].migrations += 1;
    }
    timeline
}

#[cfg(test)]
mod tests;
