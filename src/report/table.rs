//! The arms tables shared by `gate`, `run` and `report`: every median with
//! its CV, min, max and repetitions, and the clock it came from; and how
//! every table of the tool is drawn and fitted to the view's width.

use crate::exit::Outcome;
use crate::judge::arms::ArmStats;
use crate::judge::checks::{Check, CheckStatus, ExcludedRep, ExclusionCause};
use crate::judge::stats::Spread;
use crate::judge::validity::judge_run;
use crate::measure::ClockKind;
use crate::plan::Arm;
use crate::plan::membind::{Membind, nodes_phrase};
use crate::probe::Summary;
use crate::report::blocks::{Blocks, Grid};
use crate::report::labels::UNGATED;
use crate::report::view::View;
use crate::saved::DocumentHead;
use crate::units::{Fixed, capitalise, count, percent, percent_change, sig4};
use std::collections::BTreeMap;

/// The line under a default view's table whose rows carry [`marked`]'s "*".
pub const NOT_QUOTABLE_LEGEND: &str =
    "* not quotable: its CV is above the bar, or under 2 repetitions were measured";

/// `name`, marked when its CV is over the bar: "(not quotable)" in the wide
/// view; "*" in the default one, explained by [`legend`] under the table.
pub fn marked(name: impl std::fmt::Display, quotable: bool, view: &View) -> String {
    match (quotable, view.wide) {
        (true, _) => name.to_string(),
        (false, true) => format!("{name} (not quotable)"),
        (false, false) => format!("{name}*"),
    }
}

/// `table`, with the [`NOT_QUOTABLE_LEGEND`] under it when [`marked`] put
/// a "*" in it (`any_not_quotable`, in the default view).
pub fn legend(table: Grid, any_not_quotable: bool, view: &View) -> Blocks {
    legend_saying(table, any_not_quotable, NOT_QUOTABLE_LEGEND, view)
}

/// [`legend`] with another legend: a study whose arms are marked for more
/// reasons than the CV bar says which.
pub fn legend_saying(table: Grid, any_not_quotable: bool, text: &str, view: &View) -> Blocks {
    let mut blocks = Blocks::new();
    blocks.table(table, "no row to show");
    if any_not_quotable && !view.wide {
        blocks.line(text, 2);
    }
    blocks
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

/// The detailed per-arm table: the cost with its clock, CV, min, max and
/// repetitions (`mark_quotable`: arms over the CV bar marked). The wide
/// view names the clock in a column and adds the cost on `tick_clock`
/// (headed "TSC/byte" or "generic-timer/byte") and the effective GHz; the
/// default one names the clock in the cost's heading ("cycles/B").
pub fn arms_table(
    arms: &[ArmStats],
    tick_clock: ClockKind,
    mark_quotable: bool,
    view: &View,
) -> Blocks {
    let name = |a: &ArmStats| marked(a.name, a.quotable || !mark_quotable, view);
    let or_dash =
        |s: Option<&Spread>, f: &dyn Fn(&Spread) -> String| s.map(f).unwrap_or_else(|| "—".into());
    let reps = |a: &ArmStats| a.cost.as_ref().map_or(0, |s| s.reps).to_string();
    let mut table = Grid::default();
    if view.wide {
        let tick_header = format!("{}/byte", tick_clock.column());
        table.push([
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
            table.push([
                name(a),
                cpus_label(&a.cpus),
                median_or_dash(&a.cost),
                a.clock.as_str().into(),
                or_dash(cost, &|s| percent(s.cv)),
                or_dash(cost, &|s| sig4(s.min)),
                or_dash(cost, &|s| sig4(s.max)),
                reps(a),
                median_or_dash(&a.tsc_per_byte),
                median_or_dash(&a.effective_ghz),
            ]);
        }
    } else {
        let cost_header = format!("{}/B", arms_clock(arms).column());
        table.push(["arm", "CPUs", &cost_header, "CV %", "min", "max", "n"]);
        for a in arms {
            let cost = a.cost.as_ref();
            table.push([
                name(a),
                cpus_label(&a.cpus),
                median_or_dash(&a.cost),
                or_dash(cost, &|s| format!("{:.2}", Fixed(s.cv * 100.0))),
                or_dash(cost, &|s| sig4(s.min)),
                or_dash(cost, &|s| sig4(s.max)),
                reps(a),
            ]);
        }
    }
    let marks = mark_quotable && arms.iter().any(|a| !a.quotable);
    legend(table, marks, view)
}

/// The clock the arms' costs are in: one per study.
fn arms_clock(arms: &[ArmStats]) -> ClockKind {
    arms.first().map_or(ClockKind::CoreCycles, |a| a.clock)
}

/// The study's headline table: rows one-per-core and sibling-packed (and any
/// other arm), columns cost per byte (headed by its clock: "cycles/byte",
/// "TSC ticks/byte" or "generic-timer ticks/byte"), L1i misses per 1000
/// instructions, instructions per byte, and the change against one-per-core.
/// The default view shortens the headings ("cycles/B") and puts the cost's
/// CV and repetitions beside it.
pub fn headline_table(arms: &[ArmStats], view: &View) -> Blocks {
    let clock = arms_clock(arms);
    let mut table = Grid::default();
    let instructions = |a: &ArmStats| {
        a.instructions_per_byte
            .as_ref()
            .map(|s| format!("{:.6}", Fixed(s.median)))
            .unwrap_or_else(|| "unavailable".into())
    };
    let change = |a: &ArmStats| match (a.name, a.change_vs_one_per_core) {
        (Arm::OnePerCore, _) => "baseline".into(),
        (_, Some(c)) => percent_change(c),
        _ => "—".into(),
    };
    if view.wide {
        let cost_header = format!("{}/byte", clock.unit());
        table.push([
            "arm",
            &cost_header,
            "L1i miss/1k instr",
            "instr/byte",
            "vs one-per-core",
        ]);
        for a in arms {
            table.push([
                marked(a.name, a.quotable, view),
                median_or_dash(&a.cost),
                median_or_dash(&a.l1i_misses_per_kilo_instruction),
                instructions(a),
                change(a),
            ]);
        }
    } else {
        let cost_header = format!("{}/B", clock.column());
        table.push([
            "arm",
            &cost_header,
            "CV %",
            "n",
            "L1i miss/1k instr",
            "instr/B",
            "change",
        ]);
        for a in arms {
            let cost = a.cost.as_ref();
            table.push([
                marked(a.name, a.quotable, view),
                median_or_dash(&a.cost),
                cost.map_or_else(|| "—".into(), |s| format!("{:.2}", Fixed(s.cv * 100.0))),
                cost.map_or(0, |s| s.reps).to_string(),
                median_or_dash(&a.l1i_misses_per_kilo_instruction),
                instructions(a),
                change(a),
            ]);
        }
    }
    legend(table, arms.iter().any(|a| !a.quotable), view)
}

/// One line per cause of the repetitions left out of the statistics, with
/// how many of each arm; the list of every one is in the JSON.
pub fn excluded_lines(excluded: &[ExcludedRep]) -> Vec<String> {
    // Grouped by cause, each in the order of the causes; a sentence no
    // cause matches (none today) is its own group, so nothing is dropped.
    let mut by_cause: BTreeMap<(Option<ExclusionCause>, &str), Vec<&ExcludedRep>> = BTreeMap::new();
    for ex in excluded {
        match ex.causes().as_slice() {
            [] => by_cause.entry((None, &ex.why)).or_default().push(ex),
            causes => {
                for cause in causes {
                    by_cause
                        .entry((Some(*cause), cause.describe()))
                        .or_default()
                        .push(ex);
                }
            }
        }
    }
    by_cause
        .iter()
        .map(|((_, cause), reps)| {
            let mut arms: BTreeMap<Arm, usize> = BTreeMap::new();
            for ex in reps {
                *arms.entry(ex.arm).or_default() += 1;
            }
            let arms: Vec<String> = arms.iter().map(|(arm, n)| format!("{arm} {n}")).collect();
            format!(
                "excluded: {} ({}): {}; each one is listed in --json",
                count(reps.len(), "repetition"),
                arms.join(", "),
                cause
            )
        })
        .collect()
}

/// The checks block: each check's status, name and detail.
pub fn check_lines(checks: &[Check]) -> Blocks {
    let rows = checks
        .iter()
        .map(|check| {
            let mark = match check.status {
                CheckStatus::Passed => "passed",
                CheckStatus::Failed => "FAILED",
                CheckStatus::Unavailable => "unavailable",
            };
            [
                mark.to_string(),
                check.name.to_string(),
                check.detail.clone(),
            ]
        })
        .collect();
    let mut blocks = Blocks::new();
    blocks.checks(rows);
    blocks
}

/// "memory: --membind local: one-per-core on node 0, same-cpu on node 1;
/// HOW", the line a `--membind` study names where each arm's memory was
/// bound and how that was checked.
pub fn membind_line<'a>(
    membind: &Membind,
    arms: impl IntoIterator<Item = (String, Option<&'a [u32]>)>,
    how: &str,
) -> String {
    let arms: Vec<String> = arms
        .into_iter()
        .map(|(arm, nodes)| match nodes {
            Some(nodes) => format!("{arm} on {}", nodes_phrase(nodes)),
            None => format!("{arm} unbound"),
        })
        .collect();
    format!("memory: --membind {membind}: {}; {how}", arms.join(", "))
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

/// "2 cores", or "cores unknown" where which CPUs share a core is (the
/// count would be the CPUs', each entered as a core of its own).
pub fn cores(summary: &Summary) -> String {
    if summary.structure_unknown.is_some() {
        "cores unknown".into()
    } else {
        count(summary.cores, "core")
    }
}

/// "host NAME — MODEL — 2 CPUs, 2 cores, SMT off": the line a result's view
/// names its machine with.
pub fn host_line(head: &DocumentHead) -> String {
    let model = head.model.as_deref().unwrap_or("unknown CPU");
    match &head.topology {
        Some(summary) => format!(
            "host {} — {model} — {}, {}, SMT {}",
            head.host,
            count(summary.cpus, "CPU"),
            cores(summary),
            summary.smt_word()
        ),
        None => format!("host {} — {model} — machine not recorded", head.host),
    }
}

/// The banners a measured study's view opens with: UNGATED where no gate
/// ran first, INCOMPLETE where a signal stopped it (saying that only
/// `kept`, "the rounds finished are", is shown).
pub fn banners(gated: bool, complete: bool, kept: &str) -> Blocks {
    let mut blocks = Blocks::new();
    if !gated {
        blocks.banner(UNGATED).gap();
    }
    if !complete {
        blocks
            .banner(&format!(
                "INCOMPLETE: stopped by a signal; only {kept} shown"
            ))
            .gap();
    }
    blocks
}

/// The top of a study's view: an INCOMPLETE banner when a signal stopped it
/// (saying that only `kept`, "the rounds done", is shown), the verdict and
/// the sentence that says why.
pub fn headline(head: &DocumentHead, kept: &str, verdict: String, sentence: &str) -> Blocks {
    let mut blocks = Blocks::new();
    if !head.complete {
        blocks
            .banner(&format!(
                "INCOMPLETE: stopped by a signal; only {kept} shown"
            ))
            .gap();
    }
    blocks.answer(verdict).line(capitalise(sentence), 0);
    blocks
}
