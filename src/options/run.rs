//! `run`'s options: the kernel study, the sweep, and a user's command
//! under the arms.

use super::limits::*;
use super::shared::*;
use crate::cli::{self, ArmArg, RunArmArg};
use crate::commands::Outputs;
use crate::escape::{escape_controls, escape_path};
use crate::judge::checks::INVARIANCE_TOLERANCE;
use crate::judge::command_checks::SAME_WORK_TOLERANCE;
use crate::measure::command::Output;
use crate::measure::launch::resolve;
use crate::measure::tree::{DEFAULT_PREPARE_TIMEOUT, Ownership};
use crate::plan::Arm;
use crate::plan::command::{CommandArm, Units, check_placeholders};
use crate::plan::membind::Membind;
use crate::plan::sweep::SweepOrder;
use crate::saved::OutputTarget;
use crate::study::command::{CommandStudyOptions, RoundsOptions};
use crate::study::run::StudyOptions;
use crate::study::sweep::{CommandSweepOptions, SweepStudyOptions};
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::time::Duration;

/// `run` without a COMMAND: the kernel study. The options only a COMMAND
/// takes are refused, naming it.
pub(super) fn kernel_study(args: &cli::RunArgs) -> Result<StudyOptions> {
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
        (
            args.arms.iter().any(|a| matches!(a, RunArmArg::Domain(_))),
            "--arms cpus:LIST, node:N and cache:LEVEL:N",
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
                    RunArmArg::Class(_) | RunArmArg::Domain(_) => None,
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
        membind: membind(args)?,
    })
}

/// `--membind`: `local` or a node list, as `numactl --membind` takes it
/// (the nodes are checked against the machine when the arms are planned).
pub(super) fn membind(args: &cli::RunArgs) -> Result<Option<Membind>> {
    args.membind
        .as_deref()
        .map(|text| text.parse::<Membind>().map_err(|e| anyhow::anyhow!(e)))
        .transpose()
}

/// The first option given that only a sweep takes.
pub(super) fn sweep_only_flag(args: &cli::RunArgs) -> Option<&'static str> {
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
pub(super) fn sweep_study(args: &cli::RunArgs, outputs: &Outputs) -> Result<SweepStudyOptions> {
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
    if args.membind.is_some() {
        bail!(
            "--membind does not apply to --sweep: a sweep's steps share one work; bind the \
             arms of `run --membind local` or `run --membind local -- COMMAND` instead, or \
             drop it"
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
pub(super) fn sweep_order(text: &str) -> Result<SweepOrder> {
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
pub(super) fn command_study(args: cli::RunArgs, outputs: &Outputs) -> Result<CommandStudyOptions> {
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
    let membind = membind(&args)?;
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
        membind,
        argv: executable_command(&args.command)?,
    })
}

/// `command` (after --), once its program is found to be an executable
/// file (on PATH where it names no folder).
pub(super) fn executable_command(
    command: &[std::ffi::OsString],
) -> Result<Vec<std::ffi::OsString>> {
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
pub(super) fn units(count: Option<f64>, name: Option<String>) -> Result<Option<Units>> {
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
pub(super) fn ownership(args: &cli::RunArgs) -> Result<Ownership> {
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
pub(super) fn max_seconds(args: &cli::RunArgs) -> Result<Option<Duration>> {
    args.max_seconds
        .as_deref()
        .map(|text| duration("--max-seconds", text, MAX_SECONDS))
        .transpose()
}

/// `run --output`: null, inherit, or a regular file (existing or new, in
/// a writable folder) that none of the study's own outputs names. A FIFO
/// or device is refused: the command's output would block on a FIFO
/// without a reader, and null and inherit already name the streams.
pub(super) fn command_output(
    arg: Option<cli::CommandOutputArg>,
    outputs: &Outputs,
) -> Result<Output> {
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

pub(super) fn study_arm(arm: ArmArg) -> Arm {
    match arm {
        ArmArg::OnePerCore => Arm::OnePerCore,
        ArmArg::SiblingPacked => Arm::SiblingPacked,
        ArmArg::Unpinned => Arm::Unpinned,
        ArmArg::SameCpu => Arm::SameCpu,
    }
}

pub(super) fn command_arm(arm: RunArmArg) -> CommandArm {
    match arm {
        RunArmArg::Placement(arm) => CommandArm::Placement(study_arm(arm)),
        RunArmArg::Class(index) => CommandArm::Class(index),
        RunArmArg::Domain(arm) => arm,
    }
}

pub(super) fn arms(args: &[Arm]) -> Result<Vec<Arm>> {
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
