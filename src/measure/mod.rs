//! Measure: the port-bound kernel, pinned workers, and the counters each
//! worker opens on itself.
//!
//! * [`kernel`]: the [`Kernel`] trait and the `mul` kernel;
//! * [`engine`]: [`Engine::run_rep`] runs one repetition of a [`Workload`]
//!   on a [`Placement`](crate::plan::Placement);
//! * [`items`]: the items `hybrid`'s workers share, statically or by
//!   stealing;
//! * [`counters`]: each worker's perf counter group, and the hardware probe;
//! * [`clock`]: TSC and CLOCK_MONOTONIC, the fallback clock;
//! * [`session`]: the [`Measure`] trait the studies drive, and
//!   [`EngineSession`], the engine behind it;
//! * [`recorder`]: `observe`'s recorder, perf context-switch records of a
//!   workload's threads, and [`launch`], a command held before its exec
//!   while the recorder attaches; [`recording`] is what they produce;
//! * [`command`]: a user's command run once, confined to one arm's CPUs
//!   and measured as a whole process tree (`run -- COMMAND`), and
//!   [`prepare`], its `--prepare` shell command;
//! * [`latency`]: `latency`'s probe, a cache line passed between two
//!   pinned threads by compare-and-swap, every sample bounded in wall time;
//! * [`memory`]: the memory study's probes, a dependent-load chase over
//!   buffers of growing size and a NUMA node's buffer read from each node,
//!   [`mempolicy`] placing and locating their pages;
//! * [`stop`]: SIGINT and SIGTERM as a request to stop within a second;
//! * [`model`]: the samples all of this produces.

pub mod clock;
pub mod command;
pub mod counters;
pub mod engine;
pub mod items;
pub mod kernel;
pub mod latency;
pub mod launch;
pub mod memory;
pub mod mempolicy;
pub mod model;
pub mod prepare;
pub mod recorder;
pub mod recording;
pub mod session;
pub mod static_keys;
pub mod stop;
pub mod tree;

pub use engine::{Engine, Workload, calibrate_passes};
pub use kernel::{Kernel, kernel_by_name};
pub use model::*;
pub use session::{EngineSession, Measure, MeasureOptions, RepOutcome};
