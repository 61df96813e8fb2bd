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
use crate::report::blocks::{Blocks, Grid};
use crate::report::labels::UNGATED;
use crate::units::{
    Fixed, capitalise, cores, count, percent, percent_change, sig4, wrap_words,
};
use crate::report::view::{Charset, View};
use crate::saved::DocumentHead;
use std::collections::BTreeMap;
use tabled::Table;
use tabled::settings::object::{Columns, Segment};
use tabled::settings::style::HorizontalLine;
use tabled::settings::{Format, Style};

/// A word longer than this may be broken when its column must narrow (a
/// path, a long CPU list); shorter ones, every number among them, never are.
const LONGEST_UNBROKEN: usize = 16;

/// The line under a default view's table whose rows carry [`marked`]'s "*".
pub const NOT_QUOTABLE_LEGEND: &str =
    "* not quotable: its CV is above the bar, or under 2 repetitions were measured";

/// Draws `table`. In the default view a table wider than the view has
/// columns wrapped between words until it fits: first the headings wider
/// than their column's cells, then the widest columns, the widest first. A
/// column never narrows below its longest word (up to `LONGEST_UNBROKEN`
/// characters), so no number is cut, and a table that cannot shrink that
/// far stays wider. `--wide` draws every cell on one line. Every cell is
/// first escaped and put in the view's charset ([`View::for_terminal_text`]):
/// done on the cells, before their widths are measured, a host name's
/// escape or an "→" spelt "->" widens its column and the columns stay in
/// line.
pub fn fit(mut table: Table, view: &View) -> String {
    let shown = *view;
    table.modify(
        Segment::all(),
        Format::content(move |text| shown.for_terminal_text(text).into_owned()),
    );
    match view.charset {
        Charset::Utf8 => table.with(Style::sharp()),
        // Drawn as sharp is, in ASCII: a line under the heading only.
        Charset::Ascii => table.with(
            Style::ascii()
                .remove_horizontal()
                .horizontals([(1, HorizontalLine::full('-', '+', '+', '+'))]),
        ),
    };
    let mut excess = table.total_width().saturating_sub(view.width);
    if view.wide || excess == 0 {
        return table.to_string();
    }
    let columns = table.count_columns();
    let longest =
        |words: &mut dyn Iterator<Item = &str>| words.map(|w| w.chars().count()).max().unwrap_or(0);
    // Per column: its width, its widest cell below the heading, its longest word.
    let mut widths = vec![0; columns];
    let mut cells = vec![0; columns];
    let mut words = vec![1; columns];
    for (row, records) in table.get_records().iter().enumerate() {
        for (column, cell) in records.iter().enumerate() {
            let text = cell.as_ref();
            let width = longest(&mut text.lines());
            widths[column] = widths[column].max(width);
            if row > 0 {
                cells[column] = cells[column].max(width);
            }
            let word = longest(&mut text.split_whitespace()).min(LONGEST_UNBROKEN);
            words[column] = words[column].max(word);
        }
    }
    let natural = widths.clone();
    let headings_only: Vec<usize> = cells.iter().zip(&words).map(|(&c, &w)| c.max(w)).collect();
    for floors in [headings_only, words] {
        while excess > 0 {
            // The widest column that can still narrow; of equals, the rightmost.
            let Some(column) = (0..columns)
                .filter(|&c| widths[c] > floors[c])
                .max_by_key(|&c| (widths[c], c))
            else {
                break;
            };
            widths[column] -= 1;
            excess -= 1;
        }
    }
    for (column, (&width, &natural)) in widths.iter().zip(&natural).enumerate() {
        if width < natural {
            table.modify(
                Columns::one(column),
                Format::content(move |text| wrap_words(text, width, width).join("\n")),
            );
        }
    }
    table.to_string()
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of a host name from outside and signs the tool prints.
    fn drawn(charset: Charset) -> String {
        let mut table = Grid::default();
        table.push(["host", "change"]);
        table.push(["evil\u{1b}[31m\0", "\u{2212}5.9 % → ±2"]);
        table.push(["node1", "—"]);
        let view = View {
            charset,
            ..View::default()
        };
        table.to_terminal(&view)
    }

    #[test]
    fn cells_are_escaped_and_the_columns_stay_in_line() {
        for charset in [Charset::Utf8, Charset::Ascii] {
            let text = drawn(charset);
            assert!(!text.contains(['\u{1b}', '\0']), "{text:?}");
            assert!(text.contains(r"evil\u{1b}[31m\0"), "{text}");
            let widths: Vec<usize> = text.lines().map(|l| l.chars().count()).collect();
            assert!(widths.iter().all(|&w| w == widths[0]), "{text}");
        }
    }

    #[test]
    fn an_ascii_view_draws_its_tables_in_ascii() {
        let text = drawn(Charset::Ascii);
        assert!(text.is_ascii(), "{text}");
        assert!(text.starts_with("+----"), "{text}");
        assert!(text.contains("| -5.9 % -> +-2 |"), "{text}");
        assert!(drawn(Charset::Utf8).starts_with('┌'));
    }
}
