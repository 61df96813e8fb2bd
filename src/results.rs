//! The saved documents of `gate --json` and `run --json`: what `report`
//! reads back. Field names are schema; bump [`RESULT_SCHEMA_VERSION`] when a
//! field changes meaning or disappears (adding one is compatible).

use crate::judge::checks::{Check, ExcludedRep};
use crate::judge::gate::{Interval, Verdict};
use crate::judge::stats::Spread;
use crate::measure::{ClockKind, HardwareCounters, RepSample};
use crate::plan::{GatePairs, RunPlan};
use crate::probe::{CpuEntry, Crosscheck, Environment, Summary};
use serde::{Deserialize, Serialize};

pub const RESULT_SCHEMA_VERSION: u32 = 1;

/// Facts that suggest a VM, shown next to the gate's verdict but never
/// deciding it: only the measurement decides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub cpuid_hypervisor_bit: Option<bool>,
    pub cpuid_hypervisor_signature: Option<String>,
    pub cpuid_hypervisor_name: Option<String>,
    /// The `hypervisor` flag in /proc/cpuinfo.
    pub cpuinfo_hypervisor_flag: Option<bool>,
    pub dmi_vendor: Option<String>,
    pub dmi_product: Option<String>,
    pub crosscheck: Option<Crosscheck>,
}

/// Statistics of one arm over its measured repetitions. Every median comes
/// with its spread and repetition count (`Spread`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArmStats {
    pub name: String,
    /// Per worker: the CPU it was pinned to, or null (unpinned).
    pub cpus: Vec<Option<u32>>,
    /// The clock `cost` is in.
    pub clock: ClockKind,
    /// Cost per byte in `clock` units (per repetition: the mean over workers).
    pub cost: Option<Spread>,
    /// TSC ticks per byte, always recorded (wall time at the TSC rate).
    pub tsc_per_byte: Option<Spread>,
    pub instructions_per_byte: Option<Spread>,
    pub l1i_misses_per_kilo_instruction: Option<Spread>,
    /// cycles / ref-cycles × TSC frequency, when both are counted.
    pub effective_ghz: Option<Spread>,
    /// All workers' bytes per second of wall time.
    pub throughput_bytes_per_s: Option<Spread>,
    /// Mean worker task-clock per repetition, milliseconds.
    pub task_clock_ms: Option<Spread>,
    /// CV under the bar (run only; the gate does not quote arms).
    pub quotable: bool,
    /// median(cost) / median(one-per-core cost) − 1 (run only).
    pub change_vs_one_per_core: Option<f64>,
}

/// What the measurement ran on and with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeasurementSetup {
    pub kernel: String,
    pub kernel_description: String,
    /// Instructions per byte the kernel retires by construction: what the
    /// invariance check's counted value should read.
    pub kernel_instructions_per_byte: f64,
    /// Cycles per byte on one core when its bounding port is saturated.
    pub kernel_port_bound_cycles_per_byte: f64,
    /// Bytes each worker processes per repetition (fixed for every arm and rep).
    pub bytes_per_worker: u64,
    pub buffer_bytes: usize,
    pub passes: u64,
    pub clock: ClockKind,
    pub hardware_counters: HardwareCounters,
    /// TSC frequency used for effective GHz and seconds, and where it came from.
    pub tsc_hz: f64,
    pub tsc_hz_source: String,
    pub warmups: usize,
}

/// The whole `gate --json` document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    pub schema_version: u32,
    pub kind: String,
    pub tool_version: String,
    pub verdict: Verdict,
    /// The plain sentence printed first.
    pub sentence: String,
    /// Paired estimate at the centre of `ci95` (geometric mean of the
    /// per-repetition ratios siblings / separate, minus 1).
    pub penalty: Option<f64>,
    /// median(siblings) / median(separate) − 1.
    pub penalty_of_medians: Option<f64>,
    pub ci95: Option<Interval>,
    pub threshold: f64,
    pub reps: usize,
    pub clock: Option<ClockKind>,
    pub pairs: Option<GatePairs>,
    /// Why there is no sibling pair (verdict no-smt).
    pub no_smt_reason: Option<String>,
    pub setup: Option<MeasurementSetup>,
    pub arms: Vec<ArmStats>,
    pub control: Option<Check>,
    pub excluded: Vec<ExcludedRep>,
    pub evidence: Evidence,
    pub warnings: Vec<String>,
    /// Every raw repetition, warm-ups included (marked).
    pub samples: Vec<RepSample>,
}

/// Options a run was made with, saved so a report can say so.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    pub workers: usize,
    pub arms: Vec<String>,
    pub reps: usize,
    pub warmups: usize,
    pub rep_ms: u64,
    pub kernel: String,
    pub cv_bar: f64,
    pub tolerance: f64,
    pub strict: bool,
    pub skip_gate: bool,
    pub threshold: f64,
}

/// The whole `run --json` document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub kind: String,
    pub tool_version: String,
    pub host: String,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix: u64,
    /// False when Ctrl-C stopped the run: only the repetitions done are here.
    pub complete: bool,
    /// False with --skip-gate when the gate did not say physical (or did not run).
    pub gated: bool,
    pub gate: Option<GateResult>,
    pub model: Option<String>,
    pub topology: Summary,
    /// The probed CPUs (core, package, class of each), so a report can say
    /// where every worker ran.
    pub cpus: Vec<CpuEntry>,
    pub environment: Environment,
    pub evidence: Evidence,
    pub options: RunOptions,
    pub setup: MeasurementSetup,
    pub plan: RunPlan,
    pub arms: Vec<ArmStats>,
    pub checks: Vec<Check>,
    /// Observed relative spread of instructions per byte, when counted.
    pub invariance_spread: Option<f64>,
    /// Pinning and invariance held (and, with --strict, every arm quotable).
    pub valid: bool,
    pub warnings: Vec<String>,
    pub samples: Vec<RepSample>,
}
