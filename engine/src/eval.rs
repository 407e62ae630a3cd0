//! The static evaluation of an Emergo position, shared by the alpha-beta engine and the MCTS.
//!
//! A score is in *centimen* (100 = one man) from the point of view of the side to move. It is
//! only meaningful for a *quiet* position, one where the side to move has no capture: captures
//! are compulsory, so a position with a capture pending is resolved by the quiescence search
//! ([`crate::alphabeta::quiesce`]) before anything is evaluated statically. (The function still
//! answers for such positions, with a rough bonus for the pending capture.)
//!
//! # Features
//!
//! [`features`] lists them (material, threats against and by the side to move, fragile and edge
//! prisoners, tall units, mobility, men in hand, units, attacked units, prisoners held), each a
//! difference between the side to move and the opponent or a one-sided threat measure. The
//! score is their dot product with [`Weights`]. Material dominates: Emergo is won by capturing.
//! The shipped weights (`engine/weights.txt`) are the hand-set ones, [`Weights::hand_set`]:
//! weights fitted by logistic regression of self-play results on the features
//! ([`crate::learn`], `emergo learn-eval`) measured no gain (`docs/STRENGTH.md`).
//!
//! Scores are turned into a win probability by a logistic curve ([`win_probability`]).
//!
//! Weights may carry a learned correction ([`Weights::net`], [`crate::value_net`]): a quiet
//! position's score is then the linear score corrected by the network. The default MCTS engine
//! uses the shipped network; `Weights::default()` and the alpha-beta engine do not.

use emergo_rules::{Bitboard, Player, Position, Square};

/// A learned correction of quiet positions' scores, applied to the linear score. Declared here
/// and implemented by the value network ([`crate::value_net::ValueNet`]), so that the
/// evaluation does not depend on the network's module, which builds on this one.
pub trait Correction: Sync + std::fmt::Debug {
    /// The corrected score of the quiet position `pos`, whose [`features`] and linear score
    /// are given, in centimen for the side to move.
    fn correct(&self, pos: &Position, features: &[i32; FEATURES], linear: i32) -> i32;

    /// A few words for engine descriptions.
    fn describe(&self) -> String;
}

/// Number of evaluation features.
pub const FEATURES: usize = 12;

/// The features, in [`Weights::values`] order, with a short name each (weights files, reports).
pub const FEATURE_NAMES: [&str; FEATURES] = [
    "material",
    "threat_against",
    "extra_attacked",
    "edge_units",
    "fragile_prisoners",
    "edge_prisoners",
    "tall",
    "mobility",
    "in_hand",
    "units",
    "attacked_units",
    "prisoners_held",
];

/// Weights of the evaluation features, in centimen per unit of the feature (see
/// [`features`] for what each measures).
#[derive(Clone, Copy, Debug)]
pub struct Weights {
    /// One weight per feature, in [`FEATURE_NAMES`] order.
    pub values: [i32; FEATURES],
    /// Per man of the longest chain the side to move must play now (non-quiet positions only;
    /// searches resolve those with the quiescence search, so this is a rough fallback).
    pub pending_capture: i32,
    /// The most of a quiet position's lead, in percent, given up when the side behind has a
    /// *stuck* unit (see [`blockade_discount`]; 0: off, the default everywhere: measured not to
    /// help, `docs/STRENGTH.md`). Not a feature weight: it scales the score, so it is kept apart
    /// from [`Weights::values`] and the learned correction.
    pub blockade: i32,
    /// Whose leads [`Weights::blockade`] discounts: the searching side's only (set by
    /// [`crate::EmergoState::with_knowledge`] for each search), or both sides' (`None`).
    /// Measured against alpha-beta, discounting both sides' leads also talked the engine into
    /// trailing positions with a stuck unit of its own, which it then lost; the alpha-beta
    /// opponent knows how to draw them, the engine does not.
    pub blockade_side: Option<Player>,
    /// A learned correction of quiet positions' scores ([`crate::value_net`]), or none.
    /// A `'static` reference keeps the weights `Copy` for the searches that hold them by value;
    /// networks are loaded once per process ([`crate::value_net::load`]).
    pub net: Option<&'static dyn Correction>,
}

impl PartialEq for Weights {
    /// The same weights and the same network (the same loaded one: networks are compared by
    /// address, as each file is loaded once).
    fn eq(&self, other: &Weights) -> bool {
        self.values == other.values
            && self.pending_capture == other.pending_capture
            && self.blockade == other.blockade
            && self.blockade_side == other.blockade_side
            && match (self.net, other.net) {
                (None, None) => true,
                (Some(a), Some(b)) => std::ptr::addr_eq(a, b),
                _ => false,
            }
    }
}

impl Default for Weights {
    /// The weights shipped in `engine/weights.txt` (see [`Weights::parse`]; `emergo learn-eval`
    /// can refit them), without a network; the hand-set ones if that file were unreadable.
    fn default() -> Self {
        Weights::parse(include_str!("../weights.txt")).unwrap_or_else(|_| Weights::hand_set())
    }
}

impl Weights {
    /// The hand-set weights of the first evaluation.
    pub fn hand_set() -> Self {
        Weights {
            values: [100, -55, -25, 0, -12, 6, 6, 3, 0, 0, 0, 0],
            pending_capture: 90,
            blockade: 0,
            blockade_side: None,
            net: None,
        }
    }

    /// Material only (a reference point for matches).
    pub fn material_only() -> Self {
        let mut values = [0; FEATURES];
        values[0] = 100;
        Weights {
            values,
            pending_capture: 90,
            blockade: 0,
            blockade_side: None,
            net: None,
        }
    }

    /// The weight of a feature by name.
    pub fn get(&self, name: &str) -> Option<i32> {
        FEATURE_NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| self.values[i])
    }

    /// Sets the weight of a feature by name; `false` if there is no such feature.
    pub fn set(&mut self, name: &str, value: i32) -> bool {
        match FEATURE_NAMES.iter().position(|n| *n == name) {
            Some(i) => {
                self.values[i] = value;
                true
            }
            None => false,
        }
    }

    /// Parses a weights file: `name value` per line (`#` comments, blank lines ignored), every
    /// feature once, plus `pending_capture`, and optionally `blockade` (0 to 100; 0 if absent).
    pub fn parse(text: &str) -> Result<Weights, String> {
        let mut w = Weights {
            values: [i32::MIN; FEATURES],
            pending_capture: i32::MIN,
            blockade: 0,
            blockade_side: None,
            net: None,
        };
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let mut parts = line.split_whitespace();
            let (Some(name), Some(value), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(format!("line {}: expected `name value`", i + 1));
            };
            let value: i32 = value
                .parse()
                .ok()
                .filter(|v: &i32| v.abs() <= 10_000)
                .ok_or_else(|| format!("line {}: {value:?} is not a weight", i + 1))?;
            if name == "pending_capture" {
                w.pending_capture = value;
            } else if name == "blockade" {
                if !(0..=100).contains(&value) {
                    return Err(format!("line {}: blockade {value} is not 0 to 100", i + 1));
                }
                w.blockade = value;
            } else if !w.set(name, value) {
                return Err(format!("line {}: unknown feature {name:?}", i + 1));
            }
        }
        if let Some(i) = w.values.iter().position(|&v| v == i32::MIN) {
            return Err(format!("feature {:?} missing", FEATURE_NAMES[i]));
        }
        if w.pending_capture == i32::MIN {
            return Err("pending_capture missing".to_owned());
        }
        Ok(w)
    }

    /// The weights as a file [`parse`](Weights::parse) reads back.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (name, v) in FEATURE_NAMES.iter().zip(self.values) {
            out.push_str(&format!("{name} {v}\n"));
        }
        out.push_str(&format!("pending_capture {}\n", self.pending_capture));
        if self.blockade != 0 {
            out.push_str(&format!("blockade {}\n", self.blockade));
        }
        out
    }
}

/// Score of a won position (for the winner), before subtracting the distance to the win.
pub const WIN: i32 = 30_000;

/// Scores at or beyond this magnitude are wins or losses.
pub const WIN_THRESHOLD: i32 = WIN - 1_000;

/// Centimen per logistic unit in [`win_probability`]: a lead of one man ≈ 62% to win.
pub const LOGISTIC_SCALE: f32 = 200.0;

/// The static evaluation of `pos` for the side to move, with the default weights.
pub fn evaluate(pos: &Position) -> i32 {
    evaluate_with(pos, &Weights::default())
}

/// The static evaluation of `pos` for the side to move (see the module docs).
pub fn evaluate_with(pos: &Position, w: &Weights) -> i32 {
    let pending = pos.max_capture_len() as i32;
    if pending > 0 {
        // Not quiet: the capture will happen; what follows is unknown to a static view.
        let me = pos.side_to_move();
        let material = commanded(pos, me) - commanded(pos, me.other());
        return w.values[0] * material + w.pending_capture * pending;
    }
    let f = features(pos);
    let linear = linear_score(&f, w);
    let score = match w.net {
        Some(net) => net.correct(pos, &f, linear),
        None => linear,
    };
    if w.blockade > 0 {
        blockade_discount(pos, score, w.blockade, w.blockade_side)
    } else {
        score
    }
}

/// `score` (a quiet position's, for the side to move) with part of the lead given up when the
/// side behind has men on the board that can never move again unless the leader lets them: a
/// *stuck* unit, every neighbouring square occupied and no capture from it. Such a unit cannot
/// be jumped either (each square it could be jumped to is one of its neighbours), so once the
/// side behind has given its other units away (captures are compulsory: the leader must take
/// each one it is offered) and has no men in hand, it has no legal turn and the game is drawn
/// ("blocked", RULES.md §9). Alpha-beta plays for exactly this when it judges itself worse,
/// from level material at the end of the entering phase on, and the lead a static score counts
/// is then worth a draw; giving the units away takes more moves than a search sees.
///
/// The part given up is `percent` when the side behind has no other unit and shrinks as it has
/// more (`percent * 4 / (free units + 4)`), on the guess that more free units leave the leader
/// more time to open the blockade (the traced games say otherwise: every reply to a sacrifice
/// is a compulsory capture). Nothing changes while the side behind still has men in hand, nor,
/// with `leader` given, when the side ahead is not `leader`.
pub fn blockade_discount(pos: &Position, score: i32, percent: i32, leader: Option<Player>) -> i32 {
    let me = pos.side_to_move();
    let behind = match score.cmp(&0) {
        std::cmp::Ordering::Greater => me.other(),
        std::cmp::Ordering::Less => me,
        std::cmp::Ordering::Equal => return score,
    };
    if pos.in_hand(behind) > 0 || leader.is_some_and(|side| side == behind) {
        return score;
    }
    let (stuck, free) = stuck_units(pos, behind);
    if stuck == 0 {
        return score;
    }
    let percent = percent.clamp(0, 100);
    // |score| < 2^31 / 400 in practice (static scores are a few thousand centimen); the
    // product is taken in i64 anyway so that no weights file can make it overflow.
    let given_up = i64::from(score) * i64::from(percent) * 4 / (100 * (i64::from(free) + 4));
    score - given_up as i32
}

/// `player`'s units that can neither step nor capture (every neighbour occupied, no jump), and
/// the number of its other units.
pub fn stuck_units(pos: &Position, player: Player) -> (i32, i32) {
    let empty = pos.empty_squares();
    let jumpers = pos.jumpers_of(player);
    let (mut stuck, mut free) = (0, 0);
    for sq in Square::iter_bits(pos.units_of(player)) {
        if empty_neighbours(sq, empty) > 0 || jumpers & sq.bit() != 0 {
            free += 1;
        } else {
            stuck += 1;
        }
    }
    (stuck, free)
}

/// The linear part of the evaluation: the features' dot product with the weights.
pub fn linear_score(f: &[i32; FEATURES], w: &Weights) -> i32 {
    w.values.iter().zip(f).map(|(w, x)| w * x).sum()
}

/// The feature vector of a quiet position (the side to move has no capture), each from the
/// side to move's point of view:
///
/// 0. `material`: men commanded (controllers + men in hand), mine minus theirs;
/// 1. `threat_against`: the longest chain the opponent could play if it were its turn;
/// 2. `extra_attacked`: my units the opponent can jump, beyond the first (only when threatened);
/// 3. `edge_units`: units on edge squares (they can never be jumped), mine minus theirs;
/// 4. `fragile_prisoners`: prisoners under a single controller, mine minus theirs;
/// 5. `edge_prisoners`: prisoners held on edge squares (never jumped), mine minus theirs;
/// 6. `tall`: controllers beyond the first (at most 3 per unit), mine minus theirs;
/// 7. `mobility`: steps available, mine minus theirs (0 while anyone has men in hand);
/// 8. `in_hand`: men in hand, mine minus theirs;
/// 9. `units`: units on the board, mine minus theirs;
/// 10. `attacked_units`: units the opponent can jump, theirs minus mine;
/// 11. `prisoners_held`: opponent men held as prisoners under my units, mine minus theirs.
pub fn features(pos: &Position) -> [i32; FEATURES] {
    let me = pos.side_to_move();
    let them = me.other();
    let mut f = [0; FEATURES];
    f[0] = commanded(pos, me) - commanded(pos, them);
    let threat = pos.max_capture_len_of(them) as i32;
    let attacked_me = pos.attacked_units(me).count_ones() as i32;
    if threat > 0 {
        f[1] = threat;
        f[2] = (attacked_me - 1).max(0);
    }
    f[3] = (pos.units_of(me) & EDGE).count_ones() as i32
        - (pos.units_of(them) & EDGE).count_ones() as i32;
    let (mine, theirs) = (structure(pos, me), structure(pos, them));
    f[4] = mine.fragile - theirs.fragile;
    f[5] = mine.edge - theirs.edge;
    f[6] = mine.tall - theirs.tall;
    if pos.in_hand(me) == 0 && pos.in_hand(them) == 0 {
        f[7] = steps(pos, me) - steps(pos, them);
    }
    f[8] = i32::from(pos.in_hand(me)) - i32::from(pos.in_hand(them));
    f[9] = pos.units_of(me).count_ones() as i32 - pos.units_of(them).count_ones() as i32;
    f[10] = pos.attacked_units(them).count_ones() as i32 - attacked_me;
    f[11] = mine.prisoners - theirs.prisoners;
    f
}

/// Men `player` commands: controllers plus men in hand.
fn commanded(pos: &Position, player: Player) -> i32 {
    pos.controlled_men(player) as i32
}

/// Per-player unit-structure counts.
struct Structure {
    fragile: i32,
    edge: i32,
    tall: i32,
    prisoners: i32,
}

/// Unit-structure counts for `player`: fragile and edge prisoners, tall units, prisoners.
fn structure(pos: &Position, player: Player) -> Structure {
    let mut s = Structure {
        fragile: 0,
        edge: 0,
        tall: 0,
        prisoners: 0,
    };
    for sq in Square::iter_bits(pos.units_of(player)) {
        let Some(unit) = pos.unit_at(sq) else {
            continue;
        };
        let prisoners = i32::from(unit.prisoners);
        s.prisoners += prisoners;
        if unit.controllers == 1 {
            s.fragile += prisoners;
        }
        if EDGE & sq.bit() != 0 {
            s.edge += prisoners;
        }
        s.tall += i32::from(unit.controllers.saturating_sub(1).min(3));
    }
    s
}

/// The 16 edge squares (a unit there can never be jumped).
const EDGE: Bitboard = {
    let mut bb = 0;
    let mut i = 0;
    while i < 41 {
        let (file, rank) = ((i * 2) % 9, (i * 2) / 9);
        if file == 0 || file == 8 || rank == 0 || rank == 8 {
            bb |= 1 << i;
        }
        i += 1;
    }
    bb
};

/// Steps `player`'s units could make (empty neighbours), [`Position::step_count`]: counted on
/// the bitboards, where a loop over the units and their neighbours had taken ~5% of the default
/// engine's time (`perf`, a middle-game position).
fn steps(pos: &Position, player: Player) -> i32 {
    pos.step_count(player) as i32
}

/// The empty squares next to `sq` (the steps a unit there could make).
fn empty_neighbours(sq: Square, empty: Bitboard) -> i32 {
    emergo_rules::Direction::ALL
        .iter()
        .filter(|&&d| sq.neighbour(d).is_some_and(|to| empty & to.bit() != 0))
        .count() as i32
}

/// The probability of winning (draws counting half) for a score in centimen.
pub fn win_probability(score: i32) -> f32 {
    win_probability_scaled(score, LOGISTIC_SCALE)
}

/// [`win_probability`] with another logistic scale (centimen per logistic unit).
pub fn win_probability_scaled(score: i32, scale: f32) -> f32 {
    if score >= WIN_THRESHOLD {
        return 1.0;
    }
    if score <= -WIN_THRESHOLD {
        return 0.0;
    }
    1.0 / (1.0 + (-(score as f32) / scale.max(1.0)).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(fen: &str) -> Position {
        fen.parse().unwrap()
    }

    #[test]
    fn steps_counted_on_bitboards_match_the_squares_neighbours() {
        let naive = |pos: &Position, player: Player| -> i32 {
            let empty = pos.empty_squares();
            Square::iter_bits(pos.units_of(player))
                .map(|sq| empty_neighbours(sq, empty))
                .sum()
        };
        let mut seen = 0;
        for game in 0..20u64 {
            let mut pos = Position::initial();
            let mut state = game.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            for _ in 0..150 {
                for player in [Player::White, Player::Black] {
                    assert_eq!(steps(&pos, player), naive(&pos, player), "{pos}");
                    seen += usize::from(steps(&pos, player) > 0);
                }
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                pos.play_unchecked(moves.as_slice()[(state % moves.len() as u64) as usize]);
            }
        }
        assert!(seen > 1000, "{seen}");
    }

    #[test]
    fn initial_position_is_balanced() {
        assert_eq!(evaluate(&Position::initial()), 0);
    }

    #[test]
    fn material_dominates_and_flips_with_the_side() {
        // White has 3 men commanded on a1 (one prisoner), Black 1 on i9: White is up.
        let w = pos("8a@/9/9/9/9/9/9/9/CA8 w 40 0,0");
        let b = pos("8a@/9/9/9/9/9/9/9/CA8 b 40 0,0");
        assert!(evaluate(&w) >= 200, "{}", evaluate(&w));
        assert_eq!(evaluate(&w), -evaluate(&b));
    }

    #[test]
    fn threats_against_the_mover_cost() {
        // Black's man on c3 can jump White's b2 (landing a1); b2 cannot jump back (d4 is held).
        let threatened = pos("9/9/9/9/9/3a@5/2a@6/1A@7/9 w 40 0,0");
        let safe = pos("9/9/9/9/9/3a@5/2a@6/9/A@8 w 40 0,0");
        assert!(evaluate(&threatened) < evaluate(&safe));
    }

    #[test]
    fn pending_capture_counts() {
        // Black to move must take d4 from e5.
        let p = pos("9/9/9/9/4a@4/3A@5/9/9/9 b 40 0,0");
        assert!(evaluate(&p) > 0, "{}", evaluate(&p));
    }

    #[test]
    fn edge_squares_are_the_outer_lines() {
        assert_eq!(EDGE.count_ones(), 16);
        for sq in Square::all() {
            let outer = matches!(sq.file(), 0 | 8) || matches!(sq.rank(), 0 | 8);
            assert_eq!(EDGE & sq.bit() != 0, outer, "{sq}");
        }
    }

    #[test]
    fn weights_files_round_trip() {
        let w = Weights::hand_set();
        assert_eq!(Weights::parse(&w.to_text()), Ok(w));
        assert!(
            Weights::parse("material 100")
                .unwrap_err()
                .contains("missing")
        );
        assert!(Weights::parse("bogus 1").unwrap_err().contains("unknown"));
        assert!(
            Weights::parse("material x")
                .unwrap_err()
                .contains("not a weight")
        );
        let with_blockade = Weights {
            blockade: 40,
            ..Weights::hand_set()
        };
        assert_eq!(Weights::parse(&with_blockade.to_text()), Ok(with_blockade));
        assert!(
            Weights::parse(&format!("{}blockade 101", w.to_text()))
                .unwrap_err()
                .contains("0 to 100")
        );
        // The shipped file parses.
        assert!(Weights::parse(include_str!("../weights.txt")).is_ok());
        assert_eq!(
            Weights::default().get("material"),
            Some(Weights::default().values[0])
        );
    }

    #[test]
    fn stuck_units_cannot_step_or_capture() {
        // Game 2 of the 2026-12-05 match against alpha-beta, at turn 40: White's i9
        // is shut in by Black's h8 (and g7 behind it, so no jump); e5, i5, g3 and i3 can move.
        let p = pos("4a@1aa1A@/3ca3a@1/2ab3a@1ac/9/4AB3A@/9/6A@1A@/3a@5/9 w 40 0,0");
        assert_eq!(stuck_units(&p, Player::White), (1, 4));
        // Black's h8 is stuck too (g9, i9, g7 and i7 all taken; i9 is on the edge).
        assert_eq!(stuck_units(&p, Player::Black), (1, 7));
        // With g7 empty, i9 could jump h8: not stuck.
        let jump = pos("4a@1aa1A@/3ca3a@1/2ab5ac/9/4AB3A@/9/6A@1A@/3a@5/9 w 40 0,0");
        assert_eq!(stuck_units(&jump, Player::White), (0, 5));
    }

    #[test]
    fn a_stuck_unit_of_the_side_behind_costs_the_leader() {
        let p = pos("4a@1aa1A@/3ca3a@1/2ab3a@1ac/9/4AB3A@/9/6A@1A@/3a@5/9 w 40 0,0");
        let plain = evaluate(&p);
        assert!(plain < -400, "White is far behind: {plain}");
        let w = Weights {
            blockade: 60,
            ..Weights::default()
        };
        // Four free units: 60% * 4 / 8 = 30% of the lead is given up.
        assert_eq!(evaluate_with(&p, &w), plain - plain * 30 / 100);
        assert_eq!(
            blockade_discount(&p, plain, 60, None),
            plain - plain * 30 / 100
        );
        // The same from Black's side of the board (Black to move, leading).
        let b = pos("4a@1aa1A@/3ca3a@1/2ab3a@1ac/9/4AB3A@/9/6A@1A@/3a@5/9 b 40 0,0");
        assert_eq!(blockade_discount(&b, 900, 60, None), 900 - 270);
        // White's a1 shut in by Black's b2 and c3; nobody else is stuck.
        let corner = pos("9/9/6a@2/9/4A@4/9/2a@6/1a@7/A@8 w 40 0,0");
        assert_eq!(stuck_units(&corner, Player::White), (1, 1));
        assert_eq!(stuck_units(&corner, Player::Black), (0, 3));
        assert_eq!(blockade_discount(&corner, -1000, 100, None), -1000 + 800);
        // Only Black's leads discounted: the same, White's: unchanged.
        assert_eq!(
            blockade_discount(&corner, -1000, 100, Some(Player::Black)),
            -1000 + 800
        );
        assert_eq!(
            blockade_discount(&corner, -1000, 100, Some(Player::White)),
            -1000
        );
        // Nothing changes for a stuck unit of the leader, a level score, or while the side
        // behind still has men in hand.
        assert_eq!(blockade_discount(&corner, 900, 60, None), 900);
        assert_eq!(blockade_discount(&p, 0, 60, None), 0);
        let in_hand = pos("9/9/6a@2/9/4A@4/9/2a@6/1a@7/A@8 w 40 1,0");
        assert_eq!(blockade_discount(&in_hand, -900, 60, None), -900);
        // The weights files' default is off: the alpha-beta engine's scores are unchanged.
        assert_eq!(Weights::default().blockade, 0);
        // Extreme scores do not overflow.
        assert_eq!(
            blockade_discount(&p, i32::MIN + 1, 100, None),
            -1_073_741_824
        );
        assert_eq!(blockade_discount(&p, i32::MAX, 100, None), 1_366_580_503);
    }

    #[test]
    fn probability_is_monotone_and_saturates() {
        assert_eq!(win_probability(0), 0.5);
        assert!(win_probability(100) > 0.6 && win_probability(100) < 0.65);
        assert!(win_probability(-300) < 0.2);
        assert_eq!(win_probability(WIN - 5), 1.0);
        assert_eq!(win_probability(-WIN + 5), 0.0);
    }
}
