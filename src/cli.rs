//! Command-line definitions (clap): the raw arguments as typed, nothing
//! checked beyond their syntax. [`crate::options`] turns them into checked
//! options; no clap type goes further. Every option here is documented in
//! man/placement-study.1 (a test keeps the two in step).

use clap::{
    ArgGroup, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum, ValueHint,
};
use clap_complete::generate;
use clap_complete::shells::{Bash, Fish, Zsh};
use std::ffi::OsString;
use std::path::PathBuf;

/// Where do my threads really run, and what does sharing a core cost?
#[derive(Debug, Parser)]
#[command(name = "placement-study", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parses the process arguments, with the exit-status table in `--help`.
    pub fn parse_args() -> Result<Cli, clap::Error> {
        let args: Vec<OsString> = std::env::args_os().collect();
        let mut matches = Cli::full_command().try_get_matches_from(&args)?;
        let kernel_only = matches
            .subcommand_matches("run")
            .map(kernel_only_given)
            .unwrap_or_default();
        let mut cli = Cli::from_arg_matches_mut(&mut matches)?;
        match &mut cli.command {
            Command::Report(report) => {
                report.output_word_read_as_input = report_output_read_as_input(&args);
            }
            Command::Run(run) => {
                run.kernel_only_given = kernel_only;
                run.nothing_after_dash_dash = run.command.is_empty()
                    && args
                        .iter()
                        .skip_while(|word| *word != "run")
                        .any(|w| w == "--");
            }
            _ => {}
        }
        Ok(cli)
    }
}

/// The options of `run`'s kernel study typed on the command line (not
/// defaulted), as typed: a COMMAND refuses them.
fn kernel_only_given(run: &clap::ArgMatches) -> Vec<&'static str> {
    [
        ("kernel", "--kernel"),
        ("rep_ms", "--rep-ms"),
        ("workers", "--workers"),
    ]
    .into_iter()
    .filter(|(id, _)| run.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
    .map(|(_, flag)| flag)
    .collect()
}

/// `report --json out.json in.json`: `--json` and `--csv` take their file
/// only with "=" (alone they mean standard output), so the next word is an
/// input: a user who meant to save would have their old output read back
/// as an input, and nothing saved. Such a word is refused, whatever it
/// names (options refuses it); the flag and the word are returned,
/// escaped for one line. `args` are the whole command line of a `report`.
fn report_output_read_as_input(args: &[OsString]) -> Option<(&'static str, String)> {
    let words = args.iter().skip(1).take_while(|word| *word != "--");
    let mut words = words
        .skip_while(|word| *word != "report")
        .skip(1)
        .peekable();
    while let Some(word) = words.next() {
        let Some(flag) = ["--json", "--csv"].into_iter().find(|flag| word == flag) else {
            continue;
        };
        if let Some(next) = words.peek().map(|next| next.to_string_lossy())
            && !next.starts_with('-')
        {
            return Some((flag, next.escape_debug().to_string()));
        }
    }
    None
}

impl Cli {
    /// The whole command as `--help` and the completion scripts show it.
    fn full_command() -> clap::Command {
        let mut command = Cli::command().after_help(crate::exit::help_text());
        // Each command's --help ends with its own statuses, from the same table.
        for name in crate::exit::COMMANDS {
            command =
                command.mut_subcommand(name, |sub| sub.after_help(crate::exit::help_text_of(name)));
        }
        command
            // A kernel sweep's step is a share of items as hybrid's is: the
            // range that `run --sweep` checks is said beside run's own.
            .mut_subcommand("run", |run| {
                run.mut_arg("rep_ms", |rep_ms| {
                    rep_ms.help(
                        "Target duration of one repetition in milliseconds (1 to 10000; 50 to \
                         10000 with --sweep); the byte count is calibrated once from it and \
                         then fixed for every arm and repetition (with --sweep, one worker's \
                         share of the largest step, in items of about 1 ms)",
                    )
                })
            })
            // hybrid's repetition is a worker's share of items: its own range and meaning.
            .mut_subcommand("hybrid", |hybrid| {
                hybrid.mut_arg("rep_ms", |rep_ms| {
                    rep_ms.help(
                        "How long one worker's equal share of 50 items takes, in milliseconds \
                         (50 to 10000); each item is calibrated to a 50th of it",
                    )
                })
            })
    }
}

/// The completion script for `shell`, as `placement-study completions`
/// prints it.
pub fn completion_script(shell: CompletionShell) -> String {
    let mut script = Vec::new();
    let mut command = Cli::full_command();
    let name = command.get_name().to_string();
    match shell {
        CompletionShell::Bash => generate(Bash, &mut command, name, &mut script),
        CompletionShell::Zsh => generate(Zsh, &mut command, name, &mut script),
        CompletionShell::Fish => generate(Fish, &mut command, name, &mut script),
    }
    // clap_complete writes what clap's own names and help texts hold: UTF-8.
    let script = String::from_utf8_lossy(&script).into_owned();
    match shell {
        // clap_complete's bash script tracks the command as
        // placement__study__subcmd__gate but labels its cases
        // placement__subcmd__study__subcmd__gate (the hyphen in the name is
        // escaped twice), so no option after a command would complete
        // (clap-rs/clap#6421).
        CompletionShell::Bash => script.replace("placement__subcmd__study", "placement__study"),
        CompletionShell::Zsh | CompletionShell::Fish => script,
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Probe the machine: CPUs, cores, packages, caches, core classes, CPUID or MIDR, environment.
    Topology(TopologyArgs),
    /// Save this host's topology files (with, on x86_64, a per-CPU CPUID dump) into DIR, for --sysfs-root/--cpuid-dump.
    Snapshot(SnapshotArgs),
    /// Measure the SMT co-location penalty and say whether placement is physical.
    Gate(GateArgs),
    /// Measure which CPUs really share a core, and compare that map with the published one.
    Pairs(PairsArgs),
    /// Measure the one-way cache-line latency between every pair of CPUs, and compare its domains with the published ones.
    Latency(LatencyArgs),
    /// Measure the cache ladder and the NUMA latency and bandwidth matrix, and compare them with the published cache sizes and node distances.
    Memory(MemoryArgs),
    /// Run the placement study: one-per-core vs sibling-packed workers, each counting itself; or your COMMAND after --, each arm a CPU set.
    Run(Box<RunArgs>),
    /// Measure each core class's speed, the ceiling, and static shares against work stealing.
    Hybrid(HybridArgs),
    /// Where Linux runs a workload nobody pinned: residency per CPU, core and class, migrations, settling.
    Observe(ObserveArgs),
    /// Re-render one saved result, compare several hosts' saved results, or sum up a fleet's (--fleet).
    Report(ReportArgs),
    /// Print the completion script for a shell to standard output.
    Completions(CompletionsArgs),
    /// Print this program's manual page (roff) to standard output: `placement-study man > ~/.local/share/man/man1/placement-study.1`.
    Man,
}

/// Where the machine's facts come from.
#[derive(Debug, Args, Clone, Default)]
pub struct SourceArgs {
    /// Read sysfs/procfs under DIR (the folder holding sys/ and proc/), or from a FILE.json
    /// snapshot, instead of the live system.
    #[arg(long, value_name = "DIR")]
    pub sysfs_root: Option<PathBuf>,
    /// Read CPUID from a hwloc-gather-cpuid dump (one puN file per CPU) instead of the live CPU (x86_64 builds only).
    #[arg(long, value_name = "DIR")]
    pub cpuid_dump: Option<PathBuf>,
    /// Do not read CPUID at all.
    #[arg(long, conflicts_with = "cpuid_dump")]
    pub no_cpuid: bool,
}

/// Where results go, and how wide the tables are: the same options on
/// every command but `report` (which spells them with "=").
#[derive(Debug, Args, Clone, Default)]
pub struct OutputArgs {
    /// Write the result as JSON to FILE ("-", or --json alone, for standard output).
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    /// Write the same JSON document on one line to FILE ("-" for standard output): for pdsh, clush and `report --fleet`.
    #[arg(long, value_name = "FILE")]
    pub json_line: Option<PathBuf>,
    /// Write the result as CSV to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the result as an SVG figure to FILE ("-" for standard output), atomically.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    #[command(flatten)]
    pub view: ViewArgs,
}

/// How the human view's tables are laid out.
#[derive(Debug, Args, Clone, Default)]
pub struct ViewArgs {
    /// Show every column, however wide the tables get (default: fit 80 columns, or the terminal's width).
    #[arg(long)]
    pub wide: bool,
}

/// `--prom`: the result as node_exporter textfile-collector metrics.
#[derive(Debug, Args, Clone, Default)]
pub struct PromArgs {
    /// Write the result as Prometheus metrics to FILE (node_exporter's textfile collector; "-" for standard output), atomically.
    #[arg(long, value_name = "FILE")]
    pub prom: Option<PathBuf>,
}

/// `--nfd`: the measured verdicts as a node-feature-discovery feature file.
#[derive(Debug, Args, Clone, Default)]
pub struct NfdArgs {
    /// Write the node labels as a node-feature-discovery feature file to FILE (its features.d folder; "-" for standard output), atomically.
    #[arg(long, value_name = "FILE")]
    pub nfd: Option<PathBuf>,
    /// How long the labels hold after the study was measured, e.g. 8d, 36h (1 hour to 90 days) [default: 8d].
    #[arg(long, value_name = "DURATION", requires = "nfd")]
    pub nfd_expiry: Option<String>,
    /// Exit 0 whatever the verdict (it is in the outputs); errors still fail: for a step that must not fail on a result, such as a Kubernetes init container.
    #[arg(long)]
    pub exit_zero: bool,
}

/// `--save-baseline NAME` / `--baseline NAME` on the commands that measure.
#[derive(Debug, Args, Clone, Default)]
pub struct BaselineArgs {
    /// Keep this result as the baseline NAME of this host (under $XDG_DATA_HOME/placement-study/baselines/), replacing one of that name.
    #[arg(long, value_name = "NAME")]
    pub save_baseline: Option<String>,
    /// Judge this result against the baseline NAME of this host, saved with --save-baseline: each row's change with its 95 % interval; exit 7 when a row regressed.
    #[arg(long = "baseline", value_name = "NAME")]
    pub baseline_name: Option<String>,
    /// With --baseline: a change within this of the baseline is no change: a fraction (0.05) or a percentage (5%).
    #[arg(
        long,
        default_value = "5%",
        value_name = "FRACTION|PERCENT",
        requires = "baseline_name"
    )]
    pub baseline_threshold: String,
    /// With --baseline: exit 5 when nothing regressed but a row is inconclusive.
    #[arg(long, value_enum, value_name = "WHAT", requires = "baseline_name")]
    pub fail_on: Option<FailOnArg>,
    /// With --baseline: judge even a baseline that measured something else (another workload or clock).
    #[arg(long, requires = "baseline_name")]
    pub allow_different: bool,
}

/// `--fail-on`: what else fails a baseline comparison than a regression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    /// A row inconclusive (exit 5).
    Inconclusive,
}

#[derive(Debug, Args)]
pub struct TopologyArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub nfd: NfdArgs,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Folder to create (must not exist or be empty); a name ending in .json
    /// writes one new file instead, the fast form.
    pub dir: PathBuf,
}

/// Options shared by everything that measures.
#[derive(Debug, Args, Clone)]
pub struct MeasureArgs {
    /// Kernel to run (mul: integer-multiply port bound).
    #[arg(long, default_value = "mul")]
    pub kernel: String,
    /// Target duration of one repetition in milliseconds (1 to 10000); the
    /// byte count is calibrated once from it and then fixed for every arm
    /// and repetition.
    #[arg(long, default_value_t = 50, value_name = "MS")]
    pub rep_ms: u64,
    /// Repetitions of each arm discarded before measuring (0 to 100).
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub warmups: usize,
    /// Never open hardware counters; measure with the TSC and the clock.
    #[arg(long)]
    pub no_hardware_counters: bool,
}

/// The gate's decision rule (`pairs` decides each comparison by it too).
#[derive(Debug, Args, Clone)]
pub struct GateRuleArgs {
    /// Penalty at or above which placement is physical (for pairs: a CPU shares the probe's core): a fraction (0.15) or a percentage (15%).
    #[arg(long, default_value = "15%", value_name = "FRACTION|PERCENT")]
    pub threshold: String,
    /// Rounds of a batch before it may decide (6 or more: a distribution-free 95 % interval of a median needs six).
    #[arg(long, default_value_t = 6, value_name = "N")]
    pub min_reps: usize,
    /// Most rounds of a batch while its interval straddles the threshold (at most 1000).
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub max_reps: usize,
    #[command(flatten)]
    pub batching: BatchArgs,
}

/// How a study spreads its evidence in time (gate, pairs, hybrid).
#[derive(Debug, Args, Clone)]
pub struct BatchArgs {
    /// Batches, a pause apart, that must agree for a verdict (1 to 100): the gate and pairs land on one side of the threshold, none on the other; hybrid groups the CPUs alike.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub batches: usize,
    /// Most batches before a verdict without that agreement is inconclusive (at most 100).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub max_batches: usize,
    /// Pause between batches in milliseconds (0 to 60000): a burst of host load shorter than it cannot reach two batches.
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub batch_gap: u64,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub rule: GateRuleArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub prom: PromArgs,
    #[command(flatten)]
    pub nfd: NfdArgs,
    /// Print only the verdict word (`--prom FILE` may still write metrics).
    #[arg(short, long, conflicts_with_all = ["json", "json_line", "csv", "svg"])]
    pub quiet: bool,
    #[command(flatten)]
    pub named: BaselineArgs,
}

#[derive(Debug, Args)]
pub struct PairsArgs {
    /// Everything `gate` takes: the source, measuring, its rule (each
    /// comparison's), outputs and -q.
    #[command(flatten)]
    pub gate: GateArgs,
    /// Measure every pair of CPUs (the default up to 8 CPUs; above, group testing).
    #[arg(long, conflicts_with = "first_pass")]
    pub exhaustive: bool,
    /// Find candidate sets first by a faster pass (`latency`: its default samples, time-slice bound and pairs at once), then search only within them: every sibling is still confirmed by a co-location penalty; CPUs of different sets are apart by latency.
    #[arg(long, value_name = "PASS")]
    pub first_pass: Option<FirstPassArg>,
    /// Stop measuring after this long, checked between rounds: seconds, or a number with s, m or h (90, 5m).
    #[arg(long, value_name = "DURATION")]
    pub time_budget: Option<String>,
}

#[derive(Debug, Args)]
pub struct LatencyArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Samples of 1000 round trips per pair (3 to 10000; the 10th percentile is the pair's latency).
    #[arg(long, default_value_t = crate::study::latency::DEFAULT_SAMPLES, value_name = "N")]
    pub samples: usize,
    /// Wall-time bound of one sample in milliseconds (2 to 10000): a pair with no progress within it is stacked (two vCPUs on one host CPU) and cannot hang.
    #[arg(long, default_value_t = crate::study::latency::DEFAULT_SAMPLE_MS, value_name = "MS")]
    pub sample_ms: u64,
    /// Take every sample of every pair: no early stop once a pair's latency has settled (after 10 samples, within half a cluster gap of its first half's).
    #[arg(long)]
    pub all_samples: bool,
    /// Pairs measured at once, on disjoint CPUs (1 to 4096; default: half the CPUs), while a first round measured both ways shows they do not disturb each other.
    #[arg(long, value_name = "N")]
    pub parallel: Option<usize>,
    /// Measure one representative per domain found (each CPU against its group's representative, each class refined by its own) and infer the other pairs from it: about n pairs per level instead of n²/2, exact where latency is hierarchical.
    #[arg(long, conflicts_with = "parallel")]
    pub one_per_domain: bool,
    /// Stop measuring after this long, checked between pairs: seconds, or a number with s, m or h (90, 5m).
    #[arg(long, value_name = "DURATION")]
    pub time_budget: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub prom: PromArgs,
    #[command(flatten)]
    pub nfd: NfdArgs,
    /// Print only the verdict word (`--prom FILE` may still write metrics).
    #[arg(short, long, conflicts_with_all = ["json", "json_line", "csv", "svg"])]
    pub quiet: bool,
    #[command(flatten)]
    pub named: BaselineArgs,
}

/// A first pass of `pairs`, as `--first-pass` names it.
#[derive(Debug, Args)]
pub struct MemoryArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The CPU the cache ladder runs on (default: the first this process may use).
    #[arg(long, value_name = "CPU")]
    pub cpu: Option<u32>,
    /// Streaming threads per NUMA cell (default: one per core of the CPU node).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub prom: PromArgs,
    #[command(flatten)]
    pub nfd: NfdArgs,
    /// Print only the verdict word (agree, differ, inconclusive).
    #[arg(short, long, conflicts_with_all = ["json", "json_line", "csv", "svg"])]
    pub quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FirstPassArg {
    /// The cache-line latency of every pair (`placement-study latency`).
    Latency,
}

/// A study arm, as `--arms` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ArmArg {
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
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub prom: PromArgs,
    /// Workers per arm (1 to 1024; even with sibling-packed); default: the
    /// largest N both arms can place on cores of one class in one package,
    /// or 2 where no core has two allowed hardware threads.
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Arms to run, comma-separated: one-per-core, sibling-packed, unpinned,
    /// same-cpu, and with a COMMAND class:N, cpus:LIST (a CPU list joined
    /// by +, such as cpus:0-3+8), node:N (the CPUs of NUMA node N) or
    /// cache:LEVEL:N (the CPUs sharing the Nth cache of LEVEL, such as
    /// cache:L3:0) [default: one-per-core,sibling-packed;
    /// one-per-core,same-cpu where no core has two allowed hardware threads].
    /// Without SMT, sibling-packed is left out, with a note.
    #[arg(long, value_parser = RunArmParser, value_delimiter = ',', value_name = "ARMS")]
    pub arms: Vec<RunArmArg>,
    /// Measured repetitions per arm after the warm-ups (2 to 1000).
    #[arg(long, default_value_t = 15, value_name = "N")]
    pub reps: usize,
    /// Run even when the gate does not say physical; every output is marked UNGATED.
    #[arg(long)]
    pub skip_gate: bool,
    #[command(flatten)]
    pub quotable: QuotableArgs,
    /// Bind each arm's memory to NUMA nodes (MPOL_BIND, as numactl --membind): local (the nodes of the arm's own CPUs) or a node list such as 0 or 0-1,3. The built-in kernel's buffers are bound and their pages located; a COMMAND gets the policy in its process before the exec (read back there; its children inherit it).
    #[arg(long, value_name = "local|NODES")]
    pub membind: Option<String>,
    /// With a COMMAND: what {threads} stands for, and how many CPUs each arm gives it (1 to 1024); default: the largest T one-per-core and sibling-packed can both place.
    #[arg(long, value_name = "T")]
    pub threads: Option<usize>,
    /// With a COMMAND: the arm every other is compared with [default: one-per-core, else the first arm].
    #[arg(long, value_parser = RunArmParser, value_name = "ARM")]
    pub baseline_arm: Option<RunArmArg>,
    #[command(flatten)]
    pub named: BaselineArgs,
    /// With a COMMAND: a shell command run through `sh -c` before each repetition (e.g. to drop caches); its failure stops the study.
    #[arg(long, value_name = "CMD")]
    pub prepare: Option<String>,
    /// With a COMMAND: where its standard output goes: null (discarded, the default), inherit (this terminal), or a FILE that each repetition rewrites (it ends holding the last one's); stdin is always /dev/null.
    #[arg(long = "output", value_parser = command_output, value_name = "null|inherit|FILE", value_hint = ValueHint::FilePath)]
    pub command_output: Option<CommandOutputArg>,
    /// With a COMMAND: how many units (bytes, requests, frames) one run of it processes; each arm's cost is also given per unit.
    #[arg(long, value_name = "N")]
    pub units: Option<f64>,
    /// With --units: the unit's name, singular [default: unit].
    #[arg(long, value_name = "NAME")]
    pub unit: Option<String>,
    /// With a COMMAND: keep going when it exits non-zero; those repetitions are kept, marked, and left out of every statistic.
    #[arg(long)]
    pub ignore_failure: bool,
    /// With --prepare: kill it (and its process tree) if it has not ended after DURATION (seconds, or a number with s, m or h) [default: 10m].
    #[arg(long, value_name = "DURATION", requires = "prepare")]
    pub prepare_timeout: Option<String>,
    /// With a COMMAND: leave running the processes its tree leaves behind when it exits (they are still named); by default they get SIGTERM, then SIGKILL.
    #[arg(long)]
    pub leave_running: bool,
    /// With a COMMAND: start no round once DURATION (seconds, or a number with s, m or h) has passed since the first; the rounds done are kept, and the result says it ended early.
    #[arg(long, value_name = "DURATION")]
    pub max_seconds: Option<String>,
    /// Thread-count scaling: step k runs k workers on the first k CPUs of --order, sharing one fixed work by work stealing; each step's speedup over the first CPU alone, the marginal gain of each added CPU, the ceiling, the knees. Costs each round every CPU's baseline plus every step (the progress line says how long).
    #[arg(long)]
    pub sweep: bool,
    /// With --sweep: the order CPUs are added in: cores-first (one thread of each core, fastest class first, then the SMT siblings), siblings-first, spread (packages in turn), or a CPU list such as 0,2,1,3 [default: cores-first].
    #[arg(long, value_name = "ORDER")]
    pub order: Option<String>,
    /// With --sweep: the worker counts to measure, comma-separated (step 1 is always measured) [default: every count].
    #[arg(long, value_delimiter = ',', value_name = "K,...")]
    pub steps: Vec<usize>,
    /// With --sweep: measure only the first CPU alone (step 1), not every CPU of the largest step; no step then has a ceiling or an efficiency, and a round costs far less (the per-CPU runs are the longest of a round).
    #[arg(long)]
    pub no_ceiling: bool,
    /// The command to run under each arm, with its arguments, after --; {threads} and {cpus} in them become T and the arm's CPU list.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
    /// `--kernel`, `--rep-ms`, `--workers` as typed (set by
    /// [`Cli::parse_args`]): the kernel study's, which a COMMAND refuses.
    #[arg(skip)]
    pub kernel_only_given: Vec<&'static str>,
    /// `--` was typed with no COMMAND after it (set by [`Cli::parse_args`]).
    #[arg(skip)]
    pub nothing_after_dash_dash: bool,
}

/// An arm as `run --arms` and `--baseline` name it: a study arm, or (with
/// a COMMAND) the CPUs of a core class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunArmArg {
    Placement(ArmArg),
    /// `class:N`.
    Class(usize),
    /// `cpus:LIST`, `node:N` or `cache:LEVEL:N`: the CPUs of a domain.
    Domain(crate::plan::command::CommandArm),
}

/// `--arms` and `--baseline` of `run`: a placement arm, or `class:N`.
/// A parser of its own (not a function) so that completions and help
/// still offer the arms by name, as a `ValueEnum` would.
#[derive(Clone)]
struct RunArmParser;

impl clap::builder::TypedValueParser for RunArmParser {
    type Value = RunArmArg;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<RunArmArg, clap::Error> {
        let parse: fn(&str) -> Result<RunArmArg, String> = run_arm;
        parse.parse_ref(command, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let placements = ArmArg::value_variants()
            .iter()
            .filter_map(ValueEnum::to_possible_value);
        let class = clap::builder::PossibleValue::new("class:0")
            .help("with a COMMAND: T CPUs of core class N (class:1, ...)");
        let cpus = clap::builder::PossibleValue::new("cpus:0")
            .help("with a COMMAND: the CPUs listed (cpus:0-3,8)");
        let node = clap::builder::PossibleValue::new("node:0")
            .help("with a COMMAND: the CPUs of NUMA node N");
        let cache = clap::builder::PossibleValue::new("cache:L3:0")
            .help("with a COMMAND: the CPUs sharing the Nth cache of a level");
        Some(Box::new(placements.chain([class, cpus, node, cache])))
    }
}

fn run_arm(text: &str) -> Result<RunArmArg, String> {
    if ["cpus:", "node:", "cache:"]
        .iter()
        .any(|prefix| text.starts_with(prefix))
    {
        return text.parse().map(RunArmArg::Domain);
    }
    if let Some(index) = text.strip_prefix("class:") {
        return index
            .parse()
            .map(RunArmArg::Class)
            .map_err(|_| "a class is class:N, N a class's index from 0".to_string());
    }
    ArmArg::from_str(text, false)
        .map(RunArmArg::Placement)
        .map_err(|_| {
            "use one-per-core, sibling-packed, unpinned, same-cpu, or with a COMMAND class:N, \
             cpus:LIST, node:N or cache:LEVEL:N"
                .to_string()
        })
}

/// `run --output`: where a COMMAND's standard output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandOutputArg {
    /// Discarded (/dev/null).
    Null,
    /// This process's standard output and error.
    Inherit,
    /// A file (checked in `options`); `./null` names a file called null.
    File(PathBuf),
}

fn command_output(text: &str) -> Result<CommandOutputArg, String> {
    Ok(match text {
        "null" => CommandOutputArg::Null,
        "inherit" => CommandOutputArg::Inherit,
        _ => CommandOutputArg::File(PathBuf::from(text)),
    })
}

/// When a study's numbers may be quoted (`run`, `hybrid`).
#[derive(Debug, Args)]
pub struct QuotableArgs {
    /// Coefficient of variation above which an arm (hybrid: a baseline or scheme) is "not quotable": a fraction (0.01) or a percentage (1%).
    #[arg(long, default_value = "1%", value_name = "FRACTION|PERCENT")]
    pub cv_bar: String,
    /// Relative tolerance for instructions per byte across workers, repetitions and arms (default 1e-4); with a COMMAND, for each arm's user-space instructions against the baseline arm's (default 0.01).
    #[arg(long, value_name = "FRACTION")]
    pub tolerance: Option<f64>,
    /// Exit 6 when any arm (hybrid: baseline or scheme) is over the CV bar, not only on failed pinning, multiplexing or invariance.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
pub struct HybridArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Measuring options (`--rep-ms` gets hybrid's own help in
    /// [`Cli::parse_args`]).
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub prom: PromArgs,
    #[command(flatten)]
    pub nfd: NfdArgs,
    /// Workers of each scheme, one per core (2 to 1024); default: one per allowed core.
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// A pinned baseline on every worker CPU, not one per published class: finds classes the machine does not publish.
    #[arg(long)]
    pub every_cpu: bool,
    /// Measured rounds after the warm-ups, split into --batches batches (2 to 1000, at least 3 a batch); each round runs every baseline and every scheme once.
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub reps: usize,
    #[command(flatten)]
    pub batching: BatchArgs,
    #[command(flatten)]
    pub quotable: QuotableArgs,
    #[command(flatten)]
    pub named: BaselineArgs,
}

/// `observe`: one of a command, `--pid` or `--kernel`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("target").required(true).args(["command", "pid", "kernel"])))]
pub struct ObserveArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub prom: PromArgs,
    /// Write the schedule as Chrome trace-event JSON to FILE ("-" for standard output), for Perfetto's UI or chrome://tracing.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Follow this running process: its threads, and their children from now on.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    /// Run this built-in kernel (mul) on --threads unpinned threads for --seconds.
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// Threads running --kernel (1 to 1024).
    #[arg(long, value_name = "K", requires = "kernel")]
    pub threads: Option<usize>,
    /// How long: required with --kernel; with --pid, at most this long (otherwise until it exits or Ctrl-C). Seconds, or a number with s, m or h.
    #[arg(long, value_name = "DURATION")]
    pub seconds: Option<String>,
    /// Add a timeline: time on each core class per MS milliseconds (1 to 3600000).
    #[arg(long, value_name = "MS")]
    pub interval: Option<u64>,
    /// Do not count cycles (no busy frequency).
    #[arg(long)]
    pub no_hardware_counters: bool,
    /// Write the human report to FILE, atomically, instead of standard error (the followed command keeps standard output to itself).
    #[arg(short = 'o', long = "report", value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub report: Option<PathBuf>,
    /// With a COMMAND: leave running the processes its tree leaves behind when it exits (they are still named); by default they get SIGTERM, then SIGKILL.
    #[arg(long)]
    pub leave_running: bool,
    /// The command to run and follow, with its arguments, after --.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Saved `gate`, `run`, `pairs`, `hybrid` or `observe` results ("-" for standard input): one re-renders it, several compare hosts; with --fleet, saved results or pdsh/clush output (standard input when none is named).
    #[arg(required_unless_present = "fleet", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Sum up a fleet: hosts by verdict, CPU model and hypervisor, the outliers, the missing and broken hosts.
    #[arg(long)]
    pub fleet: bool,
    /// With --fleet: the hosts that should have answered, in pdsh/ClusterShell syntax (node[01-40],login1); those without a result are named missing.
    #[arg(long, value_name = "HOSTLIST", requires = "fleet")]
    pub hosts: Option<String>,
    /// Write the result as JSON: alone to standard output, or --json=FILE
    /// (the "=" is required here: a word after --json is an input file).
    /// With --fleet, one line per host.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    /// Write the same JSON on one line to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE", conflicts_with = "fleet")]
    pub json_line: Option<PathBuf>,
    /// Write the result as CSV: alone to standard output, or --csv=FILE.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub csv: Option<PathBuf>,
    /// Write one saved result as Prometheus metrics to FILE ("-" for standard output), atomically.
    #[arg(long, value_name = "FILE", conflicts_with = "fleet")]
    pub prom: Option<PathBuf>,
    /// Write one saved observe result's schedule as Chrome trace-event JSON to FILE ("-" for standard output), for Perfetto's UI or chrome://tracing.
    #[arg(long, value_name = "FILE", conflicts_with = "fleet")]
    pub trace: Option<PathBuf>,
    /// Write one saved result as an SVG figure to OUT ("-" for standard output), atomically.
    #[arg(long, value_name = "OUT")]
    pub svg: Option<PathBuf>,
    /// Write every FILE as one self-contained HTML page (figures, tables, checks, notes; several hosts compared, then side by side), or the --fleet or --baseline view, to OUT ("-" for standard output), atomically.
    #[arg(long, value_name = "OUT")]
    pub html: Option<PathBuf>,
    /// Write every FILE's view (several hosts compared first), or the --fleet or --baseline view, as Markdown (pipe tables; for a ticket or a pull request) to OUT ("-" for standard output), atomically.
    #[arg(long, value_name = "OUT")]
    pub markdown: Option<PathBuf>,
    /// Judge each FILE against OLD, a saved result of its kind (a baseline): each row's change with a distribution-free 95 % interval; exit 7 when a row regressed.
    #[arg(long = "baseline", value_name = "OLD", conflicts_with_all = ["fleet", "trace"])]
    pub baseline: Option<PathBuf>,
    /// With --baseline: a change within this of the baseline is no change: a fraction (0.05) or a percentage (5%).
    #[arg(
        long,
        default_value = "5%",
        value_name = "FRACTION|PERCENT",
        requires = "baseline"
    )]
    pub threshold: String,
    /// With --baseline: exit 5 when nothing regressed but a row is inconclusive.
    #[arg(long, value_enum, value_name = "WHAT", requires = "baseline")]
    pub fail_on: Option<FailOnArg>,
    /// With --baseline: judge even files that measured something else than OLD (another workload or clock).
    #[arg(long, requires = "baseline")]
    pub allow_different: bool,
    #[command(flatten)]
    pub nfd: NfdArgs,
    #[command(flatten)]
    pub view: ViewArgs,
    /// `--json WORD` or `--csv WORD` as typed: WORD was read as an input
    /// (set by [`Cli::parse_args`]).
    #[arg(skip)]
    pub output_word_read_as_input: Option<(&'static str, String)>,
}

impl ReportArgs {
    /// The outputs, in the shape every other command has them.
    pub fn output(&self) -> OutputArgs {
        OutputArgs {
            json: self.json.clone(),
            json_line: self.json_line.clone(),
            csv: self.csv.clone(),
            svg: self.svg.clone(),
            view: self.view.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

/// A shell `completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}
