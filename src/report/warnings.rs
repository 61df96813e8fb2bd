//! The "what is unusual here" lines that every output ends with. Each one
//! says what it means for a measurement and, where there is one, what to do.

use crate::measure::HardwareCounters;
use crate::probe::Topology;

/// Warnings about the machine itself, shared by `topology`, `gate` and `run`.
pub fn machine_warnings(topology: &Topology) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(name) = &topology.summary.hypervisor {
        out.push(format!(
            "running under a hypervisor ({name}): the guest's sibling map is whatever the host \
             chose to publish; only a measurement (`placement-study gate`) tells whether it is physical"
        ));
    } else if topology.environment.hypervisor_flag == Some(true) {
        out.push(
            "the kernel reports the hypervisor CPU flag: this is a virtual machine; \
             its sibling map may be fiction (run `placement-study gate`)"
                .into(),
        );
    }
    if let Some(cross) = &topology.crosscheck {
        for m in &cross.mismatches {
            out.push(format!("CPUID and sysfs disagree: {m}"));
        }
    }
    if !topology.environment.hardware_pmu {
        out.push(
            "no hardware PMU visible (/sys/bus/event_source/devices/cpu* absent): cycles and \
             instructions cannot be counted; measurements fall back to TSC ticks"
                .into(),
        );
    }
    if topology.environment.turbo == Some(true) {
        out.push(format!(
            "turbo is on ({}): core cycles and TSC ticks differ; disable it for stable numbers",
            topology
                .environment
                .turbo_source
                .as_deref()
                .unwrap_or("cpufreq")
        ));
    }
    let governors = &topology.environment.governors;
    if !governors.is_empty() && governors.iter().any(|g| g != "performance") {
        out.push(format!(
            "cpufreq governor is {}: frequency may ramp during a measurement; \
             `cpupower frequency-set -g performance` pins it",
            governors.join(", ")
        ));
    }
    if topology.summary.allowed < topology.summary.cpus {
        out.push(format!(
            "this process may run on {} of {} online CPUs (cpuset or taskset)",
            topology.summary.allowed, topology.summary.cpus
        ));
    }
    out
}

/// The sentence naming the clock every cost in this output came from.
pub fn clock_note(hardware: &HardwareCounters) -> String {
    match hardware {
        HardwareCounters::Available { .. } => {
            "costs are core cycles per byte, from each worker's own cycles counter".into()
        }
        HardwareCounters::Unavailable { reason } => {
            format!("costs are TSC ticks per byte (fallback clock): {reason}")
        }
    }
}
