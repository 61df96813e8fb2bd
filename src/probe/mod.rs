//! Probe: read the machine into a [`Topology`].
//!
//! Everything that reads the system goes through a seam: sysfs/procfs under a
//! root folder ([`SysfsRoot`]), CPUID through a [`cpuid::CpuidSource`] (the
//! real instruction, pinned per CPU, or a recorded hwloc-gather-cpuid dump).

pub mod caches;
pub mod classes;
pub mod cpuid;
pub mod crosscheck;
pub mod environment;
pub mod model;
pub mod snapshot;
pub mod sysfs;

pub use model::*;
