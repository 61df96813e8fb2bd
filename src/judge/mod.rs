//! Judge: statistics, validity checks and the gate's verdict, computed from
//! recorded samples only (no measuring here, so all of it is unit-testable
//! on saved runs).
//!
//! * [`cost`] turns one worker's or repetition's counts into rates: cost per
//!   byte on the chosen clock, instructions per byte, L1i misses, GHz.
//! * [`stats`] summarises an arm (median, CV, min, max, repetitions) and puts
//!   a 95 % interval on the penalty of one arm against another.
//! * [`checks`] says whether the measurement measured what it claims:
//!   pinning held, no counter multiplexed, instructions per byte invariant,
//!   CV under the bar; and which repetitions the statistics must leave out.
//! * [`arms`] gathers every statistic of one arm for the tables.
//! * [`gate`] decides physical / virtual / inconclusive from the penalty's
//!   interval, and judges the same-CPU control.
//! * [`pairs`] decides each `pairs` comparison and judges the measured
//!   sibling map against the published one.
//! * [`latency`] turns `latency`'s samples into each pair's one-way
//!   latency, clusters the matrix into domains and judges them against the
//!   published ones.
//! * [`memory`] finds the cache ladder's plateaus and steps and judges
//!   them against the published cache sizes, and the NUMA matrix's
//!   latency ratios against the published distances;
//!   [`memory_sharing`] whether two CPUs of a published shared cache see
//!   each other's lines faster than two across its edge.
//! * [`hybrid`] turns baselines into class speeds, measured classes and a
//!   ceiling, and judges what each work-sharing scheme made of them.
//! * [`fleet`] flags the hosts whose penalty is far from that of their CPU
//!   model's hosts on the same clock.
//! * [`validity`] is the one rule saying whether a run may be quoted.
//! * [`warnings`] are the notes on the machine and the measurement.
//! * [`command`] summarises a user's command under the arms (`run --
//!   COMMAND`): each arm's wall time and its ratio to the baseline arm;
//!   [`command_checks`] its checks and whether it may be quoted.

pub mod arms;
pub mod baseline;
pub mod batches;
pub mod checks;
pub mod command;
pub mod command_checks;
pub mod cost;
pub mod fleet;
pub mod gaps;
pub mod gate;
pub mod hybrid;
pub mod latency;
pub mod memory;
pub mod memory_sharing;
pub mod observe;
pub mod pairs;
pub mod sentences;
pub mod stats;
pub mod sweep;
pub mod validity;
pub mod warnings;
