//! From the command line to checked options, once, whatever the machine:
//! every range, every output path and every name is checked here, before
//! anything is probed or measured, so a typo never costs a measurement and
//! never says `no-smt` for a usage error. (hyperfine's
//! `Options::from_cli_arguments`; ripgrep's LowArgs → HiArgs.)
//!
//! An error here is a usage error: `main` exits with status 2.

use crate::cli::{
    self, ArmArg, BatchArgs, Cli, GateRuleArgs, MeasureArgs, OutputArgs, RunArmArg, SourceArgs,
};
use crate::commands::baseline::{NamedBaselines, baselines_folder, check_name};
use crate::commands::completions::CompletionsCommand;
use crate::commands::gate::GateCommand;
use crate::commands::hybrid::HybridCommand;
use crate::commands::latency::LatencyCommand;
use crate::commands::observe::ObserveCommand;
use crate::commands::pairs::PairsCommand;
use crate::commands::report::ReportCommand;
use crate::commands::run::{RunCommand, RunStudy};
use crate::commands::snapshot::SnapshotCommand;
use crate::commands::topology::TopologyCommand;
use crate::commands::{Command, Outputs, Source};
use crate::escape::{escape_controls, escape_path};
use crate::fleet::hostlist::parse_host_list;
use crate::judge::batches::Batching;
use crate::judge::checks::INVARIANCE_TOLERANCE;
use crate::judge::command_checks::SAME_WORK_TOLERANCE;
use crate::judge::gate::GateRule;
use crate::judge::stats::{MIN_INTERVAL_REPS, MIN_MEDIAN_INTERVAL_VALUES};
use crate::measure::MeasureOptions;
use crate::measure::command::Output;
use crate::measure::kernel::KERNEL_NAMES;
use crate::measure::launch::resolve;
use crate::measure::recorder::ObserveTarget;
use crate::measure::tree::{DEFAULT_PREPARE_TIMEOUT, Ownership};
use crate::plan::Arm;
use crate::plan::command::{CommandArm, Units, check_placeholders};
use crate::plan::sweep::SweepOrder;
use crate::probe::CpuidSource;
use crate::probe::snapshot::{CPUID_DIR, names_document};
use crate::report::baseline::BaselineRules;
use crate::report::fleet::FleetOptions;
use crate::report::view::Charset;
use crate::saved::OutputTarget;
use crate::saved::check_distinct;
use crate::study::command::{CommandStudyOptions, RoundsOptions};
use crate::study::hybrid::HybridStudyOptions;
use crate::study::latency::{DEFAULT_SAMPLE_MS, DEFAULT_SAMPLES, LatencyStudyOptions};
use crate::study::observe::ObserveStudyOptions;
use crate::study::pairs::PairsStudyOptions;
use crate::study::run::StudyOptions;
use crate::study::sweep::{CommandSweepOptions, SweepStudyOptions};
use anyhow::{Context, Result, bail};
use std::io::IsTerminal;
use std::ops::RangeInclusive;
use std::path::Path;
use std::time::Duration;

/// `--rep-ms`: a repetition of at most 10 s; a longer one only makes the
/// whole study longer without making a median steadier.
pub const REP_MS: RangeInclusive<u64> = 1..=10_000;
/// `--warmups`.
pub const WARMUPS: RangeInclusive<usize> = 0..=100;
/// `--max-reps` and `--reps`: at most 1000 repetitions per arm.
pub const MAX_REPS: usize = 1000;

/// The most batches a gate or `pairs` comparison may take (`--batches`,
/// `--max-batches`).
pub const MAX_BATCHES: usize = 100;

/// The longest pause between batches, in milliseconds (`--batch-gap`).
pub const MAX_BATCH_GAP_MS: u64 = 60_000;
/// `--workers`: at most 1024 threads per arm.
pub const WORKERS: RangeInclusive<usize> = 1..=1024;
/// The longest `--unit` name, in characters: a word for a table header.
const MAX_UNIT_NAME: usize = 24;
/// `hybrid --rep-ms`: one worker's share, of 50 items of at least 1 ms each,
/// so handing an item out stays far below the invariance tolerance.
pub const HYBRID_REP_MS: RangeInclusive<u64> = 50..=10_000;

/// `--time-budget`: a second to a week.
pub const TIME_BUDGET: RangeInclusive<Duration> =
    Duration::from_secs(1)..=Duration::from_secs(7 * 24 * 3600);

/// `latency --samples`: enough for a 10th percentile, at most 10000.
pub const LATENCY_SAMPLES: RangeInclusive<usize> = 3..=10_000;
/// `latency --parallel`: pairs at once, one at least; 4096 pairs is 8192
/// CPUs, the most the project has probed.
pub const LATENCY_PARALLEL: RangeInclusive<usize> = 1..=4096;
/// `latency --sample-ms`: two milliseconds to ten seconds. A sample is
/// 1000 round trips, a millisecond at 500 ns one way (a guest's or another
/// package's transfer): a 1 ms bound cut a busy 2-vCPU guest's samples
/// short, and its pairs read as stacked, hidden siblings.
pub const LATENCY_SAMPLE_MS: RangeInclusive<u64> = 2..=10_000;

/// `observe --seconds`: a tenth of a second to a week.
pub const OBSERVE_SECONDS: RangeInclusive<Duration> =
    Duration::from_millis(100)..=Duration::from_secs(7 * 24 * 3600);
/// `run --prepare-timeout`: a second to a day.
pub const PREPARE_TIMEOUT: RangeInclusive<Duration> =
    Duration::from_secs(1)..=Duration::from_secs(24 * 3600);
/// `run --max-seconds`: a second to a week.
pub const MAX_SECONDS: RangeInclusive<Duration> =
    Duration::from_secs(1)..=Duration::from_secs(7 * 24 * 3600);
/// `observe --interval`: a millisecond to an hour.
pub const OBSERVE_INTERVAL_MS: RangeInclusive<u64> = 1..=3_600_000;

/// Checks the parsed command line and builds the command to run.
pub fn from_cli(cli: Cli) -> Result<Command> {
    Ok(match cli.command {
        cli::Command::Topology(args) => Command::Topology(TopologyCommand {
            source: source(&args.source)?,
            outputs: outputs(&args.output, None, None, None, &[])?,
        }),
        cli::Command::Snapshot(args) => Command::Snapshot(SnapshotCommand { dir: args.dir }),
        cli::Command::Gate(args) => {
            quiet_beside_metrics("gate", args.quiet, &args.prom)?;
            Command::Gate(GateCommand {
                source: source(&args.source)?,
                measure: measure(&args.measure)?,
                rule: gate_rule(&args.rule)?,
                outputs: outputs(&args.output, args.prom.prom.as_ref(), None, None, &[])?,
                quiet: args.quiet,
                named: named_baselines(&args.named)?,
            })
        }
        cli::Command::Pairs(args) => {
            quiet_beside_metrics("pairs", args.gate.quiet, &args.gate.prom)?;
            Command::Pairs(PairsCommand {
                source: source(&args.gate.source)?,
                study: PairsStudyOptions {
                    rule: gate_rule(&args.gate.rule)?,
                    exhaustive: args.exhaustive,
                    time_budget: args
                        .time_budget
                        .as_deref()
                        .map(|text| duration("--time-budget", text, TIME_BUDGET))
                        .transpose()?,
                    measure: measure(&args.gate.measure)?,
                    first_pass: args.first_pass.map(|cli::FirstPassArg::Latency| {
                        LatencyStudyOptions {
                            samples: DEFAULT_SAMPLES,
                            sample_bound: Duration::from_millis(DEFAULT_SAMPLE_MS),
                            time_budget: None,
                            early_stop: true,
                            parallel: None,
                            one_per_domain: false,
                        }
                    }),
                },
                outputs: outputs(
                    &args.gate.output,
                    args.gate.prom.prom.as_ref(),
                    None,
                    None,
                    &[],
                )?,
                quiet: args.gate.quiet,
                named: named_baselines(&args.gate.named)?,
            })
        }
        cli::Command::Latency(args) => {
            quiet_beside_metrics("latency", args.quiet, &args.prom)?;
            Command::Latency(LatencyCommand {
                source: source(&args.source)?,
                study: LatencyStudyOptions {
                    samples: in_range("--samples", args.samples, LATENCY_SAMPLES)?,
                    sample_bound: Duration::from_millis(in_range(
                        "--sample-ms",
                        args.sample_ms,
                        LATENCY_SAMPLE_MS,
                    )?),
                    time_budget: args
                        .time_budget
                        .as_deref()
                        .map(|text| duration("--time-budget", text, TIME_BUDGET))
                        .transpose()?,
                    early_stop: !args.all_samples,
                    parallel: args
                        .parallel
                        .map(|n| in_range("--parallel", n, LATENCY_PARALLEL))
                        .transpose()?,
                    one_per_domain: args.one_per_domain,
                },
                outputs: outputs(&args.output, args.prom.prom.as_ref(), None, None, &[])?,
                quiet: args.quiet,
                named: named_baselines(&args.named)?,
            })
        }
        cli::Command::Run(args) => {
            let outputs = outputs(&args.output, args.prom.prom.as_ref(), None, None, &[])?;
            let source = source(&args.source)?;
            let named = named_baselines(&args.named)?;
            let study = if args.sweep {
                RunStudy::Sweep(sweep_study(&args, &outputs)?)
            } else if let Some(flag) = sweep_only_flag(&args) {
                bail!(
                    "{flag} is for a sweep: add --sweep (`run --sweep --order cores-first \
                     --steps 1,2,4`)"
                );
            } else if args.command.is_empty() {
                RunStudy::Kernel(kernel_study(&args)?)
            } else {
                RunStudy::Command(Box::new(command_study(*args, &outputs)?))
            };
            Command::Run(RunCommand {
                source,
                outputs,
                study,
                named,
            })
        }
        cli::Command::Hybrid(args) => {
            in_range("--rep-ms", args.measure.rep_ms, HYBRID_REP_MS)?;
            Command::Hybrid(HybridCommand {
                source: source(&args.source)?,
                study: HybridStudyOptions {
                    workers: args
                        .workers
                        .map(|n| in_range("--workers", n, 2..=*WORKERS.end()))
                        .transpose()?,
                    every_cpu: args.every_cpu,
                    reps: hybrid_reps(&args)?,
                    batching: batching(&args.batching)?,
                    cv_bar: fraction("--cv-bar", &args.quotable.cv_bar)?,
                    tolerance: tolerance(args.quotable.tolerance, INVARIANCE_TOLERANCE)?,
                    strict: args.quotable.strict,
                    measure: measure(&args.measure)?,
                },
                outputs: outputs(&args.output, args.prom.prom.as_ref(), None, None, &[])?,
                named: named_baselines(&args.named)?,
            })
        }
        cli::Command::Observe(args) => {
            let mut outputs = outputs(
                &args.output,
                args.prom.prom.as_ref(),
                args.trace.as_ref(),
                None,
                &[],
            )?;
            // The report never goes to standard output unless asked
            // (`-o -`): a followed command's output is there.
            outputs.human_on_stderr = true;
            outputs.report = args
                .report
                .as_deref()
                .map(|path| {
                    OutputTarget::parse(path).with_context(|| format!("-o {}", escape_path(path)))
                })
                .transpose()?;
            check_outputs(&outputs)?;
            Command::Observe(ObserveCommand {
                source: source(&args.source)?,
                outputs,
                study: observe(args)?,
            })
        }
        cli::Command::Report(args) => {
            if let Some((flag, word)) = &args.output_word_read_as_input {
                bail!(
                    "report {flag} {word}: the word after {flag} is read as an input file; write \
                     {flag}={word} to save to it, or put {flag} after the input files to print to \
                     standard output"
                );
            }
            if args.files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
                bail!("report: \"-\" (standard input) can be named only once");
            }
            if args.svg.is_some() && (args.fleet || args.files.len() > 1) {
                bail!(
                    "--svg: a figure draws one saved result; name one FILE, without --fleet \
                     (write each file's figure with its own `report FILE --svg OUT`)"
                );
            }
            for (flag, asked) in [("--html", &args.html), ("--markdown", &args.markdown)] {
                if asked.is_some() && args.fleet {
                    bail!(
                        "{flag}: a page shows each saved FILE whole, --fleet sums a fleet up in \
                         one table; drop --fleet to put the files on one page"
                    );
                }
            }
            if args.prom.is_some() && args.files.len() > 1 {
                bail!(
                    "--prom: a textfile folder holds one host's metrics; name one FILE, and write \
                     each host's metrics into that host's own node_exporter folder"
                );
            }
            if args.trace.is_some() && args.files.len() > 1 {
                bail!("--trace: a trace is of one observation; name one observe FILE");
            }
            // The inputs no output may name: the files, and --baseline's OLD.
            let inputs: Vec<std::path::PathBuf> =
                args.files.iter().chain(&args.baseline).cloned().collect();
            let mut outputs = outputs(
                &args.output(),
                args.prom.as_ref(),
                args.trace.as_ref(),
                args.html.as_ref(),
                &inputs,
            )?;
            outputs.markdown = output_target("--markdown", args.markdown.as_ref(), &inputs)?;
            check_outputs(&outputs)?;
            // `--fleet`'s hosts are checked here, before any input is read.
            let fleet = match (args.fleet, &args.hosts) {
                (false, _) => None,
                (true, None) => Some(FleetOptions::default()),
                (true, Some(hosts)) => Some(FleetOptions {
                    expected_hosts: parse_host_list(hosts)?,
                }),
            };
            if fleet.is_some() {
                fleet_input(!args.files.is_empty(), std::io::stdin().is_terminal())?;
            }
            let baseline = report_baseline(&args)?;
            Command::Report(ReportCommand {
                files: args.files,
                outputs,
                fleet,
                baseline,
            })
        }
        cli::Command::Completions(args) => Command::Completions(CompletionsCommand {
            script: cli::completion_script(args.shell),
        }),
        cli::Command::Man => Command::Man,
    })
}

/// `run` without a COMMAND: the kernel study. The options only a COMMAND
/// takes are refused, naming it.
fn kernel_study(args: &cli::RunArgs) -> Result<StudyOptions> {
    if args.nothing_after_dash_dash {
        bail!(
            "run --: no COMMAND after --; give one (`run -- make -j{{threads}}`), or drop -- to \
             study the built-in kernel"
        );
    }
    let command_only = [
        (args.threads.is_some(), "--threads"),
        (args.baseline_arm.is_some(), "--baseline-arm"),
        (args.prepare.is_some(), "--prepare"),
        (args.leave_running, "--leave-running"),
        (args.max_seconds.is_some(), "--max-seconds"),
        (args.command_output.is_some(), "--output"),
        (args.units.is_some(), "--units"),
        (args.unit.is_some(), "--unit"),
        (args.ignore_failure, "--ignore-failure"),
        (
            args.arms.iter().any(|a| matches!(a, RunArmArg::Class(_))),
            "--arms class:N",
        ),
    ];
    if let Some((_, flag)) = command_only.iter().find(|(given, _)| *given) {
        bail!(
            "{flag} is for a COMMAND: give one after -- (`run {flag} … -- COMMAND`); the \
             built-in kernel's thread count is --workers"
        );
    }
    // No --arms: the default arms, which depend on the machine.
    let arms = (!args.arms.is_empty())
        .then(|| {
            let placements: Vec<Arm> = args
                .arms
                .iter()
                .filter_map(|a| match a {
                    RunArmArg::Placement(arm) => Some(study_arm(*arm)),
                    RunArmArg::Class(_) => None,
                })
                .collect();
            arms(&placements)
        })
        .transpose()?;
    let workers = args
        .workers
        .map(|n| in_range("--workers", n, WORKERS))
        .transpose()?;
    // The default arms depend on the machine: the study checks them.
    let packed = arms
        .as_ref()
        .is_some_and(|arms| arms.contains(&Arm::SiblingPacked));
    if let Some(workers) = workers.filter(|n| n % 2 == 1 && packed) {
        // The range is checked first and ends on an even number, so
        // the number offered is in it.
        bail!(
            "--workers {workers}: sibling-packed puts two workers on each core, so it \
             needs an even number; use {} or drop sibling-packed from --arms",
            workers + 1
        );
    }
    Ok(StudyOptions {
        rule: gate_rule(&args.rule)?,
        skip_gate: args.skip_gate,
        workers,
        arms,
        reps: in_range("--reps", args.reps, 2..=MAX_REPS)?,
        cv_bar: fraction("--cv-bar", &args.quotable.cv_bar)?,
        tolerance: tolerance(args.quotable.tolerance, INVARIANCE_TOLERANCE)?,
        strict: args.quotable.strict,
        measure: measure(&args.measure)?,
    })
}

/// The first option given that only a sweep takes.
fn sweep_only_flag(args: &cli::RunArgs) -> Option<&'static str> {
    [
        (args.order.is_some(), "--order"),
        (!args.steps.is_empty(), "--steps"),
        (args.no_ceiling, "--no-ceiling"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
}

/// `run --sweep`: the kernel's thread-count sweep, or with `-- COMMAND`
/// the command's. The options of the other `run` studies are refused,
/// naming what a sweep takes instead.
fn sweep_study(args: &cli::RunArgs, outputs: &Outputs) -> Result<SweepStudyOptions> {
    if args.nothing_after_dash_dash {
        bail!(
            "run --sweep --: no COMMAND after --; give one (`run --sweep -- xz -T{{threads}} \
             FILE`), or drop -- to sweep the built-in kernel"
        );
    }
    let command = if args.command.is_empty() {
        let command_only = [
            (args.prepare.is_some(), "--prepare"),
            (args.leave_running, "--leave-running"),
            (args.max_seconds.is_some(), "--max-seconds"),
            (args.command_output.is_some(), "--output"),
            (args.ignore_failure, "--ignore-failure"),
        ];
        if let Some((_, flag)) = command_only.iter().find(|(given, _)| *given) {
            bail!("{flag} is for a COMMAND: give one after -- (`run --sweep {flag} … -- COMMAND`)");
        }
        None
    } else {
        if let Some(flag) = args.kernel_only_given.first() {
            bail!("{flag} is for the built-in kernel, not a COMMAND: drop it");
        }
        if args.quotable.tolerance.is_some() {
            bail!(
                "--tolerance does not apply to a COMMAND sweep: no check compares work across \
                 steps (each {{threads}} does its own); drop it"
            );
        }
        Some(CommandSweepOptions {
            argv: executable_command(&args.command)?,
            prepare: args.prepare.clone(),
            ownership: ownership(args)?,
            output: command_output(args.command_output.clone(), outputs)?,
            warmups: in_range("--warmups", args.measure.warmups, WARMUPS)?,
            ignore_failure: args.ignore_failure,
            max: max_seconds(args)?,
        })
    };
    let refused = [
        (args.units.is_some(), "--units"),
        (args.unit.is_some(), "--unit"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
        bail!(
            "{flag} does not apply to --sweep: a sweep's unit is its first step; drop it or \
             measure costs per unit with `run --threads T -- COMMAND`"
        );
    }
    let refused = [
        (args.workers.is_some(), "--workers"),
        (!args.arms.is_empty(), "--arms"),
        (args.threads.is_some(), "--threads"),
        (args.baseline_arm.is_some(), "--baseline-arm"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
        bail!(
            "{flag} does not apply to --sweep: a sweep's workers are its steps; give --steps \
             1,2,4 and --order instead"
        );
    }
    in_range("--rep-ms", args.measure.rep_ms, HYBRID_REP_MS)?;
    let steps = (!args.steps.is_empty())
        .then(|| {
            args.steps
                .iter()
                .map(|&k| in_range("--steps", k, WORKERS))
                .collect::<Result<Vec<usize>>>()
        })
        .transpose()?;
    Ok(SweepStudyOptions {
        rule: gate_rule(&args.rule)?,
        skip_gate: args.skip_gate,
        order: args
            .order
            .as_deref()
            .map_or(Ok(SweepOrder::CoresFirst), sweep_order)?,
        steps,
        per_cpu_baselines: !args.no_ceiling,
        reps: in_range("--reps", args.reps, 2..=MAX_REPS)?,
        cv_bar: fraction("--cv-bar", &args.quotable.cv_bar)?,
        tolerance: tolerance(args.quotable.tolerance, INVARIANCE_TOLERANCE)?,
        strict: args.quotable.strict,
        measure: measure(&args.measure)?,
        command,
    })
}

/// `--order`: a named order, or a CPU list in the order given ("0,2,1,3",
/// "0-3,8-11").
fn sweep_order(text: &str) -> Result<SweepOrder> {
    match text {
        "cores-first" => return Ok(SweepOrder::CoresFirst),
        "siblings-first" => return Ok(SweepOrder::SiblingsFirst),
        "spread" => return Ok(SweepOrder::Spread),
        _ => {}
    }
    let bad = || {
        anyhow::anyhow!(
            "--order {}: use cores-first, siblings-first, spread, or a CPU list such as 0,2,1,3",
            escape_controls(text)
        )
    };
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<u32>(), b.parse::<u32>()),
            None => (part.parse::<u32>(), part.parse::<u32>()),
        };
        let (first, last) = (first.map_err(|_| bad())?, last.map_err(|_| bad())?);
        // A range no machine has CPUs for is a typo, not a list to build.
        if first > last || last - first >= 1 << 16 {
            return Err(bad());
        }
        cpus.extend(first..=last);
    }
    Ok(SweepOrder::List(cpus))
}

/// `run -- COMMAND`: the command study. The kernel's own options are
/// refused, and so is a command that is not there, before anything runs.
fn command_study(args: cli::RunArgs, outputs: &Outputs) -> Result<CommandStudyOptions> {
    if let Some(flag) = args.kernel_only_given.first() {
        let fix = if *flag == "--workers" {
            "use --threads T"
        } else {
            "drop it"
        };
        bail!("{flag} is for the built-in kernel, not a COMMAND: {fix}");
    }
    let mut arms: Vec<CommandArm> = Vec::new();
    for arm in &args.arms {
        let arm = command_arm(*arm);
        if arms.contains(&arm) {
            bail!("--arms names {arm} twice: name each arm once");
        }
        arms.push(arm);
    }
    let arms = (!arms.is_empty()).then_some(arms);
    if let Some(arms) = &arms {
        check_placeholders(&args.command, arms).map_err(|e| anyhow::anyhow!(e))?;
    }
    let max = max_seconds(&args)?;
    Ok(CommandStudyOptions {
        threads: args
            .threads
            .map(|n| in_range("--threads", n, WORKERS))
            .transpose()?,
        arms,
        baseline: args.baseline_arm.map(command_arm),
        ownership: ownership(&args)?,
        prepare: args.prepare.clone(),
        output: command_output(args.command_output, outputs)?,
        units: units(args.units, args.unit)?,
        rounds: RoundsOptions {
            warmups: in_range("--warmups", args.measure.warmups, WARMUPS)?,
            rounds: in_range("--reps", args.reps, 2..=MAX_REPS)?,
            ignore_failure: args.ignore_failure,
            max,
        },
        rule: gate_rule(&args.rule)?,
        skip_gate: args.skip_gate,
        cv_bar: fraction("--cv-bar", &args.quotable.cv_bar)?,
        tolerance: tolerance(args.quotable.tolerance, SAME_WORK_TOLERANCE)?,
        strict: args.quotable.strict,
        measure: measure(&args.measure)?,
        argv: executable_command(&args.command)?,
    })
}

/// `command` (after --), once its program is found to be an executable
/// file (on PATH where it names no folder).
fn executable_command(command: &[std::ffi::OsString]) -> Result<Vec<std::ffi::OsString>> {
    let program = &command[0];
    let found = resolve(Path::new(program))?;
    if nix::unistd::access(&found, nix::unistd::AccessFlags::X_OK).is_err() || !found.is_file() {
        bail!(
            "COMMAND '{}': no executable file there; check the path",
            escape_path(Path::new(program))
        );
    }
    Ok(command.to_vec())
}

/// `--units N [--unit NAME]`: N a positive, finite count; NAME a short
/// word that the view prints ("ns per NAME").
fn units(count: Option<f64>, name: Option<String>) -> Result<Option<Units>> {
    let Some(count) = count else {
        if let Some(name) = name {
            bail!(
                "--unit {}: needs --units N, how many of them one run processes",
                escape_controls(&name)
            );
        }
        return Ok(None);
    };
    if !(count.is_finite() && count > 0.0) {
        bail!("--units {count}: give how many units one run processes, a number above 0");
    }
    let name = name.unwrap_or_else(|| "unit".to_string());
    let printable = !name.is_empty()
        && name.chars().count() <= MAX_UNIT_NAME
        && name.chars().all(|c| !c.is_control());
    if !printable {
        bail!(
            "--unit {}: give a name of 1 to {MAX_UNIT_NAME} printable characters, such as byte",
            escape_controls(&name)
        );
    }
    Ok(Some(Units { count, name }))
}

/// `--leave-running` and `--prepare-timeout` (a second to a day).
fn ownership(args: &cli::RunArgs) -> Result<Ownership> {
    Ok(Ownership {
        leave_running: args.leave_running,
        prepare_timeout: args
            .prepare_timeout
            .as_deref()
            .map(|text| duration("--prepare-timeout", text, PREPARE_TIMEOUT))
            .transpose()?
            .unwrap_or(DEFAULT_PREPARE_TIMEOUT),
    })
}

/// `run --max-seconds` (a second to a week).
fn max_seconds(args: &cli::RunArgs) -> Result<Option<Duration>> {
    args.max_seconds
        .as_deref()
        .map(|text| duration("--max-seconds", text, MAX_SECONDS))
        .transpose()
}

/// `run --output`: null, inherit, or a regular file (existing or new, in
/// a writable folder) that none of the study's own outputs names. A FIFO
/// or device is refused: the command's output would block on a FIFO
/// without a reader, and null and inherit already name the streams.
fn command_output(arg: Option<cli::CommandOutputArg>, outputs: &Outputs) -> Result<Output> {
    let path = match arg {
        None | Some(cli::CommandOutputArg::Null) => return Ok(Output::Discard),
        Some(cli::CommandOutputArg::Inherit) => return Ok(Output::Inherit),
        Some(cli::CommandOutputArg::File(path)) => path,
    };
    let shown = escape_path(&path);
    let target = OutputTarget::parse(&path).with_context(|| format!("--output {shown}"))?;
    let OutputTarget::File { real, .. } = &target else {
        bail!(
            "--output {shown}: is standard output, a device or a FIFO; name a regular file, or \
             use --output inherit (this terminal) or --output null"
        );
    };
    let study_outputs = [
        ("--json", &outputs.json),
        ("--json-line", &outputs.json_line),
        ("--csv", &outputs.csv),
        ("--prom", &outputs.prom),
        ("--svg", &outputs.svg),
    ];
    for (option, study_output) in study_outputs {
        if let Some(OutputTarget::File { real: other, .. }) = study_output
            && other == real
        {
            bail!(
                "--output {shown}: {option} names that file too; give the command's output \
                 another file"
            );
        }
    }
    Ok(Output::File(path))
}

fn study_arm(arm: ArmArg) -> Arm {
    match arm {
        ArmArg::OnePerCore => Arm::OnePerCore,
        ArmArg::SiblingPacked => Arm::SiblingPacked,
        ArmArg::Unpinned => Arm::Unpinned,
        ArmArg::SameCpu => Arm::SameCpu,
    }
}

fn command_arm(arm: RunArmArg) -> CommandArm {
    match arm {
        RunArmArg::Placement(arm) => CommandArm::Placement(study_arm(arm)),
        RunArmArg::Class(index) => CommandArm::Class(index),
    }
}

/// `report --fleet` with no FILE reads standard input: from a terminal it
/// would wait, silently, for lines nobody is going to type.
fn fleet_input(files_named: bool, stdin_is_terminal: bool) -> Result<()> {
    if !files_named && stdin_is_terminal {
        bail!(
            "report --fleet: no FILE given and standard input is a terminal; pipe pdsh or clush \
             output in, or name saved files or an `ansible --tree` folder"
        );
    }
    Ok(())
}

/// Which CPUID source the options ask for. Without options: the live CPU
/// for the live system; for `--sysfs-root DIR`, the dump `DIR/cpuid` that
/// `snapshot` writes, when present, and for `--sysfs-root FILE.json` the
/// dump the document holds, when it holds one (never the live CPU: it belongs to
/// another machine than the snapshot). Builds for other architectures than
/// x86_64 read no CPUID, and refuse `--cpuid-dump`.
fn source(args: &SourceArgs) -> Result<Source> {
    let x86_64 = cfg!(target_arch = "x86_64");
    let cpuid = if args.no_cpuid {
        None
    } else if let Some(dump) = &args.cpuid_dump {
        if !x86_64 {
            bail!(
                "--cpuid-dump {}: CPUID is an x86 instruction; this {} build does not decode CPUID dumps (use an x86_64 build of placement-study)",
                escape_path(dump),
                std::env::consts::ARCH
            );
        }
        Some(CpuidSource::Dump(dump.clone()))
    } else {
        match &args.sysfs_root {
            // Its dump is read where the document holds one (probe_root).
            Some(root) if x86_64 && names_document(root) && !root.is_dir() => {
                Some(CpuidSource::Recorded(root.clone()))
            }
            Some(root) if x86_64 => {
                let dump = root.join(CPUID_DIR);
                dump.is_dir().then_some(CpuidSource::Dump(dump))
            }
            None if x86_64 => Some(CpuidSource::Live),
            _ => None,
        }
    };
    Ok(Source {
        sysfs_root: args.sysfs_root.clone(),
        cpuid,
    })
}

fn measure(args: &MeasureArgs) -> Result<MeasureOptions> {
    if !KERNEL_NAMES.contains(&args.kernel.as_str()) {
        bail!(
            "--kernel {}: unknown kernel; known kernels are {}",
            escape_controls(&args.kernel),
            KERNEL_NAMES.join(", ")
        );
    }
    Ok(MeasureOptions {
        kernel: args.kernel.clone(),
        rep_length: Duration::from_millis(in_range("--rep-ms", args.rep_ms, REP_MS)?),
        warmups: in_range("--warmups", args.warmups, WARMUPS)?,
        hardware_counters: !args.no_hardware_counters,
    })
}

/// `observe`'s target and limits (clap has made sure exactly one target
/// was given).
fn observe(args: cli::ObserveArgs) -> Result<ObserveStudyOptions> {
    let duration = args
        .seconds
        .as_deref()
        .map(|text| duration("--seconds", text, OBSERVE_SECONDS))
        .transpose()?;
    let target = if let Some(pid) = args.pid {
        if pid == 0 || pid == std::process::id() {
            bail!("--pid {pid}: not a process observe can follow; give another process's PID");
        }
        ObserveTarget::Pid(pid)
    } else if let Some(kernel) = args.kernel {
        if !KERNEL_NAMES.contains(&kernel.as_str()) {
            bail!(
                "--kernel {}: unknown kernel; known kernels are {}",
                escape_controls(&kernel),
                KERNEL_NAMES.join(", ")
            );
        }
        if duration.is_none() {
            bail!("--kernel {kernel} needs --seconds N: how long its threads run");
        }
        let threads = in_range("--threads", args.threads.unwrap_or(1), WORKERS)?;
        ObserveTarget::Kernel { kernel, threads }
    } else {
        if let Some(seconds) = &args.seconds {
            bail!(
                "--seconds {}: a command is followed until it exits; \
                 use `timeout` in COMMAND to cut it short",
                escape_controls(seconds)
            );
        }
        ObserveTarget::Command(args.command)
    };
    Ok(ObserveStudyOptions {
        target,
        duration,
        interval_ms: args
            .interval
            .map(|ms| in_range("--interval", ms, OBSERVE_INTERVAL_MS))
            .transpose()?
            .map(|ms| ms as f64),
        cycles: !args.no_hardware_counters,
        leave_running: args.leave_running,
    })
}

fn gate_rule(args: &GateRuleArgs) -> Result<GateRule> {
    let min_reps = in_range(
        "--min-reps",
        args.min_reps,
        MIN_MEDIAN_INTERVAL_VALUES..=MAX_REPS,
    )?;
    let max_reps = in_range("--max-reps", args.max_reps, 1..=MAX_REPS)?;
    if max_reps < min_reps {
        bail!("--max-reps {max_reps} is below --min-reps {min_reps}: raise --max-reps");
    }
    Ok(GateRule {
        threshold: fraction("--threshold", &args.threshold)?,
        min_reps,
        max_reps,
        batching: batching(&args.batching)?,
    })
}

/// `hybrid --reps`, which must leave every batch enough rounds for a
/// paired interval.
fn hybrid_reps(args: &cli::HybridArgs) -> Result<usize> {
    let reps = in_range("--reps", args.reps, 2..=MAX_REPS)?;
    let batches = args.batching.batches.max(1);
    if reps / batches < MIN_INTERVAL_REPS {
        bail!(
            "--reps {reps} gives a batch fewer than {MIN_INTERVAL_REPS} rounds with --batches \
             {batches}: raise --reps to {} or lower --batches",
            MIN_INTERVAL_REPS * batches
        );
    }
    Ok(reps)
}

fn batching(args: &BatchArgs) -> Result<Batching> {
    let batches = in_range("--batches", args.batches, 1..=MAX_BATCHES)?;
    let max_batches = in_range("--max-batches", args.max_batches, 1..=MAX_BATCHES)?;
    if max_batches < batches {
        bail!("--max-batches {max_batches} is below --batches {batches}: raise --max-batches");
    }
    let gap = in_range("--batch-gap", args.batch_gap, 0..=MAX_BATCH_GAP_MS)?;
    Ok(Batching {
        batches,
        max_batches,
        gap: Duration::from_millis(gap),
    })
}

fn arms(args: &[Arm]) -> Result<Vec<Arm>> {
    let mut arms: Vec<Arm> = Vec::new();
    for &arm in args {
        if arms.contains(&arm) {
            bail!("--arms names {arm} twice: name each arm once");
        }
        arms.push(arm);
    }
    if arms.is_empty() {
        bail!(
            "--arms is empty: name at least one of one-per-core, sibling-packed, unpinned, same-cpu"
        );
    }
    Ok(arms)
}

/// `--tolerance`, or the study's `default` where it is not given.
fn tolerance(value: Option<f64>, default: f64) -> Result<f64> {
    let Some(value) = value else {
        return Ok(default);
    };
    if !(value.is_finite() && (0.0..1.0).contains(&value)) {
        bail!("--tolerance {value}: must be a relative tolerance from 0 to below 1, such as 1e-4");
    }
    Ok(value)
}

/// `value` when it lies in `range`; otherwise the error names the option,
/// the value and the range.
fn in_range<T: PartialOrd + std::fmt::Display>(
    option: &str,
    value: T,
    range: RangeInclusive<T>,
) -> Result<T> {
    if range.contains(&value) {
        Ok(value)
    } else {
        bail!(
            "{option} {value}: out of range; use {} to {}",
            range.start(),
            range.end()
        )
    }
}

/// A fraction written as `0.15` or `15%`. A bare number above 1 is refused:
/// `--threshold 15` would mean 1500 %, and on real siblings silently say
/// `virtual`.
pub fn fraction(option: &str, text: &str) -> Result<f64> {
    let trimmed = text.trim();
    // As every message below echoes it: escaped, so it stays one line.
    let text = escape_controls(text);
    let (number, scale) = match trimmed.strip_suffix('%') {
        Some(percent) => (percent.trim(), 0.01),
        None => (trimmed, 1.0),
    };
    let value: f64 = number.parse().with_context(|| {
        format!(
            "{option} {text}: not a number; write a fraction like 0.15 or a percentage like 15%"
        )
    })?;
    let fraction = value * scale;
    if !(fraction.is_finite() && fraction > 0.0) {
        bail!("{option} {text}: must be above zero, e.g. 0.15 or 15%");
    }
    if scale == 1.0 && fraction > 1.0 {
        bail!(
            "{option} {text}: a bare number is a fraction, so this is {:.0} %; write {text}% for {text} per cent, or {} as a fraction",
            fraction * 100.0,
            fraction / 100.0
        );
    }
    Ok(fraction)
}

/// A duration written as seconds (`90`, `2.5`) or with a unit (`90s`,
/// `5m`, `1h`), within `range`.
pub fn duration(option: &str, text: &str, range: RangeInclusive<Duration>) -> Result<Duration> {
    let trimmed = text.trim();
    // As every message below echoes it: escaped, so it stays one line.
    let text = escape_controls(text);
    let (number, unit) = match trimmed.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => trimmed.split_at(at),
        None => (trimmed, "s"),
    };
    let scale = match unit {
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => bail!("{option} {text}: unknown unit '{unit}'; write seconds like 90, or 90s, 5m, 1h"),
    };
    let seconds: f64 = number.trim().parse().with_context(|| {
        format!("{option} {text}: not a duration; write seconds like 90, or 90s, 5m, 1h")
    })?;
    let value = Duration::try_from_secs_f64(seconds * scale)
        .map_err(|_| anyhow::anyhow!("{option} {text}: must be a positive duration such as 90s"))?;
    if !range.contains(&value) {
        // In seconds as written, fractions kept: "0.1 s", not "0 s".
        bail!(
            "{option} {text}: out of range; use {} s to {} s",
            range.start().as_secs_f64(),
            range.end().as_secs_f64()
        );
    }
    Ok(value)
}

/// `--save-baseline`, `--baseline NAME` and how to judge, checked: the
/// names, the threshold, and the folder baselines are kept in.
fn named_baselines(args: &cli::BaselineArgs) -> Result<NamedBaselines> {
    if args.save_baseline.is_none() && args.baseline_name.is_none() {
        return Ok(NamedBaselines::default());
    }
    for (option, name) in [
        ("--save-baseline", &args.save_baseline),
        ("--baseline", &args.baseline_name),
    ] {
        if let Some(name) = name {
            check_name(option, name)?;
        }
    }
    let variable = |name: &str| std::env::var(name).ok();
    Ok(NamedBaselines {
        folder: baselines_folder(
            variable("XDG_DATA_HOME").as_deref(),
            variable("HOME").as_deref(),
        )?,
        save: args.save_baseline.clone(),
        compare: args.baseline_name.clone(),
        rules: args
            .baseline_name
            .is_some()
            .then(|| {
                baseline_rules(
                    "--baseline-threshold",
                    &args.baseline_threshold,
                    args.fail_on,
                    args.allow_different,
                )
            })
            .transpose()?,
    })
}

/// How a baseline comparison judges: `option`'s threshold (above 0, under
/// 100 %), `--fail-on` and `--allow-different`.
fn baseline_rules(
    option: &str,
    threshold: &str,
    fail_on: Option<cli::FailOnArg>,
    allow_different: bool,
) -> Result<BaselineRules> {
    let threshold = fraction(option, threshold)?;
    if !(threshold > 0.0 && threshold < 1.0) {
        bail!("{option} {threshold}: a change threshold is above 0 and under 100 % (5%, 0.05)");
    }
    Ok(BaselineRules {
        threshold,
        allow_different,
        fail_on_inconclusive: fail_on == Some(cli::FailOnArg::Inconclusive),
    })
}

/// `report --baseline OLD`: OLD and the rules, where given; one NEW for
/// `--prom` and `--svg`, which describe one comparison.
fn report_baseline(args: &cli::ReportArgs) -> Result<Option<(std::path::PathBuf, BaselineRules)>> {
    let Some(old) = &args.baseline else {
        return Ok(None);
    };
    let rules = baseline_rules(
        "--threshold",
        &args.threshold,
        args.fail_on,
        args.allow_different,
    )?;
    Ok(Some((old.clone(), rules)))
}

/// `--quiet` prints the verdict word and `--prom FILE` may still refresh a
/// metrics file, as a health check wants; `--prom -` would share standard
/// output with the word.
fn quiet_beside_metrics(command: &str, quiet: bool, prom: &cli::PromArgs) -> Result<()> {
    if quiet && prom.prom.as_deref() == Some(Path::new("-")) {
        bail!(
            "{command} --quiet --prom -: both would go to standard output; give --prom a file \
             in node_exporter's textfile folder"
        );
    }
    Ok(())
}

/// The `--json`, `--json-line`, `--csv`, `--prom`, `--trace`, `--svg`,
/// `--html` and `--markdown` targets, checked now: they exist or can be created, are not the same, and (for
/// `report`) are none of the inputs.
fn outputs(
    args: &OutputArgs,
    prom: Option<&std::path::PathBuf>,
    trace: Option<&std::path::PathBuf>,
    html: Option<&std::path::PathBuf>,
    inputs: &[std::path::PathBuf],
) -> Result<Outputs> {
    let target =
        |option: &str, path: Option<&std::path::PathBuf>| output_target(option, path, inputs);
    let outputs = Outputs {
        json: target("--json", args.json.as_ref())?,
        json_line: target("--json-line", args.json_line.as_ref())?,
        csv: target("--csv", args.csv.as_ref())?,
        prom: target("--prom", prom)?,
        trace: target("--trace", trace)?,
        svg: target("--svg", args.svg.as_ref())?,
        html: target("--html", html)?,
        markdown: None,
        report: None,
        human_on_stderr: false,
        wide: args.view.wide,
        charset: locale_charset(),
    };
    check_outputs(&outputs)?;
    Ok(outputs)
}

/// The output `option` names at `path`, checked now (it exists or can be
/// created, and is none of the `inputs`); `None` when not asked for.
fn output_target(
    option: &str,
    path: Option<&std::path::PathBuf>,
    inputs: &[std::path::PathBuf],
) -> Result<Option<OutputTarget>> {
    let Some(path) = path else {
        return Ok(None);
    };
    if inputs.iter().any(|input| same_file(input, path)) {
        bail!(
            "{option} {}: that is one of the files to read; name another output file",
            escape_path(path)
        );
    }
    OutputTarget::parse(path)
        .map(Some)
        .with_context(|| format!("{option} {}", escape_path(path)))
}

/// Refuses two outputs of `outputs` that would spoil each other
/// ([`check_distinct`]).
fn check_outputs(outputs: &Outputs) -> Result<()> {
    let named: Vec<(&str, &OutputTarget)> = [
        ("--json", &outputs.json),
        ("--json-line", &outputs.json_line),
        ("--csv", &outputs.csv),
        ("--prom", &outputs.prom),
        ("--trace", &outputs.trace),
        ("--svg", &outputs.svg),
        ("--html", &outputs.html),
        ("--markdown", &outputs.markdown),
        ("-o", &outputs.report),
    ]
    .into_iter()
    .filter_map(|(name, target)| Some((name, target.as_ref()?)))
    .collect();
    check_distinct(&named)
}

/// The charset the human view is drawn in, from the locale's variables
/// (see [`Charset::of_locale`]), read here once. `TERM` is not asked: a
/// dumb terminal (Emacs' shell, a CI log) still shows UTF-8 when the
/// locale says so.
fn locale_charset() -> Charset {
    let variables = ["LC_ALL", "LC_CTYPE", "LANG"].map(std::env::var_os);
    Charset::of_locale(
        variables
            .iter()
            .map(|v| v.as_deref().and_then(|v| v.to_str())),
    )
}

/// Do two paths name one existing file?
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_and_percentages() {
        assert_eq!(fraction("--threshold", "0.15").unwrap(), 0.15);
        assert!((fraction("--threshold", "15%").unwrap() - 0.15).abs() < 1e-12);
        assert_eq!(fraction("--threshold", "1").unwrap(), 1.0);
        let error = fraction("--threshold", "15").unwrap_err().to_string();
        assert!(
            error.contains("write 15% for 15 per cent, or 0.15"),
            "{error}"
        );
        assert!(fraction("--threshold", "0").is_err());
        assert!(fraction("--threshold", "-5%").is_err());
        assert!(fraction("--threshold", "NaN").is_err());
        assert!(fraction("--threshold", "abc").is_err());
    }

    #[test]
    fn ranges_name_the_option_and_the_bounds() {
        let error = in_range("--rep-ms", 20_000, REP_MS)
            .unwrap_err()
            .to_string();
        assert_eq!(error, "--rep-ms 20000: out of range; use 1 to 10000");
    }

    #[test]
    fn a_duration_out_of_range_states_the_least_accepted() {
        let error = duration("--seconds", "0.05", OBSERVE_SECONDS)
            .unwrap_err()
            .to_string();
        assert_eq!(error, "--seconds 0.05: out of range; use 0.1 s to 604800 s");
    }

    #[test]
    fn values_are_echoed_escaped() {
        for error in [
            fraction("--threshold", "0.2\nx").unwrap_err(),
            duration("--seconds", "1\u{1b}[2J", OBSERVE_SECONDS).unwrap_err(),
        ] {
            let error = format!("{error:#}");
            assert!(!error.contains(['\n', '\u{1b}']), "{error:?}");
        }
    }

    /// The kernel study and the command study each default `--tolerance`
    /// to what their check needs; a value given is checked for both.
    #[test]
    fn the_tolerance_defaults_per_study() {
        assert_eq!(tolerance(None, INVARIANCE_TOLERANCE).unwrap(), 1e-4);
        assert_eq!(tolerance(None, SAME_WORK_TOLERANCE).unwrap(), 0.01);
        assert_eq!(tolerance(Some(0.05), SAME_WORK_TOLERANCE).unwrap(), 0.05);
        let error = tolerance(Some(1.5), SAME_WORK_TOLERANCE)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("--tolerance 1.5: "), "{error}");
    }

    #[test]
    fn a_fleet_report_never_waits_on_a_terminal() {
        let error = fleet_input(false, true).unwrap_err().to_string();
        assert!(error.contains("standard input is a terminal"), "{error}");
        // Piped in, or files named (even "-", asked for by name): read.
        for (files_named, stdin_is_terminal) in [(false, false), (true, true), (true, false)] {
            assert!(fleet_input(files_named, stdin_is_terminal).is_ok());
        }
    }
}
