//! Options more than one command takes: where the machine's facts come
//! from, how to measure, the gate's rule and batches, and the outputs.

use super::limits::*;
use crate::cli::{self, BatchArgs, GateRuleArgs, MeasureArgs, OutputArgs, SourceArgs};
use crate::commands::{Outputs, Source};
use crate::escape::{escape_controls, escape_path};
use crate::judge::batches::Batching;
use crate::judge::gate::GateRule;
use crate::judge::stats::{MIN_INTERVAL_REPS, MIN_MEDIAN_INTERVAL_VALUES};
use crate::measure::MeasureOptions;
use crate::measure::kernel::KERNEL_NAMES;
use crate::measure::recorder::ObserveTarget;
use crate::probe::CpuidSource;
use crate::probe::recording::CPUID_DIR;
use crate::probe::snapshot::names_document;
use crate::report::nfd::Expiry;
use crate::report::view::Charset;
use crate::saved::OutputTarget;
use crate::saved::check_distinct;
use crate::study::observe::ObserveStudyOptions;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `report --fleet` with no FILE reads standard input: from a terminal it
/// would wait, silently, for lines nobody is going to type.
pub(super) fn fleet_input(files_named: bool, stdin_is_terminal: bool) -> Result<()> {
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
pub(super) fn source(args: &SourceArgs) -> Result<Source> {
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

pub(super) fn measure(args: &MeasureArgs) -> Result<MeasureOptions> {
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
pub(super) fn observe(args: cli::ObserveArgs) -> Result<ObserveStudyOptions> {
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

pub(super) fn gate_rule(args: &GateRuleArgs) -> Result<GateRule> {
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
pub(super) fn hybrid_reps(args: &cli::HybridArgs) -> Result<usize> {
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

pub(super) fn batching(args: &BatchArgs) -> Result<Batching> {
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

/// `--quiet` prints the verdict word and `--prom FILE` may still refresh a
/// metrics file, as a health check wants; `--prom -` would share standard
/// output with the word.
pub(super) fn quiet_beside_metrics(command: &str, quiet: bool, prom: &cli::PromArgs) -> Result<()> {
    if quiet && prom.prom.as_deref() == Some(Path::new("-")) {
        bail!(
            "{command} --quiet --prom -: both would go to standard output; give --prom a file \
             in node_exporter's textfile folder"
        );
    }
    Ok(())
}

/// The `--json`, `--json-line`, `--csv`, `--prom`, `--trace`, `--svg` and
/// `--html` targets, checked now: they exist or can be created, are not the
/// same, and (for `report`) are none of the inputs. `--markdown` and `--nfd`
/// are set after ([`output_target`], [`with_nfd`]).
pub(super) fn outputs(
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
        nfd: None,
        nfd_expiry: Expiry::default(),
        exit_zero: false,
        report: None,
        human_on_stderr: false,
        wide: args.view.wide,
        charset: locale_charset(),
    };
    check_outputs(&outputs)?;
    Ok(outputs)
}

/// `outputs` with `--nfd` and its `--nfd-expiry`, and `--exit-zero`,
/// checked now with the others (none of `inputs`, none the same as
/// another).
pub(super) fn with_nfd(
    mut outputs: Outputs,
    args: &cli::NfdArgs,
    inputs: &[PathBuf],
) -> Result<Outputs> {
    outputs.nfd = output_target("--nfd", args.nfd.as_ref(), inputs)?;
    outputs.exit_zero = args.exit_zero;
    if let Some(text) = &args.nfd_expiry {
        let expiry = duration("--nfd-expiry", text, NFD_EXPIRY)?;
        outputs.nfd_expiry = Expiry {
            seconds: expiry.as_secs(),
        };
    }
    check_outputs(&outputs)?;
    Ok(outputs)
}

/// The output `option` names at `path`, checked now (it exists or can be
/// created, and is none of the `inputs`); `None` when not asked for.
pub(super) fn output_target(
    option: &str,
    path: Option<&PathBuf>,
    inputs: &[PathBuf],
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
pub(super) fn check_outputs(outputs: &Outputs) -> Result<()> {
    let named: Vec<(&str, &OutputTarget)> = [
        ("--json", &outputs.json),
        ("--json-line", &outputs.json_line),
        ("--csv", &outputs.csv),
        ("--prom", &outputs.prom),
        ("--trace", &outputs.trace),
        ("--svg", &outputs.svg),
        ("--html", &outputs.html),
        ("--markdown", &outputs.markdown),
        ("--nfd", &outputs.nfd),
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
pub(super) fn locale_charset() -> Charset {
    let variables = ["LC_ALL", "LC_CTYPE", "LANG"].map(std::env::var_os);
    Charset::of_locale(
        variables
            .iter()
            .map(|v| v.as_deref().and_then(|v| v.to_str())),
    )
}

/// Do two paths name one existing file?
pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}
