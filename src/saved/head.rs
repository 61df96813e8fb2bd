//! The head every saved document starts with: which command wrote it, on
//! which host and machine, and whether it ran to the end. One struct,
//! flattened into each document, so a new kind of document gets the same
//! head (and the same JSON fields) by naming it once.

use super::documents::{Evidence, RESULT_SCHEMA_VERSION};
use super::kinds::DocumentKind;
use crate::probe::{Environment, Summary, Topology};
use serde::{Deserialize, Serialize};

/// The fields every saved document opens with. In JSON they sit at the top
/// level, first, in this order (`#[serde(flatten)]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
