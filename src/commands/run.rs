//! `placement-study run`: the placement study. The gate first (unless
//! `--skip-gate`), then the arms interleaved per repetition, every worker
//! counting itself, then the validity checks that decide whether the numbers
//! may be quoted.

use crate::cli::{ArmKind, RunArgs};
use crate::commands::measuring::{self, progress, progress_done};
use crate::judge::arms::{arm_stats, measured};
use crate::judge::checks::{self, CheckStatus};
use crate::judge::gate::{EXIT_INVALID_RUN, Verdict};
use crate::measure::{RepSample, stop};
use crate::plan::{self, arm_name};
use crate::report;
use crate::results::{RESULT_SCHEMA_VERSION, RunOptions, RunResult};
use anyhow::{Result, bail};
use std::time::{SystemTime, UNIX_EPOCH};

pub fn run(args: &RunArgs) -> Result<i32> {
    validate(args)?;
    // From the start, so a signal during probing or calibration is not lost.
    stop::install_stop_handlers()?;
    let topology = crate::commands::topology::probe_from(&args.source)?;
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);

    let gate = if args.skip_gate {
        None
    } else {
        let gate = crate::commands::gate::measure(&topology, &args.measure, &args.rule)?;
        if gate.verdict != Verdict::Physical {
            eprint!("{}", report::gate::render(&gate));
            eprintln!(
                "run: stopped at the gate ({}): the study would measure nothing physical here; \
                 --skip-gate runs it anyway, marked UNGATED",
                gate.verdict.as_str()
            );
            return Ok(gate.verdict.exit_code());
        }
        Some(gate)
    };

    let workers = match args.workers {
        Some(n) => n,
        None => plan::default_workers(&topology).ok_or_else(|| {
            anyhow::anyhow!(
                "no core has two allowed hardware threads, so there is no default --workers; \
                 pass --workers N and --arms without sibling-packed (e.g. --arms one-per-core,same-cpu)"
            )
        })?,
    };
    let run_plan = plan::run_arms(&topology, workers, &args.arms)?;
    let (engine, setup) = measuring::engine(&args.measure, &topology)?;
    let clock = engine.clock();

    let mut samples: Vec<RepSample> = Vec::new();
    let total = args.measure.warmups + args.reps;
    let mut complete = true;
    'reps: for index in 0..total {
        let warmup = index < args.measure.warmups;
        progress(&format!(
            "run: {} {}/{}",
            if warmup { "warm-up" } else { "repetition" },
            if warmup {
                index + 1
            } else {
                index + 1 - args.measure.warmups
            },
            if warmup {
                args.measure.warmups
            } else {
                args.reps
            }
        ));
        // Arms interleaved per repetition, so drift hits every arm alike.
        for placement in &run_plan.placements {
            match engine.run_rep(placement, index, warmup)? {
                Some(sample) => samples.push(sample),
                None => {
                    complete = false;
                    break 'reps;
                }
            }
        }
    }
    progress_done();

    let no_exclusions = Vec::new();
    let mut arms: Vec<_> = run_plan
        .placements
        .iter()
        .map(|p| {
            let reps = measured(&samples, &p.arm, &no_exclusions);
            arm_stats(p, &reps, clock, setup.tsc_hz)
        })
        .collect();
    let baseline = arms
        .iter()
        .find(|a| a.name == arm_name(ArmKind::OnePerCore))
        .and_then(|a| a.cost.as_ref().map(|c| c.median));
    let measured_samples: Vec<RepSample> = samples.iter().filter(|r| !r.warmup).cloned().collect();
    let mut all_checks = vec![
        checks::pinning(&measured_samples),
        checks::multiplexing(&measured_samples),
    ];
    let (invariance, invariance_spread) = checks::invariance(&measured_samples, args.tolerance);
    all_checks.push(invariance);
    for arm in &mut arms {
        if let (Some(base), Some(cost)) = (baseline, arm.cost.as_ref()) {
            arm.change_vs_one_per_core = Some(cost.median / base - 1.0);
        }
        let check = match &arm.cost {
            Some(spread) => checks::cv_bar(&arm.name, spread, args.cv_bar),
            None => checks::Check::unavailable(
                &format!("cv-bar {}", arm.name),
                "fewer than 2 measured repetitions",
            ),
        };
        arm.quotable = check.status == CheckStatus::Passed;
        all_checks.push(check);
    }
    let failed = |name: &str| {
        all_checks
            .iter()
            .any(|c| c.name == name && c.status == CheckStatus::Failed)
    };
    let valid = !failed("pinning")
        && !failed("invariance")
        && (!args.strict || arms.iter().all(|a| a.quotable));

    let mut warnings = report::warnings::machine_warnings(&topology);
    let stopped_by = stop::stop_signal().filter(|_| !complete);
    if let Some(signal) = stopped_by {
        warnings.insert(
            0,
            format!(
                "INCOMPLETE: stopped by {}; only the repetitions done are here",
                signal.name()
            ),
        );
    }
    let result = RunResult {
        schema_version: RESULT_SCHEMA_VERSION,
        kind: "run".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        host: nix::unistd::gethostname()
            .ok()
            .and_then(|h| h.into_string().ok())
            .unwrap_or_else(|| "unknown".into()),
        started_unix,
        complete,
        gated: gate.is_some(),
        gate,
        model: topology
            .cpuid
            .as_ref()
            .and_then(|c| c.brand.clone())
            .or_else(|| topology.environment.model_name.clone()),
        topology: topology.summary.clone(),
        cpus: topology.cpus.clone(),
        environment: topology.environment.clone(),
        evidence: measuring::evidence(&topology),
        options: RunOptions {
            workers,
            arms: args.arms.iter().map(|a| arm_name(*a).to_string()).collect(),
            reps: args.reps,
            warmups: args.measure.warmups,
            rep_ms: args.measure.rep_ms,
            kernel: args.measure.kernel.clone(),
            cv_bar: args.cv_bar,
            tolerance: args.tolerance,
            strict: args.strict,
            skip_gate: args.skip_gate,
            threshold: args.rule.threshold,
        },
        setup,
        plan: run_plan,
        arms,
        checks: all_checks,
        invariance_spread,
        valid,
        warnings,
        samples,
    };
    emit(args, &result)?;
    // 128 + the signal's number, as shells report a death by that signal.
    Ok(if let Some(signal) = stopped_by {
        128 + signal.signal_number()
    } else if result.valid {
        0
    } else {
        EXIT_INVALID_RUN
    })
}

fn validate(args: &RunArgs) -> Result<()> {
    if args.reps < 2 {
        bail!(
            "--reps {}: a spread needs at least 2 repetitions",
            args.reps
        );
    }
    if args.arms.is_empty() {
        bail!(
            "--arms is empty: name at least one of one-per-core, sibling-packed, unpinned, same-cpu"
        );
    }
    if args.cv_bar.is_nan() || args.cv_bar <= 0.0 {
        bail!(
            "--cv-bar {}: must be a positive fraction such as 0.01",
            args.cv_bar
        );
    }
    if args.tolerance.is_nan() || args.tolerance < 0.0 {
        bail!(
            "--tolerance {}: must be a non-negative fraction such as 1e-4",
            args.tolerance
        );
    }
    Ok(())
}

/// Writes the JSON and CSV files and prints the human report (to stderr
/// when a file goes to stdout, so the two never mix).
fn emit(args: &RunArgs, result: &RunResult) -> Result<()> {
    use report::files::{is_stdout, write_atomically};
    let mut human_to_stderr = false;
    if let Some(path) = &args.json {
        write_atomically(path, &(serde_json::to_string_pretty(result)? + "\n"))?;
        human_to_stderr |= is_stdout(path);
    }
    if let Some(path) = &args.csv {
        write_atomically(path, &report::csv::render(&result.samples))?;
        human_to_stderr |= is_stdout(path);
    }
    let text = report::run::render(result);
    if human_to_stderr {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    Ok(())
}
