//! The fleet's outlier rule: which hosts' SMT penalty is far from that of
//! the other hosts with the same CPU model, measured on the same clock.
//!
//! Hosts of one model that place threads the same way pay the same penalty
//! for sharing a core, give or take the gate's noise; one that does not is
//! set up differently (SMT off in the firmware, a hypervisor that pins
//! vCPUs otherwise, a noisy neighbour). Per model and clock, over the hosts
//! whose gate measured a penalty it can stand by: the median, and the
//! median absolute deviation (MAD), which one wild host cannot drag along
//! as it would a mean and standard deviation. A host is an outlier when
//!
//! ```text
//! |penalty − median| > max(SIGMAS × MAD_TO_SIGMA × MAD, FLOOR)
//! ```
//!
//! and only in a group with at least [`MIN_PEERS`] such hosts.
//!
//! A penalty counted in core cycles and one counted in TSC ticks are not
//! one quantity: with turbo, or with a worker descheduled, the two clocks
//! run apart, so hosts on different clocks are never pooled. A gate that a
//! signal cut short, or whose same-CPU control failed, has a penalty that
//! failed its validity bar ([`PenaltyDoubt`]): it neither moves its
//! group's median nor is judged against it.
//!
//! Besides penalties: [`result_flags`], what a result says against itself
//! (maps that differ, incomplete, invalid, ungated, failed checks), and
//! [`shape_outliers`], machines shaped unlike most of their CPU model.

use super::stats::median;
use crate::measure::ClockKind;
use serde::Serialize;
use std::collections::HashMap;
use std::hash::Hash;

/// Fewest hosts of one model and clock with a valid penalty for the rule
/// to apply: of two hosts that disagree, neither is the odd one out.
pub const MIN_PEERS: usize = 3;

/// How many standard deviations away is far: three, which leaves 0.3 % of
/// normally spread honest hosts outside, so a fleet of a thousand flags
/// about three by chance, not dozens.
pub const SIGMAS: f64 = 3.0;

/// MAD × 1.4826 estimates the standard deviation of normally spread values.
pub const MAD_TO_SIGMA: f64 = 1.4826;

/// The least distance called far, as a fraction: 10 percentage points.
/// Identical hosts measure nearly identical penalties, so their MAD is
/// near 0 and a point of noise would flag one. Ten points is well above
/// that noise (the gate's repetitions vary by a few percent), and below the
/// gate's default 15 % threshold, so a host whose penalty moved far enough
/// to change its verdict is caught.
pub const FLOOR: f64 = 0.10;

/// Why a gate's penalty failed its validity bar: it is shown marked, and
/// takes no part in the outlier rule.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum PenaltyDoubt {
    /// A stop signal ended the gate before its verdict: the penalty comes
    /// from fewer repetitions than the gate needed to decide.
    Incomplete,
    /// Two workers pinned to one CPU did not take turns on it: pinning did
    /// not hold, so the arms did not measure the placements they name.
    ControlFailed,
}

impl PenaltyDoubt {
    /// The word JSON and CSV spell it with: "incomplete", "control-failed".
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One host's gate penalty, as the outlier rule sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostPenalty<'a> {
    pub model: &'a str,
    /// The clock the gate's costs were counted on.
    pub clock: ClockKind,
    /// The paired estimate (a fraction).
    pub penalty: f64,
    /// Why the penalty failed its validity bar; empty when it held.
    pub doubts: &'a [PenaltyDoubt],
}

impl HostPenalty<'_> {
    /// Whether it takes part: a finite penalty without a doubt.
    fn counts(&self) -> bool {
        self.penalty.is_finite() && self.doubts.is_empty()
    }

    /// The hosts it is compared with: those of its model on its clock.
    fn group(&self) -> (&str, ClockKind) {
        (self.model, self.clock)
    }
}

/// Why one host's penalty is an outlier among its model's on its clock.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PenaltyOutlier {
    /// The median penalty of the group's hosts (a fraction), this one included.
    pub median: f64,
    /// The median absolute deviation from it (a fraction): the group's spread.
    pub mad: f64,
    /// How far from the median a penalty may be: max(3 × 1.4826 × MAD, FLOOR).
    pub bound: f64,
    /// Hosts of the group with a valid penalty, this one included.
    pub peers: usize,
}

/// For each host, in order, whether its penalty is an outlier among those
/// of the hosts with the same CPU model and clock. A host whose penalty is
/// not a finite number, or has a doubt, takes no part and is never one.
pub fn penalty_outliers(hosts: &[HostPenalty]) -> Vec<Option<PenaltyOutlier>> {
    let mut groups: HashMap<(&str, ClockKind), Vec<f64>> = HashMap::new();
    for host in hosts.iter().filter(|h| h.counts()) {
        groups.entry(host.group()).or_default().push(host.penalty);
    }
    let rules: HashMap<(&str, ClockKind), PenaltyOutlier> = groups
        .into_iter()
        .filter(|(_, values)| values.len() >= MIN_PEERS)
        .map(|(group, values)| {
            let centre = median(&values);
            let deviations: Vec<f64> = values.iter().map(|v| (v - centre).abs()).collect();
            let mad = median(&deviations);
            let rule = PenaltyOutlier {
                median: centre,
                mad,
                bound: (SIGMAS * MAD_TO_SIGMA * mad).max(FLOOR),
                peers: values.len(),
            };
            (group, rule)
        })
        .collect();
    hosts
        .iter()
        .map(|host| {
            let rule = rules.get(&host.group()).filter(|_| host.counts())?;
            ((host.penalty - rule.median).abs() > rule.bound).then(|| rule.clone())
        })
        .collect()
}

/// What one result of any kind says against itself, for the fleet's
/// flags: whether it ran to its end, passed its validity rule and was
/// gated, which checks failed, and (a `pairs` result) its sibling maps.
pub struct ResultFacts<'a> {
    pub complete: bool,
    pub valid: bool,
    pub gated: bool,
    /// The failed checks' names.
    pub failed_checks: Vec<String>,
    /// A map-judging result (`pairs`, `latency`, `memory`): what its maps
    /// are ("sibling maps", "cache levels"), whether its verdict said they
    /// differ, the measured map, the published map.
    pub maps: Option<(&'a str, bool, &'a str, &'a str)>,
}

/// Why a fleet row is flagged, one reason a line. Its text is the line
/// the fleet view gives and the `--json` and `--csv` rows carry; its kind
/// decides the row's mark ([`FleetFlag::mark`]).
#[derive(Clone, Debug, PartialEq)]
pub enum FleetFlag {
    /// A penalty far from those of its CPU model on its clock, in words.
    Penalty(String),
    /// A machine shaped unlike most hosts of its CPU model, in words.
    Shape(String),
    /// A map-judging result whose maps differ: what they are ("sibling
    /// maps", "cache levels"), measured and published.
    Maps {
        what: String,
        measured: String,
        published: String,
    },
    /// A signal stopped it.
    Incomplete,
    /// It failed its validity rule.
    Invalid,
    /// Run with --skip-gate, or its gate was not physical.
    Ungated,
    /// The names of its failed checks.
    FailedChecks(Vec<String>),
}

impl FleetFlag {
    /// The marks flags give a row, in the order the row shows them.
    pub const MARKS: [&'static str; 3] = ["OUTLIER penalty", "maps differ", "OUTLIER shape"];

    /// The row's mark for this flag, where it has one of its own: the
    /// result's own state (incomplete, invalid, ungated, failed checks)
    /// is marked from its summary.
    pub fn mark(&self) -> Option<&'static str> {
        match self {
            FleetFlag::Penalty(_) => Some(FleetFlag::MARKS[0]),
            FleetFlag::Maps { .. } => Some(FleetFlag::MARKS[1]),
            FleetFlag::Shape(_) => Some(FleetFlag::MARKS[2]),
            FleetFlag::Incomplete
            | FleetFlag::Invalid
            | FleetFlag::Ungated
            | FleetFlag::FailedChecks(_) => None,
        }
    }
}

impl std::fmt::Display for FleetFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FleetFlag::Penalty(words) | FleetFlag::Shape(words) => f.write_str(words),
            FleetFlag::Maps {
                what,
                measured,
                published,
            } => write!(
                f,
                "{what} differ: measured {measured}, published {published}"
            ),
            FleetFlag::Incomplete => f.write_str("incomplete: a signal stopped it"),
            FleetFlag::Invalid => f.write_str("invalid: it failed its validity rule"),
            FleetFlag::Ungated => {
                f.write_str("ungated: run with --skip-gate, the gate not physical")
            }
            FleetFlag::FailedChecks(names) => write!(f, "failed checks: {}", names.join(", ")),
        }
    }
}

/// Why a result is flagged in a fleet: sibling maps that differ, an
/// incomplete, invalid or ungated result, failed checks.
pub fn result_flags(facts: &ResultFacts) -> Vec<FleetFlag> {
    let mut flags = Vec::new();
    if let Some((what, differ, measured, published)) = facts.maps
        && (differ || measured != published)
    {
        flags.push(FleetFlag::Maps {
            what: what.to_string(),
            measured: measured.to_string(),
            published: published.to_string(),
        });
    }
    for (holds, flag) in [
        (facts.complete, FleetFlag::Incomplete),
        (facts.valid, FleetFlag::Invalid),
        (facts.gated, FleetFlag::Ungated),
    ] {
        if !holds {
            flags.push(flag);
        }
    }
    if !facts.failed_checks.is_empty() {
        flags.push(FleetFlag::FailedChecks(facts.failed_checks.clone()));
    }
    flags
}

/// The shape most hosts of a group share, for [`shape_outliers`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeOutlier<S> {
    /// The shape more than half the group has.
    pub usual: S,
    /// Hosts in the group.
    pub peers: usize,
}

/// Hosts whose machine shape differs from the one most hosts of their
/// group (their CPU model) share: a package or cores offline, SMT off in
/// the firmware, a VM sized otherwise. Only a shape held by more than half
/// of a group of at least two is usual; of two hosts that disagree neither
/// is the odd one out.
pub fn shape_outliers<G: Eq + Hash, S: Eq + Hash + Clone>(
    hosts: &[(G, S)],
) -> Vec<Option<ShapeOutlier<S>>> {
    let mut groups: HashMap<&G, HashMap<&S, usize>> = HashMap::new();
    for (group, shape) in hosts {
        *groups.entry(group).or_default().entry(shape).or_default() += 1;
    }
    hosts
        .iter()
        .map(|(group, shape)| {
            let shapes = &groups[group];
            let peers: usize = shapes.values().sum();
            let (usual, held) = shapes.iter().max_by_key(|(_, n)| **n)?;
            (held * 2 > peers && *usual != shape).then(|| ShapeOutlier {
                usual: (*usual).clone(),
                peers,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TSC: ClockKind = ClockKind::Tsc;
    const CYCLES: ClockKind = ClockKind::CoreCycles;
    const INCOMPLETE: &[PenaltyDoubt] = &[PenaltyDoubt::Incomplete];
    const CONTROL_FAILED: &[PenaltyDoubt] = &[PenaltyDoubt::ControlFailed];

    /// The model of the QEMU TCG guests in `fixtures/fleet/documents/`.
    const TCG: &str = "QEMU TCG CPU version 2.5+";

    /// The penalties the gates of `fixtures/fleet/documents/` recorded,
    /// all on TSC ticks: three physical guests, then the virtual one.
    const RECORDED: [f64; 4] = [
        0.7771307130122245,
        0.7576319279011725,
        0.9267074495616032,
        0.08990286601581188,
    ];

    fn host(model: &str, clock: ClockKind, penalty: f64) -> HostPenalty<'_> {
        HostPenalty {
            model,
            clock,
            penalty,
            doubts: &[],
        }
    }

    /// The recorded guests as hosts on `clock`.
    fn recorded(clock: ClockKind) -> Vec<HostPenalty<'static>> {
        RECORDED.iter().map(|&p| host(TCG, clock, p)).collect()
    }

    fn flagged(hosts: &[HostPenalty]) -> Vec<usize> {
        penalty_outliers(hosts)
            .iter()
            .enumerate()
            .filter_map(|(i, o)| o.as_ref().map(|_| i))
            .collect()
    }

    /// Shorthand for hosts of one model on one clock, all valid.
    fn alike(penalties: &[(&'static str, f64)]) -> Vec<HostPenalty<'static>> {
        penalties.iter().map(|&(m, p)| host(m, TSC, p)).collect()
    }

    #[test]
    fn the_recorded_virtual_guest_is_the_odd_one_of_its_model() {
        let fleet = recorded(TSC);
        assert_eq!(flagged(&fleet), [3]);
        let rule = penalty_outliers(&fleet)[3].clone().unwrap();
        assert_eq!(rule.peers, 4);
        assert!((rule.median - (RECORDED[0] + RECORDED[1]) / 2.0).abs() < 1e-12);
        // Deviations 0.0097, 0.0097, 0.1593, 0.6775: MAD is the middle two's mean.
        let mad = ((RECORDED[0] - RECORDED[1]) / 2.0 + RECORDED[2] - rule.median) / 2.0;
        assert!((rule.mad - mad).abs() < 1e-12, "{rule:?}");
        assert!((rule.bound - SIGMAS * MAD_TO_SIGMA * mad).abs() < 1e-12);
    }

    #[test]
    fn an_incomplete_or_uncontrolled_gate_takes_no_part() {
        // A fifth gate cut short at +5 %: not flagged itself, and the
        // median and the count stay those of the four that finished.
        let mut fleet = recorded(TSC);
        fleet.push(HostPenalty {
            doubts: INCOMPLETE,
            ..host(TCG, TSC, 0.05)
        });
        assert_eq!(flagged(&fleet), [3]);
        assert_eq!(penalty_outliers(&fleet)[3].as_ref().unwrap().peers, 4);
        // The virtual guest with a failed control is no outlier: its
        // number measured nothing. Without its spread the three physical
        // guests' MAD is 2 points, so the floor decides, and +92.7 % is
        // more than 10 points from their median +77.7 %.
        let mut fleet = recorded(TSC);
        fleet[3].doubts = CONTROL_FAILED;
        assert_eq!(flagged(&fleet), [2]);
        assert_eq!(penalty_outliers(&fleet)[2].as_ref().unwrap().peers, 3);
        // A physical guest cut short leaves three that finished: the
        // virtual one is still judged, against those three.
        let mut fleet = recorded(TSC);
        fleet[2].doubts = INCOMPLETE;
        assert_eq!(flagged(&fleet), [3]);
        let rule = penalty_outliers(&fleet)[3].clone().unwrap();
        assert_eq!(rule.peers, 3);
        assert_eq!(rule.median, RECORDED[1]);
    }

    #[test]
    fn penalties_on_different_clocks_are_not_pooled() {
        // The three physical guests on TSC ticks, the virtual one in core
        // cycles: alone on its clock, it is judged against no one.
        let mut fleet = recorded(TSC);
        fleet[3].clock = CYCLES;
        assert!(!flagged(&fleet).contains(&3));
        assert_eq!(penalty_outliers(&fleet)[2].as_ref().unwrap().peers, 3);
        // Two and two: neither group is big enough.
        let mut fleet = recorded(TSC);
        fleet[1].clock = CYCLES;
        fleet[3].clock = CYCLES;
        assert!(flagged(&fleet).is_empty());
        // Each clock judged on its own: the odd host of each is flagged.
        let mut fleet = recorded(TSC);
        fleet.extend(recorded(CYCLES));
        assert_eq!(flagged(&fleet), [3, 7]);
        assert_eq!(penalty_outliers(&fleet)[7].as_ref().unwrap().peers, 4);
    }

    #[test]
    fn fewer_than_three_valid_hosts_decide_nothing() {
        let mut fleet = recorded(TSC);
        fleet[0].doubts = INCOMPLETE;
        fleet[1].doubts = CONTROL_FAILED;
        assert!(flagged(&fleet).is_empty());
        assert!(flagged(&alike(&[("m", 0.0), ("m", 0.9)])).is_empty());
        assert!(flagged(&alike(&[("a", 0.0), ("a", 0.0), ("b", 0.9), ("b", 0.9)])).is_empty());
        assert_eq!(
            flagged(&alike(&[
                ("m", 0.1),
                ("m", 0.1),
                ("m", f64::NAN),
                ("m", 0.9)
            ])),
            [3]
        );
    }

    #[test]
    fn the_floor_keeps_identical_hosts_from_flagging_noise() {
        // MAD 0: any difference would be "infinitely many sigmas" away.
        let fleet = alike(&[("m", 0.30), ("m", 0.30), ("m", 0.30), ("m", 0.35)]);
        assert!(flagged(&fleet).is_empty());
        let fleet = alike(&[("m", 0.30), ("m", 0.30), ("m", 0.30), ("m", 0.41)]);
        assert_eq!(flagged(&fleet), [3]);
        assert_eq!(penalty_outliers(&fleet)[3].as_ref().unwrap().bound, FLOOR);
    }

    #[test]
    fn a_widely_spread_model_widens_its_bound() {
        // MAD 0.2: bound 3 × 1.4826 × 0.2 ≈ 0.89; the 1.0 host is inside it.
        let fleet = alike(&[("m", 0.0), ("m", 0.2), ("m", 0.4), ("m", 0.6), ("m", 1.0)]);
        assert!(flagged(&fleet).is_empty());
        let fleet = alike(&[("m", 0.0), ("m", 0.2), ("m", 0.4), ("m", 2.0)]);
        assert_eq!(flagged(&fleet), [3]);
    }

    #[test]
    fn the_odd_shape_of_a_model_is_flagged_with_the_usual_one() {
        let hosts = [
            ("i5", "4x2"),
            ("i5", "4x2"),
            ("i5", "4x1"),
            ("xeon", "64x2"),
        ];
        let flagged = shape_outliers(&hosts);
        assert_eq!(
            flagged,
            vec![
                None,
                None,
                Some(ShapeOutlier {
                    usual: "4x2",
                    peers: 3
                }),
                None
            ]
        );
        // Of two hosts that disagree, neither is the odd one out.
        assert_eq!(shape_outliers(&[("a", 1), ("a", 2)]), vec![None, None]);
    }

    #[test]
    fn a_result_is_flagged_for_what_it_says_against_itself() {
        let sound = ResultFacts {
            complete: true,
            valid: true,
            gated: true,
            failed_checks: Vec::new(),
            maps: Some(("sibling maps", false, "0-1", "0-1")),
        };
        assert!(result_flags(&sound).is_empty());
        let doubtful = ResultFacts {
            complete: false,
            gated: false,
            failed_checks: vec!["control".into()],
            maps: Some(("sibling maps", false, "0,2", "0-1")),
            ..sound
        };
        let words: Vec<String> = result_flags(&doubtful)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            words,
            [
                "sibling maps differ: measured 0,2, published 0-1",
                "incomplete: a signal stopped it",
                "ungated: run with --skip-gate, the gate not physical",
                "failed checks: control",
            ]
        );
    }
}
