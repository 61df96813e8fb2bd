//! Every saved fixture's figure, pinned: for each result in
//! `fixtures/results/`, its SVG is compared byte for
//! byte with `tests/figures/<fixture>.svg` (files a person can open in a
//! browser), parsed by an XML parser, kept under 1 MB, and drawn twice to
//! the same bytes. The kinds come from the fixtures, not from a list here:
//! a new fixture is checked from then on.
//!
//! After a deliberate change, rewrite them with `UPDATE_FIGURES=1 cargo
//! test --test tests figures::` and look at `git diff tests/figures/` (and
//! the figures). Under CI (`CI` set) a missing or differing figure fails
//! and nothing is written.

use placement_study::report::document;
use placement_study::saved::load;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The saved results the figures are drawn of.
const RESULTS: &str = "fixtures/results";

/// Where the pinned figures are.
const FIGURES: &str = "tests/figures";

/// The most a figure may weigh: one of a 256-CPU machine included.
const MOST_BYTES: usize = 1 << 20;

pub(crate) fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every saved result, in name order.
pub(crate) fn fixtures() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = fs::read_dir(repository().join(RESULTS))
        .expect("the fixtures folder")
        .map(|entry| entry.expect("a fixture").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
}

/// The figure of the saved result at `path`.
fn figure_of(path: &Path) -> String {
    let saved = load(path).unwrap_or_else(|error| panic!("{}: {error:#}", path.display()));
    document::of(&saved).figure()
}

/// Its pinned file: `tests/figures/gate-vm-no-smt.svg`.
fn pinned(fixture: &Path) -> PathBuf {
    let stem = fixture.file_stem().expect("a file name");
    repository().join(FIGURES).join(stem).with_extension("svg")
}

#[test]
fn every_fixture_has_its_pinned_figure() {
    let update = std::env::var_os("UPDATE_FIGURES").is_some() && std::env::var_os("CI").is_none();
    let mut differing = Vec::new();
    for fixture in fixtures() {
        let svg = figure_of(&fixture);
        let name = fixture.display();
        roxmltree::Document::parse(&svg)
            .unwrap_or_else(|error| panic!("the figure of {name} is not XML: {error}"));
        assert!(
            svg.len() < MOST_BYTES,
            "the figure of {name} is {} bytes",
            svg.len()
        );
        assert_eq!(
            figure_of(&fixture),
            svg,
            "the figure of {name} is not the same bytes twice"
        );
        let path = pinned(&fixture);
        if fs::read(&path).ok().as_deref() == Some(svg.as_bytes()) {
            continue;
        }
        if update {
            fs::create_dir_all(path.parent().expect("a folder")).expect("tests/figures");
            fs::write(&path, &svg).expect("the pinned figure is written");
        } else {
            differing.push(path.display().to_string());
        }
    }
    assert!(
        differing.is_empty(),
        "these figures are missing or differ (UPDATE_FIGURES=1 cargo test --test tests \
         figures:: rewrites them; review the diff): {differing:#?}"
    );
}

/// The document of the figure's root: an `<svg>` with a title, a size, and
/// a heading line naming its n.
#[test]
fn every_figure_has_a_title_and_its_n() {
    for fixture in fixtures() {
        let svg = figure_of(&fixture);
        let parsed = roxmltree::Document::parse(&svg).expect("XML");
        let root = parsed.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        assert!(root.attribute("width").is_some() && root.attribute("height").is_some());
        let title = root
            .children()
            .find(|n| n.has_tag_name("title"))
            .and_then(|n| n.text())
            .unwrap_or_default();
        assert!(!title.is_empty(), "{}: no title", fixture.display());
        let texts: Vec<&str> = parsed
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .collect();
        assert!(
            texts
                .iter()
                .any(|t| t.contains("n = ") || t.starts_with("nothing to draw")),
            "{}: no line names the figure's n",
            fixture.display()
        );
    }
}

/// Runs the binary in the repository, in a C.UTF-8 locale and an
/// otherwise empty environment.
pub(crate) fn placement_study(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .current_dir(repository())
        .env_clear()
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// `report FILE --svg -` writes the library's figure to standard output
/// (the human view then goes to standard error); `--svg OUT` writes it to
/// a file.
#[test]
fn report_writes_the_figure_to_a_file_or_standard_output() {
    let fixture = format!("{RESULTS}/sweep-vm-skip-gate.json");
    let expected = figure_of(&repository().join(&fixture));
    let out = placement_study(&["report", &fixture, "--svg", "-"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
    assert!(
        !out.stderr.is_empty(),
        "the human view goes to standard error"
    );

    let folder = tempfile::tempdir().expect("a temporary folder");
    let file = folder.path().join("sweep.svg");
    let file_arg = file.to_str().expect("a UTF-8 path");
    let out = placement_study(&["report", &fixture, "--svg", file_arg]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(fs::read_to_string(&file).expect("the figure"), expected);
}

/// A figure is one document's: with several files or `--fleet`, `--svg`
/// is a one-line usage error (exit 2).
#[test]
fn svg_is_refused_for_a_comparison_and_a_fleet() {
    let one = format!("{RESULTS}/gate-vm-no-smt.json");
    let two = format!("{RESULTS}/gate-guest-siblings-split.json");
    for args in [
        vec!["report", &one, &two, "--svg", "-"],
        vec!["report", "--fleet", &one, "--svg", "-"],
    ] {
        let out = placement_study(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains("--svg"), "{stderr}");
        assert!(out.stdout.is_empty());
    }
}
