//! Validity checks on recorded repetitions. Each says passed, failed or
//! unavailable, with the reason in words, and is never skipped silently: a
//! number is only worth quoting when the checks say it measured what it
//! claims. Warm-up repetitions are never judged: they are discarded anyway.

use crate::judge::cost::instructions_per_byte;
use crate::judge::stats::{Spread, median, significant};
use crate::measure::{RepSample, WorkerSample};
use crate::plan::command::CommandArm;
use crate::plan::membind::nodes_phrase;
use crate::plan::{Arm, Placement};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// How many offenders a detail names before it summarises the rest.
const NAMED_OFFENDERS: usize = 3;

/// Which property a check is about. Saved as its stable short name:
/// "pinning", "multiplexing", "invariance", "cv-bar ARM", "control",
/// "placement-held", "same-work", "other-load ARM", "membind".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckName {
    /// Every pinned worker stayed on its CPU.
    Pinning,
    /// No counter group was time-shared.
    Multiplexing,
    /// Instructions per byte identical everywhere.
    Invariance,
    /// The arm's CV is under the bar.
    CvBar(Arm),
    /// The arm kept a measured repetition after exclusions; written only
    /// when it failed (every repetition was excluded).
    Repetitions(Arm),
    /// The gate's same-CPU control.
    Control,
    /// `latency`: pairs measured at once agreed with the same pairs alone.
    Parallel,
    /// `run -- COMMAND`: the CV bar of a `class:N` arm (its placement arms
    /// use [`CheckName::CvBar`]; see [`CheckName::cv_bar_of`]).
    ClassCvBar(usize),
    /// `run -- COMMAND`: a `class:N` arm kept a repetition (its placement
    /// arms use [`CheckName::Repetitions`]; see
    /// [`CheckName::repetitions_of`]).
    ClassRepetitions(usize),
    /// `run --sweep -- COMMAND`: the CV bar of step K (`cv-bar step:K`).
    StepCvBar(usize),
    /// `run --sweep -- COMMAND`: step K kept a repetition.
    StepRepetitions(usize),
    /// `run --sweep -- COMMAND`: the CV bar of CPU N alone (`cv-bar cpu:N`).
    AloneCvBar(u32),
    /// `run --sweep -- COMMAND`: CPU N alone kept a repetition.
    AloneRepetitions(u32),
    /// `run -- COMMAND`: the CV bar of a domain arm (`cpus:LIST`,
    /// `node:N`, `cache:LEVEL:N`).
    DomainCvBar(CommandArm),
    /// `run -- COMMAND`: a domain arm kept a repetition.
    DomainRepetitions(CommandArm),
    /// `run -- COMMAND`: every thread of the tree ran only on its arm's CPUs.
    PlacementHeld,
    /// `run -- COMMAND`: the tree's user-space instructions agree across arms.
    SameWork,
    /// `run -- COMMAND`: no kept repetition of the arm ran beside other
    /// load on an SMT sibling for more than the bar; written only when
    /// failed (which marks the arm not quotable).
    OtherLoad(CommandArm),
    /// `run --membind`: the memory was on the nodes it was bound to
    /// (the kernel's buffers, by `move_pages`; a command's policy, set and
    /// read back before its exec).
    Membind,
}

impl CheckName {
    /// The CV-bar check of a command study's arm: `cv-bar ARM` for each.
    pub fn cv_bar_of(arm: CommandArm) -> CheckName {
        match arm {
            CommandArm::Placement(arm) => CheckName::CvBar(arm),
            CommandArm::Class(index) => CheckName::ClassCvBar(index),
            CommandArm::Step(workers) => CheckName::StepCvBar(workers),
            CommandArm::Alone(cpu) => CheckName::AloneCvBar(cpu),
            CommandArm::Cpus(_) | CommandArm::Node(_) | CommandArm::Cache { .. } => {
                CheckName::DomainCvBar(arm)
            }
        }
    }

    /// What a `repetitions …` check is about (`sibling-packed`,
    /// `step:2`, `cpu:1`, `class:0`): the arm, step, class or CPU alone
    /// that kept no repetition; `None` for every other check.
    pub fn nothing_kept_subject(&self) -> Option<String> {
        match self {
            CheckName::Repetitions(arm) => Some(arm.to_string()),
            CheckName::ClassRepetitions(index) => Some(format!("class:{index}")),
            CheckName::StepRepetitions(workers) => Some(format!("step:{workers}")),
            CheckName::AloneRepetitions(cpu) => Some(format!("cpu:{cpu}")),
            _ => None,
        }
    }

    /// The repetitions check of a command study's arm: `repetitions ARM`.
    pub fn repetitions_of(arm: CommandArm) -> CheckName {
        match arm {
            CommandArm::Placement(arm) => CheckName::Repetitions(arm),
            CommandArm::Class(index) => CheckName::ClassRepetitions(index),
            CommandArm::Step(workers) => CheckName::StepRepetitions(workers),
            CommandArm::Alone(cpu) => CheckName::AloneRepetitions(cpu),
            CommandArm::Cpus(_) | CommandArm::Node(_) | CommandArm::Cache { .. } => {
                CheckName::DomainRepetitions(arm)
            }
        }
    }
}

impl fmt::Display for CheckName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckName::Pinning => f.write_str("pinning"),
            CheckName::Multiplexing => f.write_str("multiplexing"),
            CheckName::Invariance => f.write_str("invariance"),
            CheckName::CvBar(arm) => write!(f, "cv-bar {arm}"),
            CheckName::Repetitions(arm) => write!(f, "repetitions {arm}"),
            CheckName::Control => f.write_str("control"),
            CheckName::Parallel => f.write_str("parallel"),
            CheckName::ClassCvBar(index) => write!(f, "cv-bar class:{index}"),
            CheckName::ClassRepetitions(index) => write!(f, "repetitions class:{index}"),
            CheckName::StepCvBar(workers) => write!(f, "cv-bar step:{workers}"),
            CheckName::StepRepetitions(workers) => write!(f, "repetitions step:{workers}"),
            CheckName::AloneCvBar(cpu) => write!(f, "cv-bar cpu:{cpu}"),
            CheckName::AloneRepetitions(cpu) => write!(f, "repetitions cpu:{cpu}"),
            CheckName::DomainCvBar(arm) => write!(f, "cv-bar {arm}"),
            CheckName::DomainRepetitions(arm) => write!(f, "repetitions {arm}"),
            CheckName::PlacementHeld => f.write_str("placement-held"),
            CheckName::SameWork => f.write_str("same-work"),
            CheckName::OtherLoad(arm) => write!(f, "other-load {arm}"),
            CheckName::Membind => f.write_str("membind"),
        }
    }
}

impl std::str::FromStr for CheckName {
    type Err = String;

    fn from_str(text: &str) -> Result<CheckName, String> {
        Ok(match text {
            "pinning" => CheckName::Pinning,
            "multiplexing" => CheckName::Multiplexing,
            "invariance" => CheckName::Invariance,
            "control" => CheckName::Control,
            "parallel" => CheckName::Parallel,
            "placement-held" => CheckName::PlacementHeld,
            "same-work" => CheckName::SameWork,
            "membind" => CheckName::Membind,
            _ if text.starts_with("other-load ") => {
                let arm = &text["other-load ".len()..];
                CheckName::OtherLoad(CommandArm::try_from(arm.to_string())?)
            }
            _ => match (
                text.strip_prefix("cv-bar "),
                text.strip_prefix("repetitions "),
            ) {
                (Some(arm), _) => match command_arm(arm, text)? {
                    Some(arm) => CheckName::cv_bar_of(arm),
                    None => CheckName::CvBar(arm.parse()?),
                },
                (_, Some(arm)) => match command_arm(arm, text)? {
                    Some(arm) => CheckName::repetitions_of(arm),
                    None => CheckName::Repetitions(arm.parse()?),
                },
                (None, None) => return Err(format!("unknown check name '{text}'")),
            },
        })
    }
}

/// The arm named `class:N`, `step:K`, `cpu:N`, `cpus:LIST`, `node:N` or
/// `cache:LEVEL:N` in the check name `text`; `None` for any other arm (a
/// placement, parsed as the kernel study's).
fn command_arm(arm: &str, text: &str) -> Result<Option<CommandArm>, String> {
    if !["class:", "step:", "cpu:", "cpus:", "node:", "cache:"]
        .iter()
        .any(|prefix| arm.starts_with(prefix))
    {
        return Ok(None);
    }
    arm.parse()
        .map(Some)
        .map_err(|_| format!("unknown check name '{text}'"))
}

impl Serialize for CheckName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CheckName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CheckName, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Written by hand, as its Serialize is: the check's name as [`fmt::Display`]
/// writes it.
impl schemars::JsonSchema for CheckName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CheckName".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The check's stable short name: \"pinning\", \"multiplexing\", \"invariance\", \"control\", \"parallel\", \"placement-held\", \"same-work\", \"cv-bar ARM\", \"repetitions ARM\" (written only when it failed) or \"other-load ARM\".",
            "type": "string",
        })
    }
}

/// The outcome of one check, as shown in the checks table and saved in JSON.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, schemars::JsonSchema)]
pub struct Check {
    pub name: CheckName,
    /// Passed, failed or unavailable: never silently absent.
    pub status: CheckStatus,
    /// What was found, in words: the offenders by arm, repetition and worker
    /// when it failed, the reason when it could not be checked.
    pub detail: String,
}

impl Check {
    /// The property held in every sample it could be checked on.
    pub fn passed(name: CheckName, detail: impl Into<String>) -> Check {
        Check::new(name, CheckStatus::Passed, detail)
    }

    /// The property did not hold; `detail` names where.
    pub fn failed(name: CheckName, detail: impl Into<String>) -> Check {
        Check::new(name, CheckStatus::Failed, detail)
    }

    /// This host cannot tell (no PMU, nothing pinned); `detail` says why.
    pub fn unavailable(name: CheckName, detail: impl Into<String>) -> Check {
        Check::new(name, CheckStatus::Unavailable, detail)
    }

    fn new(name: CheckName, status: CheckStatus, detail: impl Into<String>) -> Check {
        Check {
            name,
            status,
            detail: detail.into(),
        }
    }
}

/// `unavailable` is not `passed`: it means this host cannot tell (no PMU,
/// nothing pinned), and the report says so instead of implying a pass.
#[derive(
    Serialize,
    Deserialize,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    strum::IntoStaticStr,
    strum::VariantArray,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum CheckStatus {
    /// Checked, and it held.
    Passed,
    /// Checked, and it did not hold.
    Failed,
    /// Could not be checked here; the detail says why.
    Unavailable,
}

impl CheckStatus {
    /// The status word, as the checks table prints it and JSON spells it.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The repetitions that count: warm-ups excluded.
fn measured(reps: &[RepSample]) -> impl Iterator<Item = &RepSample> {
    reps.iter().filter(|rep| !rep.warmup)
}

/// Every worker of every measured repetition, with its repetition.
fn measured_workers(reps: &[RepSample]) -> impl Iterator<Item = (&RepSample, &WorkerSample)> {
    measured(reps).flat_map(|rep| rep.workers.iter().map(move |w| (rep, w)))
}

/// "arm one-per-core rep 3 worker 1": where a sample came from.
fn locate(rep: &RepSample, w: &WorkerSample) -> String {
    format!("arm {} rep {} worker {}", rep.arm, rep.rep, w.worker)
}

/// The first few offenders, then how many more.
pub(super) fn name_offenders(offenders: &[String]) -> String {
    let mut named = offenders[..offenders.len().min(NAMED_OFFENDERS)].join("; ");
    if offenders.len() > NAMED_OFFENDERS {
        named.push_str(&format!("; and {} more", offenders.len() - NAMED_OFFENDERS));
    }
    named
}

/// How a pinned worker left its CPU ("pinned to 2 ran on 5", "pinned to 2
/// migrated 1 time"); `None` when it stayed, or was not pinned (the unpinned
/// arm's migrations are what it measures, not a fault).
fn pinning_offence(w: &WorkerSample) -> Option<String> {
    let cpu = w.pinned_cpu?;
    let mut elsewhere: Vec<u32> = [w.cpu_start, w.cpu_end]
        .into_iter()
        .filter(|&seen| seen != cpu)
        .collect();
    elsewhere.dedup();
    let mut what = Vec::new();
    if !elsewhere.is_empty() {
        let cpus: Vec<String> = elsewhere.iter().map(u32::to_string).collect();
        what.push(format!("ran on {}", cpus.join(" and ")));
    }
    match w.counters.cpu_migrations {
        0 => {}
        1 => what.push("migrated 1 time".to_string()),
        n => what.push(format!("migrated {n} times")),
    }
    (!what.is_empty()).then(|| format!("worker {} pinned to {cpu} {}", w.worker, what.join(", ")))
}

/// How a worker's counter group was multiplexed; `None` when it counted all
/// the time it was enabled.
fn multiplexing_offence(w: &WorkerSample) -> Option<String> {
    let c = &w.counters;
    let groups = [
        ("", Some(c.group_times())),
        ("'s software group", c.software_group),
    ];
    let offences: Vec<String> = groups
        .into_iter()
        .filter_map(|(which, times)| {
            let times = times.filter(|t| t.multiplexed())?;
            Some(format!(
                "worker {}{which} counted {} ns of {} ns enabled",
                w.worker, times.time_running_ns, times.time_enabled_ns
            ))
        })
        .collect();
    (!offences.is_empty()).then(|| offences.join(", "))
}

/// Pinning held: every pinned worker was on its CPU when its kernel started
/// (`sched_getcpu`) and when it ended, and the cpu-migrations event (kernel
/// side included) saw no move in between. The start/end checks alone would
/// miss a round trip; the event alone would miss a worker that never reached
/// its CPU. Failed means a thread moved, so its arm measured some other
/// placement: the run is invalid.
pub fn pinning(reps: &[RepSample]) -> Check {
    if measured(reps).next().is_none() {
        return Check::unavailable(CheckName::Pinning, "no measured repetitions");
    }
    let mut tally = PinningTally::default();
    tally.add(reps, "");
    tally.check()
}

/// `run --membind`: every page of every measured worker's buffer was on
/// its arm's nodes, as `move_pages` located them after the buffer was
/// filled. `None` when no arm binds its memory. Failed means a worker read
/// memory elsewhere than its arm claims: the run is invalid.
pub fn membind(reps: &[RepSample], placements: &[Placement]) -> Option<Check> {
    const NAME: CheckName = CheckName::Membind;
    let bound: Vec<(Arm, &[u32])> = placements
        .iter()
        .filter_map(|p| Some((p.arm, p.membind.as_deref()?)))
        .collect();
    if bound.is_empty() {
        return None;
    }
    let (mut located, mut samples) = (0u64, 0usize);
    let mut offenders = Vec::new();
    for (rep, w) in measured_workers(reps) {
        let Some((_, nodes)) = bound.iter().find(|(arm, _)| *arm == rep.arm) else {
            continue;
        };
        samples += 1;
        let Some(pages) = &w.pages else {
            offenders.push(format!("{}: its pages were not located", locate(rep, w)));
            continue;
        };
        located += pages.pages - pages.missing;
        let elsewhere: Vec<String> = pages
            .by_node
            .iter()
            .filter(|(node, _)| !nodes.contains(node))
            .map(|(node, n)| format!("{n} on node {node}"))
            .collect();
        if !elsewhere.is_empty() || pages.missing > 0 {
            let missing = (pages.missing > 0).then(|| format!("{} not located", pages.missing));
            offenders.push(format!(
                "{}: of {} pages {}, outside {}",
                locate(rep, w),
                pages.pages,
                elsewhere
                    .into_iter()
                    .chain(missing)
                    .collect::<Vec<_>>()
                    .join(", "),
                nodes_phrase(nodes)
            ));
        }
    }
    Some(if samples == 0 {
        Check::unavailable(NAME, "no measured repetition of a bound arm")
    } else if offenders.is_empty() {
        Check::passed(
            NAME,
            format!(
                "all {located} pages of {samples} worker buffers were on their arm's nodes \
                 (move_pages)"
            ),
        )
    } else {
        Check::failed(NAME, name_offenders(&offenders))
    })
}

/// The pinning check's evidence, gathered over one or many lists of
/// repetitions (`pairs` measures each comparison apart, and keeps only
/// this of its samples).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PinningTally {
    /// Pinned worker samples seen.
    pub pinned: usize,
    /// One line per worker sample that left its CPU.
    pub offenders: Vec<String>,
}

impl PinningTally {
    /// Adds the measured repetitions of `reps`; `context` ("comparison 3 ")
    /// prefixes each offender.
    pub fn add(&mut self, reps: &[RepSample], context: &str) {
        for (rep, w) in measured_workers(reps) {
            if w.pinned_cpu.is_some() {
                self.pinned += 1;
            }
            if let Some(why) = pinning_offence(w) {
                self.offenders
                    .push(format!("{context}arm {} rep {} {why}", rep.arm, rep.rep));
            }
        }
    }

    /// The pinning check over everything added.
    pub fn check(&self) -> Check {
        const NAME: CheckName = CheckName::Pinning;
        if self.pinned == 0 {
            Check::unavailable(NAME, "no worker was pinned")
        } else if self.offenders.is_empty() {
            Check::passed(
                NAME,
                format!(
                    "all {} pinned worker samples started and ended on their CPU with 0 migrations",
                    self.pinned
                ),
            )
        } else {
            Check::failed(
                NAME,
                format!("a thread moved: {}", name_offenders(&self.offenders)),
            )
        }
    }
}

/// Why the PMU time-shares counters, for a failed multiplexing check.
pub(super) const MULTIPLEXING_CAUSES: &str = "another perf user (a monitoring agent's pinned \
     CPU-wide events, `perf stat -a`, the NMI watchdog) held them, or the events need more \
     counters than the PMU has";

/// No counter multiplexed: when the PMU has fewer counters than a group
/// needs, the kernel time-shares them and `time_running < time_enabled`.
/// Scaling the counts up would be a guess about the part not seen, so they
/// are never scaled: such samples are flagged here and excluded from the
/// statistics (see [`excluded_reps`]). Unavailable without a hardware PMU,
/// where only software events are counted and nothing can multiplex.
pub fn multiplexing(reps: &[RepSample]) -> Check {
    const NAME: CheckName = CheckName::Multiplexing;
    if measured(reps).next().is_none() {
        return Check::unavailable(NAME, "no measured repetitions");
    }
    let offenders: Vec<String> = measured_workers(reps)
        .filter_map(|(rep, w)| {
            multiplexing_offence(w).map(|why| format!("arm {} rep {} {why}", rep.arm, rep.rep))
        })
        .collect();
    let samples = measured_workers(reps).count();
    if !offenders.is_empty() {
        Check::failed(
            NAME,
            format!(
                "{} of {samples} worker samples were multiplexed (not scaled; excluded): {}; \
                 the PMU could not give the workers' groups its counters all the time: {}",
                offenders.len(),
                name_offenders(&offenders),
                MULTIPLEXING_CAUSES
            ),
        )
    } else if measured_workers(reps).all(|(_, w)| w.counters.cycles.is_none()) {
        Check::unavailable(
            NAME,
            "no hardware PMU: cycles were not counted, so no hardware counter could multiplex",
        )
    } else {
        Check::passed(
            NAME,
            format!("time enabled equals time running in all {samples} worker samples"),
        )
    }
}

/// `--tolerance` of the kernel study: its kernel retires a constant number
/// of instructions per byte by construction, so only the handful around it
/// (the loop's entry and exit, a timer read) may differ.
pub const INVARIANCE_TOLERANCE: f64 = 1e-4;

/// One worker sample's instructions per byte, and where it came from.
struct Counted<'a> {
    rep: &'a RepSample,
    worker: &'a WorkerSample,
    ipb: f64,
}

/// Instructions per byte identical everywhere, and equal to the kernel's
/// constant: the kernel retires `expected` instructions per byte by
/// construction whatever the placement, so every worker, repetition and arm
/// must show that value within `tolerance` (relative;
/// [`INVARIANCE_TOLERANCE`] by default). A
/// spread means some counter counted something other than its own worker's
/// kernel; a value off the constant by the same amount everywhere means every
/// counter did (the dispatcher's instructions, another CPU's, a counter that
/// counts twice). Either way the counters were not on the workers, every cost
/// from them is suspect, and the run is invalid.
///
/// Returns the check and the observed relative spread, (max − min) / median,
/// when instructions were counted. Unavailable without an instructions
/// counter; `why_uncounted` is the reason the probe gave, if any.
pub fn invariance(
    reps: &[RepSample],
    tolerance: f64,
    expected: f64,
    why_uncounted: Option<&str>,
) -> (Check, Option<f64>) {
    const NAME: CheckName = CheckName::Invariance;
    let samples: Vec<(&RepSample, &WorkerSample)> = measured_workers(reps).collect();
    if samples.is_empty() {
        return (Check::unavailable(NAME, "no measured repetitions"), None);
    }
    let counted: Vec<Counted> = samples
        .iter()
        .filter_map(|&(rep, worker)| {
            let ipb = instructions_per_byte(worker)?;
            Some(Counted { rep, worker, ipb })
        })
        .collect();
    if !counted.is_empty() && counted.len() < samples.len() {
        let why = format!(
            "instructions per byte were known for only {} of {} worker samples: \
             some workers had no instructions counter",
            counted.len(),
            samples.len()
        );
        return (Check::failed(NAME, why), None);
    }
    let lowest = counted.iter().min_by(|a, b| a.ipb.total_cmp(&b.ipb));
    let highest = counted.iter().max_by(|a, b| a.ipb.total_cmp(&b.ipb));
    let (Some(lowest), Some(highest)) = (lowest, highest) else {
        let why = match why_uncounted {
            Some(reason) => format!("instructions were not counted: {reason}"),
            None => "instructions were not counted".to_string(),
        };
        return (Check::unavailable(NAME, why), None);
    };
    let values: Vec<f64> = counted.iter().map(|c| c.ipb).collect();
    let middle = median(&values);
    if middle <= 0.0 {
        let why = "the instructions counters counted nothing: the counters were not on the workers";
        return (Check::failed(NAME, why), None);
    }
    let spread = (highest.ipb - lowest.ipb) / middle;
    // The sample farthest from the constant is the lowest or the highest.
    let farthest = [lowest, highest]
        .into_iter()
        .max_by(|a, b| {
            (a.ipb - expected)
                .abs()
                .total_cmp(&(b.ipb - expected).abs())
        })
        .unwrap_or(lowest);
    let off = (farthest.ipb - expected) / expected;
    let figures = |value: f64| significant(value, 6);
    let check = if spread > tolerance {
        Check::failed(
            NAME,
            format!(
                "instructions per byte vary by {} between arms/reps: the counters were \
                 not on the workers (tolerance {tolerance}; lowest {} in {}, highest {} in {}; \
                 the kernel retires {})",
                figures(spread),
                figures(lowest.ipb),
                locate(lowest.rep, lowest.worker),
                figures(highest.ipb),
                locate(highest.rep, highest.worker),
                figures(expected)
            ),
        )
    } else if off.abs() > tolerance || !off.is_finite() {
        Check::failed(
            NAME,
            format!(
                "instructions per byte read {} where the kernel retires {} by construction \
                 ({:+.4} % in {}; spread {} over {} worker samples): every counter counted \
                 something besides its worker's kernel (tolerance {tolerance})",
                figures(farthest.ipb),
                figures(expected),
                off * 100.0,
                locate(farthest.rep, farthest.worker),
                figures(spread),
                values.len()
            ),
        )
    } else {
        Check::passed(
            NAME,
            format!(
                "instructions per byte {} in all {} worker samples: the kernel's {} \
                 within {} (spread {}, tolerance {tolerance})",
                figures(middle),
                values.len(),
                figures(expected),
                figures(off.abs()),
                figures(spread)
            ),
        )
    };
    (check, Some(spread))
}

/// An arm's cost is quotable when its CV is at most `bar` (a fraction; 1 %
/// by default): a median from noisier repetitions could move by more than
/// the differences the study reports. Failed marks the arm "not quotable";
/// only `--strict` makes that invalidate the run, since the numbers are
/// still measured correctly, just not precisely enough to quote.
pub fn cv_bar(name: CheckName, spread: &Spread, bar: f64) -> Check {
    let cv = format!(
        "CV {:.2} % over {} repetitions",
        spread.cv * 100.0,
        spread.reps
    );
    if spread.cv <= bar {
        Check::passed(name, format!("{cv} is within the {:.2} % bar", bar * 100.0))
    } else {
        Check::failed(
            name,
            format!("{cv} is above the {:.2} % bar: not quotable", bar * 100.0),
        )
    }
}

/// The one rule for every kind: nothing measured is never valid. An arm,
/// step, class or CPU alone that kept no repetition has no number at all,
/// not merely a noisy one, so its failed `repetitions …` check (`name`)
/// makes the study invalid whatever else passed. Of its `measured`
/// repetitions (warm-ups aside), `failed` were runs of a command that
/// failed (kept by `--ignore-failure`); the rest were excluded.
pub fn nothing_kept(name: CheckName, measured: usize, failed: usize) -> Check {
    let why = match measured {
        0 => "none was measured (the study stopped, or ran out of time, first)".to_string(),
        n if failed == n => {
            format!("the command failed in every one of its {n} measured repetitions")
        }
        n => format!(
            "every one of its {n} measured repetitions was excluded (see Excluded: a worker moved, \
             a counter multiplexed, or the host's load spoiled it)"
        ),
    };
    Check::failed(name, format!("{why}: no number is left"))
}

/// A repetition left out of the statistics, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExcludedRep {
    pub arm: Arm,
    pub rep: usize,
    pub why: String,
}

impl ExcludedRep {
    /// Is this the exclusion of repetition `rep` of `arm`?
    pub fn covers(&self, arm: Arm, rep: usize) -> bool {
        self.arm == arm && self.rep == rep
    }

    /// Why it was left out, as causes a reader can act on (read back from
    /// the saved sentence, so older files group the same way).
    pub fn causes(&self) -> Vec<ExclusionCause> {
        <ExclusionCause as strum::VariantArray>::VARIANTS
            .iter()
            .copied()
            .filter(|cause| self.why.contains(cause.marker()))
            .collect()
    }
}

/// What made a repetition unusable, one of the offences
/// [`excluded_reps`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, strum::VariantArray)]
pub enum ExclusionCause {
    /// Another task of this OS ran on a pinned worker's CPU.
    SharedCpu,
    /// A pinned worker ran on another CPU than its own.
    Moved,
    /// A counter group was multiplexed: it counted part of the work.
    Multiplexed,
}

impl ExclusionCause {
    /// The words its offence is written with.
    fn marker(self) -> &'static str {
        match self {
            ExclusionCause::SharedCpu => "another task of this OS shared its CPU",
            ExclusionCause::Moved => " pinned to ",
            ExclusionCause::Multiplexed => " enabled",
        }
    }

    /// The cause, as the grouped exclusion line says it.
    pub fn describe(self) -> &'static str {
        match self {
            ExclusionCause::SharedCpu => {
                "another task of this OS shared a worker's CPU (load on this machine, not the host)"
            }
            ExclusionCause::Moved => "a pinned worker ran on another CPU",
            ExclusionCause::Multiplexed => {
                "a counter group was multiplexed (it counted part of the work)"
            }
        }
    }
}

/// The share of its busy time a pinned worker must have been on its CPU.
/// Without other load it is 0.98–1.0 (timer ticks and kernel threads take
/// the rest); beside a CPU-bound process of the same OS, about 0.65.
pub const ON_CPU_SHARE: f64 = 0.9;

/// How a pinned worker had to share its CPU with another task of this OS
/// (task-clock under [`ON_CPU_SHARE`] of its busy wall time); `None` when it
/// had the CPU to itself, and in the same-CPU arm, whose two workers share
/// one CPU by design. What this catches is load the OS sees; a CPU shared
/// below the OS (an SMT sibling, a host time-slicing two vCPUs) leaves the
/// task-clock running, and is what `gate` and `pairs` measure.
fn off_cpu_offence(rep: &RepSample, w: &WorkerSample) -> Option<String> {
    if rep.arm == Arm::SameCpu || w.pinned_cpu.is_none() || w.busy_ns == 0 {
        return None;
    }
    let share = w.counters.task_clock_ns as f64 / w.busy_ns as f64;
    (share < ON_CPU_SHARE).then(|| {
        format!(
            "worker {} ran only {:.0} % of its busy time: another task of this OS shared its CPU",
            w.worker,
            share * 100.0
        )
    })
}

/// The measured repetitions the statistics must leave out: those with a
/// multiplexed counter group (its counts cover only part of the work), a
/// pinned worker that left its CPU (it measured another placement), or one
/// that shared its CPU with another task (it measured that task too). They
/// stay in the raw samples and are listed in the report, so nothing
/// disappears silently. Workers of the unpinned arm may migrate: that is
/// what the arm observes.
pub fn excluded_reps(reps: &[RepSample]) -> Vec<ExcludedRep> {
    measured(reps)
        .filter_map(|rep| {
            let offences: Vec<String> = rep
                .workers
                .iter()
                .flat_map(|w| {
                    [
                        multiplexing_offence(w),
                        pinning_offence(w),
                        off_cpu_offence(rep, w),
                    ]
                })
                .flatten()
                .collect();
            (!offences.is_empty()).then(|| ExcludedRep {
                arm: rep.arm,
                rep: rep.rep,
                why: offences.join("; "),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::CounterValues;

    fn worker(worker: usize, cpu: u32, instructions: Option<u64>) -> WorkerSample {
        WorkerSample {
            worker,
            pinned_cpu: Some(cpu),
            cpu_start: cpu,
            cpu_end: cpu,
            bytes: 1000,
            busy_ns: 1_000,
            tsc_ticks: 1_000,
            barrier_wait_ns: 0,
            finish_ns: None,
            counters: CounterValues {
                cycles: instructions.map(|_| 1_000),
                instructions,
                task_clock_ns: 1_000,
                time_enabled_ns: 1_000,
                time_running_ns: 1_000,
                ..CounterValues::default()
            },
            checksum: 0,
            items: None,
            pages: None,
        }
    }

    fn rep(arm: Arm, rep: usize, warmup: bool, workers: Vec<WorkerSample>) -> RepSample {
        RepSample {
            arm,
            rep,
            warmup,
            workers,
            wall_ns: 1_000,
            dispatcher_task_clock_ns: 0,
        }
    }

    fn pair(arm: Arm, index: usize, instructions: Option<u64>) -> RepSample {
        rep(
            arm,
            index,
            false,
            vec![worker(0, 0, instructions), worker(1, 1, instructions)],
        )
    }

    #[test]
    fn no_samples_means_unavailable_not_passed() {
        assert_eq!(pinning(&[]).status, CheckStatus::Unavailable);
        assert_eq!(multiplexing(&[]).status, CheckStatus::Unavailable);
        assert_eq!(
            invariance(&[], 1e-4, 0.5, None),
            (
                Check::unavailable(CheckName::Invariance, "no measured repetitions"),
                None
            )
        );
        assert!(excluded_reps(&[]).is_empty());
    }

    #[test]
    fn membind_passes_when_every_page_is_on_its_arms_nodes_and_names_the_strays() {
        use crate::measure::mempolicy::PageNodes;
        let located = |by_node: &[(u32, u64)], missing: u64| {
            let by_node: std::collections::BTreeMap<u32, u64> = by_node.iter().copied().collect();
            Some(PageNodes {
                pages: by_node.values().sum::<u64>() + missing,
                by_node,
                missing,
            })
        };
        let placement = |arm, membind: Option<Vec<u32>>| Placement {
            arm,
            cpus: vec![Some(0), Some(1)],
            membind,
        };
        let unbound = [placement(Arm::OnePerCore, None)];
        assert_eq!(membind(&[pair(Arm::OnePerCore, 0, None)], &unbound), None);
        let bound = [
            placement(Arm::OnePerCore, Some(vec![0])),
            placement(Arm::SameCpu, Some(vec![0, 1])),
        ];
        let mut held = vec![pair(Arm::OnePerCore, 0, None), pair(Arm::SameCpu, 0, None)];
        for w in held.iter_mut().flat_map(|r| r.workers.iter_mut()) {
            w.pages = located(&[(0, 4)], 0);
        }
        held[1].workers[1].pages = located(&[(0, 2), (1, 2)], 0);
        let check = membind(&held, &bound).unwrap();
        assert_eq!(check.status, CheckStatus::Passed, "{}", check.detail);
        assert_eq!(
            check.detail,
            "all 16 pages of 4 worker buffers were on their arm's nodes (move_pages)"
        );
        // A warm-up is never judged; a stray page and an unlocated one are.
        let mut warmup = pair(Arm::OnePerCore, 1, None);
        warmup.warmup = true;
        held.push(warmup);
        held[0].workers[1].pages = located(&[(0, 3), (1, 1)], 0);
        held[1].workers[0].pages = located(&[(0, 3)], 1);
        let check = membind(&held, &bound).unwrap();
        assert_eq!(check.status, CheckStatus::Failed);
        assert_eq!(
            check.detail,
            "arm one-per-core rep 0 worker 1: of 4 pages 1 on node 1, outside node 0; arm \
             same-cpu rep 0 worker 0: of 4 pages 1 not located, outside nodes 0-1"
        );
        let validity = crate::judge::validity::judge_run(&[check], false);
        assert_eq!(
            validity.reasons,
            [crate::judge::validity::InvalidReason::MemoryElsewhere]
        );
    }

    #[test]
    fn pinning_names_where_a_worker_ran() {
        let mut moved = pair(Arm::OnePerCore, 3, None);
        moved.workers[1].pinned_cpu = Some(2);
        moved.workers[1].cpu_start = 2;
        moved.workers[1].cpu_end = 5;
        let check = pinning(&[pair(Arm::OnePerCore, 2, None), moved]);
        assert_eq!(check.status, CheckStatus::Failed);
        assert_eq!(
            check.detail,
            "a thread moved: arm one-per-core rep 3 worker 1 pinned to 2 ran on 5"
        );
    }

    #[test]
    fn pinning_counts_round_trips_and_ignores_warmups() {
        let mut round_trip = pair(Arm::OnePerCore, 4, None);
        round_trip.workers[0].counters.cpu_migrations = 2;
        let mut warm = pair(Arm::OnePerCore, 0, None);
        warm.warmup = true;
        warm.workers[0].cpu_end = 7;
        let check = pinning(&[warm.clone(), round_trip]);
        assert_eq!(
            check.detail,
            "a thread moved: arm one-per-core rep 4 worker 0 pinned to 0 migrated 2 times"
        );
        assert_eq!(
            pinning(&[warm, pair(Arm::OnePerCore, 5, None)]).status,
            CheckStatus::Passed
        );
    }

    #[test]
    fn pinning_names_only_the_first_offenders() {
        let reps: Vec<RepSample> = (0..5)
            .map(|i| {
                let mut r = pair(Arm::OnePerCore, i, None);
                r.workers[0].cpu_end = 9;
                r
            })
            .collect();
        assert!(
            pinning(&reps)
                .detail
                .ends_with("rep 2 worker 0 pinned to 0 ran on 9; and 2 more")
        );
    }

    #[test]
    fn unpinned_workers_may_migrate() {
        let mut free = pair(Arm::Unpinned, 1, None);
        free.workers[0].pinned_cpu = None;
        free.workers[0].cpu_end = 1;
        free.workers[0].counters.cpu_migrations = 3;
        assert!(excluded_reps(std::slice::from_ref(&free)).is_empty());
        free.workers[1].pinned_cpu = None;
        assert_eq!(pinning(&[free]).status, CheckStatus::Unavailable);
    }

    #[test]
    fn multiplexing_flags_and_names_samples() {
        let mut multiplexed = pair(Arm::OnePerCore, 2, Some(500));
        multiplexed.workers[1].counters.time_running_ns = 600;
        let check = multiplexing(&[pair(Arm::OnePerCore, 1, Some(500)), multiplexed]);
        assert_eq!(check.status, CheckStatus::Failed);
        assert!(check.detail.contains("1 of 4 worker samples"));
        assert!(
            check
                .detail
                .contains("arm one-per-core rep 2 worker 1 counted 600 ns of 1000 ns enabled")
        );
    }

    #[test]
    fn a_multiplexed_second_group_is_caught_too() {
        let mut split = pair(Arm::OnePerCore, 3, Some(500));
        split.workers[0].counters.software_group = Some(crate::measure::GroupTimes {
            time_enabled_ns: 1_000,
            time_running_ns: 1_000,
        });
        assert_eq!(
            multiplexing(std::slice::from_ref(&split)).status,
            CheckStatus::Passed
        );
        split.workers[0].counters.software_group = Some(crate::measure::GroupTimes {
            time_enabled_ns: 1_000,
            time_running_ns: 400,
        });
        let check = multiplexing(std::slice::from_ref(&split));
        assert_eq!(check.status, CheckStatus::Failed);
        assert!(
            check.detail.contains(
                "arm one-per-core rep 3 worker 0's software group counted 400 ns of 1000 ns enabled"
            ),
            "{}",
            check.detail
        );
        assert_eq!(excluded_reps(&[split]).len(), 1);
    }

    #[test]
    fn multiplexing_without_a_pmu_is_unavailable() {
        let check = multiplexing(&[pair(Arm::OnePerCore, 1, None)]);
        assert_eq!(check.status, CheckStatus::Unavailable);
        assert!(check.detail.starts_with("no hardware PMU"));
        assert_eq!(
            multiplexing(&[pair(Arm::OnePerCore, 1, Some(500))]).status,
            CheckStatus::Passed
        );
    }

    #[test]
    fn invariance_reports_the_spread_to_six_figures() {
        let reps = [
            pair(Arm::OnePerCore, 1, Some(500_000)),
            pair(Arm::SiblingPacked, 1, Some(500_600)),
        ];
        let (check, spread) = invariance(&reps, 1e-4, 500.0, None);
        assert_eq!(check.status, CheckStatus::Failed);
        // (500.6 − 500) / median 500.3
        assert!((spread.unwrap() - 0.6 / 500.3).abs() < 1e-15);
        assert!(
            check
                .detail
                .starts_with("instructions per byte vary by 0.00119928 between arms/reps")
        );
        assert!(
            check
                .detail
                .contains("lowest 500.000 in arm one-per-core rep 1 worker 0")
        );
    }

    #[test]
    fn invariance_with_partial_or_zero_counts_fails() {
        let mut partial = pair(Arm::OnePerCore, 1, Some(500));
        partial.workers[1].counters.instructions = None;
        assert_eq!(
            invariance(&[partial], 1e-4, 0.5, None).0.status,
            CheckStatus::Failed
        );
        assert_eq!(
            invariance(&[pair(Arm::OnePerCore, 1, Some(0))], 1e-4, 0.5, None)
                .0
                .status,
            CheckStatus::Failed
        );
    }

    #[test]
    fn cv_bar_marks_noisy_arms_not_quotable() {
        let spread = Spread {
            median: 1.0,
            cv: 0.02,
            min: 0.97,
            max: 1.03,
            reps: 15,
        };
        let check = cv_bar(CheckName::CvBar(Arm::OnePerCore), &spread, 0.01);
        assert_eq!(check.name.to_string(), "cv-bar one-per-core");
        assert_eq!("cv-bar one-per-core".parse(), Ok(check.name));
        assert_eq!(
            check.detail,
            "CV 2.00 % over 15 repetitions is above the 1.00 % bar: not quotable"
        );
        assert_eq!(
            cv_bar(CheckName::CvBar(Arm::OnePerCore), &spread, 0.02).status,
            CheckStatus::Passed
        );
    }

    #[test]
    fn excluded_reps_say_why() {
        let mut both = pair(Arm::SiblingPacked, 6, Some(500));
        both.workers[0].counters.time_running_ns = 10;
        both.workers[1].cpu_start = 3;
        assert_eq!(
            excluded_reps(&[pair(Arm::OnePerCore, 6, Some(500)), both]),
            vec![ExcludedRep {
                arm: Arm::SiblingPacked,
                rep: 6,
                why: "worker 0 counted 10 ns of 1000 ns enabled; worker 1 pinned to 1 ran on 3"
                    .to_string()
            }]
        );
    }

    #[test]
    fn a_worker_sharing_its_cpu_with_another_task_is_excluded_except_by_design() {
        let mut crowded = pair(Arm::OnePerCore, 2, Some(500));
        crowded.workers[1].counters.task_clock_ns = 650;
        let excluded = excluded_reps(std::slice::from_ref(&crowded));
        assert_eq!(
            excluded[0].why,
            "worker 1 ran only 65 % of its busy time: another task of this OS shared its CPU"
        );
        crowded.arm = Arm::SameCpu;
        assert!(excluded_reps(&[crowded]).is_empty());
    }
}
