//! One trait for every kind of saved document: what `report` and each
//! command do with a document, written once per kind beside that kind's
//! view (`report::gate`, `report::run`, …).
//!
//! Adding a kind of document is one module per layer (a study in
//! `study/`, its document in `saved/documents.rs`, its view and this
//! trait's impl in `report/`, a command in `commands/`) and one line in the
//! list of kinds ([`mod@crate::saved::kinds`]), from which the loaded
//! document, its parse and [`of`] are generated.

use crate::exit::Outcome;
use crate::report::baseline::rows::Baselined;
use crate::report::blocks::Blocks;
use crate::report::compare::HostSummary;
use crate::report::view::View;
use crate::saved::kinds::with_kinds;
use crate::saved::{DocumentHead, SavedDocument};

/// What every saved document can be turned into (and, through
/// [`Baselined`], what a baseline comparison matches in it).
pub trait Document: Baselined {
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

/// The implementations of a loaded document, generated from the list of
/// kinds ([`mod@crate::saved::kinds`]).
macro_rules! document_of {
    ($($(#[$doc:meta])* $kind:ident => $document:ty,)*) => {
        /// The implementations of a loaded document, whatever its kind.
        pub fn of(saved: &SavedDocument) -> &dyn Document {
            match saved {
                $(SavedDocument::$kind(document) => document.as_ref(),)*
            }
        }
    };
}
with_kinds!(document_of);
