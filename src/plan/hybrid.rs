//! `hybrid` plans: which CPUs get a baseline, which CPUs the workers use, and
//! how the same total work is divided among them.
//!
//! The work is a count of equal *items* (each a fixed number of kernel passes
//! over a worker's own buffer). A baseline runs every item on one pinned
//! worker; a scheme runs them on N workers, divided by a [`Scheme`].

use super::{Arm, Placement, usable_cores};
use crate::probe::{CoreKind, Topology};
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

/// Defined in a leaf of its own: the arms name it too.
pub use super::scheme::Scheme;

/// Items in one worker's equal share. Enough that a fast worker can take
/// many more than a slow one (stealing balances to within one item, 2 % of
/// a share); few enough that each item lasts a millisecond or more (see
/// [`item_length`]), so the few dozen instructions of handing one out stay
/// far below the invariance tolerance.
pub const ITEMS_PER_WORKER: u64 = 50;

/// How long one item should take when one worker's share of
/// `items_per_worker` items is to take `share`: the length the engine
/// calibrates its passes to.
pub fn item_length(share: std::time::Duration, items_per_worker: u64) -> std::time::Duration {
    share / u32::try_from(items_per_worker.max(1)).unwrap_or(u32::MAX)
}

/// What a repetition's workers process together: `items` items divided by
/// `scheme`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedWork {
    pub items: u64,
    pub scheme: Scheme,
}

/// Worker `worker`'s initial share of `items` among `workers`: the range
/// of item numbers it starts with. The shares are equal to within one item
/// and cover `0..items` exactly once.
pub fn equal_share(items: u64, workers: usize, worker: usize) -> std::ops::Range<u64> {
    let workers = workers.max(1) as u64;
    let worker = worker as u64;
    let (base, extra) = (items / workers, items % workers);
    let start = worker * base + worker.min(extra);
    start..start + base + u64::from(worker < extra)
}

/// The four schemes a `hybrid` study measures, in the order of each round.
pub const SCHEME_ARMS: [Arm; 4] = [
    Arm::StaticPinned,
    Arm::StealingPinned,
    Arm::StaticUnpinned,
    Arm::StealingUnpinned,
];

/// Where a `hybrid` study measures.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HybridPlan {
    /// The CPUs that get a single-worker baseline: the first core of each
    /// class, or every CPU the workers use (`--every-cpu`).
    pub baseline_cpus: Vec<u32>,
    /// One CPU per worker: the first hardware thread of each allowed core,
    /// classes in the topology's order (fastest published class first).
    pub worker_cpus: Vec<u32>,
    /// Every scheme's placement: [`SCHEME_ARMS`], pinned to `worker_cpus`
    /// or left to the scheduler.
    #[schemars(transform = super::arms_where(|arm| arm.scheme().is_some()))]
    pub schemes: Vec<Placement>,
}

impl HybridPlan {
    /// A baseline's placement: one worker pinned to `cpu`.
    pub fn baseline(cpu: u32) -> Placement {
        Placement {
            arm: Arm::Baseline,
            cpus: vec![Some(cpu)],
            membind: None,
        }
    }
}

/// Plans a `hybrid` study: `workers` workers (default: one per allowed
/// core) on the first thread of each core, so no two share a core and the
/// ceiling adds up single-thread speeds honestly; baselines on one CPU of
/// every class among them, or on each of them with `every_cpu`.
pub fn hybrid_plan(
    topology: &Topology,
    workers: Option<usize>,
    every_cpu: bool,
) -> Result<HybridPlan> {
    let groups = usable_cores(topology);
    let class_order: Vec<&CoreKind> = topology.classes.iter().map(|c| &c.name).collect();
    let mut cores: Vec<(usize, u32, CoreKind)> = groups
        .into_iter()
        .flat_map(|((class, _), cores)| cores.into_iter().map(move |core| (core.threads[0], class)))
        .map(|(cpu, class)| {
            let rank = class_order
                .iter()
                .position(|c| **c == class)
                .unwrap_or(usize::MAX);
            (rank, cpu, class)
        })
        .collect();
    cores.sort();
    let available = cores.len();
    if available < 2 {
        bail!(
            "only {available} allowed core: hybrid needs two cores to divide work between; \
             widen the affinity mask (taskset) or run on a machine with more cores"
        );
    }
    let wanted = workers.unwrap_or(available);
    if wanted < 2 {
        bail!("--workers {wanted}: dividing work needs at least 2 workers");
    }
    if wanted > available {
        bail!(
            "--workers {wanted}: only {available} allowed cores (hybrid puts one worker on each \
             core's first hardware thread); lower --workers or widen the affinity mask"
        );
    }
    cores.truncate(wanted);
    let worker_cpus: Vec<u32> = cores.iter().map(|(_, cpu, _)| *cpu).collect();
    let baseline_cpus = if every_cpu {
        worker_cpus.clone()
    } else {
        let mut firsts: Vec<u32> = Vec::new();
        let mut seen: Vec<&CoreKind> = Vec::new();
        for (_, cpu, class) in &cores {
            if !seen.contains(&class) {
                seen.push(class);
                firsts.push(*cpu);
            }
        }
        firsts
    };
    let schemes = SCHEME_ARMS
        .iter()
        .map(|&arm| Placement {
            arm,
            cpus: if arm.pinned() {
                worker_cpus.iter().map(|c| Some(*c)).collect()
            } else {
                vec![None; worker_cpus.len()]
            },
            membind: None,
        })
        .collect();
    Ok(HybridPlan {
        baseline_cpus,
        worker_cpus,
        schemes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_shares_cover_every_item_once() {
        for (items, workers) in [(10, 3), (64, 8), (3, 5), (0, 2)] {
            let shares: Vec<_> = (0..workers)
                .map(|w| equal_share(items, workers, w))
                .collect();
            let mut next = 0;
            for share in &shares {
                assert_eq!(share.start, next);
                next = share.end;
            }
            assert_eq!(next, items);
            let sizes: Vec<u64> = shares.iter().map(|s| s.end - s.start).collect();
            assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
        }
    }

    #[test]
    fn arms_name_their_scheme() {
        assert_eq!(Arm::StealingUnpinned.scheme(), Some(Scheme::WorkStealing));
        assert_eq!(Arm::StaticPinned.scheme(), Some(Scheme::StaticShares));
        assert_eq!(Arm::Baseline.scheme(), None);
    }
}
