//! The arms tables shared by `gate`, `run` and `report`: every median with
//! its CV, min, max and repetitions, and the clock it came from.

use crate::exit::Outcome;
use crate::judge::arms::ArmStats;
use crate::judge::checks::{Check, CheckStatus, ExcludedRep};
use crate::judge::stats::Spread;
use crate::judge::validity::judge_run;
use crate::measure::ClockKind;
use crate::plan::Arm;
use crate::probe::Summary;
use crate::report::units::{capitalise, count, percent, percent_change, sig4};
use tabled::builder::Builder;
use tabled::settings::Style;

fn median_or_dash(s: &Option<Spread>) -> String {
    s.as_ref()
        .map(|s| sig4(s.median))
        .unwrap_or_else(|| "—".into())
}

/// CPU list of an arm: "0,2", or "OS" for unpinned workers.
pub fn cpus_label(cpus: &[Option<u32>]) -> String {
    cpus.iter()
        .map(|c| c.map(|c| c.to_string()).unwrap_or_else(|| "OS".into()))
        .collect::<Vec<_>>()
        .join(",")
}

/// An arm's name, marked when its CV is over the bar.
pub fn marked_name(arm: &ArmStats) -> String {
    if arm.quotable {
        arm.name.to_string()
    } else {
        format!("{} (not quotable)", arm.name)
    }
}

/// The detailed per-arm table: the cost with its clock, CV, min, max and
/// repetitions, then the cost on `tick_clock` (headed "TSC/byte" or
/// "generic-timer/byte") and the effective GHz.
pub fn arms_table(arms: &[ArmStats], tick_clock: ClockKind, mark_quotable: bool) -> String {
    let tick_header = format!("{}/byte", tick_clock.column());
    let mut table = Builder::default();
    table.push_record([
        "arm",
        "CPUs",
        "cost/byte",
        "clock",
        "CV",
        "min",
        "max",
        "reps",
        tick_header.as_str(),
        "eff. GHz",
    ]);
    for a in arms {
        let cost = a.cost.as_ref();
        let or_dash = |f: &dyn Fn(&Spread) -> String| cost.map(f).unwrap_or_else(|| "—".into());
        table.push_record([
            if mark_quotable {
                marked_name(a)
            } else {
                a.name.to_string()
            },
            cpus_label(&a.cpus),
            median_or_dash(&a.cost),
            a.clock.as_str().into(),
            or_dash(&|s| percent(s.cv)),
            or_dash(&|s| sig4(s.min)),
            or_dash(&|s| sig4(s.max)),
            cost.map(|s| s.reps.to_string())
                .unwrap_or_else(|| "0".into()),
            median_or_dash(&a.tsc_per_byte),
            median_or_dash(&a.effective_ghz),
        ]);
    }
    table.build().with(Style::sharp()).to_string()
}

/// The study's headline table: rows one-per-core and sibling-packed (and any
/// other arm), columns cost per byte (headed by its clock: "cycles/byte",
/// "TSC ticks/byte" or "generic-timer ticks/byte"), L1i misses per 1000
/// instructions, instructions per byte, and the change against one-per-core.
pub fn headline_table(arms: &[ArmStats]) -> String {
    let clock = arms.first().map_or(ClockKind::CoreCycles, |a| a.clock);
    let cost_header = format!("{}/byte", clock.unit());
    let mut table = Builder::default();
    table.push_record([
        "arm",
        &cost_header,
        "L1i miss/1k instr",
        "instr/byte",
        "vs one-per-core",
    ]);
    for a in arms {
        table.push_record([
            marked_name(a),
            median_or_dash(&a.cost),
            median_or_dash(&a.l1i_misses_per_kilo_instruction),
            a.instructions_per_byte
                .as_ref()
                .map(|s| format!("{:.6}", s.median))
                .unwrap_or_else(|| "unavailable".into()),
            match (a.name, a.change_vs_one_per_core) {
                (Arm::OnePerCore, _) => "baseline".into(),
                (_, Some(c)) => percent_change(c),
                _ => "—".into(),
            },
        ]);
    }
    table.build().with(Style::sharp()).to_string()
}

/// One line per repetition left out of the statistics, with the reason.
pub fn excluded_lines(excluded: &[ExcludedRep]) -> Vec<String> {
    excluded
        .iter()
        .map(|ex| format!("excluded: {} repetition {}: {}", ex.arm, ex.rep, ex.why))
        .collect()
}

/// One line per check: its status, name and detail.
pub fn check_lines(checks: &[Check]) -> Vec<String> {
    checks
        .iter()
        .map(|check| {
            let mark = match check.status {
                CheckStatus::Passed => "passed",
                CheckStatus::Failed => "FAILED",
                CheckStatus::Unavailable => "unavailable",
            };
            format!("{mark:<12} {:<22} {}", check.name.to_string(), check.detail)
        })
        .collect()
}

/// "valid run", or "INVALID run (exit 6): why" from the checks (`what` is
/// "run" or "study").
pub fn validity_verdict(what: &str, valid: bool, checks: &[Check], strict: bool) -> String {
    if valid {
        return format!("valid {what}");
    }
    let why: Vec<String> = judge_run(checks, strict)
        .reasons
        .iter()
        .map(|r| r.to_string())
        .collect();
    format!(
        "INVALID {what} (exit {}): {}",
        Outcome::InvalidRun.exit_status(),
        why.join("; ")
    )
}

/// "host NAME — MODEL — 2 CPUs, 2 cores, SMT off": the line a result's view
/// names its machine with.
pub fn host_line(host: &str, model: Option<&str>, summary: &Summary) -> String {
    format!(
        "host {host} — {} — {}, {}, SMT {}",
        model.unwrap_or("unknown CPU"),
        count(summary.cpus, "CPU"),
        count(summary.cores, "core"),
        if summary.smt { "on" } else { "off" }
    )
}

/// The top of a study's view: an INCOMPLETE banner when a signal stopped it
/// (saying that only `kept`, "the rounds done", is shown), the sentence,
/// and the [`host_line`].
pub fn headline(
    complete: bool,
    kept: &str,
    sentence: &str,
    host: &str,
    model: Option<&str>,
    summary: &Summary,
) -> String {
    let banner = if complete {
        String::new()
    } else {
        format!("*** INCOMPLETE: stopped by a signal; only {kept} shown ***\n\n")
    };
    format!(
        "{banner}{}\n\n{}\n",
        capitalise(sentence),
        host_line(host, model, summary)
    )
}
