//! What `report` and each command do with a saved document: one small
//! trait per format ([`HumanView`], [`Csv`], [`Metrics`], [`Figure`],
//! [`Summary`], [`NodeLabels`]), each kind's implementation in the format's own module, and
//! [`Document`] over them.
//!
//! Adding a kind of document is one module per layer (a study in
//! `study/`, its document in `saved/documents.rs`, its view and this
//! trait's impl in `report/`, a command in `commands/`) and one line in the
//! list of kinds ([`mod@crate::saved::kinds`]), from which the loaded
//! document, its parse and [`of`] are generated.

use crate::exit::Outcome;
use crate::report::blocks::Blocks;
use crate::report::compare::HostSummary;
use crate::report::nfd::NodeLabels;
use crate::report::view::View;
use crate::saved::kinds::with_kinds;
use crate::saved::{DocumentHead, SavedDocument};

/// The human view, as blocks ([`Blocks`]): each kind's in its view's
/// module (`report::gate`, …).
pub trait HumanView {
    /// The view with the columns `view` asks for (`--wide` or not).
    fn blocks(&self, view: &View) -> Blocks;

    /// The view as the terminal shows it, as wide as `view` allows.
    fn render(&self, view: &View) -> String {
        self.blocks(view).to_terminal(view)
    }
}

/// `--csv`: the document's rows (samples, comparisons, CPUs…); each kind's
/// in `report::csv`.
pub trait Csv {
    fn csv(&self) -> String;
}

/// `--prom`: node_exporter textfile metrics; each kind's in
/// `report::prom::<kind>`.
pub trait Metrics {
    fn metrics(&self) -> String;
}

/// `--svg`: the document drawn as one SVG figure; each kind's in
/// `report::figure::<kind>`.
pub trait Figure {
    fn figure(&self) -> String;
}

/// The document in one row of `report A B` and `report --fleet`; `file`
/// names where it was read. Each kind's in `report::compare`.
pub trait Summary {
    fn summary(&self, file: String) -> HostSummary;
}

/// What every saved document can be turned into: one trait per format,
/// each implemented where its format lives, and what the document itself
/// says (its head, and how the command that wrote it ends).
pub trait Document: HumanView + Csv + Metrics + Figure + Summary + NodeLabels {
    /// Kind, host, machine and evidence.
    fn head(&self) -> &DocumentHead;

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
