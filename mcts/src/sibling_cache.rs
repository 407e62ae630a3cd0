//! A search thread's memory of the children it scored under the nodes it passes most often (the
//! top levels of the tree), so that selection need not read and convert every child's counters
//! again on each descent.
//!
//! # Why
//!
//! Near the root every iteration scans every child (40 of them in Emergo's opening), and each
//! child costs a scattered load of its node and a few conversions and divisions: measured under
//! plain UCT, selection in the top three levels took ~1.4 µs of a ~10 µs iteration; under
//! PUCT with knowledge (the default engine), whose iterations are short and whose
//! trees are shallow, selection was half of the search's time. Yet between two passes of one
//! thread through a node, usually nothing changed there but the one child that thread descended
//! into.
//!
//! # When a remembered scan is still true
//!
//! A node's counters (completed visits, threads in flight) only ever grow in sum: an arrival adds
//! a thread in flight, a backup turns it into a visit. Every change to a child's statistics,
//! solver bounds or minimax value is made by an iteration that passed the parent, so it shows
//! in the parent's counters. Thus, if this thread was *alone* in the parent when it scanned the
//! children (in flight there: itself only) and finds on its next arrival that the parent has
//! exactly one more visit and is again alone, the only iteration through the parent in between
//! was its own previous one, and only the child it picked then may have changed: that child is
//! read again, the others are taken from memory. A child not yet visited is remembered too, by
//! the numbers selection gives it (plain UCT: `fpu + explore` for a child without knowledge;
//! PUCT: its static value or `fpu`, and its prior), so the nodes still being widened are served
//! from memory as well. Anything else (another thread passed, the tree was replaced, a child is
//! proven or being explored, or under plain UCT has a prior or static value) means a full scan,
//! which gives the same pick bit for bit (the crate's tests check each remembered pick against
//! one). So single-threaded searches pick exactly as before (the speed harness's root digests
//! are unchanged).
//!
//! # Several threads
//!
//! With several threads that rule almost never holds near the root: another thread has nearly
//! always passed since. There a scan is reused instead until the parent has gained
//! [`SearchParams::shared_rescan`](crate::SearchParams::shared_rescan) visits, whoever made them,
//! and at most a [`SearchParams::shared_rescan_div`](crate::SearchParams::shared_rescan_div)th
//! of the visits it had at the scan ([`SiblingCache::shared`]): a pass reads only the child it
//! descended into last, and the pick lags the other threads' last few visits and virtual losses
//! under the parent. That is a trade of exactness for fewer reads of cache lines the other cores
//! keep writing; the performance and strength logs (`docs/PERFORMANCE.md`, `docs/STRENGTH.md`)
//! carry what it measured.
//!
//! # Deeper nodes
//!
//! Below the top levels, a node is remembered once [`SiblingCache::DEEP_VISITS`] playouts went
//! through it (the lines the search keeps reading, eight to twelve plies deep in a middle game),
//! by the exact rule above, or with several threads by the shared rule when it is bounded by a
//! share of the node's visits ([`SiblingCache::remembers`]). A long two-thread search grows a
//! main line dozens of plies deep that both threads follow; scanned in full there, its nodes
//! took half of each thread's time and two threads ran no faster than one.

use crate::node::Stats;

/// What a scan remembers of one child: the numbers of its score `q + explore * weight / denom`,
/// where only `explore` (from the parent's visits) changes between passes. Plain UCT:
/// `mean + explore / sqrt(n)` (`weight` 1, which changes no bit of the quotient); PUCT:
/// `Q + explore * P / (1 + n)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scored {
    /// The child's value for the mover (its mean over its effective visits, or its PUCT `Q`),
    /// clamped.
    pub(crate) q: f32,
    /// What the exploration term is multiplied by: 1 (UCT) or the prior (PUCT).
    pub(crate) weight: f32,
    /// What it is divided by: the square root of the effective visits (UCT) or one more than
    /// them (PUCT).
    pub(crate) denom: f32,
}

impl Scored {
    /// The score, `explore` being `c * sqrt(ln N)` (UCT) or `c * sqrt(N)` (PUCT) for the
    /// parent's `N`: computed in the order [`crate::select`] computes it, so bit for bit the
    /// same.
    #[inline]
    pub(crate) fn score(&self, explore: f32) -> f32 {
        score_of(self.q, self.weight, self.denom, explore)
    }
}

/// `q + explore * weight / denom`, the one place the remembered score is computed (by
/// [`Scored::score`] and, lane by lane, by [`Scores::best`]), so that both round alike.
#[inline(always)]
fn score_of(q: f32, weight: f32, denom: f32, explore: f32) -> f32 {
    q + explore * weight / denom
}

/// The remembered children of one parent, in edge order, as runs of numbers (every child's
/// `q`, then every `denom`, then, if weighted, every `weight`) rather than one [`Scored`] after
/// another: so that [`Scores::best`] scores several children at a time with vector
/// instructions (the compiler does this for lanes of plain arrays, not for a strided layout).
///
/// Under plain UCT every weight is 1, and `explore * 1.0` is `explore` bit for bit, so those
/// scans keep no weights ([`Scores::reset`]'s `weighted` false): a third less memory to read on
/// each pass, in a cache that is the search's main source of data-cache misses (callgrind's
/// cache simulation of a 100,000-playout uniform search: over half of all first-level read
/// misses fell in these runs).
#[derive(Debug, Default)]
pub(crate) struct Scores {
    /// `q` and `denom` runs of `len` numbers each, then the `weight` run if `weighted`.
    numbers: Vec<f32>,
    /// The children remembered, kept so that the hot paths index the runs without dividing.
    len: u32,
    /// Whether the weights are kept (else every weight is 1).
    weighted: bool,
}

impl Scores {
    /// Lanes scored side by side by [`Scores::best`].
    const LANES: usize = 4;

    /// Makes room for `len` children (their numbers are then set with [`Scores::set`]), whose
    /// weights are all 1 unless `weighted`.
    fn reset(&mut self, len: usize, weighted: bool) {
        self.len = u32::try_from(len).unwrap_or(u32::MAX);
        self.weighted = weighted;
        let runs = if weighted { 3 } else { 2 };
        self.numbers.clear();
        self.numbers.resize(runs * self.len(), 0.0);
    }

    /// Children remembered.
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    /// Remembers child `offset`'s numbers (ignored beyond [`Scores::len`]; its weight ignored
    /// unless the scores are weighted, where the caller promised 1).
    #[inline]
    pub(crate) fn set(&mut self, offset: usize, scored: Scored) {
        let len = self.len();
        if offset < len {
            debug_assert!(self.weighted || scored.weight == 1.0, "{scored:?}");
            self.numbers[offset] = scored.q;
            self.numbers[len + offset] = scored.denom;
            if self.weighted {
                self.numbers[2 * len + offset] = scored.weight;
            }
        }
    }

    /// Child `offset`'s numbers, if remembered.
    #[cfg(test)]
    pub(crate) fn get(&self, offset: usize) -> Option<Scored> {
        let len = self.len();
        (offset < len).then(|| Scored {
            q: self.numbers[offset],
            weight: if self.weighted {
                self.numbers[2 * len + offset]
            } else {
                1.0
            },
            denom: self.numbers[len + offset],
        })
    }

    /// The offset of the best score under exploration term `explore`: the first of equals
    /// (0 if no score beats minus infinity), exactly as scoring the children one by one with
    /// [`Scored::score`] and keeping a strictly better one would find. Each of
    /// [`Scores::LANES`] lanes keeps the first best of the children it sees (every fourth
    /// one, in order); the lanes' bests are then compared, lowest offset first among equals.
    /// Every score is computed by the same function as [`Scored::score`] (a multiplication, a
    /// division and an addition, each correctly rounded whether scalar or in a vector), so the
    /// pick is the same bit for bit.
    pub(crate) fn best(&self, explore: f32) -> usize {
        let len = self.len();
        let (q, rest) = self.numbers.split_at(len);
        let (denom, weight) = rest.split_at(len);
        if self.weighted {
            best_of(q, denom, |offset| weight[offset], explore)
        } else {
            best_of(q, denom, |_| 1.0, explore)
        }
    }
}

/// [`Scores::best`] over the runs `q` and `denom` (of equal length) and the weights
/// `weight(offset)`, inlined for each source of weights so that a constant 1 costs nothing.
#[inline(always)]
fn best_of(q: &[f32], denom: &[f32], weight: impl Fn(usize) -> f32, explore: f32) -> usize {
    const LANES: usize = Scores::LANES;
    let len = q.len().min(denom.len());
    let mut best = [f32::NEG_INFINITY; LANES];
    let mut at = [u32::MAX; LANES];
    let mut offsets: [u32; LANES] = std::array::from_fn(|lane| lane as u32);
    let tail = len - len % LANES;
    for start in (0..tail).step_by(LANES) {
        let (q, denom) = (&q[start..start + LANES], &denom[start..start + LANES]);
        // Branch-free, lane by lane, so that the compiler keeps the lanes in vectors.
        let mut score = [0.0f32; LANES];
        for lane in 0..LANES {
            score[lane] = score_of(q[lane], weight(start + lane), denom[lane], explore);
        }
        for lane in 0..LANES {
            let better = score[lane] > best[lane];
            best[lane] = if better { score[lane] } else { best[lane] };
            at[lane] = if better { offsets[lane] } else { at[lane] };
            offsets[lane] += LANES as u32;
        }
    }
    for offset in tail..len {
        let lane = offset - tail;
        let score = score_of(q[offset], weight(offset), denom[offset], explore);
        if score > best[lane] {
            best[lane] = score;
            at[lane] = offset as u32;
        }
    }
    let mut pick = (f32::NEG_INFINITY, 0u32);
    for lane in 0..LANES {
        let better = best[lane] > pick.0 || (best[lane] == pick.0 && at[lane] < pick.1);
        if better && best[lane] > f32::NEG_INFINITY {
            pick = (best[lane], at[lane]);
        }
    }
    pick.1 as usize
}

/// One remembered parent.
#[derive(Debug)]
struct Slot {
    /// The parent's node index (`u32::MAX`: empty).
    parent: u32,
    /// Offset of the child picked then (the one that may have changed since).
    picked: u32,
    /// The parent's completed visits when it was scanned.
    visits: u64,
    /// Every child.
    children: Scores,
}

/// Direct-mapped by parent node index; see the module docs.
#[derive(Debug)]
pub(crate) struct SiblingCache {
    /// The tree epoch the slots belong to (node indices mean other nodes in another tree).
    epoch: u64,
    slots: Vec<Slot>,
    /// `None`: a remembered scan is used only while it is still true (one thread, or alone in
    /// the node). `Some(r)`: a search of several threads, where a scan is reused while the
    /// parent has gained fewer visits than `r` allows since it was made, whoever made them (see
    /// [`SiblingCache::shared`]).
    rescan: Option<Rescan>,
}

/// How long a scan is reused across threads ([`SiblingCache::shared`]).
#[derive(Clone, Copy, Debug)]
struct Rescan {
    /// Visits the parent may gain at most.
    visits: u64,
    /// If not 0: and at most the parent's visits at the scan divided by this; deeper nodes are
    /// then remembered too.
    div: u64,
}

impl Rescan {
    /// The visits a parent that had `at_scan` visits when scanned may gain before a rescan.
    fn budget(self, at_scan: u64) -> u64 {
        match self.div {
            0 => self.visits,
            div => self.visits.min(at_scan / div),
        }
    }
}

/// A remembered scan found still true: the children's scores, of which the one at `stale`
/// must be read again before use.
pub(crate) struct Remembered<'a> {
    /// The children's scores, in edge order.
    pub(crate) children: &'a mut Scores,
    /// The child the last pass descended into.
    pub(crate) stale: usize,
}

impl SiblingCache {
    /// Path lengths (the root's is 1) whose nodes are always remembered: the levels every
    /// iteration passes, where a thread comes back to the same node most often.
    pub(crate) const MAX_DEPTH: usize = 3;
    /// Playouts started through a deeper node before a thread remembers its scans there
    /// (where scans are exact, [`SiblingCache::remembers`]).
    ///
    /// In the middle game the default engine's trees are 8 to 12 plies deep, and full scans
    /// below the top levels took ~30% of its time (perf, 300,000 playouts): a scan under PUCT
    /// reads every edge and every visited child's node, cold cache lines nearly all. A node
    /// passed 8 times is likely to be passed again soon (it lies on a line the search keeps
    /// reading), while one passed once or twice would only evict better entries. Thresholds of
    /// 4 and 16 did about as well at 60,000 playouts and up to 10% worse at 250,000
    /// (`docs/PERFORMANCE.md`, "selection in game positions").
    pub(crate) const DEEP_VISITS: u64 = 8;
    /// Slots: the root, its children and grandchildren in a 40-move position, and the deeper
    /// nodes passed [`SiblingCache::DEEP_VISITS`] times, with few collisions (2048 slots served
    /// 99% of the top three levels' selections from memory in a 250,000-playout search of the
    /// opening; with deeper nodes remembered, 8192 were 1–2% faster than 4096 at 250,000
    /// playouts, and 2048 mixed).
    /// ~48 bytes each plus 12 per child once filled (8 under plain UCT, which keeps no
    /// weights): ~2.4 MB per thread with every slot holding a 20-move middle-game node, ~4.3 MB
    /// with 40-move nodes (1.7 and 3.0 MB under plain UCT).
    const SLOTS: usize = 8192;

    /// An empty cache; its slots are allocated on first use, so a search that never remembers
    /// (UCT with priors or minimax values) pays nothing for it.
    pub(crate) fn new(epoch: u64) -> Self {
        SiblingCache {
            epoch,
            slots: Vec::new(),
            rescan: None,
        }
    }

    /// An empty cache for one of several threads sharing a tree, whose remembered scans are
    /// reused until the parent has `rescan` more visits than at the scan (0: [`new`]'s rule),
    /// and if `div` is not 0 at most `1 / div` more than it had then, in which case the deeper
    /// nodes passed often are remembered too ([`SiblingCache::remembers`]).
    ///
    /// # Why
    ///
    /// With several threads, another thread has nearly always passed a node near the root since
    /// this one last scanned it, so [`new`]'s rule sends every pass to a full scan, and each
    /// child read there is a cache line another core has just written (measured with two
    /// threads: selection took 46% of a thread's time against ~25% alone, over half of it
    /// waiting on those lines). A scan reused for a few passes reads only the child descended
    /// into last (and the one picked, which the descent reads anyway). The picks then lag the
    /// other threads' last few visits, and their virtual losses, under nodes that have
    /// thousands of visits: the price of the speed, measured in `docs/STRENGTH.md`. Deeper
    /// down, where nodes have tens or hundreds of visits, a fixed `rescan` would be most of a
    /// node's life: there the share `1 / div` bounds the lag.
    ///
    /// [`new`]: SiblingCache::new
    pub(crate) fn shared(epoch: u64, rescan: u32, div: u32) -> Self {
        SiblingCache {
            rescan: (rescan > 0).then_some(Rescan {
                visits: u64::from(rescan),
                div: u64::from(div),
            }),
            ..SiblingCache::new(epoch)
        }
    }

    /// Whether a thread remembers its scans of a node at path length `depth` (the root's is 1)
    /// through which `started` playouts started before this one: the top
    /// [`SiblingCache::MAX_DEPTH`] levels always, deeper nodes once
    /// [`SiblingCache::DEEP_VISITS`] playouts went through them, where a remembered scan is
    /// exact or, reused across threads, lasts a share of the node's visits (a fixed number of
    /// visits, right for the top levels' thousands, would be most of a deeper node's life).
    /// Exact entries alone gained nothing deeper down with two threads: another thread has
    /// nearly always passed a node on the main line since.
    pub(crate) fn remembers(&self, depth: usize, started: u64) -> bool {
        Self::passed_often(depth, started)
            && (depth <= Self::MAX_DEPTH || self.rescan.is_none_or(|r| r.div > 0))
    }

    /// Whether a node at path length `depth` (the root's is 1) through which `started`
    /// playouts started before this one is one a thread comes back to often: one of the top
    /// [`SiblingCache::MAX_DEPTH`] levels, or a deeper node passed
    /// [`SiblingCache::DEEP_VISITS`] times. Such nodes' scans are remembered (where
    /// [`SiblingCache::remembers`] says) and their legal moves cached.
    pub(crate) fn passed_often(depth: usize, started: u64) -> bool {
        depth <= Self::MAX_DEPTH || started >= Self::DEEP_VISITS
    }

    /// Whether scans are reused across other threads' visits ([`SiblingCache::shared`]): its
    /// scans then remember children other threads are exploring, at the scores they had.
    pub(crate) fn reuses_shared_scans(&self) -> bool {
        self.rescan.is_some()
    }

    /// Forgets everything if the tree was replaced.
    pub(crate) fn sync(&mut self, epoch: u64) {
        if epoch != self.epoch {
            self.epoch = epoch;
            for slot in &mut self.slots {
                slot.parent = u32::MAX;
            }
        }
    }

    fn slot(&mut self, parent: u32) -> &mut Slot {
        if self.slots.is_empty() {
            self.slots = (0..Self::SLOTS)
                .map(|_| Slot {
                    parent: u32::MAX,
                    picked: 0,
                    visits: 0,
                    children: Scores::default(),
                })
                .collect();
        }
        &mut self.slots[parent as usize % Self::SLOTS]
    }

    /// The remembered scan of `parent` (with `count` children) if it is still true, given the
    /// parent's counters now (`stats`, read after this thread arrived).
    pub(crate) fn recall(
        &mut self,
        parent: u32,
        stats: &Stats,
        count: usize,
    ) -> Option<Remembered<'_>> {
        let rescan = self.rescan;
        let slot = self.slot(parent);
        let still_true = slot.parent == parent
            && slot.children.len() == count
            && match rescan {
                None => stats.in_flight == 1 && stats.visits == slot.visits.wrapping_add(1),
                Some(rescan) => {
                    stats.visits < slot.visits.saturating_add(rescan.budget(slot.visits))
                }
            };
        still_true.then_some(Remembered {
            stale: slot.picked as usize,
            children: &mut slot.children,
        })
    }

    /// Forgets the scan of `parent` (its children changed in a way its counters do not show).
    pub(crate) fn forget(&mut self, parent: u32) {
        if let Some(slot) = self.slots.get_mut(parent as usize % Self::SLOTS) {
            slot.parent = u32::MAX;
        }
    }

    /// Starts remembering a full scan of `parent`, which has `count` children: their scores
    /// are set in the returned [`Scores`], then [`SiblingCache::picked`] completes the entry.
    /// The slot is marked empty until then.
    pub(crate) fn begin(&mut self, parent: u32, count: usize, weighted: bool) -> &mut Scores {
        let slot = self.slot(parent);
        slot.parent = u32::MAX;
        slot.children.reset(count, weighted);
        &mut slot.children
    }

    /// Completes (or refreshes) the entry of `parent`: scanned with `stats` (this thread alone
    /// in it, else the entry is dropped), child `picked` chosen. Under
    /// [`SiblingCache::shared`] the entry is kept however many threads are inside, and
    /// `scanned` says whether the children were all read now (the visits then start the count
    /// towards the next scan) or taken from memory.
    pub(crate) fn picked(&mut self, parent: u32, stats: &Stats, picked: usize, scanned: bool) {
        let shared = self.rescan.is_some();
        let slot = self.slot(parent);
        if picked >= slot.children.len() || !(shared || stats.in_flight == 1) {
            slot.parent = u32::MAX;
            return;
        }
        slot.parent = parent;
        slot.picked = picked as u32;
        if scanned || !shared {
            slot.visits = stats.visits;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(visits: u64, in_flight: u64) -> Stats {
        Stats {
            visits,
            in_flight,
            value_sum: 0,
        }
    }

    fn scored(q: f32) -> Scored {
        Scored {
            q,
            weight: 1.0,
            denom: 1.0,
        }
    }

    #[test]
    fn deep_nodes_are_remembered_once_passed_often_unless_a_fixed_rescan_would_last_too_long() {
        let exact = SiblingCache::new(0);
        let deep = SiblingCache::MAX_DEPTH + 1;
        let often = SiblingCache::DEEP_VISITS;
        // The top levels always, from the first pass on.
        assert!((1..=SiblingCache::MAX_DEPTH).all(|depth| exact.remembers(depth, 0)));
        // Below them, only nodes through which enough playouts started.
        assert!(!exact.remembers(deep, often - 1));
        assert!(exact.remembers(deep, often));
        assert!(exact.remembers(40, u64::MAX));
        // Scans reused across threads for a share of the node's visits: the same nodes.
        let share = SiblingCache::shared(0, 8, 4);
        assert!((1..=SiblingCache::MAX_DEPTH).all(|depth| share.remembers(depth, 0)));
        assert!(!share.remembers(deep, often - 1));
        assert!(share.remembers(deep, often));
        // Reused for a fixed number of visits (no share): the top levels only.
        let fixed = SiblingCache::shared(0, 8, 0);
        assert!(fixed.remembers(SiblingCache::MAX_DEPTH, 0));
        assert!(!fixed.remembers(deep, u64::MAX));
        // A rescan of 0 means exact scans, with several threads too.
        assert!(SiblingCache::shared(0, 0, 0).remembers(deep, often));
        assert!(!SiblingCache::shared(0, 0, 4).reuses_shared_scans());
        // Moves are cached at the nodes passed often, whatever the cache.
        assert!((1..=SiblingCache::MAX_DEPTH).all(|depth| SiblingCache::passed_often(depth, 0)));
        assert!(!SiblingCache::passed_often(deep, often - 1));
        assert!(SiblingCache::passed_often(deep, often));
    }

    /// Begins an entry of `parent` with children of the given values (weight and denom 1).
    fn remember(cache: &mut SiblingCache, parent: u32, qs: &[f32]) {
        let children = cache.begin(parent, qs.len(), false);
        for (offset, &q) in qs.iter().enumerate() {
            children.set(offset, scored(q));
        }
    }

    /// The best offset scoring one child after the other: what [`Scores::best`] must match.
    fn one_by_one(children: &[Scored], explore: f32) -> usize {
        let mut best = (0, f32::NEG_INFINITY);
        for (offset, child) in children.iter().enumerate() {
            let score = child.score(explore);
            if score > best.1 {
                best = (offset, score);
            }
        }
        best.0
    }

    #[test]
    fn lane_parallel_best_matches_one_by_one() {
        // Counts around the lane width, ties (first of equals wins, also across lanes),
        // infinities and NaNs (never picked, as one by one), all-minus-infinity (offset 0).
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for case in 0..4_000 {
            let len = (next() % 40) as usize + 1;
            // Every other case unweighted, as plain UCT remembers its scans.
            let weighted = case % 2 == 0;
            let children: Vec<Scored> = (0..len)
                .map(|_| {
                    let pick =
                        |r: u64, choices: &[f32]| choices[(r % choices.len() as u64) as usize];
                    Scored {
                        q: pick(
                            next(),
                            &[0.0, 0.25, 0.5, 1.0, f32::NEG_INFINITY, f32::NAN, 0.75],
                        ),
                        weight: if weighted {
                            pick(next(), &[1.0, 0.5, 0.125, 0.0])
                        } else {
                            1.0
                        },
                        denom: pick(next(), &[1.0, 2.0, 3.0, 1.5]),
                    }
                })
                .collect();
            let explore = [0.0, 0.5, 1.25, f32::INFINITY, 0.5, 0.0, f32::INFINITY, 1.25][case % 8];
            let mut scores = Scores::default();
            scores.reset(len, weighted);
            for (offset, child) in children.iter().enumerate() {
                scores.set(offset, *child);
                let bits = |s: Scored| (s.q.to_bits(), s.weight.to_bits(), s.denom.to_bits());
                assert_eq!(scores.get(offset).map(bits), Some(bits(*child)));
            }
            assert_eq!(
                scores.best(explore),
                one_by_one(&children, explore),
                "{children:?} explore {explore}"
            );
        }
    }

    #[test]
    fn a_scan_is_recalled_only_after_this_threads_own_pass() {
        let mut cache = SiblingCache::new(0);
        assert!(cache.recall(7, &stats(10, 1), 2).is_none());
        remember(&mut cache, 7, &[0.25, 0.75]);
        cache.picked(7, &stats(10, 1), 1, true);
        // The next pass: one more visit, alone again.
        let recalled = cache
            .recall(7, &stats(11, 1), 2)
            .map(|r| (r.stale, r.children.len()));
        assert_eq!(recalled, Some((1, 2)));
        // Another thread passed (two more visits), or is inside now, or the count differs.
        assert!(cache.recall(7, &stats(12, 1), 2).is_none());
        assert!(cache.recall(7, &stats(11, 2), 2).is_none());
        assert!(cache.recall(7, &stats(11, 1), 3).is_none());
        // A scan made while another thread was inside is not remembered.
        cache.picked(7, &stats(11, 2), 0, true);
        assert!(cache.recall(7, &stats(12, 1), 2).is_none());
    }

    #[test]
    fn a_shared_scan_is_reused_until_the_parent_gained_rescan_visits() {
        let mut cache = SiblingCache::shared(0, 4, 0);
        assert!(cache.reuses_shared_scans());
        assert!(!SiblingCache::shared(0, 0, 0).reuses_shared_scans());
        assert!(!SiblingCache::new(0).reuses_shared_scans());
        // Scanned at 10 visits with another thread inside: remembered all the same.
        remember(&mut cache, 7, &[0.25, 0.75]);
        cache.picked(7, &stats(10, 2), 1, true);
        // Passes from memory, whoever else passed or is inside, up to 13 visits; a remembered
        // pass does not restart the count.
        for (visits, stale) in [(11, 1), (12, 0), (13, 0)] {
            let recalled = cache.recall(7, &stats(visits, 3), 2).map(|r| r.stale);
            assert_eq!(recalled, Some(stale), "{visits} visits");
            cache.picked(7, &stats(visits, 3), 0, false);
        }
        assert_eq!(cache.recall(7, &stats(13, 1), 2).map(|r| r.stale), Some(0));
        // 4 more visits than at the scan (or another child count): scanned again.
        assert!(cache.recall(7, &stats(14, 1), 2).is_none());
        assert!(cache.recall(7, &stats(12, 1), 3).is_none());
        // The new scan starts the count again.
        remember(&mut cache, 7, &[0.25, 0.75]);
        cache.picked(7, &stats(14, 2), 0, true);
        assert!(cache.recall(7, &stats(17, 2), 2).is_some());
        assert!(cache.recall(7, &stats(18, 2), 2).is_none());
    }

    #[test]
    fn a_shared_scan_lasts_at_most_its_share_of_the_parents_visits() {
        // At most 64 visits, and at most a quarter of the visits at the scan.
        let mut cache = SiblingCache::shared(0, 64, 4);
        let lasts = |cache: &mut SiblingCache, at_scan: u64| {
            remember(cache, 7, &[0.25, 0.75]);
            cache.picked(7, &stats(at_scan, 2), 0, true);
            (at_scan..)
                .take_while(|&visits| cache.recall(7, &stats(visits, 2), 2).is_some())
                .count() as u64
        };
        // Young nodes: a quarter of their visits (40 visits: reused up to 49, 10 in all).
        assert_eq!(lasts(&mut cache, 40), 10);
        assert_eq!(lasts(&mut cache, 9), 2);
        // Below 4 visits no reuse at all (a thread's own last visit already adds one).
        assert_eq!(lasts(&mut cache, 3), 0);
        // Old nodes: the fixed number.
        assert_eq!(lasts(&mut cache, 256), 64);
        assert_eq!(lasts(&mut cache, 1_000_000), 64);
        // No share: the fixed number whatever the node's age.
        let mut fixed = SiblingCache::shared(0, 64, 0);
        assert_eq!(lasts(&mut fixed, 9), 64);
    }

    /// Two searches of `game` with `params` give the same root statistics, and so do second
    /// runs on their kept trees (whose remembered scans are still true).
    fn same_searches_twice<G: crate::Game + Clone>(game: G, params: &crate::SearchParams) {
        let summary = |s: &crate::Snapshot<G::Move>| {
            s.moves
                .iter()
                .map(|m| (m.visits, m.value.to_bits()))
                .collect::<Vec<_>>()
        };
        let mut a = crate::Search::new(game.clone(), params.clone());
        let mut b = crate::Search::new(game, params.clone());
        let (first, second) = (a.run(), b.run());
        assert_eq!(summary(&first), summary(&second));
        assert_eq!(summary(&a.run()), summary(&b.run()));
    }

    /// Plain-UCT searches in which remembered scans are used at every top-level node and at
    /// the deeper nodes passed often; in the crate's tests each remembered pick is also checked
    /// against a full scan
    /// (`Uct::select_remembered`), so a wrong memory fails here. The same seed gives the same
    /// search, and a second run on the kept tree (whose remembered scans are still true) too.
    #[test]
    fn remembered_scans_pick_as_full_scans_do() {
        use crate::toy::{Nim, TicTacToe};
        use crate::{Search, SearchParams};
        for (fpu, threshold) in [(1.0, 1), (0.5, 1), (1.0, 3)] {
            let params = SearchParams {
                max_playouts: Some(4_000),
                smart_pruning: false,
                first_play_urgency: fpu,
                expand_threshold: threshold,
                seed: 5,
                ..SearchParams::default()
            };
            same_searches_twice(Nim::new(40, 3), &params);
            let solved = Search::new(TicTacToe::new(), params).run();
            assert_eq!(solved.playouts, 4_000);
        }
    }

    /// Nim with made-up knowledge: priors and static values that vary from move to move (a
    /// hash of the pile and the move) and an evaluation, so that remembered PUCT scores are not
    /// all alike.
    #[derive(Clone, Copy, Debug)]
    struct Hinted(crate::toy::Nim);

    fn hash(pile: u32, mv: u32) -> f32 {
        let h = (u64::from(pile) << 32 | u64::from(mv)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> 40) as f32 / (1u64 << 24) as f32
    }

    impl crate::Game for Hinted {
        type Move = u32;

        fn to_move(&self) -> crate::Player {
            self.0.to_move()
        }
        fn legal_moves(&self, out: &mut Vec<u32>) {
            self.0.legal_moves(out);
        }
        fn play(&mut self, mv: u32) {
            self.0.play(mv);
        }
        fn outcome(&self) -> Option<crate::Outcome> {
            self.0.outcome()
        }
        fn evaluate(&self) -> Option<f32> {
            Some(hash(self.0.pile, 0))
        }
        fn move_knowledge(&self, moves: &[u32], priors: &mut Vec<f32>, values: &mut Vec<f32>) {
            priors.clear();
            values.clear();
            for &mv in moves {
                priors.push(hash(self.0.pile, mv));
                values.push(hash(self.0.pile + 1000, mv));
            }
        }
    }

    /// The same under PUCT with knowledge (priors, static values, minimax backups, cut
    /// playouts or not): remembered picks checked against full scans, one seed one search.
    #[test]
    fn remembered_puct_scans_pick_as_full_scans_do() {
        use crate::toy::Nim;
        use crate::{Search, SearchParams, Selection};
        for (minimax, cutoff, threshold) in [(0.0, Some(0), 1), (0.5, Some(0), 1), (0.5, None, 2)] {
            let params = SearchParams {
                max_playouts: Some(4_000),
                smart_pruning: false,
                selection: Selection::Puct,
                exploration: 1.5,
                minimax_weight: minimax,
                playout_cutoff: cutoff,
                expand_threshold: threshold,
                seed: 9,
                ..SearchParams::default()
            };
            same_searches_twice(Hinted(Nim::new(60, 12)), &params);
            // A small pile: the solver proves children, and the scans fall back to full ones.
            let solved = Search::new(Hinted(Nim::new(14, 3)), params).run();
            assert!(solved.root_proven.is_some(), "{solved:?}");
        }
    }

    /// Exact scans with several threads (`shared_rescan` 0) remember the deeper nodes passed
    /// often too: each such pick made alone is checked against a full scan in
    /// `Uct::select_remembered` (in the crate's tests), under UCT and PUCT; with scans reused
    /// across threads the deeper nodes are remembered by the shared rule (see
    /// `shared_deep_scans_still_find_and_prove_the_win`).
    #[test]
    fn deeper_scans_stay_exact_with_several_threads() {
        use crate::toy::Nim;
        use crate::{Search, SearchParams, Selection};
        for (selection, rescan) in [
            (Selection::Uct, 0),
            (Selection::Puct, 0),
            (Selection::Puct, 16),
        ] {
            let params = SearchParams {
                max_playouts: Some(20_000),
                smart_pruning: false,
                selection,
                exploration: 1.5,
                threads: 2,
                shared_rescan: rescan,
                seed: 3,
                ..SearchParams::default()
            };
            let result = match selection {
                Selection::Uct => Search::new(Nim::new(60, 12), params).run(),
                Selection::Puct => Search::new(Hinted(Nim::new(60, 12)), params).run(),
            };
            assert!(
                result.max_depth > SiblingCache::MAX_DEPTH as u32,
                "{result:?}"
            );
        }
    }

    /// Scans reused across threads at the deeper nodes too (`shared_rescan_div`, applied under
    /// PUCT; plain UCT checked alongside) still lead two threads to the winning move, and to a
    /// proof where the game is small enough: the lag costs accuracy for a few visits, never
    /// correctness.
    #[test]
    fn shared_deep_scans_still_find_and_prove_the_win() {
        use crate::toy::Nim;
        use crate::{Proven, Search, SearchParams, Selection};
        // The share applies under PUCT only (`SearchParams::rescan_div`): plain UCT once.
        let cases = [
            (Selection::Uct, 4),
            (Selection::Puct, 0),
            (Selection::Puct, 2),
            (Selection::Puct, 4),
        ];
        for (selection, div) in cases {
            let params = SearchParams {
                max_playouts: Some(40_000),
                smart_pruning: false,
                selection,
                exploration: 1.5,
                threads: 2,
                shared_rescan: 16,
                shared_rescan_div: div,
                seed: 5,
                ..SearchParams::default()
            };
            let run = |pile: u32| match selection {
                Selection::Uct => Search::new(Nim::new(pile, 3), params.clone()).run(),
                Selection::Puct => Search::new(Hinted(Nim::new(pile, 3)), params.clone()).run(),
            };
            // Take the pile's remainder by 4: the opponent then always faces a multiple.
            for pile in [14, 19] {
                let result = run(pile);
                assert!(
                    result.max_depth > SiblingCache::MAX_DEPTH as u32,
                    "{result:?}"
                );
                assert_eq!(
                    result.best_move,
                    Some(pile % 4),
                    "{selection:?} div {div}: {result:?}"
                );
                assert!(
                    matches!(result.root_proven, Some(Proven::Win { .. })),
                    "{selection:?} div {div}: {result:?}"
                );
            }
        }
    }

    #[test]
    fn a_replaced_tree_or_a_colliding_node_forgets() {
        let mut cache = SiblingCache::new(0);
        remember(&mut cache, 3, &[0.5]);
        cache.picked(3, &stats(1, 1), 0, true);
        cache.sync(0);
        assert!(cache.recall(3, &stats(2, 1), 1).is_some());
        cache.sync(1);
        assert!(cache.recall(3, &stats(2, 1), 1).is_none());
        remember(&mut cache, 3, &[0.5]);
        cache.picked(3, &stats(1, 1), 0, true);
        // Same slot, other node: the first is gone.
        let other = 3 + SiblingCache::SLOTS as u32;
        remember(&mut cache, other, &[0.5]);
        cache.picked(other, &stats(5, 1), 0, true);
        assert!(cache.recall(3, &stats(2, 1), 1).is_none());
        assert!(cache.recall(other, &stats(6, 1), 1).is_some());
    }
}
