//! Command-line definitions (clap). Every option here is documented in
//! man/placement-study.1; keep the two in step.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Where do my threads really run, and what does sharing a core cost?
#[derive(Debug, Parser)]
#[command(
    name = "placement-study",
    version,
    about,
    after_help = "Exit status: 0 success (gate: physical); 1 error; 2 usage; \
3 gate: virtual (the affinity mask moved nothing physical); 4 gate: no-smt; \
5 gate: inconclusive; 6 run: invalid (pinning or counter invariance failed, or --strict and an arm over the CV bar)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Probe the machine: CPUs, cores, packages, caches, core classes, CPUID, environment.
    Topology(TopologyArgs),
    /// Save this host's topology files and a per-CPU CPUID dump into DIR, for --sysfs-root/--cpuid-dump.
    Snapshot(SnapshotArgs),
    /// Measure the SMT co-location penalty and say whether placement is physical.
    #[command(
        after_help = "Verdicts and exit codes: physical 0, virtual 3, no-smt 4, inconclusive 5, error 1, usage 2."
    )]
    Gate(GateArgs),
    /// Run the placement study: one-per-core vs sibling-packed workers, each counting itself.
    #[command(
        after_help = "Exit codes: 0 valid run; 3/4/5 the gate's verdict (without --skip-gate); \
6 invalid run (pinning or invariance failed; with --strict also an arm over the CV bar); 1 error; 2 usage."
    )]
    Run(RunArgs),
    /// Re-render one saved run, or compare several hosts' saved runs.
    Report(ReportArgs),
}

/// Where the machine's facts come from.
#[derive(Debug, Args, Clone, Default)]
pub struct SourceArgs {
    /// Read sysfs/procfs under DIR (the folder holding sys/ and proc/) instead of the live system.
    #[arg(long, value_name = "DIR")]
    pub sysfs_root: Option<PathBuf>,
    /// Read CPUID from a hwloc-gather-cpuid dump (one puN file per CPU) instead of the live CPU.
    #[arg(long, value_name = "DIR")]
    pub cpuid_dump: Option<PathBuf>,
    /// Do not read CPUID at all.
    #[arg(long, conflicts_with = "cpuid_dump")]
    pub no_cpuid: bool,
}

#[derive(Debug, Args)]
pub struct TopologyArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print the documented JSON schema instead of the human view.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Folder to create (must not exist or be empty).
    pub dir: PathBuf,
}

/// Options shared by everything that measures.
#[derive(Debug, Args, Clone)]
pub struct MeasureArgs {
    /// Kernel to run (mul: integer-multiply port bound).
    #[arg(long, default_value = "mul")]
    pub kernel: String,
    /// Target duration of one repetition in milliseconds; the byte count is
    /// calibrated once from it and then fixed for every arm and repetition.
    #[arg(long, default_value_t = 50, value_name = "MS")]
    pub rep_ms: u64,
    /// Repetitions discarded before measuring.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub warmups: usize,
    /// Never open hardware counters; measure with the TSC and the clock.
    #[arg(long)]
    pub no_hardware_counters: bool,
}

/// The gate's decision rule.
#[derive(Debug, Args, Clone)]
pub struct GateRuleArgs {
    /// Penalty (fraction) at or above which placement is physical.
    #[arg(long, default_value_t = 0.15, value_name = "FRACTION")]
    pub threshold: f64,
    /// Repetitions before the gate may stop early.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub min_reps: usize,
    /// Most repetitions while the interval straddles the threshold.
    #[arg(long, default_value_t = 30, value_name = "N")]
    pub max_reps: usize,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub rule: GateRuleArgs,
    /// Print JSON (verdict, penalty, ci95, pairs, every raw sample, evidence).
    #[arg(long, conflicts_with = "quiet")]
    pub json: bool,
    /// Print only the verdict word.
    #[arg(short, long)]
    pub quiet: bool,
}

/// A placement arm of the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ArmKind {
    /// N cores, one hardware thread each.
    OnePerCore,
    /// N/2 cores, both hardware threads.
    SiblingPacked,
    /// The OS places the threads; where they ran is recorded.
    Unpinned,
    /// Every worker on one logical CPU (a control: time-sliced).
    SameCpu,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub rule: GateRuleArgs,
    /// Workers per arm (even); default: the largest N both arms can place on
    /// cores of one class in one package.
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Arms to run, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [ArmKind::OnePerCore, ArmKind::SiblingPacked])]
    pub arms: Vec<ArmKind>,
    /// Measured repetitions per arm (after the warm-ups).
    #[arg(long, default_value_t = 15, value_name = "N")]
    pub reps: usize,
    /// Run even when the gate does not say physical; every output is marked UNGATED.
    #[arg(long)]
    pub skip_gate: bool,
    /// Coefficient of variation above which an arm is "not quotable".
    #[arg(long, default_value_t = 0.01, value_name = "FRACTION")]
    pub cv_bar: f64,
    /// Relative tolerance for instructions per byte across workers, reps and arms.
    #[arg(long, default_value_t = 1e-4, value_name = "FRACTION")]
    pub tolerance: f64,
    /// Exit 6 when any arm is over the CV bar, not only on failed pinning or invariance.
    #[arg(long)]
    pub strict: bool,
    /// Write everything as JSON to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per worker per repetition to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Saved `run --json` files: one re-renders it, several compare hosts.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print the comparison as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}
