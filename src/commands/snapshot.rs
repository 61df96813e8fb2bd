//! `placement-study snapshot DIR` (a folder) or `snapshot FILE.json` (one
//! document).

use crate::exit::Outcome;
use crate::probe::snapshot::{self, check_new_document, names_document};
use crate::saved::{write_new_file, write_stdout};
use crate::study::snapshot::record_snapshot;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

pub struct SnapshotCommand {
    /// The folder, or the `.json` document, to create.
    pub dir: PathBuf,
}

pub fn run(command: &SnapshotCommand) -> Result<Outcome> {
    let summary = if names_document(&command.dir) {
        save_document(&command.dir)?
    } else {
        snapshot::save(&command.dir)?
    };
    write_stdout(&format!("{summary}\n"))?;
    Ok(Outcome::Success)
}

/// Records this machine into the new file `path`, returning a one-line
/// summary.
fn save_document(path: &Path) -> Result<String> {
    check_new_document(path)?;
    let cpuid = cfg!(target_arch = "x86_64");
    let document = record_snapshot(Path::new("/"), cpuid)?;
    let text = serde_json::to_vec(&document)
        .with_context(|| format!("{}: cannot write the snapshot", path.display()))?;
    write_new_file(path, &text)?;
    let recording = &document.recording;
    let cpuid_note = match recording.listings.get(crate::probe::recording::CPUID_DIR) {
        Some(dump) => format!(", CPUID of {} CPUs", dump.len()),
        None if cpuid => String::new(),
        None => format!(
            ", no CPUID dump (CPUID is not part of {})",
            std::env::consts::ARCH
        ),
    };
    Ok(format!(
        "saved {} folder listings and {} files{cpuid_note} into {} (read back with --sysfs-root {})",
        recording.listings.len(),
        recording.files.len(),
        path.display(),
        path.display()
    ))
}
