//! The human view of `topology`: packages → cores → threads, with class,
//! sibling map (list and hex mask) and caches; what is unusual at the end.

use crate::cpuset::{CpuSet, format_mask};
use crate::exit::Outcome;
use crate::judge::warnings::{Warning, machine_tick_clock};
use crate::measure::ClockKind;
use crate::probe::{Cache, Topology, hypervisor};
use crate::report::blocks::Blocks;
use crate::report::document::{Document, HumanView};
use crate::report::gate::hypervisor_lines;
use crate::report::table::cores;
use crate::report::view::View;
use crate::report::warnings::all_notes;
use crate::saved::TopologyResult;
use crate::units::{bytes, count};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Machines numbering CPUs up to here show each core's hex mask (at most
/// four words); above, the mask column is left out.
const MASK_CPUS: u32 = 128;

/// The longest aligned line (a core class, the CPUID summary) kept whole.
const LONGEST_KEPT: usize = 100;

/// The whole human view: the machine in a line, what to run next, then
/// packages, nodes, classes, caches, the environment and the evidence. The
/// counts and the notes wrap at the view's width, and so do the few aligned
/// lines too long to keep.
pub fn blocks(topology: &Topology, view: &View) -> Blocks {
    let mut out = Blocks::new();
    let s = &topology.summary;
    let model = topology.cpu_name().unwrap_or_else(|| "unknown CPU".into());
    out.answer(model);
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
    out.line(counts, 2);
    out.fixed(format!("structure from {}", s.structure_from));
    out.line(
        "next: `placement-study gate` measures whether the published SMT siblings really \
         share a core (in a VM they often do not), and `placement-study pairs` maps them all",
        2,
    );

    let packages = crate::probe::cores_by_package(&topology.cpus);
    // A mask is a word of 8 hex digits per 32 CPUs: on a large machine each
    // core's line would be a screenful of zeros. The lists say the same,
    // and `taskset -c` takes them.
    let highest = topology.cpus.iter().map(|c| c.cpu).max().unwrap_or(0);
    let masks = highest < MASK_CPUS;
    for (package, cores) in &packages {
        out.gap().heading(format!("Package {package}"));
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
            out.fixed(line.trim_end());
        }
    }

    if !masks {
        let digits = (highest / 32 + 1) * 9 - 1;
        let note = format!(
            "  (masks left out: with CPU {highest}, each is {digits} characters; the lists say the same, and taskset -c takes them)"
        );
        out.line(note, 2);
    }

    out.gap()
        .extend(crate::report::nodes::section(topology, view));

    if topology.classes.len() > 1 {
        out.gap().heading("Core classes");
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
            aligned(&mut out, line, 43);
        }
    }

    if !topology.caches.is_empty() {
        out.gap().heading("Caches");
        for line in cache_lines(&topology.caches) {
            out.fixed(format!("  {line}"));
        }
    }

    let env = &topology.environment;
    out.gap().heading("Environment");
    let field = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let flag = |v: Option<bool>| match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    };
    out.fixed(format!("  kernel          {}", field(&env.kernel)));
    out.fixed(format!(
        "  smt control     {} (active: {})",
        field(&env.smt_control),
        flag(env.smt_active)
    ));
    out.fixed(format!(
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
    ));
    out.fixed(format!(
        "  governor        {}",
        if env.governors.is_empty() {
            "unknown".into()
        } else {
            env.governors.join(", ")
        }
    ));
    out.fixed(format!("  clocksource     {}", field(&env.clocksource)));
    if machine_tick_clock(topology) == ClockKind::GenericTimer {
        out.fixed("  tick clock      the generic timer (cntvct_el0; Arm has no TSC)");
    } else {
        out.fixed(format!(
            "  tsc             constant {}, nonstop {}{}",
            flag(env.constant_tsc),
            flag(env.nonstop_tsc),
            topology
                .cpuid
                .as_ref()
                .and_then(|c| c.tsc_hz)
                .map(|hz| format!(", {:.3} GHz", hz as f64 / 1e9))
                .unwrap_or_default()
        ));
    }
    out.fixed(format!(
        "  perf paranoid   {}",
        env.perf_event_paranoid
            .map(|p| p.to_string())
            .unwrap_or_else(|| "unknown".into())
    ));
    out.fixed(format!(
        "  hardware PMU    {}",
        if env.hardware_pmu {
            env.pmu_devices.join(", ")
        } else {
            "none visible".into()
        }
    ));
    if !env.isolated.is_empty() {
        out.fixed(format!("  isolated        {}", env.isolated));
    }
    if !env.nohz_full.is_empty() {
        out.fixed(format!("  nohz_full       {}", env.nohz_full));
    }
    if let Some(compatible) = &env.devicetree_compatible {
        out.fixed(format!("  device tree     {compatible}"));
    }
    if env.dmi_vendor.is_some() || env.dmi_product.is_some() {
        out.fixed(format!(
            "  dmi             {} {}",
            field(&env.dmi_vendor),
            field(&env.dmi_product)
        ));
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
        aligned(&mut out, line, 18);
    }
    if let Some(absent) = &topology.source.cpuid_absent {
        let identity = match topology.midr.as_ref().map(|midr| midr.source.as_str()) {
            Some("midr_el1") => " (CPU identity from MIDR_EL1)",
            Some(_) => " (CPU identity from the MIDR fields of /proc/cpuinfo)",
            None => "",
        };
        out.fixed(format!("  cpuid           {absent}{identity}"));
    }
    for kind in topology.midr.iter().flat_map(|midr| &midr.kinds) {
        out.fixed(format!(
            "  midr            {} on CPUs {}{}",
            kind.name,
            kind.cpus,
            kind.midr
                .as_ref()
                .map(|raw| format!(" ({raw})"))
                .unwrap_or_default()
        ));
    }
    if let Some(cross) = &topology.crosscheck {
        let verdict = match (cross.agrees, &cross.not_compared) {
            (true, None) => "CPUID and sysfs agree on every core".to_string(),
            (true, Some(why)) => format!("CPUID and sysfs agree on every core compared; {why}"),
            (false, None) => format!("{} mismatch(es)", cross.mismatches.len()),
            (false, Some(why)) => format!("{} mismatch(es); {why}", cross.mismatches.len()),
        };
        let line = format!("  crosscheck      {verdict}");
        out.line(line, 18);
    }

    if !env.hypervisor_sources.is_empty() || topology.cpuid.is_some() {
        out.gap()
            .heading("Hypervisor evidence (shown, never deciding)");
        let cpuid = topology.cpuid.as_ref();
        let identity = hypervisor::identity(
            cpuid.map(|cpuid| cpuid.hypervisor_bit),
            cpuid.and_then(|cpuid| cpuid.hypervisor_name.as_deref()),
            &env.hypervisor_sources,
        );
        let sources: Vec<_> = env.hypervisor_sources.iter().collect();
        for line in hypervisor_lines(&identity, &sources) {
            out.line(format!("  {line}"), 4);
        }
    }

    out.extend(all_notes(&Warning::about_machine(topology)));
    out
}

/// A line of the aligned listing: whole up to [`LONGEST_KEPT`] columns, so
/// the usual ones read (and grep) as one line; a longer one wraps at the
/// view's width, under its value (`indent`).
fn aligned(out: &mut Blocks, line: String, indent: usize) {
    if line.chars().count() <= LONGEST_KEPT {
        out.fixed(line);
    } else {
        out.line(line, indent);
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
    fn outcome(&self) -> Outcome {
        Outcome::Success
    }
}

impl HumanView for TopologyResult {
    fn blocks(&self, view: &View) -> Blocks {
        blocks(&self.machine(), view)
    }
}
