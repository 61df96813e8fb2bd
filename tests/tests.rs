//! The integration tests, one binary: a module per former test file, so that
//! a change to the library links one test binary, not one per file. The QEMU
//! `guest` and `fleet` suites (tests/guest.rs, tests/fleet.rs) stay binaries
//! of their own. Run one module with `cargo test --test tests MODULE::`.
//!
//! Everything here shares one process: a test that changes process-wide state
//! (signal handlers, the stop flag) does it in a child process, this binary
//! run again on that one test (see [`common::rerun_test`]).

mod baseline_cli;
mod big_machine;
mod common;
mod conformance;

mod cli_arm;
mod cli_bad_input;
mod cli_live;
mod command_cli;
mod command_live;
mod conformance_cpuid;
mod conformance_sysfs;
mod cpuid_fixtures;
mod cpuset_props;
mod figure_machine;
mod figures;
mod fleet_report;
mod hostile_text;
mod html;
mod hypervisor_fixtures;
mod judge_samples;
mod latency_live;
mod layering;
mod man_flags;
mod measure_live;
mod memory_chase;
mod nfd;
mod not_a_file;
mod observe_live;
mod observe_replay;
mod owned_tree;
mod probe_both_sources;
mod prom;
mod saved_io;
mod schemas;
mod snapshot;
mod snapshot_document;
mod stop_signals;
mod study_replay;
mod table_width;
mod topology_fixtures;
mod trace;
mod unprivileged;
