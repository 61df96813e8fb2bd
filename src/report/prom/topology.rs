//! `topology --prom`: the machine's shape, as every kind's head writes it.

use super::common;
use crate::saved::TopologyResult;

/// The exposition of a `topology` document: the head every kind writes
/// (CPUs, cores, packages, classes, SMT, with the `_info` labels); a
/// topology measures nothing else.
pub fn topology(result: &TopologyResult) -> String {
    common(result.head.kind, &result.head).render()
}
