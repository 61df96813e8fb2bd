//! Inputs that are not what they claim to be, through the built binary:
//! a FIFO (which nobody writes to) where a file is read, an empty CPU list,
//! a `snapshot` target that is a file or a dangling link. Each gives a
//! one-line error naming the path, at once: none hangs, panics or leaves
//! anything behind. Every FIFO and link is made in a temporary folder.
//!
//! That a FIFO at *every* file `topology` opens is refused is checked in
//! the library (`study::topology`'s tests), from the list of the files the
//! reader opened; here are the cases the issue found, end to end.

use crate::common::copy_tree;
use nix::sys::stat::Mode;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CPU_DIR: &str = "sys/devices/system/cpu";

/// Runs the binary, killing it (and failing) if it takes longer than a few
/// seconds: a read that blocks never ends on its own. Returns the exit
/// status and stderr, which must be exactly one line.
fn one_line_error(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("placement-study {args:?} hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr:?}");
    assert!(stderr.starts_with("placement-study: "), "{stderr}");
    (output.status.code(), stderr)
}

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path)
}

fn fifo_in_place_of(path: &Path) {
    fs::remove_file(path).unwrap();
    nix::unistd::mkfifo(path, Mode::from_bits_truncate(0o600)).unwrap();
}

fn shown(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn a_fifo_at_online_cpuinfo_or_isolated_is_refused_at_once() {
    for file in [
        format!("{CPU_DIR}/online"),
        "proc/cpuinfo".to_string(),
        format!("{CPU_DIR}/isolated"),
    ] {
        let root = tempfile::tempdir().unwrap();
        copy_tree(&fixture("sysfs/alderlake-i5-12600K"), root.path());
        let fifo = root.path().join(&file);
        fifo_in_place_of(&fifo);
        let (status, stderr) =
            one_line_error(&["topology", "--sysfs-root", shown(root.path()), "--no-cpuid"]);
        assert_eq!(status, Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!("{}: is a FIFO, not a", fifo.display())),
            "{stderr}"
        );
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_fifo_as_a_cpuid_dump_file_is_refused_at_once() {
    let dump = tempfile::tempdir().unwrap();
    copy_tree(&fixture("cpuid/kvm-guest-2vcpu"), dump.path());
    let pu0 = dump.path().join("pu0");
    fifo_in_place_of(&pu0);
    let (status, stderr) = one_line_error(&["topology", "--cpuid-dump", shown(dump.path())]);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: is a FIFO, not a hwloc-gather-cpuid puN file",
            pu0.display()
        )),
        "{stderr}"
    );
}

#[test]
fn an_empty_online_list_is_an_error_not_a_missing_file() {
    let root = tempfile::tempdir().unwrap();
    copy_tree(&fixture("sysfs/kvm-guest-2cpu"), root.path());
    let online = root.path().join(CPU_DIR).join("online");
    fs::write(&online, "\n").unwrap();
    let (status, stderr) = one_line_error(&["topology", "--sysfs-root", shown(root.path())]);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("{}: empty", online.display())),
        "{stderr}"
    );
}

/// A saved document is read from a regular file, or from standard input:
/// what a FIFO or device holds can be redirected there.
#[test]
fn a_fifo_named_as_a_saved_document_says_to_redirect_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("gate.json");
    nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
    let (status, stderr) = one_line_error(&["report", shown(&fifo)]);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: is a FIFO, not a saved result; to read it all the same, give - and redirect it: - < {}",
            fifo.display(),
            fifo.display()
        )),
        "{stderr}"
    );
}

#[test]
fn snapshot_into_a_file_says_it_is_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("emptyf");
    fs::write(&file, "").unwrap();
    let (status, stderr) = one_line_error(&["snapshot", shown(&file)]);
    assert_eq!(status, Some(1));
    assert!(
        stderr.contains(&format!(
            "{}: is a file, not a folder; name a new folder",
            file.display()
        )),
        "{stderr}"
    );
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "nothing written"
    );
}

#[test]
fn snapshot_onto_a_dangling_link_is_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("LINK");
    std::os::unix::fs::symlink("nowhere", &link).unwrap();
    let (status, stderr) = one_line_error(&["snapshot", shown(&link)]);
    assert_eq!(status, Some(1));
    assert!(
        stderr.contains(&format!(
            "{}: is a symbolic link to nowhere, which does not exist",
            link.display()
        )),
        "{stderr}"
    );
    let left: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(left, ["LINK"], "nothing written, no LINK.partial");
}

/// `snapshot EMPTY/.` passes the checks (an empty folder), writes the whole
/// snapshot into `EMPTY/..partial`, then cannot replace `.`: the failure
/// at the very end still removes the partial folder.
#[test]
fn a_snapshot_that_fails_at_the_end_leaves_no_partial_folder() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("EMPTY");
    fs::create_dir(&empty).unwrap();
    let target = format!("{}/.", empty.display());
    let (status, stderr) = one_line_error(&["snapshot", &target]);
    assert_eq!(status, Some(1));
    assert!(
        stderr.contains("cannot replace the empty folder"),
        "{stderr}"
    );
    assert_eq!(fs::read_dir(&empty).unwrap().count(), 0, "{stderr}");
}

/// A fleet input named on the command line is a regular file too; the
/// lines of a FIFO go to standard input.
#[test]
fn a_fifo_named_as_a_fleet_input_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pdsh.out");
    nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
    let (status, stderr) = one_line_error(&["report", "--fleet", shown(&fifo)]);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "report --fleet: {}: is a FIFO, not a fleet input file; to read it all the same, \
             give - and redirect it: - < {}",
            fifo.display(),
            fifo.display()
        )),
        "{stderr}"
    );
}
