//! Reading the kernel's view of the CPUs from a root folder: `/` on the
//! running system, or a saved snapshot (the folder holding `sys/` and
//! `proc/`, as `placement-study snapshot` or hwloc-gather-topology write it).
//!
//! Real sysfs files are messier than the documentation: values end in `\n`
//! or `\n\0`, some files are empty or say `(null)`, old kernels have no
//! `*_list` files (only hex masks) and no `cpu/online`. The readers here
//! absorb all of that; anything they cannot read becomes a one-line error
//! naming the file and what was expected.
//!
//! Cores and packages are identified by their CPU *sets*
//! (`core_cpus`/`thread_siblings`, `package_cpus`/`core_siblings`), never by
//! `core_id` or `physical_package_id`: those repeat across dies, are -1 on
//! s390 and sparse on ia64.

use crate::cpuset::{CpuSet, numbered_cpu, parse_list, parse_mask, trim_sysfs};
use anyhow::{Context, Result, anyhow, bail};
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The CPU folder, relative to the root.
pub const CPU_DIR: &str = "sys/devices/system/cpu";

/// The two ways the kernel writes a CPU set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetForm {
    /// `0-3,8-11` (files named `*_list`, `online`, `isolated`, ...).
    List,
    /// `000000ff,ffffffff` (`thread_siblings`, `shared_cpu_map`, ...).
    Mask,
}

/// A folder holding `sys/` and `proc/`, and the readers for files under it.
#[derive(Clone, Debug)]
pub struct SysfsRoot {
    root: PathBuf,
    live: bool,
}

impl SysfsRoot {
    /// The running system's `/`.
    pub fn live() -> Self {
        SysfsRoot {
            root: PathBuf::from("/"),
            live: true,
        }
    }

    /// A saved snapshot; fails unless `dir` holds `sys/devices/system/cpu`.
    pub fn snapshot(dir: &Path) -> Result<Self> {
        if !dir.is_dir() {
            bail!(
                "sysfs root {}: no such folder (expected a snapshot folder holding sys/ and proc/)",
                dir.display()
            );
        }
        let cpu_dir = dir.join(CPU_DIR);
        if !cpu_dir.is_dir() {
            bail!(
                "{}: no such folder (expected a snapshot folder holding sys/ and proc/)",
                cpu_dir.display()
            );
        }
        Ok(SysfsRoot {
            root: dir.to_path_buf(),
            live: false,
        })
    }

    /// Is this the running system (so process state such as affinity applies)?
    pub fn is_live(&self) -> bool {
        self.live
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The full path of a file given relative to the root.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// The file's text without sysfs padding; `None` when it does not exist.
    pub fn read_text(&self, relative: &str) -> Result<Option<String>> {
        self.read_text_bounded(relative, ATTRIBUTE_LIMIT, |_| false)
    }

    /// Like [`read_text`](Self::read_text), for files that are not plain
    /// attributes: at most `limit`, and only until `is_complete`.
    pub fn read_text_bounded(
        &self,
        relative: &str,
        limit: ReadLimit,
        is_complete: impl Fn(&[u8]) -> bool,
    ) -> Result<Option<String>> {
        let Some(bytes) = read_bounded(&self.path(relative), limit, is_complete)? else {
            return Ok(None);
        };
        Ok(Some(
            trim_sysfs(&String::from_utf8_lossy(&bytes)).to_owned(),
        ))
    }

    /// Like [`read_text`](Self::read_text), but an empty file or the
    /// kernel's `(null)` also reads as `None`.
    pub fn read_value(&self, relative: &str) -> Result<Option<String>> {
        Ok(self
            .read_text(relative)?
            .filter(|text| !text.is_empty() && text != "(null)"))
    }

    /// A value parsed as `T`; `what` says what was expected, for the error.
    pub fn read_parsed<T: FromStr>(&self, relative: &str, what: &str) -> Result<Option<T>> {
        let Some(text) = self.read_value(relative)? else {
            return Ok(None);
        };
        text.parse().map(Some).map_err(|_| {
            anyhow!(
                "{}: expected {what}, found '{text}'",
                self.path(relative).display()
            )
        })
    }

    /// A CPU set from the first of `candidates` that exists (newest file
    /// names first, masks after lists); `None` when none exists. An empty
    /// or `(null)` file gives the empty set.
    pub fn read_cpuset(&self, candidates: &[(&str, SetForm)]) -> Result<Option<CpuSet>> {
        Ok(self.read_first_cpuset(candidates)?.map(|(_, set)| set))
    }

    /// Like [`read_cpuset`](Self::read_cpuset), also saying which candidate
    /// held the set.
    pub fn read_first_cpuset(
        &self,
        candidates: &[(&str, SetForm)],
    ) -> Result<Option<(usize, CpuSet)>> {
        for (index, &(relative, form)) in candidates.iter().enumerate() {
            let Some(text) = self.read_text(relative)? else {
                continue;
            };
            if text == "(null)" {
                return Ok(Some((index, CpuSet::default())));
            }
            let parsed = match form {
                SetForm::List => parse_list(&text),
                SetForm::Mask => parse_mask(&text),
            };
            let set = parsed.map_err(|why| {
                let expected = match form {
                    SetForm::List => "a CPU list like 0-3,8-11",
                    SetForm::Mask => "a CPU mask like 000000ff,ffffffff",
                };
                anyhow!(
                    "{}: expected {expected}: {why}",
                    self.path(relative).display()
                )
            })?;
            return Ok(Some((index, set)));
        }
        Ok(None)
    }

    /// Names in a folder, unsorted; empty when the folder does not exist.
    pub fn list_dir(&self, relative: &str) -> Result<Vec<String>> {
        let path = self.path(relative);
        let entries = match std::fs::read_dir(&path) {
            Ok(entries) => entries,
            Err(e) if is_absent(&e) => return Ok(Vec::new()),
            Err(e) => return Err(e).with_context(|| format!("listing {}", path.display())),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.with_context(|| format!("listing {}", path.display()))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        Ok(names)
    }

    /// Does this file or folder exist?
    pub fn exists(&self, relative: &str) -> bool {
        self.path(relative).exists()
    }
}

/// How much of a file may be read, and what such a file is (for the error
/// when it is larger): nothing the probe reads is ever read unbounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimit {
    /// Larger files are refused (after reading at most one byte more).
    pub max_bytes: usize,
    /// What the file should have been, e.g. "a sysfs attribute file".
    pub expected: &'static str,
}

/// sysfs and procfs attribute files: the kernel writes at most a page
/// (4 KiB; a mask of 16384 CPUs is 4.6 KB), so 1 MiB is generous.
pub const ATTRIBUTE_LIMIT: ReadLimit = ReadLimit {
    max_bytes: 1 << 20,
    expected: "a sysfs attribute file",
};

/// Reads a file of at most `limit.max_bytes`, stopping early once
/// `is_complete` says the bytes so far hold all the caller needs; `None`
/// when the file does not exist.
///
/// Plain `read` calls: `std::fs::read` first asks for the size (two more
/// syscalls per file), which for sysfs is a meaningless 4096 and, over
/// thousands of tiny files, a third of the cost.
pub fn read_bounded(
    path: &Path,
    limit: ReadLimit,
    is_complete: impl Fn(&[u8]) -> bool,
) -> Result<Option<Vec<u8>>> {
    /// One page: every sysfs attribute in one read.
    const FIRST_READ: usize = 4096;
    let context = || format!("reading {}", path.display());
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if is_absent(&e) => return Ok(None),
        Err(e) => return Err(e).with_context(context),
    };
    let mut bytes = Vec::new();
    let mut filled = 0;
    loop {
        if filled == bytes.len() {
            // Doubling, up to one byte past the limit: that byte says "too large".
            let grown = (bytes.len() * 2).clamp(FIRST_READ, limit.max_bytes + 1);
            bytes.resize(grown, 0);
        }
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).with_context(context),
        }
        if filled > limit.max_bytes {
            bail!(
                "{}: larger than {}; not {}",
                path.display(),
                describe_bytes(limit.max_bytes),
                limit.expected
            );
        }
        if is_complete(&bytes[..filled]) {
            break;
        }
    }
    bytes.truncate(filled);
    Ok(Some(bytes))
}

/// `1 MiB`, `16 MiB`, or a byte count when not whole mebibytes.
fn describe_bytes(bytes: usize) -> String {
    if bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// Missing files, and paths through a file where a folder was expected,
/// both mean "the kernel does not publish this".
fn is_absent(error: &std::io::Error) -> bool {
    matches!(error.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
}

/// `N` from a `cpuN` folder name of the folder `parent` (relative); an
/// error naming the folder when N is not below
/// [`MAX_CPUS`](crate::cpuset::MAX_CPUS).
pub fn cpu_number(root: &SysfsRoot, parent: &str, name: &str) -> Result<Option<u32>> {
    numbered_cpu(name, "cpu").map_err(|why| {
        anyhow!(
            "{}: {why} (a corrupt snapshot?)",
            root.path(parent).display()
        )
    })
}

/// The online logical CPUs: `cpu/online`, or where an old kernel has none
/// (or it is empty), every `cpuN` folder whose own `online` file is missing,
/// empty or `1`.
pub fn online_cpus(root: &SysfsRoot) -> Result<CpuSet> {
    let online = root.read_cpuset(&[(&format!("{CPU_DIR}/online"), SetForm::List)])?;
    if let Some(set) = online.filter(|set| !set.is_empty()) {
        return Ok(set);
    }
    let mut cpus = Vec::new();
    for name in root.list_dir(CPU_DIR)? {
        let Some(cpu) = cpu_number(root, CPU_DIR, &name)? else {
            continue;
        };
        let relative = format!("{CPU_DIR}/{name}/online");
        match root.read_value(&relative)?.as_deref() {
            None | Some("1") => cpus.push(cpu),
            Some("0") => {}
            Some(other) => bail!(
                "{}: expected 0 or 1, found '{other}'",
                root.path(&relative).display()
            ),
        }
    }
    if cpus.is_empty() {
        bail!(
            "{}: no online CPU (expected an online file or cpuN folders)",
            root.path(CPU_DIR).display()
        );
    }
    Ok(CpuSet::from_cpus(cpus))
}

/// The kernel's sibling sets for one online CPU, restricted to online CPUs
/// and always containing the CPU itself.
#[derive(Clone, Debug, PartialEq)]
pub struct SiblingSets {
    pub cpu: u32,
    /// CPUs sharing its core (`core_cpus` / `thread_siblings`); the CPU
    /// alone when the kernel publishes neither.
    pub core: CpuSet,
    /// CPUs sharing its package (`package_cpus` / `core_siblings`).
    pub package: Option<CpuSet>,
    /// `die_cpus`, where the kernel publishes dies.
    pub die: Option<CpuSet>,
    /// `cluster_cpus`, where the kernel publishes clusters.
    pub cluster: Option<CpuSet>,
}

/// Reads [`SiblingSets`] for every online CPU (one file per set and CPU).
pub fn sibling_sets(root: &SysfsRoot, online: &CpuSet) -> Result<Vec<SiblingSets>> {
    // Newer names first: old kernels only have thread_siblings/core_siblings.
    let mut core = SetFiles::new(&[
        ("core_cpus_list", SetForm::List),
        ("core_cpus", SetForm::Mask),
        ("thread_siblings_list", SetForm::List),
        ("thread_siblings", SetForm::Mask),
    ]);
    let mut package = SetFiles::new(&[
        ("package_cpus_list", SetForm::List),
        ("package_cpus", SetForm::Mask),
        ("core_siblings_list", SetForm::List),
        ("core_siblings", SetForm::Mask),
    ]);
    let mut die = SetFiles::new(&[
        ("die_cpus_list", SetForm::List),
        ("die_cpus", SetForm::Mask),
    ]);
    let mut cluster = SetFiles::new(&[
        ("cluster_cpus_list", SetForm::List),
        ("cluster_cpus", SetForm::Mask),
    ]);
    online
        .iter()
        .map(|cpu| {
            let dir = format!("{CPU_DIR}/cpu{cpu}/topology");
            let read = |files: &mut SetFiles| -> Result<Option<CpuSet>> {
                Ok(restrict(files.read(root, &dir)?, cpu, online))
            };
            let core_set = match read(&mut core)? {
                Some(set) => set,
                None => {
                    require_cpu_folder(root, cpu)?;
                    CpuSet::from_cpus([cpu])
                }
            };
            Ok(SiblingSets {
                cpu,
                core: core_set,
                package: read(&mut package)?,
                die: read(&mut die)?,
                cluster: read(&mut cluster)?,
            })
        })
        .collect()
}

/// The files that may hold one kind of sibling set, in order of preference.
///
/// The kernel creates the same topology attributes for every CPU, so the
/// first CPU shows which file this kernel writes (or that it writes none);
/// later CPUs open that one directly instead of failing through the older
/// names, which on a large old machine would be thousands of failed opens.
struct SetFiles {
    candidates: Vec<(&'static str, SetForm)>,
    /// `None` until the first CPU was read; then which candidate it had.
    learnt: Option<Option<usize>>,
}

impl SetFiles {
    fn new(candidates: &[(&'static str, SetForm)]) -> Self {
        SetFiles {
            candidates: candidates.to_vec(),
            learnt: None,
        }
    }

    /// The set from the file this kernel writes, in the CPU's `dir`.
    fn read(&mut self, root: &SysfsRoot, dir: &str) -> Result<Option<CpuSet>> {
        if let Some(learnt) = self.learnt {
            let Some(index) = learnt else {
                return Ok(None);
            };
            let (name, form) = self.candidates[index];
            let path = format!("{dir}/{name}");
            if let Some(set) = root.read_cpuset(&[(&path, form)])? {
                return Ok(Some(set));
            }
        }
        let paths: Vec<(String, SetForm)> = self
            .candidates
            .iter()
            .map(|&(name, form)| (format!("{dir}/{name}"), form))
            .collect();
        let candidates: Vec<(&str, SetForm)> = paths
            .iter()
            .map(|(path, form)| (path.as_str(), *form))
            .collect();
        let found = root.read_first_cpuset(&candidates)?;
        self.learnt
            .get_or_insert(found.as_ref().map(|(index, _)| *index));
        Ok(found.map(|(_, set)| set))
    }
}

/// Keeps the online CPUs of a set read for `cpu`, with `cpu` itself always
/// in it; an empty (all-zero or `(null)`) set carries no information and
/// reads as absent.
fn restrict(set: Option<CpuSet>, cpu: u32, online: &CpuSet) -> Option<CpuSet> {
    let set = set.filter(|set| !set.is_empty())?;
    let mut kept = set.intersection(online);
    if !kept.contains(cpu) {
        kept = CpuSet::from_cpus(kept.iter().chain([cpu]));
    }
    Some(kept)
}

/// An online CPU without even a `cpuN` folder means a truncated snapshot.
fn require_cpu_folder(root: &SysfsRoot, cpu: u32) -> Result<()> {
    let relative = format!("{CPU_DIR}/cpu{cpu}");
    if root.exists(&relative) {
        Ok(())
    } else {
        bail!(
            "{}: no such folder, but {CPU_DIR}/online lists CPU {cpu} (expected a folder per online CPU)",
            root.path(&relative).display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stop_at_the_limit_and_when_complete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, vec![b'1'; 10_000]).unwrap();
        let limit = ReadLimit {
            max_bytes: 9_999,
            expected: "a test file",
        };
        let error = read_bounded(&path, limit, |_| false).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("big: larger than 9999 bytes; not a test file"),
            "{error:#}"
        );
        let limit = ReadLimit {
            max_bytes: 10_000,
            ..limit
        };
        let whole = read_bounded(&path, limit, |_| false).unwrap().unwrap();
        assert_eq!(whole.len(), 10_000);
        let first = read_bounded(&path, limit, |bytes| !bytes.is_empty()).unwrap();
        assert_eq!(first.unwrap().len(), 4096, "one read, then complete");
        assert_eq!(
            read_bounded(&dir.path().join("none"), limit, |_| false).unwrap(),
            None
        );
        assert_eq!(describe_bytes(1 << 20), "1 MiB");
    }

    #[test]
    fn restrict_keeps_online_cpus_and_the_cpu_itself() {
        let online = CpuSet::from_cpus([0, 1, 2, 5]);
        let read = Some(CpuSet::from_cpus([0, 4]));
        assert_eq!(restrict(read, 0, &online), Some(CpuSet::from_cpus([0])));
        let foreign = Some(CpuSet::from_cpus([3]));
        assert_eq!(restrict(foreign, 5, &online), Some(CpuSet::from_cpus([5])));
        assert_eq!(restrict(Some(CpuSet::default()), 1, &online), None);
    }
}
