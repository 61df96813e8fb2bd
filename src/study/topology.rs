//! The topology "study": nothing is measured, the probed machine becomes a
//! document with the same head as every other, so `report` re-renders
//! and compares it and `report --fleet` counts a fleet's machines.

use super::{host_name, unix_now};
use crate::probe::{SysfsRoot, Topology};
use crate::saved::TopologyResult;
use anyhow::Result;
use std::path::Path;

/// The document of `topology`, probed live or from the snapshot (folder
/// or document) `snapshot`. A snapshot is another host's: its name is the
/// one the snapshot saved (`proc/sys/kernel/hostname`), else the folder's
/// or document's, never the name of the host that reads it.
pub fn topology_document(
    topology: Topology,
    snapshot: Option<&SysfsRoot>,
) -> Result<TopologyResult> {
    let host = match snapshot {
        None => host_name(),
        Some(root) => snapshot_host(root)?,
    };
    Ok(TopologyResult::new(topology, host, unix_now()))
}

/// The name of the host a snapshot was taken on: the one it saved, else
/// its folder's name, or its document's without `.json`.
pub fn snapshot_host(root: &SysfsRoot) -> Result<String> {
    Ok(match root.read_value("proc/sys/kernel/hostname")? {
        Some(saved) => saved,
        None => folder_name(root.root(), root.is_document()),
    })
}

/// The last component of `folder` ("node07" for `snaps/node07/`, and for
/// a document `snaps/node07.json`), or the whole path when it has none
/// (`/`, `..`).
fn folder_name(folder: &Path, document: bool) -> String {
    let name = if document {
        folder.file_stem()
    } else {
        folder.file_name()
    };
    name.map_or_else(
        || folder.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::trace::opened_by;
    use crate::probe::{CpuidSource, probe};
    use std::fs;
    use std::path::PathBuf;
    use std::sync::mpsc;
    use std::time::Duration;

    /// What `topology` does with a snapshot (and, on x86_64, the CPUID
    /// dump in it) or a dump alone: probe, then name the host.
    #[derive(Clone)]
    struct Run {
        root: Option<PathBuf>,
        dump: Option<PathBuf>,
    }

    impl Run {
        fn document(&self) -> Result<TopologyResult> {
            let cpuid = self.dump.clone().map(CpuidSource::Dump);
            let topology = probe(self.root.as_deref(), cpuid.as_ref())?;
            let root = self.root.as_deref().map(SysfsRoot::snapshot).transpose()?;
            topology_document(topology, root.as_ref())
        }

        /// The document, or a failure if it takes longer than `limit`: a
        /// read that blocks never returns.
        fn document_within(&self, limit: Duration) -> Option<Result<TopologyResult>> {
            let (sender, receiver) = mpsc::channel();
            let run = self.clone();
            std::thread::spawn(move || {
                let _ = sender.send(run.document());
            });
            receiver.recv_timeout(limit).ok()
        }
    }

    /// Copies a fixture (files, folders, symlinks as symlinks).
    fn copy_tree(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for entry in fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            let kind = entry.file_type().unwrap();
            if kind.is_symlink() {
                let link = fs::read_link(entry.path()).unwrap();
                std::os::unix::fs::symlink(link, &target).unwrap();
            } else if kind.is_dir() {
                copy_tree(&entry.path(), &target);
            } else {
                fs::copy(entry.path(), &target).unwrap();
            }
        }
    }

    /// Puts a FIFO nobody writes to in place of each file `run` opens, in
    /// turn, as the reader recorded them (so no file is left out of the
    /// test): each must end in a one-line error naming it at once, never
    /// wait for a writer. Returns how many were tried.
    fn a_fifo_at_each_opened_file(run: &Run) -> usize {
        let (document, opened) = opened_by(|| run.document());
        document.unwrap_or_else(|e| panic!("the intact copy reads: {e:#}"));
        // Outside the tree, so no listing shows it.
        let aside_dir = tempfile::tempdir().unwrap();
        let aside = aside_dir.path().join("aside");
        let mut tried = 0;
        for path in &opened {
            // A file it looked for and did not find counts too, where its
            // folder exists.
            let existed = path.exists();
            if existed {
                fs::rename(path, &aside).unwrap();
            } else if !path.parent().is_some_and(Path::is_dir) {
                continue;
            }
            nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
            let Some(result) = run.document_within(Duration::from_secs(10)) else {
                panic!("{}: a FIFO here hangs topology", path.display());
            };
            let error = match result {
                Ok(_) => panic!("{}: a FIFO here goes unnoticed", path.display()),
                Err(error) => format!("{error:#}"),
            };
            // It names the FIFO, maybe by another name (through a link).
            assert!(!error.contains('\n'), "{error}");
            let named = error
                .split_once(": is a FIFO, not a")
                .and_then(|(before, _)| before.rsplit(": ").next())
                .unwrap_or_else(|| panic!("{}: {error}", path.display()));
            assert_eq!(
                fs::canonicalize(named).unwrap(),
                fs::canonicalize(path).unwrap(),
                "{error}"
            );
            fs::remove_file(path).unwrap();
            if existed {
                fs::rename(&aside, path).unwrap();
            }
            tried += 1;
        }
        tried
    }

    #[test]
    fn a_fifo_in_place_of_any_file_topology_reads_is_refused_at_once() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let scratch = tempfile::tempdir().unwrap();
        // A hybrid machine with cpufreq, caches, isolated and nohz_full
        // lists, and the files `snapshot` adds: the host's name, its
        // affinity and (x86_64) its CPUID dump.
        let root = scratch.path().join("alderlake");
        copy_tree(&fixtures.join("sysfs/alderlake-i5-12600K"), &root);
        fs::write(root.join("proc/sys/kernel/hostname"), "alderlake\n").unwrap();
        fs::create_dir_all(root.join("proc/self")).unwrap();
        fs::write(root.join("proc/self/status"), "Cpus_allowed_list:\t0-15\n").unwrap();
        let dump = cfg!(target_arch = "x86_64").then(|| root.join("cpuid"));
        if let Some(dump) = &dump {
            copy_tree(&fixtures.join("cpuid/alder-lake-i5-12600K"), dump);
        }
        let snapshot = Run {
            root: Some(root),
            dump: dump.clone(),
        };
        // Some 300 files: every CPU's sibling sets, caches and cpufreq.
        let tried = a_fifo_at_each_opened_file(&snapshot);
        assert!(tried > 100, "only {tried} files opened");
        // An Arm machine: MIDR registers, capacities, no CPUID.
        let arm = scratch.path().join("dgx-spark");
        copy_tree(&fixtures.join("sysfs/dgx-spark-gb10"), &arm);
        let arm = Run {
            root: Some(arm),
            dump: None,
        };
        let tried = a_fifo_at_each_opened_file(&arm);
        assert!(tried > 100, "only {tried} files opened");
        // A dump alone takes another path through the probe.
        if let Some(dump) = dump {
            let alone = Run {
                root: None,
                dump: Some(dump),
            };
            assert_eq!(a_fifo_at_each_opened_file(&alone), 16, "one per pu file");
        }
    }
}
