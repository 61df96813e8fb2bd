//! `--prom`: every kind's exposition, rendered from the saved results in
//! `fixtures/results/`, is what node_exporter's textfile collector reads:
//! every sample's metric has its HELP and TYPE before it, each family's
//! lines stay together, names are `placement_study_…`, no series is written
//! twice, and the files of different kinds can share one textfile folder.
//!
//! The ignored test hands each exposition to `promtool check metrics`
//! (Debian package `prometheus`), which parses and lints it; `.ci/run` runs
//! it with `cargo test --test prom -- --ignored`.

use placement_study::report::prom;
use placement_study::saved::{self, SavedDocument};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// One rendered file: the saved result it came from, its kind, its text.
struct Rendered {
    name: String,
    kind: &'static str,
    text: String,
}

/// Every saved result in `fixtures/results/`, rendered; every kind must be
/// among them.
fn rendered() -> Vec<Rendered> {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/results");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let all: Vec<Rendered> = paths
        .iter()
        .map(|path| {
            let document = saved::load(path).unwrap();
            let kind = match &document {
                SavedDocument::Gate(_) => "gate",
                SavedDocument::Run(_) => "run",
                SavedDocument::Pairs(_) => "pairs",
                SavedDocument::Hybrid(_) => "hybrid",
                SavedDocument::Observe(_) => "observe",
            };
            Rendered {
                name: path.file_name().unwrap().to_string_lossy().into_owned(),
                kind,
                text: prom::document(&document),
            }
        })
        .collect();
    let kinds: BTreeSet<&str> = all.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        BTreeSet::from(["gate", "hybrid", "observe", "pairs", "run"]),
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
    let mut label_sets: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines() {
        let family = if let Some(rest) = line.strip_prefix("# HELP ") {
            let (metric, help) = rest.split_once(' ').unwrap();
            assert!(!help.is_empty(), "{name}: empty HELP for {metric}");
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
            let earlier = label_sets
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

/// One file per kind in one textfile folder: a family two files write must
/// have the same HELP and TYPE in both (node_exporter refuses it
/// otherwise), and no series may be in both.
#[test]
fn one_file_per_kind_can_share_a_textfile_folder() {
    let mut one_per_kind: BTreeMap<&str, Rendered> = BTreeMap::new();
    for file in rendered() {
        one_per_kind.entry(file.kind).or_insert(file);
    }
    let mut help: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut series: BTreeMap<String, String> = BTreeMap::new();
    for file in one_per_kind.values() {
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
