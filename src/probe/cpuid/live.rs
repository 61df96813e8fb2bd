//! The real CPUID instruction, executed on each CPU in turn.
//!
//! CPUID answers for the CPU that executes it (APIC id, core type, ...), so
//! one dedicated thread pins itself to each CPU, checks with `sched_getcpu()`
//! that it really runs there, and records the CPU. The thread exits when done,
//! so its affinity is never restored and the caller's threads are never moved.

use super::dump::CpuidRecord;
use crate::affinity::{allowed_cpus, current_cpu, pin_current_thread};
use crate::cpuset::CpuSet;
use anyhow::{Context, Result, anyhow, bail};

/// Records every CPU of `cpus` that the calling thread may run on, ascending.
///
/// CPUs outside its affinity mask (the process's, from taskset or a cgroup
/// cpuset, unless the caller pinned itself) are skipped; any other CPU that
/// cannot be pinned to is an error naming it.
pub fn record_cpus(cpus: &CpuSet) -> Result<Vec<(u32, CpuidRecord)>> {
    let allowed = allowed_cpus()?;
    let visit = cpus.intersection(&allowed);
    if visit.is_empty() {
        bail!(
            "no CPU to read CPUID on: none of CPUs [{cpus}] is among the allowed CPUs [{allowed}]"
        );
    }
    std::thread::Builder::new()
        .name("cpuid-reader".into())
        .spawn(move || visit.iter().map(|cpu| Ok((cpu, record_on(cpu)?))).collect())
        .context("cannot start the CPUID reader thread")?
        .join()
        .map_err(|_| anyhow!("the CPUID reader thread panicked"))?
}

/// Moves the calling thread to `cpu` and records its CPUID there.
fn record_on(cpu: u32) -> Result<CpuidRecord> {
    pin_current_thread(cpu).context("the CPUID reader")?;
    check_running_on(cpu)?;
    let record = record_this_cpu()?;
    // A hotplug or an outside affinity change could still have moved us.
    check_running_on(cpu)?;
    Ok(record)
}

fn check_running_on(cpu: u32) -> Result<()> {
    let running = current_cpu()?;
    if running != cpu {
        bail!("pinned the CPUID reader to CPU {cpu}, but it runs on CPU {running}");
    }
    Ok(())
}

fn record_this_cpu() -> Result<CpuidRecord> {
    Ok(super::record::record_cpu(&raw_cpuid::CpuIdReaderNative))
}
