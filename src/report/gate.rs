//! The human view of `gate`: one plain sentence, the arms table, the
//! evidence, the notes.

use crate::judge::gate::{Estimate, Verdict};
use crate::report::table::arms_table;
use crate::results::{Evidence, GateResult};
use std::fmt::Write;

/// The sentence a sysadmin reads first.
pub fn sentence(verdict: Verdict, estimate: Option<&Estimate>, threshold: f64) -> String {
    let threshold_pct = format!("{:.0} %", threshold * 100.0);
    let Some(e) = estimate else {
        return format!(
            "no repetitions were measured; threshold {threshold_pct}: {}",
            verdict.as_str()
        );
    };
    let (amount, direction) = if e.penalty >= 0.0 {
        (e.penalty * 100.0, "more")
    } else {
        (-e.penalty * 100.0, "less")
    };
    let measured = format!(
        "two workers on one core's siblings cost {amount:.1} % [{:.1}, {:.1}] {direction} than on separate cores \
         (paired over {} repetitions each; ratio of medians {}); threshold {threshold_pct}",
        e.ci95.low * 100.0,
        e.ci95.high * 100.0,
        e.reps,
        crate::report::units::percent_change(e.penalty_of_medians)
    );
    let meaning = match verdict {
        Verdict::Physical => "placement is physical".to_string(),
        Verdict::Virtual => {
            "placement is virtual: the affinity mask moved nothing physical (typical of a VM, \
             whose sibling map is fiction)"
                .to_string()
        }
        Verdict::Inconclusive => {
            "inconclusive: the interval straddles the threshold; raise --max-reps, \
             lengthen --rep-ms, or quiet the machine (stop other load, pin the governor)"
                .to_string()
        }
        Verdict::NoSmt => "no-smt".to_string(),
    };
    format!("{measured}: {meaning}")
}

/// The whole human view.
pub fn render(result: &GateResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", capitalise(&result.sentence));
    let _ = writeln!(
        out,
        "verdict: {} (exit {})",
        result.verdict.as_str(),
        result.verdict.exit_code()
    );
    if let (Some(pairs), Some(setup)) = (&result.pairs, &result.setup) {
        let _ = writeln!(
            out,
            "\nsiblings CPUs {},{} vs separate CPUs {},{} ({} class, package {}); kernel {}, {} bytes per worker per repetition",
            pairs.siblings[0],
            pairs.siblings[1],
            pairs.separate[0],
            pairs.separate[1],
            pairs.class,
            pairs.package,
            setup.kernel,
            setup.bytes_per_worker
        );
        let _ = writeln!(
            out,
            "{}",
            crate::report::warnings::clock_note(&setup.hardware_counters)
        );
        let _ = writeln!(out, "\n{}", arms_table(&result.arms, false));
    }
    if let Some(control) = &result.control {
        let _ = writeln!(
            out,
            "control (both workers on one CPU): {} — {}",
            control.status.as_str(),
            control.detail
        );
    }
    for ex in &result.excluded {
        let _ = writeln!(
            out,
            "excluded: {} repetition {}: {}",
            ex.arm, ex.rep, ex.why
        );
    }
    let _ = writeln!(out, "\nEvidence (shown, never deciding)");
    for line in evidence_lines(&result.evidence) {
        let _ = writeln!(out, "  {line}");
    }
    if !result.warnings.is_empty() {
        let _ = writeln!(out, "\nNotes");
        for w in &result.warnings {
            let _ = writeln!(out, "  ! {w}");
        }
    }
    out
}

/// The VM evidence, one fact per line.
pub fn evidence_lines(e: &Evidence) -> Vec<String> {
    let yes_no = |v: Option<bool>| match v {
        Some(true) => "set",
        Some(false) => "clear",
        None => "not read",
    };
    let mut lines = vec![
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
        format!(
            "DMI: {} / {}",
            e.dmi_vendor.as_deref().unwrap_or("unknown"),
            e.dmi_product.as_deref().unwrap_or("unknown")
        ),
    ];
    lines.push(match &e.crosscheck {
        Some(c) if c.agrees => "CPUID and sysfs sibling maps agree".into(),
        Some(c) => format!("CPUID and sysfs disagree: {}", c.mismatches.join("; ")),
        None => "CPUID/sysfs cross-check not made".into(),
    });
    lines
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}
