//! `--nfd FILE`: the measured verdicts as a node-feature-discovery feature
//! file, so a Kubernetes scheduler can select nodes by what was measured
//! rather than by what sysfs publishes (the CPU manager's `full-pcpus-only`
//! trusts the published sibling map; NFD's own SMT label only checks that
//! sibling lists exist).
//!
//! The file follows NFD's local feature source (its `features.d` folder):
//! `#` comment lines, one `name=value` line per label, and the
//! `# +expiry-time=RFC3339` directive before them, after which NFD ignores
//! the labels. Every label is under [`PREFIX`], a subdomain of
//! `feature.node.kubernetes.io`, which NFD accepts without configuration,
//! and every value is a Kubernetes label value (at most 63 characters,
//! alphanumerics, `-`, `_` and `.`, starting and ending with an
//! alphanumeric), checked here before anything is written.
//!
//! A verdict expires [`Expiry`] after it was measured (the document's
//! start), not after it was written: re-exporting an old document never
//! makes a stale verdict fresh again, and the same documents always give
//! the same bytes. An inconclusive study labels itself inconclusive, and a
//! number that did not decide a verdict (a penalty of an inconclusive gate)
//! is left out: the file says what was measured, never a guess. The file
//! is written atomically (a dot-file beside it, then a rename: NFD ignores
//! dot-files and may read the folder at any moment).

use crate::escape::escape_controls;
use crate::judge::gate::Verdict;
use crate::judge::hybrid::ClassVerdict;
use crate::judge::pairs::{MapVerdict, PairRelation};
use crate::saved::{
    DocumentHead, GateResult, HybridResult, LatencyResult, MemoryResult, PairsResult,
    TopologyResult,
};
use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Every label's namespace: the project's own subdomain of the namespace
/// NFD allows by default.
pub const PREFIX: &str = "placement-study.feature.node.kubernetes.io";

/// The longest label value (and name) Kubernetes allows.
const LONGEST: usize = 63;

/// NFD ignores a feature file over 64 KiB.
const NFD_FILE_CAP: usize = 64 * 1024;

/// How long a verdict is trusted after it was measured: by default a
/// week and a day, the weekly timer's period with a day's slack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expiry {
    pub seconds: u64,
}

impl Default for Expiry {
    fn default() -> Expiry {
        Expiry {
            seconds: 8 * 24 * 3600,
        }
    }
}

/// One node label: its name below [`PREFIX`] and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeLabel {
    pub name: &'static str,
    pub value: String,
}

impl NodeLabel {
    fn new(name: &'static str, value: impl Into<String>) -> NodeLabel {
        NodeLabel {
            name,
            value: value.into(),
        }
    }
}

/// The labels a document gives its node: each kind's measured verdicts
/// (none for studies of a workload, which say nothing about the node).
pub trait NodeLabels {
    /// None by default: a study of the tool's kernel or of a command
    /// measures the work, not the node.
    fn node_labels(&self) -> Vec<NodeLabel> {
        Vec::new()
    }
}

impl NodeLabels for GateResult {
    fn node_labels(&self) -> Vec<NodeLabel> {
        let mut labels = vec![NodeLabel::new("smt.measured", self.verdict.as_str())];
        // The penalty is a fact only where it decided the verdict.
        if let (Verdict::Physical | Verdict::Virtual, Some(penalty)) = (self.verdict, self.penalty)
        {
            labels.push(NodeLabel::new("smt.penalty-pct", signed(penalty * 100.0)));
        }
        labels
    }
}

impl NodeLabels for PairsResult {
    fn node_labels(&self) -> Vec<NodeLabel> {
        let mut labels = vec![NodeLabel::new("siblings.measured", self.verdict.as_str())];
        if self.verdict != MapVerdict::Inconclusive && self.map.published_unknown.is_none() {
            let count = |relation: PairRelation| {
                let pairs = self.map.pairs.iter().filter(|p| p.relation == relation);
                pairs.count().to_string()
            };
            labels.push(NodeLabel::new("siblings.fake", count(PairRelation::Fake)));
            labels.push(NodeLabel::new(
                "siblings.hidden",
                count(PairRelation::Hidden),
            ));
        }
        labels
    }
}

impl NodeLabels for LatencyResult {
    fn node_labels(&self) -> Vec<NodeLabel> {
        vec![NodeLabel::new(
            "cache-domains.measured",
            self.verdict.as_str(),
        )]
    }
}

impl NodeLabels for HybridResult {
    fn node_labels(&self) -> Vec<NodeLabel> {
        let judgement = &self.judged.class_judgement;
        // An invalid study decided nothing about the classes.
        if !self.judged.valid {
            return vec![NodeLabel::new(
                "core-classes.measured",
                ClassVerdict::Inconclusive.as_str(),
            )];
        }
        let mut labels = vec![NodeLabel::new(
            "core-classes.measured",
            judgement.verdict.as_str(),
        )];
        if judgement.verdict != ClassVerdict::Inconclusive {
            labels.push(NodeLabel::new(
                "core-classes.count",
                judgement.measured.len().to_string(),
            ));
        }
        labels
    }
}

/// The caches and the NUMA distances, each as measured against what the
/// machine publishes.
impl NodeLabels for MemoryResult {
    fn node_labels(&self) -> Vec<NodeLabel> {
        vec![
            NodeLabel::new("caches.measured", self.caches_verdict().as_str()),
            NodeLabel::new("numa.distances", self.numa_judgement.verdict.as_str()),
        ]
    }
}

/// What the machine publishes, labelled as published: nothing here is
/// measured, so no label of it says "measured".
impl NodeLabels for TopologyResult {
    fn node_labels(&self) -> Vec<NodeLabel> {
        let summary = &self.summary;
        let mut labels = vec![
            NodeLabel::new("smt.published", summary.smt_word()),
            NodeLabel::new("core-classes.published", summary.core_classes.to_string()),
            NodeLabel::new("numa.nodes", self.nodes.len().to_string()),
        ];
        if let Some(vendor) = &summary.hypervisor_vendor {
            labels.push(NodeLabel::new("hypervisor", slug(vendor)));
        }
        labels
    }
}

/// "12.3", or "minus-1.7" for a negative number (a label value cannot
/// start with "-").
fn signed(value: f64) -> String {
    let text = format!("{:.1}", value.abs());
    if value < 0.0 && text != "0.0" {
        format!("minus-{text}")
    } else {
        text
    }
}

/// `text` as a label value: lower case, each run of anything but
/// alphanumerics, `-`, `_` and `.` one `-`, trimmed to alphanumerics at
/// both ends and to [`LONGEST`] characters ("Microsoft Hyper-V" →
/// "microsoft-hyper-v").
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            c if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') => {
                out.push(c.to_ascii_lowercase())
            }
            _ if !out.ends_with('-') => out.push('-'),
            _ => {}
        }
    }
    out.truncate(LONGEST);
    out.trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string()
}

/// Is `value` a Kubernetes label value? Empty, or at most 63 characters of
/// alphanumerics, `-`, `_` and `.` that start and end with an alphanumeric.
pub fn is_label_value(value: &str) -> bool {
    value.is_empty()
        || (value.len() <= LONGEST
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && value.starts_with(|c: char| c.is_ascii_alphanumeric())
            && value.ends_with(|c: char| c.is_ascii_alphanumeric()))
}

/// A feature file's text, and when its labels expire (Unix seconds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureFile {
    pub text: String,
    pub expires_unix: u64,
}

/// A document's labels, with its head and where it came from (for errors).
pub struct Labelled<'a> {
    pub file: &'a str,
    pub head: &'a DocumentHead,
    pub labels: Vec<NodeLabel>,
}

/// The feature file of `documents` (each named by `file` in errors),
/// expiring `expiry` after the earliest of them was measured. Refused, in
/// one line, where no document labels its node, where the documents are
/// of two hosts (a file labels one node), where two documents say
/// different things of one label (two gates of one node), or where a
/// document does not say when it was measured.
pub fn feature_file(documents: Vec<Labelled<'_>>, expiry: Expiry) -> Result<FeatureFile> {
    let mut labels: BTreeMap<&'static str, (String, &str)> = BTreeMap::new();
    let mut measured = Vec::new();
    let mut host: Option<(&str, &str)> = None;
    for Labelled {
        file,
        head,
        labels: own,
    } in documents
    {
        if own.is_empty() {
            continue;
        }
        let this = head.host.as_str();
        match host {
            Some((first, other)) if first != this => bail!(
                "--nfd: {other} is of host {} and {file} of host {}: a feature file labels one \
                 node; write each host's from its own documents",
                escape_controls(first),
                escape_controls(this)
            ),
            _ => host = Some((this, file)),
        }
        let Some(started) = head.started_unix else {
            bail!(
                "--nfd: {file} does not say when it was measured, so its labels could not \
                 expire; measure it again with this version"
            );
        };
        measured.push(started);
        for label in own {
            debug_assert!(is_label_value(&label.value), "{label:?}");
            match labels.get(label.name) {
                Some((value, other)) if *value != label.value => bail!(
                    "--nfd: {other} and {file} disagree on {}: {value} and {}; give one \
                     document of each kind for a node",
                    label.name,
                    label.value
                ),
                _ => {
                    labels.insert(label.name, (label.value, file));
                }
            }
        }
    }
    let Some(&earliest) = measured.iter().min() else {
        bail!(
            "--nfd: none of these documents labels a node; give gate, pairs, latency, hybrid or \
             topology documents (a run measures the work, not the node)"
        );
    };
    let mut out = String::from(
        "# placement-study: what was measured on this node (`man placement-study`, NODE \
         LABELS)\n",
    );
    let expires_unix = earliest.saturating_add(expiry.seconds);
    let _ = writeln!(out, "# +expiry-time={}", rfc3339(expires_unix));
    let tool = slug(env!("CARGO_PKG_VERSION"));
    labels.insert("tool-version", (tool, "this build"));
    for (name, (value, _)) in &labels {
        let _ = writeln!(out, "{PREFIX}/{name}={value}");
    }
    if out.len() > NFD_FILE_CAP {
        bail!("--nfd: the feature file would be over NFD's 64 KiB; give fewer documents");
    }
    Ok(FeatureFile {
        text: out,
        expires_unix,
    })
}

/// The line said where a feature file's labels have already expired when
/// it is written (`now`, Unix seconds): NFD ignores them, and the tool does
/// not make them fresh by writing them again.
pub fn expired_note(file: &FeatureFile, now: u64) -> Option<String> {
    (file.expires_unix <= now).then(|| {
        format!(
            "--nfd: these labels expired at {} (the study is older than its --nfd-expiry); \
             NFD ignores them: measure the node again",
            rfc3339(file.expires_unix)
        )
    })
}

/// `unix` seconds as RFC 3339 in UTC ("2026-12-15T05:01:55Z"), as NFD's
/// `time.Parse(time.RFC3339, …)` reads it.
fn rfc3339(unix: u64) -> String {
    let days = unix / 86_400;
    let seconds = unix % 86_400;
    // Howard Hinnant's days-to-civil, for the proleptic Gregorian calendar.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_follow_kubernetes_syntax() {
        for good in [
            "",
            "physical",
            "no-smt",
            "12.3",
            "minus-1.7",
            "0.1.0",
            "a_b",
        ] {
            assert!(is_label_value(good), "{good}");
        }
        for bad in ["-1.7", "a b", "x.", "é", &"a".repeat(64), "a/b", "a=b"] {
            assert!(!is_label_value(bad), "{bad}");
        }
        assert_eq!(signed(-1.74), "minus-1.7");
        assert_eq!(signed(-0.01), "0.0");
        assert_eq!(signed(12.34), "12.3");
        assert_eq!(slug("Microsoft Hyper-V"), "microsoft-hyper-v");
        assert_eq!(slug("QEMU TCG"), "qemu-tcg");
        assert!(is_label_value(&slug(&"(x)".repeat(40))));
    }

    #[test]
    fn rfc3339_is_utc_calendar_time() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_619_715), "2026-12-07T05:01:55Z");
    }
}
