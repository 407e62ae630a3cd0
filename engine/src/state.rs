//! The Emergo adapter for the generic MCTS: a position, its repetition window, and the
//! knowledge the search may use (evaluation, priors, heavy playouts).
//!
//! # Knowledge
//!
//! Uniform random playouts carry almost no signal in Emergo: captures are compulsory and
//! maximal, so a single careless move loses men by force, and random play makes such moves all
//! the time on both sides. [`Knowledge`] gives the search what an alpha-beta engine has:
//!
//! * **Leaf evaluation** ([`Game::evaluate`]): the pending compulsory captures are resolved by
//!   the quiescence search ([`crate::alphabeta::quiesce`]) and the quiet position reached is
//!   scored by [`crate::eval`], turned into a win probability. With
//!   `SearchParams::playout_cutoff = Some(0)` this replaces the playout altogether.
//! * **Priors and move values** ([`Game::move_knowledge`]): each move is scored by the same
//!   quiescence evaluation of the position after it; the priors are a softmax of those scores
//!   (temperature [`Knowledge::prior_temperature`] centimen) and the values their win
//!   probabilities, which seed first-play values and implicit minimax backups. A move that
//!   hands over a capture chain gets a tiny prior, so selection rarely wastes visits on it.
//! * **Leaf search** ([`Knowledge::leaf_depth`] > 0): a shallow alpha-beta search instead of
//!   the quiescence search scores the leaf (measured weaker at equal time; off by default).
//! * **Heavy playouts** (when playouts run): each turn plays the best of a few sampled moves by
//!   the one-ply evaluation, with some randomness left in.
//!
//! A state without knowledge behaves exactly as the uniform-playout search always did.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;

use emergo_mcts::{
    Game, Outcome as SearchOutcome, Player as SearchPlayer, Playout, PlayoutEnd, Rng, uniform_index,
};
use emergo_rules::{Move, MoveList, Outcome, Player, Position, Repetitions, random_playout};

use crate::alphabeta::{AlphaBeta, quiesce};
use crate::eval::{Weights, win_probability_scaled};
use crate::knowledge_cache::KnowledgeCache;

/// The deepest search that scores a move for priors and values (a 12-ply search per move would
/// take the whole budget of a move many times over).
const MAX_KNOWLEDGE_DEPTH: u32 = 12;

/// Transposition table of each search thread's leaf searcher: 2^16 entries (2 MiB).
const LEAF_TT_BITS: u32 = 16;

thread_local! {
    /// The alpha-beta searcher scoring leaves on this thread (its table serves every leaf).
    static LEAF_SEARCH: RefCell<Option<Box<AlphaBeta>>> = const { RefCell::new(None) };
    /// This thread's buffer for [`Game::legal_moves`].
    static MOVES: RefCell<MoveList> = const { RefCell::new(MoveList::new()) };
    /// The move knowledge this thread computed in its current search, by position
    /// ([`Knowledge::cache`]).
    static KNOWLEDGE_CACHE: RefCell<KnowledgeCache> = RefCell::new(KnowledgeCache::default());
}

/// What the search knows about Emergo beyond the rules.
#[derive(Clone, Debug, PartialEq)]
pub struct Knowledge {
    /// Evaluation weights.
    pub weights: Weights,
    /// Softmax temperature of the priors, in centimen: lower is greedier.
    pub prior_temperature: f32,
    /// Moves sampled per turn of a heavy playout (1 = uniformly random playouts).
    pub playout_samples: u32,
    /// Centimen per logistic unit when scores become win probabilities for the search: smaller
    /// makes a man's difference weigh more against the exploration term.
    pub value_scale: f32,
    /// Depth of the alpha-beta search that scores a leaf (0: the quiescence search alone).
    /// Deeper leaves see short traps that averaging would miss, at a cost in leaves per second
    /// (an MCTS-minimax hybrid in the sense of Baier & Winands).
    pub leaf_depth: u32,
    /// Depth of the alpha-beta search that scores each move for the priors and move values of
    /// the root (0: the quiescence search, as everywhere else); a node `k` plies below the root
    /// gets `prior_depth - k`. Deep priors where the tree branches most widely let the search
    /// see 2–3-ply traps (an entry that forces a capture chain) before it spends visits there.
    pub prior_depth: u32,
    /// Plies each refinement level adds to the depth of a node's move searches
    /// ([`Game::refine_knowledge`]; default 1): level `k` searches `k * refine_step` plies
    /// deeper than the node's expansion did.
    pub refine_step: u32,
    /// Centimen added to a move's score for its prior only (not its value) when it hands the
    /// opponent a compulsory capture: a sacrifice. Alpha-beta plays such moves more often than
    /// their quiescence score says (the `policy` example's fit), because the capture chain it
    /// forces can leave the capturing stack where a bigger chain takes it, a line the search
    /// reads only if it visits the sacrifice at all. 0: off (`Knowledge::default`); the
    /// default engine, `MctsConfig::strong`, uses 100.
    pub sacrifice_bonus: f32,
    /// Centimen added to a move's score for its prior only when, after it, the mover would have
    /// a capture if it were to move again: a threat, such as the quiet move that sets up a
    /// chain after a sacrifice. 0: off (`Knowledge::default`); the default engine uses 150.
    pub threat_bonus: f32,
    /// Whether each search thread remembers the priors and values it computed for a position
    /// (at a depth) and answers from memory when the search expands the same position again,
    /// reached by another move order (see the `knowledge_cache` module).
    pub cache: bool,
}

impl Default for Knowledge {
    fn default() -> Self {
        Knowledge {
            weights: Weights::default(),
            prior_temperature: 200.0,
            playout_samples: 3,
            leaf_depth: 0,
            prior_depth: 0,
            refine_step: 1,
            sacrifice_bonus: 0.0,
            threat_bonus: 0.0,
            cache: false,
            value_scale: crate::eval::LOGISTIC_SCALE,
        }
    }
}

impl Knowledge {
    /// The score of `pos` for its side to move once pending captures are resolved.
    fn score(&self, pos: &Position) -> i32 {
        let mut nodes = 0;
        quiesce(pos, &self.weights, &mut nodes)
    }

    /// The score of a leaf: the quiescence search, or a shallow alpha-beta search.
    fn leaf_score(&self, pos: &Position) -> i32 {
        self.score_at_depth(pos, self.leaf_depth)
    }

    /// Makes this thread's searcher forget what it searched before ([`AlphaBeta::forget`]):
    /// called as each search starts on the thread ([`Game::thread_started`]). Otherwise one
    /// search's priors would depend on what the thread searched in earlier searches (its
    /// table, killers and history), and a seeded search with a playout budget, the same game
    /// reviewed twice, would not be reproducible. Within a search the table carries over from
    /// batch to batch: a node refined a ply deeper starts from what its previous level found.
    fn forget_searches() {
        LEAF_SEARCH.with(|cell| {
            if let Some(ab) = cell.borrow_mut().as_mut() {
                ab.forget();
            }
        });
        KNOWLEDGE_CACHE.with_borrow_mut(KnowledgeCache::clear);
    }

    /// The score of `pos` by an alpha-beta search `depth` plies deep (0: quiescence only), on
    /// this thread's searcher.
    fn score_at_depth(&self, pos: &Position, depth: u32) -> i32 {
        // Without a deadline the search always finishes.
        self.score_by(pos, depth, None).unwrap_or(0)
    }

    /// [`score_at_depth`](Knowledge::score_at_depth), given up at `deadline`.
    fn score_by(&self, pos: &Position, depth: u32, deadline: Option<Instant>) -> Option<i32> {
        if depth == 0 {
            return Some(self.score(pos));
        }
        LEAF_SEARCH.with(|cell| {
            let mut slot = cell.borrow_mut();
            let ab =
                slot.get_or_insert_with(|| Box::new(AlphaBeta::new(LEAF_TT_BITS, self.weights)));
            ab.set_weights(self.weights);
            ab.score_by(pos, depth, deadline)
        })
    }
}

/// An Emergo game state for the search: the position and the hashes of the positions since the
/// last entry, so that threefold repetition is seen inside the tree and in playouts.
///
/// A playout that reaches the turn cap scores as a draw (½) for the search without knowledge
/// (with knowledge, by the evaluation); it is never reported as a game result (RULES.md §9: a
/// capped game is unfinished).
#[derive(Debug)]
pub struct EmergoState {
    pos: Position,
    reps: Repetitions,
    /// Only these moves are searched from this state; cleared by the first move played, so it
    /// restricts the root and nothing below it.
    only: Option<Arc<[Move]>>,
    /// The knowledge the search uses, if any (shared by every clone).
    knowledge: Option<Arc<Knowledge>>,
    /// Plies played since this state was the search's root (saturating): how deep the priors
    /// of its moves are searched ([`Knowledge::prior_depth`]).
    ply: u8,
}

impl Clone for EmergoState {
    fn clone(&self) -> Self {
        EmergoState {
            pos: self.pos,
            reps: self.reps.clone(),
            only: self.only.clone(),
            knowledge: self.knowledge.clone(),
            ply: self.ply,
        }
    }

    /// Reuses the window's storage: the search clones the root state once per playout.
    fn clone_from(&mut self, source: &Self) {
        self.pos = source.pos;
        self.reps.copy_from(&source.reps);
        self.only.clone_from(&source.only);
        self.ply = source.ply;
        if !opt_arc_eq(&self.knowledge, &source.knowledge) {
            self.knowledge.clone_from(&source.knowledge);
        }
    }
}

fn opt_arc_eq(a: &Option<Arc<Knowledge>>, b: &Option<Arc<Knowledge>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

impl EmergoState {
    /// The state of a game: its current position and repetition history.
    pub fn from_game(game: &emergo_rules::Game) -> EmergoState {
        EmergoState {
            pos: *game.position(),
            reps: game.repetitions(),
            only: None,
            knowledge: None,
            ply: 0,
        }
    }

    /// A state with no history before `pos`.
    pub fn new(pos: Position) -> EmergoState {
        EmergoState {
            pos,
            reps: Repetitions::new(&pos),
            only: None,
            knowledge: None,
            ply: 0,
        }
    }

    /// Restricts the moves searched from this state (the root) to `moves`, if not empty.
    pub fn with_root_moves(mut self, moves: &[Move]) -> EmergoState {
        self.only = (!moves.is_empty()).then(|| Arc::from(moves));
        self
    }

    /// Gives the search rooted at this state this knowledge (`None`: uniform random playouts,
    /// no evaluation). A knowledge with a blockade discount ([`Weights::blockade`]) for both
    /// sides is tied to the side to move here, the searching side, so that only its leads are
    /// discounted (a copy of the knowledge; without a discount the same one is kept).
    pub fn with_knowledge(mut self, knowledge: Option<Arc<Knowledge>>) -> EmergoState {
        self.knowledge = knowledge.map(|k| {
            if k.weights.blockade > 0 && k.weights.blockade_side.is_none() {
                let mut own = (*k).clone();
                own.weights.blockade_side = Some(self.pos.side_to_move());
                Arc::new(own)
            } else {
                k
            }
        });
        self
    }

    /// The position.
    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// The outcome in rules terms, repetition included.
    pub fn rules_outcome(&self) -> Option<Outcome> {
        self.pos
            .outcome()
            .or_else(|| (self.reps.count_last() >= 3).then_some(Outcome::REPETITION))
    }
}

/// A heavy playout from `pos` (whose repetition window is `reps`): each turn, the best of
/// `k.playout_samples` sampled legal moves by the evaluation of the position after it; ends at
/// `max_turns` like any playout.
fn heavy_playout(
    pos: &mut Position,
    reps: &mut Repetitions,
    k: &Knowledge,
    rng: &mut Rng,
    max_turns: u32,
) -> Playout {
    let mut moves = MoveList::new();
    for turn in 0..max_turns {
        pos.legal_moves_into(&mut moves);
        let list = moves.as_slice();
        if list.is_empty() {
            return finished(pos.outcome(), turn);
        }
        let mut choice = list[uniform_index(rng, list.len())];
        if list.len() > 1 && k.playout_samples > 1 {
            let mut best = i32::MIN;
            for _ in 0..k.playout_samples {
                let m = list[uniform_index(rng, list.len())];
                let mut next = *pos;
                next.play_unchecked(m);
                let score = -crate::eval::evaluate_with(&next, &k.weights);
                if score > best {
                    best = score;
                    choice = m;
                }
            }
        }
        pos.play_unchecked(choice);
        if reps.record(choice, pos) >= 3 {
            return finished(Some(Outcome::REPETITION), turn + 1);
        }
    }
    finished(pos.outcome(), max_turns)
}

fn finished(outcome: Option<Outcome>, turns: u32) -> Playout {
    Playout {
        end: match outcome {
            Some(o) => PlayoutEnd::Finished(to_search_outcome(o)),
            None => PlayoutEnd::Capped { value_for_one: 0.5 },
        },
        turns,
    }
}

fn to_search_player(p: Player) -> SearchPlayer {
    match p {
        Player::White => SearchPlayer::One,
        Player::Black => SearchPlayer::Two,
    }
}

fn to_search_outcome(o: Outcome) -> SearchOutcome {
    match o.result.winner() {
        Some(p) => SearchOutcome::Win(to_search_player(p)),
        None => SearchOutcome::Draw,
    }
}

impl EmergoState {
    /// Priors and values of `moves` ([`Game::move_knowledge`]) from searches `extra` plies
    /// deeper than the expansion's depth at this ply ([`Knowledge::prior_depth`]); none at all
    /// if they cannot be finished by `deadline`.
    fn knowledge_at(
        &self,
        moves: &[Move],
        extra: u32,
        deadline: Option<Instant>,
        priors: &mut Vec<f32>,
        values: &mut Vec<f32>,
    ) {
        priors.clear();
        values.clear();
        let Some(k) = self.knowledge.as_deref() else {
            return;
        };
        // Scores for the mover of the position after each move, captures resolved (searched
        // deeper near the root, see `Knowledge::prior_depth`, and where the search refines).
        let depth = k
            .prior_depth
            .saturating_sub(u32::from(self.ply))
            .saturating_add(extra)
            .min(MAX_KNOWLEDGE_DEPTH);
        // The root's moves may be restricted (`only`): its lists are not the position's.
        let cached = k.cache && self.only.is_none();
        if cached
            && KNOWLEDGE_CACHE.with_borrow(|cache| {
                cache
                    .get(&self.pos, depth, moves.len())
                    .map(|(p, v)| {
                        priors.extend_from_slice(p);
                        values.extend_from_slice(v);
                    })
                    .is_some()
            })
        {
            return;
        }
        for &m in moves {
            let mut next = self.pos;
            next.play_unchecked(m);
            let Some(score) = k.score_by(&next, depth, deadline) else {
                priors.clear();
                values.clear();
                return;
            };
            // The value is the score's; the prior's score may get the bonuses on top.
            values.push(win_probability_scaled(
                score.saturating_neg(),
                k.value_scale,
            ));
            let mut prior_score = -(score as f32);
            if k.sacrifice_bonus != 0.0 && next.has_capture() {
                prior_score += k.sacrifice_bonus;
            }
            if k.threat_bonus != 0.0 && next.max_capture_len_of(self.pos.side_to_move()) > 0 {
                prior_score += k.threat_bonus;
            }
            priors.push(prior_score);
        }
        let top = priors.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let t = k.prior_temperature.max(1.0);
        for p in priors.iter_mut() {
            *p = ((*p - top) / t).exp();
        }
        if cached {
            KNOWLEDGE_CACHE.with_borrow_mut(|cache| cache.put(&self.pos, depth, priors, values));
        }
    }
}

impl Game for EmergoState {
    type Move = Move;

    fn to_move(&self) -> SearchPlayer {
        to_search_player(self.pos.side_to_move())
    }

    fn legal_moves(&self, out: &mut Vec<Move>) {
        out.clear();
        if self.reps.count_last() < 3 {
            // The search lists moves at every node it passes (the tree does not store them), so
            // the list is generated into this thread's buffer rather than a fresh `MoveList`,
            // whose 1.5 KB of inline storage would be initialised and moved every time.
            MOVES.with_borrow_mut(|legal| {
                self.pos.legal_moves_into(legal);
                match &self.only {
                    None => out.extend_from_slice(legal.as_slice()),
                    Some(only) => {
                        out.extend(legal.iter().copied().filter(|m| only.contains(m)));
                    }
                }
            });
        }
    }

    fn play(&mut self, mv: Move) {
        self.only = None;
        self.ply = self.ply.saturating_add(1);
        self.pos.play_unchecked(mv);
        self.reps.record(mv, &self.pos);
    }

    fn outcome(&self) -> Option<SearchOutcome> {
        self.rules_outcome().map(to_search_outcome)
    }

    fn thread_started(&self) {
        if self.knowledge.is_some() {
            Knowledge::forget_searches();
        }
    }

    /// The priors' depth counts from the root: a reused tree's new root is at distance 0.
    fn rerooted(&mut self) {
        self.ply = 0;
    }

    fn evaluate(&self) -> Option<f32> {
        let k = self.knowledge.as_deref()?;
        let p = win_probability_scaled(k.leaf_score(&self.pos), k.value_scale);
        Some(match self.pos.side_to_move() {
            Player::White => p,
            Player::Black => 1.0 - p,
        })
    }

    fn move_knowledge(&self, moves: &[Move], priors: &mut Vec<f32>, values: &mut Vec<f32>) {
        self.knowledge_at(moves, 0, None, priors, values);
    }

    /// Each level searches the moves [`Knowledge::refine_step`] plies deeper than the level
    /// before (the expansion, for level 1).
    fn refine_knowledge(
        &self,
        moves: &[Move],
        level: u32,
        deadline: Option<Instant>,
        priors: &mut Vec<f32>,
        values: &mut Vec<f32>,
    ) {
        let step = self.knowledge.as_deref().map_or(1, |k| k.refine_step);
        self.knowledge_at(moves, level.saturating_mul(step), deadline, priors, values);
    }

    fn playout(&mut self, rng: &mut Rng, max_turns: u32) -> Playout {
        // Borrowed, not cloned: no reference-count traffic on every playout.
        if let Some(k) = self.knowledge.as_deref().filter(|k| k.playout_samples > 1) {
            return heavy_playout(&mut self.pos, &mut self.reps, k, rng, max_turns);
        }
        let p = random_playout(&mut self.pos, &mut self.reps, rng, max_turns);
        finished(p.outcome, p.turns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repetition_is_seen_by_the_adapter() {
        let fen = "9/9/9/9/4a@4/9/9/9/A@8 w 40 0,0";
        let shuffle = ["a1-b2", "e5-d6", "b2-a1", "d6-e5"];
        let mut all: Vec<&str> = shuffle.to_vec();
        all.extend(shuffle);
        let game = emergo_rules::Game::from_fen_and_moves(fen, &all).unwrap();
        let state = EmergoState::from_game(&game);
        assert_eq!(state.outcome(), Some(SearchOutcome::Draw));
        let mut moves = Vec::new();
        state.legal_moves(&mut moves);
        assert!(moves.is_empty());
        // One move earlier the game goes on, and playing the last move ends it.
        let game = emergo_rules::Game::from_fen_and_moves(fen, &all[..7]).unwrap();
        let mut state = EmergoState::from_game(&game);
        assert_eq!(state.outcome(), None);
        state.play("d6-e5".parse().unwrap());
        assert_eq!(state.outcome(), Some(SearchOutcome::Draw));
    }

    #[test]
    fn knowledge_evaluates_and_ranks_moves() {
        // White's e3 may step next to Black's c5: e3-d4 hands over the man (c5xe3), the other
        // steps are safe.
        let pos: Position = "9/9/9/9/2a@6/9/4A@4/9/9 w 40 0,0".parse().unwrap();
        let plain = EmergoState::new(pos);
        assert_eq!(plain.evaluate(), None);
        let (mut out, mut values) = (Vec::new(), Vec::new());
        plain.move_knowledge(&[], &mut out, &mut values);
        assert!(out.is_empty() && values.is_empty());

        let state = plain.with_knowledge(Some(Arc::new(Knowledge::default())));
        let value = state.evaluate().unwrap();
        assert!((0.4..0.6).contains(&value), "{value}");
        let mut moves = Vec::new();
        state.legal_moves(&mut moves);
        state.move_knowledge(&moves, &mut out, &mut values);
        assert_eq!(out.len(), moves.len());
        assert_eq!(values.len(), moves.len());
        let prior_of = |text: &str| {
            let i = moves.iter().position(|m| m.to_string() == text).unwrap();
            out[i]
        };
        assert!(prior_of("e3-d4") * 10.0 < prior_of("e3-f2"), "{out:?}");
        let i = moves.iter().position(|m| m.to_string() == "e3-d4").unwrap();
        assert!(values[i] < 0.4, "{values:?}");
    }

    /// The priors and values of White's moves e3-d4, e3-f2 and e3-f4 in the position of
    /// `knowledge_evaluates_and_ranks_moves` with a second White man on a1, with these bonuses.
    /// e3-d4 steps next to Black's c5: a sacrifice (Black must take, c5xe3) and a threat (d4
    /// could take c5 if White moved again); the other two steps are neither.
    fn step_knowledge(sacrifice: f32, threat: f32) -> ([f32; 3], [f32; 3]) {
        // White's a1 keeps the sacrifice from losing the game outright.
        let pos: Position = "9/9/9/9/2a@6/9/4A@4/9/A@8 w 40 0,0".parse().unwrap();
        let state = EmergoState::new(pos).with_knowledge(Some(Arc::new(Knowledge {
            sacrifice_bonus: sacrifice,
            threat_bonus: threat,
            ..Knowledge::default()
        })));
        let mut moves = Vec::new();
        state.legal_moves(&mut moves);
        let (mut priors, mut values) = (Vec::new(), Vec::new());
        state.move_knowledge(&moves, &mut priors, &mut values);
        let at = |text: &str| moves.iter().position(|m| m.to_string() == text).unwrap();
        let steps = [at("e3-d4"), at("e3-f2"), at("e3-f4")];
        (steps.map(|i| priors[i]), steps.map(|i| values[i]))
    }

    /// Asserts that a bonus of `bonus` centimen multiplied e3-d4's prior, relative to the quiet
    /// steps', by `exp(bonus / T)`, left the quiet steps' ratio alone and changed no value.
    fn assert_only_e3_d4_boosted(
        bonus: f32,
        plain: ([f32; 3], [f32; 3]),
        boosted: ([f32; 3], [f32; 3]),
    ) {
        let t = Knowledge::default().prior_temperature;
        let gain = (boosted.0[0] / boosted.0[1]) / (plain.0[0] / plain.0[1]);
        assert!(
            (gain / (bonus / t).exp() - 1.0).abs() < 1e-3,
            "{gain} {plain:?} {boosted:?}"
        );
        let quiet = (boosted.0[2] / boosted.0[1]) / (plain.0[2] / plain.0[1]);
        assert!((quiet - 1.0).abs() < 1e-4, "{quiet}");
        assert_eq!(plain.1, boosted.1);
    }

    #[test]
    fn a_sacrifice_bonus_raises_a_sacrifices_prior_and_leaves_its_value() {
        let plain = step_knowledge(0.0, 0.0);
        // Without a bonus the sacrifice is behind the safe steps (it loses the man for a while).
        assert!(
            plain.0[0] < plain.0[1] && plain.1[0] < plain.1[1],
            "{plain:?}"
        );
        assert_only_e3_d4_boosted(300.0, plain, step_knowledge(300.0, 0.0));
    }

    #[test]
    fn a_threat_bonus_raises_a_threats_prior_and_leaves_its_value() {
        let plain = step_knowledge(0.0, 0.0);
        assert_only_e3_d4_boosted(250.0, plain, step_knowledge(0.0, 250.0));
        // Both bonuses add up.
        assert_only_e3_d4_boosted(550.0, plain, step_knowledge(300.0, 250.0));
    }

    #[test]
    fn a_reused_trees_new_root_gets_the_roots_priors() {
        // After `Search::advance` the new root is at distance 0 again: its moves are scored as
        // deep as a fresh search's root moves, not two plies shallower.
        let deep = Arc::new(Knowledge {
            prior_depth: 2,
            ..Knowledge::default()
        });
        let pos: Position =
            "2A@1A@1a@2/7AC1/A@8/3a@5/A@1B@3a@1a@/7a@1/4A@3a@/3AB3A@1/4A@1a@1A@ b 29 0,0"
                .parse()
                .unwrap();
        let root = EmergoState::new(pos).with_knowledge(Some(deep.clone()));
        let params = emergo_mcts::SearchParams {
            max_playouts: Some(300),
            ..emergo_mcts::SearchParams::default()
        };
        let mut search = emergo_mcts::Search::new(root.clone(), params);
        let first = search.run().best_move.unwrap();
        let mut after = root.clone();
        after.play(first);
        let mut replies = Vec::new();
        after.legal_moves(&mut replies);
        search.advance(&[first, replies[0]]);
        let fresh = EmergoState::new(*search.root_state().position()).with_knowledge(Some(deep));
        let mut moves = Vec::new();
        fresh.legal_moves(&mut moves);
        let knowledge = |state: &EmergoState| {
            let (mut priors, mut values) = (Vec::new(), Vec::new());
            state.move_knowledge(&moves, &mut priors, &mut values);
            values
        };
        assert_eq!(knowledge(search.root_state()), knowledge(&fresh));
    }

    #[test]
    fn a_seeded_search_does_not_depend_on_what_the_thread_searched_before() {
        // The default engine searches priors with this thread's alpha-beta searcher; it forgets
        // its table, killers and history before each batch, so the same seeded search with the
        // same playout budget gives the same tree the second time, after other searches. With
        // the knowledge cache too: it is emptied as each search starts.
        let mut cached = crate::MctsConfig::strong();
        cached.set("kcache", "on").unwrap();
        for config in [crate::MctsConfig::strong(), cached] {
            same_search_after_others(&config);
        }
    }

    fn same_search_after_others(config: &crate::MctsConfig) {
        let run = |fen: &str| {
            let state =
                EmergoState::new(fen.parse().unwrap()).with_knowledge(config.shared_knowledge());
            let mut params = emergo_mcts::SearchParams {
                max_playouts: Some(2_000),
                seed: 7,
                ..emergo_mcts::SearchParams::default()
            };
            config.apply(&mut params);
            let snap = emergo_mcts::Search::new(state, params).run();
            assert!(snap.refinements > 0);
            snap.moves
                .iter()
                .map(|m| (m.mv, m.visits))
                .collect::<Vec<_>>()
        };
        let fens = [
            "2A@1A@1a@2/7AC1/A@8/3a@5/A@1B@3a@1a@/7a@1/4A@3a@/3AB3A@1/4A@1a@1A@ b 29 0,0",
            "4A@1A@1a@/3A@1A@3/AA1B@3a@1a@/7a@1/A@3a@1a@1a@/1A@7/A@1A@5a@/9/A@1a@1a@1a@2 b 29 0,0",
        ];
        let first = run(fens[0]);
        run(fens[1]);
        assert_eq!(run(fens[0]), first);
    }

    #[test]
    fn refined_knowledge_gives_up_at_the_deadline() {
        // The opening's 40 entries searched 4 plies deep take tens of milliseconds: with the
        // deadline already past, the answer is given up and nothing is changed.
        let state = EmergoState::new(Position::initial())
            .with_knowledge(Some(Arc::new(Knowledge::default())));
        let mut moves = Vec::new();
        state.legal_moves(&mut moves);
        let (mut priors, mut values) = (vec![1.0], vec![0.5]);
        let past = Instant::now();
        state.refine_knowledge(&moves, 4, Some(past), &mut priors, &mut values);
        assert!(priors.is_empty() && values.is_empty());
        // A deadline far away changes nothing.
        let later = Instant::now() + std::time::Duration::from_secs(600);
        state.refine_knowledge(&moves, 1, Some(later), &mut priors, &mut values);
        assert_eq!((priors.len(), values.len()), (moves.len(), moves.len()));
    }

    #[test]
    fn prior_depth_searches_the_root_moves_deeper() {
        let pos: Position = "9/9/9/9/2a@6/9/4A@4/9/9 w 40 0,0".parse().unwrap();
        let deep = Knowledge {
            prior_depth: 2,
            ..Knowledge::default()
        };
        let state = EmergoState::new(pos).with_knowledge(Some(Arc::new(deep.clone())));
        let mut moves = Vec::new();
        state.legal_moves(&mut moves);
        let (mut priors, mut values) = (Vec::new(), Vec::new());
        state.move_knowledge(&moves, &mut priors, &mut values);
        // At the root each move is scored by a 2-ply search; one ply down by a 1-ply search.
        let expected = |pos: &Position, m: Move, depth: u32| {
            let mut next = *pos;
            next.play_unchecked(m);
            win_probability_scaled(-deep.score_at_depth(&next, depth), deep.value_scale)
        };
        for (i, &m) in moves.iter().enumerate() {
            assert_eq!(values[i], expected(&pos, m, 2), "{m}");
        }
        let mut child = state.clone();
        child.play(moves[0]);
        let mut replies = Vec::new();
        child.legal_moves(&mut replies);
        child.move_knowledge(&replies, &mut priors, &mut values);
        let child_pos = *child.position();
        for (i, &m) in replies.iter().enumerate() {
            assert_eq!(values[i], expected(&child_pos, m, 1), "{m}");
        }
        // Refined knowledge searches `level` plies deeper than the expansion did, here and
        // below the depth where expansions stop searching.
        child.refine_knowledge(&replies, 2, None, &mut priors, &mut values);
        for (i, &m) in replies.iter().enumerate() {
            assert_eq!(values[i], expected(&child_pos, m, 3), "{m}");
        }
        let mut grandchild = child.clone();
        grandchild.play(replies[0]);
        grandchild.play({
            let mut third = Vec::new();
            grandchild.legal_moves(&mut third);
            third[0]
        });
        let deep_pos = *grandchild.position();
        let mut later = Vec::new();
        grandchild.legal_moves(&mut later);
        grandchild.refine_knowledge(&later, 1, None, &mut priors, &mut values);
        for (i, &m) in later.iter().enumerate() {
            assert_eq!(values[i], expected(&deep_pos, m, 1), "{m}");
        }
        // With two plies per level, level 1 there searches 2 plies, level 2 at the child 1 + 4.
        let stepped = Arc::new(Knowledge {
            refine_step: 2,
            ..deep.clone()
        });
        let grandchild = grandchild.with_knowledge(Some(stepped.clone()));
        grandchild.refine_knowledge(&later, 1, None, &mut priors, &mut values);
        for (i, &m) in later.iter().enumerate() {
            assert_eq!(values[i], expected(&deep_pos, m, 2), "{m}");
        }
        let child = child.with_knowledge(Some(stepped));
        child.refine_knowledge(&replies, 2, None, &mut priors, &mut values);
        for (i, &m) in replies.iter().enumerate() {
            assert_eq!(values[i], expected(&child_pos, m, 5), "{m}");
        }
    }

    #[test]
    fn heavy_playouts_finish_or_cap() {
        let mut rng = <Rng as rand_xoshiro::rand_core::SeedableRng>::seed_from_u64(5);
        let state = EmergoState::new(Position::initial())
            .with_knowledge(Some(Arc::new(Knowledge::default())));
        let mut s = state.clone();
        let p = s.playout(&mut rng, 10);
        assert_eq!(p.turns, 10);
        let mut s = state.clone();
        let p = s.playout(&mut rng, 1000);
        assert!(matches!(p.end, PlayoutEnd::Finished(_)), "{p:?}");
    }

    #[test]
    fn a_blockade_discount_is_tied_to_the_searching_side() {
        let mut config = crate::MctsConfig::strong();
        config.set("blockade", "50").unwrap();
        let black: Position = "9/9/9/9/9/9/9/9/9 b 1 11,12".parse().unwrap();
        let state = EmergoState::new(black).with_knowledge(config.shared_knowledge());
        let k = state.knowledge.as_ref().unwrap();
        assert_eq!(k.weights.blockade_side, Some(Player::Black));
        assert_eq!(k.weights.blockade, 50);
        // Without a discount the shared knowledge itself is kept.
        let plain = crate::MctsConfig::strong().shared_knowledge();
        let state = EmergoState::new(black).with_knowledge(plain.clone());
        assert!(Arc::ptr_eq(
            state.knowledge.as_ref().unwrap(),
            plain.as_ref().unwrap()
        ));
    }
}
