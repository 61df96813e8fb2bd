//! The items a `hybrid` repetition's workers share, and the two ways of
//! handing them out ([`Scheme`]).
//!
//! Every worker owns a range of item numbers, packed into one atomic word
//! (start in the high half, end in the low half), starting with its equal
//! share. The owner takes items from the front of its range; under work
//! stealing, a worker whose range is empty takes the back half of the
//! largest range left and makes it its own. Both are one compare-and-swap
//! on the range's word, so an item is done exactly once and nobody waits
//! on a lock. The scheme is told nothing about the CPUs' speeds: a fast
//! worker simply empties its range sooner and steals more.
//!
//! No ABA problem: a non-empty range never returns to a value it had, since
//! every item number in it is taken once and never handed out again.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::plan::hybrid::{Scheme, SharedWork, equal_share};

/// How a worker got an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    /// From its own range (its share, or what it stole earlier).
    Own(u64),
    /// From its own range, right after stealing `stolen` items into it.
    AfterSteal { item: u64, stolen: u64 },
}

/// One repetition's items; see the module docs.
pub struct ItemPool {
    ranges: Vec<AtomicU64>,
    steal: bool,
}

fn pack(start: u64, end: u64) -> u64 {
    (start << 32) | end
}

fn unpack(word: u64) -> (u64, u64) {
    (word >> 32, word & 0xFFFF_FFFF)
}

/// The most items a pool holds: a range's ends are 32-bit halves of a word.
pub const MAX_ITEMS: u64 = u32::MAX as u64;

impl ItemPool {
    /// `work.items` items in equal shares among `workers`.
    ///
    /// # Panics
    /// If `work.items` is above [`MAX_ITEMS`] (the options refuse such
    /// counts).
    pub fn new(work: &SharedWork, workers: usize) -> ItemPool {
        assert!(work.items <= MAX_ITEMS, "at most {MAX_ITEMS} items");
        let ranges = (0..workers)
            .map(|worker| {
                let share = equal_share(work.items, workers, worker);
                AtomicU64::new(pack(share.start, share.end))
            })
            .collect();
        ItemPool {
            ranges,
            steal: work.scheme == Scheme::WorkStealing,
        }
    }

    /// The next item for `worker`, or `None` once it has nothing left to
    /// do (under stealing: once every range is empty).
    pub fn take(&self, worker: usize) -> Option<Taken> {
        let mut stolen = 0;
        loop {
            let own = &self.ranges[worker];
            let word = own.load(Ordering::Acquire);
            let (start, end) = unpack(word);
            if start < end {
                let taken = own.compare_exchange_weak(
                    word,
                    pack(start + 1, end),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
                if taken.is_ok() {
                    return Some(if stolen > 0 {
                        Taken::AfterSteal {
                            item: start,
                            stolen,
                        }
                    } else {
                        Taken::Own(start)
                    });
                }
                continue;
            }
            if !self.steal {
                return None;
            }
            stolen = self.steal_into(worker)?;
        }
    }

    /// Moves the back half (rounded up) of the largest other range into
    /// `worker`'s empty range; the number of items moved, `None` when every
    /// other range is empty.
    fn steal_into(&self, worker: usize) -> Option<u64> {
        loop {
            let (victim, word) = self
                .ranges
                .iter()
                .enumerate()
                .filter(|(index, _)| *index != worker)
                .map(|(index, range)| (index, range.load(Ordering::Acquire)))
                .max_by_key(|(_, word)| {
                    let (start, end) = unpack(*word);
                    end.saturating_sub(start)
                })?;
            let (start, end) = unpack(word);
            if start >= end {
                return None;
            }
            let split = end - (end - start).div_ceil(2);
            let moved = self.ranges[victim].compare_exchange_weak(
                word,
                pack(start, split),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            if moved.is_ok() {
                // Only the owner writes an empty range, and this one is ours.
                self.ranges[worker].store(pack(split, end), Ordering::Release);
                return Some(end - split);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    fn drain(pool: &ItemPool, worker: usize) -> Vec<u64> {
        std::iter::from_fn(|| pool.take(worker))
            .map(|taken| match taken {
                Taken::Own(item) | Taken::AfterSteal { item, .. } => item,
            })
            .collect()
    }

    #[test]
    fn static_shares_are_never_stolen() {
        let work = SharedWork {
            items: 10,
            scheme: Scheme::StaticShares,
        };
        let pool = ItemPool::new(&work, 3);
        assert_eq!(drain(&pool, 0), [0, 1, 2, 3]);
        // Worker 0 is done; the others' shares stay theirs.
        assert_eq!(drain(&pool, 2), [7, 8, 9]);
        assert_eq!(drain(&pool, 1), [4, 5, 6]);
    }

    #[test]
    fn an_idle_worker_steals_the_back_half() {
        let work = SharedWork {
            items: 8,
            scheme: Scheme::WorkStealing,
        };
        let pool = ItemPool::new(&work, 2);
        assert_eq!(drain(&pool, 0)[..4], [0, 1, 2, 3]);
        // Worker 0 emptied its share first and took all of worker 1's: half
        // of 4, then half of 2, then the last one.
        assert_eq!(pool.take(1), None);
    }

    #[test]
    fn every_item_is_done_exactly_once_under_contention() {
        let work = SharedWork {
            items: 20_000,
            scheme: Scheme::WorkStealing,
        };
        let pool = ItemPool::new(&work, 4);
        let mut all: Vec<u64> = thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|worker| {
                    let pool = &pool;
                    scope.spawn(move || drain(pool, worker))
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        all.sort_unstable();
        assert_eq!(all, (0..20_000).collect::<Vec<u64>>());
    }
}
