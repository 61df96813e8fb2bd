//! The arms tables shared by `gate`, `run` and `report`: every median with
//! its CV, min, max and repetitions, and the clock it came from.

use crate::judge::arms::ArmStats;
use crate::judge::checks::ExcludedRep;
use crate::judge::stats::Spread;
use crate::measure::ClockKind;
use crate::plan::Arm;
use crate::report::units::{percent, percent_change, sig4};
use tabled::builder::Builder;
use tabled::settings::Style;
use tabled::{Table, Tabled};

#[derive(Tabled)]
struct ArmRow {
    arm: String,
    #[tabled(rename = "CPUs")]
    cpus: String,
    #[tabled(rename = "cost/byte")]
    cost: String,
    clock: String,
    #[tabled(rename = "CV")]
    cv: String,
    min: String,
    max: String,
    reps: String,
    #[tabled(rename = "TSC/byte")]
    tsc: String,
    #[tabled(rename = "eff. GHz")]
    ghz: String,
}

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

/// The detailed per-arm table.
pub fn arms_table(arms: &[ArmStats], mark_quotable: bool) -> String {
    let rows = arms.iter().map(|a| {
        let cost = a.cost.as_ref();
        ArmRow {
            arm: if mark_quotable {
                marked_name(a)
            } else {
                a.name.to_string()
            },
            cpus: cpus_label(&a.cpus),
            cost: median_or_dash(&a.cost),
            clock: a.clock.as_str().into(),
            cv: cost.map(|s| percent(s.cv)).unwrap_or_else(|| "—".into()),
            min: cost.map(|s| sig4(s.min)).unwrap_or_else(|| "—".into()),
            max: cost.map(|s| sig4(s.max)).unwrap_or_else(|| "—".into()),
            reps: cost
                .map(|s| s.reps.to_string())
                .unwrap_or_else(|| "0".into()),
            tsc: median_or_dash(&a.tsc_per_byte),
            ghz: median_or_dash(&a.effective_ghz),
        }
    });
    Table::new(rows).with(Style::sharp()).to_string()
}

/// The study's headline table: rows one-per-core and sibling-packed (and any
/// other arm), columns cost per byte (headed by its clock: "cycles/byte" or
/// "TSC ticks/byte"), L1i misses per 1000 instructions, instructions per byte,
/// and the change against one-per-core.
pub fn headline_table(arms: &[ArmStats]) -> String {
    let cost_header = match arms.first().map(|a| a.clock) {
        Some(ClockKind::CoreCycles) | None => "cycles/byte",
        Some(ClockKind::Tsc) => "TSC ticks/byte",
    };
    let mut table = Builder::default();
    table.push_record([
        "arm",
        cost_header,
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
