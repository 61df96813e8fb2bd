//! `placement-study`: where do my threads really run, and what does sharing a
//! core cost?
//!
//! The crate is laid out as the pipeline it runs:
//!
//! * [`probe`] reads the machine (sysfs/procfs under a root folder, CPUID
//!   through a [`raw_cpuid::CpuIdReader`]) into a [`probe::Topology`];
//! * [`plan`] decides which CPUs each placement arm uses;
//! * [`measure`] runs the port-bound kernel on pinned workers that count
//!   themselves;
//! * [`judge`] turns samples into statistics, checks and verdicts;
//! * [`report`] renders tables, JSON and CSV.
//!
//! [`commands`] wires these together for each subcommand; `main.rs` only
//! parses arguments and maps errors to exit codes.

pub mod affinity;
pub mod cli;
pub mod commands;
pub mod cpuset;
pub mod judge;
pub mod measure;
pub mod plan;
pub mod probe;
pub mod report;
pub mod results;
pub mod saved;
