//! The one list of the kinds of saved document: each line names a kind (its
//! `kind` word is the name in kebab-case) and the type of its document.
//! Everything that matches on a document's kind is generated from it: the
//! [`DocumentKind`] enum, the loaded-document
//! enum [`SavedDocument`](crate::saved::SavedDocument) with its `head` and
//! its parsing (in [`mod@crate::saved::load`]), and the choice of a
//! document's implementations (`report::document::of`). Adding a kind is a
//! line here, its document type, and its implementations of the
//! `report::document` traits.
//!
//! `with_kinds!` calls another macro with the list, so each place that
//! needs it generates its own code from the one declaration.

/// Calls the macro `$then` with every kind `report` reads, in the order a
/// host's documents are listed (the gate first): each entry its doc
/// comment, its name and its document type, `Name => Type,` (the type by
/// its name in `saved`: each place that needs the types imports them).
///
/// `{ defaults: Trait, … }` names the `report::document` traits whose
/// provided methods the kind keeps (no node labels, no baseline rows, only
/// the metrics every kind writes): their empty impls are generated, so a
/// kind that has nothing of its own for a format writes nothing for it.
macro_rules! with_kinds {
    ($then:ident) => {
        $then! {
            /// `gate --json`.
            Gate => GateResult,
            // A study of the tool's kernel or of a command measures the
            // work, not the node: no node label.
            /// `run --json`.
            Run => RunResult { defaults: NodeLabels },
            /// `run --json -- COMMAND`: a user's command under the arms.
            Command => CommandResult { defaults: NodeLabels },
            /// `pairs --json`.
            Pairs => PairsResult,
            /// `latency --json`: the core-to-core latency matrix and its domains.
            Latency => LatencyResult,
            /// `hybrid --json`.
            Hybrid => HybridResult,
            /// `run --sweep --json`: thread-count scaling in topology order.
            Sweep => SweepResult { defaults: NodeLabels },
            // Nothing an observation measured is repeated (it follows one
            // run), so there is no baseline row to match.
            /// `observe --json`.
            Observe => ObserveResult { defaults: NodeLabels, Baselined },
            // The probed machine measures nothing: its metrics are the head
            // every kind writes, and it has no baseline row.
            /// `topology --json`: the probed machine.
            Topology => TopologyResult { defaults: Metrics, Baselined },
            /// `memory --json`: the cache ladder and the NUMA matrix, measured.
            Memory => MemoryResult,
        }
    };
}
pub(crate) use with_kinds;

/// [`DocumentKind`](crate::saved::DocumentKind): every kind of the list,
/// then `snapshot`, which `report` does not read.
macro_rules! document_kind {
    ($($(#[$doc:meta])* $kind:ident => $document:ty $({ defaults: $($default:ident),+ })?,)*) => {
        /// Which command wrote a document: its `kind` field. Its spelling is
        /// serde's and strum's one kebab-case name; the declaration order is
        /// the order a host's documents are listed in (the gate first).
        #[derive(
            Clone,
            Copy,
            Debug,
            PartialEq,
            Eq,
            PartialOrd,
            Ord,
            serde::Serialize,
            serde::Deserialize,
            strum::Display,
            strum::IntoStaticStr,
            strum::VariantArray,
            schemars::JsonSchema,
        )]
        #[serde(rename_all = "kebab-case")]
        #[strum(serialize_all = "kebab-case")]
        pub enum DocumentKind {
            $($(#[$doc])* $kind,)*
            /// `snapshot FILE.json`: what probing the machine read, for
            /// `--sysfs-root FILE.json`; no study, so `report` does not read it.
            Snapshot,
        }
    };
}
with_kinds!(document_kind);
