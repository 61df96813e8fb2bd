//! The human view of `topology`: packages → cores → threads, with class,
//! sibling map (list and hex mask) and caches; what is unusual at the end.

use crate::cpuset::{CpuSet, format_mask};
use crate::exit::Outcome;
use crate::judge::warnings::{Warning, machine_tick_clock};
use crate::measure::ClockKind;
use crate::probe::{Cache, Topology, hypervisor};
use crate::report::compare::HostSummary;
use crate::report::document::Document;
use crate::report::gate::hypervisor_lines;
use crate::report::units::{bytes, cores, count};
use crate::report::view::View;
use crate::saved::{DocumentHead, TopologyResult};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Machines numbering CPUs up to here show each core's hex mask (at most
/// four words); above, the mask column is left out.
const MASK_CPUS: u32 = 128;

/// The longest aligned line (a core class, the CPUID summary) kept whole.
const LONGEST_KEPT: usize = 100;

/// Renders the whole human view; the counts and the notes wrap at the
/// view's width, and so do the few aligned lines too long to keep.
pub fn render(topology: &Topology, view: &View) -> String {
    let mut out = String::new();
    let s = &topology.summary;
    let model = topology.cpu_name().unwrap_or_else(|| "unknown CPU".into());
    let _ = writeln!(out, "{model}");
    let counts = format!(
        "{} ({} allowed), {}, {} package{}, threads per core {}, {} core class{}, SMT {}",
        count(s.cpus, "CPU"),
        s.allowed,
        cores(s),
        s.packages,
        if s.packages == 1 { "" } else { "s" },
        s.threads_per_core,
        s.core_classes,
        if s.core_classes == 1 { "" } else { "es" },
        s.smt_word(),
    );
    let _ = writeln!(out, "{}", view.wrap(&counts, 2));
    let _ = writeln!(out, "structure from {}", s.structure_from);

    let packages = crate::probe::cores_by_package(&topology.cpus);
    // A mask is a word of 8 hex digits per 32 CPUs: on a large machine each
    // core's line would be a screenful of zeros. The lists say the same,
    // and `taskset -c` takes them.
    let highest = topology.cpus.iter().map(|c| c.cpu).max().unwrap_or(0);
    let masks = highest < MASK_CPUS;
    for (package, cores) in &packages {
        let _ = writeln!(out, "\nPackage {package}");
        for (core, cpus) in cores {
            let first = cpus[0];
            let apic: Vec<String> = cpus
                .iter()
                .filter_map(|c| c.apic_id.map(|a| format!("{a:#x}")))
                .collect();
            let mut line = format!(
                "  Core {core:<4} {:<22} CPUs {:<10}",
                first.class,
                first.siblings.to_string(),
            );
            if masks {
                let _ = write!(line, " mask {}", format_mask(&first.siblings));
            }
            if !apic.is_empty() {
                let _ = write!(line, "  APIC {}", apic.join(","));
            }
            if cpus.iter().any(|c| !c.allowed) {
                line.push_str("  (not all allowed)");
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }

    if !masks {
        let digits = (highest / 32 + 1) * 9 - 1;
        let note = format!(
            "  (masks left out: with CPU {highest}, each is {digits} characters; the lists say the same, and taskset -c takes them)"
        );
        let _ = writeln!(out, "{}", view.wrap(&note, 2));
    }

    let _ = writeln!(out, "\n{}", crate::report::nodes::section(topology, view));

    if topology.classes.len() > 1 {
        let _ = writeln!(out, "\nCore classes");
        for class in &topology.classes {
            let line = format!(
                "  {:<22} CPUs {:<12} from {}{}",
                class.name,
                class.cpus.to_string(),
                class.source,
                class
                    .detail
                    .as_ref()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            );
            let _ = writeln!(out, "{}", aligned(&line, 43, view));
        }
    }

    if !topology.caches.is_empty() {
        let _ = writeln!(out, "\nCaches");
        for line in cache_lines(&topology.caches) {
            let _ = writeln!(out, "  {line}");
        }
    }

    let env = &topology.environment;
    let _ = writeln!(out, "\nEnvironment");
    let field = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let flag = |v: Option<bool>| match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    };
    let _ = writeln!(out, "  kernel          {}", field(&env.kernel));
    let _ = writeln!(
        out,
        "  smt control     {} (active: {})",
        field(&env.smt_control),
        flag(env.smt_active)
    );
    let _ = writeln!(
        out,
        "  turbo           {}{}",
        match env.turbo {
            Some(true) => "on",
            Some(false) => "off",
            None => "unknown",
        },
        env.turbo_source
            .as_ref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "  governor        {}",
        if env.governors.is_empty() {
            "unknown".into()
        } else {
            env.governors.join(", ")
        }
    );
    let _ = writeln!(out, "  clocksource     {}", field(&env.clocksource));
    if machine_tick_clock(topology) == ClockKind::GenericTimer {
        let _ = writeln!(
            out,
            "  tick clock      the generic timer (cntvct_el0; Arm has no TSC)"
        );
    } else {
        let _ = writeln!(
            out,
            "  tsc             constant {}, nonstop {}{}",
            flag(env.constant_tsc),
            flag(env.nonstop_tsc),
            topology
                .cpuid
                .as_ref()
                .and_then(|c| c.tsc_hz)
                .map(|hz| format!(", {:.3} GHz", hz as f64 / 1e9))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(
        out,
        "  perf paranoid   {}",
        env.perf_event_paranoid
            .map(|p| p.to_string())
            .unwrap_or_else(|| "unknown".into())
    );
    let _ = writeln!(
        out,
        "  hardware PMU    {}",
        if env.hardware_pmu {
            env.pmu_devices.join(", ")
        } else {
            "none visible".into()
        }
    );
    if !env.isolated.is_empty() {
        let _ = writeln!(out, "  isolated        {}", env.isolated);
    }
    if !env.nohz_full.is_empty() {
        let _ = writeln!(out, "  nohz_full       {}", env.nohz_full);
    }
    if let Some(compatible) = &env.devicetree_compatible {
        let _ = writeln!(out, "  device tree     {compatible}");
    }
    if env.dmi_vendor.is_some() || env.dmi_product.is_some() {
        let _ = writeln!(
            out,
            "  dmi             {} {}",
            field(&env.dmi_vendor),
            field(&env.dmi_product)
        );
    }
    if let Some(cpuid) = &topology.cpuid {
        let line = format!(
            "  cpuid           {} family {:#x} model {:#x} stepping {}, topology leaf {}, hybrid {}, hypervisor {}",
            cpuid.vendor,
            cpuid.family,
            cpuid.model,
            cpuid.stepping,
            cpuid.topology_leaf,
            if cpuid.hybrid_bit { "yes" } else { "no" },
            match (&cpuid.hypervisor_name, &cpuid.hypervisor_signature) {
                (Some(name), Some(sig)) => format!("{name} (\"{sig}\")"),
                (None, Some(sig)) => format!("\"{sig}\""),
                _ if cpuid.hypervisor_bit => "bit set, no signature".into(),
                _ => "no".into(),
            }
        );
        let _ = writeln!(out, "{}", aligned(&line, 18, view));
    }
    if let Some(absent) = &topology.source.cpuid_absent {
        let identity = match topology.midr.as_ref().map(|midr| midr.source.as_str()) {
            Some("midr_el1") => " (CPU identity from MIDR_EL1)",
            Some(_) => " (CPU identity from the MIDR fields of /proc/cpuinfo)",
            None => "",
        };
        let _ = writeln!(out, "  cpuid           {absent}{identity}");
    }
    for kind in topology.midr.iter().flat_map(|midr| &midr.kinds) {
        let _ = writeln!(
            out,
            "  midr            {} on CPUs {}{}",
            kind.name,
            kind.cpus,
            kind.midr
                .as_ref()
                .map(|raw| format!(" ({raw})"))
                .unwrap_or_default()
        );
    }
    if let Some(cross) = &topology.crosscheck {
        let verdict = match (cross.agrees, &cross.not_compared) {
            (true, None) => "CPUID and sysfs agree on every core".to_string(),
            (true, Some(why)) => format!("CPUID and sysfs agree on every core compared; {why}"),
            (false, None) => format!("{} mismatch(es)", cross.mismatches.len()),
            (false, Some(why)) => format!("{} mismatch(es); {why}", cross.mismatches.len()),
        };
        let line = format!("  crosscheck      {verdict}");
        let _ = writeln!(out, "{}", view.wrap(&line, 18));
    }

    if !env.hypervisor_sources.is_empty() || topology.cpuid.is_some() {
        let _ = writeln!(out, "\nHypervisor evidence (shown, never deciding)");
        let cpuid = topology.cpuid.as_ref();
        let identity = hypervisor::identity(
            cpuid.map(|cpuid| cpuid.hypervisor_bit),
            cpuid.and_then(|cpuid| cpuid.hypervisor_name.as_deref()),
            &env.hypervisor_sources,
        );
        let sources: Vec<_> = env.hypervisor_sources.iter().collect();
        for line in hypervisor_lines(&identity, &sources) {
            let _ = writeln!(out, "{}", view.wrap(&format!("  {line}"), 4));
        }
    }

    let warnings = Warning::about_machine(topology);
    if !warnings.is_empty() {
        let _ = writeln!(out, "\nNotes");
        for w in warnings {
            let _ = writeln!(out, "{}", view.wrap(&format!("  ! {w}"), 4));
        }
    }
    out
}

/// A line of the aligned listing: whole up to [`LONGEST_KEPT`] columns, so
/// the usual ones read (and grep) as one line; a longer one wraps at the
/// view's width, under its value (`indent`).
fn aligned(line: &str, indent: usize, view: &View) -> String {
    if line.chars().count() <= LONGEST_KEPT {
        line.to_string()
    } else {
        view.wrap(line, indent)
    }
}

/// One line per kind of cache: level, type, size, how many instances, and
/// which CPUs share one (the first instance's set, as the typical case).
fn cache_lines(caches: &[Cache]) -> Vec<String> {
    let mut kinds: BTreeMap<(u32, &str), Vec<&Cache>> = BTreeMap::new();
    for cache in caches {
        kinds
            .entry((cache.level, cache.kind.as_str()))
            .or_default()
            .push(cache);
    }
    kinds
        .into_iter()
        .map(|((level, kind), instances)| {
            let suffix = match kind {
                "Data" => "d",
                "Instruction" => "i",
                _ => "",
            };
            let first = instances[0];
            let shared: &CpuSet = &first.cpus;
            format!(
                "L{level}{suffix:<2} {:>9} x{:<3} shared by {} CPU{} (e.g. {}){}",
                first.size_bytes.map(bytes).unwrap_or_else(|| "?".into()),
                instances.len(),
                shared.len(),
                if shared.len() == 1 { "" } else { "s" },
                shared,
                first
                    .line_bytes
                    .map(|l| format!(", {l} B lines"))
                    .unwrap_or_default()
            )
        })
        .collect()
}

impl Document for TopologyResult {
    fn head(&self) -> &DocumentHead {
        &self.head
    }

    fn render(&self, view: &View) -> String {
        render(&self.machine(), view)
    }

    fn csv(&self) -> String {
        crate::report::csv::topology(&self.machine())
    }

    fn metrics(&self) -> String {
        crate::report::prom::topology(self)
    }

    fn figure(&self) -> String {
        crate::report::figure::topology::figure(self)
    }

    fn summary(&self, file: String) -> HostSummary {
        crate::report::compare::of_topology(file, self)
    }

    fn outcome(&self) -> Outcome {
        Outcome::Success
    }
}
