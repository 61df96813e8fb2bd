//! Saved results on disk: where a command's output goes and how a saved
//! document is read back.
//!
//! * [`output`]: an [`OutputTarget`] is resolved and checked from what the
//!   user typed after `--json`/`--csv` *before* anything is measured, so a
//!   bad path costs seconds, not a lost run. Writing never destroys what the
//!   path names: a regular file is replaced atomically (temp file + rename,
//!   through any symlink, which stays a link), a device or FIFO is written
//!   in place, and anything else is refused up front. [`write_stdout`] is the
//!   one way text reaches standard output, so a closed or full stdout is an
//!   error rather than a panic.
//! * [`input`]: [`read_capped`] reads a saved document (or stdin) with a
//!   size cap, so pointing `report` at `/dev/zero` fails fast instead of
//!   eating memory.
//!
//! The documents themselves (`kind`, `schema_version`, the JSON Schemas in
//! `schemas/`) are described in `schemas/README.md`.

pub mod input;
pub mod output;

pub use input::{JSON_INPUT_CAP, read_capped};
pub use output::{OutputTarget, check_distinct, write_all_to, write_stdout};
