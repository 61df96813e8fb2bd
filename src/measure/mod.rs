//! Measure: the port-bound kernel, pinned workers, and the counters each
//! worker opens on itself.

pub mod model;

pub use model::*;
