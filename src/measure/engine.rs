//! The measurement engine: one repetition = one thread per worker, each
//! pinned where the placement says, counting itself, all released together.
//!
//! A worker does everything that is not the measurement before the start
//! gate: pins itself, fills its own buffer (in its own L1d, on its own NUMA
//! node; with `run --membind` in a mapping bound to the arm's nodes, its
//! pages located), opens its own counter group. Released, it reads its CPU, stamps both
//! clocks, enables its counters, runs the kernel, disables them, stamps again,
//! reads its CPU again and reads its group once. Only the kernel (and the
//! hundred or so user-space instructions of the enable and disable calls)
//! runs while the counters count, so instructions per byte read the kernel's
//! constant. The dispatcher only waits for every worker to be ready, opens
//! the gate and joins them; it counts its own task-clock over that span so a
//! report can show it stayed idle.
//!
//! A stop request (SIGINT or SIGTERM, see [`stop`](super::stop)) reaches the
//! workers inside their kernel loop: each ends within one block of work, the
//! repetition is discarded and [`Engine::run_rep`] says it was stopped.

use std::hint::black_box;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};

use super::clock::{Span, Stamp, TICK_CLOCK, duration_nanos};
use super::counters::{
    HardwareEvents, HardwareProbe, ThreadTaskClock, WorkerCounters, probe_hardware, probe_software,
};
use super::items::{ItemPool, MAX_ITEMS, Taken};
use super::kernel::{InputBuffer, Kernel, StopFlag};
use super::mempolicy::{NodeMask, PageNodes};
use super::model::{
    ClockKind, HardwareCounters, ItemCounts, RepSample, SoftwareCounters, WorkerSample,
};
use super::stop::{stop_flag, stop_requested};
use crate::affinity::{current_cpu, pin_current_thread};
use crate::plan::Placement;
use crate::plan::hybrid::SharedWork;
use crate::probe::CorePmu;

/// What every worker does in every repetition: `passes` passes of `kernel`
/// over its own `buffer_bytes` buffer. The same for every worker, arm and
/// repetition, so bytes (and instructions) per repetition are too.
#[derive(Clone)]
pub struct Workload {
    pub kernel: Arc<dyn Kernel>,
    pub buffer_bytes: usize,
    pub passes: u64,
}

impl Workload {
    /// Bytes one worker processes in one repetition.
    pub fn bytes_per_worker(&self) -> u64 {
        self.buffer_bytes as u64 * self.passes
    }
}

/// Runs repetitions of a [`Workload`] on a [`Placement`] of workers.
pub struct Engine {
    workload: Workload,
    hardware: HardwareCounters,
    hardware_events: Option<HardwareEvents>,
    software: SoftwareCounters,
    /// A group of the workers' events, open on the creating thread for the
    /// engine's whole life. The kernel enables perf's scheduler hooks and
    /// software-event static keys when the first such event opens and
    /// patches them out when the last one closes (the scheduler hook a
    /// second later, from a work item): code patching that interrupts every
    /// CPU, possibly a worker mid-kernel in the next repetition. Holding one
    /// group open keeps those keys on, so repetitions never toggle them. (In
    /// QEMU TCG guests the toggling also stalled whole guests now and then.)
    _static_keys_held: Mutex<WorkerCounters>,
    /// The machine's core PMUs, where it has one per kind of core: a pinned
    /// worker's hardware events name its CPU's (see [`core_pmu_type`]).
    core_pmus: Vec<CorePmu>,
}

impl Engine {
    /// Checks the workload, finds where the software values come from
    /// (perf, or each thread's own accounting where perf_event_paranoid
    /// refuses it), probes the hardware counters once (unless
    /// `want_hardware` is false), and proves a worker's counters open on
    /// this machine.
    pub fn new(workload: Workload, want_hardware: bool) -> anyhow::Result<Engine> {
        workload.kernel.check_buffer(workload.buffer_bytes)?;
        if workload.passes == 0 {
            bail!("0 passes: a repetition needs at least one pass over the buffer");
        }
        if (workload.buffer_bytes as u64)
            .checked_mul(workload.passes)
            .is_none()
        {
            bail!(
                "{} passes over {} bytes: more bytes than a u64 counts",
                workload.passes,
                workload.buffer_bytes
            );
        }
        let software = probe_software()?;
        let probed = if want_hardware {
            probe_hardware(&software)
        } else {
            HardwareProbe::unavailable(format!(
                "hardware counters not requested; measuring with {}",
                TICK_CLOCK.unit()
            ))
        };
        let static_keys_held = Mutex::new(WorkerCounters::open(probed.events, &software)?);
        Ok(Engine {
            workload,
            hardware: probed.counters,
            hardware_events: probed.events,
            software,
            _static_keys_held: static_keys_held,
            core_pmus: Vec::new(),
        })
    }

    /// The machine's core PMUs ([`Environment::core_pmus`]); with two or
    /// more, each pinned worker counts on its own CPU's.
    ///
    /// [`Environment::core_pmus`]: crate::probe::Environment::core_pmus
    pub fn with_core_pmus(self, core_pmus: Vec<CorePmu>) -> Engine {
        Engine { core_pmus, ..self }
    }

    pub fn workload(&self) -> &Workload {
        &self.workload
    }

    pub fn hardware(&self) -> &HardwareCounters {
        &self.hardware
    }

    /// Where the workers' task-clock, context switches and migrations come
    /// from.
    pub fn software(&self) -> &SoftwareCounters {
        &self.software
    }

    /// The clock costs come from: core cycles when the PMU counts them,
    /// the tick clock ([`TICK_CLOCK`]) otherwise.
    pub fn clock(&self) -> ClockKind {
        if self.hardware.available() {
            ClockKind::CoreCycles
        } else {
            TICK_CLOCK
        }
    }

    /// Runs one repetition: every worker of `placement` at once.
    ///
    /// `Ok(None)` if a stop was requested ([`stop_requested`]) before or
    /// during the repetition: the workers end their kernel within one block
    /// of work, every thread is joined, and the partial work is discarded,
    /// never returned as a sample.
    ///
    /// Fails (naming the worker) if a worker cannot be pinned to its CPU,
    /// cannot open its counters, or cannot start; the other workers then skip
    /// their kernel. A worker that ran somewhere else than where it was pinned
    /// is not an error here: its sample says so (`cpu_start`, `cpu_end`,
    /// `cpu_migrations`) for the judge to reject.
    pub fn run_rep(
        &self,
        placement: &Placement,
        rep: usize,
        warmup: bool,
    ) -> anyhow::Result<Option<RepSample>> {
        self.run_placement(placement, rep, warmup, None)
    }

    /// Runs one repetition in which `placement`'s workers share `work`'s
    /// items ([`ItemPool`]): each counts itself from its first item to its
    /// last, and records how many items it did, how many it stole and on
    /// which CPUs it did them. Otherwise as [`Engine::run_rep`].
    pub fn run_shared(
        &self,
        placement: &Placement,
        work: &SharedWork,
        rep: usize,
        warmup: bool,
    ) -> anyhow::Result<Option<RepSample>> {
        if work.items > MAX_ITEMS {
            bail!(
                "{} items: a repetition shares at most {MAX_ITEMS}",
                work.items
            );
        }
        let pool = ItemPool::new(work, placement.cpus.len());
        self.run_placement(placement, rep, warmup, Some(&pool))
    }

    /// One repetition: each worker runs the workload's passes, or the
    /// items `pool` hands it.
    fn run_placement(
        &self,
        placement: &Placement,
        rep: usize,
        warmup: bool,
        pool: Option<&ItemPool>,
    ) -> anyhow::Result<Option<RepSample>> {
        let workers = placement.cpus.len();
        if workers == 0 {
            bail!("arm '{}' has no workers to place", placement.arm);
        }
        if stop_requested() {
            return Ok(None);
        }
        let gate = StartGate::default();
        let mut dispatcher_clock = ThreadTaskClock::open(&self.software)?;
        let membind = placement.membind.as_deref().map(NodeMask::of);
        thread::scope(|scope| {
            let mut handles = Vec::with_capacity(workers);
            let mut spawn_error = None;
            for (worker, &cpu) in placement.cpus.iter().enumerate() {
                let (gate, membind) = (&gate, membind.as_ref());
                let spawned = thread::Builder::new()
                    .name(format!("worker {worker}"))
                    .spawn_scoped(scope, move || {
                        self.run_worker(worker, cpu, gate, pool, membind)
                    });
                match spawned {
                    Ok(handle) => handles.push(handle),
                    Err(error) => {
                        spawn_error = Some(anyhow!(
                            "cannot start the thread of worker {worker}: {error}"
                        ));
                        break;
                    }
                }
            }
            let all_ready = spawn_error.is_none() && gate.wait_until_ready(workers);
            let clock_started = if all_ready {
                dispatcher_clock.start()
            } else {
                Ok(())
            };
            let released_at = Instant::now();
            // A stop that came while the workers prepared holds them all back.
            gate.release(
                all_ready && clock_started.is_ok() && !stop_requested(),
                released_at,
            );
            let outcomes: Vec<anyhow::Result<Option<WorkerSample>>> = handles
                .into_iter()
                .enumerate()
                .map(|(worker, handle)| {
                    handle
                        .join()
                        .unwrap_or_else(|_| Err(anyhow!("worker {worker} panicked")))
                })
                .collect();
            let wall_ns = duration_nanos(released_at.elapsed());
            if let Some(error) = spawn_error {
                return Err(error);
            }
            clock_started?;
            let dispatcher_task_clock_ns = if all_ready {
                dispatcher_clock.stop()?
            } else {
                0
            };
            // The first real error wins over the workers it held back and
            // over a stop request.
            let mut samples = Vec::with_capacity(workers);
            for outcome in outcomes {
                samples.extend(outcome?);
            }
            // A stop after every kernel finished spoils nothing: keep the rep.
            if samples.len() < workers {
                if stop_requested() {
                    return Ok(None);
                }
                bail!(
                    "arm '{}': workers were stopped before their kernel",
                    placement.arm
                );
            }
            Ok(Some(RepSample {
                arm: placement.arm,
                rep,
                warmup,
                workers: samples,
                wall_ns,
                dispatcher_task_clock_ns,
            }))
        })
    }

    /// One worker's repetition, on its own thread. `Ok(None)`: no sample,
    /// because it was released without running (another worker or the
    /// dispatcher failed, or a stop came first) or a stop request ended its
    /// kernel early.
    fn run_worker(
        &self,
        worker: usize,
        cpu: Option<u32>,
        gate: &StartGate,
        pool: Option<&ItemPool>,
        membind: Option<&NodeMask>,
    ) -> anyhow::Result<Option<WorkerSample>> {
        let who = || match cpu {
            Some(cpu) => format!("worker {worker} (CPU {cpu})"),
            None => format!("worker {worker} (unpinned)"),
        };
        let prepared = self.prepare_worker(cpu, membind);
        let arrived = Instant::now();
        let released_at = gate.arrive_and_wait(prepared.is_ok());
        let barrier_wait_ns = duration_nanos(arrived.elapsed());
        let (input, pages, counters) = prepared.with_context(who)?;
        let Some(released_at) = released_at else {
            return Ok(None);
        };
        let measured = match pool {
            None => self.measure(&input, counters),
            Some(pool) => self.measure_items(&input, counters, pool, worker),
        }
        .with_context(who)?;
        // Shared work only: when each worker finished tells a step's
        // imbalance at the end from a slower CPU.
        let finish_ns = pool.map(|_| duration_nanos(released_at.elapsed()));
        Ok(measured.map(|sample| WorkerSample {
            worker,
            pinned_cpu: cpu,
            barrier_wait_ns,
            finish_ns,
            pages,
            ..sample
        }))
    }

    /// The measured part: the kernel between the counters' enable and
    /// disable, the clocks stamped right outside them (so the stamps add no
    /// instruction to the count; the ticks take in two ioctls, a
    /// microsecond or so, the same in every arm). Returns the sample with
    /// the fields only the caller knows left at zero, or `None` if a stop
    /// request ended the kernel early.
    fn measure(
        &self,
        input: &InputBuffer,
        mut counters: WorkerCounters,
    ) -> anyhow::Result<Option<WorkerSample>> {
        let cpu_start = current_cpu()?;
        let start = Stamp::now();
        counters.enable()?;
        let checksum =
            self.workload
                .kernel
                .run(input.as_bytes(), self.workload.passes, stop_flag());
        counters.disable()?;
        let end = Stamp::now();
        let Some(checksum) = checksum else {
            return Ok(None);
        };
        finished(
            cpu_start,
            end.since(start),
            self.workload.bytes_per_worker(),
            &mut counters,
            checksum,
            None,
        )
        .map(Some)
    }

    /// The measured part of a shared-work repetition: items from `pool`
    /// until it has none left for `worker`, between one enable and one
    /// disable, each item's CPU read as it starts (a migration shows up in
    /// the per-CPU counts). The item hand-out adds a few dozen instructions
    /// per item to the count, a few millionths of an item's.
    fn measure_items(
        &self,
        input: &InputBuffer,
        mut counters: WorkerCounters,
        pool: &ItemPool,
        worker: usize,
    ) -> anyhow::Result<Option<WorkerSample>> {
        let cpu_start = current_cpu()?;
        let mut record = ItemCounts::default();
        let mut checksum = 0u64;
        let start = Stamp::now();
        counters.enable()?;
        while let Some(taken) = pool.take(worker) {
            if let Taken::AfterSteal { stolen, .. } = taken {
                record.stolen += stolen;
            }
            record.add(current_cpu()?);
            let Some(sum) =
                self.workload
                    .kernel
                    .run(input.as_bytes(), self.workload.passes, stop_flag())
            else {
                counters.disable()?;
                return Ok(None);
            };
            checksum = checksum.rotate_left(7) ^ sum;
        }
        counters.disable()?;
        let end = Stamp::now();
        finished(
            cpu_start,
            end.since(start),
            self.workload.bytes_per_worker() * record.items,
            &mut counters,
            checksum,
            Some(record),
        )
        .map(Some)
    }

    /// Everything a worker does before the start gate: with `membind`, its
    /// buffer is bound to those nodes and located.
    fn prepare_worker(
        &self,
        cpu: Option<u32>,
        membind: Option<&NodeMask>,
    ) -> anyhow::Result<(InputBuffer, Option<PageNodes>, WorkerCounters)> {
        if let Some(cpu) = cpu {
            pin_current_thread(cpu)?;
        }
        let bytes = self.workload.buffer_bytes;
        let (input, pages) = match membind {
            Some(nodes) => {
                let (input, pages) = InputBuffer::bound(bytes, nodes)?;
                (input, Some(pages))
            }
            None => (InputBuffer::new(bytes), None),
        };
        let pmu_type = cpu.and_then(|cpu| core_pmu_type(&self.core_pmus, cpu));
        let counters = WorkerCounters::open_on(self.hardware_events, &self.software, pmu_type)?;
        Ok((input, pages, counters))
    }
}

/// Holds the workers until every one is ready, then lets them all go at
/// once. Unlike a `Barrier`, it can be opened with some workers missing (one
/// failed to start), and it tells them whether to run or to give up.
#[derive(Default)]
struct StartGate {
    state: Mutex<GateState>,
    changed: Condvar,
}

#[derive(Default)]
struct GateState {
    arrived: usize,
    failed: bool,
    released: bool,
    go: bool,
    /// When the dispatcher released the workers (its wall clock's start).
    released_at: Option<Instant>,
}

impl StartGate {
    /// Called by a worker: announces it (`ready` false: its setup failed)
    /// and blocks until released. Returns when the workers were released,
    /// where they are to run the kernel; `None` where not.
    fn arrive_and_wait(&self, ready: bool) -> Option<Instant> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.arrived += 1;
        state.failed |= !ready;
        self.changed.notify_all();
        while !state.released {
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.released_at.filter(|_| state.go)
    }

    /// Called by the dispatcher: blocks until `workers` have arrived, and
    /// says whether all of them are ready.
    fn wait_until_ready(&self, workers: usize) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while state.arrived < workers {
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        !state.failed
    }

    /// Releases every worker, waiting or still to come, at `at`.
    fn release(&self, go: bool, at: Instant) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.released = true;
        state.go = go;
        state.released_at = Some(at);
        self.changed.notify_all();
    }
}

/// Shortest single-thread run [`calibrate_passes`] times.
const CALIBRATION_RUN: Duration = Duration::from_millis(5);

/// The type of the core PMU that counts on `cpu`, where the machine has a
/// PMU per kind of core; `None` on a machine with one (its generic events
/// count everywhere) or for a CPU none of them names. An unpinned worker
/// gets no PMU named: its hardware events count only while it runs on one
/// kind of core, and its group reads as multiplexed when it ran elsewhere.
pub fn core_pmu_type(pmus: &[CorePmu], cpu: u32) -> Option<u32> {
    if pmus.len() < 2 {
        return None;
    }
    pmus.iter()
        .find(|pmu| pmu.cpus.contains(cpu))
        .map(|pmu| pmu.pmu_type)
}

/// A measured worker's sample: its CPU read now that the work is done, its
/// counters read once; the fields only the caller knows left at zero.
fn finished(
    cpu_start: u32,
    busy: Span,
    bytes: u64,
    counters: &mut WorkerCounters,
    checksum: u64,
    items: Option<ItemCounts>,
) -> anyhow::Result<WorkerSample> {
    Ok(WorkerSample {
        worker: 0,
        pinned_cpu: None,
        cpu_start,
        cpu_end: current_cpu()?,
        bytes,
        busy_ns: busy.nanos,
        tsc_ticks: busy.ticks,
        barrier_wait_ns: 0,
        finish_ns: None,
        counters: counters.read()?,
        checksum,
        items,
        pages: None,
    })
}

/// How many passes over a `buffer_bytes` buffer make one repetition of
/// `kernel` last about `target` on one otherwise idle core (at least 1).
///
/// Doubles the passes until a run lasts 5 ms, then keeps the
/// fastest of three runs of that size: about 25 ms in all. Call it once and
/// keep the result, so bytes are the same in every arm and repetition. It is
/// short enough to ignore stop requests; the callers check before measuring.
pub fn calibrate_passes(
    kernel: &dyn Kernel,
    buffer_bytes: usize,
    target: Duration,
) -> anyhow::Result<u64> {
    kernel.check_buffer(buffer_bytes)?;
    let input = InputBuffer::new(buffer_bytes);
    let never_stopped = StopFlag::new();
    let time = |passes: u64| {
        let start = Instant::now();
        black_box(kernel.run(black_box(input.as_bytes()), passes, &never_stopped));
        start.elapsed()
    };
    let mut passes: u64 = 1;
    let mut elapsed = time(passes);
    while elapsed < CALIBRATION_RUN && passes < u64::MAX / 2 {
        passes *= 2;
        elapsed = time(passes);
    }
    let fastest = (0..2).map(|_| time(passes)).fold(elapsed, Duration::min);
    let seconds_per_pass = fastest.as_secs_f64() / passes as f64;
    Ok((target.as_secs_f64() / seconds_per_pass).round().max(1.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_worker_counts_on_its_cpus_core_pmu_where_there_are_several() {
        let pmu = |name: &str, pmu_type: u32, cpus: &[u32]| CorePmu {
            name: name.into(),
            pmu_type,
            cpus: cpus.iter().copied().collect(),
        };
        let hybrid = [pmu("cpu_atom", 10, &[12, 13]), pmu("cpu_core", 4, &[0, 1])];
        assert_eq!(core_pmu_type(&hybrid, 13), Some(10));
        assert_eq!(core_pmu_type(&hybrid, 0), Some(4));
        assert_eq!(core_pmu_type(&hybrid, 7), None);
        // One PMU for every core: generic events already count everywhere.
        assert_eq!(core_pmu_type(&hybrid[..1], 13), None);
    }

    #[test]
    fn gate_lets_late_workers_through_once_released() {
        let gate = StartGate::default();
        gate.release(false, Instant::now());
        assert_eq!(gate.arrive_and_wait(true), None);
        let gate = StartGate::default();
        let at = Instant::now();
        gate.release(true, at);
        assert_eq!(gate.arrive_and_wait(true), Some(at));
    }

    #[test]
    fn gate_reports_a_failed_worker() {
        let gate = StartGate::default();
        thread::scope(|scope| {
            let ok = scope.spawn(|| gate.arrive_and_wait(true));
            let failed = scope.spawn(|| gate.arrive_and_wait(false));
            assert!(!gate.wait_until_ready(2));
            gate.release(false, Instant::now());
            assert_eq!(
                (ok.join().ok(), failed.join().ok()),
                (Some(None), Some(None))
            );
        });
    }
}
