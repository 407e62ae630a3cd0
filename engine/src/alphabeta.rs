//! An alpha-beta engine for Emergo: iterative deepening, principal variation search, a
//! transposition table, killer and history move ordering, a capture quiescence search and
//! repetition awareness.
//!
//! It is the baseline that keeps the MCTS honest (`emergo arena` spec `ab:time=200ms` or
//! `ab:depth=N`), and its quiescence search ([`quiesce`]) is what the MCTS uses to score leaves.
//!
//! # Emergo specifics
//!
//! * **Quiescence without stand-pat.** Captures are compulsory, so a position where the side to
//!   move can capture is never scored statically: every maximal chain is searched until a quiet
//!   position (no capture for the side to move) is reached, which [`crate::eval`] scores. The
//!   side to move cannot "stand pat" as in chess because it has no choice but to capture.
//! * **Forced moves are free.** A position with a single legal move (a lone capture chain, a
//!   last entry square) does not use up depth: those lines are what shallow traps are made of.
//! * **Repetition.** A position that already occurred since the last entry (same side to move)
//!   in the game or on the search path scores as a draw; entries are irreversible, so the window
//!   restarts at each.
//! * **Mate scores** are `WIN - plies`, adjusted to and from the transposition table so that a
//!   shorter win is preferred and stored bounds stay correct at any depth.

use std::time::{Duration, Instant};

use emergo_rules::{Game, Move, MoveList, Player, Position};

use crate::eval::{WIN, WIN_THRESHOLD, Weights, evaluate_with};

/// Deepest iteration (plies).
pub const MAX_DEPTH: u32 = 64;
/// Deepest ply the search (quiescence included) goes before scoring statically.
const MAX_PLY: usize = 128;
/// Nodes between two looks at the clock.
const CLOCK_INTERVAL: u64 = 2048;
/// Default transposition table size: 2^19 entries of 32 bytes (16 MiB).
pub const DEFAULT_TT_BITS: u32 = 19;

/// What bounds a search. The search stops at the first limit reached; without any it runs to
/// `max_depth` (so give at least one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbLimits {
    /// Deepest iteration, in plies (1..=[`MAX_DEPTH`]).
    pub max_depth: u32,
    /// Wall-clock budget.
    pub max_time: Option<Duration>,
    /// Node budget (quiescence nodes included); makes time-free searches reproducible.
    pub max_nodes: Option<u64>,
}

impl Default for AbLimits {
    fn default() -> Self {
        AbLimits {
            max_depth: MAX_DEPTH,
            max_time: None,
            max_nodes: None,
        }
    }
}

/// The answer of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct AbResult {
    /// The move to play (`None` only when the position has no legal move).
    pub best: Option<Move>,
    /// Its score for the side to move, in centimen (see [`crate::eval`]).
    pub score: i32,
    /// Deepest iteration completed.
    pub depth: u32,
    /// Nodes searched (quiescence included).
    pub nodes: u64,
    /// Principal variation from the transposition table, best move first.
    pub pv: Vec<Move>,
    /// Time spent.
    pub elapsed: Duration,
}

/// Nodes searched and the limits on them: counted and checked at every node, quiescence included,
/// by one method so that the main search and the quiescence search stop on the same terms.
#[derive(Clone, Copy, Debug, Default)]
struct NodeBudget {
    /// Nodes counted so far.
    nodes: u64,
    /// Stop at this instant (looked at every [`CLOCK_INTERVAL`] nodes).
    deadline: Option<Instant>,
    /// Stop after this many nodes.
    node_limit: Option<u64>,
    /// Set once a limit was hit; everything searched after that is discarded.
    aborted: bool,
}

impl NodeBudget {
    /// No limit at all.
    fn unlimited() -> Self {
        NodeBudget::default()
    }

    /// Counts one node; returns whether the search must stop.
    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if !self.aborted {
            let out_of_nodes = self.node_limit.is_some_and(|n| self.nodes >= n);
            let out_of_time = self.nodes % CLOCK_INTERVAL == 0
                && self.deadline.is_some_and(|d| Instant::now() >= d);
            self.aborted = out_of_nodes || out_of_time;
        }
        self.aborted
    }
}

/// How a stored score relates to the true value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    mv: Option<Move>,
    score: i32,
    depth: i16,
    bound: Bound,
    /// The [`AlphaBeta::forget`] generation that stored it: entries of other generations are
    /// neither read nor kept in preference to new ones.
    generation: u16,
}

/// The alpha-beta engine. Keep one per game: its transposition table and history carry over
/// from move to move.
pub struct AlphaBeta {
    weights: Weights,
    table: Vec<Option<Entry>>,
    mask: usize,
    killers: Vec<[Option<Move>; 2]>,
    history: Vec<i32>,
    /// Hashes of the positions since the last entry: the game's, then the search path's.
    path: Vec<u64>,
    /// Index in `path` of the first position of the current repetition window.
    window_start: usize,
    budget: NodeBudget,
    /// Bumped by [`AlphaBeta::forget`].
    generation: u16,
    /// One [`PlyScratch`] per ply, taken while that ply's moves are searched and put back
    /// after: no allocation and no fresh 1.5 KiB move list per node.
    scratch: Vec<Option<Box<PlyScratch>>>,
    /// The quiescence search's buffers.
    quiet: QuietScratch,
}

/// What a node needs to search its moves, reused from node to node at the same ply.
#[derive(Default)]
struct PlyScratch {
    /// The node's legal moves.
    moves: MoveList,
    /// Their `(score, index)` ordering pairs ([`AlphaBeta::order`], [`pick_next`]).
    order: Vec<(i64, usize)>,
}

impl std::fmt::Debug for AlphaBeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlphaBeta")
            .field("table_entries", &self.table.len())
            .field("weights", &self.weights)
            .finish_non_exhaustive()
    }
}

impl Default for AlphaBeta {
    fn default() -> Self {
        AlphaBeta::new(DEFAULT_TT_BITS, Weights::default())
    }
}

/// History table index of a quiet move (entries and steps; captures are ordered otherwise).
fn history_index(m: Move) -> Option<usize> {
    match m {
        Move::Enter(sq) => Some(sq.index()),
        Move::Step { from, to } => Some(41 + from.index() * 41 + to.index()),
        Move::Capture(_) => None,
    }
}
const HISTORY_LEN: usize = 41 + 41 * 41;

/// Converts a score for storage at `ply` (mate scores become distances from the node).
fn to_table(score: i32, ply: usize) -> i32 {
    let ply = ply as i32;
    if score >= WIN_THRESHOLD {
        score + ply
    } else if score <= -WIN_THRESHOLD {
        score - ply
    } else {
        score
    }
}

fn from_table(score: i32, ply: usize) -> i32 {
    let ply = ply as i32;
    if score >= WIN_THRESHOLD {
        score - ply
    } else if score <= -WIN_THRESHOLD {
        score + ply
    } else {
        score
    }
}

/// The score of a finished position for the side to move, `ply` plies from the root.
fn terminal_score(pos: &Position, ply: usize) -> Option<i32> {
    let outcome = pos.outcome()?;
    Some(match outcome.result.winner() {
        None => 0,
        Some(w) if w == pos.side_to_move() => WIN - ply as i32,
        Some(_) => -(WIN - ply as i32),
    })
}

/// Material balance after a capture, for ordering captures (all of maximal length).
fn capture_gain(pos: &Position, m: Move, me: Player) -> i32 {
    let mut next = *pos;
    next.play_unchecked(m);
    next.controlled_men(me) as i32 - next.controlled_men(me.other()) as i32
}

/// The key that puts a `(score, index)` pair in search order: higher scores first, equals in
/// list order (what a stable sort by descending score gives).
#[inline]
fn search_order(&(score, index): &(i64, usize)) -> (std::cmp::Reverse<i64>, usize) {
    (std::cmp::Reverse(score), index)
}

/// Moves picked before a node's remaining ones are sorted ([`pick_next`]).
const PICKED_BY_SCAN: usize = 3;

/// The index of the `k`-th move in search order ([`search_order`]) of `keys`, `(score, index)`
/// pairs of which the first `k` are the moves picked before (call it for `k = 0, 1, 2, ...`);
/// `None` past the end. The first [`PICKED_BY_SCAN`] are found by a scan each, then the rest is
/// sorted once: most nodes that cut off do so on one of their first moves and never pay for
/// the sort, which had been most of the cost of ordering. The same order as sorting all of
/// them first, since the key includes the index.
fn pick_next(keys: &mut [(i64, usize)], k: usize) -> Option<usize> {
    let rest = keys.get_mut(k..).filter(|rest| !rest.is_empty())?;
    match k.cmp(&PICKED_BY_SCAN) {
        std::cmp::Ordering::Less => {
            let mut best = 0;
            for (j, key) in rest.iter().enumerate().skip(1) {
                if search_order(key) < search_order(&rest[best]) {
                    best = j;
                }
            }
            rest.swap(0, best);
        }
        std::cmp::Ordering::Equal => rest.sort_unstable_by_key(search_order),
        std::cmp::Ordering::Greater => {}
    }
    Some(rest[0].1)
}

/// Resolves pending captures: the score of `pos` for the side to move once the compulsory
/// capture sequence is over (minimax over every maximal chain), then [`evaluate_with`].
/// `nodes` counts the positions visited. Used by the MCTS to score leaves.
pub fn quiesce(pos: &Position, weights: &Weights, nodes: &mut u64) -> i32 {
    thread_local! {
        /// This thread's quiescence buffers, kept from leaf to leaf.
        static SCRATCH: std::cell::RefCell<QuietScratch> = std::cell::RefCell::default();
    }
    let mut budget = NodeBudget::unlimited();
    let score = SCRATCH.with_borrow_mut(|scratch| {
        quiesce_inner(pos, -WIN - 1, WIN + 1, 0, weights, &mut budget, scratch)
    });
    *nodes += budget.nodes;
    score
}

/// The buffers of the quiescence search's capture nodes, one per level of the capture line
/// being searched, taken on the way down and given back on the way up (a stack, like the
/// recursion): a capture node lists its moves and keeps its children's positions without
/// allocating, and without writing a fresh 1.5 KiB move list.
#[derive(Default)]
pub(crate) struct QuietScratch {
    /// Boxed: a level is taken and given back at every capture node, and moving the box
    /// moves a pointer, not the 1.5 KiB move list.
    #[expect(clippy::vec_box, reason = "pop and push move a pointer, not 1.5 KiB")]
    free: Vec<Box<QuietPly>>,
}

/// One capture node's buffers.
#[derive(Default)]
struct QuietPly {
    /// The node's legal moves (all captures).
    moves: MoveList,
    /// `(material gain for the side to move, position after the capture)`, best gain first.
    children: Vec<(i32, Position)>,
}

fn quiesce_inner(
    pos: &Position,
    mut alpha: i32,
    beta: i32,
    ply: usize,
    weights: &Weights,
    budget: &mut NodeBudget,
    scratch: &mut QuietScratch,
) -> i32 {
    if budget.tick() {
        return 0;
    }
    if !pos.has_capture() {
        return terminal_score(pos, ply).unwrap_or_else(|| evaluate_with(pos, weights));
    }
    if ply >= MAX_PLY {
        return evaluate_with(pos, weights);
    }
    // Each capture is played once: its position serves both ordering and search.
    let me = pos.side_to_move();
    let mut here = scratch.free.pop().unwrap_or_default();
    let QuietPly { moves, children } = &mut *here;
    pos.legal_moves_into(moves);
    children.clear();
    children.extend(moves.iter().map(|&m| {
        let mut next = *pos;
        next.play_unchecked(m);
        let gain = next.controlled_men(me) as i32 - next.controlled_men(me.other()) as i32;
        (gain, next)
    }));
    // Stable: equal gains keep the move generator's order.
    children.sort_by_key(|o| std::cmp::Reverse(o.0));
    let mut best = -WIN - 1;
    for (_, next) in children.iter() {
        let score = -quiesce_inner(next, -beta, -alpha, ply + 1, weights, budget, scratch);
        if score > best {
            best = score;
            if score > alpha {
                alpha = score;
                if alpha >= beta {
                    break;
                }
            }
        }
    }
    scratch.free.push(here);
    best
}

/// The hashes of `game`'s positions since its last entry (oldest first): the repetition window.
pub fn repetition_window(game: &Game) -> Vec<u64> {
    let positions = game.positions();
    let last_entry = game.moves().iter().rposition(|m| m.is_entry());
    // positions[i + 1] follows moves[i]; the window starts at the position after the entry.
    let start = last_entry.map_or(0, |i| i + 1);
    positions
        .get(start..)
        .unwrap_or_default()
        .iter()
        .map(Position::hash)
        .collect()
}

impl AlphaBeta {
    /// An engine with a transposition table of `2^tt_bits` entries (clamped to 10..=26) and the
    /// given evaluation weights.
    pub fn new(tt_bits: u32, weights: Weights) -> Self {
        let size = 1usize << tt_bits.clamp(10, 26);
        AlphaBeta {
            weights,
            table: vec![None; size],
            mask: size - 1,
            killers: vec![[None; 2]; MAX_PLY + 1],
            history: vec![0; HISTORY_LEN],
            path: Vec::with_capacity(256),
            window_start: 0,
            budget: NodeBudget::unlimited(),
            generation: 0,
            scratch: (0..=MAX_PLY).map(|_| None).collect(),
            quiet: QuietScratch::default(),
        }
    }

    /// Replaces the evaluation weights (the table is kept: change weights between games only,
    /// or [`clear`](AlphaBeta::clear) it).
    pub fn set_weights(&mut self, weights: Weights) {
        self.weights = weights;
    }

    /// Forgets everything learnt (a new game).
    pub fn clear(&mut self) {
        self.table.iter_mut().for_each(|e| *e = None);
        self.history.iter_mut().for_each(|h| *h = 0);
    }

    /// Forgets everything learnt as [`clear`](AlphaBeta::clear) does, but without touching the
    /// table: its entries are marked old by a generation count (cleared for real once in 65,536
    /// calls, when the count comes round). What is searched after this depends only on what is
    /// searched after it, so a caller that starts afresh often (the MCTS, whose priors each
    /// search thread scores with one searcher, at the start of every search) gets the same
    /// scores whatever this searcher did before, without a 2 MiB table wipe each time.
    pub fn forget(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.table.iter_mut().for_each(|e| *e = None);
        }
        self.history.iter_mut().for_each(|h| *h = 0);
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
    }

    /// Searches the current position of `game` (whose repetition window it respects).
    ///
    /// A position with a single legal move is answered at once, without a search: the move
    /// with the quiescence score of that move alone and `depth` 0. That is right for playing
    /// and wrong for judging the position; [`AlphaBeta::score_game`] scores one.
    pub fn search_game(&mut self, game: &Game, limits: AbLimits) -> AbResult {
        self.search(game.position(), &repetition_window(game), limits)
    }

    /// The score of `game`'s current position for its side to move, searched within `limits`.
    /// Unlike [`AlphaBeta::search_game`]'s score, it is a search's answer wherever the game goes
    /// on: forced moves (a single legal move) are played through first, at no cost in depth,
    /// as inside the search. A forced sequence ends at the latest when a position comes round
    /// for the third time (a draw).
    pub fn score_game(&mut self, game: &Game, limits: AbLimits) -> i32 {
        if game.legal_moves().len() != 1 {
            return self.search_game(game, limits).score;
        }
        // Only a forced position needs its own copy to play on.
        let mut game = game.clone();
        let mut sign = 1;
        while let [only] = game.legal_moves().as_slice() {
            if game.play(*only).is_err() {
                break;
            }
            sign = -sign;
        }
        sign * self.search_game(&game, limits).score
    }

    /// Searches `root`; `window` holds the hashes of the positions since the last entry, oldest
    /// first, ending with `root`'s own (may be empty: no history).
    pub fn search(&mut self, root: &Position, window: &[u64], limits: AbLimits) -> AbResult {
        let started = Instant::now();
        self.budget = NodeBudget {
            deadline: limits.max_time.map(|t| started + t),
            node_limit: limits.max_nodes,
            ..NodeBudget::unlimited()
        };
        self.path.clear();
        self.path.extend_from_slice(window);
        self.window_start = 0;
        if self.path.last() != Some(&root.hash()) {
            self.path.push(root.hash());
        }
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
        // Age the history so that old games' habits fade.
        self.history.iter_mut().for_each(|h| *h /= 8);

        let moves = root.legal_moves();
        let mut result = AbResult {
            best: moves.as_slice().first().copied(),
            score: 0,
            depth: 0,
            nodes: 0,
            pv: Vec::new(),
            elapsed: Duration::ZERO,
        };
        if moves.len() <= 1 {
            result.score = match moves.len() {
                0 => terminal_score(root, 0).unwrap_or(0),
                _ => {
                    let mut next = *root;
                    if let Some(&m) = moves.as_slice().first() {
                        next.play_unchecked(m);
                    }
                    let mut n = 0;
                    -quiesce(&next, &self.weights, &mut n)
                }
            };
            result.pv = result.best.into_iter().collect();
            result.elapsed = started.elapsed();
            return result;
        }

        let max_depth = limits.max_depth.clamp(1, MAX_DEPTH);
        for depth in 1..=max_depth {
            let (score, best) = self.root_search(root, &moves, depth as i32, result.best);
            if let Some(best) = best {
                // A partial iteration's best move was searched fully and beat the previous best.
                result.best = Some(best);
                result.score = score;
            }
            if self.budget.aborted {
                break;
            }
            result.depth = depth;
            if score.abs() >= WIN_THRESHOLD {
                break;
            }
            // An iteration takes several times the previous one: do not start what cannot end.
            if let (Some(t), Some(deadline)) = (limits.max_time, self.budget.deadline) {
                let left = deadline.saturating_duration_since(Instant::now());
                if left < t / 3 {
                    break;
                }
            }
        }
        result.nodes = self.budget.nodes;
        result.pv = self.principal_variation(root, result.best);
        result.elapsed = started.elapsed();
        result
    }

    /// The score of `pos` for the side to move by a search `depth` plies deep (iterative
    /// deepening, no history, no time limit): the leaf evaluation of the MCTS hybrid. Unlike
    /// [`search`](AlphaBeta::search) it searches a position with a single legal move too.
    pub fn score(&mut self, pos: &Position, depth: u32) -> i32 {
        // Without a deadline nothing aborts the search.
        self.score_by(pos, depth, None).unwrap_or(0)
    }

    /// [`score`](AlphaBeta::score), given up at `deadline` (`None` then): the MCTS refines its
    /// knowledge with such searches and must not overrun its own time limit for one.
    pub fn score_by(
        &mut self,
        pos: &Position,
        depth: u32,
        deadline: Option<Instant>,
    ) -> Option<i32> {
        self.budget = NodeBudget {
            deadline,
            ..NodeBudget::unlimited()
        };
        self.window_start = 0;
        let mut score = 0;
        // A finished position is scored by `node_inner` itself.
        for d in 1..=depth.clamp(1, MAX_DEPTH) {
            self.path.clear();
            self.path.push(pos.hash());
            let mut alpha = -WIN - 1;
            score = self.node_inner(pos, d as i32, &mut alpha, WIN + 1, 0);
            if self.budget.aborted {
                return None;
            }
        }
        Some(score)
    }

    /// Ply `ply`'s scratch, taken (a fresh one if it was not there); give it back with
    /// [`AlphaBeta::put_scratch`].
    fn take_scratch(&mut self, ply: usize) -> Box<PlyScratch> {
        self.scratch
            .get_mut(ply)
            .and_then(Option::take)
            .unwrap_or_default()
    }

    fn put_scratch(&mut self, ply: usize, scratch: Box<PlyScratch>) {
        if let Some(slot) = self.scratch.get_mut(ply) {
            *slot = Some(scratch);
        }
    }

    /// One iteration at the root. Returns the best score and the best move whose search
    /// completed (none if aborted before the first move completed).
    fn root_search(
        &mut self,
        root: &Position,
        moves: &MoveList,
        depth: i32,
        previous: Option<Move>,
    ) -> (i32, Option<Move>) {
        let mut scratch = self.take_scratch(0);
        let ordered = &mut scratch.order;
        self.order(root, moves, previous, 0, ordered);
        let (mut alpha, beta) = (-WIN - 1, WIN + 1);
        let mut best = None;
        for i in 0..ordered.len() {
            let Some(&m) = pick_next(ordered, i).and_then(|index| moves.as_slice().get(index))
            else {
                break;
            };
            let mut next = *root;
            next.play_unchecked(m);
            let new_depth = depth - 1;
            let score = if i == 0 {
                -self.node(&next, new_depth, -beta, -alpha, 1, m)
            } else {
                let s = -self.node(&next, new_depth, -alpha - 1, -alpha, 1, m);
                if s > alpha && !self.budget.aborted {
                    -self.node(&next, new_depth, -beta, -alpha, 1, m)
                } else {
                    s
                }
            };
            if self.budget.aborted {
                break;
            }
            if score > alpha {
                alpha = score;
                best = Some(m);
            }
        }
        self.put_scratch(0, scratch);
        if let Some(m) = best {
            self.store(root.hash(), Some(m), alpha, depth, Bound::Exact, 0);
        }
        (alpha, best)
    }

    /// Whether the position just pushed on the path occurred before in the window (since the
    /// last entry) with the same side to move.
    fn repeats(&self) -> bool {
        let Some((&last, earlier)) = self.path.split_last() else {
            return false;
        };
        earlier
            .get(self.window_start..)
            .unwrap_or_default()
            .iter()
            .rev()
            .skip(1)
            .step_by(2)
            .any(|&h| h == last)
    }

    /// Negamax with alpha-beta at `pos`, reached by `last`.
    fn node(
        &mut self,
        pos: &Position,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        last: Move,
    ) -> i32 {
        if self.budget.tick() {
            return 0;
        }
        // The repetition window restarts at every entry.
        let saved_start = self.window_start;
        if last.is_entry() {
            self.window_start = self.path.len();
        }
        self.path.push(pos.hash());
        let score = self.node_inner(pos, depth, &mut alpha, beta, ply);
        self.path.pop();
        self.window_start = saved_start;
        score
    }

    fn node_inner(
        &mut self,
        pos: &Position,
        depth: i32,
        alpha: &mut i32,
        beta: i32,
        ply: usize,
    ) -> i32 {
        if self.repeats() {
            return 0;
        }
        if depth <= 0 || ply >= MAX_PLY {
            let weights = self.weights;
            return quiesce_inner(
                pos,
                *alpha,
                beta,
                ply,
                &weights,
                &mut self.budget,
                &mut self.quiet,
            );
        }
        // The table first: a cut there needs no moves listed (a position without moves is
        // never stored, so this finds no entry for one).
        let key = pos.hash();
        let mut tt_move = None;
        if let Some(e) = self.probe(key) {
            tt_move = e.mv;
            if i32::from(e.depth) >= depth {
                let s = from_table(e.score, ply);
                match e.bound {
                    Bound::Exact => return s,
                    Bound::Lower if s >= beta => return s,
                    Bound::Upper if s <= *alpha => return s,
                    _ => {}
                }
            }
        }
        // A `MoveList` is 1.5 KiB: making a fresh one per node was a few percent of the time.
        let mut scratch = self.take_scratch(ply);
        pos.legal_moves_into(&mut scratch.moves);
        let score = if scratch.moves.is_empty() {
            terminal_score(pos, ply).unwrap_or(0)
        } else {
            self.search_moves(pos, &mut scratch, depth, (alpha, beta), ply, tt_move)
        };
        self.put_scratch(ply, scratch);
        score
    }

    /// [`AlphaBeta::node_inner`] once the table gave no cut: every move of `scratch.moves` (not
    /// empty) in search order, the best score stored in the table. `tt_move` is the table's
    /// move.
    fn search_moves(
        &mut self,
        pos: &Position,
        scratch: &mut PlyScratch,
        depth: i32,
        (alpha, beta): (&mut i32, i32),
        ply: usize,
        tt_move: Option<Move>,
    ) -> i32 {
        let key = pos.hash();
        let PlyScratch { moves, order } = scratch;
        // Forced moves do not use up depth.
        let new_depth = if moves.len() == 1 { depth } else { depth - 1 };
        self.order(pos, moves, tt_move, ply, order);
        let original_alpha = *alpha;
        let mut best = -WIN - 1;
        let mut best_move = None;
        for i in 0..order.len() {
            let Some(&m) = pick_next(order, i).and_then(|index| moves.as_slice().get(index)) else {
                break;
            };
            let mut next = *pos;
            next.play_unchecked(m);
            let score = if i == 0 {
                -self.node(&next, new_depth, -beta, -*alpha, ply + 1, m)
            } else {
                let s = -self.node(&next, new_depth, -*alpha - 1, -*alpha, ply + 1, m);
                if s > *alpha && s < beta && !self.budget.aborted {
                    -self.node(&next, new_depth, -beta, -*alpha, ply + 1, m)
                } else {
                    s
                }
            };
            if self.budget.aborted {
                break;
            }
            if score > best {
                best = score;
                best_move = Some(m);
                if score > *alpha {
                    *alpha = score;
                    if score >= beta {
                        if let Some(h) = history_index(m) {
                            // Saturating: a long analysis adds up many cutoffs.
                            self.history[h] = self.history[h].saturating_add(depth * depth);
                            let k = &mut self.killers[ply];
                            if k[0] != Some(m) {
                                k[1] = k[0];
                                k[0] = Some(m);
                            }
                        }
                        break;
                    }
                }
            }
        }
        if self.budget.aborted {
            return 0;
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if best > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.store(key, best_move, best, depth, bound, ply);
        best
    }

    fn probe(&self, key: u64) -> Option<Entry> {
        self.table[key as usize & self.mask]
            .filter(|e| e.key == key && e.generation == self.generation)
    }

    fn store(
        &mut self,
        key: u64,
        mv: Option<Move>,
        score: i32,
        depth: i32,
        bound: Bound,
        ply: usize,
    ) {
        let slot = &mut self.table[key as usize & self.mask];
        // Depth-preferred, but always replace entries of other positions' older searches.
        if let Some(old) = slot {
            if old.key == key
                && old.generation == self.generation
                && i32::from(old.depth) > depth
                && bound != Bound::Exact
            {
                return;
            }
        }
        *slot = Some(Entry {
            key,
            mv,
            score: to_table(score, ply),
            depth: depth.clamp(0, i32::from(i16::MAX)) as i16,
            bound,
            generation: self.generation,
        });
    }

    /// Moves in search order: the table's move, captures by material after, killers, history;
    /// equals in list order: `(score, index in moves)` pairs written to `out`, unsorted, for
    /// [`pick_next`] (a stable sort of `(score, move)` pairs here, the same order, had been 15%
    /// of the default MCTS engine's time, whose knowledge searches with this engine).
    fn order(
        &self,
        pos: &Position,
        moves: &MoveList,
        first: Option<Move>,
        ply: usize,
        out: &mut Vec<(i64, usize)>,
    ) {
        let me = pos.side_to_move();
        let killers = self.killers.get(ply).copied().unwrap_or([None; 2]);
        let score = |m: Move| {
            if Some(m) == first {
                i64::MAX
            } else if m.is_capture() {
                1_000_000_000 + i64::from(capture_gain(pos, m, me))
            } else if Some(m) == killers[0] {
                900_000_000
            } else if Some(m) == killers[1] {
                800_000_000
            } else {
                history_index(m).map_or(0, |h| i64::from(self.history[h]))
            }
        };
        out.clear();
        out.extend(
            moves
                .iter()
                .enumerate()
                .map(|(index, &m)| (score(m), index)),
        );
    }

    /// The best line as the table remembers it.
    fn principal_variation(&self, root: &Position, best: Option<Move>) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut pos = *root;
        let mut next = best;
        let mut seen = Vec::new();
        while let Some(m) = next {
            if pv.len() >= 32 || !pos.legal_moves().contains(m) || seen.contains(&pos.hash()) {
                break;
            }
            seen.push(pos.hash());
            pv.push(m);
            pos.play_unchecked(m);
            next = self.probe(pos.hash()).and_then(|e| e.mv);
        }
        pv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picked_moves_come_in_the_order_of_a_stable_sort() {
        // Lists of every length around the switch from scans to the sort, with many ties (few
        // distinct scores) and without (a hash spreads them).
        for len in 0..12usize {
            for distinct in [2i64, 3, 1_000_003] {
                let scores: Vec<i64> = (0..len as i64)
                    .map(|i| (i * 7_919 + len as i64 * 31) % distinct)
                    .collect();
                let mut stable: Vec<(i64, usize)> =
                    scores.iter().enumerate().map(|(i, &s)| (s, i)).collect();
                stable.sort_by_key(|o| std::cmp::Reverse(o.0));
                let expected: Vec<usize> = stable.iter().map(|o| o.1).collect();
                let mut keys: Vec<(i64, usize)> =
                    scores.iter().enumerate().map(|(i, &s)| (s, i)).collect();
                let picked: Vec<usize> = (0..).map_while(|k| pick_next(&mut keys, k)).collect();
                assert_eq!(picked, expected, "scores {scores:?}");
            }
        }
    }

    fn pos(fen: &str) -> Position {
        fen.parse().unwrap()
    }

    fn at_depth(depth: u32) -> AbLimits {
        AbLimits {
            max_depth: depth,
            ..AbLimits::default()
        }
    }

    #[test]
    fn takes_the_only_capture_and_the_longest() {
        let p = pos("9/9/2a@1a@4/9/4a@4/3D@5/9/5A@3/6b@2 b 30 0,0");
        let r = AlphaBeta::default().search(&p, &[], at_depth(3));
        assert_eq!(r.best.map(|m| m.to_string()).as_deref(), Some("g1xe3xc5"));
    }

    #[test]
    fn avoids_walking_into_a_capture() {
        // White (b2, edge-safe a1 not reachable) must not step next to the black pair on c3/d4
        // where it can be taken; an escape to a3 or c1 keeps the man.
        let p = pos("9/9/9/9/9/3a@5/2a@6/1A@7/9 w 40 0,0");
        let r = AlphaBeta::default().search(&p, &[], at_depth(4));
        let best = r.best.map(|m| m.to_string()).unwrap_or_default();
        assert!(
            ["b2-a1", "b2-a3", "b2-c1"].contains(&best.as_str()),
            "{best}"
        );
    }

    #[test]
    fn finds_a_forced_win() {
        // Black's last unit can be captured: White wins at once.
        let p = pos("9/9/9/9/9/9/2a@6/1A@7/9 w 40 0,0");
        let r = AlphaBeta::default().search(&p, &[], at_depth(2));
        assert_eq!(r.best.map(|m| m.to_string()).as_deref(), Some("b2xd4"));
        assert!(r.score >= WIN_THRESHOLD);
    }

    #[test]
    fn node_limited_searches_are_reproducible() {
        let game = Game::from_fen_and_moves("9/9/9/9/9/9/9/9/9 w 0 12,12", &["a1", "c3"]).unwrap();
        let limits = AbLimits {
            max_nodes: Some(20_000),
            ..AbLimits::default()
        };
        let a = AlphaBeta::default().search_game(&game, limits);
        let b = AlphaBeta::default().search_game(&game, limits);
        assert_eq!(
            a,
            AbResult {
                elapsed: a.elapsed,
                ..b
            }
        );
        assert!(a.depth >= 2, "{a:?}");
    }

    #[test]
    fn scoring_plays_forced_moves_through() {
        // From an arena game: after Black's g9-f8 White's only move is e9xg7, after which
        // Black wins by force. The answer for a single legal move scores that move alone.
        let fen = "4AB1a@2/9/a@3bb4/3b@5/8A@/5AB3/9/9/af1aa6 b 73 0,0";
        let game = Game::from_fen_and_moves(fen, &["g9-f8"]).unwrap();
        assert_eq!(game.legal_moves().len(), 1);
        let mut ab = AlphaBeta::default();
        let quick = ab.search_game(&game, at_depth(4));
        assert_eq!(quick.depth, 0);
        assert!(quick.score > -WIN_THRESHOLD, "{quick:?}");
        let score = ab.score_game(&game, at_depth(4));
        assert!(score <= -WIN_THRESHOLD, "{score}");
        // Where there is a choice, the two agree.
        let before = Game::from_fen_and_moves(fen, &[] as &[&str]).unwrap();
        assert_eq!(
            ab.score_game(&before, at_depth(4)),
            ab.search_game(&before, at_depth(4)).score
        );
    }

    #[test]
    fn repetition_scores_as_a_draw() {
        // Shuffling positions: a position seen before in the window is a draw, so a lone man
        // each in a dead position scores 0 at any depth.
        let fen = "9/9/9/9/4a@4/9/9/9/A@8 w 40 0,0";
        let game = Game::from_fen_and_moves(fen, &["a1-b2", "e5-d6", "b2-a1", "d6-e5"]).unwrap();
        let r = AlphaBeta::default().search_game(&game, at_depth(6));
        assert!(r.score.abs() < 100, "{r:?}");
        assert_eq!(repetition_window(&game).len(), 5);
    }

    #[test]
    fn quiescence_resolves_captures() {
        // Black to move must take d4 (e5xc3): Black ends a man up.
        let p = pos("9/9/9/9/4a@4/3A@5/9/9/9 b 40 0,0");
        let mut n = 0;
        let s = quiesce(&p, &Weights::default(), &mut n);
        assert!(s > 50, "{s}");
        assert!(n >= 2);
    }
}
