//! The Emergo adapter for the generic MCTS: a position plus its repetition window.

use std::sync::Arc;

use emergo_mcts::{
    Game, Outcome as SearchOutcome, Player as SearchPlayer, Playout, PlayoutEnd, Rng,
};
use emergo_rules::{Move, Outcome, Player, Position, Repetitions, random_playout};

/// An Emergo game state for the search: the position and the hashes of the positions since the
/// last entry, so that threefold repetition is seen inside the tree and in playouts.
///
/// A playout that reaches the turn cap scores as a draw (½) for the search; it is never reported
/// as a game result (RULES.md §9: a capped game is unfinished). Only 1.5% of uniformly random
/// games from the start last 400 turns, so a cleverer estimate would change little.
#[derive(Debug)]
pub struct EmergoState {
    pos: Position,
    reps: Repetitions,
    /// Only these moves are searched from this state; cleared by the first move played, so it
    /// restricts the root and nothing below it.
    only: Option<Arc<[Move]>>,
}

impl Clone for EmergoState {
    fn clone(&self) -> Self {
        EmergoState {
            pos: self.pos,
            reps: self.reps.clone(),
            only: self.only.clone(),
        }
    }

    /// Reuses the window's storage: the search clones the root state once per playout.
    fn clone_from(&mut self, source: &Self) {
        self.pos = source.pos;
        self.reps.copy_from(&source.reps);
        self.only.clone_from(&source.only);
    }
}

impl EmergoState {
    /// The state of a game: its current position and repetition history.
    pub fn from_game(game: &emergo_rules::Game) -> EmergoState {
        EmergoState {
            pos: *game.position(),
            reps: game.repetitions(),
            only: None,
        }
    }

    /// A state with no history before `pos`.
    pub fn new(pos: Position) -> EmergoState {
        EmergoState {
            pos,
            reps: Repetitions::new(&pos),
            only: None,
        }
    }

    /// Restricts the moves searched from this state (the root) to `moves`, if not empty.
    pub fn with_root_moves(mut self, moves: &[Move]) -> EmergoState {
        self.only = (!moves.is_empty()).then(|| Arc::from(moves));
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

impl Game for EmergoState {
    type Move = Move;

    fn to_move(&self) -> SearchPlayer {
        to_search_player(self.pos.side_to_move())
    }

    fn legal_moves(&self, out: &mut Vec<Move>) {
        out.clear();
        if self.reps.count_last() < 3 {
            let legal = self.pos.legal_moves();
            match &self.only {
                None => out.extend(legal.iter().copied()),
                Some(only) => out.extend(legal.iter().copied().filter(|m| only.contains(m))),
            }
        }
    }

    fn play(&mut self, mv: Move) {
        self.only = None;
        self.pos.play_unchecked(mv);
        self.reps.record(mv, &self.pos);
    }

    fn outcome(&self) -> Option<SearchOutcome> {
        self.rules_outcome().map(to_search_outcome)
    }

    fn playout(&mut self, rng: &mut Rng, max_turns: u32) -> Playout {
        let p = random_playout(&mut self.pos, &mut self.reps, rng, max_turns);
        let end = match p.outcome {
            Some(o) => PlayoutEnd::Finished(to_search_outcome(o)),
            None => PlayoutEnd::Capped { value_for_one: 0.5 },
        };
        Playout {
            end,
            turns: p.turns,
        }
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
}
