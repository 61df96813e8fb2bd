//! Saved results: the documents `gate`, `run` and `report` write and read.
//!
//! * [`documents`]: the documents themselves, their kinds and schema version;
//! * [`load`]: reading one back, checked for kind and version;
//! * [`output`]: where results go, written atomically;
//! * [`input`]: reads with a size cap.

pub mod documents;
pub mod input;
pub mod load;
pub mod output;

pub use documents::{
    DocumentKind, Evidence, GateResult, RESULT_SCHEMA_VERSION, RunOptions, RunResult,
};
pub use load::{SavedDocument, load};
pub use output::{OutputTarget, write_stdout};
