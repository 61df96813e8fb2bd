//! `latency`: how long a cache line takes from one CPU to another, for
//! every pair of allowed CPUs, and the domains that matrix shows against
//! the ones the kernel publishes.
//!
//! A same-CPU control comes first (both threads on the first CPU: they can
//! only take turns by time slice, which shows that scale and that pinning
//! holds), then every pair, in the rounds of disjoint pairs
//! [`crate::plan::latency::rounds`] orders, each sampled by
//! [`crate::measure::latency::ping_pong`] until it has its samples or its
//! latency has settled ([`crate::judge::latency::settled`]).
//!
//! Up to `--parallel` pairs of a round run at once (half the CPUs by
//! default), but only once that is shown not to disturb them: the first
//! round is measured together and then each pair alone, and the rest run
//! together only when every pair agreed ([`together_agrees_with_alone`]);
//! at the end the fastest and slowest pair of every cluster measured
//! together is measured alone again, and should one disagree every pair
//! measured together is measured again alone. Two vCPUs stacked on one host
//! CPU, or SMT siblings of two pairs, are what this catches: the verdict
//! never rests on a pair measured beside another that changed it.
//!
//! `--one-per-domain` measures rows instead
//! ([`crate::plan::latency::DomainSearch`]): one representative against the
//! other CPUs of its group, each class the row shows refined by its own
//! representative; the pairs not measured are inferred from the last row
//! that held both ([`infer_unmeasured`]) and say so. A split row's
//! [`crate::plan::latency::bridges`] check that inference where it crosses
//! its classes, and the pairs across two classes a bridge does not bear
//! out are measured instead.
//!
//! A time-sliced pair the rest of the matrix does not bear out (stacking is
//! an equivalence; see [`doubtful_time_sliced`]) is measured once more, so
//! that a host stall of a few samples never makes two CPUs stacked. Then
//! the pair just above each gap between transfer clusters is measured
//! again and the faster reading kept ([`gap_edges`]), so that one noisy
//! pair never opens a gap: a class of its own.
//!
//! `--time-budget` and a stop signal are checked between batches (one
//! private `Matrix::may_go_on` for both); the pairs measured so far are
//! kept, and the others leave their domains undecided.

use super::{Progress, finished_head, head, two_or_more_allowed};
use crate::cpuset::{CpuSet, cpu_pair};
use crate::judge::checks::{Check, CheckName, CheckStatus};
use crate::judge::latency::{
    Cluster, PairLatency, PublishedLevels, bridge_bears_out, doubtful_time_sliced, gap_edges,
    infer_unmeasured, judge_latency, reading_again_is_faster, row_outcome, settled,
    together_agrees_with_alone,
};
use crate::judge::pairs::published_groups;
use crate::judge::warnings::Warning;
use crate::measure::latency::{
    PingPongOptions, ROUND_TRIPS_PER_SAMPLE, Settled, all_samples, ping_pong, ping_pong_together,
};
use crate::measure::stop::{self, StopSignal};
use crate::plan::latency::{DomainSearch, RowOutcome, bridges, rounds};
use crate::probe::Topology;
use crate::saved::{DocumentKind, LatencyEffort, LatencyOptions, LatencyResult};
use anyhow::Result;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

/// `--samples` when not given: enough for a 10th percentile of a pair that
/// does not settle earlier.
pub const DEFAULT_SAMPLES: usize = 100;
/// `--sample-ms` when not given: a few time slices of Linux's scheduler.
pub const DEFAULT_SAMPLE_MS: u64 = 20;

/// What `latency` was asked for, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyStudyOptions {
    /// Samples kept per pair, at most.
    pub samples: usize,
    /// The wall-time bound of one sample.
    pub sample_bound: Duration,
    /// Checked between batches: once spent, no other pair starts.
    pub time_budget: Option<Duration>,
    /// A pair stops sampling once its latency has settled.
    pub early_stop: bool,
    /// Pairs at once (`None`: half the tested CPUs).
    pub parallel: Option<usize>,
    /// Measure one representative per domain found, and infer the rest.
    pub one_per_domain: bool,
}

/// The pairs measured so far, and how, and whether more may be measured.
struct Matrix<'a> {
    ping_pong: PingPongOptions,
    settled: &'a Settled,
    /// Each measured pair, in the order measured (a pair measured again
    /// alone replaces its earlier value in place).
    pairs: Vec<PairLatency>,
    /// Where each pair is in `pairs`, and whether it was measured beside
    /// other pairs: one lookup, not a scan of 32640 pairs on 256 CPUs.
    index: HashMap<[u32; 2], (usize, bool)>,
    deadline: Option<Instant>,
    stopped: bool,
    budget_exhausted: bool,
}

impl Matrix<'_> {
    /// False once a stop signal came or the time budget ran out (which it
    /// records): no other pair starts.
    fn may_go_on(&mut self) -> bool {
        if !self.stopped && self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.budget_exhausted = true;
        }
        !self.stopped && !self.budget_exhausted
    }

    /// Measures `batch` (disjoint pairs) at once, or one at a time when
    /// `alone`, keeping each pair that completed a sample.
    fn measure(&mut self, batch: &[[u32; 2]], alone: bool) -> Result<()> {
        let runs = if alone || batch.len() == 1 {
            let mut runs = Vec::new();
            for &[a, b] in batch {
                if self.stopped {
                    break;
                }
                let run = ping_pong(a, b, self.ping_pong, self.settled)?;
                self.stopped |= run.stopped;
                runs.push(run);
            }
            runs
        } else {
            ping_pong_together(batch, self.ping_pong, self.settled)?
        };
        let together = !alone && batch.len() > 1;
        for (&cpus, run) in batch.iter().zip(runs) {
            self.stopped |= run.stopped;
            if run.samples.is_empty() {
                continue;
            }
            let latency = PairLatency::of(cpus, &run.samples, run.pinned);
            match self.index.get(&cpus) {
                Some(&(at, _)) => {
                    self.pairs[at] = latency;
                    self.index.insert(cpus, (at, together));
                }
                None => {
                    self.index.insert(cpus, (self.pairs.len(), together));
                    self.pairs.push(latency);
                }
            }
        }
        Ok(())
    }

    fn get(&self, cpus: [u32; 2]) -> Option<&PairLatency> {
        self.index.get(&cpus).map(|&(at, _)| &self.pairs[at])
    }

    /// The pairs whose latest measurement ran beside other pairs, sorted.
    fn measured_together(&self) -> Vec<[u32; 2]> {
        let mut together: Vec<[u32; 2]> = self
            .index
            .iter()
            .filter(|(_, (_, together))| *together)
            .map(|(&cpus, _)| cpus)
            .collect();
        together.sort_unstable();
        together
    }

    /// Measures `pairs` again, alone, and checks each against its value
    /// before (see [`agreement`]).
    fn remeasure_alone(&mut self, pairs: &[[u32; 2]], width: usize, what: &str) -> Result<Check> {
        let before: Vec<PairLatency> = pairs.iter().filter_map(|&p| self.get(p).cloned()).collect();
        self.measure(pairs, true)?;
        Ok(agreement(&before, self, width, what))
    }
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
    let first = tested.cpus()[0];
    progress.update(&format!("latency: same-CPU control on CPU {first}"));
    let control_run = ping_pong(first, first, ping_pong_options, &all_samples)?;
    let control = (!control_run.samples.is_empty())
        .then(|| PairLatency::of([first, first], &control_run.samples, control_run.pinned));

    let mut matrix = Matrix {
        ping_pong: ping_pong_options,
        settled: if options.early_stop {
            &settled
        } else {
            &all_samples
        },
        pairs: Vec::new(),
        index: HashMap::new(),
        deadline: options.time_budget.map(|budget| began + budget),
        stopped: control_run.stopped,
        budget_exhausted: false,
    };
    let all_pairs = tested.pairs().count();
    let (domain_rows, width, parallel_check) = if options.one_per_domain {
        (measure_rows(&mut matrix, &tested, progress)?, 1, None)
    } else {
        let width = options
            .parallel
            .unwrap_or(tested.len() / 2)
            .clamp(1, (tested.len() / 2).max(1));
        let (width, check) = measure_rounds(&mut matrix, &tested, width, progress)?;
        let check = confirm_together(
            &mut matrix,
            &tested,
            control.as_ref(),
            width,
            check,
            progress,
        )?;
        (DomainRows::default(), width, check)
    };
    let rows = &domain_rows.rows;
    // Time-sliced pairs the rest of the matrix does not bear out (a host
    // stall), measured once more, alone.
    let doubtful: Vec<[u32; 2]> = if matrix.may_go_on() {
        doubtful_time_sliced(&tested, &whole_matrix(&matrix, &tested, rows))
            .into_iter()
            .filter(|&cpus| matrix.get(cpus).is_some())
            .collect()
    } else {
        Vec::new()
    };
    if !doubtful.is_empty() {
        progress.update(&format!(
            "latency: {} time-sliced pairs its neighbours do not bear out, again",
            doubtful.len()
        ));
        measure_again(&mut matrix, &doubtful)?;
    }
    let published = published_levels(topology, &tested);
    let gap_edges_rechecked = recheck_gap_edges(
        &mut matrix,
        &tested,
        rows,
        control.as_ref(),
        &published,
        progress,
    )?;
    progress.done();
    let Matrix {
        mut pairs,
        stopped,
        budget_exhausted,
        ..
    } = matrix;
    let pairs_measured = pairs.len();
    let samples_taken = pairs.iter().map(|p| p.samples).sum();
    let inferred = infer_unmeasured(&tested, &pairs, rows);
    pairs.extend(inferred);
    let stopped = stopped.then(|| stop::stop_signal().unwrap_or(StopSignal::Interrupt));

    let control_check = control.as_ref().map(control_check);
    let pinning = pinning_check(control.iter().chain(&pairs));
    let control_passed = control_check
        .as_ref()
        .is_some_and(|c| c.status == CheckStatus::Passed)
        && pinning.status == CheckStatus::Passed;
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
    let sentence = crate::judge::sentences::latency::sentence(
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
            early_stop: options.early_stop,
            parallel: options.parallel,
            one_per_domain: options.one_per_domain,
        },
        effort: LatencyEffort {
            pairs_measured,
            pairs_inferred: pairs.len() - pairs_measured,
            all_pairs,
            measuring_seconds: began.elapsed().as_secs_f64(),
            budget_exhausted,
            pairs_at_once: width,
            samples_taken,
            time_sliced_rechecked: doubtful.len(),
            bridges: domain_rows.bridges,
            bridges_not_borne_out: domain_rows.bridges_not_borne_out,
            gap_edges_rechecked,
        },
        tested,
        published,
        pairs,
        control,
        control_check,
        parallel_check,
        pinning,
        judgement,
        warnings,
    })
}

/// Every pair in the rounds of [`rounds`], up to `width` of a round at
/// once. The first round measured together is measured alone too, and the
/// rest run together only if every pair agreed: the width the rest ran at,
/// and that check (`None` when no round ran more than one pair at once).
fn measure_rounds(
    matrix: &mut Matrix,
    tested: &CpuSet,
    mut width: usize,
    progress: &mut dyn Progress,
) -> Result<(usize, Option<Check>)> {
    let rounds = rounds(tested);
    let all_pairs = tested.pairs().count();
    let mut check = None;
    for (index, round) in rounds.iter().enumerate() {
        for batch in round.chunks(width) {
            if !matrix.may_go_on() {
                return Ok((width, check));
            }
            progress.update(&format!(
                "latency: round {}/{}: {} of {all_pairs} pairs measured, {} at once",
                index + 1,
                rounds.len(),
                matrix.pairs.len(),
                batch.len()
            ));
            matrix.measure(batch, false)?;
        }
        if check.is_none() && width > 1 && round.len() > 1 && matrix.may_go_on() {
            progress.update("latency: the first round again, one pair at a time");
            let first = matrix.remeasure_alone(round, width, "first round")?;
            if first.status != CheckStatus::Passed {
                width = 1;
            }
            check = Some(first);
        }
    }
    Ok((width, check))
}

/// The end of the parallel check: the fastest and slowest pair of each
/// cluster, if measured together, measured alone once more; any
/// disagreement and every pair measured together is measured again alone.
/// The check, both its parts said where both passed.
fn confirm_together(
    matrix: &mut Matrix,
    tested: &CpuSet,
    control: Option<&PairLatency>,
    width: usize,
    first_round: Option<Check>,
    progress: &mut dyn Progress,
) -> Result<Option<Check>> {
    let together = matrix.measured_together();
    if together.is_empty() || !matrix.may_go_on() {
        return Ok(first_round);
    }
    let clusters = judge_latency(
        tested,
        &matrix.pairs,
        control,
        &PublishedLevels::default(),
        true,
        true,
    )
    .clusters;
    let mut ends: Vec<[u32; 2]> = clusters
        .iter()
        .flat_map(|c| cluster_ends(c, matrix, &together))
        .collect();
    ends.sort();
    ends.dedup();
    progress.update("latency: each cluster's fastest and slowest pair again, alone");
    let check = matrix.remeasure_alone(&ends, width, "cluster ends")?;
    if check.status != CheckStatus::Passed {
        progress.update(&format!(
            "latency: {} pairs measured together, again one at a time",
            together.len()
        ));
        matrix.measure(&together, true)?;
    }
    Ok(Some(match first_round {
        Some(first) if check.status == CheckStatus::Passed => Check {
            detail: format!("{}; {}", first.detail, check.detail),
            ..check
        },
        _ => check,
    }))
}

/// Where `--one-per-domain` gets its pairs: the machine ([`Matrix`]), or
/// a recorded matrix in the tests, so that the search is tested whole.
trait PairSource {
    /// False once no other pair may start.
    fn may_go_on(&mut self) -> bool;
    /// Measures `pairs` one at a time.
    fn measure_alone(&mut self, pairs: &[[u32; 2]]) -> Result<()>;
    /// A pair measured so far.
    fn get(&self, cpus: [u32; 2]) -> Option<&PairLatency>;
    /// Every pair measured so far.
    fn pairs(&self) -> &[PairLatency];
    /// Puts back an earlier reading of a pair measured since.
    fn restore(&mut self, reading: PairLatency);
}

impl PairSource for Matrix<'_> {
    fn may_go_on(&mut self) -> bool {
        Matrix::may_go_on(self)
    }

    fn measure_alone(&mut self, pairs: &[[u32; 2]]) -> Result<()> {
        self.measure(pairs, true)
    }

    fn get(&self, cpus: [u32; 2]) -> Option<&PairLatency> {
        Matrix::get(self, cpus)
    }

    fn pairs(&self) -> &[PairLatency] {
        &self.pairs
    }

    fn restore(&mut self, reading: PairLatency) {
        // Its together-or-alone mark stays the later one's: the parallel
        // check, its only reader, is over by then.
        if let Some(&(at, _)) = self.index.get(&reading.cpus) {
            self.pairs[at] = reading;
        }
    }
}

/// What `--one-per-domain` measured besides pairs.
#[derive(Debug, Default)]
struct DomainRows {
    /// Each row: a representative and the CPUs measured against it.
    rows: Vec<(u32, Vec<u32>)>,
    /// Bridges measured, and of them those that did not bear their row out.
    bridges: usize,
    bridges_not_borne_out: usize,
}

/// `--one-per-domain`: measures the rows of a [`DomainSearch`] over
/// `tested`, one pair at a time (a row's pairs share its representative),
/// and the bridges of each split row.
fn measure_rows(
    source: &mut impl PairSource,
    tested: &CpuSet,
    progress: &mut dyn Progress,
) -> Result<DomainRows> {
    let all_pairs = tested.pairs().count();
    let mut search = DomainSearch::new(tested);
    let mut measured_rows = DomainRows::default();
    while let Some(row) = search.next_row() {
        if !source.may_go_on() {
            break;
        }
        progress.update(&format!(
            "latency: CPU {} against {} others ({} of {all_pairs} pairs measured)",
            row.representative,
            row.others.len(),
            source.pairs().len()
        ));
        let batch: Vec<[u32; 2]> = row
            .others
            .iter()
            .map(|&c| cpu_pair(row.representative, c))
            .collect();
        source.measure_alone(&batch)?;
        let measured: Vec<PairLatency> = batch
            .iter()
            .filter_map(|&cpus| source.get(cpus).cloned())
            .collect();
        if measured.len() < batch.len() {
            // Stopped within the row.
            break;
        }
        let outcome = row_outcome(&measured, row.representative, row.seen_flat);
        if let RowOutcome::Split(classes) = &outcome {
            let (bridges, not_borne_out) = measure_bridges(source, row.representative, classes)?;
            measured_rows.bridges += bridges;
            measured_rows.bridges_not_borne_out += not_borne_out;
        }
        search.record(&row, outcome);
        measured_rows.rows.push((row.representative, row.others));
    }
    Ok(measured_rows)
}

/// Measures the bridges of a row of `representative` split into
/// `classes`, and every pair across two classes whose bridge does not bear
/// the row out: those pairs are then measured, not inferred. The bridges
/// measured, and how many did not bear the row out.
fn measure_bridges(
    source: &mut impl PairSource,
    representative: u32,
    classes: &[Vec<u32>],
) -> Result<(usize, usize)> {
    if !source.may_go_on() {
        return Ok((0, 0));
    }
    let bridges = bridges(representative, classes);
    let pairs: Vec<[u32; 2]> = bridges.iter().map(|b| b.pair).collect();
    source.measure_alone(&pairs)?;
    let (mut measured, mut not_borne_out) = (0, 0);
    for bridge in &bridges {
        // A bridge not measured (stopped before it) checks nothing.
        let (Some(entry), Some(across)) = (source.get(bridge.row_entry), source.get(bridge.pair))
        else {
            continue;
        };
        measured += 1;
        if bridge_bears_out(entry, across) {
            continue;
        }
        not_borne_out += 1;
        if source.may_go_on() {
            let unmeasured: Vec<[u32; 2]> = bridge
                .across
                .iter()
                .copied()
                .filter(|&cpus| source.get(cpus).is_none())
                .collect();
            source.measure_alone(&unmeasured)?;
        }
    }
    Ok((measured, not_borne_out))
}

/// Measures the pair just above each gap between transfer clusters again
/// ([`gap_edges`]), keeping the faster reading, until every gap's edge has
/// held up once; at most about one pair per tested CPU, so that a host
/// noisy throughout costs n pairs, not n². The pairs measured again.
fn recheck_gap_edges(
    source: &mut impl PairSource,
    tested: &CpuSet,
    rows: &[(u32, Vec<u32>)],
    control: Option<&PairLatency>,
    published: &PublishedLevels,
    progress: &mut dyn Progress,
) -> Result<usize> {
    let mut rechecked: HashSet<[u32; 2]> = HashSet::new();
    while rechecked.len() < tested.len() && source.may_go_on() {
        let whole = whole_matrix(source, tested, rows);
        let edges: Vec<[u32; 2]> = gap_edges(tested, &whole, control, published)
            .into_iter()
            .filter(|edge| !rechecked.contains(edge))
            .collect();
        if edges.is_empty() {
            break;
        }
        progress.update(&format!(
            "latency: {} pairs just above a gap, again",
            edges.len()
        ));
        measure_again(source, &edges)?;
        rechecked.extend(edges);
    }
    Ok(rechecked.len())
}

/// Measures `pairs` again, alone, keeping the faster of each one's two
/// readings ([`reading_again_is_faster`]): a stall that made a pair look
/// time-sliced, or noise that opened a gap, gives way to the second
/// reading, and a stall during the second leaves the first standing.
fn measure_again(source: &mut impl PairSource, pairs: &[[u32; 2]]) -> Result<()> {
    let before: Vec<PairLatency> = pairs
        .iter()
        .filter_map(|&cpus| source.get(cpus).cloned())
        .collect();
    source.measure_alone(pairs)?;
    for earlier in before {
        if source
            .get(earlier.cpus)
            .is_some_and(|again| !reading_again_is_faster(&earlier, again))
        {
            source.restore(earlier);
        }
    }
    Ok(())
}

/// Every pair of `tested`: those `source` measured, and the others
/// inferred from `rows`.
fn whole_matrix(
    source: &impl PairSource,
    tested: &CpuSet,
    rows: &[(u32, Vec<u32>)],
) -> Vec<PairLatency> {
    let mut whole = source.pairs().to_vec();
    whole.extend(infer_unmeasured(tested, source.pairs(), rows));
    whole
}

/// The fastest and slowest pair of `cluster` among those measured
/// `together`.
fn cluster_ends(cluster: &Cluster, matrix: &Matrix, together: &[[u32; 2]]) -> Vec<[u32; 2]> {
    let mut measured: Vec<&PairLatency> = cluster
        .pairs
        .iter()
        .filter(|cpus| together.binary_search(cpus).is_ok())
        .filter_map(|&cpus| matrix.get(cpus))
        .collect();
    measured.sort_by(|a, b| {
        let ns = |p: &PairLatency| p.one_way_ns.unwrap_or(f64::INFINITY);
        ns(a).total_cmp(&ns(b))
    });
    measured
        .first()
        .into_iter()
        .chain(measured.last())
        .map(|p| p.cpus)
        .collect()
}

/// The parallel check: each pair of `before` (as measured beside others)
/// against its value now in `matrix` (measured alone).
fn agreement(before: &[PairLatency], matrix: &Matrix, width: usize, what: &str) -> Check {
    let changed: Vec<(&PairLatency, &PairLatency)> = before
        .iter()
        .filter_map(|together| {
            let alone = matrix.get(together.cpus)?;
            (!together_agrees_with_alone(together, alone)).then_some((together, alone))
        })
        .collect();
    let checked = before.len();
    let shown = |p: &PairLatency| match p.one_way_ns {
        Some(ns) => crate::units::nanos(ns),
        None => "no progress".to_owned(),
    };
    match changed.first() {
        None => Check::passed(
            CheckName::Parallel,
            format!(
                "{what}: {checked} pairs measured {width} at a time, then alone, agreed within \
                 half a cluster gap"
            ),
        ),
        Some((together, alone)) => Check::failed(
            CheckName::Parallel,
            format!(
                "{what}: {} of {checked} pairs changed when measured alone (CPUs {}-{}: {} beside \
                 others, {} alone): measured one pair at a time instead",
                changed.len(),
                together.cpus[0],
                together.cpus[1],
                shown(together),
                shown(alone)
            ),
        ),
    }
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
    // A CPU in no published cache instance is a cache of its own.
    let own: BTreeMap<u32, CpuSet> = tested.iter().map(|c| (c, CpuSet::from_cpus([c]))).collect();
    let shared_cache = if caches.is_empty() {
        Vec::new()
    } else {
        published_groups(
            tested,
            tested.iter().map(|cpu| {
                let instance = caches.iter().find(|set| set.contains(cpu)).copied();
                (cpu, instance.unwrap_or(&own[&cpu]))
            }),
        )
    };
    let mut packages: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    for entry in &topology.cpus {
        packages.entry(entry.package).or_default().push(entry.cpu);
    }
    let packages: BTreeMap<usize, CpuSet> = packages
        .into_iter()
        .map(|(package, cpus)| (package, CpuSet::from_cpus(cpus)))
        .collect();
    PublishedLevels {
        smt_siblings: published_groups(tested, topology.cpus.iter().map(|c| (c.cpu, &c.siblings))),
        shared_cache,
        packages: published_groups(
            tested,
            topology.cpus.iter().map(|c| (c.cpu, &packages[&c.package])),
        ),
        unknown: topology.summary.structure_unknown.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::latency::recorded::{matrix, pair, sliced};
    use crate::study::Quiet;

    /// A recorded matrix as a [`PairSource`]: each pair measured reads its
    /// recorded value, or its noisy first reading the first time.
    struct Recorded {
        truth: Vec<PairLatency>,
        first_readings: Vec<PairLatency>,
        measured: Vec<PairLatency>,
    }

    impl PairSource for Recorded {
        fn may_go_on(&mut self) -> bool {
            true
        }

        fn measure_alone(&mut self, pairs: &[[u32; 2]]) -> Result<()> {
            for &cpus in pairs {
                let first = self.first_readings.iter().position(|p| p.cpus == cpus);
                let value = match first {
                    Some(at) => self.first_readings.remove(at),
                    None => self.truth.iter().find(|p| p.cpus == cpus).unwrap().clone(),
                };
                self.measured.retain(|p| p.cpus != cpus);
                self.measured.push(value);
            }
            Ok(())
        }

        fn get(&self, cpus: [u32; 2]) -> Option<&PairLatency> {
            self.measured.iter().find(|p| p.cpus == cpus)
        }

        fn pairs(&self) -> &[PairLatency] {
            &self.measured
        }

        fn restore(&mut self, reading: PairLatency) {
            self.measured.retain(|p| p.cpus != reading.cpus);
            self.measured.push(reading);
        }
    }

    /// What `--one-per-domain` made of a recorded matrix.
    struct Searched {
        /// Pairs measured (each once, however often measured).
        measured: usize,
        /// Every pair, measured or inferred, in order.
        pairs: Vec<PairLatency>,
        gap_edges_rechecked: usize,
    }

    /// `--one-per-domain` over `truth`, with noisy `first_readings`: the
    /// rows and their bridges, the gaps' edges measured again, the rest
    /// inferred.
    fn one_per_domain(truth: Vec<PairLatency>, first_readings: Vec<PairLatency>) -> Searched {
        let tested: CpuSet = truth.iter().flat_map(|p| p.cpus).collect();
        let mut source = Recorded {
            truth,
            first_readings,
            measured: Vec::new(),
        };
        let rows = measure_rows(&mut source, &tested, &mut Quiet).unwrap().rows;
        let published = PublishedLevels {
            smt_siblings: tested.iter().map(|c| CpuSet::from_cpus([c])).collect(),
            shared_cache: vec![tested.clone()],
            packages: vec![tested.clone()],
            unknown: None,
        };
        let gap_edges_rechecked =
            recheck_gap_edges(&mut source, &tested, &rows, None, &published, &mut Quiet).unwrap();
        let mut pairs = source.measured;
        let measured = pairs.len();
        pairs.extend(infer_unmeasured(&tested, &pairs, &rows));
        pairs.sort_by_key(|p| p.cpus);
        assert_eq!(pairs.len(), tested.pairs().count(), "every pair");
        Searched {
            measured,
            pairs,
            gap_edges_rechecked,
        }
    }

    /// Every pair of `cpus` at `ns(a, b)`, time-sliced where `stacked`.
    fn recorded(
        cpus: std::ops::Range<u32>,
        ns: impl Fn(u32, u32) -> f64,
        stacked: impl Fn(u32, u32) -> bool,
    ) -> Vec<PairLatency> {
        let cpus: Vec<u32> = cpus.collect();
        matrix(&cpus, |a, b| Some(ns(a, b)))
            .into_iter()
            .map(|p| {
                if stacked(p.cpus[0], p.cpus[1]) {
                    sliced(p)
                } else {
                    p
                }
            })
            .collect()
    }

    /// Each pair of `pairs` agrees with `truth` in class and latency.
    fn assert_exact(pairs: &[PairLatency], truth: &[PairLatency]) {
        for (pair, real) in pairs.iter().zip(truth) {
            assert_eq!(pair.cpus, real.cpus);
            assert_eq!(pair.time_sliced(), real.time_sliced(), "{pair:?}");
            assert_eq!(pair.one_way_ns, real.one_way_ns, "{pair:?}");
        }
    }

    #[test]
    fn one_per_domain_infers_a_stacked_guest_exactly() {
        // 6 vCPUs: 0,2,4 on one host CPU, 1,3,5 on the other.
        let stacked = |a: u32, b: u32| a % 2 == b % 2;
        let ns = |a: u32, b: u32| if stacked(a, b) { 700_000.0 } else { 300.0 };
        let truth = recorded(0..6, ns, stacked);
        let searched = one_per_domain(truth.clone(), Vec::new());
        assert!(searched.measured < truth.len(), "{}", searched.measured);
        assert_exact(&searched.pairs, &truth);
        // One transfer cluster: no gap to check.
        assert_eq!(searched.gap_edges_rechecked, 0);
    }

    #[test]
    fn one_per_domain_measures_a_third_of_a_hierarchy_and_infers_it_exactly() {
        // 2 packages x 2 caches x 4 cores x 2 threads: 32 CPUs.
        let ns = |a: u32, b: u32| match (a / 2 == b / 2, a / 8 == b / 8, a / 16 == b / 16) {
            (true, _, _) => 20.0,
            (_, true, _) => 60.0,
            (_, _, true) => 120.0,
            _ => 300.0,
        };
        let truth = recorded(0..32, ns, |_, _| false);
        let searched = one_per_domain(truth.clone(), Vec::new());
        assert!(
            searched.measured < truth.len() / 3,
            "{} of {}",
            searched.measured,
            truth.len()
        );
        assert_exact(&searched.pairs, &truth);
        // Three real gaps: each edge measured again once, and held.
        assert_eq!(searched.gap_edges_rechecked, 3);
    }

    #[test]
    fn one_noisy_reading_neither_splits_a_row_nor_opens_a_gap() {
        // CI guest, PIN=0,0,0,0,0,0,1,0,0,1: the row of 0 read 0-9 at
        // 357 ns and 0-6 at 212 ns, so 6 and 9 fell in two classes, 6-9
        // (one host CPU) was inferred at 357 ns, and the document found two
        // transfer classes.
        let host = |cpu: u32| u32::from(cpu == 6 || cpu == 9);
        let stacked = |a: u32, b: u32| host(a) == host(b);
        let ns = |a: u32, b: u32| if stacked(a, b) { 1_670_000.0 } else { 212.0 };
        let truth = recorded(0..10, ns, stacked);
        let noisy = vec![pair(0, 9, Some(357.0))];
        let searched = one_per_domain(truth.clone(), noisy);
        assert!(searched.measured < truth.len(), "{}", searched.measured);
        // The bridge 6-9 was time-sliced: measured, not inferred.
        let six_nine = searched.pairs.iter().find(|p| p.cpus == [6, 9]).unwrap();
        assert_eq!(six_nine.inferred_from, None, "6-9 measured");
        // 0-9 measured again read 212 ns: one transfer class.
        assert_eq!(searched.gap_edges_rechecked, 1);
        assert_exact(&searched.pairs, &truth);
    }
}
