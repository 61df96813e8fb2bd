//! The head every saved document starts with: which command wrote it, on
//! which host and machine, and whether it ran to the end. One struct,
//! flattened into each document, so a new kind of document gets the same
//! head (and the same JSON fields) by naming it once.

use super::kinds::DocumentKind;
use crate::probe::hypervisor::HypervisorSource;
use crate::probe::{Crosscheck, Environment, Summary, Topology};
use serde::{Deserialize, Serialize};

/// The schema version of every saved result this build writes and reads.
pub const RESULT_SCHEMA_VERSION: u32 = 1;

/// Facts that suggest a VM, shown next to the gate's verdict but never
/// deciding it: only the measurement decides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evidence {
    pub cpuid_hypervisor_bit: Option<bool>,
    pub cpuid_hypervisor_signature: Option<String>,
    pub cpuid_hypervisor_name: Option<String>,
    /// The `hypervisor` flag in /proc/cpuinfo.
    pub cpuinfo_hypervisor_flag: Option<bool>,
    pub dmi_vendor: Option<String>,
    pub dmi_product: Option<String>,
    pub crosscheck: Option<Crosscheck>,
    /// Why there is no CPUID (its bit and the cpuinfo flag with it): "not
    /// part of aarch64". Absent in files of x86 builds before 0.2.0.
    #[serde(default)]
    pub cpuid_absent: Option<String>,
    /// The device tree's root `compatible` strings ("linux,dummy-virt" is
    /// QEMU's virt machine); `None` without a device tree.
    #[serde(default)]
    pub devicetree_compatible: Option<String>,
    /// What each file that can name a hypervisor says (the topology's
    /// `environment.hypervisor_sources`); empty in files before it.
    #[serde(default)]
    pub hypervisor_sources: Vec<HypervisorSource>,
}

impl Evidence {
    /// The evidence the probe found on `topology`.
    pub fn of(topology: &Topology) -> Evidence {
        let cpuid = topology.cpuid.as_ref();
        Evidence {
            cpuid_hypervisor_bit: cpuid.map(|c| c.hypervisor_bit),
            cpuid_hypervisor_signature: cpuid.and_then(|c| c.hypervisor_signature.clone()),
            cpuid_hypervisor_name: cpuid.and_then(|c| c.hypervisor_name.clone()),
            cpuinfo_hypervisor_flag: topology.environment.hypervisor_flag,
            dmi_vendor: topology.environment.dmi_vendor.clone(),
            dmi_product: topology.environment.dmi_product.clone(),
            crosscheck: topology.crosscheck.clone(),
            cpuid_absent: topology.source.cpuid_absent.clone(),
            devicetree_compatible: topology.environment.devicetree_compatible.clone(),
            hypervisor_sources: topology.environment.hypervisor_sources.clone(),
        }
    }
}

/// The fields every saved document opens with. In JSON they sit at the top
/// level, first, in this order (`#[serde(flatten)]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DocumentHead {
    /// [`RESULT_SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    pub kind: DocumentKind,
    /// The placement-study version that wrote it.
    pub tool_version: String,
    /// The host's name ("unknown" when it has none, or when a gate saved
    /// before 0.2.0 did not record it).
    pub host: String,
    /// Seconds since the Unix epoch when the study started; `None` only in
    /// a gate saved before 0.2.0, which did not record it.
    #[serde(default)]
    pub started_unix: Option<u64>,
    /// False when a stop signal ended the study before it was done; files
    /// written before this field existed were always complete.
    #[serde(default = "complete_by_default")]
    pub complete: bool,
    /// The CPU's name: CPUID's brand string, the cores the MIDR names, or
    /// cpuinfo's model name.
    pub model: Option<String>,
    /// The probed machine in one line: CPUs, cores, packages, SMT; `None`
    /// only in a gate saved before 0.2.0, which did not record it.
    #[serde(default)]
    pub topology: Option<Summary>,
    /// The kernel, SMT control, frequency settings. Absent from files
    /// written before it was recorded.
    #[serde(default)]
    pub environment: Option<Environment>,
    /// What the machine says about itself, shown beside every verdict but
    /// never deciding one.
    pub evidence: Evidence,
}

/// Files written before `complete` existed were always complete.
fn complete_by_default() -> bool {
    true
}

/// The host name of a document that could not record one.
pub const UNKNOWN_HOST: &str = "unknown";

impl DocumentHead {
    /// The host's name, unless it was not recorded ([`UNKNOWN_HOST`]).
    pub fn known_host(&self) -> Option<&str> {
        (self.host != UNKNOWN_HOST).then_some(self.host.as_str())
    }

    /// The head of a `kind` document about `topology`, measured on `host`
    /// from `started_unix` on; complete until a study says otherwise.
    pub fn new(kind: DocumentKind, topology: &Topology, host: String, started_unix: u64) -> Self {
        DocumentHead {
            schema_version: RESULT_SCHEMA_VERSION,
            kind,
            tool_version: env!("CARGO_PKG_VERSION").into(),
            host,
            started_unix: Some(started_unix),
            complete: true,
            model: topology.cpu_name(),
            topology: Some(topology.summary.clone()),
            environment: Some(topology.environment.clone()),
            evidence: Evidence::of(topology),
        }
    }
}
