//! A readable text diagram of a position, for terminals and logs.

use std::fmt;

use crate::position::Position;
use crate::square::Square;
use crate::unit::{Player, Unit};

/// Displays a position as a board diagram; see [`Position::diagram`].
#[derive(Clone, Copy, Debug)]
pub struct Diagram<'a> {
    pos: &'a Position,
    /// Seen from Black's side: rank 1 at the top, file i on the left.
    from_black: bool,
}

impl Diagram<'_> {
    /// The same diagram seen from Black's side of the board (rank 1 at the top, file i on the
    /// left), for a player of Black.
    ///
    /// ```
    /// use emergo_rules::Position;
    /// let pos: Position = "9/9/9/9/9/9/9/9/A@8 b 1 11,12".parse().unwrap();
    /// let text = pos.diagram().from_black().to_string();
    /// let top = text.lines().nth(1).unwrap();
    /// // Rank 1 on top, and a1 (White's man) at its right end.
    /// assert!(top.trim_start().starts_with("1 "));
    /// assert!(top.trim_end().trim_end_matches('1').trim_end().ends_with("W1"));
    /// assert!(text.starts_with("     i"));
    /// ```
    pub fn from_black(self) -> Self {
        Diagram {
            from_black: true,
            ..self
        }
    }
}

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
        Diagram {
            pos: self,
            from_black: false,
        }
    }
}

impl fmt::Display for Diagram<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pos = self.pos;
        const W: usize = 6;
        // White's view: rank 9 at the top, files a to i; Black's: the board turned round.
        let flip = self.from_black;
        let files = (0..9u8).map(move |i| if flip { 8 - i } else { i });
        let ranks = (0..9u8).map(move |i| if flip { i } else { 8 - i });
        write!(f, "   ")?;
        for file in files.clone() {
            write!(f, "{:^W$}", (b'a' + file) as char)?;
        }
        writeln!(f)?;
        for rank in ranks {
            write!(f, "{:>2} ", rank + 1)?;
            for file in files.clone() {
                let cell = match Square::from_coords(file, rank) {
                    None => String::new(),
                    Some(sq) => pos.unit_at(sq).map_or_else(|| ".".to_owned(), unit_label),
                };
                write!(f, "{cell:^W$}")?;
            }
            writeln!(f, "{:<2}", rank + 1)?;
        }
        write!(f, "   ")?;
        for file in files.clone() {
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
