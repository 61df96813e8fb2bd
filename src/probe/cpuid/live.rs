//! The real CPUID instruction, executed on each CPU in turn.
//!
//! CPUID answers for the CPU that executes it (APIC id, core type, ...), so
//! one dedicated thread pins itself to each CPU, checks with `sched_getcpu()`
//! that it really runs there, and records the CPU. The thread exits when done,
//! so its affinity is never restored and the caller's threads are never moved.

use super::dump::CpuidRecord;
use crate::cpuset::CpuSet;
use anyhow::{Context, Result, anyhow, bail};
use std::io;

/// Records every CPU of `cpus` that the calling thread may run on, ascending.
///
/// CPUs outside its affinity mask (the process's, from taskset or a cgroup
/// cpuset, unless the caller pinned itself) are skipped; any other CPU that
/// cannot be pinned to is an error naming it.
pub fn record_cpus(cpus: &CpuSet) -> Result<Vec<(u32, CpuidRecord)>> {
    let allowed = allowed_cpus().context("cannot read this thread's CPU affinity")?;
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
    pin_current_thread(cpu).with_context(|| format!("cannot pin the CPUID reader to CPU {cpu}"))?;
    check_running_on(cpu)?;
    let record = record_this_cpu()?;
    // A hotplug or an outside affinity change could still have moved us.
    check_running_on(cpu)?;
    Ok(record)
}

fn check_running_on(cpu: u32) -> Result<()> {
    // SAFETY: sched_getcpu takes no arguments and only reads state.
    let running = unsafe { libc::sched_getcpu() };
    if running < 0 {
        return Err(io::Error::last_os_error()).context("sched_getcpu failed");
    }
    if running as u32 != cpu {
        bail!("pinned the CPUID reader to CPU {cpu}, but it runs on CPU {running}");
    }
    Ok(())
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn record_this_cpu() -> Result<CpuidRecord> {
    Ok(super::record::record_cpu(&raw_cpuid::CpuIdReaderNative))
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn record_this_cpu() -> Result<CpuidRecord> {
    bail!("CPUID exists only on x86 processors; read a recorded dump with --cpuid-dump instead")
}

/// Bytes in a CPU mask covering CPUs `0..=cpu`, in whole `c_ulong` words as
/// the kernel wants them.
fn mask_words_for(cpu: u32) -> usize {
    cpu as usize / libc::c_ulong::BITS as usize + 1
}

/// Pins the calling thread to one CPU, with a mask sized for that CPU (so it
/// works above the 1024 CPUs of a fixed `cpu_set_t`).
fn pin_current_thread(cpu: u32) -> io::Result<()> {
    let bits = libc::c_ulong::BITS;
    let mut mask: Vec<libc::c_ulong> = vec![0; mask_words_for(cpu)];
    mask[(cpu / bits) as usize] |= 1 << (cpu % bits);
    let bytes = std::mem::size_of_val(mask.as_slice());
    // SAFETY: the pointer and size describe `mask`, which outlives the call;
    // the kernel reads `bytes` bytes of it as a CPU bitmap.
    let rc = unsafe { libc::sched_setaffinity(0, bytes, mask.as_ptr().cast()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The calling thread's affinity mask, however many CPUs the kernel has:
/// the buffer grows until the kernel stops answering EINVAL ("too small").
fn allowed_cpus() -> io::Result<CpuSet> {
    let bits = libc::c_ulong::BITS;
    let mut words = mask_words_for(1023);
    loop {
        let mut mask: Vec<libc::c_ulong> = vec![0; words];
        let bytes = std::mem::size_of_val(mask.as_slice());
        // SAFETY: the pointer and size describe `mask`, which outlives the
        // call; the kernel writes at most `bytes` bytes into it.
        let rc = unsafe { libc::sched_getaffinity(0, bytes, mask.as_mut_ptr().cast()) };
        if rc == 0 {
            let cpus = mask.iter().enumerate().flat_map(|(index, word)| {
                (0..bits)
                    .filter(move |bit| word & (1 << bit) != 0)
                    .map(move |bit| index as u32 * bits + bit)
            });
            return Ok(CpuSet::from_cpus(cpus));
        }
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EINVAL) || words > 1 << 16 {
            return Err(error);
        }
        words *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_cover_the_cpu() {
        let bits = libc::c_ulong::BITS as usize;
        assert_eq!(mask_words_for(0), 1);
        assert_eq!(mask_words_for(bits as u32 - 1), 1);
        assert_eq!(mask_words_for(bits as u32), 2);
    }

    #[test]
    fn this_thread_may_run_somewhere() {
        assert!(!allowed_cpus().unwrap().is_empty());
    }
}
