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
//! * [`pairs`]: [`pairs::pairs_study`], the measured sibling map.

pub mod gate;
pub mod pairs;
pub mod run;

use crate::measure::Measure;
use anyhow::Result;

/// This host's name, as a saved result records it ("unknown" if unreadable).
fn host_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "unknown".into())
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
    pub stopped: Option<crate::measure::stop::StopSignal>,
}

impl Recorded {
    /// Measures one repetition and keeps it. `false` once a stop signal
    /// arrived (now or earlier): the caller stops measuring.
    pub fn measure<M: Measure>(
        &mut self,
        measure: &mut M,
        placement: &crate::plan::Placement,
        rep: usize,
        warmup: bool,
    ) -> Result<bool> {
        if self.stopped.is_some() {
            return Ok(false);
        }
        match measure.run_rep(placement, rep, warmup)? {
            crate::measure::RepOutcome::Measured(sample) => {
                self.samples.push(sample);
                Ok(true)
            }
            crate::measure::RepOutcome::Stopped(signal) => {
                self.stopped = Some(signal);
                Ok(false)
            }
        }
    }

    /// Measures each placement once, in order, as repetition `rep`; `false`
    /// when a stop signal ended the round. A round is kept whole or not at
    /// all, so every arm keeps the same repetitions and their pairing.
    pub fn measure_round<M: Measure>(
        &mut self,
        measure: &mut M,
        placements: &[&crate::plan::Placement],
        rep: usize,
        warmup: bool,
    ) -> Result<bool> {
        let kept = self.samples.len();
        for placement in placements {
            if !self.measure(measure, placement, rep, warmup)? {
                self.samples.truncate(kept);
                return Ok(false);
            }
        }
        Ok(true)
    }
}
