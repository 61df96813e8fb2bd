//! `placement-study report FILE…`: re-render one saved result, or compare
//! hosts.

use super::{Outputs, to_json};
use crate::exit::Outcome;
use crate::report::{self, compare};
use crate::saved::{SavedDocument, load};
use anyhow::Result;
use std::path::PathBuf;

pub struct ReportCommand {
    /// Saved files, "-" for standard input (at most once).
    pub files: Vec<PathBuf>,
    pub outputs: Outputs,
}

pub fn run(command: &ReportCommand) -> Result<Outcome> {
    let documents = command
        .files
        .iter()
        .map(|path| load(path))
        .collect::<Result<Vec<_>>>()?;
    match documents.as_slice() {
        [SavedDocument::Gate(gate)] => command.outputs.write(
            &report::gate::render(gate),
            || to_json(gate),
            || report::csv::samples(&gate.samples),
        )?,
        [SavedDocument::Run(run)] => command.outputs.write(
            &report::run::render(run),
            || to_json(run),
            || report::csv::samples(&run.samples),
        )?,
        [SavedDocument::Hybrid(hybrid)] => command.outputs.write(
            &report::hybrid::render(hybrid),
            || to_json(hybrid),
            || report::csv::hybrid(&hybrid.samples),
        )?,
        [SavedDocument::Observe(observe)] => command.outputs.write(
            &report::observe::render(observe),
            || to_json(observe),
            || report::csv::observe(&observe.judged),
        )?,
        [SavedDocument::Pairs(pairs)] => command.outputs.write(
            &report::pairs::render(pairs),
            || to_json(pairs),
            || report::csv::comparisons(&pairs.comparisons),
        )?,
        _ => {
            let hosts: Vec<compare::HostSummary> = command
                .files
                .iter()
                .zip(&documents)
                .map(|(path, document)| compare::summarise(path, document))
                .collect();
            command.outputs.write(
                &(compare::render(&hosts) + "\n"),
                || to_json(&hosts),
                || compare::csv(&hosts),
            )?;
        }
    }
    Ok(Outcome::Success)
}
