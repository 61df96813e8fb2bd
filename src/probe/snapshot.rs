//! `snapshot DIR`: save this host's topology files and, on x86_64, a
//! per-CPU CPUID dump in the very formats `--sysfs-root` and `--cpuid-dump`
//! read back, so a machine can be sent for analysis (like
//! hwloc-gather-topology). An Arm machine's identity is in the saved tree:
//! each `cpuN/regs/identification/midr_el1` (and `revidr_el1`).
//!
//! The snapshot is written into `DIR.partial` and renamed to `DIR` only when
//! complete, so a folder named `DIR` is never a half-written snapshot.
//!
//! That folder is the faithful form (hwloc reads it too) but a slow one: a
//! file per sysfs attribute, some 340,000 on an 8192-CPU machine. A path
//! ending in `.json` ([`names_document`]) asks for the fast form instead,
//! one document of what probing the machine read (made in
//! `study::snapshot`; its target is checked here, by
//! [`check_new_document`]).

use crate::cpuset::CpuSet;
use crate::input::{Folder, is_absent, kind_of, read_bounded, read_bounded_in};
use crate::probe::environment::CPUINFO_LIMIT;
use crate::probe::hypervisor::{DMI_FILES, SOURCE_FILES, SOURCE_FOLDERS};
use crate::probe::nodes::{NODE_DIR, NODE_SET_FILES, PER_NODE_FILES};
use crate::probe::sysfs::{ATTRIBUTE_LIMIT, SysfsRoot, online_cpus};
use anyhow::{Context, Result, bail};
use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

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
    check_target(dir)?;
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
    removed_on_failure(&partial, || {
        let summary = write_snapshot(&partial)?;
        move_into_place(&partial, dir)?;
        Ok(format!(
            "saved {summary} into {} (read back with --sysfs-root {})",
            dir.display(),
            dir.display()
        ))
    })
}

/// Does `path` name a snapshot document (`….json`) rather than a folder?
/// For `--sysfs-root`, a folder of that name is a folder snapshot still.
pub fn names_document(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("json"))
}

/// `snapshot FILE.json` writes a new file: anything already under the name
/// is refused before anything is recorded, never replaced. A symbolic link
/// too, dangling or not, as for a folder.
pub fn check_new_document(path: &Path) -> Result<()> {
    let Some(kind) = existing_kind(path, "name a new file")? else {
        return Ok(());
    };
    if kind.is_dir() {
        bail!(
            "{}: is a folder; a .json snapshot is one new file: name a new file, or \
             the folder snapshot's folder without .json",
            path.display()
        );
    }
    bail!(
        "{}: already exists (a {}); name a new file, or remove it first",
        path.display(),
        kind_of(kind)
    )
}

/// What is at a snapshot's target `path` already: `None` where nothing
/// is; a symbolic link, dangling or not, is refused with `fix`, since the
/// finished snapshot is renamed onto the name, which would replace the
/// link, not fill what it points to.
fn existing_kind(path: &Path, fix: &str) -> Result<Option<fs::FileType>> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("{}: cannot look it up", path.display())),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        bail!(
            "{}: is a symbolic link{}; {fix}",
            path.display(),
            link_target(path)
        );
    }
    Ok(Some(kind))
}

/// " to TARGET" for a symbolic link, with ", which does not exist" when it
/// dangles.
fn link_target(link: &Path) -> String {
    let target = fs::read_link(link)
        .map(|target| target.display().to_string())
        .unwrap_or_default();
    let dangling = if link.exists() {
        ""
    } else {
        ", which does not exist"
    };
    format!(" to {target}{dangling}")
}

/// `snapshot` writes a new folder, or fills an empty one: a target that is
/// anything else is refused before anything is written. A symbolic link is
/// refused too, dangling or not: the finished snapshot is renamed onto the
/// name given, which would replace the link, not fill what it points to.
fn check_target(dir: &Path) -> Result<()> {
    let Some(kind) = existing_kind(dir, "name a new folder, or the folder itself")? else {
        return Ok(());
    };
    if !kind.is_dir() {
        bail!(
            "{}: is a {}, not a folder; name a new folder",
            dir.display(),
            kind_of(kind)
        );
    }
    let empty = fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list", dir.display()))?
        .next()
        .is_none();
    if !empty {
        bail!(
            "{}: already exists and is not empty; name a new folder",
            dir.display()
        );
    }
    Ok(())
}

/// Runs `work`, which fills the `partial` folder this command created; if
/// it fails, the folder goes, so no failure leaves a half-written snapshot
/// behind (the error is `work`'s: a folder that cannot be removed either
/// carries the marker, and the next snapshot removes it).
fn removed_on_failure<T>(partial: &Path, work: impl FnOnce() -> Result<T>) -> Result<T> {
    let result = work();
    if result.is_err() {
        let _ = fs::remove_dir_all(partial);
    }
    result
}

/// Writes the snapshot into the `partial` folder, returning what it saved
/// ("N files, CPUID of M CPUs").
fn write_snapshot(partial: &Path) -> Result<String> {
    fs::write(partial.join(PARTIAL_MARKER), "")
        .with_context(|| format!("{}: cannot write", partial.join(PARTIAL_MARKER).display()))?;
    let copied = copy_topology_files(Path::new("/"), partial)?;
    let online = online_cpus(&SysfsRoot::live())?;
    let cpuid_note = save_cpuid(partial, &online)?;
    fs::remove_file(partial.join(PARTIAL_MARKER))
        .with_context(|| format!("{}: cannot finish the snapshot", partial.display()))?;
    Ok(format!("{copied} files{cpuid_note}"))
}

/// Renames the finished snapshot onto `dir`, which is absent or the empty
/// folder [`check_target`] found.
fn move_into_place(partial: &Path, dir: &Path) -> Result<()> {
    if dir.exists() {
        fs::remove_dir(dir)
            .with_context(|| format!("{}: cannot replace the empty folder", dir.display()))?;
    }
    fs::rename(partial, dir).with_context(|| {
        format!(
            "{}: cannot rename the finished snapshot into place",
            dir.display()
        )
    })
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
    // The hypervisor evidence: DMI names, the device tree, lparcfg,
    // sysinfo, /sys/hypervisor and /proc/xen (see `hypervisor`).
    let evidence = DMI_FILES.iter().chain(&SOURCE_FILES);
    for file in FILES.iter().chain(evidence) {
        copied += copy_file(&from.join(file), &to.join(file))?;
    }
    // /proc/xen says "a Xen domain" by existing, empty or not; /proc/vz
    // without /proc/bc an OpenVZ container.
    for folder in SOURCE_FOLDERS {
        if from.join(folder).is_dir() {
            let copy = to.join(folder);
            fs::create_dir_all(&copy)
                .with_context(|| format!("{}: cannot create", copy.display()))?;
        }
    }
    copied += save_pmu_devices(from, to)?;
    copied += save_node_files(from, to)?;
    Ok(copied)
}

/// Records each online CPU's CPUID into the snapshot's `cpuid/`; returns
/// the summary's note.
#[cfg(target_arch = "x86_64")]
fn save_cpuid(snapshot: &Path, online: &CpuSet) -> Result<String> {
    crate::probe::cpuid::write_dump(&snapshot.join(crate::probe::recording::CPUID_DIR), online)?;
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
    // Files are opened from both folders held open: by full paths, the
    // kernel walked every folder of both again for each file.
    let source = match Folder::open(from) {
        Ok(folder) => folder,
        // Gone since it was listed (a CPU's caches go when it goes offline).
        Err(e) if is_absent(&e) => return Ok(0),
        Err(e) => return Err(e).with_context(|| format!("{}: cannot open", from.display())),
    };
    fs::create_dir_all(to).with_context(|| format!("{}: cannot create", to.display()))?;
    let target = Folder::open(to).with_context(|| format!("{}: cannot open", to.display()))?;
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
            copied += copy_file_in(&source, &target, Path::new(&name))?;
        }
    }
    Ok(copied)
}

/// Copies the file `name` of the folder `source` into `target`, read as
/// the probe reads it; one that cannot be read is skipped.
fn copy_file_in(source: &Folder, target: &Folder, name: &Path) -> Result<usize> {
    let Ok(Some(content)) = read_bounded_in(source, name, ATTRIBUTE_LIMIT, |_| false) else {
        return Ok(0);
    };
    target
        .create(name)
        .and_then(|mut file| file.write_all(&content))
        .with_context(|| format!("{}: cannot write", target.path().join(name).display()))?;
    Ok(1)
}

/// Copies one file, read as the probe reads it (bounded, regular files
/// only); one that cannot be read is skipped.
fn copy_file(from: &Path, to: &Path) -> Result<usize> {
    // sysfs files report a size of 4096 whatever they hold: read, don't copy.
    let limit = if from.ends_with("proc/cpuinfo") {
        CPUINFO_LIMIT
    } else {
        ATTRIBUTE_LIMIT
    };
    let Ok(Some(content)) = read_bounded(from, limit, |_| false) else {
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

/// Copies the NUMA node files the probe reads: the node-wide lists and
/// each `nodeN`'s CPUs, distances and meminfo (not the whole folder: its
/// memory blocks, hugepages and access classes are many and no topology).
fn save_node_files(from: &Path, snapshot: &Path) -> Result<usize> {
    let Ok(entries) = fs::read_dir(from.join(NODE_DIR)) else {
        return Ok(0);
    };
    let mut copied = 0;
    for file in NODE_SET_FILES {
        let relative = Path::new(NODE_DIR).join(file);
        copied += copy_file(&from.join(&relative), &snapshot.join(&relative))?;
    }
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with("node") {
            continue;
        }
        let to = snapshot.join(NODE_DIR).join(&name);
        fs::create_dir_all(&to).with_context(|| format!("{}: cannot create", to.display()))?;
        for file in PER_NODE_FILES {
            copied += copy_file(&entry.path().join(file), &to.join(file))?;
        }
    }
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The last step failing (here the rename, onto a folder that filled up
    /// meanwhile) still removes the partial folder.
    #[test]
    fn a_failed_rename_removes_the_partial_folder() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("host");
        let partial = dir.path().join("host.partial");
        fs::create_dir_all(partial.join("sys")).unwrap();
        fs::create_dir(&target).unwrap();
        fs::write(target.join("someone's"), "").unwrap();
        let error =
            removed_on_failure(&partial, || move_into_place(&partial, &target)).unwrap_err();
        assert!(
            format!("{error:#}").contains("cannot replace the empty folder"),
            "{error:#}"
        );
        assert!(!partial.exists());
        assert!(target.join("someone's").exists());
    }

    /// A folder snapshot of a machine with nodes probes to the same nodes.
    #[test]
    fn the_node_files_are_copied() {
        let machine = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sysfs/epyc-7543-nps4");
        let dir = tempfile::tempdir().unwrap();
        copy_topology_files(&machine, dir.path()).unwrap();
        let nodes = |root: &Path| crate::probe::probe(Some(root), None).unwrap().nodes;
        let copied = nodes(dir.path());
        assert_eq!(copied.len(), 4);
        assert_eq!(copied, nodes(&machine));
    }

    #[test]
    fn a_target_that_is_not_a_new_or_empty_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let absent = dir.path().join("new");
        check_target(&absent).unwrap();
        fs::create_dir(&absent).unwrap();
        check_target(&absent).unwrap();
        let file = dir.path().join("emptyf");
        fs::write(&file, "").unwrap();
        let refused = |path: &Path| format!("{:#}", check_target(path).unwrap_err());
        assert!(refused(&file).ends_with("emptyf: is a file, not a folder; name a new folder"));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&absent, &link).unwrap();
        assert!(refused(&link).contains("link: is a symbolic link to "));
        fs::write(absent.join("x"), "").unwrap();
        assert!(
            refused(&absent).ends_with("new: already exists and is not empty; name a new folder")
        );
    }
}
