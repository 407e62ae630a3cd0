//! Who plays whom, with which colour, from which opening.
//!
//! Games are ordered by opening pair first and pairing second, so a run stopped half way has
//! played every pairing about equally often. Each opening is played twice per pairing with the
//! colours swapped, which cancels most of the opening's own bias.

use emergo_rules::{Game, Position};

use crate::players::{MovePicker, RandomPlayer};

/// Where openings come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpeningSource {
    /// The first `n` turns played at random from the initial position (seeded).
    Random(usize),
    /// Openings read from a file, used in order and cycled.
    List(Vec<Opening>),
}

/// An opening: a start position and moves played from it. Engines start thinking after them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    /// The start FEN (normalised by the rules core, so tree reuse sees one spelling).
    pub fen: String,
    /// Moves from the FEN.
    pub moves: Vec<String>,
}

impl Opening {
    /// The opening as one line of an openings file: `FEN` or `FEN moves m1 m2 ...`.
    pub fn describe(&self) -> String {
        if self.moves.is_empty() {
            self.fen.clone()
        } else {
            format!("{} moves {}", self.fen, self.moves.join(" "))
        }
    }

    /// The game after the opening.
    pub fn game(&self) -> Result<Game, String> {
        Game::from_fen_and_moves(&self.fen, &self.moves)
            .map_err(|e| format!("opening {:?}: {e}", self.describe()))
    }
}

/// Parses `--openings`: `random:P` or a file name.
pub fn parse_openings_arg(arg: &str) -> Result<OpeningSource, String> {
    if let Some(n) = arg.strip_prefix("random:") {
        let n: usize = n
            .parse()
            .ok()
            .filter(|&n| n <= 100)
            .ok_or_else(|| format!("--openings {arg:?}: random:P needs P in 0..=100 turns"))?;
        return Ok(OpeningSource::Random(n));
    }
    let text = std::fs::read_to_string(arg)
        .map_err(|e| format!("--openings {arg:?}: cannot read the file: {e}"))?;
    let list = parse_openings_file(&text).map_err(|e| format!("--openings {arg:?}: {e}"))?;
    Ok(OpeningSource::List(list))
}

/// Parses an openings file: one opening per line, `FEN` or `FEN moves m1 m2 ...` (`startpos`
/// stands for the initial position); blank lines and lines starting with `#` are skipped.
/// Every opening is checked with the rules core and must leave the game undecided.
pub fn parse_openings_file(text: &str) -> Result<Vec<Opening>, String> {
    let mut list = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fail = |why: String| format!("line {}: {why}", i + 1);
        let (fen, moves) = match line.split_once(" moves") {
            Some((f, m)) => (f.trim(), m.split_whitespace().map(str::to_owned).collect()),
            None => (line, Vec::new()),
        };
        let fen = if fen == "startpos" {
            Position::initial().to_string()
        } else {
            let pos: Position = fen
                .parse()
                .map_err(|e| fail(format!("invalid FEN {fen:?}: {e}")))?;
            pos.to_string()
        };
        let opening = Opening { fen, moves };
        let game = opening.game().map_err(fail)?;
        if let Some(o) = game.outcome() {
            return Err(fail(format!("the game is already over ({o})")));
        }
        list.push(opening);
    }
    if list.is_empty() {
        return Err("no openings in the file".to_owned());
    }
    Ok(list)
}

/// A random opening of `turns` turns from the initial position. Draws again (with the next
/// seed) in the unlikely case that the game ended during the opening.
pub fn random_opening(turns: usize, seed: u64) -> Opening {
    let mut seed = seed;
    loop {
        let mut player = RandomPlayer::new(seed);
        let mut game = Game::new(Position::initial());
        while game.moves().len() < turns && game.outcome().is_none() {
            match player.pick(&game) {
                Some(m) if game.play(m).is_ok() => {}
                _ => break,
            }
        }
        if game.outcome().is_none() || turns == 0 {
            return Opening {
                fen: Position::initial().to_string(),
                moves: game.moves().iter().map(ToString::to_string).collect(),
            };
        }
        seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    }
}

/// The openings used for `pairs` colour-swapped pairs of games; the same list serves every
/// pairing, so all engines face the same positions.
pub fn openings(source: &OpeningSource, pairs: usize, seed: u64) -> Vec<Opening> {
    (0..pairs)
        .map(|i| match source {
            OpeningSource::Random(turns) => {
                random_opening(*turns, mix(seed, 0x6F70_656E_0000_0000 ^ i as u64))
            }
            OpeningSource::List(list) => list[i % list.len()].clone(),
        })
        .collect()
}

/// Mixes a seed with a stream number (splitmix64), so per-game and per-side seeds derived from
/// one run seed are unrelated.
pub fn mix(seed: u64, stream: u64) -> u64 {
    let mut z = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The engine pairs that meet: every pair (round robin) or the first engine against each other
/// one (gauntlet). Indices into the engine list, the first of each pair listed first.
pub fn pairings(engines: usize, gauntlet: bool) -> Vec<(usize, usize)> {
    if gauntlet {
        (1..engines).map(|j| (0, j)).collect()
    } else {
        (0..engines)
            .flat_map(|i| (i + 1..engines).map(move |j| (i, j)))
            .collect()
    }
}

/// One game to play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduledGame {
    /// 1-based game number (the PGN Round).
    pub number: usize,
    /// Index into the pairings.
    pub pairing: usize,
    /// White's engine index.
    pub white: usize,
    /// Black's engine index.
    pub black: usize,
    /// Index into the openings.
    pub opening: usize,
}

/// All games: `per_pairing` games for every pairing, colours alternating, each opening used for
/// one game with each colour.
pub fn schedule(pairings: &[(usize, usize)], per_pairing: usize) -> Vec<ScheduledGame> {
    let mut games = Vec::new();
    for k in 0..per_pairing {
        for (p, &(a, b)) in pairings.iter().enumerate() {
            let (white, black) = if k % 2 == 0 { (a, b) } else { (b, a) };
            games.push(ScheduledGame {
                number: games.len() + 1,
                pairing: p,
                white,
                black,
                opening: k / 2,
            });
        }
    }
    // Keep the two colour-swapped games of an opening next to each other per pairing.
    games.sort_by_key(|g| (g.opening, g.pairing, g.number));
    for (i, g) in games.iter_mut().enumerate() {
        g.number = i + 1;
    }
    games
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_and_gauntlet() {
        assert_eq!(pairings(3, false), vec![(0, 1), (0, 2), (1, 2)]);
        assert_eq!(pairings(4, true), vec![(0, 1), (0, 2), (0, 3)]);
        assert_eq!(pairings(2, false), pairings(2, true));
    }

    #[test]
    fn colours_alternate_and_openings_pair_up() {
        let p = pairings(3, false);
        let games = schedule(&p, 3);
        assert_eq!(games.len(), 9);
        assert_eq!(
            games.iter().map(|g| g.number).collect::<Vec<_>>(),
            (1..=9).collect::<Vec<_>>()
        );
        for (pi, &(a, b)) in p.iter().enumerate() {
            let mine: Vec<_> = games.iter().filter(|g| g.pairing == pi).collect();
            assert_eq!(mine.len(), 3);
            assert_eq!((mine[0].white, mine[0].black), (a, b));
            assert_eq!((mine[1].white, mine[1].black), (b, a));
            assert_eq!(mine[0].opening, mine[1].opening);
            assert_eq!(mine[2].opening, 1);
        }
    }

    #[test]
    fn random_openings_are_seeded_and_legal() {
        let a = openings(&OpeningSource::Random(2), 3, 7);
        assert_eq!(a, openings(&OpeningSource::Random(2), 3, 7));
        assert_ne!(a, openings(&OpeningSource::Random(2), 3, 8));
        for o in &a {
            assert_eq!(o.moves.len(), 2);
            assert!(o.game().unwrap().outcome().is_none());
        }
        assert!(
            openings(&OpeningSource::Random(0), 1, 7)[0]
                .moves
                .is_empty()
        );
    }

    #[test]
    fn openings_file() {
        let text = "# comment\n\n9/9/9/9/9/9/9/9/9 w 0 12,12\nstartpos moves a1 i9\n\
                    9/9/9/9/9/9/9/9/9 w 0 12,12 moves c3\n";
        let list = parse_openings_file(text).unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[1].moves, ["a1", "i9"]);
        assert_eq!(
            list[1].describe(),
            "9/9/9/9/9/9/9/9/9 w 0 12,12 moves a1 i9"
        );
        let cycled = openings(&OpeningSource::List(list.clone()), 4, 0);
        assert_eq!(cycled[3], list[0]);
        let err = parse_openings_file("startpos moves e5\n").unwrap_err();
        assert!(err.starts_with("line 1:"), "{err}");
        assert!(
            parse_openings_file("bad fen\n")
                .unwrap_err()
                .contains("line 1")
        );
        assert!(parse_openings_file("# nothing\n").is_err());
        assert_eq!(
            parse_openings_arg("random:4").unwrap(),
            OpeningSource::Random(4)
        );
        assert!(parse_openings_arg("random:x").is_err());
        assert!(
            parse_openings_arg("/nonexistent/openings.txt")
                .unwrap_err()
                .contains("/nonexistent/openings.txt")
        );
    }
}
