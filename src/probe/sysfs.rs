//! Reading the kernel's view of the CPUs from a root folder: `/` on the
//! running system, or a saved snapshot (the folder holding `sys/` and
//! `proc/`, as `placement-study snapshot` or hwloc-gather-topology write it),
//! or from a snapshot document (`snapshot FILE.json`): the [`Recording`] of
//! what a probe of a root read, which answers the same reads.
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
use crate::input::{Folder, ReadLimit, is_absent, read_bounded, read_bounded_in, too_large};
use crate::probe::recording::{FoundKind, RecordedBytes, Recording};
use crate::probe::sibling_map::make_partition;
use anyhow::{Context, Result, anyhow, bail};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::str::FromStr;

/// The CPU folder, relative to the root.
pub const CPU_DIR: &str = "sys/devices/system/cpu";

/// The two ways the kernel writes a CPU set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetForm {
    /// `0-3,8-11` (files named `*_list`, `online`, `isolated`, ...).
    List,
    /// `000000ff,ffffffff` (`thread_siblings`, `shared_cpu_map`, ...).
    Mask,
}

/// A folder holding `sys/` and `proc/`, and the readers for files under it.
///
/// Folders are listed at most once, and a file whose folder was listed is
/// opened only when the listing has it: on a large machine the probe would
/// otherwise spend its time failing to open files an old kernel never wrote
/// (a failed open costs a full path walk, and on tmpfs an allocation).
#[derive(Clone, Debug)]
pub struct SysfsRoot {
    /// The root folder, or the snapshot document's path.
    root: PathBuf,
    live: bool,
    /// A snapshot document's recording: every read is answered from it,
    /// none from the file system.
    document: Option<Rc<Recording>>,
    /// Where reads from the folder are recorded, when they are.
    recording: Option<RefCell<Recording>>,
    /// Folder (relative) → its names, sorted; empty for an absent folder.
    listings: RefCell<HashMap<String, Rc<[String]>>>,
    /// Every CPU set read so far, by its text: every CPU of a package
    /// names the same package set, which is parsed once and shared (see
    /// [`CpuSet`]), so that reading them all costs what their text costs.
    sets: RefCell<HashMap<(SetForm, String), CpuSet>>,
    /// The `cpuN` folder (relative) read from last, held open where it
    /// could be opened: the probe reads one CPU's files after another, and
    /// opening them from their CPU's folder spares the kernel the walk down
    /// to it (six folders) for each of them.
    cpu_folder: RefCell<Option<(String, Option<Rc<Folder>>)>>,
}

impl SysfsRoot {
    /// The running system's `/`.
    pub fn live() -> Self {
        SysfsRoot {
            root: PathBuf::from("/"),
            live: true,
            document: None,
            recording: None,
            listings: RefCell::default(),
            sets: RefCell::default(),
            cpu_folder: RefCell::default(),
        }
    }

    /// A saved snapshot; fails unless `dir` holds `sys/devices/system/cpu`.
    pub fn snapshot(dir: &Path) -> Result<Self> {
        if !dir.is_dir() {
            bail!(
                "sysfs root {}: no such folder (expected a snapshot folder holding sys/ and proc/, \
                 or a snapshot document FILE.json)",
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
            document: None,
            recording: None,
            listings: RefCell::default(),
            sets: RefCell::default(),
            cpu_folder: RefCell::default(),
        })
    }

    /// The snapshot folder `dir` (`/` for this machine's own files, read as
    /// a snapshot's), every read recorded: [`take_recording`] gives them.
    ///
    /// [`take_recording`]: Self::take_recording
    pub fn recording(dir: &Path) -> Result<Self> {
        Ok(SysfsRoot {
            recording: Some(RefCell::default()),
            ..SysfsRoot::snapshot(dir)?
        })
    }

    /// The reads recorded so far (none unless made by [`recording`]),
    /// leaving none.
    ///
    /// [`recording`]: Self::recording
    pub fn take_recording(&self) -> Recording {
        self.recording
            .as_ref()
            .map(RefCell::take)
            .unwrap_or_default()
    }

    /// The snapshot document at `path`, whose `recording` answers every
    /// read: a path it has no record of reads as absent.
    pub fn document(path: &Path, recording: Rc<Recording>) -> Self {
        SysfsRoot {
            root: path.to_path_buf(),
            live: false,
            document: Some(recording),
            recording: None,
            listings: RefCell::default(),
            sets: RefCell::default(),
            cpu_folder: RefCell::default(),
        }
    }

    /// Is this a snapshot document rather than a folder?
    pub fn is_document(&self) -> bool {
        self.document.is_some()
    }

    /// Is this the running system (so process state such as affinity applies)?
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// The root folder, or the snapshot document.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A file given relative to the root, named for a message: its full
    /// path, or in a snapshot document `host.json: sys/…`.
    pub fn name(&self, relative: &str) -> String {
        if self.is_document() {
            format!("{}: {relative}", self.root.display())
        } else {
            self.path(relative).display().to_string()
        }
    }

    /// The full path of a file of a root folder given relative to it.
    fn path(&self, relative: &str) -> PathBuf {
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
        if self.known_absent(relative) {
            return Ok(None);
        }
        let Some(bytes) = self.read_bytes(relative, limit, is_complete)? else {
            return Ok(None);
        };
        let mut text = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        // Trimmed in place: one allocation per file, not two.
        let trimmed = trim_sysfs(&text);
        let start = trimmed.as_ptr() as usize - text.as_ptr() as usize;
        let end = start + trimmed.len();
        text.truncate(end);
        text.drain(..start);
        Ok(Some(text))
    }

    /// The file's bytes: a snapshot document's record of them, or read
    /// from the folder (and recorded, when recording).
    fn read_bytes(
        &self,
        relative: &str,
        limit: ReadLimit,
        is_complete: impl Fn(&[u8]) -> bool,
    ) -> Result<Option<Vec<u8>>> {
        if let Some(document) = &self.document {
            let Some(recorded) = document.files.get(relative) else {
                return Ok(None);
            };
            // Bounded as the folder's file would be: a document may be
            // edited by hand.
            if recorded.0.len() > limit.max_bytes {
                bail!(too_large(self.name(relative), limit));
            }
            return Ok(Some(recorded.0.clone()));
        }
        let bytes = self.read_from_folder(relative, limit, is_complete)?;
        if let (Some(recording), Some(bytes)) = (&self.recording, &bytes) {
            let recorded = RecordedBytes(bytes.clone());
            recording
                .borrow_mut()
                .files
                .insert(relative.to_owned(), recorded);
        }
        Ok(bytes)
    }

    /// The file's bytes, opened from its CPU's folder when it is in one.
    fn read_from_folder(
        &self,
        relative: &str,
        limit: ReadLimit,
        is_complete: impl Fn(&[u8]) -> bool,
    ) -> Result<Option<Vec<u8>>> {
        if let Some((cpu_folder, inside)) = split_cpu_folder(relative) {
            let mut held = self.cpu_folder.borrow_mut();
            if held.as_ref().is_none_or(|(name, _)| name != cpu_folder) {
                // A folder that cannot be opened is read from as before, by
                // full paths, to fail (or find nothing) as those do.
                let opened = Folder::open(&self.path(cpu_folder)).ok().map(Rc::new);
                *held = Some((cpu_folder.to_owned(), opened));
            }
            if let Some((_, Some(folder))) = held.as_ref() {
                return read_bounded_in(folder, Path::new(inside), limit, is_complete);
            }
        }
        read_bounded(&self.path(relative), limit, is_complete)
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
        text.parse()
            .map(Some)
            .map_err(|_| anyhow!("{}: expected {what}, found '{text}'", self.name(relative)))
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
            let key = (form, text);
            if let Some(set) = self.sets.borrow().get(&key) {
                return Ok(Some((index, set.clone())));
            }
            let (form, text) = key;
            let parsed = match form {
                SetForm::List => parse_list(&text),
                SetForm::Mask => parse_mask(&text),
            };
            let set = parsed.map_err(|why| {
                let expected = match form {
                    SetForm::List => "a CPU list like 0-3,8-11",
                    SetForm::Mask => "a CPU mask like 000000ff,ffffffff",
                };
                anyhow!("{}: expected {expected}: {why}", self.name(relative))
            })?;
            self.sets.borrow_mut().insert((form, text), set.clone());
            return Ok(Some((index, set)));
        }
        Ok(None)
    }

    /// Names in a folder, sorted; empty when the folder does not exist.
    /// Listed once: later calls, and reads of files in it, use the listing.
    pub fn list_dir(&self, relative: &str) -> Result<Rc<[String]>> {
        if let Some(names) = self.listings.borrow().get(relative) {
            return Ok(Rc::clone(names));
        }
        let names: Rc<[String]> = if self.known_absent(relative) {
            Rc::new([])
        } else {
            self.read_dir(relative)?.into()
        };
        self.listings
            .borrow_mut()
            .insert(relative.to_owned(), Rc::clone(&names));
        Ok(names)
    }

    /// The names in a folder, sorted: a snapshot document's record of
    /// them, or listed (and recorded, when recording).
    fn read_dir(&self, relative: &str) -> Result<Vec<String>> {
        if let Some(document) = &self.document {
            return Ok(document.listings.get(relative).cloned().unwrap_or_default());
        }
        let names = self.list_folder(relative)?;
        if let (Some(recording), Some(names)) = (&self.recording, &names) {
            recording
                .borrow_mut()
                .listings
                .insert(relative.to_owned(), names.clone());
        }
        Ok(names.unwrap_or_default())
    }

    /// The names in a folder, sorted; `None` when it does not exist.
    fn list_folder(&self, relative: &str) -> Result<Option<Vec<String>>> {
        let path = self.path(relative);
        let entries = match std::fs::read_dir(&path) {
            Ok(entries) => entries,
            Err(e) if is_absent(&e) => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("listing {}", path.display())),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.with_context(|| format!("listing {}", path.display()))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort_unstable();
        Ok(Some(names))
    }

    /// Does a listing already made show that this path does not exist (its
    /// folder, or a folder above, lacks it)?
    fn known_absent(&self, relative: &str) -> bool {
        self.listing_says(relative) == Some(false)
    }

    /// What the listings already made say of a path: `Some(found)` when its
    /// own folder was listed, `Some(false)` when a folder above lacks the
    /// next step down, `None` when no listing tells.
    fn listing_says(&self, relative: &str) -> Option<bool> {
        let listings = self.listings.borrow();
        let mut path = relative;
        let mut own_folder = true;
        while let Some((folder, name)) = path.rsplit_once('/') {
            if let Some(names) = listings.get(folder) {
                let found = names.binary_search_by(|n| n.as_str().cmp(name)).is_ok();
                return (own_folder || !found).then_some(found);
            }
            path = folder;
            own_folder = false;
        }
        None
    }

    /// Does this file or folder exist? Answered from a listing when one
    /// tells.
    pub fn exists(&self, relative: &str) -> bool {
        self.listing_says(relative)
            .unwrap_or_else(|| self.look_up(relative).is_some())
    }

    /// Is this a folder (or a link to one)?
    pub fn is_dir(&self, relative: &str) -> bool {
        self.look_up(relative) == Some(FoundKind::Folder)
    }

    /// What the path is, asked of the file system (and recorded, when
    /// recording) or of a snapshot document's records; `None` when absent.
    fn look_up(&self, relative: &str) -> Option<FoundKind> {
        if let Some(document) = &self.document {
            if document.listings.contains_key(relative) {
                return Some(FoundKind::Folder);
            }
            if document.files.contains_key(relative) {
                return Some(FoundKind::Other);
            }
            return document.found.get(relative).copied();
        }
        let meta = std::fs::metadata(self.path(relative)).ok()?;
        let kind = if meta.is_dir() {
            FoundKind::Folder
        } else {
            FoundKind::Other
        };
        if let Some(recording) = &self.recording {
            recording
                .borrow_mut()
                .found
                .insert(relative.to_owned(), kind);
        }
        Some(kind)
    }
}

/// A path under a CPU's folder split into that folder
/// (`sys/devices/system/cpu/cpuN`) and the path inside it.
fn split_cpu_folder(relative: &str) -> Option<(&str, &str)> {
    let below = relative.strip_prefix(CPU_DIR)?.strip_prefix("/cpu")?;
    let digits = below.find('/')?;
    if digits == 0 || !below[..digits].bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let end = relative.len() - below.len() + digits;
    Some((&relative[..end], &relative[end + 1..]))
}

/// sysfs and procfs attribute files: the kernel writes at most a page
/// (4 KiB; a mask of 16384 CPUs is 4.6 KB), so 1 MiB is generous.
pub const ATTRIBUTE_LIMIT: ReadLimit = ReadLimit {
    max_bytes: 1 << 20,
    expected: "a sysfs attribute file",
};

/// `N` from a `cpuN` folder name of the folder `parent` (relative); an
/// error naming the folder when N is not below
/// [`MAX_CPUS`](crate::cpuset::MAX_CPUS).
pub fn cpu_number(root: &SysfsRoot, parent: &str, name: &str) -> Result<Option<u32>> {
    numbered_cpu(name, "cpu")
        .map_err(|why| anyhow!("{}: {why} (a corrupt snapshot?)", root.name(parent)))
}

/// The online logical CPUs: `cpu/online`, or where an old kernel has none,
/// every `cpuN` folder whose own `online` file is missing, empty or `1`.
/// An empty `cpu/online` is an error: the kernel always lists the CPU it
/// runs on, so it is a damaged snapshot, not a machine.
pub fn online_cpus(root: &SysfsRoot) -> Result<CpuSet> {
    // Listed first: it also says which of the CPU-wide files exist.
    let names = root.list_dir(CPU_DIR)?;
    let online_file = format!("{CPU_DIR}/online");
    if let Some(set) = root.read_cpuset(&[(&online_file, SetForm::List)])? {
        if set.is_empty() {
            bail!(
                "{}: empty, but a running kernel lists at least the CPU it runs on \
                 (expected a CPU list like 0-3; a damaged snapshot?)",
                root.name(&online_file)
            );
        }
        return Ok(set);
    }
    let mut cpus = Vec::new();
    for name in names.iter() {
        let Some(cpu) = cpu_number(root, CPU_DIR, name)? else {
            continue;
        };
        let folder = format!("{CPU_DIR}/{name}");
        root.list_dir(&folder)?;
        let relative = format!("{folder}/online");
        match root.read_value(&relative)?.as_deref() {
            None | Some("1") => cpus.push(cpu),
            Some("0") => {}
            Some(other) => bail!("{}: expected 0 or 1, found '{other}'", root.name(&relative)),
        }
    }
    if cpus.is_empty() {
        bail!(
            "{}: no online CPU (expected an online file or cpuN folders)",
            root.name(CPU_DIR)
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

/// The kernel's sibling sets of every online CPU, made a partition.
#[derive(Clone, Debug, PartialEq)]
pub struct SiblingMap {
    /// One per online CPU, ascending. No CPU is in two cores or two
    /// packages: sets that overlapped are merged.
    pub cpus: Vec<SiblingSets>,
    /// One line per asymmetric or overlapping set found (see
    /// [`make_partition`]); empty for a sane kernel.
    pub notes: Vec<String>,
    /// Why which CPUs share a core is unknown: some online CPU's folder
    /// has no core set (its `topology/` is missing, or `cpuN` is not a
    /// folder). Such a CPU is entered as a core of its own, which says
    /// nothing: `None` when every CPU has its core set.
    pub cores_unknown: Option<String>,
}

/// Where each kind of set may be, newest names first (old kernels only have
/// `thread_siblings`/`core_siblings`), lists before masks.
const CORE_FILES: [(&str, SetForm); 4] = [
    ("core_cpus_list", SetForm::List),
    ("core_cpus", SetForm::Mask),
    ("thread_siblings_list", SetForm::List),
    ("thread_siblings", SetForm::Mask),
];
const PACKAGE_FILES: [(&str, SetForm); 4] = [
    ("package_cpus_list", SetForm::List),
    ("package_cpus", SetForm::Mask),
    ("core_siblings_list", SetForm::List),
    ("core_siblings", SetForm::Mask),
];
const DIE_FILES: [(&str, SetForm); 2] = [
    ("die_cpus_list", SetForm::List),
    ("die_cpus", SetForm::Mask),
];
const CLUSTER_FILES: [(&str, SetForm); 2] = [
    ("cluster_cpus_list", SetForm::List),
    ("cluster_cpus", SetForm::Mask),
];

/// Reads the [`SiblingMap`] of the online CPUs, one file per set and CPU.
pub fn sibling_sets(root: &SysfsRoot, online: &CpuSet) -> Result<SiblingMap> {
    let mut core = SetFiles::new(&CORE_FILES);
    let mut package = SetFiles::new(&PACKAGE_FILES);
    let mut die = SetFiles::new(&DIE_FILES);
    let mut cluster = SetFiles::new(&CLUSTER_FILES);
    let mut cpus = Vec::with_capacity(online.len());
    let mut core_files = Vec::with_capacity(online.len());
    let mut package_files = Vec::with_capacity(online.len());
    let mut without_core = Vec::new();
    let mut online_only = OnlineOnly::new(online);
    for cpu in online.iter() {
        let cpu_dir = format!("{CPU_DIR}/cpu{cpu}");
        if !root.exists(&cpu_dir) {
            bail!(
                "{}: no such folder, but {CPU_DIR}/online lists CPU {cpu} (expected a folder per online CPU)",
                root.name(&cpu_dir)
            );
        }
        let dir = format!("{cpu_dir}/topology");
        let mut read = |files: &mut SetFiles| -> Result<Option<(&'static str, CpuSet)>> {
            let Some((name, set)) = files.read(root, &dir)? else {
                return Ok(None);
            };
            Ok(restrict(Some(set), cpu, &mut online_only).map(|set| (name, set)))
        };
        // Every CPU is looked at on its own: a kernel writes a core set for
        // every CPU, so one without is a damaged folder, not a kernel that
        // writes none.
        let core_read = match read(&mut core)? {
            Some(read) => Some(read),
            None => read(&mut SetFiles::new(&CORE_FILES))?,
        };
        let (core_file, core_set) = core_read.unwrap_or_else(|| {
            without_core.push(cpu);
            ("(missing) core_cpus", CpuSet::from_cpus([cpu]))
        });
        let package_set = read(&mut package)?;
        core_files.push(core_file);
        package_files.push(package_set.as_ref().map(|(name, _)| *name));
        cpus.push(SiblingSets {
            cpu,
            core: core_set,
            package: package_set.map(|(_, set)| set),
            die: read(&mut die)?.map(|(_, set)| set),
            cluster: read(&mut cluster)?.map(|(_, set)| set),
        });
    }

    let numbers: Vec<u32> = online.iter().collect();
    let mut cores: Vec<CpuSet> = cpus.iter().map(|s| s.core.clone()).collect();
    let mut notes = make_partition(&numbers, &mut cores, &core_files, "core");
    for (sets, core) in cpus.iter_mut().zip(cores) {
        sets.core = core;
    }
    // Packages only where every CPU has one: a missing one is the machine's.
    if let Some(files) = package_files.iter().copied().collect::<Option<Vec<&str>>>() {
        let mut packages: Vec<CpuSet> = cpus.iter().filter_map(|s| s.package.clone()).collect();
        notes.extend(make_partition(&numbers, &mut packages, &files, "package"));
        for (sets, package) in cpus.iter_mut().zip(packages) {
            sets.package = Some(package);
        }
    }
    // One online CPU shares its core with no other, files or not (a
    // uniprocessor kernel may write no topology folder at all).
    let cores_unknown = if online.len() > 1 {
        describe_missing_cores(root, &without_core)
    } else {
        None
    };
    Ok(SiblingMap {
        cpus,
        notes,
        cores_unknown,
    })
}

/// Why the cores are unknown, naming the CPUs without a core set and any
/// `cpuN` that is not a folder; `None` when there are none.
fn describe_missing_cores(root: &SysfsRoot, without_core: &[u32]) -> Option<String> {
    let first = *without_core.first()?;
    let cpus = CpuSet::from_cpus(without_core.iter().copied());
    let not_folders = CpuSet::from_cpus(
        without_core
            .iter()
            .copied()
            .filter(|cpu| !root.is_dir(&format!("{CPU_DIR}/cpu{cpu}"))),
    );
    let mut why = format!(
        "no core sibling set for CPU{} {cpus} (expected {}/topology/core_cpus_list or thread_siblings)",
        if cpus.len() == 1 { "" } else { "s" },
        root.name(&format!("{CPU_DIR}/cpu{first}")),
    );
    if !not_folders.is_empty() {
        why.push_str(&format!("; cpuN is not a folder for N = {not_folders}"));
    }
    Some(why)
}

/// The files that may hold one kind of CPU set, in order of preference,
/// and which of them this kernel writes.
///
/// The kernel creates the same attributes in every CPU's folder, so the
/// first folder's listing shows which file it writes (or that it writes
/// none); later folders open that one directly. A folder that lacks it
/// (a damaged snapshot) is listed in turn and its best file read: no
/// folder costs more than its listing and the one file read, and none
/// tries the older names one failed open at a time.
pub struct SetFiles {
    candidates: &'static [(&'static str, SetForm)],
    /// `None` until a first folder was listed; then which candidate it had.
    learnt: Option<Option<usize>>,
}

impl SetFiles {
    pub fn new(candidates: &'static [(&'static str, SetForm)]) -> Self {
        SetFiles {
            candidates,
            learnt: None,
        }
    }

    /// The set in `dir` (relative) and the name of the file it came from;
    /// `None` when the folder has none of the candidates (or, past the
    /// first folder, when the first had none).
    pub fn read(&mut self, root: &SysfsRoot, dir: &str) -> Result<Option<(&'static str, CpuSet)>> {
        if let Some(learnt) = self.learnt {
            let Some(index) = learnt else {
                return Ok(None);
            };
            let (name, form) = self.candidates[index];
            if let Some(set) = root.read_cpuset(&[(&format!("{dir}/{name}"), form)])? {
                return Ok(Some((name, set)));
            }
        }
        let names = root.list_dir(dir)?;
        let found = self
            .candidates
            .iter()
            .position(|(name, _)| names.binary_search_by(|n| n.as_str().cmp(name)).is_ok());
        self.learnt.get_or_insert(found);
        let Some(index) = found else {
            return Ok(None);
        };
        let (name, form) = self.candidates[index];
        let set = root.read_cpuset(&[(&format!("{dir}/{name}"), form)])?;
        Ok(set.map(|set| (name, set)))
    }
}

/// The online CPUs of the sets read, each distinct set restricted once.
///
/// Every CPU of a package reads the same (shared) package set; where the
/// online CPUs are not one range (SMT off on a machine numbering siblings
/// side by side), restricting it anew for each CPU would cost time and
/// memory quadratic in the CPU count.
pub struct OnlineOnly<'a> {
    online: &'a CpuSet,
    /// Set read → its online CPUs. Ordered, not hashed: finding a shared
    /// set compares it in constant time (see [`CpuSet`]).
    restricted: BTreeMap<CpuSet, CpuSet>,
}

impl<'a> OnlineOnly<'a> {
    pub fn new(online: &'a CpuSet) -> Self {
        OnlineOnly {
            online,
            restricted: BTreeMap::new(),
        }
    }

    /// The online CPUs of `set`.
    pub fn of(&mut self, set: CpuSet) -> CpuSet {
        let online = self.online;
        self.restricted
            .entry(set)
            .or_insert_with_key(|set| set.intersection(online))
            .clone()
    }
}

/// Keeps the online CPUs of a set read for `cpu`, with `cpu` itself always
/// in it; an empty (all-zero or `(null)`) set carries no information and
/// reads as absent.
fn restrict(set: Option<CpuSet>, cpu: u32, online: &mut OnlineOnly) -> Option<CpuSet> {
    let set = set.filter(|set| !set.is_empty())?;
    let mut kept = online.of(set);
    if !kept.contains(cpu) {
        kept = CpuSet::from_cpus(kept.iter().chain([cpu]));
    }
    Some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_in_a_cpu_folder_are_split_at_it() {
        let cpu = format!("{CPU_DIR}/cpu12");
        assert_eq!(
            split_cpu_folder(&format!("{cpu}/cache/index0/level")),
            Some((cpu.as_str(), "cache/index0/level"))
        );
        assert_eq!(split_cpu_folder(&format!("{CPU_DIR}/cpufreq/boost")), None);
        assert_eq!(split_cpu_folder(&format!("{CPU_DIR}/cpu/x")), None);
        assert_eq!(split_cpu_folder(&cpu), None);
        assert_eq!(split_cpu_folder(&format!("{CPU_DIR}/online")), None);
    }

    /// Files under a CPU's folder are opened from the folder held open,
    /// and read as by their full path: here the folder is moved away after
    /// its first file was read, and its next file is still found in it.
    #[test]
    fn a_cpu_folder_is_held_open_for_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let cpu0 = dir.path().join(CPU_DIR).join("cpu0");
        std::fs::create_dir_all(cpu0.join("topology")).unwrap();
        std::fs::write(cpu0.join("topology/core_id"), "0\n").unwrap();
        std::fs::write(cpu0.join("topology/die_id"), "3\n").unwrap();
        let root = SysfsRoot::snapshot(dir.path()).unwrap();
        let read = |name: &str| root.read_text(&format!("{CPU_DIR}/cpu0/topology/{name}"));
        assert_eq!(read("core_id").unwrap().as_deref(), Some("0"));
        std::fs::rename(&cpu0, dir.path().join("moved")).unwrap();
        assert_eq!(read("die_id").unwrap().as_deref(), Some("3"));
        assert_eq!(read("absent").unwrap(), None);
    }

    /// A recording answers every read as the folder did, also where the
    /// probe asked the file system itself (no listing telling), and reads
    /// what it never recorded as absent.
    #[test]
    fn a_recording_answers_every_read_as_the_folder_did() {
        let dir = tempfile::tempdir().unwrap();
        let cpus = dir.path().join(CPU_DIR);
        std::fs::create_dir_all(cpus.join("cpu0/topology")).unwrap();
        std::fs::write(cpus.join("cpu0/topology/core_id"), "0\n").unwrap();
        std::fs::write(cpus.join("cpu1"), "not a folder").unwrap();
        std::fs::write(cpus.join("online"), "0-1\n").unwrap();
        let cpu = |path: &str| format!("{CPU_DIR}/{path}");
        let ask = |root: &SysfsRoot| {
            (
                root.exists(&cpu("cpu0")),
                root.is_dir(&cpu("cpu0")),
                root.is_dir(&cpu("cpu1")),
                root.exists(&cpu("cpu2")),
                root.read_text(&cpu("cpu0/topology/core_id")).unwrap(),
                root.read_text(&cpu("cpu0/topology/die_id")).unwrap(),
                root.list_dir(&cpu("cpu0/topology")).unwrap(),
                root.list_dir(&cpu("cpu7")).unwrap(),
            )
        };
        let recorder = SysfsRoot::recording(dir.path()).unwrap();
        let from_folder = ask(&recorder);
        assert_eq!(
            from_folder,
            (
                true,
                true,
                false,
                false,
                Some("0".into()),
                None,
                Rc::from(["core_id".to_owned()]),
                Rc::from([])
            )
        );
        let recording = Rc::new(recorder.take_recording());
        let document = SysfsRoot::document(Path::new("host.json"), recording);
        assert_eq!(ask(&document), from_folder);
        assert_eq!(
            document.read_text(&cpu("online")).unwrap(),
            None,
            "never read"
        );
        assert_eq!(
            document.name(&cpu("online")),
            format!("host.json: {CPU_DIR}/online")
        );
    }

    #[test]
    fn restrict_keeps_online_cpus_and_the_cpu_itself() {
        let online = CpuSet::from_cpus([0, 1, 2, 5]);
        let online = &mut OnlineOnly::new(&online);
        let read = Some(CpuSet::from_cpus([0, 4]));
        assert_eq!(restrict(read, 0, online), Some(CpuSet::from_cpus([0])));
        let foreign = Some(CpuSet::from_cpus([3]));
        assert_eq!(restrict(foreign, 5, online), Some(CpuSet::from_cpus([5])));
        assert_eq!(restrict(Some(CpuSet::default()), 1, online), None);
        let shared = CpuSet::from_cpus([0, 1, 2, 3, 4, 5]);
        assert_eq!(online.of(shared.clone()), CpuSet::from_cpus([0, 1, 2, 5]));
        assert_eq!(online.restricted.len(), 3, "each distinct set once");
        online.of(shared);
        assert_eq!(online.restricted.len(), 3);
    }
}
