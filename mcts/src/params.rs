//! Search parameters.

use std::time::Duration;

/// Everything that tunes or limits a search. All limits combine: the search stops at the first
/// one reached (see [`StopReason`](crate::StopReason)). With no time limit, no playout limit and
/// no stop flag raised, a search only ends when the root is solved, the root has a single legal
/// move, or (with [`stop_at_node_cap`](SearchParams::stop_at_node_cap)) the tree is full.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchParams {
    /// UCT exploration constant `c` in `Q + c * sqrt(ln N / n)`, with values in `[0, 1]`.
    /// Default 1.0.
    pub exploration: f32,
    /// Exploration that grows with a node's visits (AlphaZero's `c(N)`): selection at a node
    /// visited `N` times uses `exploration * (1 + g * ln(1 + N / exploration_base))`, `g` this
    /// value. A long search's heavily visited nodes then keep trying the moves their priors
    /// rate low, where a constant `c` gives such a move visits that grow only as `sqrt(N)`: a
    /// refutation that starts with an unlikely-looking move (a sacrifice) is read to its end in
    /// a long search, and a short one (small `N`) is left as it was. 0 (default): constant.
    pub exploration_growth: f32,
    /// Visits at which [`exploration_growth`](SearchParams::exploration_growth) has added
    /// `g * ln 2` to the exploration factor. Default 20,000.
    pub exploration_base: u64,
    /// First-play urgency: an unvisited child is scored as if it had one visit with this mean
    /// value, i.e. `fpu + c * sqrt(ln N)`. The default 1.0 (the best possible value) means every
    /// child is tried once before any is tried twice, as in classic UCT; lower values (e.g. 0.5)
    /// let a strong first child be deepened before its siblings are all tried, which saves
    /// playouts and nodes in wide games.
    pub first_play_urgency: f32,
    /// Virtual loss: each thread currently descending through a node counts as this many extra
    /// lost visits for it during selection, so concurrent threads spread over different lines.
    /// 0 disables it. Default 1. Irrelevant with one thread.
    pub virtual_loss: u32,
    /// A leaf gets this many playouts of its own before it is expanded (its children
    /// allocated); clamped to at least 1. Higher values save memory in wide games at the cost of
    /// slower tree growth. Default 1.
    pub expand_threshold: u32,
    /// Number of search threads (0 counts as 1). Default 1.
    pub threads: usize,
    /// Seed of the per-thread random number generators. Default 0.
    pub seed: u64,
    /// Wall-clock limit. Default none.
    pub max_time: Option<Duration>,
    /// Limit on the number of playouts of this search (reused visits do not count). Exact, also
    /// with several threads. Default none.
    pub max_playouts: Option<u64>,
    /// Maximum number of tree nodes, root included; clamped to `1..=u32::MAX`. The tree never
    /// holds more (a full tree is reclaimed like one that reached
    /// [`max_tree_bytes`](SearchParams::max_tree_bytes)). A cap kept for compatibility: memory
    /// is the better limit, since a node costs 32 bytes plus 8 per legal move once expanded.
    /// Default 2,000,000.
    pub max_nodes: usize,
    /// Memory the tree may hold, in bytes (nodes and edges, allocated in chunks), at all times,
    /// also while it is being reclaimed: the tree grows to 3/4 of it, and reclaiming copies what
    /// it keeps (at most a third of the tree) into the last quarter before the old tree is
    /// freed. Default 256 MiB.
    pub max_tree_bytes: usize,
    /// What happens when the tree is full (node cap or memory): with `reclaim` on (default)
    /// the search pauses its threads, drops the least-visited subtrees (keeping at most a third
    /// of the tree: the best lines, the solver's proofs) and goes on growing; see
    /// [`Snapshot::reclaims`](crate::Snapshot::reclaims).
    pub reclaim: bool,
    /// What happens when the tree is full and `reclaim` is off. `false` (default): the search
    /// goes on, running playouts from the leaves it reaches without expanding them, and only
    /// reports [`Snapshot::node_cap_reached`](crate::Snapshot::node_cap_reached). `true`: it
    /// stops with [`StopReason::NodeCap`](crate::StopReason::NodeCap) (also with `reclaim` on).
    pub stop_at_node_cap: bool,
    /// Maximum length of each principal variation (including its first move; at least 1).
    /// Default 16.
    pub pv_len: usize,
    /// How many root moves (best first) get a principal variation longer than the move itself.
    /// Default 1.
    pub multi_pv: usize,
    /// Stop early when no other root move can overtake the best one (in visits) within the
    /// remaining playout budget, or within the playouts the remaining time allows at the current
    /// rate. Has no effect without a playout or time limit. Default true.
    pub smart_pruning: bool,
    /// Maximum number of turns of one playout (passed to [`Game::playout`](crate::Game::playout)).
    /// Default 400.
    pub playout_cap: u32,
    /// Evaluation-cut playouts: after this many plies a playout stops and the game's static
    /// evaluation ([`Game::evaluate`](crate::Game::evaluate)) scores it; `Some(0)` replaces the
    /// playout by the evaluation of the leaf. `None` (default): playouts run to the end (or the
    /// cap). A game without an evaluation falls back to its playout's own estimate.
    pub playout_cutoff: Option<u32>,
    /// With the evaluation at the leaf (`playout_cutoff == Some(0)`), a leaf whose edge carries
    /// a static value ([`Game::move_knowledge`](crate::Game::move_knowledge)) takes that value
    /// as its evaluation instead of calling [`Game::evaluate`](crate::Game::evaluate). For a
    /// game whose move values are the evaluation of the position after the move (Emergo's
    /// knowledge: a quiescence search of it), a new leaf's evaluation repeats what its parent's
    /// expansion computed; near the root, where the move values come from deeper searches, the
    /// leaf gets the deeper value. Default false.
    pub leaf_value_from_edge: bool,
    /// Mixed leaf values (AlphaGo's lambda): with the evaluation at the leaf
    /// (`playout_cutoff == Some(0)`), a playout to the end (or the cap) is run from the leaf as
    /// well and its result weighs `playout_mix`, the evaluation `1 - playout_mix`. Random
    /// playouts see what a static evaluation misses on average (positions that tend to go one
    /// way), the evaluation what they miss (tactics); each costs a playout per leaf. 0 (the
    /// default) or a value outside `0..=1`: the evaluation alone; 1: the playout alone.
    pub playout_mix: f32,
    /// How children are chosen during the descent (default [`Selection::Uct`]).
    pub selection: Selection,
    /// Weight of the move priors ([`Game::move_knowledge`](crate::Game::move_knowledge)) in
    /// selection: with [`Selection::Uct`] a progressive-bias term `prior_weight * P / (n + 1)`
    /// (0, the default, ignores priors); with [`Selection::Puct`] it is unused (the prior is
    /// part of the formula).
    pub prior_weight: f32,
    /// Implicit minimax backups (Lanctot, Winands, Pepels & Sturtevant 2014): every node also
    /// keeps the minimax of its descendants' static values
    /// ([`Game::move_knowledge`](crate::Game::move_knowledge)), and selection ranks children
    /// by `(1 - w) * Q + w * minimax`. 0 (default) turns it off; needs a game that gives values.
    pub minimax_weight: f32,
    /// Weight of an edge's static value in the `Q` of a visited child once its parent's
    /// knowledge has been refined ([`refine_visits`](SearchParams::refine_visits)):
    /// `(1 - w) * Q + w * value`. A refined value comes from a deeper search than the one that
    /// valued the child's own subtree when it was expanded, and a child whose subtree missed a
    /// refutation that the deeper search sees keeps its visits otherwise. 0 (default): a
    /// visited child's `Q` is its subtree's alone.
    pub refined_value_weight: f32,
    /// Knowledge refined where the search concentrates: a node that has had this many playouts
    /// (and then `refine_growth` times as many, and so on, `refine_levels` times in all) asks
    /// the game again for its moves' priors and static values
    /// ([`Game::refine_knowledge`](crate::Game::refine_knowledge)), which replace those of its
    /// expansion. 0 (default) turns it off; values at or below
    /// [`expand_threshold`](SearchParams::expand_threshold) count as one more than it.
    pub refine_visits: u64,
    /// Factor between two refinements of a node (at least 2). Default 4.
    pub refine_growth: u64,
    /// How many times a node is refined at most (level 1 up to this). Default 1.
    pub refine_levels: u32,
    /// Under a time limit, the share of the whole budget one refinement may take (and never
    /// more than half the time left): a deeper level that cannot finish by then is given up,
    /// and not asked again by that thread in that search. Deep levels cost little where a node
    /// has few moves (compulsory captures) and far too much where it has many (the entering
    /// phase's forty entries), so the share is what lets many levels be allowed at all.
    /// Default 1 (half the time left).
    pub refine_time_share: f32,
    /// With several threads: how many visits a node whose children's scores a thread remembers
    /// (the top three levels, and with [`shared_rescan_div`](SearchParams::shared_rescan_div)
    /// the deeper nodes passed often) may gain, from any thread, before that thread reads them
    /// all again.
    /// In between, a pass reads only the child it descended into last time and takes the others'
    /// scores from memory, so threads stop reading, on every pass, the cache lines the other
    /// cores keep writing; the picks lag the other threads' last few visits there. 0: scanned
    /// again whenever another thread passed, as exact as one thread's picks. Default 64.
    /// Irrelevant with one thread, and where remembered scans do not apply (UCT with priors or
    /// minimax values).
    pub shared_rescan: u32,
    /// With several threads: a scan reused across threads lasts at most this share of the
    /// node's visits when it was made (`1 / shared_rescan_div`; and at most
    /// [`shared_rescan`](SearchParams::shared_rescan) visits), and the deeper nodes passed
    /// often reuse scans too. Why: once a long search has a deep main line, both threads follow
    /// it, and full scans of its nodes (every child a cache line the other core may have just
    /// written) took half of each thread's time, so that two threads were no faster than one;
    /// a share of the node's own visits keeps the lag small where the node is young.
    /// 0: the deeper nodes are scanned in full and a reused scan lasts `shared_rescan` visits
    /// (the behaviour before). Default 4. Applies under [`Selection::Puct`] only (see
    /// `SearchParams::rescan_div`).
    pub shared_rescan_div: u32,
}

/// The selection formula. Both clamp values into the solver bounds and skip proven losses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Selection {
    /// UCB1 for trees: `Q + c * sqrt(ln N / n)`, plus progressive bias from the priors when
    /// [`SearchParams::prior_weight`] is positive. Unvisited children score
    /// `fpu + c * sqrt(ln N)`.
    #[default]
    Uct,
    /// The AlphaZero rule: `Q + c * P * sqrt(N) / (1 + n)` with `c` =
    /// [`SearchParams::exploration`] and `P` the move's prior (uniform without priors).
    /// Unvisited children count `Q` = [`SearchParams::first_play_urgency`]. Good priors let it
    /// search narrow and deep, which is what a tactical game needs.
    Puct,
}

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams {
            exploration: 1.0,
            exploration_growth: 0.0,
            exploration_base: 20_000,
            first_play_urgency: 1.0,
            virtual_loss: 1,
            expand_threshold: 1,
            threads: 1,
            seed: 0,
            max_time: None,
            max_playouts: None,
            max_nodes: 2_000_000,
            max_tree_bytes: 256 << 20,
            reclaim: true,
            stop_at_node_cap: false,
            pv_len: 16,
            multi_pv: 1,
            smart_pruning: true,
            playout_cap: 400,
            playout_cutoff: None,
            playout_mix: 0.0,
            leaf_value_from_edge: false,
            selection: Selection::Uct,
            prior_weight: 0.0,
            minimax_weight: 0.0,
            refined_value_weight: 0.0,
            refine_visits: 0,
            refine_growth: 4,
            refine_levels: 1,
            refine_time_share: 1.0,
            shared_rescan: 64,
            shared_rescan_div: 4,
        }
    }
}

impl SearchParams {
    /// [`shared_rescan_div`](SearchParams::shared_rescan_div) as applied: under plain UCT 0
    /// (the deeper nodes scanned in full), because there a young node's full scan stops at its
    /// first unvisited child (the highest score possible), which costs less than rebuilding a
    /// remembered scan every few visits: the uniform engine's two-thread searches were ~4%
    /// slower with it (3 s from the start, `docs/PERFORMANCE.md`).
    pub(crate) fn rescan_div(&self) -> u32 {
        match self.selection {
            Selection::Puct => self.shared_rescan_div,
            Selection::Uct => 0,
        }
    }

    /// The node cap as an arena size: at least 1 (the root) and addressable by `u32`.
    pub(crate) fn node_cap(&self) -> u32 {
        u32::try_from(self.max_nodes).unwrap_or(u32::MAX).max(1)
    }

    /// Whether expansions ask the game for move knowledge (only when something reads it).
    pub(crate) fn uses_knowledge(&self) -> bool {
        self.selection == Selection::Puct
            || self.prior_weight > 0.0
            || self.minimax_weight > 0.0
            || self.playout_cutoff.is_some()
    }

    /// The highest refinement level due at a node with `started_before` playouts started
    /// before this one ([`SearchParams::refine_visits`]), if any. The node remembers the level
    /// it was refined to, so a level is done once, and a node that passed several thresholds
    /// unrefined (a reused tree's new root) goes straight to the highest.
    #[inline]
    pub(crate) fn refine_level(&self, started_before: u64) -> Option<u32> {
        let first = self
            .refine_visits
            .max(u64::from(self.expand_threshold.max(1)) + 1);
        if self.refine_visits == 0 || self.refine_levels == 0 || started_before < first {
            return None;
        }
        let growth = self.refine_growth.max(2);
        let mut threshold = first;
        let mut level = 1;
        while level < self.refine_levels {
            match threshold.checked_mul(growth) {
                Some(next) if next <= started_before => {
                    threshold = next;
                    level += 1;
                }
                _ => break,
            }
        }
        Some(level)
    }

    /// The number of threads to run, at least 1.
    pub(crate) fn thread_count(&self) -> usize {
        self.threads.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_bound_of_shared_scans_applies_under_puct_only() {
        let puct = SearchParams {
            selection: Selection::Puct,
            ..SearchParams::default()
        };
        assert_eq!(puct.rescan_div(), 4);
        let off = SearchParams {
            shared_rescan_div: 0,
            ..puct.clone()
        };
        assert_eq!(off.rescan_div(), 0);
        assert_eq!(SearchParams::default().rescan_div(), 0);
    }

    #[test]
    fn refinement_levels_fall_on_their_visit_counts() {
        let p = SearchParams {
            refine_visits: 10,
            refine_growth: 4,
            refine_levels: 3,
            ..SearchParams::default()
        };
        let due: Vec<(u64, Option<u32>)> = [0, 9, 10, 39, 40, 159, 160, 10_000]
            .into_iter()
            .map(|n| (n, p.refine_level(n)))
            .collect();
        assert_eq!(
            due,
            [
                (0, None),
                (9, None),
                (10, Some(1)),
                (39, Some(1)),
                (40, Some(2)),
                (159, Some(2)),
                (160, Some(3)),
                (10_000, Some(3))
            ]
        );
        // Off by default, and never at or below the expansion threshold.
        assert_eq!(
            (0..1000).find_map(|n| SearchParams::default().refine_level(n)),
            None
        );
        let low = SearchParams {
            refine_visits: 1,
            expand_threshold: 3,
            ..SearchParams::default()
        };
        assert_eq!(low.refine_level(4), Some(1));
        assert_eq!(low.refine_level(3), None);
        assert_eq!(low.refine_level(1_000_000), Some(1));
        // A growth below 2 counts as 2; huge thresholds do not overflow.
        let slow = SearchParams {
            refine_visits: u64::MAX / 2 + 1,
            refine_growth: 0,
            refine_levels: 5,
            ..SearchParams::default()
        };
        assert_eq!(slow.refine_level(u64::MAX / 2 + 1), Some(1));
        assert_eq!(slow.refine_level(u64::MAX), Some(1));
        assert_eq!(slow.refine_level(u64::MAX / 2), None);
    }
}
