//! Every view of every saved fixture, pinned: the built binary's output
//! (never library functions, whose APIs change under it) compared with a
//! committed `insta` snapshot in `tests/snapshots/`, so that a change to a
//! view is a diff to review, not a surprise. For each saved result in
//! `fixtures/results/`: `report` at 80 columns and `--wide`, its Markdown
//! (`--markdown=-`) and the view on its HTML page (`--html=-`): the view
//! model's three renderers; and the bytes of its `--json=-` and `--csv=-`; the comparison of all of them and their
//! fleet summary, at 80 columns and `--wide`; for each sysfs snapshot in
//! `fixtures/sysfs/`: `topology` at 80 columns and `--wide`, and its JSON and
//! CSV. The comparison and the fleet summary are pinned in Markdown and
//! HTML too, and so is the captured pdsh fleet of `fixtures/fleet/`.
//!
//! A snapshot is named after its test (the view) and its fixture:
//! `report_wide@gate-vm-no-smt.json.snap`. Each saved result's Markdown
//! (`--markdown=-`) is pinned too. After a deliberate change, update
//! them with `INSTA_UPDATE=always cargo test --test tests snapshot::` (or
//! `cargo insta review`) and review `git diff tests/snapshots/`. Under CI
//! (`CI` set) a missing or differing snapshot fails and nothing is written.

use std::fs::{self, DirEntry};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The saved results every `report` view is taken of.
const RESULTS: &str = "fixtures/results";

/// The machines (sysfs and procfs snapshots) every `topology` view is taken of.
const MACHINES: &str = "fixtures/sysfs";

/// The binary run with `args`, from the repository root so that the paths
/// it prints are the relative ones given, with nothing around it that could
/// change its output: stdout is a pipe (80 columns unless `--wide`), and the
/// environment is emptied but for a fixed locale, time zone and width.
fn placement_study(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_clear()
        .env("LC_ALL", "C.UTF-8")
        .env("TZ", "UTC")
        .env("COLUMNS", "80")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// What one stream printed, exactly: insta trims trailing whitespace from
/// a snapshot, so the end is marked (a missing final newline shows too).
fn stream(name: &str, bytes: &[u8], args: &[&str]) -> String {
    let text = std::str::from_utf8(bytes)
        .unwrap_or_else(|error| panic!("the {name} of {args:?} is not UTF-8: {error}"));
    format!("{name}:\n{text}[end of {name}]\n")
}

/// A topology document records when it was probed (`started_unix`, the
/// clock when the test ran): the one value a snapshot of it cannot pin.
fn when_it_ran(json: &str) -> String {
    json.lines()
        .map(|line| match line.split_once("\"started_unix\": ") {
            Some((indent, _)) => format!("{indent}\"started_unix\": \"[when it ran]\","),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Which of the child's streams a snapshot holds.
#[derive(Clone, Copy)]
enum Streams {
    /// A text view: stdout, and stderr where anything went there.
    Text,
    /// JSON or CSV on stdout: stderr then holds the text view, which the
    /// text snapshots pin already, so it is kept only when the run failed.
    Document,
}

/// The command line, its exit status and what it printed.
fn transcript(args: &[&str], streams: Streams) -> String {
    let output = placement_study(args);
    let mut text = format!("$ placement-study {}\n{}\n", args.join(" "), output.status);
    let mut stdout = stream("stdout", &output.stdout, args);
    if args.first() == Some(&"topology") {
        stdout = when_it_ran(&stdout);
    }
    text += &stdout;
    let keep_stderr = match streams {
        Streams::Text => true,
        Streams::Document => !output.status.success(),
    };
    if keep_stderr && !output.stderr.is_empty() {
        text += &stream("stderr", &output.stderr, args);
    }
    text
}

/// Snapshot `view` of the transcript of `args`; `fixture`, where the view
/// is of one, names the snapshot (`VIEW@FIXTURE.snap`) and is its input.
fn assert_view(view: &str, fixture: Option<&str>, args: &[&str], streams: Streams) {
    let mut settings = insta::Settings::clone_current();
    // One module holds every snapshot: the view's name is enough.
    settings.set_prepend_module_to_snapshot(false);
    // The command line heads every snapshot; the expression says nothing.
    settings.set_omit_expression(true);
    if let Some(fixture) = fixture {
        let path = Path::new(fixture);
        settings.set_snapshot_suffix(path.file_name().unwrap().to_str().unwrap());
        settings.set_input_file(path);
    }
    settings.bind(|| insta::assert_snapshot!(view, transcript(args, streams)));
}

/// The entries of `folder` (relative to the repository) that `keep`
/// accepts, as relative paths, sorted.
fn fixtures(folder: &str, keep: impl Fn(&DirEntry) -> bool) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let mut paths: Vec<String> = fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.expect("a readable folder entry"))
        .filter(|entry| keep(entry))
        .map(|entry| format!("{folder}/{}", entry.file_name().to_str().unwrap()))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no fixtures in {folder}");
    paths
}

fn saved_results() -> Vec<String> {
    fixtures(RESULTS, |entry| {
        entry
            .path()
            .extension()
            .is_some_and(|extension| extension == "json")
    })
}

fn machines() -> Vec<String> {
    fixtures(MACHINES, |entry| entry.path().is_dir())
}

/// Snapshot `view` of every fixture in `paths`, each run with the
/// arguments `args` makes of its path. Every fixture is checked before the
/// failures are reported, so that one review sees all of them.
fn assert_view_of_each<'path>(
    view: &str,
    paths: &'path [String],
    args: impl Fn(&'path str) -> Vec<&'path str>,
    streams: Streams,
) {
    let failed: Vec<&str> = paths
        .iter()
        .filter(|path| {
            catch_unwind(AssertUnwindSafe(|| {
                assert_view(view, Some(path), &args(path), streams)
            }))
            .is_err()
        })
        .map(String::as_str)
        .collect();
    assert!(
        failed.is_empty(),
        "{view}: the snapshots of {failed:?} differ or are missing (diffs above)"
    );
}

#[test]
fn report_80() {
    let paths = saved_results();
    assert_view_of_each(
        "report_80",
        &paths,
        |path| vec!["report", path],
        Streams::Text,
    );
}

#[test]
fn report_wide() {
    let paths = saved_results();
    let args = |path| vec!["report", "--wide", path];
    assert_view_of_each("report_wide", &paths, args, Streams::Text);
}

#[test]
fn report_json() {
    let paths = saved_results();
    let args = |path| vec!["report", "--json=-", path];
    assert_view_of_each("report_json", &paths, args, Streams::Document);
}

#[test]
fn report_csv() {
    let paths = saved_results();
    let args = |path| vec!["report", "--csv=-", path];
    assert_view_of_each("report_csv", &paths, args, Streams::Document);
}

/// The Markdown of each saved result: the same view model as the terminal's,
/// drawn by the other renderer (`--html` is pinned in tests/html.rs).
#[test]
fn report_markdown() {
    let paths = saved_results();
    let args = |path| vec!["report", "--markdown=-", path];
    assert_view_of_each("report_markdown", &paths, args, Streams::Document);
}

/// The view on each saved result's HTML page (`report --html=-`, the part
/// inside `<div class="view">`): the view model's third renderer. The
/// page's figure is pinned by the figure tests, the whole page of two hosts
/// in tests/html/.
#[test]
fn report_html_view() {
    let paths = saved_results();
    let failed: Vec<&String> = paths
        .iter()
        .filter(|path| {
            catch_unwind(AssertUnwindSafe(|| {
                let args = ["report", "--html=-", path.as_str()];
                let transcript = part_transcript(&args, VIEW_ON_A_PAGE);
                let mut settings = insta::Settings::clone_current();
                settings.set_prepend_module_to_snapshot(false);
                settings.set_omit_expression(true);
                let name = Path::new(path).file_name().unwrap().to_str().unwrap();
                settings.set_snapshot_suffix(name);
                settings.set_input_file(path);
                settings.bind(|| insta::assert_snapshot!("report_html_view", transcript));
            }))
            .is_err()
        })
        .collect();
    assert!(
        failed.is_empty(),
        "report_html_view: {failed:?} differ or are missing"
    );
}

/// Where a page's view is: between the first of these and the second.
const VIEW_ON_A_PAGE: (&str, &str) = ("<div class=\"view\">\n", "</div>\n</article>");

/// The command line and the part of what it printed between `bounds`
/// (the first start, the first end after it): one view of a page, whose
/// other parts other snapshots pin.
fn part_transcript(args: &[&str], (start, end): (&str, &str)) -> String {
    let output = placement_study(args);
    let printed = String::from_utf8(output.stdout).expect("the output is UTF-8");
    let part = printed
        .split_once(start)
        .and_then(|(_, rest)| rest.split_once(end))
        .map_or("no such part in the output", |(part, _)| part);
    format!("$ placement-study {}\n{part}", args.join(" "))
}

/// Snapshot `view`: the part between `bounds` of what `args` printed.
fn assert_part(view: &str, args: &[&str], bounds: (&str, &str)) {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(view, part_transcript(args, bounds)));
}

/// `report` with all the saved results at once: the comparison of their
/// hosts, or with `--fleet` their fleet summary.
fn all_results(view: &str, options: &[&str]) {
    all_results_as(view, options, Streams::Text);
}

fn all_results_as(view: &str, options: &[&str], streams: Streams) {
    let paths = saved_results();
    let mut args = vec!["report"];
    args.extend(options);
    args.extend(paths.iter().map(String::as_str));
    assert_view(view, None, &args, streams);
}

#[test]
fn compare_80() {
    all_results("compare_80", &[]);
}

#[test]
fn compare_wide() {
    all_results("compare_wide", &["--wide"]);
}

#[test]
fn fleet_80() {
    all_results("fleet_80", &["--fleet"]);
}

#[test]
fn fleet_wide() {
    all_results("fleet_wide", &["--fleet", "--wide"]);
}

/// `report` with all the saved results and `options`: the part of what
/// it printed between `bounds`.
fn part_of_all_results(view: &str, options: &[&str], bounds: (&str, &str)) {
    let paths = saved_results();
    let mut args = vec!["report"];
    args.extend(options);
    args.extend(paths.iter().map(String::as_str));
    assert_part(view, &args, bounds);
}

/// The comparison of every saved result on `report A B --markdown`'s page
/// and `--html`'s: the same blocks as `compare_wide`, drawn by the other
/// renderers (each document's own part is pinned by `report_markdown` and
/// `report_html_view`).
#[test]
fn compare_markdown() {
    let bounds = ("## Hosts compared\n\n", "\n## `");
    part_of_all_results("compare_markdown", &["--markdown=-"], bounds);
}

#[test]
fn compare_html_view() {
    let bounds = ("<div class=\"view compared\">\n", "</div>\n</section>");
    part_of_all_results("compare_html_view", &["--html=-"], bounds);
}

/// The fleet summary of every saved result as `report --fleet --markdown`
/// and `--html` write it (the page's view, its style pinned in tests/html/).
#[test]
fn fleet_markdown() {
    all_results_as(
        "fleet_markdown",
        &["--fleet", "--markdown=-"],
        Streams::Document,
    );
}

#[test]
fn fleet_html_view() {
    part_of_all_results("fleet_html_view", &["--fleet", "--html=-"], VIEW_ON_A_PAGE);
}

/// The captured pdsh fleet of `fixtures/fleet/` (see its README), one host
/// of `--hosts` missing: the outliers, the broken and missing hosts and the
/// penalty notes, in the terminal (80 columns), Markdown and HTML.
const PDSH_FLEET: [&str; 4] = [
    "report",
    "--fleet",
    "--hosts=node[1-9]",
    "fixtures/fleet/pdsh.out",
];

#[test]
fn fleet_pdsh_80() {
    assert_view("fleet_pdsh_80", None, &PDSH_FLEET, Streams::Text);
}

#[test]
fn fleet_pdsh_markdown() {
    let args = [&PDSH_FLEET[..], &["--markdown=-"]].concat();
    assert_view("fleet_pdsh_markdown", None, &args, Streams::Document);
}

#[test]
fn fleet_pdsh_html_view() {
    let args = [&PDSH_FLEET[..], &["--html=-"]].concat();
    assert_part("fleet_pdsh_html_view", &args, VIEW_ON_A_PAGE);
}

/// The CSVs of hosts, byte for byte: `report A B --csv` and `report
/// --fleet --csv` (rows of one struct each, the header its field names).
#[test]
fn compare_csv() {
    all_results_as("compare_csv", &["--csv=-"], Streams::Document);
}

#[test]
fn fleet_csv() {
    all_results_as("fleet_csv", &["--fleet", "--csv=-"], Streams::Document);
}

/// `topology` of a machine's snapshot, without CPUID (none is saved for
/// most, and the live CPU's would make the view this host's).
fn topology<'path>(path: &'path str, options: &[&'path str]) -> Vec<&'path str> {
    let mut args = vec!["topology", "--sysfs-root", path, "--no-cpuid"];
    args.extend(options);
    args
}

#[test]
fn topology_80() {
    let paths = machines();
    let args = |path| topology(path, &[]);
    assert_view_of_each("topology_80", &paths, args, Streams::Text);
}

#[test]
fn topology_wide() {
    let paths = machines();
    let args = |path| topology(path, &["--wide"]);
    assert_view_of_each("topology_wide", &paths, args, Streams::Text);
}

#[test]
fn topology_json() {
    let paths = machines();
    let args = |path| topology(path, &["--json", "-"]);
    assert_view_of_each("topology_json", &paths, args, Streams::Document);
}

#[test]
fn topology_csv() {
    let paths = machines();
    let args = |path| topology(path, &["--csv", "-"]);
    assert_view_of_each("topology_csv", &paths, args, Streams::Document);
}
