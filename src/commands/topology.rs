//! `placement-study topology`: probe and print.

use super::{Outputs, Source};
use crate::exit::Outcome;
use crate::report;
use anyhow::Result;

pub struct TopologyCommand {
    pub source: Source,
    pub outputs: Outputs,
}

pub fn run(command: &TopologyCommand) -> Result<Outcome> {
    let topology = command.source.probe()?;
    command.outputs.write(
        &report::topology::render(&topology, &command.outputs.view()),
        &topology,
        || report::csv::topology(&topology),
    )?;
    Ok(Outcome::Success)
}
