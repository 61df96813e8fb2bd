//! `--prom`: every kind's exposition, rendered from the saved results in
//! `fixtures/results/` (and, from each gate result, the metrics of a run
//! that stopped at that gate), is what node_exporter's textfile collector
//! reads: every sample's metric has its HELP and TYPE before it, each
//! family's lines stay together, names are `placement_study_…`, no series
//! is written twice, no label changes a unit, every median comes with its
//! spread and repetitions, a run's file keeps its kind whatever its gate
//! said, and the files of different kinds can share one textfile folder.
//!
//! The ignored test hands each exposition to `promtool check metrics`
//! (Debian package `prometheus`), which parses and lints it; `.ci/run` runs
//! it with `cargo test --test tests prom:: -- --ignored`.

use placement_study::report::{self, prom};
use placement_study::saved::{self, SavedDocument};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// One rendered file: the saved result it came from, its kind, its text.
struct Rendered {
    name: String,
    kind: &'static str,
    text: String,
}

/// The saved results in `fixtures/results/`, sorted by name.
fn fixture_paths() -> Vec<PathBuf> {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/results");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
}

/// Every saved result in `fixtures/results/`, rendered, then for each gate
/// result the metrics of a run that stopped at it; every kind must be
/// among them.
fn rendered() -> Vec<Rendered> {
    let mut all = Vec::new();
    let mut stopped_runs = Vec::new();
    for path in fixture_paths() {
        let document = saved::load(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if let SavedDocument::Gate(gate) = &document {
            stopped_runs.push(Rendered {
                name: format!("a run stopped at {name}"),
                kind: "run",
                text: prom::run_stopped_at_gate(gate),
            });
        }
        let kind: &'static str = document.head().kind.into();
        all.push(Rendered {
            name,
            kind,
            text: report::document::of(&document).metrics(),
        });
    }
    all.extend(stopped_runs);
    let kinds: BTreeSet<&str> = all.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        BTreeSet::from([
            "command", "gate", "hybrid", "latency", "memory", "observe", "pairs", "run", "sweep",
            "topology"
        ]),
        "fixtures/results/ must hold a result of every kind"
    );
    all
}

/// What a file declares and writes, checked line by line.
#[derive(Default)]
struct Exposition {
    help: BTreeMap<String, String>,
    types: BTreeMap<String, String>,
    /// Each sample's series, `name{labels}` as written, with its value.
    samples: Vec<(String, f64)>,
    /// Each family's label names.
    labels: BTreeMap<String, Vec<String>>,
}

/// `^placement_study_[a-z_]+$`.
fn is_metric_name(name: &str) -> bool {
    name.strip_prefix("placement_study_").is_some_and(|rest| {
        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_lowercase() || c == '_')
    })
}

/// The label names of `{a="…",b="…"}` (escapes honoured), checking the
/// syntax on the way.
fn label_names(labels: &str, line: &str) -> Vec<String> {
    let inner = labels
        .strip_prefix('{')
        .and_then(|l| l.strip_suffix('}'))
        .unwrap_or_else(|| panic!("labels not in braces: {line}"));
    let mut names = Vec::new();
    let mut rest = inner;
    while !rest.is_empty() {
        let (name, after) = rest
            .split_once("=\"")
            .unwrap_or_else(|| panic!("a label without =\"…\": {line}"));
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
            "label name {name:?}: {line}"
        );
        names.push(name.to_string());
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next() {
                Some((_, '\\')) => {
                    let escaped = chars.next().map(|(_, c)| c);
                    assert!(
                        matches!(escaped, Some('\\' | '"' | 'n')),
                        "bad escape in {line}"
                    );
                }
                Some((i, '"')) => break i,
                Some((_, c)) => assert!(c != '\n', "raw newline in {line}"),
                None => panic!("unterminated label value: {line}"),
            }
        };
        rest = &after[end + 1..];
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
    names
}

/// Parses `text`, asserting the format's rules on every line.
fn parse(name: &str, text: &str) -> Exposition {
    assert!(text.ends_with('\n'), "{name}: no final newline");
    let mut exposition = Exposition::default();
    let mut finished: BTreeSet<String> = BTreeSet::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let family = if let Some(rest) = line.strip_prefix("# HELP ") {
            let (metric, help) = rest.split_once(' ').unwrap();
            assert!(!help.is_empty(), "{name}: empty HELP for {metric}");
            assert!(
                !help.contains("  "),
                "{name}: a run of spaces in {metric}'s HELP"
            );
            assert!(
                exposition
                    .help
                    .insert(metric.to_string(), help.to_string())
                    .is_none(),
                "{name}: a second HELP for {metric}"
            );
            metric.to_string()
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (metric, kind) = rest.split_once(' ').unwrap();
            assert_eq!(kind, "gauge", "{name}: {metric} is not a gauge");
            assert!(
                exposition.help.contains_key(metric),
                "{name}: TYPE before HELP for {metric}"
            );
            assert!(
                exposition
                    .types
                    .insert(metric.to_string(), kind.to_string())
                    .is_none(),
                "{name}: a second TYPE for {metric}"
            );
            metric.to_string()
        } else {
            assert!(!line.starts_with('#'), "{name}: stray comment {line}");
            let (series, value) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("{name}: no value: {line}"));
            let value: f64 = value
                .parse()
                .unwrap_or_else(|e| panic!("{name}: value of {line}: {e}"));
            assert!(value.is_finite(), "{name}: {line}");
            let (metric, labels) = series.split_at(series.find('{').unwrap_or(series.len()));
            assert!(
                exposition.types.contains_key(metric),
                "{name}: {metric} has no HELP and TYPE before its sample"
            );
            let names = if labels.is_empty() {
                Vec::new()
            } else {
                label_names(labels, line)
            };
            let earlier = exposition
                .labels
                .entry(metric.to_string())
                .or_insert_with(|| names.clone());
            assert_eq!(*earlier, names, "{name}: {metric}'s label names vary");
            if metric.ends_with("_info") {
                assert_eq!(value, 1.0, "{name}: {line}");
            }
            exposition.samples.push((series.to_string(), value));
            metric.to_string()
        };
        assert!(is_metric_name(&family), "{name}: metric name {family}");
        if current.as_ref() != Some(&family) {
            assert!(
                !finished.contains(&family),
                "{name}: {family}'s lines are not together"
            );
            finished.extend(current.replace(family));
        }
    }
    for metric in exposition.help.keys() {
        assert!(
            exposition.samples.iter().any(|(s, _)| {
                s.strip_prefix(metric.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('{'))
            }),
            "{name}: {metric} has no sample"
        );
    }
    exposition
}

#[test]
fn every_kind_is_well_formed() {
    for file in rendered() {
        let exposition = parse(&file.name, &file.text);
        let mut seen = BTreeSet::new();
        for (series, _) in &exposition.samples {
            assert!(seen.insert(series), "{}: {series} twice", file.name);
        }
        let info = format!("placement_study_info{{kind=\"{}\",", file.kind);
        assert!(
            exposition.samples.iter().any(|(s, _)| s.starts_with(&info)),
            "{}: no {info}…}}",
            file.name
        );
    }
}

/// The series of `exposition`'s family `metric`, each as its labels (the
/// part in braces, empty for none).
fn series_labels<'e>(exposition: &'e Exposition, metric: &str) -> BTreeSet<&'e str> {
    exposition
        .samples
        .iter()
        .filter_map(|(series, _)| {
            let labels = series.strip_prefix(metric)?;
            (labels.is_empty() || labels.starts_with('{')).then_some(labels)
        })
        .collect()
}

/// A unit is in a metric's name, never in a label: only `_info` metrics
/// say which clock (a cost on another clock is another name).
#[test]
fn no_label_changes_a_unit() {
    for file in rendered() {
        let exposition = parse(&file.name, &file.text);
        for (metric, names) in &exposition.labels {
            assert!(
                metric.ends_with("_info") || !names.iter().any(|n| n == "clock"),
                "{}: {metric} has a clock label; put the unit in the name",
                file.name
            );
        }
    }
}

/// A median's CV and repetitions come in threes: for every
/// `{stem}_cv_ratio` a `{stem}_repetitions` and one median `{stem}_{unit}`,
/// each with the same series.
#[test]
fn every_spread_has_its_median_and_repetitions() {
    for file in rendered() {
        let exposition = parse(&file.name, &file.text);
        for cv in exposition.help.keys() {
            let Some(stem) = cv.strip_suffix("_cv_ratio") else {
                continue;
            };
            let series = series_labels(&exposition, cv);
            let repetitions = format!("{stem}_repetitions");
            assert_eq!(
                series_labels(&exposition, &repetitions),
                series,
                "{}: {repetitions}",
                file.name
            );
            let medians: Vec<&String> = exposition
                .help
                .keys()
                .filter(|m| {
                    m.strip_prefix(stem)
                        .is_some_and(|unit| unit.starts_with('_') && *m != cv && **m != repetitions)
                })
                .collect();
            assert_eq!(
                medians.len(),
                1,
                "{}: medians of {stem}: {medians:?}",
                file.name
            );
            assert_eq!(
                series_labels(&exposition, medians[0]),
                series,
                "{}: {}",
                file.name,
                medians[0]
            );
        }
    }
}

/// Whatever the gate said, a run's file is run metrics: the same HELP for
/// every family the files share, no other kind's family, and the families
/// that say why no arm was measured.
#[test]
fn a_run_keeps_its_kind_whatever_its_gate_said() {
    let runs: Vec<Rendered> = rendered().into_iter().filter(|r| r.kind == "run").collect();
    assert!(runs.iter().any(|r| r.name.starts_with("a run stopped at")));
    let mut help: BTreeMap<String, (String, String)> = BTreeMap::new();
    for file in &runs {
        let exposition = parse(&file.name, &file.text);
        for (metric, text) in &exposition.help {
            assert!(
                !metric.starts_with("placement_study_gate_"),
                "{}: {metric}",
                file.name
            );
            if let Some((other, earlier)) = help.get(metric) {
                assert_eq!(
                    earlier, text,
                    "{metric}: HELP differs between {other} and {}",
                    file.name
                );
            }
            help.insert(metric.clone(), (file.name.clone(), text.clone()));
        }
        let kinds: BTreeSet<&str> = exposition
            .samples
            .iter()
            .filter_map(|(series, _)| series.split_once("kind=\"")?.1.split_once('"'))
            .map(|(kind, _)| kind)
            .collect();
        assert_eq!(kinds, BTreeSet::from(["run"]), "{}", file.name);
        for metric in [
            "placement_study_run_info",
            "placement_study_run_gate_verdict",
            "placement_study_run_stopped_at_gate",
            "placement_study_run_gated",
        ] {
            assert!(
                !series_labels(&exposition, metric).is_empty(),
                "{}: no {metric}",
                file.name
            );
        }
    }
}

/// `report FILE --prom OUT` writes what the command that saved FILE wrote
/// (the rendering the tests above check), whole: no temporary file is left
/// in the folder.
#[test]
fn report_writes_each_saved_result_as_its_command_did() {
    let folder = tempfile::tempdir().unwrap();
    for path in fixture_paths() {
        let out = folder.path().join("placement-study.prom");
        let output = placement_study(&[
            "report".as_ref(),
            path.as_os_str(),
            "--prom".as_ref(),
            out.as_os_str(),
        ]);
        assert!(output.status.success(), "{}: {output:?}", path.display());
        let written = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            written,
            report::document::of(&saved::load(&path).unwrap()).metrics(),
            "{}",
            path.display()
        );
        let names: Vec<_> = std::fs::read_dir(folder.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["placement-study.prom"], "{}", path.display());
    }
}

/// A textfile folder is one host's: `report --prom` of several hosts'
/// files is refused with a one-line error (exit 2), and nothing is written.
#[test]
fn report_refuses_several_files_with_prom() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("hosts.prom");
    let paths = fixture_paths();
    let output = placement_study(&[
        "report".as_ref(),
        paths[0].as_os_str(),
        paths[1].as_os_str(),
        "--prom".as_ref(),
        out.as_os_str(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--prom"), "{stderr}");
    assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 0);
}

/// A health check: `gate -q` prints the verdict word and still writes its
/// metrics file; `--prom -` would share standard output with the word, so
/// it is a usage error. The saved no-SMT machine gives its verdict without
/// measuring.
#[test]
fn a_quiet_gate_writes_its_metrics_beside_the_verdict_word() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("gate.prom");
    let machine = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/sysfs/kvm-guest-2cpu");
    let gate = |prom: &OsStr| {
        placement_study(&[
            "gate".as_ref(),
            "-q".as_ref(),
            "--sysfs-root".as_ref(),
            machine.as_os_str(),
            "--prom".as_ref(),
            prom,
        ])
    };
    let output = gate(out.as_os_str());
    assert_eq!(output.status.code(), Some(4));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "no-smt\n");
    let text = std::fs::read_to_string(&out).unwrap();
    let exposition = parse("gate.prom", &text);
    assert!(!exposition.samples.is_empty());
    assert!(text.contains("placement_study_gate_verdict{verdict=\"no-smt\"} 1\n"));
    let output = gate("-".as_ref());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(output.stdout.is_empty());
}

/// The binary with `args`, standard input empty.
fn placement_study(args: &[&OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// One file per kind in one textfile folder: a family two files write must
/// have the same HELP and TYPE in both (node_exporter refuses it
/// otherwise), and no series may be in both. The run's file is each run
/// rendered in turn, a run stopped at its gate too.
#[test]
fn one_file_per_kind_can_share_a_textfile_folder() {
    let (runs, others): (Vec<Rendered>, Vec<Rendered>) =
        rendered().into_iter().partition(|r| r.kind == "run");
    let mut one_per_kind: BTreeMap<&str, Rendered> = BTreeMap::new();
    for file in others {
        one_per_kind.entry(file.kind).or_insert(file);
    }
    for run in &runs {
        let mut help: BTreeMap<String, (String, String)> = BTreeMap::new();
        let mut series: BTreeMap<String, String> = BTreeMap::new();
        for file in one_per_kind.values().chain([run]) {
            let exposition = parse(&file.name, &file.text);
            for (metric, text) in exposition.help {
                if let Some((other, earlier)) = help.get(&metric) {
                    assert_eq!(
                        earlier, &text,
                        "{metric}: HELP differs between {other} and {}",
                        file.name
                    );
                }
                help.insert(metric, (file.name.clone(), text));
            }
            for (sample, _) in exposition.samples {
                if let Some(other) = series.insert(sample.clone(), file.name.clone()) {
                    panic!("{sample} is in both {other} and {}", file.name);
                }
            }
        }
    }
}

#[test]
#[ignore = "needs promtool (Debian package prometheus); .ci/run runs it"]
fn promtool_accepts_every_kind() {
    for file in rendered() {
        let mut child = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot run promtool ({e}): install it with `apt-get install prometheus`")
            });
        child
            .stdin
            .take()
            .unwrap()
            .write_all(file.text.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "promtool check metrics refused the exposition of {} ({}):\n{}{}\n--- the exposition:\n{}",
            file.name,
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            file.text
        );
    }
}
