//! The tree-memory budget (`--max-tree-memory`): one pool of bytes shared by the running searches
//! and the kept trees, so that no request can make the process's search trees exceed it.
//!
//! # How the budget is shared
//!
//! - Before a search starts it is granted bytes ([`TreeGrant`]), and it runs with
//!   `SearchParams::max_tree_bytes` set to its grant: the MCTS crate keeps the tree within that at
//!   all times, reclaiming its least-visited subtrees when it is full and growing on.
//! - A search asks for its **share**: the budget times its threads over the thread budget
//!   ([`TreeMemory::share`]). Threads are what fills a tree (it grows with playouts, playouts
//!   with threads × time), and admission control never runs more threads than the thread budget
//!   at once, so the shares of the running searches add up to at most the budget: a search always
//!   finds its share once kept trees are out of the way. A search with every thread of an idle
//!   server may use the whole budget; a one-thread search on a 16-thread server a sixteenth.
//! - Kept trees ([`crate::games`]) live on what the running searches leave. When a search ends
//!   and its tree is kept, its grant shrinks to the bytes the tree holds; when a search needs
//!   room, the least recently used kept trees are dropped until its share is free.
//! - A search that still finds less than its share (only while a reused tree larger than its new
//!   share is being cut down to it) runs with what is free instead of being refused: a tree
//!   reclaims at any size.
//!
//! The accounting cannot leak: a grant gives its bytes back when it is dropped, and every struct
//! (and function) holding a tree and its grant declares the grant so that it is dropped *after*
//! the tree, so bytes return to the pool only once the memory they stand for is free.

use std::sync::{Arc, Mutex, MutexGuard};

/// The budget and what is granted from it.
#[derive(Debug)]
pub struct TreeMemory {
    budget: usize,
    thread_budget: usize,
    accounts: Mutex<Accounts>,
}

#[derive(Debug, Default)]
struct Accounts {
    /// Bytes granted: running searches' grants plus kept trees'. Never above the budget.
    granted: usize,
    /// The part of `granted` held by kept trees.
    kept: usize,
    /// Highest `granted` so far.
    peak: usize,
}

impl TreeMemory {
    /// A budget of `budget` bytes for a server running at most `thread_budget` search threads
    /// at once (0 counts as 1).
    pub fn new(budget: usize, thread_budget: usize) -> TreeMemory {
        TreeMemory {
            budget,
            thread_budget: thread_budget.max(1),
            accounts: Mutex::new(Accounts::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Accounts> {
        // Every update below completes before it could panic; a poisoned lock holds consistent
        // numbers.
        self.accounts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The budget, in bytes.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The share of a search running on `threads` threads: `budget × threads / thread budget`,
    /// at most the budget. The shares of searches whose threads fit in the thread budget add up
    /// to at most the budget.
    pub fn share(&self, threads: usize) -> usize {
        let threads = threads.clamp(1, self.thread_budget);
        let share = self.budget as u128 * threads as u128 / self.thread_budget as u128;
        usize::try_from(share)
            .unwrap_or(usize::MAX)
            .min(self.budget)
    }

    /// Bytes in use: granted to running searches (the most their trees may hold) plus held by
    /// kept trees. Never above [`budget`](TreeMemory::budget).
    pub fn in_use(&self) -> usize {
        self.lock().granted
    }

    /// Bytes held by kept trees.
    pub fn kept(&self) -> usize {
        self.lock().kept
    }

    /// The highest [`in_use`](TreeMemory::in_use) so far.
    pub fn peak(&self) -> usize {
        self.lock().peak
    }

    /// An empty grant, to grow with [`TreeGrant::grow_to`].
    pub fn grant(self: &Arc<Self>) -> TreeGrant {
        TreeGrant {
            memory: Arc::clone(self),
            bytes: 0,
            kept: false,
        }
    }

    fn publish(&self, accounts: &Accounts) {
        crate::metrics::tree_memory(accounts.granted, accounts.kept);
    }
}

/// Bytes of the budget held by one tree (a running search's or a kept one); given back when
/// dropped. Drop it after the tree it pays for.
#[derive(Debug)]
pub struct TreeGrant {
    memory: Arc<TreeMemory>,
    bytes: usize,
    kept: bool,
}

impl TreeGrant {
    /// Bytes granted.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Grows the grant towards `target` bytes with what the budget has free. While that is not
    /// enough it calls `evict`, which should free a kept tree (and drop it, returning its bytes)
    /// and say whether it found one; when none is left the grant keeps what it got. Returns the
    /// bytes granted. Never shrinks the grant. `evict` runs without any lock of the budget held.
    pub fn grow_to(&mut self, target: usize, mut evict: impl FnMut() -> bool) -> usize {
        loop {
            {
                let mut a = self.memory.lock();
                let free = self.memory.budget.saturating_sub(a.granted);
                let more = target.saturating_sub(self.bytes).min(free);
                a.granted += more;
                a.peak = a.peak.max(a.granted);
                if self.kept {
                    a.kept += more;
                }
                self.bytes += more;
                self.memory.publish(&a);
            }
            // Each call drops a kept tree, of which there are finitely many (new ones are only
            // parked as searches end), so this ends.
            if self.bytes >= target || !evict() {
                return self.bytes;
            }
        }
    }

    /// Gives back all but `bytes` (nothing if the grant holds no more than that).
    pub fn shrink_to(&mut self, bytes: usize) {
        if bytes < self.bytes {
            self.release(self.bytes - bytes);
        }
    }

    /// Marks the grant as a kept tree's (`true`) or a running search's (`false`), for
    /// [`TreeMemory::kept`].
    pub fn set_kept(&mut self, kept: bool) {
        if kept != self.kept {
            let mut a = self.memory.lock();
            if kept {
                a.kept += self.bytes;
            } else {
                a.kept = a.kept.saturating_sub(self.bytes);
            }
            self.kept = kept;
            self.memory.publish(&a);
        }
    }

    fn release(&mut self, bytes: usize) {
        let bytes = bytes.min(self.bytes);
        let mut a = self.memory.lock();
        a.granted = a.granted.saturating_sub(bytes);
        if self.kept {
            a.kept = a.kept.saturating_sub(bytes);
        }
        self.bytes -= bytes;
        self.memory.publish(&a);
    }
}

impl Drop for TreeGrant {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.release(self.bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const MIB: usize = 1 << 20;

    #[test]
    fn shares_follow_threads_and_add_up_to_the_budget() {
        let m = TreeMemory::new(100 * MIB, 4);
        assert_eq!(m.share(1), 25 * MIB);
        assert_eq!(m.share(4), 100 * MIB);
        // More threads than the budget, or none: clamped.
        assert_eq!(m.share(64), 100 * MIB);
        assert_eq!(m.share(0), 25 * MIB);
        // Rounding never lets shares add up to more than the budget.
        let m = TreeMemory::new(100, 3);
        assert!(3 * m.share(1) <= 100 && m.share(1) + m.share(2) <= 100);
        let huge = TreeMemory::new(usize::MAX, 7);
        assert_eq!(huge.share(7), usize::MAX);
        assert!(huge.share(3) < usize::MAX);
    }

    #[test]
    fn grants_grow_from_what_is_free_and_come_back_when_dropped() {
        let m = Arc::new(TreeMemory::new(100, 2));
        let mut a = m.grant();
        assert_eq!(a.grow_to(60, || false), 60);
        let mut b = m.grant();
        // Only 40 free: b gets those, and runs with them.
        assert_eq!(b.grow_to(60, || false), 40);
        assert_eq!(m.in_use(), 100);
        a.shrink_to(10);
        assert_eq!((a.bytes(), m.in_use()), (10, 50));
        // Shrinking to more than the grant holds changes nothing; growing never shrinks.
        a.shrink_to(1000);
        assert_eq!(a.grow_to(5, || false), 10);
        drop(b);
        assert_eq!(m.in_use(), 10);
        drop(a);
        assert_eq!((m.in_use(), m.kept(), m.peak()), (0, 0, 100));
    }

    #[test]
    fn a_kept_tree_shrinks_to_what_it_holds_and_counts_as_kept() {
        let m = Arc::new(TreeMemory::new(100, 1));
        let mut g = m.grant();
        g.grow_to(80, || false);
        // The search ended holding 30 bytes: the grant shrinks to them, as a kept tree.
        g.shrink_to(30);
        g.set_kept(true);
        assert_eq!((m.in_use(), m.kept()), (30, 30));
        g.set_kept(true);
        assert_eq!(m.kept(), 30);
        // Reused: a running search's again, grown back.
        g.set_kept(false);
        g.grow_to(100, || false);
        assert_eq!((m.in_use(), m.kept()), (100, 0));
        g.set_kept(true);
        drop(g);
        assert_eq!((m.in_use(), m.kept()), (0, 0));
    }

    #[test]
    fn kept_trees_are_evicted_oldest_first_to_make_room() {
        let m = Arc::new(TreeMemory::new(100, 2));
        // Three kept trees of 30 bytes, oldest first.
        let mut kept: Vec<TreeGrant> = (0..3)
            .map(|_| {
                let mut g = m.grant();
                g.grow_to(30, || false);
                g.set_kept(true);
                g
            })
            .collect();
        assert_eq!((m.in_use(), m.kept()), (90, 90));
        let evicted = std::cell::Cell::new(0);
        let mut evict = || {
            if kept.is_empty() {
                return false;
            }
            drop(kept.remove(0));
            evicted.set(evicted.get() + 1);
            true
        };
        // 50 bytes: 10 are free, two trees must go.
        let mut search = m.grant();
        assert_eq!(search.grow_to(50, &mut evict), 50);
        assert_eq!(evicted.get(), 2);
        assert_eq!((m.in_use(), m.kept()), (80, 30));
        // More than the budget holds: every kept tree goes, and the search keeps what is free.
        assert_eq!(search.grow_to(500, &mut evict), 100);
        assert_eq!(evicted.get(), 3);
        assert_eq!((m.in_use(), m.kept()), (100, 0));
        drop(search);
        assert_eq!(m.in_use(), 0);
    }

    /// Many threads growing, shrinking, parking and dropping grants at once, while evicting
    /// each other's kept grants: what is granted never exceeds the budget, and everything
    /// comes back.
    #[test]
    fn concurrent_takers_never_exceed_the_budget() {
        const BUDGET: usize = 1000;
        let m = Arc::new(TreeMemory::new(BUDGET, 8));
        let kept: Arc<Mutex<Vec<TreeGrant>>> = Arc::new(Mutex::new(Vec::new()));
        // The sum of the live grants as the takers see them, checked after each change.
        let live = Arc::new(AtomicUsize::new(0));
        std::thread::scope(|s| {
            for t in 0..8usize {
                let (m, kept, live) = (m.clone(), kept.clone(), live.clone());
                s.spawn(move || {
                    let mut x = t as u64 + 1;
                    let mut next = move |n: usize| {
                        // xorshift: a different sequence per thread.
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x % n as u64) as usize
                    };
                    for _ in 0..2000 {
                        let mut g = m.grant();
                        let target = 1 + next(BUDGET / 2);
                        let got = g.grow_to(target, || {
                            let old = kept.lock().unwrap().pop();
                            old.map(|old| {
                                live.fetch_sub(old.bytes(), Ordering::SeqCst);
                                drop(old);
                            })
                            .is_some()
                        });
                        assert!(got <= target);
                        let now = live.fetch_add(got, Ordering::SeqCst) + got;
                        assert!(now <= BUDGET, "{now} bytes live");
                        assert!(m.in_use() <= BUDGET);
                        let keep = next(got + 1);
                        live.fetch_sub(got - keep, Ordering::SeqCst);
                        g.shrink_to(keep);
                        if next(2) == 0 {
                            g.set_kept(true);
                            kept.lock().unwrap().push(g);
                        } else {
                            live.fetch_sub(keep, Ordering::SeqCst);
                            drop(g);
                        }
                    }
                });
            }
        });
        assert!(m.peak() <= BUDGET);
        assert!(m.peak() > BUDGET / 2, "the test never filled the budget");
        let rest: usize = kept.lock().unwrap().iter().map(TreeGrant::bytes).sum();
        assert_eq!((m.in_use(), m.kept()), (rest, rest));
        kept.lock().unwrap().clear();
        assert_eq!((m.in_use(), m.kept()), (0, 0));
    }
}
