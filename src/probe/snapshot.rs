//! `snapshot DIR`: save this host's topology files and, on x86_64, a
//! per-CPU CPUID dump in the very formats `--sysfs-root` and `--cpuid-dump`
//! read back, so a machine can be sent for analysis (like
//! hwloc-gather-topology). An Arm machine's identity is in the saved tree:
//! each `cpuN/regs/identification/midr_el1` (and `revidr_el1`).
//!
//! The snapshot is written into `DIR.partial` and renamed to `DIR` only when
//! complete, so a folder named `DIR` is never a half-written snapshot.

use crate::cpuset::CpuSet;
use anyhow::{Context, Result, bail};
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Subfolder of a snapshot holding the CPUID dump (`puN` files).
pub const CPUID_DIR: &str = "cpuid";

/// Marks `DIR.partial` as this command's own, so a stale one may be removed.
const PARTIAL_MARKER: &str = ".placement-study-partial";

/// Folders copied recursively (symlinks are not followed, except the per-CPU
/// `cpufreq` link, whose target holds the frequencies). The CPU folder holds
/// the topology, caches, capacities and, on arm64, the MIDR registers.
const TREES: &[&str] = &[
    "sys/devices/system/cpu",
    "sys/devices/cpu_core",
    "sys/devices/cpu_atom",
    "sys/devices/cpu_lowpower",
    "sys/devices/system/clocksource/clocksource0",
];

/// Single files copied when present.
const FILES: &[&str] = &[
    "proc/cpuinfo",
    // The host's name: a topology document of the snapshot names the host
    // it was taken on, not the one that reads it.
    "proc/sys/kernel/hostname",
    "proc/sys/kernel/osrelease",
    "proc/sys/kernel/perf_event_paranoid",
    "proc/self/status",
    "sys/class/dmi/id/sys_vendor",
    "sys/class/dmi/id/product_name",
    "sys/firmware/devicetree/base/compatible",
];

/// Entries of sysfs folders that are never topology and can be huge or
/// slow to read.
const SKIP: &[&str] = &[
    "power",
    "subsystem",
    "driver",
    "firmware_node",
    "uevent",
    "hotplug",
    "microcode",
    "crash_notes",
    "crash_notes_size",
    "stats",
    "vulnerabilities",
    "cpuidle",
    "thermal_throttle",
    "perf_event_mux_interval_ms",
    "events",
    "format",
];

/// Saves the live system into `dir`, returning a one-line summary.
pub fn save(dir: &Path) -> Result<String> {
    if dir.exists()
        && fs::read_dir(dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        bail!(
            "{}: already exists and is not empty; name a new folder",
            dir.display()
        );
    }
    let partial = PathBuf::from(format!("{}.partial", dir.display()));
    if partial.exists() {
        // Only a folder this command left behind is removed: never a user's.
        if !partial.join(PARTIAL_MARKER).is_file() {
            bail!(
                "{}: already exists and was not left by placement-study snapshot; \
                 remove or rename it, or name another folder",
                partial.display()
            );
        }
        fs::remove_dir_all(&partial).with_context(|| {
            format!(
                "{}: cannot remove a stale partial snapshot",
                partial.display()
            )
        })?;
    }
    fs::create_dir_all(&partial)
        .with_context(|| format!("{}: cannot create", partial.display()))?;
    fs::write(partial.join(PARTIAL_MARKER), "")
        .with_context(|| format!("{}: cannot write", partial.join(PARTIAL_MARKER).display()))?;
    let copied = copy_topology_files(Path::new("/"), &partial)?;
    let online = fs::read_to_string("/sys/devices/system/cpu/online")
        .context("/sys/devices/system/cpu/online: cannot read the online CPUs")?;
    let online: CpuSet = crate::cpuset::parse_list(&online)
        .map_err(|e| anyhow::anyhow!("/sys/devices/system/cpu/online: {e}"))?;
    let cpuid_note = save_cpuid(&partial, &online)?;
    fs::remove_file(partial.join(PARTIAL_MARKER))
        .with_context(|| format!("{}: cannot finish the snapshot", partial.display()))?;
    if dir.exists() {
        fs::remove_dir(dir)
            .with_context(|| format!("{}: cannot replace the empty folder", dir.display()))?;
    }
    fs::rename(&partial, dir).with_context(|| {
        format!(
            "{}: cannot rename the finished snapshot into place",
            dir.display()
        )
    })?;
    Ok(format!(
        "saved {copied} files{cpuid_note} into {} (read back with --sysfs-root {})",
        dir.display(),
        dir.display()
    ))
}

/// Copies the topology files of the system whose `/` is `from` (the live
/// system's, or a snapshot's) into `to`, returning the number of files
/// copied. `snapshot` copies the live system with it; the benchmark of
/// generated machines, a generated tree.
pub fn copy_topology_files(from: &Path, to: &Path) -> Result<usize> {
    let mut copied = 0usize;
    for tree in TREES {
        copied += copy_tree(&from.join(tree), &to.join(tree))?;
    }
    for file in FILES {
        copied += copy_file(&from.join(file), &to.join(file))?;
    }
    copied += save_pmu_devices(from, to)?;
    Ok(copied)
}

/// Records each online CPU's CPUID into the snapshot's `cpuid/`; returns
/// the summary's note.
#[cfg(target_arch = "x86_64")]
fn save_cpuid(snapshot: &Path, online: &CpuSet) -> Result<String> {
    crate::probe::cpuid::write_dump(&snapshot.join(CPUID_DIR), online)?;
    Ok(format!(", CPUID of {} CPUs", online.len()))
}

/// CPUID is an x86 instruction: there is nothing to record.
#[cfg(not(target_arch = "x86_64"))]
fn save_cpuid(_snapshot: &Path, _online: &CpuSet) -> Result<String> {
    Ok(format!(
        ", no CPUID dump (CPUID is not part of {})",
        std::env::consts::ARCH
    ))
}

/// Copies a sysfs folder, returning the number of files copied. Files that
/// cannot be read (write-only, EIO from firmware) are skipped: sysfs has many.
fn copy_tree(from: &Path, to: &Path) -> Result<usize> {
    let entries = match fs::read_dir(from) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e).with_context(|| format!("{}: cannot list", from.display())),
    };
    fs::create_dir_all(to).with_context(|| format!("{}: cannot create", to.display()))?;
    let mut copied = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name_str = name.to_string_lossy();
        if SKIP.contains(&name_str.as_ref()) {
            continue;
        }
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() && name_str != "cpufreq" {
            continue;
        }
        // The entry's own type, without a stat per file; only the
        // cpufreq link is followed to see whether it leads to a folder.
        if kind.is_dir() || (kind.is_symlink() && path.is_dir()) {
            copied += copy_tree(&path, &to.join(&name))?;
        } else {
            copied += copy_file(&path, &to.join(&name))?;
        }
    }
    Ok(copied)
}

fn copy_file(from: &Path, to: &Path) -> Result<usize> {
    // sysfs files report a size of 4096 whatever they hold: read, don't copy.
    let Ok(content) = fs::read(from) else {
        return Ok(0);
    };
    // The folder is made only when writing finds it missing: inside a
    // copied tree it always exists, and a check per file is a system call
    // per file, of some 40 per CPU.
    let written = match fs::write(to, &content) {
        Err(e) if e.kind() == ErrorKind::NotFound => match to.parent() {
            Some(parent) => fs::create_dir_all(parent)
                .with_context(|| format!("{}: cannot create", parent.display()))
                .and_then(|()| Ok(fs::write(to, &content)?)),
            None => Err(e.into()),
        },
        other => other.map_err(Into::into),
    };
    written.with_context(|| format!("{}: cannot write", to.display()))?;
    Ok(1)
}

/// Records which PMUs are registered: one folder per event source with its
/// `type` and `cpus` files (the live entries are symlinks into /sys/devices).
fn save_pmu_devices(from: &Path, snapshot: &Path) -> Result<usize> {
    let devices = from.join("sys/bus/event_source/devices");
    let Ok(entries) = fs::read_dir(devices) else {
        return Ok(0);
    };
    let mut copied = 0;
    for entry in entries.flatten() {
        let to = snapshot
            .join("sys/bus/event_source/devices")
            .join(entry.file_name());
        fs::create_dir_all(&to).with_context(|| format!("{}: cannot create", to.display()))?;
        for file in ["type", "cpus"] {
            copied += copy_file(&entry.path().join(file), &to.join(file))?;
        }
    }
    Ok(copied)
}
