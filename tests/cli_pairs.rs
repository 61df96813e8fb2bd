//! `pairs` and `report` on its saved results, from the command line: usage
//! errors before anything is measured, the one-CPU error, a short live
//! search on this machine, and the saved guest results in
//! `fixtures/results/` re-rendered and compared side by side.

use std::process::{Command, Output, Stdio};

fn placement_study(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

fn fixture(name: &str) -> String {
    format!("{}/fixtures/results/{name}", env!("CARGO_MANIFEST_DIR"))
}

const CROSSED: &str = "pairs-guest-crossed-siblings.json";
const HIDDEN: &str = "pairs-guest-hidden-siblings.json";

#[test]
fn a_bad_time_budget_is_a_usage_error_naming_the_fix() {
    for (budget, expected) in [
        ("0", "--time-budget 0: out of range; use 1 s to 604800 s"),
        (
            "5x",
            "--time-budget 5x: unknown unit 'x'; write seconds like 90, or 90s, 5m, 1h",
        ),
        ("soon", "--time-budget soon: unknown unit 'soon'"),
        (
            "-3m",
            "--time-budget -3m: must be a positive duration such as 90s",
        ),
    ] {
        // Attached with "=": clap would read "-3m" as an option.
        let output = placement_study(&["pairs", &format!("--time-budget={budget}")]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{budget}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{budget}: {stderr}");
    }
}

#[test]
fn one_allowed_cpu_is_an_error_saying_how_to_widen_it() {
    let output = Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_placement-study"), "pairs"])
        .stdin(Stdio::null())
        .output();
    let Ok(output) = output else {
        eprintln!("skipping: no taskset here");
        return;
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("pairs needs at least two CPUs to compare")
            && stderr.contains("widen its CPU affinity"),
        "{stderr}"
    );
}

#[test]
fn a_short_live_search_prints_its_verdict_word_and_exit_status() {
    let output = placement_study(&[
        "pairs",
        "-q",
        "--rep-ms",
        "5",
        "--warmups",
        "0",
        "--min-reps",
        "3",
        "--max-reps",
        "3",
    ]);
    if String::from_utf8_lossy(&output.stderr).contains("needs at least two CPUs") {
        eprintln!("skipping: fewer than two CPUs allowed here");
        return;
    }
    let verdict = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let expected = match verdict.as_str() {
        "agree" => 0,
        "differ" => 3,
        "inconclusive" => 5,
        other => panic!("not a verdict word: {other:?}"),
    };
    assert_eq!(output.status.code(), Some(expected), "{verdict}");
}

#[test]
fn report_re_renders_a_saved_search() {
    let output = placement_study(&["report", &fixture(CROSSED)]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    for expected in [
        "Measured 0,2 / 1,3, published 0-1 / 2-3: the maps differ",
        "verdict: differ (exit 3)",
        "fake and hidden siblings",
        "All pairs: 6 comparisons",
        "control (both workers on CPU 0): passed",
    ] {
        assert!(text.contains(expected), "no {expected:?} in\n{text}");
    }
}

#[test]
fn report_csv_of_a_saved_search_has_one_row_per_comparison() {
    let output = placement_study(&["report", &fixture(CROSSED), "--csv"]);
    let csv = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("comparison,probe,against,outcome,penalty"));
    assert_eq!(lines.len(), 1 + 6, "{csv}");
    assert!(lines[1].starts_with("1,0,\"1\","), "{csv}");
}

#[test]
fn report_compares_saved_searches_side_by_side() {
    let output = placement_study(&["report", &fixture(CROSSED), &fixture(HIDDEN)]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("sibling map"), "{text}");
    assert!(
        text.contains("differ: measured 0,2 / 1,3, published 0-1 / 2-3"),
        "{text}"
    );
    assert!(
        text.contains("differ: measured 0-1, published 0 / 1"),
        "{text}"
    );
    let csv = placement_study(&["report", &fixture(CROSSED), &fixture(HIDDEN), "--csv"]);
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with("map_verdict,published_map,measured_map")
    );
    assert!(csv.contains(",differ,\"0-1 / 2-3\",\"0,2 / 1,3\""), "{csv}");
}
