//! `placement-study snapshot DIR`.

use crate::exit::Outcome;
use crate::probe::snapshot;
use crate::saved::write_stdout;
use anyhow::Result;
use std::path::PathBuf;

pub struct SnapshotCommand {
    /// The folder to create.
    pub dir: PathBuf,
}

pub fn run(command: &SnapshotCommand) -> Result<Outcome> {
    let summary = snapshot::save(&command.dir)?;
    write_stdout(&format!("{summary}\n"))?;
    Ok(Outcome::Success)
}
