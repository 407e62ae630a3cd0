//! Two tiny games for examples, tests and benchmarks: [`TicTacToe`] and [`Nim`].

use crate::game::{Game, Outcome, Player};

/// Tic-tac-toe. [`Player::One`] plays X and moves first. Cells are numbered 0..9 row by row.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct TicTacToe {
    /// Bit `i` set: X on cell `i`.
    x: u16,
    /// Bit `i` set: O on cell `i`.
    o: u16,
}

/// The eight lines, as cell masks.
const LINES: [u16; 8] = [
    0b000_000_111,
    0b000_111_000,
    0b111_000_000,
    0b001_001_001,
    0b010_010_010,
    0b100_100_100,
    0b100_010_001,
    0b001_010_100,
];

/// Whether the cells in `cells` include a whole line.
fn has_line(cells: u16) -> bool {
    for line in LINES {
        if cells & line == line {
            return true;
        }
    }
    false
}

impl TicTacToe {
    /// The empty board.
    #[must_use]
    pub fn new() -> Self {
        TicTacToe::default()
    }

    /// A board from 9 cells row by row, `X`, `O` or `.` (other characters are ignored, so
    /// `"X.O/.X./..O"` works). The side to move follows from the counts (X when equal). `None`
    /// if there are not exactly 9 cells or the counts are impossible.
    #[must_use]
    pub fn from_cells(cells: &str) -> Option<Self> {
        let mut board = TicTacToe::new();
        let mut i = 0;
        for c in cells.chars() {
            match c {
                'X' | 'x' => board.x |= 1 << i,
                'O' | 'o' => board.o |= 1 << i,
                '.' => {}
                _ => continue,
            }
            i += 1;
            if i > 9 {
                return None;
            }
        }
        let (xs, os) = (board.x.count_ones(), board.o.count_ones());
        (i == 9 && (xs == os || xs == os + 1)).then_some(board)
    }

    /// The player with three in a row, if any.
    #[must_use]
    pub fn winner(&self) -> Option<Player> {
        if has_line(self.x) {
            Some(Player::One)
        } else if has_line(self.o) {
            Some(Player::Two)
        } else {
            None
        }
    }
}

impl Game for TicTacToe {
    type Move = u8;

    fn to_move(&self) -> Player {
        if self.x.count_ones() == self.o.count_ones() {
            Player::One
        } else {
            Player::Two
        }
    }

    fn legal_moves(&self, out: &mut Vec<u8>) {
        out.clear();
        if self.outcome().is_none() {
            let full = self.x | self.o;
            out.extend((0..9).filter(|&i| full & (1 << i) == 0));
        }
    }

    fn play(&mut self, mv: u8) {
        match self.to_move() {
            Player::One => self.x |= 1 << mv,
            Player::Two => self.o |= 1 << mv,
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        match self.winner() {
            Some(player) => Some(Outcome::Win(player)),
            None if (self.x | self.o) == 0b111_111_111 => Some(Outcome::Draw),
            None => None,
        }
    }
}

/// Subtraction Nim: take 1 to `max_take` stones from a pile; whoever takes the last stone wins.
/// The side to move loses iff the pile is a multiple of `max_take + 1`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Nim {
    /// Stones left.
    pub pile: u32,
    /// Most stones one move may take.
    pub max_take: u32,
    /// The side to move.
    pub to_move: Player,
}

impl Nim {
    /// A pile of `pile` stones, [`Player::One`] to move.
    #[must_use]
    pub fn new(pile: u32, max_take: u32) -> Self {
        Nim {
            pile,
            max_take,
            to_move: Player::One,
        }
    }
}

impl Game for Nim {
    /// Number of stones taken.
    type Move = u32;

    fn to_move(&self) -> Player {
        self.to_move
    }

    fn legal_moves(&self, out: &mut Vec<u32>) {
        out.clear();
        out.extend(1..=self.max_take.min(self.pile));
    }

    fn play(&mut self, mv: u32) {
        self.pile -= mv;
        self.to_move = self.to_move.other();
    }

    fn outcome(&self) -> Option<Outcome> {
        (self.pile == 0).then(|| Outcome::Win(self.to_move.other()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tic_tac_toe_rules() {
        let mut t = TicTacToe::new();
        let mut moves = Vec::new();
        t.legal_moves(&mut moves);
        assert_eq!(moves.len(), 9);
        for mv in [0, 3, 1, 4] {
            t.play(mv);
        }
        assert_eq!(t.to_move(), Player::One);
        assert_eq!(t.outcome(), None);
        t.play(2);
        assert_eq!(t.outcome(), Some(Outcome::Win(Player::One)));
        t.legal_moves(&mut moves);
        assert!(moves.is_empty());
        assert_eq!(TicTacToe::from_cells("XXX/OO./..."), Some(t));
        assert_eq!(TicTacToe::from_cells("XXX/OO."), None);
        assert_eq!(TicTacToe::from_cells("XXX/O../..."), None);
        let draw = TicTacToe::from_cells("XOX/XOO/OXX");
        assert_eq!(draw.and_then(|d| d.outcome()), Some(Outcome::Draw));
    }

    #[test]
    fn nim_rules() {
        let mut n = Nim::new(5, 3);
        let mut moves = Vec::new();
        n.legal_moves(&mut moves);
        assert_eq!(moves, [1, 2, 3]);
        n.play(3);
        n.legal_moves(&mut moves);
        assert_eq!(moves, [1, 2]);
        n.play(2);
        assert_eq!(n.outcome(), Some(Outcome::Win(Player::Two)));
    }
}
