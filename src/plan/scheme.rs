//! How a `hybrid` scheme divides its items among the workers: named by the
//! plan's arms and by the hybrid plan alike, so it lives in a leaf of its own.

use serde::{Deserialize, Serialize};

/// How a scheme divides the items among its workers. Neither is told
/// anything about the CPUs' speeds.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Scheme {
    /// Each worker gets an equal share (the first `items % workers` workers
    /// one item more) and does only that.
    StaticShares,
    /// Each worker starts with the same equal share, takes items from the
    /// front of its own range, and when that is empty steals the back half
    /// of the largest range left: a fast worker ends up doing more.
    WorkStealing,
}

impl Scheme {
    /// The short name the text view prints: "static" or "stealing" (the
    /// saved word, `<&str>::from`, is "static-shares" or "work-stealing").
    pub fn label(self) -> &'static str {
        match self {
            Scheme::StaticShares => "static",
            Scheme::WorkStealing => "stealing",
        }
    }
}
