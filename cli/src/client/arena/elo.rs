//! Elo differences from match scores, with a 95% confidence interval.
//!
//! The logistic model: a score fraction `p` means an Elo difference of `-400·log10(1/p − 1)`.
//! The interval comes from the per-game scores' standard deviation `σ` (draws make it smaller
//! than the binomial one): `p ± 1.96·σ/√n`, each end mapped through the same formula.

/// z for a two-sided 95% interval.
const Z95: f64 = 1.96;

/// An Elo estimate from one side's point of view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EloEstimate {
    /// Games.
    pub games: usize,
    /// Score fraction in [0, 1] (wins + draws/2, over games).
    pub score: f64,
    /// Elo difference.
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
    /// Whether `score` was 0 or 1 and had to be clamped: the Elo figure is then a bound set by
    /// the number of games, not a measurement. (An interval end beyond 0 or 1 is clamped the
    /// same way without setting this.)
    pub clamped: bool,
}

/// The Elo difference of a score fraction, with no clamping (±infinity at 0 and 1).
pub fn elo_from_score(p: f64) -> f64 {
    // `+ 0.0` turns the -0 of an even score into 0, which tables and JSON print as "0".
    -400.0 * (1.0 / p - 1.0).log10() + 0.0
}

/// Estimates the Elo difference from per-game scores (1, ½ or 0 each). `None` without games.
///
/// A perfect (or zero) score has no finite Elo, so `p` is clamped to `[ε, 1 − ε]` with
/// `ε = 1/(2n)`: as if half a game had gone the other way. The bound grows with the number of
/// games (2 games: ±191, 40 games: ±760), which is what such a result can honestly claim.
pub fn estimate(scores: &[f64]) -> Option<EloEstimate> {
    if scores.is_empty() {
        return None;
    }
    let n = scores.len() as f64;
    let p = scores.iter().sum::<f64>() / n;
    let var = scores.iter().map(|s| (s - p) * (s - p)).sum::<f64>() / n;
    let half_width = Z95 * var.sqrt() / n.sqrt();
    let eps = 0.5 / n;
    let clamp = |x: f64| x.clamp(eps, 1.0 - eps);
    let elo = elo_from_score(clamp(p));
    let (lo, hi) = (p - half_width, p + half_width);
    Some(EloEstimate {
        games: scores.len(),
        score: p,
        elo,
        low: elo_from_score(clamp(lo)),
        high: elo_from_score(clamp(hi)),
        clamped: clamp(p) != p,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula() {
        assert_eq!(elo_from_score(0.5), 0.0);
        assert!(elo_from_score(0.5).is_sign_positive());
        assert!((elo_from_score(0.75) - 190.85).abs() < 0.01);
        assert!((elo_from_score(0.25) + 190.85).abs() < 0.01);
        assert!((elo_from_score(0.9) - 381.7).abs() < 0.1);
    }

    #[test]
    fn even_match() {
        let e = estimate(&[1.0, 0.0, 0.5, 0.5]).unwrap();
        assert_eq!(e.score, 0.5);
        assert_eq!(e.elo, 0.0);
        // σ = √(1/8), n = 4: p ± 1.96·0.3536/2 = 0.5 ± 0.3465 → ±(about 290) Elo.
        assert!((e.high + e.low).abs() < 1e-9);
        assert!((e.high - elo_from_score(0.5 + 1.96 * (0.125f64).sqrt() / 2.0)).abs() < 1e-9);
        assert!(e.low < -250.0 && e.high > 250.0);
        assert!(!e.clamped);
        // 90%: the upper end of the interval passes 1 and is clamped, the estimate is not.
        let mut scores = vec![1.0; 32];
        scores.extend([0.5, 0.0, 0.0, 0.0]);
        let e = estimate(&scores).unwrap();
        assert!(!e.clamped);
        assert!(
            (e.elo - 387.0).abs() < 1.0 && (e.low - 252.0).abs() < 1.0,
            "{e:?}"
        );
        assert!((e.high - elo_from_score(1.0 - 1.0 / 72.0)).abs() < 1e-9);
    }

    #[test]
    fn three_quarters() {
        let scores = [1.0, 1.0, 1.0, 0.0].repeat(25);
        let e = estimate(&scores).unwrap();
        assert!((e.elo - 190.85).abs() < 0.01);
        // σ = √(0.75·0.25) = 0.433, n = 100 → p ± 0.0849.
        assert!((e.low - elo_from_score(0.75 - 0.084_87)).abs() < 0.5);
        assert!((e.high - elo_from_score(0.75 + 0.084_87)).abs() < 0.5);
        assert!(e.low < e.elo && e.elo < e.high);
    }

    #[test]
    fn perfect_scores_are_clamped() {
        let e = estimate(&[1.0; 40]).unwrap();
        assert!(e.clamped);
        assert!((e.elo - elo_from_score(1.0 - 1.0 / 80.0)).abs() < 1e-9);
        assert!(e.elo.is_finite() && e.elo > 700.0);
        assert_eq!((e.low, e.high), (e.elo, e.elo));
        let e = estimate(&[0.0; 2]).unwrap();
        assert!((e.elo + 190.85).abs() < 0.01);
        assert!(estimate(&[]).is_none());
        assert_eq!(estimate(&[0.5]).unwrap().elo, 0.0);
    }
}
