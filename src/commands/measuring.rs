//! Set-up shared by the commands that measure (`gate`, `run`): the engine
//! with its calibrated, fixed workload, and the evidence about the host.

use crate::cli::MeasureArgs;
use crate::measure::{Engine, Workload, calibrate_passes, kernel};
use crate::probe::Topology;
use crate::results::{Evidence, MeasurementSetup};
use anyhow::{Result, bail};
use std::sync::Arc;
use std::time::Duration;

/// Per-worker buffer: small enough to stay in any L1d (32 KiB and up), so
/// the kernel is bound by the multiply port, not by memory.
pub const BUFFER_BYTES: usize = 16 * 1024;

/// Builds the engine: picks the kernel, calibrates the passes once so a
/// repetition lasts about `--rep-ms`, and probes the counters.
pub fn engine(args: &MeasureArgs, topology: &Topology) -> Result<(Engine, MeasurementSetup)> {
    if args.rep_ms == 0 {
        bail!("--rep-ms 0: a repetition must last at least 1 ms");
    }
    let kernel: Arc<dyn kernel::Kernel> = Arc::from(kernel::kernel_by_name(&args.kernel)?);
    let passes = calibrate_passes(
        kernel.as_ref(),
        BUFFER_BYTES,
        Duration::from_millis(args.rep_ms),
    )?;
    let workload = Workload {
        kernel: kernel.clone(),
        buffer_bytes: BUFFER_BYTES,
        passes,
    };
    let engine = Engine::new(workload, !args.no_hardware_counters)?;
    // CPUID's TSC frequency (leaf 0x15 or the hypervisor's) beats a calibration.
    let cpuid_tsc = topology.cpuid.as_ref().and_then(|c| {
        let source = c.tsc_hz_source.clone().unwrap_or_else(|| "cpuid".into());
        Some((c.tsc_hz? as f64, source))
    });
    let (tsc_hz, tsc_hz_source) =
        cpuid_tsc.unwrap_or_else(|| (engine.tsc_hz(), "calibrated against CLOCK_MONOTONIC".into()));
    let setup = MeasurementSetup {
        kernel: kernel.name().into(),
        kernel_description: kernel.description().into(),
        kernel_instructions_per_byte: kernel.instructions_per_byte(),
        kernel_port_bound_cycles_per_byte: kernel.port_bound_cycles_per_byte(),
        bytes_per_worker: engine.workload().bytes_per_worker(),
        buffer_bytes: BUFFER_BYTES,
        passes,
        clock: engine.clock(),
        hardware_counters: engine.hardware().clone(),
        tsc_hz,
        tsc_hz_source,
        warmups: args.warmups,
    };
    Ok((engine, setup))
}

/// What suggests a VM, for display next to a verdict (never deciding it).
pub fn evidence(topology: &Topology) -> Evidence {
    Evidence {
        cpuid_hypervisor_bit: topology.cpuid.as_ref().map(|c| c.hypervisor_bit),
        cpuid_hypervisor_signature: topology
            .cpuid
            .as_ref()
            .and_then(|c| c.hypervisor_signature.clone()),
        cpuid_hypervisor_name: topology
            .cpuid
            .as_ref()
            .and_then(|c| c.hypervisor_name.clone()),
        cpuinfo_hypervisor_flag: topology.environment.hypervisor_flag,
        dmi_vendor: topology.environment.dmi_vendor.clone(),
        dmi_product: topology.environment.dmi_product.clone(),
        crosscheck: topology.crosscheck.clone(),
    }
}

/// A progress line on stderr, only when stderr is a terminal.
pub fn progress(message: &str) {
    use std::io::{IsTerminal, Write};
    let stderr = std::io::stderr();
    if stderr.is_terminal() {
        let mut lock = stderr.lock();
        let _ = write!(lock, "\r\x1b[2K{message}");
        let _ = lock.flush();
    }
}

/// Clears the progress line.
pub fn progress_done() {
    progress("");
}
