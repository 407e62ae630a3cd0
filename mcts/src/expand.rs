//! Expansion: giving a leaf its edges, one per legal move, filled with the game's knowledge
//! (normalised priors, static values), or proving it terminal when it has no move.

use std::time::Instant;

use crate::game::{Game, Outcome, Player};
use crate::node::{Child, Expansion, MAX_CHILDREN, Node};
use crate::solver::Bounds;
use crate::tree::Tree;

/// What an expansion did.
pub(crate) enum Expanded {
    /// Edges allocated and published.
    Children,
    /// The position is over: the node is published with no children and proven.
    Terminal(Outcome),
    /// No room in the tree: the node is back to `EMPTY`.
    Full,
}

/// Finishes the expansion of `node` (which the caller moved to `EXPANDING`) with the legal
/// `moves` of its position `state`; `mover` is the node's mover.
pub(crate) fn expand<G: Game>(
    tree: &Tree,
    node: &Node,
    moves: &[G::Move],
    mover: Player,
    state: &G,
    knowledge: &mut MoveKnowledge,
) -> Expanded {
    if moves.is_empty() {
        let outcome = state.outcome().unwrap_or(Outcome::Draw);
        node.merge_bounds(Bounds::terminal(outcome, mover));
        node.publish_expanded(0, 0);
        return Expanded::Terminal(outcome);
    }
    let reserved = u32::try_from(moves.len())
        .ok()
        .filter(|&count| count <= MAX_CHILDREN)
        .and_then(|count| Some((tree.reserve_edges(count)?, count)));
    match reserved {
        Some((first, count)) => {
            knowledge.fetch(state, moves);
            for (i, edge) in (first..first + count).enumerate() {
                tree.edge(edge).init(knowledge.prior(i), knowledge.value(i));
            }
            let values = knowledge.values();
            if let Some(best) = values.and_then(|v| v.iter().copied().reduce(f32::max)) {
                // The node's own minimax value: its best child's, seen from the node's mover.
                let to_move = state.to_move();
                node.set_minimax(if to_move == mover { best } else { 1.0 - best });
            }
            node.publish_expanded(first, count);
            Expanded::Children
        }
        None => {
            node.abort_expand();
            Expanded::Full
        }
    }
}

/// Gives the expanded `node` (edges `first..first + count`, the legal `moves` of its position
/// `state`) the game's refined knowledge of `level` ([`Game::refine_knowledge`]): new priors
/// and static values on its edges, and the new static value as the minimax value of each child
/// created but not expanded yet (an expanded child's comes from its own children). The
/// iteration's minimax backup then carries the change up. `deadline`: by when the game should
/// answer (passed on to it). Returns whether the game gave anything.
#[allow(clippy::too_many_arguments)]
pub(crate) fn refine<G: Game>(
    tree: &Tree,
    first: u32,
    count: u32,
    moves: &[G::Move],
    state: &G,
    level: u32,
    deadline: Option<Instant>,
    knowledge: &mut MoveKnowledge,
) -> bool {
    if moves.len() != count as usize {
        return false;
    }
    state.refine_knowledge(
        moves,
        level,
        deadline,
        &mut knowledge.priors,
        &mut knowledge.values,
    );
    knowledge.normalise(moves.len());
    if knowledge.total.is_none() && knowledge.values().is_none() {
        return false;
    }
    for (i, e) in (first..first + count).enumerate() {
        let edge = tree.edge(e);
        edge.refine(knowledge.prior(i), knowledge.value(i));
        if let (Some(value), Child::Node(c)) = (knowledge.value(i), edge.read().child) {
            let child = tree.node(c);
            if child.expansion() == Expansion::Empty {
                child.set_minimax(value);
            }
        }
    }
    true
}

/// Scratch space for [`Game::move_knowledge`], reused across expansions.
pub(crate) struct MoveKnowledge {
    /// Whether to ask the game at all (only when the parameters use the answers).
    wanted: bool,
    priors: Vec<f32>,
    values: Vec<f32>,
    /// The sum of the clean priors when they are usable (one per move, some positive).
    total: Option<f32>,
}

impl MoveKnowledge {
    pub(crate) fn new(wanted: bool) -> Self {
        MoveKnowledge {
            wanted,
            priors: Vec::new(),
            values: Vec::new(),
            total: None,
        }
    }

    /// Whether the search uses the game's knowledge at all.
    pub(crate) fn wanted(&self) -> bool {
        self.wanted
    }

    /// Asks the game about `moves` (or clears the answers when not wanted).
    fn fetch<G: Game>(&mut self, state: &G, moves: &[G::Move]) {
        if self.wanted {
            state.move_knowledge(moves, &mut self.priors, &mut self.values);
        } else {
            self.priors.clear();
            self.values.clear();
        }
        self.normalise(moves.len());
    }

    /// Checks the answers for `moves` moves: priors are used only if there is one per move
    /// and some are positive, values only if there is one per move.
    fn normalise(&mut self, moves: usize) {
        let total: f32 = self.priors.iter().map(|&p| clean_prior(p)).sum();
        self.total = (self.priors.len() == moves && total > 0.0).then_some(total);
        if self.values.len() != moves {
            self.values.clear();
        }
    }

    /// The normalised prior of move `i`, if the game gave priors.
    fn prior(&self, i: usize) -> Option<f32> {
        self.total.map(|total| clean_prior(self.priors[i]) / total)
    }

    /// The static value of move `i`, if the game gave values.
    fn value(&self, i: usize) -> Option<f32> {
        self.values.get(i).copied()
    }

    /// Every move's static value, if the game gave values.
    fn values(&self) -> Option<&[f32]> {
        (!self.values.is_empty()).then_some(&self.values)
    }
}

/// A prior as the search uses it: negative and NaN values count as 0.
fn clean_prior(p: f32) -> f32 {
    if p > 0.0 { p.min(f32::MAX) } else { 0.0 }
}
