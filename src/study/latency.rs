//! `latency`: how long a cache line takes from one CPU to another, for
//! every pair of allowed CPUs, and the domains that matrix shows against
//! the ones the kernel publishes.
//!
//! A same-CPU control comes first (both threads on the first CPU: they can
//! only take turns by time slice, which shows that scale and that pinning
//! holds), then every pair in order, each sampled by
//! [`crate::measure::latency::ping_pong`]. The pairs are measured one at a
//! time: two pairs at once would share the interconnect they measure.
//! `--time-budget` and a stop signal are checked between pairs; the pairs
//! measured so far are kept, and the others leave their domains undecided.

use super::{Progress, finished_head, head, two_or_more_allowed};
use crate::cpuset::CpuSet;
use crate::judge::checks::{Check, CheckName};
use crate::judge::latency::{PairLatency, PublishedLevels, judge_latency};
use crate::judge::pairs::published_groups;
use crate::judge::warnings::Warning;
use crate::measure::latency::{PingPongOptions, ROUND_TRIPS_PER_SAMPLE, ping_pong};
use crate::measure::stop::{self, StopSignal};
use crate::probe::Topology;
use crate::report;
use crate::saved::{DocumentKind, LatencyEffort, LatencyOptions, LatencyResult};
use anyhow::Result;
use std::time::{Duration, Instant};

/// What `latency` was asked for, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyStudyOptions {
    /// Samples kept per pair.
    pub samples: usize,
    /// The wall-time bound of one sample.
    pub sample_bound: Duration,
    /// Checked between pairs: once spent, no other pair starts.
    pub time_budget: Option<Duration>,
}

/// Runs `latency` on the CPUs of `topology` this process may use.
pub fn latency_study(
    topology: &Topology,
    options: &LatencyStudyOptions,
    progress: &mut dyn Progress,
) -> Result<LatencyResult> {
    let head = head(DocumentKind::Latency, topology);
    let tested = two_or_more_allowed(topology, "latency", "to pass a cache line between")?;
    let ping_pong_options = PingPongOptions {
        samples: options.samples,
        sample_bound: options.sample_bound,
    };
    let began = Instant::now();
    let deadline = options.time_budget.map(|budget| began + budget);
    let first = tested.cpus()[0];
    progress.update(&format!("latency: same-CPU control on CPU {first}"));
    let control_run = ping_pong(first, first, ping_pong_options)?;
    let mut stopped = control_run.stopped;
    let control = (!control_run.samples.is_empty())
        .then(|| PairLatency::of([first, first], &control_run.samples, control_run.pinned));

    let all: Vec<[u32; 2]> = tested.pairs().collect();
    let mut pairs = Vec::new();
    let mut budget_exhausted = false;
    for (index, &[a, b]) in all.iter().enumerate() {
        if stopped {
            break;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            budget_exhausted = true;
            break;
        }
        progress.update(&format!(
            "latency: pair {}/{}: CPUs {a} and {b}",
            index + 1,
            all.len()
        ));
        let run = ping_pong(a, b, ping_pong_options)?;
        stopped = run.stopped;
        if !run.samples.is_empty() {
            pairs.push(PairLatency::of([a, b], &run.samples, run.pinned));
        }
    }
    progress.done();
    let stopped = stopped.then(|| stop::stop_signal().unwrap_or(StopSignal::Interrupt));

    let control_check = control.as_ref().map(control_check);
    let pinning = pinning_check(control.iter().chain(&pairs));
    let control_passed = control_check
        .as_ref()
        .is_some_and(|c| c.status == crate::judge::checks::CheckStatus::Passed)
        && pinning.status == crate::judge::checks::CheckStatus::Passed;
    let published = published_levels(topology, &tested);
    let judgement = judge_latency(
        &tested,
        &pairs,
        control.as_ref(),
        &published,
        control_passed,
        stopped.is_none() && !budget_exhausted,
    );
    let mut warnings = Warning::about_machine(topology);
    let head = finished_head(head, stopped, &mut warnings);
    let sentence = report::latency::sentence(
        &judgement,
        control_check.as_ref(),
        &pinning,
        budget_exhausted,
        stopped,
    );
    Ok(LatencyResult {
        head,
        verdict: judgement.verdict,
        sentence,
        options: LatencyOptions {
            samples: options.samples,
            round_trips_per_sample: ROUND_TRIPS_PER_SAMPLE,
            sample_ms: u64::try_from(options.sample_bound.as_millis()).unwrap_or(u64::MAX),
            time_budget_seconds: options.time_budget.map(|b| b.as_secs_f64()),
        },
        effort: LatencyEffort {
            pairs_measured: pairs.len(),
            all_pairs: all.len(),
            measuring_seconds: began.elapsed().as_secs_f64(),
            budget_exhausted,
        },
        tested,
        published,
        pairs,
        control,
        control_check,
        pinning,
        judgement,
        warnings,
    })
}

/// The control passes when its samples ran into their bound: two threads
/// on one CPU that never yield take turns only by time slice, so a control
/// that finished its round trips within the bound was not on one CPU.
fn control_check(control: &PairLatency) -> Check {
    let cpu = control.cpus[0];
    if control.bounded_samples > 0 {
        Check::passed(
            CheckName::Control,
            format!(
                "both threads on CPU {cpu} took turns by time slice: {} of {} samples ran into \
                 their bound",
                control.bounded_samples, control.samples
            ),
        )
    } else {
        Check::failed(
            CheckName::Control,
            format!(
                "both threads on CPU {cpu} finished every sample within its bound: they were \
                 not time-slicing one CPU"
            ),
        )
    }
}

/// Pinning held when every thread was on its CPU before and after.
fn pinning_check<'a>(measured: impl Iterator<Item = &'a PairLatency>) -> Check {
    let moved: Vec<String> = measured
        .filter(|p| !p.pinned)
        .map(|p| format!("{}-{}", p.cpus[0], p.cpus[1]))
        .collect();
    if moved.is_empty() {
        Check::passed(
            CheckName::Pinning,
            "every thread was on its CPU before and after its samples",
        )
    } else {
        Check::failed(
            CheckName::Pinning,
            format!("a thread was off its CPU in pairs {}", moved.join(", ")),
        )
    }
}

/// The published thread siblings, last-level caches and packages of the
/// `tested` CPUs.
fn published_levels(topology: &Topology, tested: &CpuSet) -> PublishedLevels {
    let last_level = topology
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| c.level)
        .max();
    let caches: Vec<&CpuSet> = topology
        .caches
        .iter()
        .filter(|c| Some(c.level) == last_level && c.kind != "Instruction")
        .map(|c| &c.cpus)
        .collect();
    let shared_cache = if caches.is_empty() {
        Vec::new()
    } else {
        let singletons: Vec<CpuSet> = tested.iter().map(|c| CpuSet::from_cpus([c])).collect();
        published_groups(
            tested,
            tested.iter().map(|cpu| {
                let instance = caches.iter().find(|set| set.contains(cpu));
                let own = &singletons[tested.iter().position(|c| c == cpu).unwrap_or(0)];
                (cpu, instance.copied().unwrap_or(own))
            }),
        )
    };
    let package_sets: Vec<CpuSet> = topology
        .cpus
        .iter()
        .map(|entry| {
            topology
                .cpus
                .iter()
                .filter(|other| other.package == entry.package)
                .map(|other| other.cpu)
                .collect()
        })
        .collect();
    PublishedLevels {
        smt_siblings: published_groups(tested, topology.cpus.iter().map(|c| (c.cpu, &c.siblings))),
        shared_cache,
        packages: published_groups(
            tested,
            topology
                .cpus
                .iter()
                .zip(&package_sets)
                .map(|(c, s)| (c.cpu, s)),
        ),
        unknown: topology.summary.structure_unknown.clone(),
    }
}
