//! `placement-study topology`: probe and print.

use super::shared::{Outputs, Source};
use crate::exit::Outcome;
use crate::study::topology::topology_document;
use anyhow::Result;

pub struct TopologyCommand {
    pub source: Source,
    pub outputs: Outputs,
}

pub fn run(command: &TopologyCommand) -> Result<Outcome> {
    let root = command.source.root()?;
    let topology = command.source.probe_in(root.as_ref())?;
    let document = topology_document(topology, root.as_ref())?;
    command.outputs.emit(&document)?;
    Ok(Outcome::Success)
}
