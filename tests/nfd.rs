//! `--nfd`: every saved fixture that labels a node gives a feature file
//! that node-feature-discovery reads, line by line: comments, one
//! `# +expiry-time=` directive in RFC 3339 UTC, and `PREFIX/name=value`
//! lines whose names and values follow the Kubernetes label syntax. A
//! verdict expires after it was measured, not after it was written: the
//! same old document gives the same, past, expiry every time, and says so.

use crate::common::placement_study;
use std::path::Path;

const PREFIX: &str = "placement-study.feature.node.kubernetes.io/";

/// Kubernetes' label value (and name) syntax: at most 63 characters of
/// alphanumerics, `-`, `_` and `.`, starting and ending with an
/// alphanumeric (a value may also be empty). Written here from the
/// Kubernetes documentation, not taken from the tool.
fn is_label(text: &str, may_be_empty: bool) -> bool {
    if text.is_empty() {
        return may_be_empty;
    }
    let ends = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    text.len() <= 63
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && ends(text.chars().next())
        && ends(text.chars().last())
}

/// `2026-12-15T05:01:55Z`: RFC 3339 in UTC, as NFD parses it.
fn is_rfc3339_utc(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 20
        && bytes.iter().enumerate().all(|(i, &b)| match i {
            4 | 7 => b == b'-',
            10 => b == b'T',
            13 | 16 => b == b':',
            19 => b == b'Z',
            _ => b.is_ascii_digit(),
        })
}

/// The feature file of `report FIXTURE --nfd=-`, or `None` where the
/// fixture labels no node (the one-line refusal checked).
fn feature_file(fixture: &Path) -> Option<String> {
    let output = placement_study(&["report", fixture.to_str().unwrap(), "--nfd=-"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        assert!(
            stderr.contains("none of these documents labels a node"),
            "{}: {stderr}",
            fixture.display()
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        return None;
    }
    Some(String::from_utf8(output.stdout).unwrap())
}

#[test]
fn every_fixture_gives_a_feature_file_nfd_reads() {
    let mut labelled = 0;
    for fixture in crate::figures::fixtures() {
        let Some(file) = feature_file(&fixture) else {
            continue;
        };
        labelled += 1;
        let mut directives = 0;
        let mut labels = 0;
        for line in file.lines() {
            if let Some(expiry) = line.strip_prefix("# +expiry-time=") {
                assert!(is_rfc3339_utc(expiry), "{}: {line}", fixture.display());
                assert_eq!(labels, 0, "the directive comes before the labels");
                directives += 1;
            } else if line.starts_with('#') {
                assert!(!line.starts_with("# +"), "an unknown directive: {line}");
            } else {
                let (key, value) = line.split_once('=').expect("name=value");
                let name = key.strip_prefix(PREFIX).unwrap_or_else(|| panic!("{line}"));
                assert!(
                    is_label(name, false),
                    "{}: name {name:?}",
                    fixture.display()
                );
                assert!(
                    is_label(value, true),
                    "{}: value {value:?}",
                    fixture.display()
                );
                labels += 1;
            }
        }
        assert_eq!(directives, 1, "{}: {file}", fixture.display());
        assert!(labels >= 2, "{}: {file}", fixture.display());
        assert!(file.len() < 64 * 1024);
    }
    assert!(labelled >= 5, "only {labelled} fixtures label a node");
}

/// A gate of December 2026 with the default 8 days expires 8 days after it
/// was measured, whenever it is written: written twice, the same expiry,
/// in the past once that is, with a note on standard error that NFD
/// ignores it.
#[test]
fn an_old_verdict_keeps_its_expiry_and_is_said_to_have_expired() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = "fixtures/results/gate-guest-one-core-split-capped.json";
    let out = dir.path().join("placement-study.features");
    let write = |expiry: &str| {
        placement_study(&[
            "report",
            fixture,
            "--nfd",
            out.to_str().unwrap(),
            "--nfd-expiry",
            expiry,
        ])
    };
    let first = write("1h");
    assert!(first.status.success(), "{first:?}");
    let once = std::fs::read_to_string(&out).unwrap();
    let second = write("1h");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        once,
        "the same bytes"
    );
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(stderr.contains("these labels expired at"), "{stderr}");
    // No temporary file is left beside it for NFD to read.
    let entries: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(entries.len(), 1);
    let refused = write("0.5h");
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
}

/// `gate --nfd -` labels the node as it measured it, and `--exit-zero`
/// turns the verdict's status into 0 (the init container's rule), while a
/// bad option still fails with 2.
#[test]
fn gate_writes_its_labels_and_exit_zero_keeps_errors() {
    let machine = "fixtures/sysfs/kvm-guest-2cpu";
    let args = |extra: &[&'static str]| {
        let mut args = vec!["gate", "--sysfs-root", machine, "--no-cpuid", "--nfd", "-"];
        args.extend_from_slice(extra);
        args
    };
    let labelled = placement_study(&args(&[]));
    assert_eq!(labelled.status.code(), Some(4), "no-smt's own status");
    let file = String::from_utf8(labelled.stdout).unwrap();
    assert!(
        file.contains(&format!("{PREFIX}smt.measured=no-smt\n")),
        "{file}"
    );
    assert!(
        !file.contains("smt.penalty-pct"),
        "no penalty was measured: {file}"
    );
    let zero = placement_study(&args(&["--exit-zero"]));
    assert_eq!(zero.status.code(), Some(0));
    let refused = placement_study(&args(&["--exit-zero", "--nfd-expiry", "100d"]));
    assert_eq!(refused.status.code(), Some(2));
}
