//! The [`Measure`] trait the studies are written against, and its one real
//! implementation: the [`Engine`] with the setup it was calibrated to.
//!
//! A study never sees the engine itself: it asks a `Measure` for repetitions
//! of placements. In the product that is always an [`EngineSession`]; the
//! tests replay recorded samples through a test-only implementation, so the
//! studies' decision loops run on any machine.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use super::clock;
use super::engine::{Engine, Workload, calibrate_passes};
use super::kernel::{self, Kernel};
use super::model::{MeasurementSetup, RepSample};
use super::stop::{self, StopSignal};
use crate::plan::Placement;
use crate::plan::hybrid::SharedWork;
use crate::probe::Topology;

/// What one call of [`Measure::run_rep`] produced.
#[derive(Clone, Debug, PartialEq)]
pub enum RepOutcome {
    /// The repetition ran to its end.
    Measured(RepSample),
    /// A stop signal arrived before or during it; its partial work is dropped.
    Stopped(StopSignal),
}

/// Runs repetitions of placements. A study drives it; see the module docs.
pub trait Measure {
    /// What every repetition runs with: kernel, bytes, clock, counters.
    fn setup(&self) -> &MeasurementSetup;
    /// Runs one repetition of `placement` (numbered `rep`, warm-ups included).
    fn run_rep(&mut self, placement: &Placement, rep: usize, warmup: bool) -> Result<RepOutcome>;
    /// Runs one repetition in which `placement`'s workers share `work`
    /// (`hybrid`); each item is the setup's passes over a worker's buffer.
    fn run_shared(
        &mut self,
        placement: &Placement,
        work: &SharedWork,
        rep: usize,
        warmup: bool,
    ) -> Result<RepOutcome>;
    /// Waits `gap` between two batches of a comparison, so that the next
    /// batch sees the host at another moment; a stop signal ends the wait
    /// early, and is returned.
    fn pause(&mut self, gap: Duration) -> Option<StopSignal>;
}

/// How a measurement is configured: the checked `--kernel`, `--rep-ms`,
/// `--warmups` and `--no-hardware-counters`.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasureOptions {
    /// A name [`kernel::kernel_by_name`] knows (checked when the options were built).
    pub kernel: String,
    /// Target length of one repetition.
    pub rep_length: Duration,
    /// Repetitions of each arm discarded before measuring.
    pub warmups: usize,
    /// Open hardware counters when the PMU has them.
    pub hardware_counters: bool,
}

/// Per-worker buffer: small enough to stay in any L1d (32 KiB and up), so
/// the kernel is bound by the multiply port, not by memory.
pub const BUFFER_BYTES: usize = 16 * 1024;

/// The engine, calibrated once, with the setup every sample is saved beside.
pub struct EngineSession {
    engine: Engine,
    setup: MeasurementSetup,
}

impl EngineSession {
    /// Picks the kernel, calibrates the passes once so a repetition lasts
    /// about `options.rep_length`, probes the counters, and takes the tick
    /// clock's frequency from where the hardware states it: CPUID (leaf 0x15
    /// or the hypervisor's) for the TSC, `cntfrq_el0` for the generic timer;
    /// a calibration only where neither does.
    pub fn start(options: &MeasureOptions, topology: &Topology) -> Result<EngineSession> {
        let kernel: Arc<dyn Kernel> = Arc::from(kernel::kernel_by_name(&options.kernel)?);
        let passes = calibrate_passes(kernel.as_ref(), BUFFER_BYTES, options.rep_length)?;
        let workload = Workload {
            kernel: kernel.clone(),
            buffer_bytes: BUFFER_BYTES,
            passes,
        };
        let engine = Engine::new(workload, options.hardware_counters)?
            .with_core_pmus(topology.environment.core_pmus.clone());
        let cpuid_tsc = topology.cpuid.as_ref().and_then(|c| {
            let source = c.tsc_hz_source.clone().unwrap_or_else(|| "cpuid".into());
            Some((c.tsc_hz? as f64, source))
        });
        let stated = clock::stated_tick_hz().map(|(hz, source)| (hz, source.into()));
        // The 20 ms calibration only where no frequency is stated.
        let (tsc_hz, tsc_hz_source) = cpuid_tsc.or(stated).unwrap_or_else(|| {
            (
                clock::calibrate_tick_hz(),
                "calibrated against CLOCK_MONOTONIC".into(),
            )
        });
        let setup = MeasurementSetup {
            kernel: kernel.name().into(),
            kernel_description: kernel.description().into(),
            kernel_instructions_per_byte: kernel.instructions_per_byte(),
            kernel_port_bound_cycles_per_byte: kernel.port_bound_cycles_per_byte(),
            bytes_per_worker: engine.workload().bytes_per_worker(),
            buffer_bytes: BUFFER_BYTES,
            passes,
            clock: engine.clock(),
            tick_clock: clock::TICK_CLOCK,
            hardware_counters: engine.hardware().clone(),
            software_counters: engine.software().clone(),
            tsc_hz,
            tsc_hz_source,
            warmups: options.warmups,
        };
        Ok(EngineSession { engine, setup })
    }
}

impl Measure for EngineSession {
    fn setup(&self) -> &MeasurementSetup {
        &self.setup
    }

    fn run_rep(&mut self, placement: &Placement, rep: usize, warmup: bool) -> Result<RepOutcome> {
        Ok(outcome(self.engine.run_rep(placement, rep, warmup)?))
    }

    fn run_shared(
        &mut self,
        placement: &Placement,
        work: &SharedWork,
        rep: usize,
        warmup: bool,
    ) -> Result<RepOutcome> {
        Ok(outcome(
            self.engine.run_shared(placement, work, rep, warmup)?,
        ))
    }

    fn pause(&mut self, gap: Duration) -> Option<StopSignal> {
        let until = std::time::Instant::now() + gap;
        loop {
            if stop::stop_requested() {
                return Some(stop::stop_signal().unwrap_or(StopSignal::Interrupt));
            }
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return None;
            }
            std::thread::sleep(left.min(PAUSE_SLICE));
        }
    }
}

/// How often a pause looks for a stop signal: a stop is asked to take
/// effect within a second (see [`stop`]).
const PAUSE_SLICE: Duration = Duration::from_millis(50);

/// A repetition the engine returned, or the stop that ended it.
fn outcome(sample: Option<RepSample>) -> RepOutcome {
    match sample {
        Some(sample) => RepOutcome::Measured(sample),
        // The engine stops only on a signal, which the handler recorded.
        None => RepOutcome::Stopped(stop::stop_signal().unwrap_or(StopSignal::Interrupt)),
    }
}
