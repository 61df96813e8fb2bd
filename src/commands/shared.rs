//! What every subcommand shares: where the machine's facts come from
//! ([`Source`]), where its outputs go ([`Outputs`]), its progress on the
//! terminal, and the exit status of a stopped study.

use crate::exit::Outcome;
use crate::measure::{static_keys, stop};
use crate::probe::snapshot::names_document;
use crate::probe::{self, CpuidSource, SysfsRoot, Topology};
use crate::report::document::Document;
use crate::report::nfd::{Expiry, Labelled, expired_note, feature_file};
use crate::report::trace::chrome_trace;
use crate::report::view::{Charset, View};
use crate::saved::{ObserveResult, OutputTarget, load_snapshot, write_all_to, write_stdout};
use crate::study::Progress;
use anyhow::Result;
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Where the machine's facts come from, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// A snapshot folder holding `sys/` and `proc/`, or a snapshot
    /// document (`….json`); `None` for this machine.
    pub sysfs_root: Option<PathBuf>,
    /// Where CPUID comes from; `None` not to read it.
    pub cpuid: Option<CpuidSource>,
}

impl Source {
    /// Probes the machine this source describes.
    pub fn probe(&self) -> Result<Topology> {
        self.probe_in(self.root()?.as_ref())
    }

    /// The snapshot to read, opened (a document read and checked);
    /// `None` for this machine.
    pub fn root(&self) -> Result<Option<SysfsRoot>> {
        self.sysfs_root.as_deref().map(open_root).transpose()
    }

    /// Probes `root`, the snapshot this source's [`root`](Self::root)
    /// opened, or this machine.
    pub fn probe_in(&self, root: Option<&SysfsRoot>) -> Result<Topology> {
        match root {
            Some(root) => probe::probe_root(root, self.cpuid.as_ref()),
            None => probe::probe(None, self.cpuid.as_ref()),
        }
    }

    /// For a command that measures: installs the stop handlers first, so a
    /// signal during probing or calibration is not lost, and holds the
    /// scheduler's perf keys on before any counter opens
    /// ([`static_keys::hold`]), then probes.
    pub fn probe_to_measure(&self) -> Result<Topology> {
        stop::install_stop_handlers()?;
        static_keys::hold();
        self.probe()
    }
}

/// A `--sysfs-root`: a snapshot document where `path` names one (`….json`,
/// not a folder), else a snapshot folder.
fn open_root(path: &Path) -> Result<SysfsRoot> {
    if names_document(path) && !path.is_dir() {
        let document = load_snapshot(path)?;
        return Ok(SysfsRoot::document(path, Rc::new(document.recording)));
    }
    SysfsRoot::snapshot(path)
}

/// Where a command's result goes, checked before anything ran, and how
/// wide its human view may be.
#[derive(Default)]
pub struct Outputs {
    /// `--json`: the document, pretty.
    pub json: Option<OutputTarget>,
    /// `--json-line`: the same document on one line.
    pub json_line: Option<OutputTarget>,
    pub csv: Option<OutputTarget>,
    /// `--prom`: node_exporter textfile-collector metrics.
    pub prom: Option<OutputTarget>,
    /// `--trace` (`observe`, and `report` of an observe document): the
    /// schedule as Chrome trace-event JSON.
    pub trace: Option<OutputTarget>,
    /// `--svg`: the document drawn as one figure.
    pub svg: Option<OutputTarget>,
    /// `--html` (`report` only): one self-contained page of every document
    /// read ([`crate::report::html`]).
    pub html: Option<OutputTarget>,
    /// `--markdown` (`report` only): every document read, as Markdown
    /// ([`crate::report::markdown`]).
    pub markdown: Option<OutputTarget>,
    /// `--nfd`: the node labels as a node-feature-discovery feature file
    /// ([`crate::report::nfd`]), expiring `nfd_expiry` after the study.
    pub nfd: Option<OutputTarget>,
    pub nfd_expiry: Expiry,
    /// `--exit-zero`: a verdict (or an invalid study) exits 0; errors,
    /// usage errors and stop signals keep their statuses.
    pub exit_zero: bool,
    /// `observe -o FILE`: the human view goes to FILE, atomically.
    pub report: Option<OutputTarget>,
    /// The human view goes to standard error, never standard output
    /// (`observe`: a followed command keeps standard output to itself, as
    /// under `time` and `perf stat`).
    pub human_on_stderr: bool,
    /// `--wide`: every column of every table.
    pub wide: bool,
    /// The locale's charset: the human view in UTF-8 or in ASCII.
    pub charset: Charset,
}

impl Outputs {
    /// Writes everything that was asked for of `document`: its metrics,
    /// its JSON (pretty and one line), its CSV, its figure, then its human
    /// view (see [`Outputs::write`]). Each rendering is made only when
    /// asked for.
    pub fn emit<D: Document + Serialize>(&self, document: &D) -> Result<()> {
        self.emit_as(&document.render(&self.view()), document, document)
    }

    /// [`Outputs::emit`] with a human view of the caller's and the saved
    /// document `saved` (a loaded document serializes as itself).
    pub fn emit_as(
        &self,
        human: &str,
        document: &dyn Document,
        saved: &impl Serialize,
    ) -> Result<()> {
        if let Some(target) = &self.prom {
            target.write(document.metrics().as_bytes())?;
        }
        self.write_labels(&[("this study", document)])?;
        self.write_files(saved, || document.csv())?;
        if let Some(target) = &self.svg {
            target.write(document.figure().as_bytes())?;
        }
        self.write_human(human)
    }

    /// `--nfd`, where asked for: the labels of `documents` (each named by
    /// where it came from) as one feature file.
    pub fn write_labels(&self, documents: &[(&str, &dyn Document)]) -> Result<()> {
        let Some(target) = &self.nfd else {
            return Ok(());
        };
        let labelled = documents.iter().map(|&(file, document)| Labelled {
            file,
            head: document.head(),
            labels: document.node_labels(),
        });
        let file = feature_file(labelled.collect(), self.nfd_expiry)?;
        target.write(file.text.as_bytes())?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        if let Some(note) = expired_note(&file, now) {
            eprintln!("{note}");
        }
        Ok(())
    }

    /// Writes the result files that were asked for (the document as JSON
    /// and as one line, CSV), then the human view: to stdout, or to stderr
    /// when stdout carries a file, so the two never mix. Each rendering is
    /// made only when its file was asked for.
    pub fn write(
        &self,
        human: &str,
        document: &impl Serialize,
        csv: impl FnOnce() -> String,
    ) -> Result<()> {
        self.write_files(document, csv)?;
        self.write_human(human)
    }

    /// Writes the document as JSON (pretty and one line) and its CSV,
    /// where they were asked for.
    fn write_files(&self, document: &impl Serialize, csv: impl FnOnce() -> String) -> Result<()> {
        if let Some(target) = &self.json {
            target.write(to_json(document)?.as_bytes())?;
        }
        if let Some(target) = &self.json_line {
            target.write((serde_json::to_string(document)? + "\n").as_bytes())?;
        }
        if let Some(target) = &self.csv {
            target.write(csv().as_bytes())?;
        }
        Ok(())
    }

    /// Writes the human view, after every result file: to stdout, or to
    /// stderr when stdout carries a file, so the two never mix.
    pub fn write_human(&self, human: &str) -> Result<()> {
        let human = self.view().for_terminal_text(human);
        if let Some(report) = &self.report {
            report.write(human.as_bytes())
        } else if self.human_on_stderr || self.carry_stdout() {
            write_all_to(
                &mut std::io::stderr().lock(),
                human.as_bytes(),
                "standard error",
            )
        } else {
            write_stdout(&human)
        }
    }

    /// For a command that ends in a verdict: with `-q` (`quiet`) only the
    /// verdict word (and `--prom`'s metrics and `--nfd`'s labels, for
    /// health checks and node labellers), otherwise
    /// [`Outputs::emit`].
    pub fn emit_verdict<D: Document + Serialize>(
        &self,
        quiet: bool,
        word: &str,
        document: &D,
    ) -> Result<()> {
        if quiet {
            if let Some(target) = &self.prom {
                target.write(document.metrics().as_bytes())?;
            }
            self.write_labels(&[("this study", document)])?;
            write_stdout(&format!("{word}\n"))
        } else {
            self.emit(document)
        }
    }

    /// How wide the human view may be: the width of the terminal it goes
    /// to (stdout, or stderr when stdout carries a file), or 80 columns
    /// when it goes to no terminal.
    pub fn view(&self) -> View {
        let columns = if self.report.is_some() {
            None
        } else if self.human_on_stderr || self.carry_stdout() {
            terminal_columns(std::io::stderr())
        } else {
            terminal_columns(std::io::stdout())
        };
        View::for_terminal(columns, self.wide, self.charset)
    }

    /// `--trace`, when it was asked for: `result`'s schedule as Chrome
    /// trace-event JSON ([`chrome_trace`]).
    pub fn write_trace(&self, result: &ObserveResult) -> Result<()> {
        match &self.trace {
            Some(target) => target.write(chrome_trace(result).as_bytes()),
            None => Ok(()),
        }
    }

    /// Does a result file go to standard output?
    fn carry_stdout(&self) -> bool {
        [
            &self.json,
            &self.json_line,
            &self.csv,
            &self.prom,
            &self.trace,
            &self.svg,
            &self.html,
            &self.markdown,
            &self.nfd,
        ]
        .into_iter()
        .flatten()
        .any(OutputTarget::is_stdout)
    }
}

/// The width of the terminal `stream` is, or `None` when it is no
/// terminal (or the terminal says 0 columns or rows, as a serial console
/// may).
fn terminal_columns(stream: impl AsFd) -> Option<usize> {
    terminal_size::terminal_size_of(stream)
        .map(|(terminal_size::Width(columns), _)| usize::from(columns))
}

/// How a command that measured ended: the signal that stopped it, when
/// its result is incomplete; otherwise `outcome`.
pub fn unless_stopped(complete: bool, outcome: Outcome) -> Outcome {
    match stop::stop_signal() {
        Some(signal) if !complete => Outcome::Stopped(signal),
        _ => outcome,
    }
}

/// JSON as every command writes it: pretty, with a final newline.
fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// A progress line on stderr, redrawn in place, only when stderr is a
/// terminal (never in a log or a pipe).
pub struct TerminalProgress {
    enabled: bool,
}

impl Default for TerminalProgress {
    fn default() -> TerminalProgress {
        TerminalProgress {
            enabled: std::io::stderr().is_terminal(),
        }
    }
}

impl Progress for TerminalProgress {
    fn update(&mut self, message: &str) {
        if self.enabled {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "\r\x1b[2K{message}");
            let _ = stderr.flush();
        }
    }

    fn done(&mut self) {
        self.update("");
    }

    /// One line a step where stderr is no terminal (a log, a CI job).
    fn step(&mut self, message: &str) {
        if self.enabled {
            self.update(message);
        } else {
            self.note(message);
        }
    }

    fn note(&mut self, line: &str) {
        let mut stderr = std::io::stderr().lock();
        let clear = if self.enabled { "\r\x1b[2K" } else { "" };
        let _ = writeln!(stderr, "{clear}{line}");
        let _ = stderr.flush();
    }
}
