//! The human view of `gate`: one plain sentence, the arms table, the
//! evidence, the notes.

use crate::exit::Outcome;
use crate::judge::batches::{Batch, HostNoise, NOISY_BASELINE, Side};
use crate::judge::checks::Check;
use crate::judge::gate::{Estimate, MeanBased, SlowCpu, UNEVEN_WORKERS, Verdict};
use crate::judge::warnings::Warning;
use crate::plan::GateBaseline;
use crate::probe::hypervisor::{self, HypervisorSource, Identity};
use crate::probe::{Crosscheck, virtual_board};
use crate::report::blocks::Blocks;
use crate::report::document::{Document, HumanView};
use crate::report::table::{arms_table, excluded_lines};
use crate::report::view::View;
use crate::report::warnings::{clock_note, counter_notes, notes_block};
use crate::saved::Evidence;
use crate::saved::GateResult;
use crate::units::{Fixed, capitalise};

/// The whole human view: the verdict and why, what to run next, then the
/// measurement behind it.
impl HumanView for GateResult {
    fn blocks(&self, view: &View) -> Blocks {
        let result = self;
        let mut out = verdict_heading(result.head.complete, "repetitions");
        out.answer(format!(
            "verdict: {} (exit {}){}",
            result.verdict.as_str(),
            Outcome::Verdict(result.verdict).exit_status(),
            match result.baseline {
                Some(baseline) => format!(", baseline: {}", baseline.describe()),
                None => String::new(),
            }
        ));
        // A neighbour that shaped the measurement is said before the
        // sentence's statistics.
        if let Some(slow) = &result.slow_cpu {
            out.line(slow_cpu_line(slow), 0);
        }
        out.line(capitalise(&result.sentence), 0);
        out.line(next_step(result.verdict), 2);
        if let (Some(pairs), Some(setup)) = (&result.pairs, &result.setup) {
            let against = match (pairs.separate, result.baseline) {
                (Some([a, b]), _) => format!("separate CPUs {a},{b}"),
                (None, Some(GateBaseline::Alone)) => {
                    format!("one worker alone on CPU {}", pairs.siblings[0])
                }
                (None, _) => format!(
                    "each worker alone on its CPU ({} and {})",
                    pairs.siblings[0], pairs.siblings[1]
                ),
            };
            let siblings = format!(
                "siblings CPUs {},{} vs {against} ({} class, package {}); kernel {}, {} bytes per \
             worker per repetition",
                pairs.siblings[0],
                pairs.siblings[1],
                pairs.class,
                pairs.package,
                setup.kernel,
                setup.bytes_per_worker
            );
            out.gap().line(siblings, 2);
            out.line(clock_note(setup), 2);
            out.lines(counter_notes(setup), 2);
            out.gap()
                .extend(arms_table(&result.arms, setup.tick_clock, false, view));
        }
        let cpus: Vec<u32> = result.workers.iter().map(|w| w.cpu).collect();
        out.lines(
            batch_lines(&result.batches, &cpus, result.mean_based.as_ref()),
            2,
        );
        out.extend(noise_and_control(
            result.noise.as_ref(),
            &result.control_attempts,
            result.control.as_ref(),
            "one CPU",
        ));
        out.lines(excluded_lines(&result.excluded), 2);
        out.extend(evidence_and_notes(&result.head.evidence, &result.warnings));
        out
    }
}

/// What to run after a gate, by its verdict: with no SMT or a virtual
/// map, the studies that measure which CPUs share anything; after a
/// physical one, the map of every pair and what sharing costs a program.
pub fn next_step(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Physical => {
            "next: `placement-study pairs` maps every sibling pair, and `placement-study run -- \
             COMMAND` measures what sharing a core costs your program"
        }
        Verdict::Virtual => {
            "next: the published siblings are not what shares a core here; `placement-study \
             pairs` and `placement-study latency` measure which CPUs really share a core or a \
             cache"
        }
        Verdict::NoSmt => {
            "next: no SMT is published; `placement-study pairs` and `placement-study latency` \
             measure whether any CPUs share a core or a cache anyway (a VM's host may)"
        }
        Verdict::Inconclusive => {
            "next: run it again at a quieter moment, or give it more batches (--max-batches); \
             the reason is in the sentence above"
        }
    }
}

/// One line per batch: its estimate, its side, its noisy rounds; then the
/// mean-based estimate of the release before, for comparison.
pub fn batch_lines(batches: &[Batch], cpus: &[u32], mean_based: Option<&MeanBased>) -> Vec<String> {
    let one = |estimate: Option<&Estimate>| {
        estimate.map_or_else(
            || "too few kept rounds for an estimate".to_owned(),
            |e| {
                format!(
                    "{:+.1} % [{:+.1}, {:+.1}] (median of {} paired rounds)",
                    e.penalty * 100.0,
                    e.ci95.low * 100.0,
                    e.ci95.high * 100.0,
                    e.reps
                )
            },
        )
    };
    let mut lines: Vec<String> = batches
        .iter()
        .map(|b| {
            // Per worker where the gate judged each against its own CPU.
            let estimate = match b.workers.as_slice() {
                [] => one(b.estimate.as_ref()),
                workers => workers
                    .iter()
                    .enumerate()
                    .map(|(i, w)| {
                        let cpu = cpus
                            .get(i)
                            .map_or_else(|| format!("worker {i}"), |c| format!("CPU {c}"));
                        format!("{cpu} {}", one(w.estimate.as_ref()))
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            };
            let side = match b.side {
                Some(Side::Above) => "above the threshold",
                Some(Side::Below) => "below the threshold",
                Some(Side::Straddles) => "straddles the threshold",
                None => "not finished",
            };
            let noisy = match b.noisy_rounds.as_slice() {
                [] => String::new(),
                rounds => format!(
                    "; host noise in round{} {} (the baseline more than {:.0} % off its median, \
                     or an arm's workers {:.0} points further apart than usual), left out",
                    if rounds.len() == 1 { "" } else { "s" },
                    rounds
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    NOISY_BASELINE * 100.0,
                    UNEVEN_WORKERS * 100.0
                ),
            };
            format!(
                "batch {} ({} rounds): {estimate}, {side}{noisy}",
                b.index,
                b.rounds.len()
            )
        })
        .collect();
    if let Some(old) = mean_based {
        lines.push(format!(
            "mean-based estimate, as before 0.2 (geometric mean, t-interval): {:+.1} % [{:+.1}, {:+.1}]",
            old.penalty * 100.0,
            old.ci95.low * 100.0,
            old.ci95.high * 100.0
        ));
    }
    lines
}

/// How noisy the host was, each earlier attempt of a control measured
/// again, and the control itself ("both workers on `on`").
pub fn noise_and_control(
    noise: Option<&HostNoise>,
    attempts: &[Check],
    control: Option<&Check>,
    on: &str,
) -> Blocks {
    let mut out = Blocks::new();
    if let Some(noise) = noise {
        out.line(noise_line(noise), 2);
    }
    out.lines(control_attempt_lines(attempts), 2);
    if let Some(control) = control {
        out.line(
            format!(
                "control (both workers on {on}): {} — {}",
                control.status.as_str(),
                control.detail
            ),
            2,
        );
    }
    out
}

/// The earlier measurements of a control that failed and was measured
/// again, one line each.
pub fn control_attempt_lines(attempts: &[Check]) -> Vec<String> {
    attempts
        .iter()
        .enumerate()
        .map(|(attempt, control)| {
            format!(
                "control, attempt {} (then measured again): {} — {}",
                attempt + 1,
                control.status.as_str(),
                control.detail
            )
        })
        .collect()
}

/// How noisy the host was, in one line.
pub fn noise_line(noise: &HostNoise) -> String {
    let drift = noise.baseline_drift.map_or_else(
        || "one batch, so no drift between batches".to_owned(),
        |d| {
            format!(
                "the baseline moved {:.1} % between batches",
                Fixed(d * 100.0)
            )
        },
    );
    format!(
        "host noise: {drift}; {} of {} rounds flagged as host noise{}",
        noise.noisy_rounds,
        noise.rounds,
        if noise.is_high() { " (high)" } else { "" }
    )
}

/// A verdict's first line, for a result a signal cut short: an INCOMPLETE
/// banner (`done` names what was measured: "repetitions").
pub fn verdict_heading(complete: bool, done: &str) -> Blocks {
    let mut out = Blocks::new();
    if !complete {
        out.banner(&format!(
            "INCOMPLETE: no verdict; only the {done} done are shown"
        ))
        .gap();
    }
    out
}

/// The evidence block ("shown, never deciding") and the notes: how a
/// verdict's view ends.
pub fn evidence_and_notes(evidence: &Evidence, warnings: &[Warning]) -> Blocks {
    let mut out = Blocks::new();
    out.gap().heading("Evidence (shown, never deciding)");
    for line in evidence_lines(evidence) {
        out.line(format!("  {line}"), 4);
    }
    out.extend(notes_block(warnings));
    out
}

/// The VM evidence, one fact per line.
pub fn evidence_lines(e: &Evidence) -> Vec<String> {
    let yes_no = |v: Option<bool>| match v {
        Some(true) => "set",
        Some(false) => "clear",
        None => "not read",
    };
    let mut lines = match &e.cpuid_absent {
        // The cpuinfo flag is CPUID's bit, as the x86 kernel reports it.
        Some(absent) => vec![format!(
            "CPUID hypervisor bit and /proc/cpuinfo hypervisor flag: CPUID is {absent}"
        )],
        None => vec![
            format!(
                "CPUID hypervisor bit: {}{}",
                yes_no(e.cpuid_hypervisor_bit),
                match (&e.cpuid_hypervisor_name, &e.cpuid_hypervisor_signature) {
                    (Some(n), Some(s)) => format!(", signature \"{s}\" ({n})"),
                    (None, Some(s)) => format!(", signature \"{s}\""),
                    _ => String::new(),
                }
            ),
            format!(
                "/proc/cpuinfo hypervisor flag: {}",
                yes_no(e.cpuinfo_hypervisor_flag)
            ),
        ],
    };
    if let Some(compatible) = &e.devicetree_compatible {
        let board = virtual_board(compatible)
            .map(|board| format!(" ({board})"))
            .unwrap_or_default();
        lines.push(format!("device tree: {compatible}{board}"));
    }
    lines.push(format!(
        "DMI: {} / {}",
        e.dmi_vendor.as_deref().unwrap_or("unknown"),
        e.dmi_product.as_deref().unwrap_or("unknown")
    ));
    if !e.hypervisor_sources.is_empty() {
        let identity = hypervisor::identity(
            e.cpuid_hypervisor_bit,
            e.cpuid_hypervisor_name.as_deref(),
            &e.hypervisor_sources,
        );
        // The cpuinfo flag, the DMI vendor and product and the device
        // tree's compatible have their lines above.
        let shown_above = [
            "/proc/cpuinfo",
            "/sys/class/dmi/id/sys_vendor",
            "/sys/class/dmi/id/product_name",
            "/sys/firmware/devicetree/base/compatible",
        ];
        let others: Vec<&HypervisorSource> = e
            .hypervisor_sources
            .iter()
            .filter(|source| !shown_above.contains(&source.file.as_str()))
            .collect();
        lines.extend(hypervisor_lines(&identity, &others));
    }
    let left_out = |c: &Crosscheck| {
        c.not_compared
            .as_ref()
            .map(|why| format!(" ({why})"))
            .unwrap_or_default()
    };
    lines.push(match (&e.crosscheck, &e.cpuid_absent) {
        (Some(c), _) if c.agrees => format!("CPUID and sysfs sibling maps agree{}", left_out(c)),
        (Some(c), _) => format!(
            "CPUID and sysfs disagree: {}{}",
            c.mismatches.join("; "),
            left_out(c)
        ),
        (None, Some(_)) => "no CPUID/sysfs cross-check: the sibling map is sysfs's alone".into(),
        (None, None) => "CPUID/sysfs cross-check not made".into(),
    });
    lines
}

/// What the hypervisor evidence comes to (the hypervisor every source
/// that names one agrees on, and each disagreement), then what each of
/// `sources` says.
pub fn hypervisor_lines(identity: &Identity, sources: &[&HypervisorSource]) -> Vec<String> {
    let named = match (&identity.vendor, identity.named_by.is_empty()) {
        (Some(vendor), _) => format!(
            "hypervisor named: {vendor}, by {}",
            identity.named_by.join(", ")
        ),
        (None, true) => "hypervisor named: none".into(),
        (None, false) => "hypervisor named: none, the sources disagree".into(),
    };
    let mut lines = vec![named];
    lines.extend(
        identity
            .disagreements
            .iter()
            .map(|what| format!("disagreeing: {what}")),
    );
    for source in sources {
        let verdict = match (&source.names, source.guest) {
            (Some(names), _) => format!(" (names {names})"),
            (None, Some(false)) => " (no guest)".into(),
            (None, _) => String::new(),
        };
        lines.push(format!("{}: {}{verdict}", source.file, source.says));
    }
    lines
}

/// The line that names a sibling CPU which ran steadily slower alone: a
/// neighbour on its host CPU, not a sibling. Printed first, before the
/// verdict's sentence and its statistics.
pub fn slow_cpu_line(slow: &SlowCpu) -> String {
    format!(
        "CPU {} ran {:.0} % slower alone than CPU {} for the whole gate ({:.0}–{:.0} %, {} \
         rounds in {} batch{}): a neighbour on its host CPU (another tenant, a capped vCPU), \
         not a sibling. Each worker was judged against its own CPU alone, so the verdict does \
         not count it as sharing; a quieter host gives a firmer answer.",
        slow.cpu,
        Fixed(slow.slower * 100.0),
        slow.other,
        Fixed(slow.ci95.low * 100.0),
        Fixed(slow.ci95.high * 100.0),
        slow.rounds,
        slow.batches,
        if slow.batches == 1 { "" } else { "es" }
    )
}

impl Document for GateResult {
    fn outcome(&self) -> Outcome {
        Outcome::Verdict(self.verdict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(
        file: &str,
        says: &str,
        names: Option<&str>,
        guest: Option<bool>,
    ) -> HypervisorSource {
        HypervisorSource {
            file: file.into(),
            says: says.into(),
            names: names.map(str::to_owned),
            guest,
        }
    }

    #[test]
    fn evidence_shows_each_source_the_lines_above_do_not() {
        let evidence = Evidence {
            cpuid_hypervisor_bit: Some(false),
            cpuid_hypervisor_signature: None,
            cpuid_hypervisor_name: None,
            cpuinfo_hypervisor_flag: Some(false),
            dmi_vendor: Some("VMware, Inc.".into()),
            dmi_product: Some("VMware7,1".into()),
            crosscheck: None,
            cpuid_absent: None,
            devicetree_compatible: None,
            hypervisor_sources: vec![
                source("/proc/cpuinfo", "no hypervisor flag", None, Some(false)),
                source(
                    "/sys/class/dmi/id/sys_vendor",
                    "VMware, Inc.",
                    Some("VMware"),
                    Some(true),
                ),
                source(
                    "/sys/class/dmi/id/bios_vendor",
                    "VMware, Inc.",
                    Some("VMware"),
                    Some(true),
                ),
            ],
        };
        let lines = evidence_lines(&evidence);
        let hypervisor: Vec<&str> = lines
            .iter()
            .map(String::as_str)
            .skip_while(|line| !line.starts_with("hypervisor named"))
            .take(4)
            .collect();
        assert_eq!(
            hypervisor,
            [
                "hypervisor named: VMware, by /sys/class/dmi/id/sys_vendor, /sys/class/dmi/id/bios_vendor",
                "disagreeing: the CPUID hypervisor bit is clear and /proc/cpuinfo says no \
                 hypervisor flag, but /sys/class/dmi/id/sys_vendor names VMware",
                "/sys/class/dmi/id/bios_vendor: VMware, Inc. (names VMware)",
                "CPUID/sysfs cross-check not made",
            ]
        );
        let old = Evidence {
            hypervisor_sources: Vec::new(),
            ..evidence
        };
        assert!(
            !evidence_lines(&old)
                .iter()
                .any(|line| line.starts_with("hypervisor named"))
        );
    }
}
