//! `topology --prom`: the machine's shape, as every kind's head writes it.

use super::Metrics;
use super::common;
use crate::saved::TopologyResult;

/// The exposition of a `topology` document: the head every kind writes
/// (CPUs, cores, packages, classes, SMT, with the `_info` labels); a
/// topology measures nothing else.
impl Metrics for TopologyResult {
    fn metrics(&self) -> String {
        let result = self;
        common(result.head.kind, &result.head).render()
    }
}
