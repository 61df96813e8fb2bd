//! Every table fits the view: 80 columns by default (a log, a pipe, a
//! standard terminal), any wider terminal's width, and `--wide` brings back
//! every column. Rendered here: every saved result in `fixtures/results/`,
//! the comparison of all of them, and the topology of every snapshot in
//! `fixtures/sysfs/` and in the conformance corpus beside the repository.
//! The replayed gates, runs and `pairs` searches are checked the same way
//! in `study_replay.rs`.

use crate::conformance::Corpus;
use placement_study::measure::ClockKind;
use placement_study::probe::probe;
use placement_study::report::{
    self, compare, document,
    view::{Charset, View},
};
use placement_study::saved::{SavedDocument, load};
use std::path::Path;
use std::process::Command;

/// The 120-column view of a wider terminal.
const WIDER: View = View {
    width: 120,
    wide: false,
    charset: Charset::Utf8,
};

/// `--wide` (its width only wraps prose).
const WIDE: View = View {
    width: View::STANDARD_WIDTH,
    wide: true,
    charset: Charset::Utf8,
};

/// Every saved result in `fixtures/results/`, named by its path in the
/// repository, in name order.
fn saved_results() -> Vec<(String, SavedDocument)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(root.join("fixtures/results"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().to_string())
        .filter(|name| name.ends_with(".json"))
        .map(|name| format!("fixtures/results/{name}"))
        .collect();
    names.sort();
    assert!(names.len() >= 8, "saved results: {names:?}");
    names
        .into_iter()
        .map(|name| {
            let document = load(&root.join(&name)).unwrap_or_else(|e| panic!("{e:#}"));
            (name, document)
        })
        .collect()
}

/// The human view of one saved result, as `report FILE` prints it.
fn render(document: &SavedDocument, view: &View) -> String {
    document::of(document).render(view)
}

/// The lines of `text`'s tables: those drawn with box characters.
fn table_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .filter(|line| line.starts_with(['┌', '│', '├', '└']))
}

/// Characters on a line: the tables' box characters, dashes and signs are
/// all one column wide.
fn columns(line: &str) -> usize {
    line.chars().count()
}

/// Panics, showing `text`, when a line of it is wider than `width`: every
/// table line, and (`prose`) every other line too.
fn assert_fits(what: &str, text: &str, width: usize, prose: bool) {
    let lines: Box<dyn Iterator<Item = &str>> = if prose {
        Box::new(text.lines())
    } else {
        Box::new(table_lines(text))
    };
    let over: Vec<&str> = lines.filter(|line| columns(line) > width).collect();
    assert!(
        over.is_empty(),
        "{what}: {} lines wider than {width} columns, the first:\n{}\n\n{text}",
        over.len(),
        over[0]
    );
}

#[test]
fn every_saved_result_fits_80_columns_and_a_wider_terminal() {
    for (what, document) in saved_results() {
        let text = render(&document, &View::default());
        assert_fits(&what, &text, 80, true);
        assert_fits(&what, &render(&document, &WIDER), 120, true);
        // Only a gate that found no SMT, and a topology (a drawing of
        // packages and cores), have no table to show.
        let tables = table_lines(&text).count();
        assert!(
            tables > 0
                || matches!(
                    document,
                    SavedDocument::Gate(_) | SavedDocument::Topology(_)
                ),
            "{what}: no table\n{text}"
        );
    }
}

#[test]
fn the_comparison_of_every_saved_result_fits() {
    let saved = saved_results();
    let hosts: Vec<_> = saved
        .iter()
        .map(|(name, saved)| document::of(saved).summary(name.to_string()))
        .collect();
    let text = compare::render(&hosts, &View::default());
    assert_fits("the comparison", &text, 80, true);
    assert_fits(
        "the comparison",
        &compare::render(&hosts, &WIDER),
        120,
        true,
    );
    // A row per file, its path wrapped after a "/".
    let rows = text
        .lines()
        .filter(|line| line.starts_with("│ fixtures/results/ "))
        .count();
    assert_eq!(rows, saved.len(), "{text}");
    for mark in ["gate: no-smt", "UNGATED", "FAILED: cv-bar", "n=2)"] {
        assert!(text.contains(mark), "no {mark:?}\n{text}");
    }
    // Today's table, one column per finding, is the wide one.
    let wide = compare::render(&hosts, &WIDE);
    assert!(table_lines(&wide).any(|line| columns(line) > 200), "{wide}");
    for heading in ["cores/threads", "hypervisor", "sibling-packed", "observed"] {
        assert!(wide.contains(&format!("│ {heading} ")), "{heading}\n{wide}");
    }
}

#[test]
fn wide_shows_the_full_column_set() {
    // Per kind: headings only the wide view has.
    let wide_only = |document: &SavedDocument| -> &[&str] {
        match document {
            // The tick column is headed by the tick clock: "TSC/byte" on
            // x86_64, "generic-timer/byte" on aarch64.
            SavedDocument::Run(run) if run.setup.tick_clock == ClockKind::GenericTimer => &[
                "│ eff. GHz ",
                "│ clock ",
                "│ generic-timer/byte ",
                "│ instructions ",
                "│ idle at barrier ms ",
            ],
            SavedDocument::Run(_) => &[
                "│ eff. GHz ",
                "│ clock ",
                "│ TSC/byte ",
                "│ instructions ",
                "│ idle at barrier ms ",
            ],
            SavedDocument::Pairs(_) => &["│ alone TSC/B (CV) ", "│ beside TSC/B (CV) ", "│ reps "],
            SavedDocument::Hybrid(_) => &["│ min–max ", "│ slower by ", "│ reps "],
            SavedDocument::Sweep(_) => &["│ min–max ", "│ busy MHz ", "│ CPUs ", "│ unpinned "],
            SavedDocument::Observe(_) => &[
                "│ first CPU ",
                "│ of on-CPU time ",
                "│ busy MHz (core cycles ÷ task-clock) ",
            ],
            SavedDocument::Memory(_) => &["│ bandwidth "],
            // The gate, a command's, latency and topology views have no
            // column only the wide view shows.
            _ => &[],
        }
    };
    let mut checked = 0;
    for (name, document) in saved_results() {
        let default = render(&document, &View::default());
        let wide = render(&document, &WIDE);
        for heading in wide_only(&document) {
            assert!(wide.contains(heading), "{name}: {heading}\n{wide}");
            assert!(!default.contains(heading), "{name}: {heading}\n{default}");
            checked += 1;
        }
        // The default view marks what the wide one marks in words.
        // (A command study's legend names more reasons than the CV bar.)
        if wide.contains("(not quotable)") {
            let legend = report::table::NOT_QUOTABLE_LEGEND;
            let reasons_start = legend.find(':').expect("a legend says why");
            assert!(
                default.contains(&legend[..reasons_start]),
                "{name}: no legend\n{default}"
            );
        }
    }
    assert!(checked >= 10, "{checked} headings checked");
}

#[test]
fn topology_fits_every_snapshot() {
    // No tables; its prose lines stay within 100 columns but the per-core
    // lines, whose masks grow with the CPUs.
    let check = |what: &str, root: &Path| {
        let Ok(topology) = probe(Some(root), None) else {
            return;
        };
        let text =
            report::topology::blocks(&topology, &View::default()).to_terminal(&View::default());
        let prose: String = text
            .lines()
            .filter(|line| !line.starts_with("  Core "))
            .map(|line| format!("{line}\n"))
            .collect();
        assert_fits(what, &text, 80, false);
        assert_fits(what, &prose, 100, true);
    };
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sysfs");
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let root = entry.unwrap().path();
        check(&root.display().to_string(), &root);
    }
    let Some(corpus) = Corpus::find("table_width::topology_fits_every_snapshot") else {
        return;
    };
    for row in corpus.read_manifest("sysfs-manifest.tsv") {
        let scratch = corpus
            .extract(row.get("tarball"), &[])
            .unwrap_or_else(|e| panic!("{e}"));
        check(row.get("name"), &scratch.path().join(row.get("top_dir")));
    }
}

/// `placement-study ARGS`: its standard output (not a terminal: 80 columns).
fn placement_study(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{args:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn report_wide_differs_from_report() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results/run-vm-skip-gate.json");
    let file = file.to_str().unwrap();
    let default = placement_study(&["report", file]);
    let wide = placement_study(&["report", file, "--wide"]);
    assert_ne!(default, wide);
    assert_fits("report", &default, 80, true);
    assert!(wide.contains("│ eff. GHz │"), "{wide}");
    assert!(!default.contains("eff. GHz"), "{default}");
    assert!(table_lines(&wide).any(|line| columns(line) > 80), "{wide}");
}
