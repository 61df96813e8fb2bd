//! CPU affinity of the calling thread, for any number of CPUs: the libc
//! `cpu_set_t` (and nix's wrapper of it) stops at 1024 CPUs, so the masks
//! here are sized to the CPU numbers involved.

use crate::cpuset::CpuSet;
use anyhow::{Context, Result, bail};
use std::io;

const WORD_BITS: usize = libc::c_ulong::BITS as usize;

/// The CPUs the calling thread may run on (`sched_getaffinity`): the mask
/// buffer grows until the kernel's fits.
pub fn allowed_cpus() -> Result<CpuSet> {
    const MAX_BYTES: usize = 1 << 20;
    let mut words: Vec<libc::c_ulong> = vec![0; 1024 / WORD_BITS];
    loop {
        let bytes = std::mem::size_of_val(words.as_slice());
        // SAFETY: the kernel writes at most `bytes` bytes into `words`,
        // which owns exactly that many; pid 0 is this thread.
        let written =
            unsafe { libc::syscall(libc::SYS_sched_getaffinity, 0, bytes, words.as_mut_ptr()) };
        if written >= 0 {
            let valid_words = (written as usize).div_ceil(std::mem::size_of::<libc::c_ulong>());
            let cpus = words[..valid_words.min(words.len())]
                .iter()
                .enumerate()
                .flat_map(|(index, &word)| {
                    (0..WORD_BITS)
                        .filter(move |bit| word & (1 << bit) != 0)
                        .map(move |bit| (index * WORD_BITS + bit) as u32)
                });
            return Ok(CpuSet::from_cpus(cpus));
        }
        let error = io::Error::last_os_error();
        // EINVAL: the buffer is smaller than the kernel's CPU mask.
        if error.raw_os_error() == Some(libc::EINVAL) && bytes < MAX_BYTES {
            words.resize(words.len() * 2, 0);
            continue;
        }
        return Err(error).context("sched_getaffinity of this thread");
    }
}

/// A CPU bitmap just large enough for `cpus`, as sched_setaffinity takes it.
fn mask_of(cpus: &CpuSet) -> Vec<libc::c_ulong> {
    let mut mask: Vec<libc::c_ulong> = vec![0; cpus.last().unwrap_or(0) as usize / WORD_BITS + 1];
    for cpu in cpus.iter() {
        mask[cpu as usize / WORD_BITS] |= 1 << (cpu as usize % WORD_BITS);
    }
    mask
}

/// sched_setaffinity of thread `tid` (0: the calling thread) to `cpus`.
fn set_affinity(tid: libc::pid_t, cpus: &CpuSet) -> io::Result<()> {
    let mask = mask_of(cpus);
    let bytes = std::mem::size_of_val(mask.as_slice());
    // SAFETY: the pointer and size describe `mask`, which outlives the call;
    // the kernel reads `bytes` bytes of it as a CPU bitmap.
    if unsafe { libc::sched_setaffinity(tid, bytes, mask.as_ptr().cast()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Pins the calling thread to one CPU, with a mask just large enough for it.
/// The error names the CPU and asks whether it is online and allowed.
pub fn pin_current_thread(cpu: u32) -> Result<()> {
    if let Err(error) = set_affinity(0, &CpuSet::from_cpus([cpu])) {
        bail!(
            "cannot pin to CPU {cpu}: sched_setaffinity: {error} \
             (is CPU {cpu} online and among this process's allowed CPUs?)"
        );
    }
    Ok(())
}

/// Confines process `pid` (its main thread; threads and children it makes
/// later inherit the mask) to `cpus`. The error names the CPUs.
pub fn confine_process(pid: libc::pid_t, cpus: &CpuSet) -> Result<()> {
    if let Err(error) = set_affinity(pid, cpus) {
        bail!(
            "cannot confine the command to CPUs {cpus}: sched_setaffinity: {error} \
             (are they online and among this process's allowed CPUs?)"
        );
    }
    Ok(())
}

/// The CPU the calling thread runs on now (`sched_getcpu`).
pub fn current_cpu() -> Result<u32> {
    let cpu = nix::sched::sched_getcpu().context("sched_getcpu failed")?;
    u32::try_from(cpu).context("sched_getcpu: CPU number out of range")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_to_an_allowed_cpu_lands_there() {
        let allowed = allowed_cpus().expect("sched_getaffinity works");
        let cpu = allowed.first().expect("some CPU is allowed");
        std::thread::spawn(move || {
            pin_current_thread(cpu).unwrap();
            assert_eq!(current_cpu().unwrap(), cpu);
            assert_eq!(allowed_cpus().unwrap().cpus(), &[cpu]);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn pinning_beyond_any_machine_is_an_error_naming_the_cpu() {
        let error = std::thread::spawn(|| pin_current_thread(100_000).unwrap_err())
            .join()
            .unwrap();
        assert!(error.to_string().contains("CPU 100000"), "{error}");
    }
}
