//! The arithmetic of a game review, kept apart from the searching: values seen from the other
//! side, the loss of a played move, its class, the move accuracy, and the per-player totals.
//!
//! Values are expected scores in `[0, 1]` (win 1, draw ½, loss 0). The class thresholds are
//! Lichess's (0.1 / 0.2 / 0.3 in its `[-1, 1]` winning chances, so 0.05 / 0.10 / 0.15 here), and
//! the move accuracy is Lichess's formula on the loss in percentage points; the proto's
//! `MoveClass` and `PlayerReview` comments are the specification.

use emergo_proto::v1 as pb;

/// A loss below this is as good as the engine's own move (class BEST).
pub const BEST_BELOW: f32 = 0.01;
/// A loss below this (and at least [`BEST_BELOW`]) is GOOD.
pub const GOOD_BELOW: f32 = 0.05;
/// A loss below this (and at least [`GOOD_BELOW`]) is an INACCURACY.
pub const INACCURACY_BELOW: f32 = 0.10;
/// A loss below this (and at least [`INACCURACY_BELOW`]) is a MISTAKE; from here on, a BLUNDER.
pub const MISTAKE_BELOW: f32 = 0.15;

/// A value and proof as the opponent sees them.
pub fn flip(value: f32, proof: pb::ProofStatus) -> (f32, pb::ProofStatus) {
    let proof = match proof {
        pb::ProofStatus::Win => pb::ProofStatus::Loss,
        pb::ProofStatus::Loss => pb::ProofStatus::Win,
        other => other,
    };
    (1.0 - value, proof)
}

/// A value and proof seen `plies` turns earlier (through forced moves): flipped once per ply.
pub fn flip_plies(value: f32, proof: pb::ProofStatus, plies: usize) -> (f32, pb::ProofStatus) {
    if plies % 2 == 1 {
        flip(value, proof)
    } else {
        (value, proof)
    }
}

/// The win-probability loss of a played move: the best move's value minus the played move's,
/// both for the mover, at least 0; 0 when the played move is the best one. A value that is not
/// a number (no statistics) counts as no loss.
pub fn loss(best_value: f32, played_value: f32, played_is_best: bool) -> f32 {
    let loss = best_value - played_value;
    if played_is_best || loss.is_nan() {
        0.0
    } else {
        loss.clamp(0.0, 1.0)
    }
}

/// The class of an unforced played move from its loss, whether it is the engine's best move,
/// and the proof states before (`proof`) and after (`played_proof`) it, for the mover.
pub fn classify(
    loss: f32,
    played_is_best: bool,
    proof: pb::ProofStatus,
    played_proof: pb::ProofStatus,
) -> pb::MoveClass {
    let thrown_away = proof == pb::ProofStatus::Win
        && matches!(played_proof, pb::ProofStatus::Loss | pb::ProofStatus::Draw);
    if thrown_away {
        pb::MoveClass::Blunder
    } else if played_is_best || loss < BEST_BELOW {
        pb::MoveClass::Best
    } else if loss < GOOD_BELOW {
        pb::MoveClass::Good
    } else if loss < INACCURACY_BELOW {
        pb::MoveClass::Inaccuracy
    } else if loss < MISTAKE_BELOW {
        pb::MoveClass::Mistake
    } else {
        pb::MoveClass::Blunder
    }
}

/// Lichess's move accuracy in percent for a loss (in `[0, 1]`):
/// `103.1668 × exp(−0.04354 × 100 × loss) − 3.1669`, clipped to 0..100.
pub fn move_accuracy(loss: f32) -> f32 {
    let points = f64::from(loss.clamp(0.0, 1.0)) * 100.0;
    (103.1668 * (-0.04354 * points).exp() - 3.1669).clamp(0.0, 100.0) as f32
}

/// One player's totals over the turns reviewed so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    turns: u32,
    best: u32,
    good: u32,
    inaccuracies: u32,
    mistakes: u32,
    blunders: u32,
    forced: u32,
    /// Sums over the unforced turns.
    loss_sum: f64,
    accuracy_sum: f64,
}

impl Totals {
    /// Counts a turn of this player.
    pub fn add(&mut self, class: pb::MoveClass, loss: f32) {
        self.turns += 1;
        let count = match class {
            pb::MoveClass::Forced => {
                self.forced += 1;
                return;
            }
            pb::MoveClass::Best | pb::MoveClass::Unspecified => &mut self.best,
            pb::MoveClass::Good => &mut self.good,
            pb::MoveClass::Inaccuracy => &mut self.inaccuracies,
            pb::MoveClass::Mistake => &mut self.mistakes,
            pb::MoveClass::Blunder => &mut self.blunders,
        };
        *count += 1;
        self.loss_sum += f64::from(loss);
        self.accuracy_sum += f64::from(move_accuracy(loss));
    }

    /// The totals as the summary reports them for `player` (`"w"` or `"b"`). Without an
    /// unforced turn the mean loss is 0 and the accuracy 100.
    pub fn review(&self, player: &str) -> pb::PlayerReview {
        let unforced = self.turns - self.forced;
        let (mean_loss, accuracy) = if unforced == 0 {
            (0.0, 100.0)
        } else {
            let n = f64::from(unforced);
            (
                (self.loss_sum / n) as f32,
                (self.accuracy_sum / n).clamp(0.0, 100.0) as f32,
            )
        };
        pb::PlayerReview {
            player: player.to_owned(),
            turns: self.turns,
            best: self.best,
            good: self.good,
            inaccuracies: self.inaccuracies,
            mistakes: self.mistakes,
            blunders: self.blunders,
            forced: self.forced,
            mean_loss,
            accuracy,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pb::MoveClass as C;
    use pb::ProofStatus as P;

    #[test]
    fn thresholds_are_lichess_halved() {
        let class = |loss| classify(loss, false, P::Unproven, P::Unproven);
        assert_eq!(class(0.0), C::Best);
        assert_eq!(class(0.0099), C::Best);
        assert_eq!(class(0.01), C::Good);
        assert_eq!(class(0.0499), C::Good);
        assert_eq!(class(0.05), C::Inaccuracy);
        assert_eq!(class(0.0999), C::Inaccuracy);
        assert_eq!(class(0.10), C::Mistake);
        assert_eq!(class(0.1499), C::Mistake);
        assert_eq!(class(0.15), C::Blunder);
        assert_eq!(class(1.0), C::Blunder);
        // The engine's own move is best whatever the two searches' values say.
        assert_eq!(classify(0.3, true, P::Unproven, P::Unproven), C::Best);
    }

    #[test]
    fn a_proven_win_thrown_away_is_a_blunder_at_any_loss() {
        assert_eq!(classify(0.0, false, P::Win, P::Loss), C::Blunder);
        assert_eq!(classify(0.0, false, P::Win, P::Draw), C::Blunder);
        assert_eq!(classify(0.0, false, P::Win, P::Win), C::Best);
        assert_eq!(classify(0.0, false, P::Win, P::Unproven), C::Best);
        assert_eq!(classify(0.0, false, P::Draw, P::Loss), C::Best);
    }

    #[test]
    fn losses() {
        assert_eq!(loss(0.7, 0.5, false), 0.7 - 0.5);
        assert_eq!(loss(0.5, 0.7, false), 0.0);
        assert_eq!(loss(0.9, 0.1, true), 0.0);
        assert_eq!(loss(f32::NAN, 0.5, false), 0.0);
        assert_eq!(loss(2.0, -1.0, false), 1.0);
    }

    #[test]
    fn flips() {
        assert_eq!(flip(0.25, P::Win), (0.75, P::Loss));
        assert_eq!(flip(0.5, P::Draw), (0.5, P::Draw));
        assert_eq!(flip_plies(0.25, P::Loss, 2), (0.25, P::Loss));
        assert_eq!(flip_plies(0.25, P::Loss, 3), (0.75, P::Win));
    }

    #[test]
    fn accuracy_follows_lichess() {
        assert!((move_accuracy(0.0) - 99.9999).abs() < 1e-3);
        // 10 points of win percentage: 103.1668 e^-0.4354 - 3.1669 = 63.6.
        assert!(
            (move_accuracy(0.10) - 63.6).abs() < 0.1,
            "{}",
            move_accuracy(0.10)
        );
        assert_eq!(move_accuracy(1.0), 0.0);
        assert!(move_accuracy(0.05) > move_accuracy(0.06));
    }

    #[test]
    fn totals_count_every_turn_and_average_the_unforced() {
        let mut t = Totals::default();
        t.add(C::Best, 0.0);
        t.add(C::Blunder, 0.3);
        t.add(C::Forced, 0.0);
        t.add(C::Mistake, 0.12);
        let r = t.review("w");
        assert_eq!((r.player.as_str(), r.turns, r.forced), ("w", 4, 1));
        assert_eq!(
            (r.best, r.good, r.inaccuracies, r.mistakes, r.blunders),
            (1, 0, 0, 1, 1)
        );
        assert_eq!(
            r.best + r.good + r.inaccuracies + r.mistakes + r.blunders + r.forced,
            r.turns
        );
        assert!((r.mean_loss - 0.14).abs() < 1e-6, "{}", r.mean_loss);
        let expected = (move_accuracy(0.0) + move_accuracy(0.3) + move_accuracy(0.12)) / 3.0;
        assert!((r.accuracy - expected).abs() < 1e-4);
        let empty = Totals::default().review("b");
        assert_eq!(
            (empty.turns, empty.mean_loss, empty.accuracy),
            (0, 0.0, 100.0)
        );
    }
}
