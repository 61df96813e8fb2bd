//! One trait for every kind of saved document: what `report` and each
//! command do with a document, written once per kind beside that kind's
//! view (`report::gate`, `report::run`, …).
//!
//! Adding a kind of document is one module per layer (a study in
//! `study/`, its document in `saved/documents.rs`, its view and this
//! trait's impl in `report/`, a command in `commands/`) and one arm in each
//! of the two matches on the kind: [`mod@crate::saved::load`] (which type to
//! parse) and [`of`] (which implementation to call).

use crate::exit::Outcome;
use crate::report::blocks::Blocks;
use crate::report::compare::HostSummary;
use crate::report::view::View;
use crate::saved::{DocumentHead, SavedDocument};

/// What every saved document can be turned into.
pub trait Document {
    /// Kind, host, machine and evidence.
    fn head(&self) -> &DocumentHead;

    /// The human view as blocks ([`Blocks`]), with the columns `view`
    /// asks for (`--wide` or not).
    fn blocks(&self, view: &View) -> Blocks;

    /// The human view as the terminal shows it, as wide as `view` allows.
    fn render(&self, view: &View) -> String {
        self.blocks(view).to_terminal(view)
    }

    /// `--csv`: the document's rows (samples, comparisons, CPUs…).
    fn csv(&self) -> String;

    /// `--prom`: node_exporter textfile metrics.
    fn metrics(&self) -> String;

    /// `--svg`: the document drawn as one SVG figure
    /// ([`crate::report::figure`]).
    fn figure(&self) -> String;

    /// The document in one row of `report A B` and `report --fleet`;
    /// `file` names where it was read.
    fn summary(&self, file: String) -> HostSummary;

    /// How the command that wrote it ends, before a stop signal is taken
    /// into account (`commands::unless_stopped`).
    fn outcome(&self) -> Outcome;
}

/// The implementation for a loaded document: the one place `report`
/// matches on its kind.
pub fn of(saved: &SavedDocument) -> &dyn Document {
    match saved {
        SavedDocument::Gate(document) => document.as_ref(),
        SavedDocument::Run(document) => document.as_ref(),
        SavedDocument::Command(document) => document.as_ref(),
        SavedDocument::Pairs(document) => document.as_ref(),
        SavedDocument::Latency(document) => document.as_ref(),
        SavedDocument::Hybrid(document) => document.as_ref(),
        SavedDocument::Sweep(document) => document.as_ref(),
        SavedDocument::Observe(document) => document.as_ref(),
        SavedDocument::Topology(document) => document.as_ref(),
    }
}
