//! `report --html`: the page of every saved fixture, and of several hosts'
//! documents, is one well-formed page (parsed by an XML parser: the page
//! is written as XML-compatible HTML), holds one inline figure per
//! document, fetches nothing and runs nothing, repeats its bytes and stays
//! small; a page of two hosts is pinned byte for byte under `tests/html/`,
//! the comparison of their hosts on it. `report --fleet --html` and
//! `report --baseline --html` are a page of one view each, as sound.
//!
//! After a deliberate change, rewrite the pinned page with
//! `UPDATE_HTML=1 cargo test --test tests html::` and look at the diff
//! (and the page, in a browser). Under CI (`CI` set) a missing or
//! differing page fails and nothing is written. `.ci/run` draws every
//! fixture's page in headless Chromium too (`.ci/render-page.py`).

use crate::figures::{fixtures, placement_study, repository};
use placement_study::report::blocks::Block;
use placement_study::report::document;
use placement_study::report::figure::xml_text;
use placement_study::report::html::{PageEntry, page};
use placement_study::saved::{SavedDocument, load};
use std::fs;
use std::path::{Path, PathBuf};

/// The saved results the pages are made of.
const RESULTS: &str = "fixtures/results";

/// Where the pinned pages are.
const PINNED: &str = "tests/html";

/// The most a page of one document may weigh.
const MOST_BYTES: usize = 1 << 20;

/// The only URL a page may hold: the SVG namespace of its figures, a
/// name that is never fetched.
const SVG_NAMESPACE: &str = "http://www.w3.org/2000/svg";

/// Two hosts' runs: the x86 VM's and the arm64 guest's.
const TWO_HOSTS_RUNS: [&str; 2] = ["run-vm-skip-gate.json", "run-arm64-guest-counting.json"];

/// Every saved result's file name, in name order.
fn fixture_names() -> Vec<String> {
    fixtures()
        .iter()
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

fn loaded(name: &str) -> SavedDocument {
    let path = repository().join(RESULTS).join(name);
    load(&path).unwrap_or_else(|error| panic!("{}: {error:#}", path.display()))
}

/// The page of the named fixtures, in that order.
fn page_of(names: &[&str]) -> String {
    let documents: Vec<SavedDocument> = names.iter().map(|name| loaded(name)).collect();
    let entries: Vec<PageEntry<'_>> = names
        .iter()
        .zip(&documents)
        .map(|(name, saved)| PageEntry {
            file: (*name).to_owned(),
            document: document::of(saved),
        })
        .collect();
    page(&entries)
}

/// The page as XML: its `<!DOCTYPE html>` is a DTD to the parser.
fn parsed(html: &str) -> roxmltree::Document<'_> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(html, options)
        .unwrap_or_else(|error| panic!("the page is not well formed: {error}"))
}

/// What every page must be, with `documents` documents on it.
fn assert_sound(html: &str, documents: usize, what: &str) {
    assert!(html.starts_with("<!DOCTYPE html>\n"), "{what}: no doctype");
    let parsed = parsed(html);
    assert_eq!(parsed.root_element().tag_name().name(), "html", "{what}");
    assert_eq!(html.matches("<html").count(), 1, "{what}: one <html>");
    let svgs = parsed.descendants().filter(|n| n.has_tag_name("svg"));
    assert_eq!(svgs.count(), documents, "{what}: one figure per document");
    let views = parsed
        .descendants()
        .filter(|n| n.attribute("class") == Some("view"));
    assert_eq!(views.count(), documents, "{what}: one view per document");
    assert!(!html.contains("<pre"), "{what}: no preformatted text view");
    // The summary first: a row per document, each a link to its card.
    let summary = parsed
        .descendants()
        .find(|n| n.attribute("class") == Some("summary"))
        .unwrap_or_else(|| panic!("{what}: no summary"));
    let links: Vec<&str> = summary
        .descendants()
        .filter_map(|n| n.attribute("href"))
        .collect();
    assert_eq!(links.len(), documents, "{what}: a summary row per document");
    for link in links {
        let id = link.trim_start_matches('#');
        assert!(
            parsed.descendants().any(|n| n.attribute("id") == Some(id)),
            "{what}: the summary links to {link}, which is not on the page"
        );
    }
    assert_fetches_nothing(html, what);
}

/// The page fetches nothing and runs nothing: no URL but the figures' SVG
/// namespace, no script, no stylesheet of its own to load.
fn assert_fetches_nothing(html: &str, what: &str) {
    let without_namespace = html.replace(SVG_NAMESPACE, "");
    for forbidden in [
        "http://", "https://", "<script", "<link", "@import", "url(", "<?xml",
    ] {
        assert!(
            !without_namespace.contains(forbidden),
            "{what}: the page holds {forbidden:?}"
        );
    }
}

#[test]
fn every_fixture_has_a_sound_page() {
    for name in fixture_names() {
        let html = page_of(&[&name]);
        assert_sound(&html, 1, &name);
        assert!(html.len() < MOST_BYTES, "{name}: {} bytes", html.len());
        assert_eq!(page_of(&[&name]), html, "{name}: not the same bytes twice");
        // Every table of the view is a real table, beside the summary's,
        // and the view's first line (its verdict) is in the summary.
        let view = placement_study::report::view::View {
            wide: true,
            ..Default::default()
        };
        let blocks = document::of(&loaded(&name)).blocks(&view);
        let tables = blocks
            .iter()
            .filter(|block| matches!(block, Block::Table(_) | Block::Checks(_)))
            .count();
        assert_eq!(html.matches("<table").count(), tables + 1, "{name}");
        let Some(Block::Line { text, .. }) = blocks.iter().next() else {
            panic!("{name}: the view does not open with a line")
        };
        assert!(
            html.contains(&xml_text(text)),
            "{name}: {text:?} is not on the page"
        );
    }
}

/// Every fixture on one page: grouped by kind, in the order each kind
/// first comes, one figure each.
#[test]
fn a_page_of_every_fixture_groups_them_by_kind() {
    let names = fixture_names();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let html = page_of(&names);
    assert_sound(&html, names.len(), "every fixture");
    let parsed = parsed(&html);
    let groups: Vec<&str> = parsed
        .descendants()
        .filter(|n| n.has_tag_name("h2"))
        .filter_map(|n| n.text())
        .collect();
    let mut kinds: Vec<&str> = vec!["Summary", "Hosts compared"];
    for name in &names {
        let kind = name.split('-').next().unwrap();
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    assert_eq!(groups, kinds);
}

/// Two hosts' runs are one group, each host's document a column of it,
/// headed by its host, kind, version and file.
#[test]
fn two_hosts_documents_of_one_kind_stand_side_by_side() {
    let html = page_of(&TWO_HOSTS_RUNS);
    assert_sound(&html, 2, "two hosts");
    let parsed = parsed(&html);
    let groups: Vec<_> = parsed
        .descendants()
        .filter(|n| n.attribute("class") == Some("hosts"))
        .collect();
    assert_eq!(groups.len(), 1, "one group of columns");
    let columns: Vec<_> = groups[0]
        .children()
        .filter(|n| n.has_tag_name("article"))
        .collect();
    assert_eq!(columns.len(), 2);
    let heading = |column: &roxmltree::Node<'_, '_>, tag: &str| -> String {
        column
            .descendants()
            .find(|n| n.has_tag_name(tag))
            .and_then(|n| n.text())
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(heading(&columns[0], "h3"), "vm — run");
    assert_eq!(heading(&columns[1], "h3"), "(none) — run");
    for (column, file) in columns.iter().zip(TWO_HOSTS_RUNS) {
        let about = heading(column, "p");
        assert!(
            about.contains("placement-study 0.") && about.ends_with(file),
            "{about}"
        );
    }
    assert!(html.contains("display:grid"), "the columns are a grid");
}

/// What came from a file is text on the page, never markup.
#[test]
fn a_hostile_host_name_is_escaped() {
    let json = fs::read_to_string(repository().join(RESULTS).join("gate-vm-no-smt.json"))
        .expect("the fixture");
    let hostile = "<script>alert(\\\"x\\\")</script>&amp;";
    let json = json.replacen("\"host\": \"vm\"", &format!("\"host\": \"{hostile}\""), 1);
    assert!(json.contains("<script>"), "the fixture names its host vm");
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("hostile.json");
    fs::write(&path, json).unwrap();
    let saved = load(&path).unwrap();
    let html = page(&[PageEntry {
        file: "<b>.json".into(),
        document: document::of(&saved),
    }]);
    assert_sound(&html, 1, "hostile");
    assert!(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;amp;"));
    assert!(html.contains("&lt;b&gt;.json"));
}

/// The pinned page: two hosts' runs side by side (each a whole
/// one-document page's content).
#[test]
fn the_pinned_page_is_unchanged() {
    let update = std::env::var_os("UPDATE_HTML").is_some() && std::env::var_os("CI").is_none();
    let html = page_of(&TWO_HOSTS_RUNS);
    let path = repository().join(PINNED).join("two-hosts-runs.html");
    if fs::read(&path).ok().as_deref() == Some(html.as_bytes()) {
        return;
    }
    assert!(
        update,
        "{} is missing or differs (UPDATE_HTML=1 cargo test --test tests html:: rewrites it; \
         review the diff)",
        path.display()
    );
    fs::create_dir_all(path.parent().unwrap()).expect("tests/html");
    fs::write(&path, &html).expect("the pinned page is written");
}

fn run_fixture(name: &str) -> String {
    format!("{RESULTS}/{name}")
}

/// `report A B --html OUT` writes the library's page, files named by their
/// last component; `--html -` writes it to standard output (the human view
/// then goes to standard error).
#[test]
fn report_writes_the_page_to_a_file_or_standard_output() {
    let [a, b] = TWO_HOSTS_RUNS.map(run_fixture);
    let folder = tempfile::tempdir().unwrap();
    let out: PathBuf = folder.path().join("page.html");
    let written = placement_study(&["report", &a, &b, "--html", out.to_str().unwrap()]);
    assert!(written.status.success(), "{written:?}");
    assert_eq!(fs::read_to_string(&out).unwrap(), page_of(&TWO_HOSTS_RUNS));
    let to_stdout = placement_study(&["report", &a, "--html", "-"]);
    assert!(to_stdout.status.success(), "{to_stdout:?}");
    assert_eq!(
        String::from_utf8(to_stdout.stdout).unwrap(),
        page_of(&TWO_HOSTS_RUNS[..1])
    );
    assert!(String::from_utf8_lossy(&to_stdout.stderr).contains("one-per-core"));
}

/// What `--html` refuses, each in one line and writing nothing: a
/// `--trace` of a document that has none, an output that is an input, and
/// a file that cannot be read (as `report` says it).
#[test]
fn report_html_refuses_in_one_line() {
    let a = run_fixture(TWO_HOSTS_RUNS[0]);
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("page.html");
    let out = out.to_str().unwrap();
    let missing = folder.path().join("missing.json");
    let missing = missing.to_str().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["report", &a, "--trace", "-", "--html", out], "--trace"),
        (&["report", &a, "--html", &a], "one of the files to read"),
        (&["report", &a, missing, "--html", out], "missing.json"),
    ];
    for (args, expected) in cases {
        let refused = placement_study(args);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success(), "{args:?}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!Path::new(out).exists(), "{args:?} wrote the page");
    }
    assert_eq!(
        placement_study(&["report", &a, missing, "--html", out]).stderr,
        placement_study(&["report", &a, missing]).stderr,
        "an unreadable file is the error `report` gives without --html"
    );
}

/// The comparison of the hosts stands between the summary and the
/// documents: the table `report A B --wide` prints, a row per document,
/// each named by its file as the summary names it; a page of one document
/// has none.
#[test]
fn several_documents_open_with_the_comparison_of_their_hosts() {
    let html = page_of(&TWO_HOSTS_RUNS);
    let parsed = parsed(&html);
    let compared = parsed
        .descendants()
        .find(|n| n.attribute("class") == Some("view compared"))
        .expect("the comparison");
    let rows: Vec<Vec<String>> = compared
        .descendants()
        .filter(|n| n.has_tag_name("tr"))
        .map(|row| {
            row.children()
                .map(|cell| cell.text().unwrap_or_default().to_owned())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[0][..3], ["file", "host", "CPU"]);
    assert_eq!(rows[1][0], TWO_HOSTS_RUNS[0]);
    assert_eq!(rows[2][0], TWO_HOSTS_RUNS[1]);
    assert!(!page_of(&TWO_HOSTS_RUNS[..1]).contains("Hosts compared"));
}

/// A page of a view of its own: one card, its view's tables real tables,
/// fetching nothing.
fn assert_sound_view_page(html: &str, title: &str, figures: usize) {
    assert!(html.starts_with("<!DOCTYPE html>\n"), "{title}: no doctype");
    let parsed = parsed(html);
    let heading = parsed.descendants().find(|n| n.has_tag_name("h1"));
    assert_eq!(heading.and_then(|n| n.text()), Some(title));
    let svgs = parsed.descendants().filter(|n| n.has_tag_name("svg"));
    assert_eq!(svgs.count(), figures, "{title}");
    let views = parsed
        .descendants()
        .filter(|n| n.attribute("class") == Some("view"));
    assert_eq!(views.count(), 1, "{title}: one view");
    assert!(html.contains("<table>"), "{title}: no table");
    assert!(!html.contains("<pre"), "{title}: no preformatted text view");
    assert_fetches_nothing(html, title);
}

/// `report --fleet --html`: the fleet's view (the same blocks as the
/// terminal's), its counts aligned right; the human view still printed.
#[test]
fn a_fleet_report_is_a_page_of_its_own() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("fleet.html");
    let pdsh = "fixtures/fleet/pdsh.out";
    let args = [
        "report",
        "--fleet",
        "--hosts",
        "node[1-9]",
        pdsh,
        "--html",
        out.to_str().unwrap(),
    ];
    let written = placement_study(&args);
    assert!(written.status.success(), "{written:?}");
    assert!(String::from_utf8_lossy(&written.stdout).contains("Missing (1): node9"));
    let html = fs::read_to_string(&out).unwrap();
    assert_sound_view_page(&html, "placement-study fleet report", 0);
    assert!(html.contains("<p class=\"answer\">9 hosts: 5 with a result, 3 broken, 1 missing</p>"));
    assert!(html.contains("<th class=\"number\">hosts</th>"), "{html}");
    assert!(html.contains("<h4>Broken (3)</h4>"), "{html}");
    // The same bytes from standard input, and to standard output.
    let to_stdout = placement_study(&[
        "report",
        "--fleet",
        "--hosts",
        "node[1-9]",
        pdsh,
        "--html=-",
    ]);
    assert_eq!(String::from_utf8(to_stdout.stdout).unwrap(), html);
}

/// `report --baseline OLD NEW --html`: the comparison's figure and view.
#[test]
fn a_baseline_comparison_is_a_page_of_its_own() {
    let [old, new] = [
        "gate-guest-one-core-split.json",
        "gate-guest-one-core-split-capped.json",
    ]
    .map(run_fixture);
    let written = placement_study(&["report", "--baseline", &old, &new, "--html=-"]);
    assert!(written.status.success(), "{written:?}");
    let html = String::from_utf8(written.stdout).unwrap();
    let title = format!("placement-study: against the baseline {old}");
    assert_sound_view_page(&html, &title, 1);
    assert!(
        html.contains("<p class=\"answer\">NOTHING REGRESSED (exit 0)"),
        "{html}"
    );
    assert!(String::from_utf8_lossy(&written.stderr).contains("NOTHING REGRESSED"));
}
