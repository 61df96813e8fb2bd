//! From the command line to checked options, once, whatever the machine:
//! every range, every output path and every name is checked here, before
//! anything is probed or measured, so a typo never costs a measurement and
//! never says `no-smt` for a usage error. (hyperfine's
//! `Options::from_cli_arguments`; ripgrep's LowArgs → HiArgs.)
//!
//! An error here is a usage error: `main` exits with status 2.

mod baseline;
mod limits;
mod run;
mod shared;

use crate::cli::{self, Cli};
use crate::commands::Command;
use crate::commands::completions::CompletionsCommand;
use crate::commands::gate::GateCommand;
use crate::commands::hybrid::HybridCommand;
use crate::commands::latency::LatencyCommand;
use crate::commands::memory::MemoryCommand;
use crate::commands::observe::ObserveCommand;
use crate::commands::pairs::PairsCommand;
use crate::commands::report::ReportCommand;
use crate::commands::run::{RunCommand, RunStudy};
use crate::commands::snapshot::SnapshotCommand;
use crate::commands::topology::TopologyCommand;
use crate::escape::escape_path;
use crate::fleet::hostlist::parse_host_list;
use crate::judge::checks::INVARIANCE_TOLERANCE;
use crate::report::fleet::FleetOptions;
use crate::saved::MemoryOptions;
use crate::saved::OutputTarget;
use crate::study::hybrid::HybridStudyOptions;
use crate::study::latency::{DEFAULT_SAMPLE_MS, DEFAULT_SAMPLES, LatencyStudyOptions};
use crate::study::pairs::PairsStudyOptions;
use anyhow::{Context, Result, bail};
use baseline::{named_baselines, report_baseline};
pub use limits::*;
use run::*;
use shared::*;
use std::io::IsTerminal;
use std::time::Duration;

/// Checks the parsed command line and builds the command to run.
pub fn from_cli(cli: Cli) -> Result<Command> {
    Ok(match cli.command {
        cli::Command::Topology(args) => Command::Topology(TopologyCommand {
            source: source(&args.source)?,
            outputs: with_nfd(
                outputs(&args.output, None, None, None, &[])?,
                &args.nfd,
                &[],
            )?,
        }),
        cli::Command::Snapshot(args) => Command::Snapshot(SnapshotCommand { dir: args.dir }),
        cli::Command::Gate(args) => {
            quiet_beside_metrics("gate", args.quiet, &args.prom)?;
            Command::Gate(GateCommand {
                source: source(&args.source)?,
                measure: measure(&args.measure)?,
                rule: gate_rule(&args.rule)?,
                outputs: with_nfd(
                    outputs(&args.output, args.prom.prom.as_ref(), None, None, &[])?,
                    &args.nfd,
                    &[],
                )?,
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
                outputs: with_nfd(
                    outputs(
                        &args.gate.output,
                        args.gate.prom.prom.as_ref(),
                        None,
                        None,
                        &[],
                    )?,
                    &args.gate.nfd,
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
                outputs: with_nfd(
                    outputs(&args.output, args.prom.prom.as_ref(), None, None, &[])?,
                    &args.nfd,
                    &[],
                )?,
                quiet: args.quiet,
                named: named_baselines(&args.named)?,
            })
        }
        cli::Command::Memory(args) => {
            quiet_beside_metrics("memory", args.quiet, &args.prom)?;
            Command::Memory(MemoryCommand {
                source: source(&args.source)?,
                study: MemoryOptions {
                    cpu: args.cpu,
                    threads: args
                        .threads
                        .map(|n| in_range("--threads", n, WORKERS))
                        .transpose()?,
                    ..MemoryOptions::default()
                },
                outputs: with_nfd(
                    outputs(&args.output, args.prom.prom.as_ref(), None, None, &[])?,
                    &args.nfd,
                    &[],
                )?,
                quiet: args.quiet,
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
                outputs: with_nfd(
                    outputs(&args.output, args.prom.prom.as_ref(), None, None, &[])?,
                    &args.nfd,
                    &[],
                )?,
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
            let outputs = with_nfd(outputs, &args.nfd, &inputs)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::command_checks::SAME_WORK_TOLERANCE;

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

    /// `run --membind` is checked once, here: `local` or a node list
    /// reaches the kernel study and the command study; a malformed value
    /// and a sweep are refused naming the value and the fix.
    #[test]
    fn membind_reaches_both_run_studies_and_bad_values_are_refused() {
        use crate::commands::run::RunStudy;
        use crate::plan::membind::Membind;
        use clap::Parser;
        let study = |args: &[&str]| -> Result<RunStudy> {
            let cli = Cli::try_parse_from(["placement-study", "run"].iter().chain(args))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            match from_cli(cli)? {
                Command::Run(run) => Ok(run.study),
                _ => unreachable!("run parses as run"),
            }
        };
        let Ok(RunStudy::Kernel(kernel)) = study(&["--membind", "local"]) else {
            panic!("a kernel study");
        };
        assert_eq!(kernel.membind, Some(Membind::Local));
        let Ok(RunStudy::Command(command)) = study(&["--membind", "1,0", "--", "true"]) else {
            panic!("a command study");
        };
        assert_eq!(command.membind, Some(Membind::Nodes(vec![0, 1])));
        let Ok(RunStudy::Kernel(unbound)) = study(&[]) else {
            panic!("a kernel study");
        };
        assert_eq!(unbound.membind, None);
        for (args, expected) in [
            (&["--membind", "any"][..], "--membind any: give local"),
            (&["--membind", "0-"][..], "--membind 0-: give local"),
            (
                &["--sweep", "--membind", "0"][..],
                "--membind does not apply to --sweep",
            ),
        ] {
            let error = study(args).err().expect("refused").to_string();
            assert!(error.starts_with(expected), "{args:?}: {error}");
        }
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
