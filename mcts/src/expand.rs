//! Expansion: giving a leaf its edges, one per legal move, filled with the game's knowledge
//! (normalised priors, static values), or proving it terminal when it has no move.

use crate::game::{Game, Outcome, Player};
use crate::node::{MAX_CHILDREN, Node};
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
            let priors = &knowledge.priors;
            let total: f32 = priors.iter().map(|&p| clean_prior(p)).sum();
            let normalised = priors.len() == moves.len() && total > 0.0;
            let values = (knowledge.values.len() == moves.len()).then_some(&knowledge.values);
            for (i, edge) in (first..first + count).enumerate() {
                let prior = normalised.then(|| clean_prior(priors[i]) / total);
                tree.edge(edge).init(prior, values.map(|v| v[i]));
            }
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

/// Scratch space for [`Game::move_knowledge`], reused across expansions.
pub(crate) struct MoveKnowledge {
    /// Whether to ask the game at all (only when the parameters use the answers).
    wanted: bool,
    priors: Vec<f32>,
    values: Vec<f32>,
}

impl MoveKnowledge {
    pub(crate) fn new(wanted: bool) -> Self {
        MoveKnowledge {
            wanted,
            priors: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Asks the game about `moves` (or clears the answers when not wanted).
    fn fetch<G: Game>(&mut self, state: &G, moves: &[G::Move]) {
        if self.wanted {
            state.move_knowledge(moves, &mut self.priors, &mut self.values);
        } else {
            self.priors.clear();
            self.values.clear();
        }
    }
}

/// A prior as the search uses it: negative and NaN values count as 0.
fn clean_prior(p: f32) -> f32 {
    if p > 0.0 { p.min(f32::MAX) } else { 0.0 }
}
