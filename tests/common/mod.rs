//! What the integration tests share: the short study and the short `pairs`
//! search the CLI tests run, the check that this machine can run them, and
//! this test binary run again on one test (for process-wide state).

use std::process::Command;

/// A short two-worker study that needs neither SMT nor a PMU: one worker
/// per core on CPUs 0 and 1, against both on one CPU. Add the outputs.
pub const TWO_WORKER_RUN: &[&str] = &[
    "run",
    "--skip-gate",
    "--workers",
    "2",
    "--arms",
    "one-per-core,same-cpu",
    "--reps",
    "3",
    "--warmups",
    "1",
    "--rep-ms",
    "5",
];

/// A short `pairs` search: one batch of six rounds a comparison, no
/// pause and no warm-ups, so a host with many CPUs is quick too. Add the
/// outputs.
pub const SHORT_PAIRS: &[&str] = &[
    "pairs",
    "--rep-ms",
    "5",
    "--warmups",
    "0",
    "--min-reps",
    "6",
    "--max-reps",
    "6",
    "--batches",
    "1",
    "--max-batches",
    "1",
    "--batch-gap",
    "0",
];

/// Whether [`TWO_WORKER_RUN`] can place its workers here (CPUs 0 and 1
/// allowed); otherwise says why the caller skips.
pub fn two_cpus_allowed() -> bool {
    let allowed = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
    let both = (0..2).all(|cpu| allowed.is_set(cpu).unwrap_or(false));
    if !both {
        eprintln!("skipping: the two-worker run needs CPUs 0 and 1 allowed");
    }
    both
}

/// This test binary, run again on the one test `name` of the module whose
/// `module_path!()` is `module_path`, ignored or not (add `--nocapture`, an
/// environment, what to check). For a test that changes process-wide state
/// (signal handlers, the stop flag, what stdout is open on): every test
/// module shares this process, so such a test runs in a child.
pub fn rerun_test(module_path: &str, name: &str) -> Command {
    // Test names leave out the crate's own name: `tests::saved_io` holds
    // `saved_io::NAME`.
    let module = module_path
        .split_once("::")
        .map_or(module_path, |(_, module)| module);
    let mut command = Command::new(std::env::current_exe().expect("this test binary's path"));
    command.args(["--exact", &format!("{module}::{name}"), "--include-ignored"]);
    command
}

/// Copies a fixture tree (files, folders, symlinks as symlinks) into a
/// scratch folder, for a test to break one thing in it.
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("create folder");
    for entry in std::fs::read_dir(from).expect("read fixture folder") {
        let entry = entry.expect("fixture entry");
        let target = to.join(entry.file_name());
        let kind = entry.file_type().expect("file type");
        if kind.is_symlink() {
            let link = std::fs::read_link(entry.path()).expect("read link");
            std::os::unix::fs::symlink(link, &target).expect("symlink");
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// Held by every test that measures on this machine's CPUs, for as long
/// as it runs: two at once would load each other's CPUs (a pinned worker
/// sharing its CPU is left out of the statistics, and a run with none left
/// is invalid), which made such tests fail under `cargo test`'s threads.
pub fn cpus_to_myself() -> std::sync::MutexGuard<'static, ()> {
    static CPUS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    CPUS.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The check `name` of a saved document (its `checks`), which must be
/// there.
pub fn saved_check<'a>(saved: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    saved["checks"]
        .as_array()
        .expect("a document with checks")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {}", saved["checks"]))
}

/// Runs the binary with `args`, standard input from `/dev/null`, and
/// returns what it did.
pub fn placement_study(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the binary runs")
}

/// The folders of `fixtures/KIND` (saved machines: `sysfs`, `cpuid`),
/// sorted.
pub fn fixture_folders(kind: &str) -> Vec<std::path::PathBuf> {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut folders: Vec<std::path::PathBuf> = std::fs::read_dir(fixtures.join(kind))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    folders.sort();
    folders
}

/// `run` with one arm, one thread, no gate, no warm-ups and 2 repetitions:
/// the fastest real study.
pub const QUICK_RUN: [&str; 9] = [
    "--skip-gate",
    "--arms",
    "one-per-core",
    "--threads",
    "1",
    "--warmups",
    "0",
    "--reps",
    "2",
];
