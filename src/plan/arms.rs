//! The placement arms and where their workers go.

use super::hybrid::Scheme;
use serde::{Deserialize, Serialize};
use std::fmt;
use strum::VariantArray;

/// A placement arm: which way a repetition's workers were put on CPUs. The
/// gate's arms and the study's arms share one name space, so a sample always
/// says which placement it measured. Saved as the kebab-case name.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Arm {
    /// The study: N workers on N cores, one hardware thread each.
    OnePerCore,
    /// The study: N workers on N/2 cores, both hardware threads of each.
    SiblingPacked,
    /// The study: the OS places the workers; where they ran is recorded.
    Unpinned,
    /// Every worker on one logical CPU: time-sliced, the control.
    SameCpu,
    /// The gate: two workers on one core's two hardware threads.
    Siblings,
    /// The gate: two workers on two separate cores of one class and package.
    Separate,
    /// One worker alone on a CPU: the control's baseline, and the gate's
    /// for the worker on its first sibling.
    Alone,
    /// The gate: one worker alone on the second sibling, the baseline of
    /// the worker there (its CPU may run slower than the first's).
    AloneSecond,
    /// `pairs`: a probe worker (worker 0) on one CPU beside load workers on
    /// the candidate CPUs it is tested against.
    Loaded,
    /// `hybrid`: one worker pinned to one CPU doing all of the work.
    Baseline,
    /// `hybrid`: equal static shares, each worker pinned to its own core.
    StaticPinned,
    /// `hybrid`: work stealing, each worker pinned to its own core.
    StealingPinned,
    /// `hybrid`: equal static shares, the scheduler placing the workers.
    StaticUnpinned,
    /// `hybrid`: work stealing, the scheduler placing the workers.
    StealingUnpinned,
}

impl Arm {
    /// The name as printed and saved: serde's and strum's one name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether the arm pins its workers (every arm but the ones that leave
    /// them to the scheduler).
    pub fn pinned(self) -> bool {
        !matches!(
            self,
            Arm::Unpinned | Arm::StaticUnpinned | Arm::StealingUnpinned
        )
    }

    /// The scheme a `hybrid` arm divides its work by; `None` for the arms
    /// that give every worker the same fixed work.
    pub fn scheme(self) -> Option<Scheme> {
        match self {
            Arm::StaticPinned | Arm::StaticUnpinned => Some(Scheme::StaticShares),
            Arm::StealingPinned | Arm::StealingUnpinned => Some(Scheme::WorkStealing),
            _ => None,
        }
    }
}

/// A schema transform (`#[schemars(transform = …)]`) for a field that
/// holds an arm, or a list of objects that each name one (`arm`): of the
/// arms, only those `keep` keeps (a hybrid scheme's, say) may stand there.
pub fn arms_where(keep: fn(Arm) -> bool) -> impl FnMut(&mut schemars::Schema) {
    move |schema| {
        let names: Vec<&str> = Arm::VARIANTS
            .iter()
            .copied()
            .filter(|&arm| keep(arm))
            .map(Arm::as_str)
            .collect();
        match schema
            .get_mut("items")
            .and_then(|items| items.as_object_mut())
        {
            Some(items) => {
                items.insert(
                    "properties".into(),
                    serde_json::json!({"arm": {"enum": names}}),
                );
            }
            None => {
                schema.insert("enum".into(), names.into());
            }
        }
    }
}

impl std::str::FromStr for Arm {
    type Err = String;

    fn from_str(text: &str) -> Result<Arm, String> {
        Arm::VARIANTS
            .iter()
            .copied()
            .find(|arm| arm.as_str() == text)
            .ok_or_else(|| format!("unknown arm '{text}'"))
    }
}

impl fmt::Display for Arm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where one arm's workers run: one entry per worker, `Some(cpu)` pinned to
/// that logical CPU, `None` left to the OS scheduler (the `unpinned` arm).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Placement {
    pub arm: Arm,
    pub cpus: Vec<Option<u32>>,
    /// `run --membind`: the NUMA nodes each worker's buffer is bound to
    /// (MPOL_BIND); absent (not written) without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub membind: Option<Vec<u32>>,
}

/// What the sibling pair's cost is measured against.
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
pub enum GateBaseline {
    /// Each sibling's worker against one worker alone on the same CPU
    /// (the gate today): only a penalty both workers pay is sharing.
    EachAlone,
    /// Two workers on two separate cores of the same class and package
    /// (older files).
    SeparateCores,
    /// Both siblings' workers against one worker alone on the first sibling
    /// (older files, from a host with a single core).
    Alone,
}

impl GateBaseline {
    /// The arm the siblings are paired with.
    pub fn arm(self) -> Arm {
        match self {
            GateBaseline::SeparateCores => Arm::Separate,
            GateBaseline::Alone | GateBaseline::EachAlone => Arm::Alone,
        }
    }

    /// How a sentence names it.
    pub fn describe(self) -> &'static str {
        match self {
            GateBaseline::EachAlone => "each worker alone on its CPU",
            GateBaseline::SeparateCores => "on separate cores",
            GateBaseline::Alone => "one worker alone on that core",
        }
    }
}
