//! `--prom FILE`: a result as Prometheus metrics, in the text exposition
//! format node_exporter's textfile collector reads (a `*.prom` file in its
//! `--collector.textfile.directory`), one function per document kind, each
//! returning the whole file.
//!
//! The conventions every kind follows:
//!
//! * Names start `placement_study_` and end in their unit: a base unit
//!   (`_seconds`, `_ratio`, `_bytes_per_second`, `_hertz`,
//!   `_seconds_per_byte`), `_cycles_per_byte` (core cycles have no base
//!   unit), or a plain count. No label changes a unit: a cost on another
//!   clock is another name. Every metric is a gauge: a file describes one
//!   result, and nothing in it only ever goes up.
//! * Metadata are labels of `_info` gauges whose value is 1. Labels have low
//!   cardinality: kind, arm, core class, check, verdict state, and (in
//!   `_info` only) clock. Never a repetition, PID, thread, command line or
//!   path.
//! * A median over repetitions comes as three families, `…{unit}`,
//!   `…_cv_ratio` and `…_repetitions` (`Exposition::spread`), wherever the
//!   document keeps its spread.
//! * A verdict is also a state set (`…_verdict{verdict="…"}`, 1 for the
//!   verdict, 0 for every other), as a check is (`…_check_status`), so an
//!   alert matches `== 1`, and a series does not vanish when it changes.
//! * A value the document does not have (no interval after too few
//!   repetitions, no cycles without a PMU) is left out: never NaN, never a
//!   made-up zero.
//! * A number that failed its validity bar stays marked: it sits next to
//!   the gauges that say so (`placement_study_run_valid`, `…_quotable`,
//!   `…_check_status`), which a query joins on before quoting it.
//! * A command writes its own kind whatever its verdict: a run stopped at
//!   its gate writes run metrics ([`run_stopped_at_gate`]), so a file's
//!   series never change kind from one run to the next.
//! * The metrics every kind writes carry a `kind` label and the same HELP
//!   text, so one textfile folder can hold one file per kind without two
//!   files writing one series (node_exporter refuses a scrape that does).
//!   A folder is one host's: beyond `placement_study_info`'s `host`
//!   label, only the scrape's `instance` tells two hosts' series apart.
//!
//! The writer is here: `Exposition` builds an exposition family by family
//! and escapes label values and HELP, and `common` writes the head every
//! kind starts with. Each kind's own metrics are in a module of their own
//! (`gate`, `run`, `pairs`, `latency`, `hybrid`, `observe`, …), each the
//! `Metrics` of its document.

use crate::judge::batches::HostNoise;
use crate::judge::checks::{Check, CheckStatus};
use crate::judge::hybrid::Ratio;
use crate::judge::stats::Spread;
use crate::saved::{DocumentHead, DocumentKind, Headed};
use std::fmt::Write;
use strum::VariantArray;

/// `--prom`: node_exporter textfile metrics; each kind's in
/// `report::prom::<kind>`.
pub trait Metrics: Headed {
    /// The head every kind writes (CPUs, cores, packages, classes, SMT,
    /// with the `_info` labels), and nothing else by default: what a
    /// document that measures nothing of its own (a topology) exposes.
    fn metrics(&self) -> String {
        common(self.head().kind, self.head()).render()
    }
}

mod baseline;
mod command;
mod gate;
mod hybrid;
mod latency;
mod memory;
mod observe;
mod pairs;
mod run;
mod sweep;
#[cfg(test)]
mod tests;

pub use baseline::baseline;
pub use run::run_stopped_at_gate;

/// Every state of a state set, in declaration order, each spelled as the
/// saved files spell it (serde's and strum's one kebab-case name).
fn states<E: VariantArray + Copy + Into<&'static str>>() -> impl Iterator<Item = &'static str> {
    E::VARIANTS.iter().map(|&state| state.into())
}

/// The HELP of every kind's `…_check_status`.
const CHECK_STATUS_HELP: &str = "1 for the check's status, 0 for the others: passed, failed, or \
unavailable (this host cannot tell: not a pass). Checks: pinning, multiplexing, invariance, \
cv-bar ARM (the arm is quotable), control (both workers on one CPU), placement-held and \
same-work (run -- COMMAND).";

/// The metrics every kind writes, each labelled with the kind.
/// `kind` is the head's, except for a run stopped at its gate, whose
/// document is the gate's.
fn common(kind: DocumentKind, head: &DocumentHead) -> Exposition {
    let mut m = Exposition::default();
    let kind = kind.to_string();
    let by_kind = [("kind", kind.as_str())];
    let kernel = head.environment.as_ref().and_then(|e| e.kernel.as_deref());
    // The CPUID signature: the summary's, or (a gate file from before the
    // gate saved its topology) the evidence's.
    let hypervisor = head
        .topology
        .as_ref()
        .and_then(|t| t.hypervisor.as_deref())
        .or(head.evidence.cpuid_hypervisor_signature.as_deref());
    m.info(
        "placement_study_info",
        "The result's kind and the tool's version; the host, CPU model, kernel release and CPUID \
         hypervisor signature it was measured on (empty where unknown or none).",
        &[
            ("kind", &kind),
            ("version", &head.tool_version),
            ("host", head.known_host().unwrap_or_default()),
            ("model", head.model.as_deref().unwrap_or_default()),
            ("kernel", kernel.unwrap_or_default()),
            ("hypervisor", hypervisor.unwrap_or_default()),
        ],
    );
    m.gauge(
        "placement_study_start_time_seconds",
        "When the measurement started, seconds since the Unix epoch (node_textfile_mtime_seconds \
         says when the file was written).",
        &by_kind,
        head.started_unix.map(|s| s as f64),
    );
    m.gauge(
        "placement_study_complete",
        "0 when a stop signal ended the measurement: only what was done is here, and there is \
         no verdict.",
        &by_kind,
        flag_value(head.complete),
    );
    if let Some(topology) = &head.topology {
        for (name, help, value) in [
            (
                "placement_study_cpus",
                "Online logical CPUs.",
                count_value(topology.cpus),
            ),
            (
                "placement_study_allowed_cpus",
                "CPUs the process was allowed to run on.",
                count_value(topology.allowed),
            ),
            (
                "placement_study_cores",
                "Cores, from the kernel's sibling maps.",
                count_value(topology.cores),
            ),
            (
                "placement_study_packages",
                "Packages (sockets).",
                count_value(topology.packages),
            ),
            (
                "placement_study_core_classes",
                "Published core classes (performance, efficiency, ...).",
                count_value(topology.core_classes),
            ),
            (
                "placement_study_smt",
                "1 when some core has more than one online hardware thread; absent when which \
                 CPUs share a core is unknown.",
                // Not finite: the gauge is not written.
                topology.smt.map_or(f64::NAN, flag_value),
            ),
        ] {
            m.gauge(name, help, &by_kind, value);
        }
    }
    m
}

/// A yes/no as a gauge value.
fn flag_value(yes: bool) -> f64 {
    if yes { 1.0 } else { 0.0 }
}

/// A count as a gauge value (exact below 2⁵³).
fn count_value(n: usize) -> f64 {
    n as f64
}

/// An exposition being built: metric families in the order first written,
/// each with its samples, so a family's lines stay together however the
/// samples were visited.
#[derive(Default)]
struct Exposition {
    families: Vec<Family>,
}

/// One metric family: its HELP and its sample lines.
struct Family {
    name: String,
    help: String,
    samples: Vec<String>,
}

impl Exposition {
    /// One gauge sample. No value, or one that is not a finite number, writes
    /// nothing: absence is how the format says "unknown".
    fn gauge(
        &mut self,
        name: &str,
        help: &str,
        labels: &[(&str, &str)],
        value: impl Into<Option<f64>>,
    ) {
        let Some(value) = value.into().filter(|v| v.is_finite()) else {
            return;
        };
        let index = match self.families.iter().position(|f| f.name == name) {
            Some(index) => index,
            None => {
                self.families.push(Family {
                    name: name.to_string(),
                    help: help.to_string(),
                    samples: Vec::new(),
                });
                self.families.len() - 1
            }
        };
        let mut line = name.to_string();
        if !labels.is_empty() {
            let pairs: Vec<String> = labels
                .iter()
                .map(|(label, text)| format!("{label}=\"{}\"", escape_label(text)))
                .collect();
            let _ = write!(line, "{{{}}}", pairs.join(","));
        }
        let _ = write!(line, " {value}");
        self.families[index].samples.push(line);
    }

    /// An `_info` gauge: metadata as labels, value 1.
    fn info(&mut self, name: &str, help: &str, labels: &[(&str, &str)]) {
        self.gauge(name, help, labels, 1.0);
    }

    /// A state set: one sample per state, `label` naming it, 1 for
    /// `current` and 0 for every other.
    fn state_set<'s>(
        &mut self,
        name: &str,
        help: &str,
        labels: &[(&str, &str)],
        label: &str,
        states: impl IntoIterator<Item = &'s str>,
        current: &str,
    ) {
        for state in states {
            let mut with_state = labels.to_vec();
            with_state.push((label, state));
            self.gauge(name, help, &with_state, flag_value(state == current));
        }
    }

    /// Each check as a state set of its status, labelled `check`.
    fn checks<'c>(&mut self, name: &str, help: &str, checks: impl IntoIterator<Item = &'c Check>) {
        for check in checks {
            let check_name = check.name.to_string();
            self.state_set(
                name,
                help,
                &[("check", &check_name)],
                "status",
                states::<CheckStatus>(),
                check.status.as_str(),
            );
        }
    }

    /// A median with its spread, as three families: `{stem}{unit}` the
    /// median (times `scale`, into the base unit), `{stem}_cv_ratio` its
    /// coefficient of variation, `{stem}_repetitions` how many repetitions
    /// both come from. `what` starts each HELP.
    fn spread(
        &mut self,
        stem: &str,
        unit: &str,
        what: &str,
        labels: &[(&str, &str)],
        spread: Option<&Spread>,
        scale: f64,
    ) {
        let Some(spread) = spread else {
            return;
        };
        self.gauge(
            &format!("{stem}{unit}"),
            &format!("{what}: median over repetitions."),
            labels,
            spread.median * scale,
        );
        self.gauge(
            &format!("{stem}_cv_ratio"),
            &format!("{what}: coefficient of variation over repetitions (stddev / mean)."),
            labels,
            spread.cv,
        );
        self.gauge(
            &format!("{stem}_repetitions"),
            &format!("{what}: repetitions the median and CV come from."),
            labels,
            count_value(spread.reps),
        );
    }

    /// How noisy the host was (see [`HostNoise`]), as three families:
    /// `{stem}_noise_baseline_drift_ratio` (absent from one batch),
    /// `{stem}_noisy_rounds` and `{stem}_rounds`.
    fn noise(&mut self, stem: &str, noise: Option<&HostNoise>) {
        let Some(noise) = noise else {
            return;
        };
        self.gauge(
            &format!("{stem}_noise_baseline_drift_ratio"),
            "How far the baseline's median moved between batches measured a pause apart: \
             highest over lowest, minus 1 (a quiet host stays within a few per cent).",
            &[],
            noise.baseline_drift,
        );
        self.gauge(
            &format!("{stem}_noisy_rounds"),
            "Rounds flagged as host noise: a baseline more than 20 % off its batch's median.",
            &[],
            count_value(noise.noisy_rounds),
        );
        self.gauge(
            &format!("{stem}_rounds"),
            "Rounds measured in all batches.",
            &[],
            count_value(noise.rounds),
        );
    }

    /// A ratio with its 95 % interval: `{stem}_ratio`, and
    /// `{stem}_interval_low_ratio`/`_high_ratio` where there is one.
    fn ratio(&mut self, stem: &str, what: &str, labels: &[(&str, &str)], ratio: Option<&Ratio>) {
        let Some(ratio) = ratio else {
            return;
        };
        self.gauge(
            &format!("{stem}_ratio"),
            &format!("{what}."),
            labels,
            ratio.value,
        );
        self.gauge(
            &format!("{stem}_interval_low_ratio"),
            &format!("{what}: lower bound of its 95 % confidence interval."),
            labels,
            ratio.ci95_low,
        );
        self.gauge(
            &format!("{stem}_interval_high_ratio"),
            &format!("{what}: upper bound of its 95 % confidence interval."),
            labels,
            ratio.ci95_high,
        );
    }

    /// The exposition text: per family its HELP, TYPE and samples, ending
    /// in a newline.
    fn render(self) -> String {
        let mut out = String::new();
        for family in self.families {
            let _ = writeln!(out, "# HELP {} {}", family.name, escape_help(&family.help));
            let _ = writeln!(out, "# TYPE {} gauge", family.name);
            for sample in family.samples {
                let _ = writeln!(out, "{sample}");
            }
        }
        out
    }
}

/// A label value as the exposition format quotes it: backslash, double
/// quote and newline escaped.
fn escape_label(text: &str) -> String {
    text.replace('\\', r"\\")
        .replace('"', r#"\""#)
        .replace('\n', r"\n")
}

/// HELP text as the format needs it: backslash and newline escaped.
fn escape_help(text: &str) -> String {
    text.replace('\\', r"\\").replace('\n', r"\n")
}
