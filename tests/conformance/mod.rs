//! The conformance corpus beside the repository: `../shared/conformance/hwloc`
//! (hwloc's test suite; README there), its manifests and its tarballs.
//!
//! Shared by `tests/conformance_*.rs` and `benches/probe.rs`:
//! [`Corpus::find`] locates the corpus (or says why the caller skips),
//! [`Corpus::read_manifest`] reads a `*-manifest.tsv` into [`Row`]s, and
//! [`Corpus::extract`] unpacks a row's tarball into a scratch folder.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

/// Names the corpus folder in place of `../shared/conformance/hwloc`.
pub const CORPUS_ENV: &str = "PLACEMENT_STUDY_CONFORMANCE";

/// The corpus folder, known to exist.
pub struct Corpus {
    dir: PathBuf,
}

impl Corpus {
    /// The corpus, or `None` after saying on the terminal that `test` (the
    /// caller's name, as `cargo test` lists it) is skipped: it lives outside
    /// the repository and a plain checkout does not have it.
    ///
    /// The harness captures what a passing test prints, so the line goes
    /// to standard error directly (as the harness's own lines go to the
    /// terminal): `SKIPPED conformance_cpuid::…: no conformance corpus at
    /// …`, beside the harness's "ok".
    ///
    /// Under CI (the environment variable `CI` is set, as CI services set
    /// it to `true`) a missing corpus panics instead: there a skip would
    /// silently turn the conformance suite green without running it.
    ///
    /// `PLACEMENT_STUDY_CONFORMANCE` names another corpus folder (the test
    /// of this skip names a missing one).
    pub fn find(test: &str) -> Option<Corpus> {
        let dir = std::env::var_os(CORPUS_ENV).map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/hwloc"),
            PathBuf::from,
        );
        if dir.is_dir() {
            return Some(Corpus { dir });
        }
        if std::env::var_os("CI").is_some() {
            panic!(
                "no conformance corpus at {} and CI is set: put ../shared beside the clone (or unset CI to skip)",
                dir.display()
            );
        }
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: no conformance corpus at {} (CI=true makes this a failure)",
            dir.display()
        );
        None
    }

    /// Every row of the manifest `file_name` (tab-separated, one header
    /// line). Panics naming the file when it is unreadable, empty or ragged:
    /// the corpus is present, so a bad manifest is a failed test.
    pub fn read_manifest(&self, file_name: &str) -> Vec<Row> {
        let path = self.dir.join(file_name);
        let text = self
            .read_text(file_name)
            .unwrap_or_else(|error| panic!("reading {}: {error}", path.display()));
        let mut lines = text.lines();
        let header: Vec<&str> = lines
            .next()
            .unwrap_or_else(|| panic!("{}: no header line", path.display()))
            .split('\t')
            .collect();
        let rows: Vec<Row> = lines
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(index, line)| {
                let values: Vec<&str> = line.split('\t').collect();
                assert_eq!(
                    values.len(),
                    header.len(),
                    "{} line {}: {} fields, the header has {}",
                    path.display(),
                    index + 2,
                    values.len(),
                    header.len()
                );
                let columns = header.iter().zip(values);
                Row(columns
                    .map(|(column, value)| ((*column).to_owned(), value.to_owned()))
                    .collect())
            })
            .collect();
        assert!(!rows.is_empty(), "{}: no rows", path.display());
        rows
    }

    /// The text of a corpus file, named relative to the corpus as the
    /// manifests name them (`linux/NAME.console`: lstopo's output).
    pub fn read_text(&self, relative: &str) -> std::io::Result<String> {
        std::fs::read_to_string(self.dir.join(relative))
    }

    /// Extracts `tarball` (a manifest path, relative to the corpus) into a
    /// fresh scratch folder, only `members` when some are named (some
    /// tarballs hold both a CPUID dump and a whole sysfs snapshot). The
    /// folder is deleted when the returned handle drops.
    pub fn extract(&self, tarball: &str, members: &[&str]) -> Result<TempDir, String> {
        let tarball = self.dir.join(tarball);
        let scratch = scratch_dir().map_err(|error| format!("scratch folder: {error}"))?;
        let status = Command::new("tar")
            .arg("-xjf")
            .arg(&tarball)
            .arg("-C")
            .arg(scratch.path())
            .args(members)
            .status()
            .map_err(|error| format!("running tar: {error}"))?;
        if !status.success() {
            return Err(format!("tar -xjf {} failed: {status}", tarball.display()));
        }
        Ok(scratch)
    }
}

/// A scratch folder in RAM where there is one: a snapshot is thousands of
/// tiny files, and creating them on disk costs ten times more.
fn scratch_dir() -> std::io::Result<TempDir> {
    tempfile::Builder::new()
        .prefix("conformance-")
        .tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
}

/// One manifest row, by column name.
pub struct Row(HashMap<String, String>);

impl Row {
    /// The cell of `column` as written. Panics on a column the manifest does
    /// not have: that is a typo in the test, not a fact about a machine.
    pub fn get(&self, column: &str) -> &str {
        self.0
            .get(column)
            .unwrap_or_else(|| panic!("the manifest has no column {column:?}"))
    }

    /// The expected value of `column`; `None` where the manifest says there
    /// is none ("-"), leaves it empty, or marks it "n/a(...)".
    pub fn expected(&self, column: &str) -> Option<&str> {
        let value = self.get(column);
        (!value.is_empty() && value != "-" && !value.starts_with("n/a")).then_some(value)
    }
}
