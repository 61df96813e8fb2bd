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

/// Pins the calling thread to one CPU, with a mask just large enough for it.
/// The error names the CPU and asks whether it is online and allowed.
pub fn pin_current_thread(cpu: u32) -> Result<()> {
    let mut mask: Vec<libc::c_ulong> = vec![0; cpu as usize / WORD_BITS + 1];
    mask[cpu as usize / WORD_BITS] |= 1 << (cpu as usize % WORD_BITS);
    let bytes = std::mem::size_of_val(mask.as_slice());
    // SAFETY: the pointer and size describe `mask`, which outlives the call;
    // the kernel reads `bytes` bytes of it as a CPU bitmap.
    let rc = unsafe { libc::sched_setaffinity(0, bytes, mask.as_ptr().cast()) };
    if rc != 0 {
        let error = io::Error::last_os_error();
        bail!(
            "cannot pin to CPU {cpu}: sched_setaffinity: {error} \
             (is CPU {cpu} online and among this process's allowed CPUs?)"
        );
    }
    Ok(())
}

/// The CPU the calling thread runs on now (`sched_getcpu`).
pub fn current_cpu() -> Result<u32> {
    // SAFETY: sched_getcpu takes no arguments and only reads state.
    let cpu = unsafe { libc::sched_getcpu() };
    if cpu < 0 {
        return Err(io::Error::last_os_error()).context("sched_getcpu failed");
    }
    Ok(cpu as u32)
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
