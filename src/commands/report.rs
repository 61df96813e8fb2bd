//! `placement-study report FILE…`: re-render one saved result, or compare
//! hosts; with `--fleet`, sum up a fleet's results.

use super::shared::Outputs;
use crate::escape::escape_path;
use crate::exit::{Outcome, UsageError};
use crate::report::baseline::{self, BaselineReport, BaselineRules};
use crate::report::compare::{self, HostSummary};
use crate::report::document;
use crate::report::figure;
use crate::report::fleet::{self, Fleet, FleetOptions};
use crate::report::html::{self, PageEntry};
use crate::report::markdown;
use crate::report::prom;
use crate::saved::{SavedDocument, load};
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};

pub struct ReportCommand {
    /// Saved files, "-" for standard input (at most once); with `--fleet`,
    /// none is standard input.
    pub files: Vec<PathBuf>,
    pub outputs: Outputs,
    /// `--fleet`, with its `--hosts`.
    pub fleet: Option<FleetOptions>,
    /// `--baseline OLD`, and how to judge each FILE against it.
    pub baseline: Option<(PathBuf, BaselineRules)>,
}

pub fn run(command: &ReportCommand) -> Result<Outcome> {
    if let Some(options) = &command.fleet {
        return fleet(command, options);
    }
    if let Some((old, rules)) = &command.baseline {
        return baseline(command, old, rules);
    }
    let documents = command
        .files
        .iter()
        .map(|path| load(path))
        .collect::<Result<Vec<_>>>()?;
    let outputs = &command.outputs;
    if let [saved] = documents.as_slice() {
        // `--prom` and `--trace` name one file (checked in the options).
        let document = document::of(saved);
        if outputs.trace.is_some() {
            let SavedDocument::Observe(observed) = saved else {
                return Err(UsageError(format!(
                    "report {} --trace: it is a {} document; only an observe document has a \
                     trace (the schedule it recorded)",
                    escape_path(&command.files[0]),
                    document.head().kind
                ))
                .into());
            };
            outputs.write_trace(observed)?;
        }
        write_pages(command, &documents)?;
        outputs.emit_as(&document.render(&outputs.view()), document, saved)?;
    } else {
        let hosts: Vec<HostSummary> = command
            .files
            .iter()
            .zip(&documents)
            .map(|(path, saved)| document::of(saved).summary(path.display().to_string()))
            .collect();
        write_pages(command, &documents)?;
        let named: Vec<String> = command.files.iter().map(|path| file_name(path)).collect();
        let labelled: Vec<(&str, &dyn document::Document)> = named
            .iter()
            .zip(&documents)
            .map(|(name, saved)| (name.as_str(), document::of(saved)))
            .collect();
        outputs.write_labels(&labelled)?;
        outputs.write(&compare::render(&hosts, &outputs.view()), &hosts, || {
            compare::csv(&hosts)
        })?;
    }
    Ok(Outcome::Success)
}

/// `--html` and `--markdown`, where they were asked for: every document
/// read, on one page, written once nothing can refuse them any more (a
/// `--trace` of another kind), before the other result files.
fn write_pages(command: &ReportCommand, documents: &[SavedDocument]) -> Result<()> {
    let outputs = &command.outputs;
    if outputs.html.is_none() && outputs.markdown.is_none() {
        return Ok(());
    }
    let entries: Vec<PageEntry> = command
        .files
        .iter()
        .zip(documents)
        .map(|(path, saved)| PageEntry {
            file: file_name(path),
            document: document::of(saved),
        })
        .collect();
    if let Some(target) = &outputs.html {
        target.write(html::page(&entries).as_bytes())?;
    }
    if let Some(target) = &outputs.markdown {
        target.write(markdown::page(&entries).as_bytes())?;
    }
    Ok(())
}

/// The name a page gives the file at `path`: its last component, so the
/// page reads the same wherever the files were, or "standard input".
fn file_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        return "standard input".into();
    }
    escape_path(path.file_name().map_or(path, Path::new))
}

/// The heading of `report --fleet`'s page.
const FLEET_TITLE: &str = "placement-study fleet report";

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
    let hosts = crate::fleet::read(files, fleet::answer)?;
    if hosts.hosts.is_empty() && hosts.unread.is_empty() && options.expected_hosts.is_empty() {
        bail!(
            "report --fleet: standard input holds no host's line; pipe in pdsh or clush output \
             (not clush -b, which drops the host names), or give --hosts to list every host as \
             missing"
        );
    }
    let fleet = Fleet::of(hosts, options);
    let outputs = &command.outputs;
    if let Some(target) = &outputs.json {
        target.write(fleet::json_lines(&fleet)?.as_bytes())?;
    }
    if let Some(target) = &outputs.csv {
        target.write(fleet::csv(&fleet).as_bytes())?;
    }
    if outputs.html.is_some() || outputs.markdown.is_some() {
        let blocks = fleet::blocks(&fleet, &html::PAGE_VIEW);
        if let Some(target) = &outputs.html {
            let page = html::view_page(FLEET_TITLE, None, &blocks);
            target.write(page.as_bytes())?;
        }
        if let Some(target) = &outputs.markdown {
            target.write(markdown::titled(FLEET_TITLE, &blocks).as_bytes())?;
        }
    }
    outputs.write_human(&fleet::render(&fleet, &outputs.view()))?;
    Ok(Outcome::Success)
}

/// `report --baseline OLD NEW…`: each NEW judged against OLD, every
/// output asked for written from the one comparison, the human view last.
fn baseline(command: &ReportCommand, old: &Path, rules: &BaselineRules) -> Result<Outcome> {
    let baseline_document = load(old)?;
    let documents = command
        .files
        .iter()
        .map(|path| load(path))
        .collect::<Result<Vec<_>>>()?;
    let named: Vec<(String, &SavedDocument)> = command
        .files
        .iter()
        .map(|path| escape_path(path))
        .zip(&documents)
        .collect();
    let report = BaselineReport::judge(&escape_path(old), &baseline_document, &named, rules)?;
    let outputs = &command.outputs;
    if let Some(target) = &outputs.prom {
        target.write(prom::baseline(&report).as_bytes())?;
    }
    if let Some(target) = &outputs.svg {
        target.write(figure::baseline::figure(&report).as_bytes())?;
    }
    if outputs.html.is_some() || outputs.markdown.is_some() {
        let blocks = baseline::view::blocks(&report, &html::PAGE_VIEW);
        let old = escape_path(old);
        if let Some(target) = &outputs.html {
            let title = format!("placement-study: against the baseline {old}");
            let figure = figure::baseline::figure(&report);
            target.write(html::view_page(&title, Some(&figure), &blocks).as_bytes())?;
        }
        if let Some(target) = &outputs.markdown {
            let title = format!(
                "placement-study: against the baseline `{}`",
                old.replace('`', "'")
            );
            target.write(markdown::titled(&title, &blocks).as_bytes())?;
        }
    }
    let view = outputs.view();
    outputs.write(
        &baseline::view::blocks(&report, &view).to_terminal(&view),
        &report,
        || baseline::csv::csv(&report),
    )?;
    Ok(report.outcome(rules.fail_on_inconclusive))
}
