//! MCTS-Solver with score bounds, as value types: what is proven about a node's game-theoretic
//! value ([`Bounds`], kept per node) and the result the search reports ([`Proven`]).
//!
//! Each node keeps a pessimistic and an optimistic bound on its value for its mover, in half
//! points (0 = loss, 1 = draw, 2 = win), following Cazenave & Saffidine's score-bounded MCTS.
//! A fresh node has `[0, 2]` (nothing known), a finished position has exact bounds, and an
//! expanded node's bounds follow from its children's: for the player to move, the best the
//! children guarantee (`max` of their pessimistic bounds) and the best they allow (`max` of
//! their optimistic bounds). The node is *proven* when the two meet.
//!
//! Partial bounds matter for draws: once one move is proven to draw, the node is "at least a
//! draw", the other moves only need to be shown "at most a draw" (one good reply for the
//! opponent each) instead of being solved exactly, and the search stops spending playouts on
//! moves that cannot beat the draw. Playout results are also clamped into the bounds on backup,
//! so proven facts correct the means above them.

use crate::game::{Outcome, Player};

const LOSS: u8 = 0;
const DRAW: u8 = 1;
const WIN: u8 = 2;

/// Bit layout of [`Bounds::encode`]: pessimistic bound in bits 0-1, `2 - optimistic` in bits
/// 2-3 (so that 0 encodes "nothing known"), plies of an exact result in bits 4-31.
const PLIES_SHIFT: u32 = 4;
const MAX_PLIES: u32 = u32::MAX >> PLIES_SHIFT;

/// Bounds on a node's value for one player (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Bounds {
    /// Guaranteed score, in half points.
    pess: u8,
    /// Best possible score, in half points (`>= pess`).
    opt: u8,
    /// For an exact win or loss: the length of the proven line in plies (shortest win, longest
    /// loss); 0 otherwise.
    plies: u32,
}

impl Bounds {
    /// Nothing known (an unvisited child).
    pub(crate) const UNKNOWN: Bounds = Bounds {
        pess: LOSS,
        opt: WIN,
        plies: 0,
    };

    /// The exact value of a finished position for `mover`.
    pub(crate) fn terminal(outcome: Outcome, mover: Player) -> Bounds {
        let score = match outcome {
            Outcome::Win(winner) if winner == mover => WIN,
            Outcome::Win(_) => LOSS,
            Outcome::Draw => DRAW,
        };
        Bounds {
            pess: score,
            opt: score,
            plies: 0,
        }
    }

    /// The same bounds for the opponent.
    pub(crate) fn flipped(self) -> Bounds {
        Bounds {
            pess: WIN - self.opt,
            opt: WIN - self.pess,
            plies: self.plies,
        }
    }

    /// These bounds for `player`, given they are for `holder`.
    pub(crate) fn for_player(self, holder: Player, player: Player) -> Bounds {
        if holder == player {
            self
        } else {
            self.flipped()
        }
    }

    /// Whether the value is known exactly.
    pub(crate) fn is_exact(self) -> bool {
        self.pess == self.opt
    }

    /// Whether the value is proven to be a win.
    pub(crate) fn is_win(self) -> bool {
        self.pess == WIN
    }

    /// Whether the value is proven to be a loss.
    pub(crate) fn is_loss(self) -> bool {
        self.opt == LOSS
    }

    /// The pessimistic bound in half points.
    pub(crate) fn pess(self) -> u8 {
        self.pess
    }

    /// The optimistic bound in half points.
    pub(crate) fn opt(self) -> u8 {
        self.opt
    }

    /// The plies of an exact win or loss (0 otherwise).
    pub(crate) fn plies(self) -> u32 {
        self.plies
    }

    /// Bounds from half points (`pess <= opt <= 2`).
    #[cfg(test)]
    pub(crate) fn between(pess: u8, opt: u8) -> Bounds {
        Bounds {
            pess,
            opt,
            plies: 0,
        }
    }

    /// Exact bounds for a proven result.
    #[cfg(test)]
    pub(crate) fn from_proven(proven: Proven) -> Bounds {
        let (score, plies) = match proven {
            Proven::Win { plies } => (WIN, plies),
            Proven::Loss { plies } => (LOSS, plies),
            Proven::Draw => (DRAW, 0),
        };
        Bounds {
            pess: score,
            opt: score,
            plies,
        }
    }

    /// The exact result, if proven.
    pub(crate) fn proven(self) -> Option<Proven> {
        match (self.pess, self.opt) {
            (WIN, WIN) => Some(Proven::Win { plies: self.plies }),
            (LOSS, LOSS) => Some(Proven::Loss { plies: self.plies }),
            (DRAW, DRAW) => Some(Proven::Draw),
            _ => None,
        }
    }

    /// `value` (a score in `[0, 1]`) moved into the bounds.
    pub(crate) fn clamp(self, value: f32) -> f32 {
        value.clamp(f32::from(self.pess) / 2.0, f32::from(self.opt) / 2.0)
    }

    /// What is known after learning `newer` too: bounds only tighten, and an exact result, once
    /// known, never changes (so its plies stay those of the first proof). Contradictory bounds
    /// (impossible for a consistent game) are ignored.
    pub(crate) fn merge(self, newer: Bounds) -> Bounds {
        if self.is_exact() {
            return self;
        }
        let pess = self.pess.max(newer.pess);
        let opt = self.opt.min(newer.opt);
        if pess > opt {
            return self;
        }
        Bounds {
            pess,
            opt,
            plies: if pess == opt { newer.plies } else { 0 },
        }
    }

    /// Packs the bounds into a `u32`; 0 means nothing known.
    pub(crate) fn encode(self) -> u32 {
        u32::from(self.pess)
            | (u32::from(WIN - self.opt) << 2)
            | (self.plies.min(MAX_PLIES) << PLIES_SHIFT)
    }

    /// Unpacks [`Bounds::encode`].
    pub(crate) fn decode(raw: u32) -> Bounds {
        Bounds {
            pess: (raw & 3) as u8,
            opt: WIN.saturating_sub(((raw >> 2) & 3) as u8),
            plies: raw >> PLIES_SHIFT,
        }
    }

    /// The bounds of a node for the player to move, from its children's bounds (all for that
    /// player). `None` without children.
    pub(crate) fn combine(children: impl IntoIterator<Item = Bounds>) -> Option<Bounds> {
        let mut any = false;
        let mut pess = LOSS;
        let mut opt = LOSS;
        let mut shortest_win = u32::MAX;
        let mut longest_loss = 0;
        for child in children {
            any = true;
            pess = pess.max(child.pess);
            opt = opt.max(child.opt);
            if child.is_win() {
                shortest_win = shortest_win.min(child.plies);
            }
            longest_loss = longest_loss.max(child.plies);
        }
        let plies = match (pess, opt) {
            (WIN, _) => shortest_win.saturating_add(1),
            // All children are exact losses.
            (_, LOSS) => longest_loss.saturating_add(1),
            _ => 0,
        };
        any.then_some(Bounds { pess, opt, plies })
    }
}

/// A game-theoretic value proven by the solver, from the point of view of a given player (the
/// player making a move, for [`MoveStats::proven`](crate::MoveStats::proven); the side to move, for
/// [`Snapshot::root_proven`](crate::Snapshot::root_proven)).
///
/// `plies` is the length of the proven line from the position (for a move: counting the move
/// itself) to the end of the game, the winner hurrying and the loser resisting *within the part
/// of the tree the solver has proven*. A node is proven won as soon as one winning move is
/// proven, so a shorter win may exist that the search has not proven yet.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Proven {
    /// A forced win, ending the game in `plies` plies.
    Win {
        /// Length of the proven line.
        plies: u32,
    },
    /// A forced loss; the longest resistance proven lasts `plies` plies.
    Loss {
        /// Length of the proven line.
        plies: u32,
    },
    /// A forced draw.
    Draw,
}

impl Proven {
    /// The same result from the opponent's point of view.
    #[must_use]
    pub fn flipped(self) -> Proven {
        match self {
            Proven::Win { plies } => Proven::Loss { plies },
            Proven::Loss { plies } => Proven::Win { plies },
            Proven::Draw => Proven::Draw,
        }
    }

    /// The score: 1 for a win, 0 for a loss, 0.5 for a draw.
    #[must_use]
    pub fn value(self) -> f32 {
        match self {
            Proven::Win { .. } => 1.0,
            Proven::Loss { .. } => 0.0,
            Proven::Draw => 0.5,
        }
    }

    /// One ply longer (the move leading to the position is counted).
    pub(crate) fn one_ply_more(self) -> Proven {
        match self {
            Proven::Win { plies } => Proven::Win { plies: plies + 1 },
            Proven::Loss { plies } => Proven::Loss { plies: plies + 1 },
            Proven::Draw => Proven::Draw,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(score: u8, plies: u32) -> Bounds {
        Bounds {
            pess: score,
            opt: score,
            plies,
        }
    }

    #[test]
    fn encoding_round_trips_and_zero_is_unknown() {
        assert_eq!(Bounds::decode(0), Bounds::UNKNOWN);
        assert_eq!(Bounds::UNKNOWN.encode(), 0);
        for pess in 0..=2 {
            for opt in pess..=2 {
                let b = Bounds {
                    pess,
                    opt,
                    plies: 77,
                };
                assert_eq!(Bounds::decode(b.encode()), b);
            }
        }
    }

    #[test]
    fn combine_follows_minimax() {
        let win = |p| exact(WIN, p);
        let loss = |p| exact(LOSS, p);
        let draw = exact(DRAW, 0);
        let unknown = Bounds::UNKNOWN;
        assert_eq!(Bounds::combine([loss(0), win(4), win(2)]), Some(win(3)));
        assert_eq!(Bounds::combine([loss(2), loss(6)]), Some(loss(7)));
        assert_eq!(Bounds::combine([loss(2), draw]), Some(draw));
        let at_least_draw = Bounds::combine([draw, unknown]);
        assert_eq!(
            at_least_draw,
            Some(Bounds {
                pess: DRAW,
                opt: WIN,
                plies: 0
            })
        );
        let at_most_draw = Bounds {
            pess: LOSS,
            opt: DRAW,
            plies: 0,
        };
        assert_eq!(Bounds::combine([draw, at_most_draw]), Some(draw));
        assert_eq!(Bounds::combine([]), None);
    }

    #[test]
    fn flip_merge_clamp_and_proven() {
        let at_least_draw = Bounds {
            pess: DRAW,
            opt: WIN,
            plies: 0,
        };
        assert_eq!(
            at_least_draw.flipped(),
            Bounds {
                pess: LOSS,
                opt: DRAW,
                plies: 0
            }
        );
        assert_eq!(at_least_draw.clamp(0.2), 0.5);
        assert_eq!(at_least_draw.clamp(0.7), 0.7);
        assert_eq!(at_least_draw.proven(), None);
        let merged = at_least_draw.merge(at_least_draw.flipped());
        assert_eq!(merged.proven(), Some(Proven::Draw));
        assert_eq!(exact(WIN, 3).merge(exact(LOSS, 1)), exact(WIN, 3));
        assert_eq!(
            exact(WIN, 3).flipped().proven(),
            Some(Proven::Loss { plies: 3 })
        );
        assert_eq!(
            Bounds::terminal(Outcome::Win(Player::Two), Player::One).proven(),
            Some(Proven::Loss { plies: 0 })
        );
    }
}
