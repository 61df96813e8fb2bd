//! The studies: each command's measuring loop, written against
//! [`Measure`] and returning a typed document.
//!
//! A study receives checked options and a topology, asks [`crate::plan`]
//! for placements, drives a [`Measure`] (in the product always the engine;
//! in tests recorded samples replayed), hands the samples to
//! [`crate::judge`], and returns the document that `report` renders and
//! `saved` writes. It prints nothing itself: progress goes through
//! [`Progress`].
//!
//! * [`gate`]: [`gate::gate_session`], the SMT co-location gate;
//! * [`run`]: [`run::run_study`], the placement study;
//! * [`pairs`]: [`pairs::pairs_study`], the measured sibling map;
//! * [`memory`]: [`memory::memory_study`], the cache ladder and the NUMA
//!   matrix planned, measured and judged, returned as one result (no
//!   document yet);
//! * [`latency`]: [`latency::latency_study`], the core-to-core latency
//!   matrix and its domains;
//! * [`observe`]: [`observe::observe_study`], where Linux ran a workload;
//! * [`hybrid`]: [`hybrid::hybrid_study`], core classes measured, and how
//!   static shares and work stealing use them;
//! * [`topology`]: [`topology::topology_document`], the probed machine as
//!   a document;
//! * [`snapshot`]: [`snapshot::record_snapshot`], what probing the machine
//!   read, as one document (`snapshot FILE.json`);
//! * [`command`]: [`command::run_rounds`], a user's command under the arms
//!   (`run -- COMMAND`; its first slice: the rounds).

pub mod command;
pub mod gate;
pub mod hybrid;
pub mod latency;
pub mod memory;
pub mod observe;
pub mod pairs;
pub mod run;
pub mod snapshot;
pub mod sweep;
pub mod topology;

use crate::cpuset::CpuSet;
use crate::exit::UsageError;
use crate::judge::warnings::Warning;
use crate::measure::mempolicy::try_bind;
use crate::measure::stop::StopSignal;
use crate::measure::{Measure, RepOutcome};
use crate::plan::Placement;
use crate::plan::hybrid::SharedWork;
use crate::plan::membind::{Membind, arm_nodes};
use crate::probe::Topology;
use crate::saved::{DocumentHead, DocumentKind, UNKNOWN_HOST};
use anyhow::Result;

/// This host's name, as a saved result records it ([`UNKNOWN_HOST`] if
/// unreadable).
pub fn host_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| UNKNOWN_HOST.into())
}

/// The head of a `kind` document measured on this host about `topology`,
/// started now.
fn head(kind: DocumentKind, topology: &Topology) -> DocumentHead {
    DocumentHead::new(kind, topology, host_name(), unix_now())
}

/// A study's head once its rounds are over: incomplete where a stop
/// signal ended them, and the signal then leads `warnings`.
fn finished_head(
    head: DocumentHead,
    stopped: Option<StopSignal>,
    warnings: &mut Vec<Warning>,
) -> DocumentHead {
    if let Some(signal) = stopped {
        warnings.insert(0, Warning::Incomplete(signal));
    }
    DocumentHead {
        complete: stopped.is_none(),
        ..head
    }
}

/// The CPUs of `topology` this process may run on, at least two of them:
/// otherwise an error saying that `study` needs two `to` do what it does.
fn two_or_more_allowed(topology: &Topology, study: &str, to: &str) -> Result<CpuSet> {
    let tested: CpuSet = topology
        .cpus
        .iter()
        .filter(|c| c.allowed)
        .map(|c| c.cpu)
        .collect();
    if tested.len() < 2 {
        anyhow::bail!(
            "{study} needs at least two CPUs {to}, and this process may run on {} ({tested}); \
             widen its CPU affinity (taskset, cpuset)",
            tested.len()
        );
    }
    Ok(tested)
}

/// `--membind`: the nodes of each arm (its name and the CPUs it runs on),
/// resolved by [`arm_nodes`] and tried live once per distinct set
/// ([`try_bind`]) before anything is measured, so that a refusal is a
/// usage error naming the value and the fix, not a failed repetition.
fn bound_nodes(
    topology: &Topology,
    membind: &Membind,
    arms: &[(String, Vec<u32>)],
) -> Result<Vec<Vec<u32>>> {
    let mut bound: Vec<Vec<u32>> = Vec::new();
    for (arm, cpus) in arms {
        let nodes = arm_nodes(topology, membind, arm, cpus.iter().copied()).map_err(UsageError)?;
        if !bound.contains(&nodes) {
            try_bind(&nodes).map_err(|refused| {
                UsageError(format!("--membind {membind}: {}", refused.reason(&nodes)))
            })?;
        }
        bound.push(nodes);
    }
    Ok(bound)
}

/// Seconds since the Unix epoch, now.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Where a study reports how far it got (a terminal line, or nothing).
pub trait Progress {
    /// The current step, e.g. "gate: repetition 3/30 (at most)".
    fn update(&mut self, message: &str);
    /// The study finished or stopped: clear the line.
    fn done(&mut self);
    /// A step worth a line of its own where nobody watches the progress
    /// line (a round): by default, the progress line.
    fn step(&mut self, message: &str) {
        self.update(message);
    }
    /// A line that stays, on a terminal or in a log (the plan, an
    /// outliver); by default, none.
    fn note(&mut self, _line: &str) {}
}

/// A progress that shows nothing, for the studies' tests.
#[cfg(test)]
pub(crate) struct Quiet;

#[cfg(test)]
impl Progress for Quiet {
    fn update(&mut self, _: &str) {}
    fn done(&mut self) {}
}

/// A [`Measure`] started on first use, so that a study which finds nothing
/// to measure (a gate without siblings) never calibrates the engine, and so
/// that the gate and the study that follows it share one calibration.
pub struct LazyMeasure<'a, M> {
    started: Option<M>,
    start: Option<Box<dyn FnOnce() -> Result<M> + 'a>>,
}

impl<'a, M: Measure> LazyMeasure<'a, M> {
    /// Starts `start` when a study first asks for a measurement.
    pub fn new(start: impl FnOnce() -> Result<M> + 'a) -> Self {
        LazyMeasure {
            started: None,
            start: Some(Box::new(start)),
        }
    }

    /// The measurement, started now if it was not yet.
    pub fn get(&mut self) -> Result<&mut M> {
        if let Some(start) = self.start.take() {
            self.started = Some(start()?);
        }
        self.started
            .as_mut()
            .ok_or_else(|| anyhow::anyhow!("the measurement failed to start earlier"))
    }
}

/// The repetitions a study has measured so far, and whether a stop signal
/// ended it.
#[derive(Default)]
pub struct Recorded {
    /// Every repetition, warm-ups included (marked), in the order measured.
    pub samples: Vec<crate::measure::RepSample>,
    /// The signal that stopped the study, once one did.
    pub stopped: Option<StopSignal>,
}

impl Recorded {
    /// Measures one repetition and keeps it. `false` once a stop signal
    /// arrived (now or earlier): the caller stops measuring.
    pub fn measure<M: Measure>(
        &mut self,
        measure: &mut M,
        placement: &Placement,
        rep: usize,
        warmup: bool,
    ) -> Result<bool> {
        if self.stopped.is_some() {
            return Ok(false);
        }
        let outcome = measure.run_rep(placement, rep, warmup)?;
        Ok(self.keep(outcome))
    }

    /// Like [`Recorded::measure`], for a repetition of shared work.
    pub fn measure_shared<M: Measure>(
        &mut self,
        measure: &mut M,
        placement: &Placement,
        work: &SharedWork,
        rep: usize,
        warmup: bool,
    ) -> Result<bool> {
        if self.stopped.is_some() {
            return Ok(false);
        }
        let outcome = measure.run_shared(placement, work, rep, warmup)?;
        Ok(self.keep(outcome))
    }

    /// Keeps a measured repetition, or the signal that stopped it.
    fn keep(&mut self, outcome: RepOutcome) -> bool {
        match outcome {
            RepOutcome::Measured(sample) => {
                self.samples.push(sample);
                true
            }
            RepOutcome::Stopped(signal) => {
                self.stopped = Some(signal);
                false
            }
        }
    }

    /// Pauses `gap` between batches; `false` once a stop signal arrived
    /// (now or earlier).
    pub fn pause<M: Measure>(&mut self, measure: &mut M, gap: std::time::Duration) -> bool {
        if self.stopped.is_none() {
            self.stopped = measure.pause(gap);
        }
        self.stopped.is_none()
    }

    /// Measures each placement once, in order, as repetition `rep`; `false`
    /// when a stop signal ended the round. A round is kept whole or not at
    /// all, so every arm keeps the same repetitions and their pairing.
    pub fn measure_round<M: Measure>(
        &mut self,
        measure: &mut M,
        placements: &[&Placement],
        rep: usize,
        warmup: bool,
    ) -> Result<bool> {
        self.whole_round(placements, |recorded, placement| {
            recorded.measure(measure, placement, rep, warmup)
        })
    }

    /// Like [`Recorded::measure_round`], each placement sharing its work.
    pub fn measure_shared_round<M: Measure>(
        &mut self,
        measure: &mut M,
        parts: &[(Placement, SharedWork)],
        rep: usize,
        warmup: bool,
    ) -> Result<bool> {
        self.whole_round(parts, |recorded, (placement, work)| {
            recorded.measure_shared(measure, placement, work, rep, warmup)
        })
    }

    /// Runs `one` on each part in order; on the first `false` (a stop),
    /// drops what this round measured and returns `false`.
    fn whole_round<T>(
        &mut self,
        parts: &[T],
        mut one: impl FnMut(&mut Self, &T) -> Result<bool>,
    ) -> Result<bool> {
        let kept = self.samples.len();
        for part in parts {
            if !one(self, part)? {
                self.samples.truncate(kept);
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// ", about N s left" after `done` of `total` rounds that began at
/// `began`: rounds take alike, so the first ones tell how long the rest
/// take.
fn time_left(began: std::time::Instant, done: usize, total: usize) -> String {
    format!(
        ", about {:.0} s left",
        began.elapsed().as_secs_f64() / done as f64 * total.saturating_sub(done) as f64
    )
}
