//! Saved results: the documents `gate`, `run` and `report` write and read,
//! where a command's output goes, and how a saved document is read back.
//!
//! * [`head`]: the [`DocumentHead`] every document opens with;
//! * [`documents`]: the documents themselves, their `kind` and
//!   `schema_version` (the JSON Schemas and the version policy are in
//!   `schemas/`, see `schemas/README.md`);
//! * [`mod@load`]: reading one back, bounded, checked for kind and version;
//! * [`schema`]: each kind's JSON Schema, generated from its type (the
//!   files in `schemas/`);
//! * [`output`]: an [`OutputTarget`] is resolved and checked from what the
//!   user typed after `--json`/`--csv` *before* anything is measured, so a
//!   bad path costs seconds, not a lost run. Writing never destroys what the
//!   path names: a regular file is replaced atomically (temp file + rename,
//!   through any symlink, which stays a link), a device or FIFO is written
//!   in place, and anything else is refused up front. [`write_stdout`] is the
//!   one way text reaches standard output, so a closed or full stdout is an
//!   error rather than a panic.
//! * [`input`]: [`read_capped`] reads a saved document (or stdin) with a
//!   size cap, through the one reader of [`crate::input`]: a named path
//!   must be a regular file, so pointing `report` at `/dev/zero` or a FIFO
//!   fails at once, and `- < /dev/zero` stops at the cap.

pub mod documents;
pub mod head;
pub mod input;
pub mod kinds;
pub mod load;
pub mod output;
pub mod schema;

// Every document type, as the list of kinds names them (a new kind's type
// is exported with it).
pub use documents::*;
pub use head::{DocumentHead, UNKNOWN_HOST};
pub use input::{JSON_INPUT_CAP, read_capped, read_named};
pub use kinds::DocumentKind;
pub use load::{Headed, SavedDocument, from_bytes, load, load_snapshot};
pub use output::{OutputTarget, check_distinct, write_all_to, write_new_file, write_stdout};
