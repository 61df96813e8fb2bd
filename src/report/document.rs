//! What `report` and each command do with a saved document: one small
//! trait per format ([`HumanView`], [`Csv`], [`Metrics`], [`Figure`],
//! [`Summary`], [`NodeLabels`], [`Baselined`]), each kind's implementation
//! in the format's own module, and [`Document`] over them.
//!
//! Adding a kind of document is one module per layer (a study in
//! `study/`, its document in `saved/documents.rs`, its view and this
//! trait's impl in `report/`, a command in `commands/`) and one line in the
//! list of kinds ([`mod@crate::saved::kinds`]), from which the loaded
//! document, its parse, its [`Headed`] and [`of`] are generated, and the
//! empty impls of the traits whose defaults it keeps. Counted on a
//! throw-away kind with a view, a CSV, a figure and a compare row, and
//! the metrics every kind writes: the list line and 7 files (the document
//! type, `report/KIND.rs`, `figure/KIND.rs`, the two `mod` lines, `csv.rs`,
//! `compare/summaries.rs`); metrics of its own add `prom/KIND.rs` and its
//! `mod` line. Outside `src/`, the schema test asks for its schema
//! (generated: `UPDATE_SCHEMAS=1`) and a fixture.

use crate::exit::Outcome;
use crate::saved::kinds::with_kinds;
use crate::saved::*;

pub use crate::report::baseline::rows::Baselined;
pub use crate::report::blocks::HumanView;
pub use crate::report::compare::Summary;
pub use crate::report::csv::Csv;
pub use crate::report::figure::Figure;
pub use crate::report::nfd::NodeLabels;
pub use crate::report::prom::Metrics;

/// What every saved document can be turned into: one trait per format,
/// each implemented where its format lives, and what the document itself
/// says (its head, and how the command that wrote it ends).
pub trait Document:
    Headed + HumanView + Csv + Metrics + Figure + Summary + NodeLabels + Baselined
{
    /// How the command that wrote it ends, before a stop signal is taken
    /// into account (`commands::unless_stopped`).
    fn outcome(&self) -> Outcome;
}

/// The implementations of a loaded document, and the empty impls of the
/// traits whose defaults a kind keeps, generated from the list of kinds
/// ([`mod@crate::saved::kinds`]).
macro_rules! document_of {
    ($($(#[$doc:meta])* $kind:ident => $document:ty $({ defaults: $($default:ident),+ })?,)*) => {
        $($($(impl $default for $document {})+)?)*

        /// The implementations of a loaded document, whatever its kind.
        pub fn of(saved: &SavedDocument) -> &dyn Document {
            match saved {
                $(SavedDocument::$kind(document) => document.as_ref(),)*
            }
        }
    };
}
with_kinds!(document_of);
