//! A readable text diagram of a position, for terminals and logs.

use std::fmt;

use crate::position::Position;
use crate::square::Square;
use crate::unit::{Player, Unit};

/// Displays a position as a board diagram; see [`Position::diagram`].
#[derive(Clone, Copy, Debug)]
pub struct Diagram<'a>(&'a Position);

/// How a unit is written in a diagram: owner letter and controllers, then the prisoners' letter
/// and count if any. `W3` is three white men; `B2w1` is two black men over one white prisoner.
pub fn unit_label(u: Unit) -> String {
    let (own, other) = match u.owner {
        Player::White => ('W', 'b'),
        Player::Black => ('B', 'w'),
    };
    if u.prisoners == 0 {
        format!("{own}{}", u.controllers)
    } else {
        format!("{own}{}{other}{}", u.controllers, u.prisoners)
    }
}

impl Position {
    /// A text diagram of the board (rank 9 at the top), showing every stack, the men in hand
    /// and whose turn it is.
    ///
    /// ```
    /// use emergo_rules::Position;
    /// let pos: Position = "9/9/9/9/4CB4/9/9/9/9 b 5 9,10".parse().unwrap();
    /// let text = pos.diagram().to_string();
    /// assert!(text.contains("W3b2"));
    /// assert!(text.contains("Black to move"));
    /// ```
    pub fn diagram(&self) -> Diagram<'_> {
        Diagram(self)
    }
}

impl fmt::Display for Diagram<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pos = self.0;
        const W: usize = 6;
        write!(f, "   ")?;
        for file in 0..9u8 {
            write!(f, "{:^W$}", (b'a' + file) as char)?;
        }
        writeln!(f)?;
        for rank in (0..9u8).rev() {
            write!(f, "{:>2} ", rank + 1)?;
            for file in 0..9u8 {
                let cell = match Square::from_coords(file, rank) {
                    None => String::new(),
                    Some(sq) => pos.unit_at(sq).map_or_else(|| ".".to_owned(), unit_label),
                };
                write!(f, "{cell:^W$}")?;
            }
            writeln!(f, "{:<2}", rank + 1)?;
        }
        write!(f, "   ")?;
        for file in 0..9u8 {
            write!(f, "{:^W$}", (b'a' + file) as char)?;
        }
        writeln!(f)?;
        let side = match pos.side_to_move() {
            Player::White => "White",
            Player::Black => "Black",
        };
        writeln!(
            f,
            "{side} to move, {} {} played; in hand: White {}, Black {}",
            pos.turns(),
            if pos.turns() == 1 { "turn" } else { "turns" },
            pos.in_hand(Player::White),
            pos.in_hand(Player::Black)
        )?;
        if let Some(o) = pos.outcome() {
            writeln!(f, "Game over: {o}")?;
        }
        Ok(())
    }
}
