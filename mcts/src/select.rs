//! Choosing children: UCT with first-play urgency and virtual loss while searching, and the
//! "best move" order used for the answer, the principal variations and smart pruning.

use std::cmp::Ordering;

use crate::node::{Child, EdgeCodes, Node, Stats, prior_of, value_of};
use crate::params::{SearchParams, Selection};
use crate::sibling_cache::{Scored, SiblingCache};
use crate::solver::{Bounds, Proven};
use crate::tree::Tree;

/// The selection constants, read once per search from [`SearchParams`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Uct {
    exploration: f32,
    exploration_growth: f32,
    /// [`SearchParams::exploration_base`], at least 1.
    exploration_base: f32,
    fpu: f32,
    virtual_loss: u64,
    selection: Selection,
    prior_weight: f32,
    minimax_weight: f32,
    refined_value_weight: f32,
}

impl Uct {
    pub(crate) fn new(params: &SearchParams) -> Self {
        Uct {
            exploration: params.exploration,
            exploration_growth: params.exploration_growth.max(0.0),
            exploration_base: params.exploration_base.max(1) as f32,
            fpu: params.first_play_urgency,
            virtual_loss: u64::from(params.virtual_loss),
            selection: params.selection,
            prior_weight: params.prior_weight.max(0.0),
            minimax_weight: params.minimax_weight.clamp(0.0, 1.0),
            refined_value_weight: params.refined_value_weight.clamp(0.0, 1.0),
        }
    }

    /// The weight of the edges' static values in the `Q` of `parent`'s visited children:
    /// [`SearchParams::refined_value_weight`] once `parent`'s knowledge was refined, else 0.
    #[inline]
    fn blend_of(&self, parent: &Node) -> f32 {
        if self.refined_value_weight > 0.0 && parent.refined_level() > 0 {
            self.refined_value_weight
        } else {
            0.0
        }
    }

    /// Visits as selection sees them: completed visits plus `virtual_loss` per thread in flight.
    fn effective_visits(&self, stats: &Stats) -> u64 {
        stats.visits + stats.in_flight * self.virtual_loss
    }

    /// Plain UCT (no prior, no minimax value) where a child with nothing proven is never
    /// skipped (`floor`: as for [`Uct::select`]).
    fn is_plain(&self, floor: Option<u8>) -> bool {
        self.selection == Selection::Uct
            && self.prior_weight == 0.0
            && self.minimax_weight == 0.0
            && unknown_selectable(floor)
    }

    /// Whether [`Uct::select_remembered`] may remember scans (`floor`: as for
    /// [`Uct::select`]): under plain UCT ([`Uct::is_plain`]) and under PUCT wherever a child
    /// with nothing proven is selectable, the two formulas whose scores split into numbers
    /// that stay true between passes and the parent's exploration term ([`Scored`]).
    fn remembers(&self, floor: Option<u8>) -> bool {
        match self.selection {
            Selection::Uct => self.is_plain(floor),
            Selection::Puct => unknown_selectable(floor),
        }
    }

    /// The exploration term of a parent with counters `stats`: `c * sqrt(ln N)` for UCT,
    /// `c * sqrt(N)` for PUCT, `c` grown with `N` when
    /// [`SearchParams::exploration_growth`] is set.
    #[inline]
    fn explore(&self, stats: &Stats) -> f32 {
        let parent_n = self.effective_visits(stats).max(1) as f32;
        let c = if self.exploration_growth > 0.0 {
            self.exploration
                * (1.0 + self.exploration_growth * (parent_n / self.exploration_base).ln_1p())
        } else {
            self.exploration
        };
        match self.selection {
            Selection::Uct => c * sqrt_ln(parent_n),
            Selection::Puct => c * parent_n.sqrt(),
        }
    }

    /// The highest score any child not proven won can have under plain UCT ([`Uct::is_plain`])
    /// with exploration term `explore`: `Q` is at most 1 and `explore / sqrt(n)` at most
    /// `explore`, and rounding keeps both bounds, so no child scores more than `1 + explore`.
    /// Once a child reaches it, none after it can win (ties go to the lower index), and the
    /// scan stops there: with `fpu` 1, at the first unvisited child, which spares reading the
    /// many edges after it in a node still being widened. A proven win would be taken at once,
    /// but there is none under a parent selection runs in: the solver proves the parent in the
    /// backup that proves such a child, and the descent stops at proven nodes (a proven root
    /// ends the search). Infinite (no early stop) for any other formula, or for a negative
    /// exploration constant.
    #[inline]
    fn ceiling(&self, explore: f32, plain: bool) -> f32 {
        if plain && explore >= 0.0 {
            1.0 + explore
        } else {
            f32::INFINITY
        }
    }

    /// A child [`Uct::select_remembered`] may remember (see [`Uct::remembers`]), with the
    /// numbers of its score: one with nothing proven and no thread exploring it, visited or
    /// not (plain UCT: visited, or without a node and without knowledge, which scores
    /// `fpu + explore`); `uniform` is the prior of a move without one. With `in_flight`
    /// (scans reused across threads, [`SiblingCache::shared`]) also a child other threads are
    /// exploring, or whose node one is creating, at its score now (virtual losses counted).
    /// `None` for any other child. The same score as [`Uct::select`] gives, bit for bit.
    #[inline]
    fn rememberable(
        &self,
        tree: &Tree,
        codes: EdgeCodes,
        uniform: f32,
        blend: f32,
        in_flight: bool,
    ) -> Option<Scored> {
        let (stats, minimax) = match codes.child {
            Child::Absent => (UNVISITED, codes.value),
            Child::Node(child) => {
                let child = tree.node(child);
                let stats = child.stats();
                if (stats.in_flight > 0 && !in_flight) || child.bounds_code() != 0 {
                    return None;
                }
                (stats, child.minimax_code())
            }
            Child::Creating if in_flight => (IN_FLIGHT, codes.value),
            Child::Creating => return None,
        };
        let n = self.effective_visits(&stats);
        match self.selection {
            Selection::Uct if n > 0 => Some(plain(&stats, n)),
            Selection::Uct => (codes.prior == 0 && minimax == 0).then(|| Scored {
                q: Bounds::UNKNOWN.clamp(self.fpu),
                weight: 1.0,
                denom: 1.0,
            }),
            Selection::Puct => Some(puct(
                Bounds::UNKNOWN.clamp(self.q_of(&stats, n, minimax, codes.value, blend)),
                codes.prior,
                uniform,
                n,
            )),
        }
    }

    /// [`Uct::select`] for a node this thread passes often (`parent_index` is `parent`'s
    /// index), remembering the children's scores in `cache` between passes: the same pick bit
    /// for bit, without reading every child again when only the last one descended into can
    /// have changed (see the `sibling_cache` module). Any other case ([`Uct::remembers`] false,
    /// a child proven or being explored) is a plain [`Uct::select`]. With a cache that reuses
    /// scans across threads ([`SiblingCache::shared`]) the pick is a full scan's as of the last
    /// rescan, with this thread's own descents since, and children other threads are exploring
    /// are remembered too.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn select_remembered(
        &self,
        tree: &Tree,
        parent_index: u32,
        parent: &Node,
        first: u32,
        count: u32,
        floor: Option<u8>,
        cache: &mut SiblingCache,
    ) -> Pick {
        if !self.remembers(floor) {
            return self.select(tree, parent, first, count, floor);
        }
        let stats = parent.stats();
        let blend = self.blend_of(parent);
        let Some(offset) =
            self.remembered_offset(tree, parent_index, stats, (first, count), blend, cache)
        else {
            return self.select(tree, parent, first, count, floor);
        };
        let edge = first + offset as u32;
        if !cache.reuses_shared_scans() {
            let pick = Pick { edge, busy: false };
            // The crate's own tests check every remembered pick against a full scan, wherever
            // no other thread passed or entered the parent while both were made (else the two
            // may differ legitimately).
            #[cfg(test)]
            {
                let full = self.select(tree, parent, first, count, floor);
                if stats.in_flight == 1 && parent.stats() == stats {
                    assert_eq!(pick, full, "node {parent_index}, counters {stats:?}");
                }
            }
            return pick;
        }
        // A scan reused across threads may pick a child proven since (by another thread):
        // scanned again in full then, which weighs the proof. Otherwise its node, which the
        // descent loads next anyway, says whether a thread is exploring it.
        let read = ChildRead::read(tree, tree.edge(edge).read_codes());
        if read.bounds_code != 0 {
            cache.forget(parent_index);
            return self.select(tree, parent, first, count, floor);
        }
        Pick {
            edge,
            busy: read.stats.in_flight > 0,
        }
    }

    /// The offset of the child to descend to, from the scores remembered in `cache` where they
    /// are still true (`stats`: the parent's counters now), else by a scan that is remembered;
    /// `None` where some child cannot be remembered (the caller then makes a full
    /// [`Uct::select`]).
    fn remembered_offset(
        &self,
        tree: &Tree,
        parent_index: u32,
        stats: Stats,
        (first, count): (u32, u32),
        blend: f32,
        cache: &mut SiblingCache,
    ) -> Option<usize> {
        let explore = self.explore(&stats);
        let uniform = 1.0 / count as f32;
        let block = tree.edge_block(first, count);
        let codes = |offset: usize| match block {
            Some(edges) => edges[offset].read_codes(),
            None => tree.edge(first + offset as u32).read_codes(),
        };
        let in_flight = cache.reuses_shared_scans();
        let (best, scanned) =
            if let Some(remembered) = cache.recall(parent_index, &stats, count as usize) {
                // The child descended into last time has a node now, so it is read as visited.
                let Some(scored) =
                    self.rememberable(tree, codes(remembered.stale), uniform, blend, in_flight)
                else {
                    cache.forget(parent_index);
                    return None;
                };
                remembered.children.set(remembered.stale, scored);
                (remembered.children.best(explore), false)
            } else if stats.in_flight != 1 && !in_flight {
                // Another thread is inside too: a scan made now would not be remembered
                // (`SiblingCache::picked`), and with children in flight it would stop half way
                // and be made again in full by the caller. Just the full scan, then.
                return None;
            } else {
                // Plain UCT's weights are all 1: not kept.
                let weighted = self.selection != Selection::Uct;
                let children = cache.begin(parent_index, count as usize, weighted);
                for offset in 0..count as usize {
                    // Proven (or, under plain UCT, with knowledge; or, unless scans are reused
                    // across threads, being explored): not remembered.
                    children.set(
                        offset,
                        self.rememberable(tree, codes(offset), uniform, blend, in_flight)?,
                    );
                }
                (children.best(explore), true)
            };
        cache.picked(parent_index, &stats, best, scanned);
        Some(best)
    }

    /// The edge of `parent` (edges `first..first + count`, `count > 0`) to descend along.
    /// `floor` is the parent's pessimistic solver bound for the player to move there, in half
    /// points, or `None` at the root.
    ///
    /// Score: UCT `Q + c * sqrt(ln N / n)` (plus `prior_weight * P / (n + 1)` when priors weigh
    /// in), or PUCT `Q + c * P * sqrt(N) / (1 + n)`, where `n` counts virtual losses as visits
    /// worth 0 (so `Q` drops for children other threads are exploring). `Q` is the mean result,
    /// blended with the child's implicit minimax value (`(1 - w) * mean + w * minimax`) when
    /// `minimax_weight` is set; an unvisited child starts from its static value if the game
    /// gave one, else from `fpu` (and UCT counts it as one visit). `Q` is clamped into the
    /// child's solver bounds.
    ///
    /// Solver: a child proven won for the mover is taken at once (the parent is then proven too;
    /// descending there lets this iteration propagate that). Proven-lost children are skipped,
    /// and below the root so are children that cannot score more than the parent already has
    /// guaranteed (`opt <= floor`): exploring them cannot change the parent's value. At the root
    /// those stay selectable because visits decide the move to play. A proven draw scores
    /// exactly 0.5 without an exploration bonus (its value is certain). If every child is
    /// skipped, the one with the best guaranteed score is returned: the iteration stops on it and
    /// the solver then proves the parent. Ties go to the lower index, which keeps
    /// single-threaded searches deterministic.
    ///
    /// Cost: one atomic load per edge, and for visited children the node's counters (with
    /// knowledge, loaded for all children before any is scored, so that the scattered loads
    /// overlap); the square root and logarithm are taken once per call, and only UCT takes a
    /// square root per child. Children with nothing proven (nearly all) skip the solver's
    /// checks. Priors and static values stay encoded unless the formula uses them (decoding one
    /// is a conversion and a multiplication), and of the unvisited children without knowledge,
    /// which all score the same, only the first is scored. Under plain UCT the scan stops at
    /// the first child that reaches the highest score possible ([`Uct::ceiling`]).
    pub(crate) fn select(
        &self,
        tree: &Tree,
        parent: &Node,
        first: u32,
        count: u32,
        floor: Option<u8>,
    ) -> Pick {
        let explore = self.explore(&parent.stats());
        let plain_uct = self.is_plain(floor);
        let mut scan = Scan {
            uct: self,
            explore,
            ceiling: self.ceiling(explore, plain_uct),
            uniform: 1.0 / count as f32,
            blend: self.blend_of(parent),
            floor,
            plain_uct,
            unknown_selectable: unknown_selectable(floor),
            best: None,
            best_score: f32::NEG_INFINITY,
            fallback: first,
            fallback_pess: 0,
            plain_unvisited_seen: false,
        };
        match tree.edge_block(first, count) {
            // The edges as one slice (one chunk lookup, not one per edge).
            Some(edges) => {
                if !scan.plain_uct {
                    // The children's nodes lie scattered in the arena, and scoring with
                    // knowledge takes long enough per child that loads made child by child
                    // mostly wait one after the other: they are issued first, back to back
                    // (measured: the node loads had been about half of a default-engine
                    // search's selection time; plain UCT, with less work per child and its
                    // remembered scans, gains nothing from it).
                    tree.warm_children(edges);
                }
                for (offset, edge) in edges.iter().enumerate() {
                    let read = ChildRead::read(tree, edge.read_codes());
                    if let Some(win) = scan.consider(first + offset as u32, read) {
                        return win;
                    }
                    if scan.saturated() {
                        break;
                    }
                }
            }
            None => {
                for index in first..first + count {
                    let read = ChildRead::read(tree, tree.edge(index).read_codes());
                    if let Some(win) = scan.consider(index, read) {
                        return win;
                    }
                    if scan.saturated() {
                        break;
                    }
                }
            }
        }
        match scan.best {
            Some((edge, busy)) => Pick { edge, busy },
            None => Pick {
                edge: scan.fallback,
                busy: false,
            },
        }
    }

    /// The selection score of a child not proven exact (`explore` and `uniform` as in
    /// [`Uct::select`]): its counters, its minimax or static value code, its prior code and its
    /// solver bounds, which clamp `Q`.
    #[inline]
    fn score(
        &self,
        read: &ChildRead,
        bounds: Bounds,
        explore: f32,
        uniform: f32,
        blend: f32,
    ) -> f32 {
        let (stats, prior) = (&read.stats, read.prior);
        let n = self.effective_visits(stats);
        let q = bounds.clamp(self.q_of(stats, n, read.minimax, read.edge_value, blend));
        match self.selection {
            Selection::Uct => {
                let bias = if self.prior_weight > 0.0 {
                    self.prior_weight * prior_of(prior) / (n as f32 + 1.0)
                } else {
                    0.0
                };
                q + explore / (n.max(1) as f32).sqrt() + bias
            }
            Selection::Puct => puct(q, prior, uniform, n).score(explore),
        }
    }

    /// A child's `Q` before the solver's clamp, over `n` effective visits: the mean result,
    /// blended with the minimax value (`minimax`, a code) when that weighs in; unvisited, the
    /// static value (also `minimax`: the edge's) or else `fpu`. Priors and minimax values are
    /// decoded only where the formula uses them. A visited child's `Q` is then blended with
    /// the edge's static value (`edge_value`, a code) by `blend` ([`Uct::blend_of`]).
    #[inline]
    fn q_of(&self, stats: &Stats, n: u64, minimax: u16, edge_value: u16, blend: f32) -> f32 {
        if n == 0 {
            value_of(minimax).unwrap_or(self.fpu)
        } else {
            let mean = stats.mean_over(n);
            let q = match value_of(minimax).filter(|_| self.minimax_weight > 0.0) {
                Some(m) => (1.0 - self.minimax_weight) * mean + self.minimax_weight * m,
                None => mean,
            };
            if blend > 0.0 {
                if let Some(v) = value_of(edge_value) {
                    return (1.0 - blend) * q + blend * v;
                }
            }
            q
        }
    }
}

/// `sqrt(ln n)`, UCT's exploration factor, kept out of line: inlined, the compiler computes the
/// logarithm before it knows the formula (the intrinsic may be executed speculatively), so every
/// PUCT selection paid a `logf` call it never used: 3.3-3.8% of the default engine's `perf`
/// samples in a middle-game position, 1.3% of its instructions.
#[inline(never)]
fn sqrt_ln(n: f32) -> f32 {
    n.ln().sqrt()
}

/// Whether a child with nothing proven is selectable under a parent whose pessimistic bound for
/// the mover is `floor` (`None`: the root): it is unless the parent is already guaranteed a win.
#[inline]
fn unknown_selectable(floor: Option<u8>) -> bool {
    floor.is_none_or(|floor| Bounds::UNKNOWN.opt() > floor)
}

/// The numbers of a PUCT score `Q + explore * P / (1 + n)`: `q` is `Q` (clamped), `prior` the
/// prior's code (0: none, so `uniform`), `n` the effective visits.
#[inline]
fn puct(q: f32, prior: u16, uniform: f32, n: u64) -> Scored {
    Scored {
        q,
        weight: if prior > 0 { prior_of(prior) } else { uniform },
        denom: n as f32 + 1.0,
    }
}

/// The counters of a child without a node.
const UNVISITED: Stats = Stats {
    visits: 0,
    in_flight: 0,
    value_sum: 0,
};

/// The counters of a child whose node another thread is creating.
const IN_FLIGHT: Stats = Stats {
    visits: 0,
    in_flight: 1,
    value_sum: 0,
};

/// What selection reads of one child, prior and value still encoded (most children's scores
/// need only one of them decoded, or none).
#[derive(Clone, Copy, Debug)]
struct ChildRead {
    /// What the edge leads to.
    child: Child,
    stats: Stats,
    /// The node's solver bounds, encoded (0: nothing known; always 0 without a node).
    bounds_code: u32,
    /// The node's minimax value, or the edge's static value without a node ([`value_of`]).
    minimax: u16,
    /// The prior ([`prior_of`]; 0: none).
    prior: u16,
    /// The edge's static value ([`value_of`]; 0: none), whatever the child.
    edge_value: u16,
}

impl ChildRead {
    #[inline]
    fn read(tree: &Tree, edge: EdgeCodes) -> Self {
        let (stats, bounds_code, minimax) = match edge.child {
            Child::Node(node) => {
                let child = tree.node(node);
                (child.stats(), child.bounds_code(), child.minimax_code())
            }
            // Another thread is about to arrive there: count it in flight.
            Child::Creating => (IN_FLIGHT, 0, edge.value),
            Child::Absent => (UNVISITED, 0, edge.value),
        };
        ChildRead {
            child: edge.child,
            stats,
            bounds_code,
            minimax,
            prior: edge.prior,
            edge_value: edge.value,
        }
    }
}

/// One [`Uct::select`] under way: its constants and the best child so far.
struct Scan<'a> {
    uct: &'a Uct,
    explore: f32,
    /// No child after one scoring this can be picked ([`Uct::ceiling`]).
    ceiling: f32,
    uniform: f32,
    /// The weight of the edges' static values in visited children's `Q` ([`Uct::blend_of`]).
    blend: f32,
    floor: Option<u8>,
    /// Plain UCT (no prior, no minimax value) where a child with nothing proven is never
    /// skipped: visited children take the short way.
    plain_uct: bool,
    /// [`unknown_selectable`] here: such children, nearly all of them, then skip the solver's
    /// checks.
    unknown_selectable: bool,
    /// The best edge so far and whether a thread is exploring it.
    best: Option<(u32, bool)>,
    best_score: f32,
    /// The edge with the best guaranteed score, for when every child is skipped.
    fallback: u32,
    fallback_pess: u8,
    /// Whether an unvisited child without knowledge (no static value, no prior) was met: they
    /// all score the same and ties go to the lower index, so only the first counts.
    plain_unvisited_seen: bool,
}

impl Scan<'_> {
    /// Whether the best child so far scores the ceiling: no later child can be picked.
    #[inline(always)]
    fn saturated(&self) -> bool {
        self.best_score >= self.ceiling
    }

    /// Scores the child along edge `index`; `Some` if it is proven won for the mover, which
    /// ends the scan.
    // Always inlined: called from two loops, and as a call it kept the scan's state in memory.
    #[inline(always)]
    fn consider(&mut self, index: u32, read: ChildRead) -> Option<Pick> {
        let uct = self.uct;
        if read.bounds_code == 0 {
            if self.plain_uct {
                // The common case under plain UCT, scored as below with less to compute: a
                // visited child with nothing proven.
                let n = uct.effective_visits(&read.stats);
                if n > 0 && matches!(read.child, Child::Node(_)) {
                    let score = plain(&read.stats, n).score(self.explore);
                    self.offer(index, score, read.stats.in_flight > 0);
                    return None;
                }
            } else if self.unknown_selectable {
                // The common case with knowledge: nothing proven, so the solver's checks below
                // all pass; the same score.
                let score = uct.score(
                    &read,
                    Bounds::UNKNOWN,
                    self.explore,
                    self.uniform,
                    self.blend,
                );
                self.offer(index, score, read.stats.in_flight > 0);
                return None;
            }
        }
        let stats = read.stats;
        let bounds = Bounds::decode(read.bounds_code);
        if stats.visits == 0
            && stats.in_flight == 0
            && read.minimax == 0
            && read.prior == 0
            && bounds == Bounds::UNKNOWN
        {
            // Unvisited, nothing known: every such child scores the same.
            if self.plain_unvisited_seen {
                return None;
            }
            self.plain_unvisited_seen = true;
        }
        if bounds.is_win() {
            return Some(Pick {
                edge: index,
                busy: stats.in_flight > 0,
            });
        }
        if bounds.pess() > self.fallback_pess {
            self.fallback = index;
            self.fallback_pess = bounds.pess();
        }
        if bounds.is_loss() || self.floor.is_some_and(|floor| bounds.opt() <= floor) {
            return None;
        }
        let score = if bounds.is_exact() {
            0.5
        } else {
            uct.score(&read, bounds, self.explore, self.uniform, self.blend)
        };
        self.offer(index, score, stats.in_flight > 0);
        None
    }

    /// Keeps the child along edge `index` if it scores best so far (the first of equals).
    #[inline(always)]
    fn offer(&mut self, index: u32, score: f32, busy: bool) {
        if score > self.best_score {
            self.best_score = score;
            self.best = Some((index, busy));
        }
    }
}

/// The numbers of the plain-UCT score `mean + explore / sqrt(n)` of a visited child with
/// nothing proven (`n > 0` effective visits).
#[inline]
fn plain(stats: &Stats, n: u64) -> Scored {
    Scored {
        q: Bounds::UNKNOWN.clamp(stats.mean_over(n)),
        weight: 1.0,
        denom: (n as f32).sqrt(),
    }
}

/// The edge [`Uct::select`] chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pick {
    /// Its index.
    pub(crate) edge: u32,
    /// Whether another thread was exploring that child (a virtual-loss collision).
    pub(crate) busy: bool,
}

/// What the best-move order looks at for one child.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChildView {
    /// Completed visits.
    pub(crate) visits: u64,
    /// Mean value for the mover clamped into the solver bounds (0.5, clamped, without visits).
    pub(crate) value: f32,
    /// Solver bounds for the mover.
    pub(crate) bounds: Bounds,
}

impl ChildView {
    /// The view of the child along edge `edge` (no visits and nothing known without a node).
    pub(crate) fn read(tree: &Tree, edge: u32) -> Self {
        match tree.edge(edge).child() {
            Some(index) => {
                let node = tree.node(index);
                let stats = node.stats();
                let bounds = node.bounds();
                ChildView {
                    visits: stats.visits,
                    value: bounds.clamp(stats.mean().unwrap_or(0.5)),
                    bounds,
                }
            }
            None => ChildView {
                visits: 0,
                value: 0.5,
                bounds: Bounds::UNKNOWN,
            },
        }
    }

    /// The exact result for the mover, if proven.
    pub(crate) fn proven(&self) -> Option<Proven> {
        self.bounds.proven()
    }

    /// 0 = proven win, 1 = ordinary, 2 = dominated, 3 = proven loss. Dominated: no better than
    /// what a sibling guarantees (`floor`, in half points): either it looks worse (its value is
    /// below the floor), or it cannot do better (optimistic bound at the floor) without being
    /// guaranteed as much (pessimistic bound below it).
    fn class(&self, floor: u8) -> u8 {
        let b = self.bounds;
        if b.is_win() {
            0
        } else if b.is_loss() {
            3
        } else if self.value < f32::from(floor) / 2.0 || (b.opt() <= floor && b.pess() < floor) {
            2
        } else {
            1
        }
    }
}

/// The highest pessimistic bound among sibling children: what the player to move is guaranteed.
pub(crate) fn floor_of(children: &[ChildView]) -> u8 {
    children.iter().map(|c| c.bounds.pess()).max().unwrap_or(0)
}

/// Best-first order of sibling children, `floor` being [`floor_of`] the siblings: proven wins
/// first (shortest first), then the others by visits (then value), except that children no
/// better than what a sibling guarantees come after all the others (a proven draw beats a move
/// that looks worse than a draw or is only known to be at most a draw, however many visits the
/// search sent there), and proven losses last (longest resistance first). Equal children compare equal; callers keep the lower
/// index first (stable sort / strict comparison).
pub(crate) fn best_first(a: &ChildView, b: &ChildView, floor: u8) -> Ordering {
    let (class_a, class_b) = (a.class(floor), b.class(floor));
    class_a.cmp(&class_b).then_with(|| match class_a {
        0 => a
            .bounds
            .plies()
            .cmp(&b.bounds.plies())
            .then_with(|| b.visits.cmp(&a.visits)),
        3 => b
            .bounds
            .plies()
            .cmp(&a.bounds.plies())
            .then_with(|| b.visits.cmp(&a.visits)),
        _ => b
            .visits
            .cmp(&a.visits)
            .then_with(|| b.value.total_cmp(&a.value)),
    })
}

/// Views of the children along edges `first..first + count`.
pub(crate) fn child_views(tree: &Tree, first: u32, count: u32) -> Vec<ChildView> {
    (first..first + count)
        .map(|edge| ChildView::read(tree, edge))
        .collect()
}

/// Index of the edge to the best child of a node with edges `first..first + count`
/// (`count > 0`).
pub(crate) fn best_child(tree: &Tree, first: u32, count: u32) -> u32 {
    let views = child_views(tree, first, count);
    let floor = floor_of(&views);
    let mut best = 0;
    for (i, view) in views.iter().enumerate().skip(1) {
        if best_first(view, &views[best], floor) == Ordering::Less {
            best = i;
        }
    }
    first + best as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::to_fixed;
    use crate::tree::{ROOT, TreeLimits};

    fn view(visits: u64, value: f32, proof: Option<Proven>) -> ChildView {
        ChildView {
            visits,
            value,
            bounds: proof.map_or(Bounds::UNKNOWN, Bounds::from_proven),
        }
    }

    fn sorted(mut views: Vec<ChildView>) -> Vec<(u64, Option<Proven>)> {
        let floor = floor_of(&views);
        views.sort_by(|a, b| best_first(a, b, floor));
        views.iter().map(|c| (c.visits, c.proven())).collect()
    }

    #[test]
    fn exploration_grows_with_the_parents_visits_only_when_asked() {
        let stats = |visits| Stats {
            visits,
            in_flight: 0,
            value_sum: 0,
        };
        let params = SearchParams {
            selection: Selection::Puct,
            exploration: 2.0,
            ..SearchParams::default()
        };
        let constant = Uct::new(&params);
        assert!((constant.explore(&stats(10_000)) - 200.0).abs() < 1e-3);
        let growing = Uct::new(&SearchParams {
            exploration_growth: 0.5,
            exploration_base: 10_000,
            ..params
        });
        // N = base: c * (1 + 0.5 * ln 2); far below it, hardly any growth.
        let expected = 2.0 * (1.0 + 0.5 * 2f32.ln()) * 100.0;
        assert!((growing.explore(&stats(10_000)) - expected).abs() < 1e-2);
        let small = growing.explore(&stats(16)) / constant.explore(&stats(16));
        assert!((1.0..1.001).contains(&small), "{small}");
        assert!(growing.explore(&stats(1_000_000)) > 2.0 * constant.explore(&stats(1_000_000)));
    }

    #[test]
    fn order_prefers_short_wins_and_avoids_losses() {
        let summary = sorted(vec![
            view(100, 0.4, None),
            view(5, 0.0, Some(Proven::Loss { plies: 3 })),
            view(2, 1.0, Some(Proven::Win { plies: 5 })),
            view(1, 1.0, Some(Proven::Win { plies: 3 })),
            view(50, 0.5, Some(Proven::Draw)),
            view(9, 0.0, Some(Proven::Loss { plies: 7 })),
            view(100, 0.6, None),
        ]);
        assert_eq!(
            summary,
            [
                (1, Some(Proven::Win { plies: 3 })),
                (2, Some(Proven::Win { plies: 5 })),
                (100, None),
                (100, None),
                (50, Some(Proven::Draw)),
                (9, Some(Proven::Loss { plies: 7 })),
                (5, Some(Proven::Loss { plies: 3 })),
            ]
        );
    }

    #[test]
    fn a_proven_draw_beats_a_worse_looking_move() {
        // Without a guaranteed sibling, visits decide; with a proven draw, a move looking worse
        // than a draw goes after it whatever its visits.
        let summary = sorted(vec![
            view(500, 0.3, None),
            view(80, 0.5, Some(Proven::Draw)),
        ]);
        assert_eq!(summary, [(80, Some(Proven::Draw)), (500, None)]);
        let summary = sorted(vec![
            view(500, 0.6, None),
            view(80, 0.5, Some(Proven::Draw)),
        ]);
        assert_eq!(summary, [(500, None), (80, Some(Proven::Draw))]);
        let summary = sorted(vec![view(80, 0.2, None), view(500, 0.3, None)]);
        assert_eq!(summary, [(500, None), (80, None)]);
        // "At most a draw" does not beat a proven draw either.
        let at_most_draw = ChildView {
            visits: 900,
            value: 0.5,
            bounds: Bounds::between(0, 1),
        };
        let summary = sorted(vec![at_most_draw, view(80, 0.5, Some(Proven::Draw))]);
        assert_eq!(summary, [(80, Some(Proven::Draw)), (900, None)]);
    }

    /// A tree for a root and a few children.
    fn small_tree() -> Tree {
        Tree::new(TreeLimits {
            max_nodes: 10,
            max_bytes: 1 << 20,
        })
    }

    /// The node of the root's child along `edge`, created on first use.
    fn node_of(tree: &Tree, edge: u32) -> u32 {
        tree.child_of(edge, |_| {}, &mut 0).unwrap_or_default()
    }

    /// `times` completed visits of the root and its child along `edge`, each worth `value`.
    fn visit(tree: &Tree, edge: u32, value: f32, times: u32) {
        let child = node_of(tree, edge);
        for _ in 0..times {
            tree.root().arrive();
            tree.root().leave(to_fixed(value));
            tree.node(child).arrive();
            tree.node(child).leave(to_fixed(value));
        }
    }

    #[test]
    fn selection_tries_unvisited_then_skips_losses() {
        let tree = small_tree();
        let first = tree.reserve_edges(3).unwrap_or_default();
        tree.root().publish_expanded(first, 3);
        let uct = Uct::new(&SearchParams::default());
        let select = |floor| uct.select(&tree, tree.root(), first, 3, floor).edge;
        let prove = |edge: u32, p| {
            tree.node(node_of(&tree, edge))
                .merge_bounds(Bounds::from_proven(p))
        };
        tree.root().arrive();
        tree.root().leave(0);
        assert_eq!(select(None), first);
        visit(&tree, first, 0.0, 1);
        assert_eq!(select(None), first + 1);
        visit(&tree, first + 1, 1.0, 1);
        prove(first + 2, Proven::Loss { plies: 0 });
        for _ in 0..20 {
            let pick = select(None);
            assert_ne!(pick, first + 2);
            visit(&tree, pick, 0.5, 1);
        }
        // A proven draw is skipped below the root once the parent is guaranteed a draw, but
        // not at the root.
        prove(first + 1, Proven::Draw);
        assert_eq!(select(Some(1)), first);
        for _ in 0..50 {
            visit(&tree, first, 0.0, 1);
        }
        assert_eq!(select(None), first + 1);
        // Everything skipped: the best guaranteed child is returned.
        prove(first, Proven::Loss { plies: 0 });
        assert_eq!(select(Some(1)), first + 1);
    }

    #[test]
    fn refined_values_weigh_in_visited_childrens_q_once_the_parent_is_refined() {
        let tree = small_tree();
        let first = tree.reserve_edges(2).unwrap_or_default();
        // The first move looks better in its subtree (0.7 against 0.5), but the deeper
        // search of a refinement values it at 0.2 against 0.6.
        tree.edge(first).init(Some(0.5), Some(0.2));
        tree.edge(first + 1).init(Some(0.5), Some(0.6));
        tree.root().publish_expanded(first, 2);
        for (edge, mean) in [(first, 0.7), (first + 1, 0.5)] {
            visit(&tree, edge, mean, 10);
        }
        let params = |weight| SearchParams {
            selection: Selection::Puct,
            exploration: 0.1,
            refined_value_weight: weight,
            ..SearchParams::default()
        };
        let picks = |uct: &Uct| {
            let mut cache = SiblingCache::new(0);
            tree.root().arrive();
            let remembered =
                uct.select_remembered(&tree, ROOT, tree.root(), first, 2, None, &mut cache);
            tree.root().leave(to_fixed(0.5));
            (
                uct.select(&tree, tree.root(), first, 2, None).edge,
                remembered.edge,
            )
        };
        let (plain, blended) = (Uct::new(&params(0.0)), Uct::new(&params(0.5)));
        assert_eq!(picks(&plain), (first, first));
        // Not refined yet: the edges' values are the expansion's, already in the subtrees.
        assert_eq!(picks(&blended), (first, first));
        assert!(tree.root().claim_refinement(1));
        assert_eq!(picks(&plain), (first, first));
        // 0.5 * 0.7 + 0.5 * 0.2 = 0.45 against 0.5 * 0.5 + 0.5 * 0.6 = 0.55.
        assert_eq!(picks(&blended), (first + 1, first + 1));
    }

    /// The early stop at the ceiling (`Uct::ceiling`) picks what scoring every child picks
    /// (a remembered scan scores them all): a child at the ceiling ends the scan (first of
    /// equals), an unvisited child ends it only where it reaches the ceiling (fpu 1), and a
    /// better child after an unvisited one is still found where it does not (fpu 0.5).
    #[test]
    fn scans_stop_at_the_ceiling_only_where_nothing_after_can_win() {
        // Each child: `Some((visits, value of each))`, or `None` for unvisited.
        let pick = |children: &[Option<(u32, f32)>], fpu: f32| {
            let tree = small_tree();
            let count = children.len() as u32;
            let first = tree.reserve_edges(count).unwrap_or_default();
            tree.root().publish_expanded(first, count);
            for (edge, child) in (first..).zip(children) {
                if let Some((visits, value)) = *child {
                    visit(&tree, edge, value, visits);
                }
            }
            let uct = Uct::new(&SearchParams {
                first_play_urgency: fpu,
                ..SearchParams::default()
            });
            let mut cache = SiblingCache::new(0);
            tree.root().arrive();
            let remembered =
                uct.select_remembered(&tree, ROOT, tree.root(), first, count, None, &mut cache);
            tree.root().leave(to_fixed(0.5));
            let full = uct.select(&tree, tree.root(), first, count, None).edge;
            assert_eq!(full, remembered.edge, "{children:?} fpu {fpu}");
            full - first
        };
        // Child 1 (one win: 1 + explore) is the first at the ceiling.
        let at_ceiling = [Some((2, 1.0)), Some((1, 1.0)), None, Some((1, 1.0))];
        assert_eq!(pick(&at_ceiling, 1.0), 1);
        assert_eq!(pick(&at_ceiling, 0.5), 1);
        // With fpu 1 the unvisited child reaches the ceiling first; with 0.5, child 2 beats it.
        let after_unvisited = [Some((3, 0.2)), None, Some((1, 1.0))];
        assert_eq!(pick(&after_unvisited, 1.0), 1);
        assert_eq!(pick(&after_unvisited, 0.5), 2);
        let unvisited_first = [None, None, Some((2, 0.9))];
        assert_eq!(pick(&unvisited_first, 1.0), 0);
    }

    /// Scans reused across threads (`SiblingCache::shared`): other threads' visits to a child
    /// this thread did not descend into are not seen until the parent has gained `rescan`
    /// visits; then the picks are a full scan's again. A reused pick says whether a thread is
    /// exploring the child, and one proven since is not taken.
    #[test]
    fn shared_scans_lag_other_threads_until_the_rescan() {
        let tree = small_tree();
        let first = tree.reserve_edges(3).unwrap_or_default();
        tree.root().publish_expanded(first, 3);
        // Means 0.6, 0.5, 0.5: with little exploration the first child is best.
        visit(&tree, first, 0.6, 10);
        visit(&tree, first + 1, 0.5, 10);
        visit(&tree, first + 2, 0.5, 10);
        let uct = Uct::new(&SearchParams {
            exploration: 0.1,
            ..SearchParams::default()
        });
        let mut cache = SiblingCache::shared(0, 64, 0);
        let pass = |cache: &mut SiblingCache| {
            tree.root().arrive();
            let remembered = uct.select_remembered(&tree, ROOT, tree.root(), first, 3, None, cache);
            let full = uct.select(&tree, tree.root(), first, 3, None);
            tree.root().leave(to_fixed(0.5));
            (remembered, full.edge)
        };
        assert_eq!(pass(&mut cache).0.edge, first);
        // This thread's descent into the first child, then another thread's 20 wins in the
        // second: a full scan now picks the second; the remembered scan has not seen them.
        visit(&tree, first, 0.6, 1);
        visit(&tree, first + 1, 1.0, 20);
        let (remembered, full) = pass(&mut cache);
        assert_eq!((remembered.edge, full), (first, first + 1));
        // 64 visits after the scan (30 then; losses in the third child): scanned again.
        visit(&tree, first + 2, 0.0, 40);
        assert_eq!(pass(&mut cache).0.edge, first);
        visit(&tree, first + 2, 0.0, 1);
        let (remembered, full) = pass(&mut cache);
        assert_eq!((remembered.edge, full), (first + 1, first + 1));
        assert!(!remembered.busy);
        // Another thread inside the child picked: a collision, reported from memory too.
        tree.node(node_of(&tree, first + 1)).arrive();
        let (remembered, _) = pass(&mut cache);
        assert_eq!(remembered.edge, first + 1);
        assert!(remembered.busy);
        // Proven lost for the mover meanwhile: not taken from memory.
        tree.node(node_of(&tree, first + 1))
            .merge_bounds(Bounds::from_proven(Proven::Loss { plies: 0 }));
        let (remembered, full) = pass(&mut cache);
        assert_eq!((remembered.edge, full), (first, first));
    }

    #[test]
    fn a_child_being_explored_counts_as_a_collision() {
        let tree = small_tree();
        let first = tree.reserve_edges(1).unwrap_or_default();
        tree.root().publish_expanded(first, 1);
        let uct = Uct::new(&SearchParams::default());
        assert!(!uct.select(&tree, tree.root(), first, 1, None).busy);
        let child = tree.child_of(first, |_| {}, &mut 0).unwrap_or_default();
        tree.node(child).arrive();
        assert!(uct.select(&tree, tree.root(), first, 1, None).busy);
    }
}
