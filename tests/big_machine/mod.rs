//! Generated machines of any size, written as a sysfs snapshot folder (the
//! layout `--sysfs-root` reads and `snapshot` writes), for the benchmark of
//! probing cost against CPU count and the tests that a large machine probes
//! right.
//!
//! The layout follows a large x86 server: CPUs are numbered first threads
//! first (core `c` has CPUs `c` and `c + cores`), every file the kernel
//! writes for a set comes as both list and mask, and each CPU has an L1d,
//! L1i and L2 of its core and an L3 of its die.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

/// The shape of a generated machine.
#[derive(Clone, Copy, Debug)]
pub struct BigMachine {
    /// Logical CPUs: a multiple of `threads_per_core * cores_per_die`.
    pub cpus: u32,
    pub threads_per_core: u32,
    pub cores_per_die: u32,
    pub dies_per_package: u32,
}

impl BigMachine {
    /// A machine of `cpus` CPUs: two threads per core, 32 cores per die,
    /// two dies per package.
    pub fn with_cpus(cpus: u32) -> Self {
        BigMachine {
            cpus,
            threads_per_core: 2,
            cores_per_die: 32,
            dies_per_package: 2,
        }
    }

    /// A machine of `cpus` CPUs in one package and die, two threads per
    /// core: every CPU's package set and L3 hold all CPUs.
    pub fn one_package(cpus: u32) -> Self {
        BigMachine {
            cpus,
            threads_per_core: 2,
            cores_per_die: cpus / 2,
            dies_per_package: 1,
        }
    }

    pub fn cores(&self) -> u32 {
        self.cpus / self.threads_per_core
    }

    /// The CPUs of one core, die or package (`of` numbers cores, dies or
    /// packages; `cores` is how many cores each holds).
    fn cpus_of(&self, of: u32, cores: u32) -> Vec<u32> {
        let first = of * cores;
        let last = (first + cores).min(self.cores());
        (0..self.threads_per_core)
            .flat_map(|thread| (first..last).map(move |core| core + thread * self.cores()))
            .collect()
    }

    /// Writes the machine under `root` (which must exist).
    pub fn write(&self, root: &Path) -> io::Result<()> {
        let cpu_dir = root.join("sys/devices/system/cpu");
        fs::create_dir_all(&cpu_dir)?;
        let all = format!("0-{}", self.cpus - 1);
        for name in ["online", "possible", "present"] {
            fs::write(cpu_dir.join(name), format!("{all}\n"))?;
        }
        fs::create_dir_all(cpu_dir.join("smt"))?;
        fs::write(cpu_dir.join("smt/control"), "on\n")?;
        fs::write(cpu_dir.join("smt/active"), "1\n")?;
        let cores_per_package = self.cores_per_die * self.dies_per_package;
        let mut cpuinfo = String::new();
        for cpu in 0..self.cpus {
            let core = cpu % self.cores();
            let die = core / self.cores_per_die;
            let package = die / self.dies_per_package;
            let core_cpus = self.cpus_of(core, 1);
            let die_cpus = self.cpus_of(die, self.cores_per_die);
            let package_cpus = self.cpus_of(package, cores_per_package);
            let dir = cpu_dir.join(format!("cpu{cpu}"));
            let topology = dir.join("topology");
            fs::create_dir_all(&topology)?;
            fs::write(dir.join("online"), "1\n")?;
            for (names, set) in [
                (["core_cpus", "thread_siblings"], &core_cpus),
                (["die_cpus", "die_cpus"], &die_cpus),
                (["package_cpus", "core_siblings"], &package_cpus),
            ] {
                for name in names {
                    fs::write(topology.join(format!("{name}_list")), list(set))?;
                    fs::write(topology.join(name), mask(set, self.cpus))?;
                }
            }
            for (name, value) in [
                ("core_id", core % self.cores_per_die),
                ("die_id", die % self.dies_per_package),
                ("physical_package_id", package),
            ] {
                fs::write(topology.join(name), format!("{value}\n"))?;
            }
            for (index, level, kind, size, shared) in [
                (0, 1, "Data", "48K", &core_cpus),
                (1, 1, "Instruction", "32K", &core_cpus),
                (2, 2, "Unified", "2048K", &core_cpus),
                (3, 3, "Unified", "65536K", &die_cpus),
            ] {
                let cache = dir.join(format!("cache/index{index}"));
                fs::create_dir_all(&cache)?;
                for (name, value) in [
                    ("level", level.to_string()),
                    ("type", kind.to_owned()),
                    ("size", size.to_owned()),
                    ("coherency_line_size", "64".to_owned()),
                    ("ways_of_associativity", "16".to_owned()),
                ] {
                    fs::write(cache.join(name), format!("{value}\n"))?;
                }
                fs::write(cache.join("shared_cpu_list"), list(shared))?;
                fs::write(cache.join("shared_cpu_map"), mask(shared, self.cpus))?;
            }
            let _ = write!(
                cpuinfo,
                "processor\t: {cpu}\nvendor_id\t: GenuineIntel\nmodel name\t: Generated CPU\n\
                 physical id\t: {package}\ncore id\t\t: {core}\nflags\t\t: fpu ht\n\n"
            );
        }
        let kernel = root.join("proc/sys/kernel");
        fs::create_dir_all(&kernel)?;
        fs::write(root.join("proc/cpuinfo"), cpuinfo)?;
        fs::write(kernel.join("osrelease"), "6.8.0-generated\n")?;
        Ok(())
    }
}

/// The kernel's list form with its newline, e.g. `0-31,4096-4127\n`.
fn list(cpus: &[u32]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    let mut text = String::new();
    let mut at = 0;
    while at < sorted.len() {
        let start = sorted[at];
        while at + 1 < sorted.len() && sorted[at + 1] == sorted[at] + 1 {
            at += 1;
        }
        if !text.is_empty() {
            text.push(',');
        }
        match sorted[at] {
            end if end == start => {
                let _ = write!(text, "{start}");
            }
            end => {
                let _ = write!(text, "{start}-{end}");
            }
        }
        at += 1;
    }
    text.push('\n');
    text
}

/// The kernel's mask form, as wide as the machine: 32-bit words, most
/// significant first.
fn mask(cpus: &[u32], width: u32) -> String {
    let mut words = vec![0u32; width.div_ceil(32) as usize];
    for &cpu in cpus {
        words[(cpu / 32) as usize] |= 1 << (cpu % 32);
    }
    let words: Vec<String> = words.iter().rev().map(|w| format!("{w:08x}")).collect();
    format!("{}\n", words.join(","))
}
