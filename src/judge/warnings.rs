//! The "what is unusual here" notes every output ends with. Each says what
//! it means for a measurement and, where there is one, what to do.
//!
//! Saved files keep the sentences (as they always did); a note read back
//! from a file is [`Warning::Recorded`], since only its words were saved.

use crate::judge::batches::HostNoise;
use crate::measure::stop::StopSignal;
use crate::measure::{ClockKind, MeasurementSetup, SoftwareCounters};
use crate::probe::environment::CPU_PMU_PREFIXES;
use crate::probe::{Topology, hypervisor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// One note about the machine or the measurement.
#[derive(Clone, Debug, PartialEq)]
pub enum Warning {
    /// A stop signal ended the measurement early.
    Incomplete(StopSignal),
    /// CPUID names a hypervisor.
    Hypervisor(String),
    /// Only the cpuinfo flag says this is a VM.
    HypervisorFlag,
    /// Two sources of hypervisor evidence disagree: which, and what each says.
    HypervisorEvidence(String),
    /// One CPUID/sysfs disagreement, naming the CPUs.
    CpuidSysfsMismatch(String),
    /// The kernel's sibling lists overlap or are asymmetric; how the probe
    /// repaired them, naming the CPUs.
    SiblingMap(String),
    /// The NUMA node files disagree (lists that overlap, a CPU in no
    /// node, …); what they say, naming the CPUs or nodes.
    NodeFiles(String),
    /// Which CPUs share a core is unknown; why (the missing files).
    UnknownStructure(String),
    /// No hardware PMU is registered; measurements fall back to this clock.
    NoHardwarePmu(ClockKind),
    /// perf refused the software events (perf_event_paranoid): task-clock,
    /// context switches and migrations came from each thread's own
    /// accounting; the reason names the clocks and the fix.
    ThreadAccounting(String),
    /// Turbo is on; the file that said so, and the tick clock that core
    /// cycles then differ from.
    TurboOn(String, ClockKind),
    /// A cpufreq governor other than performance.
    Governors(Vec<String>),
    /// The process may use fewer CPUs than are online.
    RestrictedAffinity { allowed: usize, online: usize },
    /// A study left out arms it cannot place here: which, and why.
    ArmsLeftOut(String),
    /// A study's arms span NUMA nodes: why (no node has the cores).
    ArmsSpanNodes(String),
    /// `--max-seconds` ended a command study before all its rounds ran.
    CutShort { done: usize, asked: usize },
    /// The host was noisy while the comparison was measured (see
    /// [`HostNoise::is_high`]).
    NoisyHost(HostNoise),
    /// A note as a saved file recorded it.
    Recorded(String),
}

/// The tick clock of the machine `topology` describes (which may be a
/// snapshot of another one): Arm machines (those with a MIDR) have the
/// generic timer, the others the TSC.
pub fn machine_tick_clock(topology: &Topology) -> ClockKind {
    if topology.midr.is_some() {
        ClockKind::GenericTimer
    } else {
        ClockKind::Tsc
    }
}

impl Warning {
    /// A note a study's view leaves out because the study says it better:
    /// that a hypervisor is named (by CPUID or the cpuinfo flag). Its
    /// evidence block names the hypervisor, and the study measured (or,
    /// ungated, says in its banner that it did not measure) what the note
    /// would send the user to measure. `topology`, which measures nothing,
    /// keeps it.
    pub fn said_by_the_study(&self) -> bool {
        match self {
            Warning::Hypervisor(_) | Warning::HypervisorFlag => true,
            // A saved document keeps the notes' words only: known by how
            // each of the two begins.
            Warning::Recorded(text) => {
                text.starts_with("running under a hypervisor (")
                    || text.starts_with("the kernel reports the hypervisor CPU flag:")
            }
            _ => false,
        }
    }

    /// The signal that stopped the study, where this is its note: as
    /// measured, or as read back from a saved document (its text).
    pub fn stop_signal(&self) -> Option<StopSignal> {
        match self {
            Warning::Incomplete(signal) => Some(*signal),
            Warning::Recorded(text) => StopSignal::ALL
                .into_iter()
                .find(|&signal| *text == Warning::Incomplete(signal).to_string()),
            _ => None,
        }
    }

    /// The notes about the machine itself, shared by every command.
    pub fn about_machine(topology: &Topology) -> Vec<Warning> {
        let mut out = Vec::new();
        let environment = &topology.environment;
        let cpuid = topology.cpuid.as_ref();
        let identity = hypervisor::identity(
            cpuid.map(|cpuid| cpuid.hypervisor_bit),
            cpuid.and_then(|cpuid| cpuid.hypervisor_name.as_deref()),
            &environment.hypervisor_sources,
        );
        if let Some(name) = &topology.summary.hypervisor {
            out.push(Warning::Hypervisor(name.clone()));
        } else if environment.hypervisor_flag == Some(true) {
            out.push(Warning::HypervisorFlag);
        } else if let Some(board) = environment.virtual_board() {
            out.push(Warning::Hypervisor(format!("{board}, by its device tree")));
        } else if let Some(vendor) = &identity.vendor {
            let by = identity.named_by.join(", ");
            out.push(Warning::Hypervisor(format!("{vendor}, named by {by}")));
        }
        out.extend(
            identity
                .disagreements
                .into_iter()
                .map(Warning::HypervisorEvidence),
        );
        if let Some(why) = &topology.summary.structure_unknown {
            out.push(Warning::UnknownStructure(why.clone()));
        }
        out.extend(
            topology
                .sibling_map_notes
                .iter()
                .cloned()
                .map(Warning::SiblingMap),
        );
        out.extend(topology.node_notes.iter().cloned().map(Warning::NodeFiles));
        if let Some(cross) = &topology.crosscheck {
            out.extend(
                cross
                    .mismatches
                    .iter()
                    .cloned()
                    .map(Warning::CpuidSysfsMismatch),
            );
        }
        let ticks = machine_tick_clock(topology);
        if !environment.hardware_pmu {
            out.push(Warning::NoHardwarePmu(ticks));
        }
        if environment.turbo == Some(true) {
            let source = environment.turbo_source.as_deref().unwrap_or("cpufreq");
            out.push(Warning::TurboOn(source.to_string(), ticks));
        }
        let governors = &environment.governors;
        if governors.iter().any(|g| g != "performance") {
            out.push(Warning::Governors(governors.clone()));
        }
        if topology.summary.allowed < topology.summary.cpus {
            out.push(Warning::RestrictedAffinity {
                allowed: topology.summary.allowed,
                online: topology.summary.cpus,
            });
        }
        out
    }
}

impl Warning {
    /// The note about how a measurement counted, where it is unusual: the
    /// thread's own accounting in place of perf's software events.
    pub fn about_setup(setup: &MeasurementSetup) -> Option<Warning> {
        match &setup.software_counters {
            SoftwareCounters::PerfEvents => None,
            SoftwareCounters::ThreadAccounting { reason } => {
                Some(Warning::ThreadAccounting(reason.clone()))
            }
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::Incomplete(signal) => write!(
                f,
                "INCOMPLETE: stopped by {}; only the repetitions done are here",
                signal.name()
            ),
            Warning::Hypervisor(name) => write!(
                f,
                "running under a hypervisor ({name}): the guest's sibling map is whatever the host \
                 chose to publish; only a measurement (`placement-study gate`) tells whether it is physical"
            ),
            Warning::HypervisorFlag => f.write_str(
                "the kernel reports the hypervisor CPU flag: this is a virtual machine; \
                 its sibling map may be fiction (run `placement-study gate`)",
            ),
            Warning::HypervisorEvidence(what) => write!(
                f,
                "the hypervisor evidence disagrees: {what}; identity is evidence only, \
                 a measurement (`placement-study gate`) decides"
            ),
            Warning::CpuidSysfsMismatch(what) => write!(f, "CPUID and sysfs disagree: {what}"),
            Warning::SiblingMap(what) => {
                write!(f, "the kernel's sibling map is inconsistent: {what}")
            }
            Warning::NodeFiles(what) => write!(f, "the kernel's NUMA node files disagree: {what}"),
            Warning::UnknownStructure(why) => write!(
                f,
                "the machine's structure is unknown: {why}; SMT can be neither confirmed nor ruled out"
            ),
            Warning::NoHardwarePmu(ticks) => write!(
                f,
                "no hardware PMU visible (no {} PMU in /sys/bus/event_source/devices): cycles and \
                 instructions cannot be counted; measurements fall back to {}",
                CPU_PMU_PREFIXES
                    .map(|prefix| format!("{prefix}*"))
                    .join(", "),
                ticks.unit()
            ),
            Warning::ThreadAccounting(reason) => f.write_str(reason),
            Warning::ArmsLeftOut(note) | Warning::ArmsSpanNodes(note) => f.write_str(note),
            Warning::CutShort { done, asked } => write!(
                f,
                "--max-seconds ended the study after {done} of its {asked} measured rounds: \
                 every number rests on those"
            ),
            Warning::TurboOn(source, ticks) => write!(
                f,
                "turbo is on ({source}): core cycles and {} differ; disable it for stable numbers",
                ticks.unit()
            ),
            Warning::Governors(governors) => write!(
                f,
                "cpufreq governor is {}: frequency may ramp during a measurement; \
                 `cpupower frequency-set -g performance` pins it",
                governors.join(", ")
            ),
            Warning::RestrictedAffinity { allowed, online } => write!(
                f,
                "this process may run on {allowed} of {online} online CPUs (cpuset or taskset)"
            ),
            Warning::NoisyHost(noise) => {
                write!(f, "the host was noisy: ")?;
                if let Some(drift) = noise.baseline_drift {
                    write!(
                        f,
                        "the baseline's speed moved {:.0} % between batches, ",
                        drift * 100.0
                    )?;
                }
                write!(
                    f,
                    "{} of {} rounds were flagged as host noise and left out; \
                     a quieter moment gives firmer numbers",
                    noise.noisy_rounds, noise.rounds
                )
            }
            Warning::Recorded(text) => f.write_str(text),
        }
    }
}

impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Written by hand, as its Serialize is: a warning is saved as its sentence,
/// and any string reads back (as [`Warning::Recorded`]).
impl schemars::JsonSchema for Warning {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Warning".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string"})
    }
}

impl<'de> Deserialize<'de> for Warning {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Warning, D::Error> {
        String::deserialize(deserializer).map(Warning::Recorded)
    }
}
