//! The human view of an `observe` result (printed by `observe`,
//! re-rendered by `report FILE`): residency per class, CPU and core, the
//! reconciliation against task-clock, the threads, the migrations and the
//! timeline. Every time is CLOCK_MONOTONIC in ms since the recording began.

use crate::units::DASH;

use crate::judge::sentences::observe::did_not_run;

use crate::cpuset::CpuSet;
use crate::exit::Outcome;
use crate::judge::observe::{HANDOVER_MAX_NS, ObserveJudgement};
use crate::measure::recording::CommandEnd;
use crate::report::blocks::{Blocks, Grid};
use crate::report::document::{Document, HumanView};
use crate::report::gate::evidence_and_notes;
use crate::report::table::{headline, host_line};
use crate::report::view::View;
use crate::saved::ObserveMode;
use crate::saved::ObserveResult;
use crate::units::{Fixed, count, percent};
use std::fmt::Write;

/// Threads shown in the text; the JSON and CSV have all of them.
const THREADS_SHOWN: usize = 20;

/// Migrations shown in the text: the first half and the last half.
const MIGRATIONS_SHOWN: usize = 30;

/// The whole human view: whether the observation is valid and its
/// sentence first, what to run next, then residency by class, CPU and
/// core, the reconciliation, the threads, the migrations and the timeline.
impl HumanView for ObserveResult {
    fn blocks(&self, view: &View) -> Blocks {
        let result = self;
        let judged = &result.judged;
        let verdict = match judged.valid {
            true => {
                "valid observation: the residency adds up to the kernel's task-clock".to_string()
            }
            false => format!(
                "INVALID observation (exit {}): {}",
                Outcome::InvalidRun.exit_status(),
                judged.problems.join("; ")
            ),
        };
        let mut out = headline(
            &result.head,
            "the time recorded until then is",
            verdict,
            &result.sentence,
        );
        out.line(
            "next: `placement-study run -- COMMAND` measures what each placement costs it, and \
         `report FILE --html OUT` draws the timeline beside the tables",
            2,
        );
        out.gap().line(host_line(&result.head), 2);
        out.line(format!("observed: {}", observed_line(result)), 2);
        out.line(
            "times are CLOCK_MONOTONIC in ms since the recording began, from the kernel's \
         context-switch records; task-clock is the kernel's own counter, per CPU",
            2,
        );
        if !result.outlivers.is_empty() {
            let left: Vec<String> = result
                .outlivers
                .iter()
                .map(|o| {
                    format!(
                        "{} (PID {}, {} ms after it: {})",
                        o.name,
                        o.pid,
                        o.outlived_ms,
                        o.ended_by.describe()
                    )
                })
                .collect();
            out.line(
                format!("left running when the command exited: {}", left.join("; ")),
                2,
            );
        }
        if did_not_run(judged) {
            out.line(
                "it did not run while it was observed: no time on any CPU in the switch records, \
             and none on task-clock (a process that slept throughout); zero time is what there \
             was to observe",
                2,
            );
        }
        // A number that failed its bar is marked wherever it is shown.
        let mark = if judged.valid {
            ""
        } else {
            out.gap().banner(
                "INVALID OBSERVATION: the numbers below failed their validity checks; none of them \
             may be quoted",
            );
            for problem in &judged.problems {
                out.line(format!("  {problem}"), 4);
            }
            " (INVALID)"
        };
        out.gap()
            .heading(format!("Residency per core class{mark}"))
            .table(classes_table(judged, view), "no class ran anything");
        if !view.wide && judged.classes.iter().any(|c| c.busy_mhz.is_some()) {
            out.line("busy MHz: core cycles ÷ task-clock", 0);
        }
        for (reason, classes) in busy_mhz_unavailable(judged) {
            out.line(format!("busy MHz unavailable{classes}: {reason}"), 2);
        }
        let idle = judged
            .cpus
            .iter()
            .filter(|c| c.ms <= 0.0 && c.task_clock_ms <= 0.0)
            .count();
        out.gap()
            .heading(format!(
                "Residency per CPU{mark}{}",
                if idle > 0 {
                    format!("; {} with no time omitted", count(idle, "CPU"))
                } else {
                    String::new()
                }
            ))
            .table(cpus_table(judged, view), "no CPU ran it");
        if judged.cores.iter().any(|c| c.cpus.len() > 1) {
            out.gap()
                .heading(format!(
                    "Residency per core, all of its hardware threads{mark}"
                ))
                .table(cores_table(judged, view), "no core ran it");
        }
        out.gap()
            .heading("Reconciliation")
            .extend(reconciliation(judged));
        let shown = judged.threads.len().min(THREADS_SHOWN);
        out.gap()
            .heading(format!(
                "Threads{mark}{}",
                if shown < judged.threads.len() {
                    format!(
                        ": the {shown} busiest of {} (the JSON and CSV have all)",
                        judged.threads.len()
                    )
                } else {
                    String::new()
                }
            ))
            .table(threads_table(judged, shown, view), "no thread was recorded");
        out.extend(migrations(judged, mark));
        if let (Some(step), false) = (judged.interval_ms, judged.timeline.is_empty()) {
            out.gap()
                .heading(format!(
                    "Timeline{mark}, every {step} ms: ms on each class's CPUs (% of their time)"
                ))
                .table(timeline_table(judged), "no interval");
        }
        out.extend(evidence_and_notes(&result.head.evidence, &result.warnings));
        out
    }
}

/// What was followed, for how long, and how a command ended.
fn observed_line(result: &ObserveResult) -> String {
    let options = &result.options;
    let target = options.target_text();
    let seconds = |how: &str| {
        options
            .seconds
            .map_or_else(String::new, |s| format!(", {how} {s} s"))
    };
    let what = match options.mode {
        ObserveMode::Command => format!("command {target} and every process it started"),
        ObserveMode::Pid => format!(
            "running process {target}, its threads and their new children{}",
            seconds("for at most")
        ),
        ObserveMode::Kernel => format!("built-in kernel, {target}, unpinned{}", seconds("for")),
    };
    let end = match result.command_end {
        Some(CommandEnd::Exited { code }) => format!("; exited {code}"),
        Some(end @ CommandEnd::Signaled { signal }) => format!(
            "; killed by signal {signal} (exit status {})",
            end.shell_status()
        ),
        None => String::new(),
    };
    format!("{what}; {:.1} ms wall{end}", Fixed(result.judged.wall_ms))
}

/// Milliseconds to a tenth.
fn ms(value: f64) -> String {
    format!("{:.1}", Fixed(value))
}

/// A share of the on-CPU time: "99.80 %", or "99.80" under a heading
/// that says "%" in the default view.
fn share(fraction: f64, view: &View) -> String {
    if view.wide {
        percent(fraction)
    } else {
        format!("{:.2}", Fixed(fraction * 100.0))
    }
}

/// The heading of [`share`]'s column.
fn share_heading(view: &View) -> &'static str {
    if view.wide {
        "of on-CPU time"
    } else {
        "on-CPU %"
    }
}

fn classes_table(judged: &ObserveJudgement, view: &View) -> Grid {
    let mut table = Grid::default();
    table.push([
        "class",
        "CPUs",
        "ms",
        share_heading(view),
        if view.wide {
            "busy MHz (core cycles ÷ task-clock)"
        } else {
            "busy MHz"
        },
    ]);
    for class in &judged.classes {
        table.push([
            class.class.to_string(),
            CpuSet::from_cpus(class.cpus.iter().copied()).to_string(),
            ms(class.ms),
            share(class.share, view),
            match (class.busy_mhz, &class.busy_mhz_unavailable) {
                (Some(mhz), _) => format!("{:.0}", Fixed(mhz)),
                (None, Some(_)) => "unavailable".into(),
                (None, None) => DASH.into(),
            },
        ]);
    }
    table
}

/// Each reason there is no busy frequency, once, with the classes it
/// holds for when they are not all of them: (reason, " (efficiency)").
fn busy_mhz_unavailable(judged: &ObserveJudgement) -> Vec<(&str, String)> {
    let mut reasons: Vec<(&str, Vec<String>)> = Vec::new();
    for class in &judged.classes {
        let Some(reason) = class.busy_mhz_unavailable.as_deref() else {
            continue;
        };
        match reasons.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, classes)) => classes.push(class.class.to_string()),
            None => reasons.push((reason, vec![class.class.to_string()])),
        }
    }
    reasons
        .into_iter()
        .map(|(reason, classes)| {
            let which = if classes.len() == judged.classes.len() {
                String::new()
            } else {
                format!(" ({})", classes.join(", "))
            };
            (reason, which)
        })
        .collect()
}

/// Each CPU with time on it; the default view leaves out its package and
/// core (the cores table has them).
fn cpus_table(judged: &ObserveJudgement, view: &View) -> Grid {
    let mut table = Grid::default();
    let mut header = vec!["CPU"];
    if view.wide {
        header.push("package/core");
    }
    header.extend([
        "class",
        "ms",
        share_heading(view),
        "hand-over ms",
        "task-clock ms",
    ]);
    table.push(header);
    for cpu in judged
        .cpus
        .iter()
        .filter(|c| c.ms > 0.0 || c.task_clock_ms > 0.0)
    {
        let mut row = vec![cpu.cpu.to_string()];
        if view.wide {
            row.push(match (cpu.package, cpu.core) {
                (Some(package), Some(core)) => format!("{package}/{core}"),
                _ => DASH.into(),
            });
        }
        row.extend([
            cpu.class.to_string(),
            ms(cpu.ms),
            share(cpu.share, view),
            ms(cpu.handover_ms),
            ms(cpu.task_clock_ms),
        ]);
        table.push(row);
    }
    table
}

fn cores_table(judged: &ObserveJudgement, view: &View) -> Grid {
    let mut table = Grid::default();
    table.push(["package/core", "class", "CPUs", "ms", share_heading(view)]);
    for core in &judged.cores {
        table.push([
            format!("{}/{}", core.package, core.core),
            core.class.to_string(),
            CpuSet::from_cpus(core.cpus.iter().copied()).to_string(),
            ms(core.ms),
            share(core.share, view),
        ]);
    }
    table
}

/// Σ residency plus the hand-overs against Σ task-clock, and the bar.
fn reconciliation(judged: &ObserveJudgement) -> Blocks {
    let r = &judged.reconciliation;
    let mut table = Grid::default();
    table.push(["", "ms", "from"]);
    table.push([
        "Σ residency".into(),
        ms(r.residency_ms),
        format!(
            "switch records of {}",
            count(judged.threads.len(), "thread")
        ),
    ]);
    table.push([
        "+ hand-overs".into(),
        ms(r.handover_ms),
        format!(
            "{} between followed threads, ≤ {} µs apart",
            count(r.handovers, "hand-over"),
            HANDOVER_MAX_NS / 1000
        ),
    ]);
    table.push([
        "= total".into(),
        ms(r.residency_ms + r.handover_ms),
        String::new(),
    ]);
    table.push([
        "Σ task-clock".into(),
        ms(r.task_clock_ms),
        "the kernel's task-clock counter on every CPU".into(),
    ]);
    let mut out = Blocks::new();
    out.table(table, "nothing to reconcile");
    out.line(
        format!(
            "difference {} of task-clock, bar {}: {}",
            percent(r.difference),
            percent(r.bar),
            if r.holds { "holds" } else { "FAILED" }
        ),
        0,
    );
    if r.handovers > 0 {
        out.line(
            "task-clock counts the hand-overs: perf swaps the threads' equivalent contexts \
             there without stopping it",
            2,
        );
    }
    if judged.lost_records > 0 {
        out.line(
            format!(
                "lost records: {} (a ring buffer was full): the residency misses their time",
                judged.lost_records
            ),
            0,
        );
    }
    out
}

/// The busiest `shown` threads; the default view leaves out the CPU each
/// first ran on.
fn threads_table(judged: &ObserveJudgement, shown: usize, view: &View) -> Grid {
    let mut table = Grid::default();
    let mut header = vec!["tid", "comm", "on-CPU ms"];
    if view.wide {
        header.push("first CPU");
    }
    header.extend(["home CPU (share)", "settled after ms", "migrations"]);
    table.push(header);
    for thread in judged.threads.iter().take(shown) {
        let mut row = vec![
            thread.tid.to_string(),
            thread.comm.clone(),
            ms(thread.on_cpu_ms),
        ];
        if view.wide {
            row.push(thread.first_cpu.map_or(DASH.into(), |cpu| cpu.to_string()));
        }
        row.extend([
            thread.home_cpu.map_or(DASH.into(), |cpu| {
                format!("{cpu} ({})", percent(thread.home_share))
            }),
            thread.settled_after_ms.map_or("never".into(), ms),
            thread.migrations.to_string(),
        ]);
        table.push(row);
    }
    table
}

/// The count, then the moves in time order: all of them, or the first and
/// the last [`MIGRATIONS_SHOWN`] / 2 with a row marking the gap.
fn migrations(judged: &ObserveJudgement, mark: &str) -> Blocks {
    let moves = &judged.migrations;
    let mut out = Blocks::new();
    if moves.is_empty() {
        out.gap().heading("Migrations: none");
        return out;
    }
    // On a machine of one class, the class of every move says nothing.
    let classes = judged.classes.len() > 1;
    let mut heading = format!("Migrations{mark}: {}", moves.len());
    if classes {
        let across = moves.iter().filter(|m| m.from_class != m.to_class).count();
        let _ = write!(heading, ", {across} between classes");
    }
    let half = MIGRATIONS_SHOWN / 2;
    let left_out = moves.len().saturating_sub(MIGRATIONS_SHOWN);
    if left_out > 0 {
        let _ = write!(
            heading,
            "; the first {half} and the last {half} (the JSON has all)"
        );
    }
    out.gap().line(heading, 2);
    out.line(
        "a wake-up on another CPU counts, as in the kernel's cpu-migrations",
        0,
    );
    let mut table = Grid::default();
    let mut header = vec!["time ms", "tid", "comm", "CPU"];
    if classes {
        header.push("class");
    }
    table.push(header);
    for (index, m) in moves.iter().enumerate() {
        if left_out > 0 && index == half {
            let mut gap = vec!["…".to_string(), String::new(), format!("{left_out} more")];
            gap.resize(if classes { 5 } else { 4 }, String::new());
            table.push(gap);
        }
        if left_out > 0 && (half..half + left_out).contains(&index) {
            continue;
        }
        let mut record = vec![
            format!("{:.3}", Fixed(m.time_ms)),
            m.tid.to_string(),
            m.comm.clone(),
            format!("{} → {}", m.from_cpu, m.to_cpu),
        ];
        if classes {
            record.push(format!("{} → {}", m.from_class, m.to_class));
        }
        table.push(record);
    }
    out.table(table, "no migration");
    out
}

/// One row per interval: each class's ms, as a share of its CPUs' time
/// in the interval, then the migrations that began in it.
fn timeline_table(judged: &ObserveJudgement) -> Grid {
    let mut table = Grid::default();
    let mut header = vec!["time ms".to_string()];
    header.extend(
        judged
            .classes
            .iter()
            .map(|class| format!("{} ({})", class.class, count(class.cpus.len(), "CPU"))),
    );
    header.push("migrations".into());
    table.push(header);
    for row in &judged.timeline {
        let length = row.end_ms - row.start_ms;
        let mut record = vec![format!(
            "{:.0}–{:.0}",
            Fixed(row.start_ms),
            Fixed(row.end_ms)
        )];
        record.extend(
            row.class_ms
                .iter()
                .zip(&judged.classes)
                .map(|(&ms, class)| {
                    let capacity = length * class.cpus.len() as f64;
                    if capacity > 0.0 {
                        format!("{:.1} ({})", Fixed(ms), percent(ms / capacity))
                    } else {
                        DASH.into()
                    }
                }),
        );
        record.push(row.migrations.to_string());
        table.push(record);
    }
    table
}

impl Document for ObserveResult {
    /// A command's own status, whatever it was, as `time` and `perf stat`
    /// pass it on.
    fn outcome(&self) -> Outcome {
        match self.exit_status {
            Some(status) => Outcome::Passthrough(status),
            None if !self.judged.valid => Outcome::InvalidRun,
            None => Outcome::Success,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::observe::{Migration, ThreadStats};
    use crate::probe::CoreKind;
    use crate::report::{compare, csv};
    use crate::saved::SavedDocument;

    /// `observe --kernel mul --threads 2 --seconds 0.5 --interval 100` on a
    /// 2-vCPU VM without a PMU.
    const KERNEL_VM: &str = include_str!("../../fixtures/results/observe-kernel-vm.json");

    fn kernel_vm() -> ObserveResult {
        serde_json::from_str(KERNEL_VM).unwrap_or_else(|e| panic!("observe-kernel-vm.json: {e}"))
    }

    /// The line of `text` holding `label`.
    fn line<'a>(text: &'a str, label: &str) -> &'a str {
        text.lines()
            .find(|l| l.contains(label))
            .unwrap_or_else(|| panic!("no line with {label:?} in\n{text}"))
    }

    #[test]
    fn the_view_has_every_section_and_the_reconciliation() {
        let text = kernel_vm().render(&View::default());
        assert!(text.starts_with("valid observation"), "{text}");
        assert!(
            text.lines()
                .nth(1)
                .unwrap()
                .starts_with("2 mul threads ran 0.51 s"),
            "{text}"
        );
        assert!(
            text.contains(
                "observed: built-in kernel, 2 mul threads, unpinned, for 0.5 s; 509.8 ms wall\n"
            ),
            "{text}"
        );
        for heading in [
            "\nResidency per core class\n",
            "\nResidency per CPU\n",
            "\nReconciliation\n",
            "\nThreads\n",
            "\nMigrations: none\n",
            "\nTimeline, every 100 ms",
            "\nEvidence (shown, never deciding)\n",
            "\nNotes\n",
        ] {
            assert!(text.contains(heading), "no {heading:?} in\n{text}");
        }
        // One hardware thread per core: the core table would repeat the CPUs.
        assert!(!text.contains("Residency per core,"), "{text}");
        assert!(!text.contains("INVALID") && !text.contains("INCOMPLETE"));
        assert!(line(&text, "│ Σ residency").contains("│ 572.1 │"));
        assert!(line(&text, "│ Σ task-clock").contains("│ 572.6 │"));
        assert!(text.contains("difference 0.09 % of task-clock, bar 1.00 %: holds\n"));
        assert!(line(&text, "│ uniform │ 0-1").contains("│ unavailable"));
        assert!(text.contains("busy MHz unavailable: no hardware PMU visible"));
        assert!(line(&text, "│ 1249 ").contains("│ 0 (100.00 %) "));
        assert!(line(&text, "│ 0–100 ").contains("│ 95.4 (47.72 %) "));
    }

    #[test]
    fn a_process_that_slept_is_observed_as_zero_time_never_minus_zero() {
        let mut result = kernel_vm();
        let judged = &mut result.judged;
        judged.threads.clear();
        judged.migrations.clear();
        judged.timeline.clear();
        for cpu in &mut judged.cpus {
            (cpu.ms, cpu.share, cpu.task_clock_ms, cpu.handover_ms) = (-0.0, 0.0, -0.0, -0.0);
        }
        for class in &mut judged.classes {
            (class.ms, class.share) = (-0.0, 0.0);
        }
        let r = &mut judged.reconciliation;
        (r.residency_ms, r.task_clock_ms, r.handover_ms, r.difference) = (-0.0, -0.0, -0.0, 0.0);
        result.sentence = crate::judge::sentences::observe::sentence(
            &result.options.target_text(),
            &result.judged,
        );
        let text = result.render(&View::default());
        assert!(
            !text.contains("-0.0") && !text.contains("INVALID"),
            "{text}"
        );
        assert!(text.contains("0.0 ms on CPUs"), "{text}");
        assert!(
            text.contains("It did not run while it was observed"),
            "{text}"
        );
        assert!(
            text.contains("\nit did not run while it was observed"),
            "{text}"
        );
    }

    #[test]
    fn a_failed_observation_is_marked_everywhere() {
        let mut result = kernel_vm();
        result.head.complete = false;
        result.command_end = Some(CommandEnd::Signaled { signal: 9 });
        result.judged.valid = false;
        result.judged.reconciliation.holds = false;
        result.judged.lost_records = 3;
        result.judged.problems = vec!["the kernel dropped 3 records".into()];
        let text = result.render(&View::default());
        assert!(text.starts_with("*** INCOMPLETE: "), "{text}");
        // The observed line, wrapped at 80 columns.
        let observed = text.replace("\n  ", " ");
        assert!(observed.contains("; killed by signal 9 (exit status 137)\n"));
        assert!(text.contains("*** INVALID OBSERVATION: "));
        assert!(text.contains("\n  the kernel dropped 3 records\n"));
        for heading in [
            "Residency per core class (INVALID)",
            "Residency per CPU (INVALID)",
            "Threads (INVALID)",
            "Timeline (INVALID)",
        ] {
            assert!(text.contains(heading), "no {heading:?} in\n{text}");
        }
        assert!(text.contains(": FAILED\n"));
        assert!(text.contains("lost records: 3 "));
    }

    #[test]
    fn long_lists_are_cut_and_say_what_is_left_out() {
        let mut result = kernel_vm();
        let thread = result.judged.threads[0].clone();
        result.judged.threads = (0..25)
            .map(|i| ThreadStats {
                tid: 3000 + i,
                ..thread.clone()
            })
            .collect();
        let migration = Migration {
            time_ms: 0.0,
            tid: 3000,
            comm: "mul worker".into(),
            from_cpu: 0,
            to_cpu: 1,
            from_class: CoreKind::Uniform,
            to_class: CoreKind::Uniform,
        };
        result.judged.migrations = (0..40)
            .map(|i| Migration {
                time_ms: f64::from(i),
                ..migration.clone()
            })
            .collect();
        let text = result.render(&View::default());
        assert!(text.contains("Threads: the 20 busiest of 25 (the JSON and CSV have all)"));
        assert!(
            text.contains("│ 3019 ") && !text.contains("│ 3020 "),
            "{text}"
        );
        assert!(text.contains("Migrations: 40; the first 15 and the last 15 (the JSON has all)"));
        assert!(line(&text, "│ …").contains("10 more"));
        assert!(
            text.contains("│ 14.000 ") && text.contains("│ 25.000 "),
            "{text}"
        );
        assert!(
            !text.contains("│ 15.000 ") && !text.contains("│ 24.000 "),
            "{text}"
        );
        // One class: the class of a move says nothing.
        assert!(!text.contains("uniform → uniform"));
    }

    #[test]
    fn the_csv_has_one_row_per_stretch_on_a_cpu() {
        let result = kernel_vm();
        let text = csv::observe(&result.judged);
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("tid,pid,comm,cpu,package,core,class,start_ms,end_ms,ms")
        );
        let stretches: usize = result
            .judged
            .threads
            .iter()
            .map(|t| t.intervals.len())
            .sum();
        assert_eq!(lines.count(), stretches);
        assert!(
            text.contains("\n1248,1246,\"mul worker\",1,0,1,uniform,0.104178,1.850636,1.746458\n"),
            "{text}"
        );
    }

    #[test]
    fn a_comparison_has_the_observed_column() {
        let document = SavedDocument::Observe(Box::new(kernel_vm()));
        let hosts: Vec<_> = ["a.json", "b.json"]
            .iter()
            .map(|file| crate::report::document::of(&document).summary(file.to_string()))
            .collect();
        let wide = View {
            wide: true,
            ..View::default()
        };
        let table = compare::render(&hosts, &wide);
        assert!(line(&table, "│ file ").contains("│ observed "), "{table}");
        assert!(
            line(&table, "│ a.json ")
                .contains("│ uniform 100.0 %; 0 migrations; reconciled 0.09 % "),
            "{table}"
        );
        // The default view: the finding named in the result column, wrapped.
        let table = compare::render(&hosts, &View::default());
        assert!(line(&table, "│ file ").contains("│ result "), "{table}");
        assert!(
            line(&table, "│ a.json ").contains("│ observed: uniform 100.0 %; "),
            "{table}"
        );
        assert!(
            line(&table, "reconciled 0.09 % ").starts_with("│ "),
            "{table}"
        );
        let rows = compare::csv(&hosts);
        assert!(compare::CSV_HEADER.contains(
            ",observed_target,observed_classes,observed_threads,migrations,observed_wall_ms,\
             reconciliation_difference,reconciled,"
        ));
        let row = line(&rows, "\"a.json\",observe,");
        assert!(
            row.contains(",\"2 mul threads\",\"uniform 100.0 %\",2,0,509.820757,"),
            "{row}"
        );
        assert!(
            row.contains(",509.820757,0.0009237458906197739,true,"),
            "{row}"
        );
    }
}
