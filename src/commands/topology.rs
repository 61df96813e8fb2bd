//! `placement-study topology`: probe and print.

use super::{Outputs, Source};
use crate::exit::Outcome;
use crate::study::topology::topology_document;
use anyhow::Result;

pub struct TopologyCommand {
    pub source: Source,
    pub outputs: Outputs,
}

pub fn run(command: &TopologyCommand) -> Result<Outcome> {
    let topology = command.source.probe()?;
    let document = topology_document(topology, command.source.sysfs_root.as_deref())?;
    command.outputs.emit(&document)?;
    Ok(Outcome::Success)
}
