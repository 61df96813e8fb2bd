//! `placement-study snapshot DIR`.

use crate::cli::SnapshotArgs;
use crate::probe::snapshot;
use anyhow::Result;

pub fn run(args: &SnapshotArgs) -> Result<i32> {
    let summary = snapshot::save(&args.dir)?;
    println!("{summary}");
    Ok(0)
}
