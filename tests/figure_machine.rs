//! The figures drawn on the machine (topology, pairs, run, run -- COMMAND):
//! for every saved fixture of those kinds, and for the topology of a few
//! real machines of the conformance corpus (the 256-CPU one among them), the
//! figure is well-formed XML, under 1 MB, and the same bytes when drawn
//! twice.

use crate::conformance::Corpus;
use placement_study::judge::pairs::PairStatus;
use placement_study::probe::probe;
use placement_study::report::document::Figure;
use placement_study::saved::{SavedDocument, TopologyResult, load};
use std::path::Path;

/// The most a figure may weigh.
const SIZE_LIMIT: usize = 1 << 20;

/// Draws a figure twice and checks it; returns it.
fn checked(name: &str, draw: impl Fn() -> String) -> String {
    let figure = draw();
    assert_eq!(figure, draw(), "{name}: not the same bytes twice");
    assert!(
        figure.len() < SIZE_LIMIT,
        "{name}: {} bytes, over 1 MB",
        figure.len()
    );
    let document = roxmltree::Document::parse(&figure)
        .unwrap_or_else(|error| panic!("{name}: not well-formed XML: {error}"));
    assert_eq!(document.root_element().tag_name().name(), "svg", "{name}");
    figure
}

#[test]
fn every_fixture_drawn_on_the_machine_is_well_formed_small_and_stable() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results");
    let mut paths: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    let mut drawn = 0;
    for path in paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let figure = match load(&path).unwrap() {
            SavedDocument::Topology(result) => checked(&name, || result.figure()),
            SavedDocument::Pairs(result) => checked(&name, || result.figure()),
            SavedDocument::Run(result) => {
                let figure = checked(&name, || result.figure());
                // Arm A's worker 0 is marked on its CPU.
                if let Some(Some(cpu)) = result.arms.first().and_then(|arm| arm.cpus.first()) {
                    assert!(
                        figure.contains(&format!("<title>CPU {cpu}: A0</title>")),
                        "{name}: worker 0 of arm A not on CPU {cpu}"
                    );
                }
                figure
            }
            SavedDocument::Command(result) => checked(&name, || result.figure()),
            _ => continue,
        };
        assert!(figure.contains("units"), "{name}: no line naming the units");
        drawn += 1;
    }
    assert!(
        drawn >= 8,
        "{drawn} fixtures drawn: topology, pairs, run and command ones expected"
    );
}

#[test]
fn real_machines_draw_readable_small_and_stable() {
    let Some(corpus) = Corpus::find("figure_machine::real_machines_draw_readable_small_and_stable")
    else {
        return;
    };
    let rows = corpus.read_manifest("sysfs-manifest.tsv");
    // The 256-CPU machine, an SMT one, a hybrid and a machine of three
    // classes with SMT.
    for name in [
        "256ia64-64n2s2c",
        "16em64t-4s2c2t",
        "5intel64-hybrid-lakefield",
        "fakeheterocpunuma",
    ] {
        let row = rows
            .iter()
            .find(|row| row.get("name") == name)
            .unwrap_or_else(|| panic!("{name} is not in the manifest"));
        let scratch = corpus.extract(row.get("tarball"), &[]).unwrap();
        let root = scratch.path().join(row.get("top_dir"));
        let machine = probe(Some(&root), None).unwrap_or_else(|error| panic!("{name}: {error:#}"));
        let result = TopologyResult::new(machine, name.into(), 0);
        let figure = checked(name, || result.figure());
        assert_eq!(
            figure.matches("<title>core ").count(),
            result.summary.cores,
            "{name}: one box per core"
        );
        for cpu in &result.cpus {
            assert!(
                figure.contains(&format!(">{}</text>", cpu.cpu)),
                "{name}: CPU {} not labelled",
                cpu.cpu
            );
        }
        if result.classes.len() > 1 {
            assert_eq!(
                figure.matches(" cores (CPUs ").count(),
                result.classes.len(),
                "{name}: one legend entry per class"
            );
        }
    }
}

/// The pairs heatmap: each pair measured as a pair is two cells (above and
/// below the diagonal), each published sibling pair is outlined, and the
/// pairs only inferred carry a dot.
#[test]
fn the_pairs_heatmap_draws_measured_cells_outlines_and_inferred_dots() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/results/pairs-guest-16-vcpus-group-testing.json");
    let SavedDocument::Pairs(result) = load(&path).unwrap() else {
        panic!("not a pairs document");
    };
    let figure = result.figure();
    let measured: std::collections::BTreeSet<(u32, u32)> = result
        .comparisons
        .iter()
        .filter(|record| record.comparison.against.len() == 1 && record.estimate.is_some())
        .map(|record| {
            let (probe, other) = (
                record.comparison.probe,
                record.comparison.against.first().unwrap(),
            );
            (probe.min(other), probe.max(other))
        })
        .collect();
    assert!(!measured.is_empty());
    assert_eq!(
        figure.matches("<title>CPUs ").count(),
        2 * measured.len(),
        "two cells per measured pair"
    );
    let published_pairs: usize = result
        .map
        .published
        .iter()
        .map(|group| group.len() * (group.len() - 1))
        .sum();
    assert_eq!(
        figure
            .matches("fill=\"none\" stroke=\"#E69F00\" stroke-width=\"2\"")
            .count(),
        published_pairs + 1,
        "each published pair's two cells outlined, and the legend's swatch"
    );
    let inferred = result
        .map
        .pairs
        .iter()
        .filter(|finding| finding.comparison.is_none())
        .filter(|finding| matches!(finding.measured, PairStatus::Shares | PairStatus::Apart))
        .count();
    assert!(inferred > 0, "the fixture has pairs it inferred");
    assert!(figure.matches("<circle").count() >= 2 * inferred);
}
