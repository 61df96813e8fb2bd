//! `placement-study`: where do my threads really run, and what does sharing a
//! core cost?
//!
//! The crate is laid out as the pipeline it runs, each layer importing only
//! the ones below it:
//!
//! * [`escape`] makes text from outside (host names, CPU models, paths,
//!   option values) safe to show: the one escaping every view and error
//!   uses, below every other layer;
//! * [`input`] reads every file the tool did not write, bounded and never
//!   blocking, and refuses what is not a regular file;
//! * [`probe`] reads the machine (sysfs/procfs under a root folder; on
//!   x86_64, CPUID through raw-cpuid's `CpuIdReader`; on Arm, the MIDR)
//!   into a [`probe::Topology`];
//! * [`plan`] decides which CPUs each placement arm uses;
//! * [`measure`] runs the port-bound kernel on pinned workers that count
//!   themselves, behind the [`measure::Measure`] trait;
//! * [`judge`] turns samples into statistics, checks and verdicts;
//! * [`saved`] holds the result documents, and writes and reads them safely;
//! * [`fleet`] reads many hosts' documents for `report --fleet` (files,
//!   folders, pdsh and clush output, Ansible `--tree` files), gathered per
//!   host, and the hostlists naming them;
//! * [`report`] renders tables, JSON and CSV;
//! * [`study`] is the one layer above them: each study's loop, written
//!   against `Measure`, returning a document.
//!
//! On top, [`commands`] run one study each and render it, [`options`] turns
//! the [`cli`] arguments into checked options, and [`exit`] holds every exit
//! status; `main.rs` only wires those together.

// The tick clocks and the kernels' inner loops are per-architecture assembly.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("placement-study measures on x86_64 and aarch64 only");

pub mod affinity;
pub mod cli;
pub mod commands;
pub mod cpuset;
pub mod escape;
pub mod exit;
pub mod fleet;
pub mod input;
pub mod judge;
pub mod measure;
pub mod options;
pub mod plan;
pub mod probe;
pub mod report;
pub mod saved;
pub mod study;
pub mod units;
