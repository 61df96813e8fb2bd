//! `placement-study report FILE…`: re-render one saved result, or compare
//! hosts; with `--fleet`, sum up a fleet's results.

use super::Outputs;
use crate::exit::Outcome;
use crate::report::fleet::{Fleet, FleetOptions};
use crate::report::{self, compare};
use crate::saved::{SavedDocument, load};
use anyhow::{Result, bail};
use std::path::PathBuf;

pub struct ReportCommand {
    /// Saved files, "-" for standard input (at most once); with `--fleet`,
    /// none is standard input.
    pub files: Vec<PathBuf>,
    pub outputs: Outputs,
    /// `--fleet`, with its `--hosts`.
    pub fleet: Option<FleetOptions>,
}

pub fn run(command: &ReportCommand) -> Result<Outcome> {
    if let Some(options) = &command.fleet {
        return fleet(command, options);
    }
    let documents = command
        .files
        .iter()
        .map(|path| load(path))
        .collect::<Result<Vec<_>>>()?;
    // `--prom` names one file (checked in the options).
    if let [document] = documents.as_slice() {
        command
            .outputs
            .write_metrics(|| report::prom::document(document))?;
    }
    match documents.as_slice() {
        [SavedDocument::Gate(gate)] => command.outputs.write(
            &report::gate::render(gate, &command.outputs.view()),
            gate,
            || report::csv::samples(&gate.samples),
        )?,
        [SavedDocument::Run(run)] => command.outputs.write(
            &report::run::render(run, &command.outputs.view()),
            run,
            || report::csv::samples(&run.samples),
        )?,
        [SavedDocument::Hybrid(hybrid)] => command.outputs.write(
            &report::hybrid::render(hybrid, &command.outputs.view()),
            hybrid,
            || report::csv::hybrid(&hybrid.samples),
        )?,
        [SavedDocument::Observe(observe)] => command.outputs.write(
            &report::observe::render(observe, &command.outputs.view()),
            observe,
            || report::csv::observe(&observe.judged),
        )?,
        [SavedDocument::Pairs(pairs)] => command.outputs.write(
            &report::pairs::render(pairs, &command.outputs.view()),
            pairs,
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
                &(compare::render(&hosts, &command.outputs.view()) + "\n"),
                &hosts,
                || compare::csv(&hosts),
            )?;
        }
    }
    Ok(Outcome::Success)
}

/// `report --fleet`: whatever the hosts sent, missing and broken hosts
/// included, is a report, not an error (exit 0). What fails is what the
/// user can fix: a named FILE that is not there or cannot be read (found
/// while reading, before anything is written), or an output that cannot
/// be written. `--json` is one line per host and kind.
fn fleet(command: &ReportCommand, options: &FleetOptions) -> Result<Outcome> {
    let stdin = [PathBuf::from("-")];
    let files = if command.files.is_empty() {
        &stdin[..]
    } else {
        &command.files[..]
    };
    let hosts = crate::fleet::read(files, report::fleet::answer)?;
    if hosts.is_empty() && options.expected_hosts.is_empty() {
        bail!(
            "report --fleet: standard input holds no host's line; pipe in pdsh or clush output \
             (not clush -b, which drops the host names), or give --hosts to list every host as \
             missing"
        );
    }
    let fleet = Fleet::of(hosts, options);
    let outputs = &command.outputs;
    if let Some(target) = &outputs.json {
        target.write(report::fleet::json_lines(&fleet)?.as_bytes())?;
    }
    if let Some(target) = &outputs.csv {
        target.write(report::fleet::csv(&fleet).as_bytes())?;
    }
    outputs.write_human(&report::fleet::render(&fleet, &outputs.view()))?;
    Ok(Outcome::Success)
}
