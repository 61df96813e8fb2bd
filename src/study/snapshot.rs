//! `snapshot FILE.json`: the machine's topology files as one document, the
//! [`SnapshotResult`] of what probing it read. Recording costs the probe
//! little (the bytes it read, kept), and writing one file costs what its
//! text costs, where the folder snapshot creates a file per attribute.

use super::topology::snapshot_host;
use super::unix_now;
use crate::cpuset::CpuSet;
use crate::probe::recording::Recording;
use crate::probe::{SysfsRoot, probe_root};
use crate::saved::SnapshotResult;
use anyhow::Result;
use std::path::Path;

/// Records what probing the root folder `root` reads (`/`: this machine's
/// files, as a folder snapshot of it holds them) and, with `cpuid`, this
/// host's CPUID on each online CPU. The machine in the head is the one
/// probed while recording (without CPUID: the dump is recorded, not
/// decoded, so as not to probe twice).
pub fn record_snapshot(root: &Path, cpuid: bool) -> Result<SnapshotResult> {
    let started = unix_now();
    let recorder = SysfsRoot::recording(root)?;
    let topology = probe_root(&recorder, None)?;
    let host = snapshot_host(&recorder)?;
    let mut recording = recorder.take_recording();
    if cpuid {
        let online = CpuSet::from_cpus(topology.cpus.iter().map(|entry| entry.cpu));
        record_cpuid(&mut recording, &online)?;
    }
    Ok(SnapshotResult::new(recording, &topology, host, started))
}

#[cfg(target_arch = "x86_64")]
fn record_cpuid(recording: &mut Recording, online: &CpuSet) -> Result<()> {
    crate::probe::cpuid::record_dump(recording, online)
}

/// CPUID is an x86 instruction: [`record_snapshot`]'s caller asks for it
/// only on x86_64.
#[cfg(not(target_arch = "x86_64"))]
fn record_cpuid(_recording: &mut Recording, _online: &CpuSet) -> Result<()> {
    anyhow::bail!(
        "CPUID is an x86 instruction: a {} snapshot has none",
        std::env::consts::ARCH
    )
}
