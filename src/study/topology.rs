//! The topology "study": nothing is measured, the probed machine becomes a
//! document with the same head as every other, so `report` re-renders
//! and compares it and `report --fleet` counts a fleet's machines.

use super::{host_name, unix_now};
use crate::probe::{SysfsRoot, Topology};
use crate::saved::TopologyResult;
use anyhow::Result;
use std::path::Path;

/// The document of `topology`, probed live or from the snapshot folder
/// `snapshot`. A snapshot is another host's: its name is the one the
/// snapshot saved (`proc/sys/kernel/hostname`), else the folder's, never
/// the name of the host that reads it.
pub fn topology_document(topology: Topology, snapshot: Option<&Path>) -> Result<TopologyResult> {
    let host = match snapshot {
        None => host_name(),
        Some(folder) => {
            match SysfsRoot::snapshot(folder)?.read_value("proc/sys/kernel/hostname")? {
                Some(saved) => saved,
                None => folder_name(folder),
            }
        }
    };
    Ok(TopologyResult::new(topology, host, unix_now()))
}

/// The last component of `folder` ("node07" for `snaps/node07/`), or the
/// whole path when it has none (`/`, `..`).
fn folder_name(folder: &Path) -> String {
    folder.file_name().map_or_else(
        || folder.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
