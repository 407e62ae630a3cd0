//! Sequential probability ratio test on match results, as fishtest and OpenBench run it: a match
//! stops as soon as the games played decide between "the first engine is `elo0` stronger" (H0)
//! and "it is `elo1` stronger" (H1), with error rates `alpha` (accepting H1 when H0 holds) and
//! `beta` (accepting H0 when H1 holds).
//!
//! The log-likelihood ratio uses the trinomial model (win, draw, loss) with the draw rate held
//! at its observed value: under a hypothesis with expected score `s` (logistic Elo), a game is
//! won with probability `s − d/2` and lost with `1 − s − d/2`, `d` being the draw rate, so
//!
//! ```text
//! LLR = W · ln(w1 / w0) + L · ln(l1 / l0)
//! ```
//!
//! (draws are equally likely under both and cancel). The draw rate is estimated with half a
//! draw added (`(D + ½) / (N + 1)`), which keeps every probability positive. The test stops
//! with H1 when the LLR reaches `ln((1 − beta) / alpha)` and with H0 when it falls to
//! `ln(beta / (1 − alpha))`. Unlike the normal approximation on per-game scores, this stays
//! honest on the first few games: four straight losses are not enough to reject an engine
//! 50 Elo stronger.

use std::fmt;

/// The test's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprtParams {
    /// Elo difference of the null hypothesis.
    pub elo0: f64,
    /// Elo difference of the alternative (must exceed `elo0`).
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds.
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    pub beta: f64,
}

/// What the test says so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not decided yet.
    Continue,
    /// H0 accepted: the first engine is not `elo1` stronger.
    H0,
    /// H1 accepted: the first engine is at least about `elo1` stronger.
    H1,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Continue => "undecided",
            Verdict::H0 => "H0 accepted",
            Verdict::H1 => "H1 accepted",
        })
    }
}

/// The expected score of a player `elo` stronger (logistic model).
fn expected_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

impl SprtParams {
    /// Parses `elo0=0,elo1=20[,alpha=0.05][,beta=0.05]`.
    pub fn parse(text: &str) -> Result<SprtParams, String> {
        let fail = |why: String| format!("--sprt {text:?}: {why}");
        let mut p = SprtParams {
            elo0: f64::NAN,
            elo1: f64::NAN,
            alpha: 0.05,
            beta: 0.05,
        };
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| fail(format!("{item:?} is not key=value")))?;
            let v: f64 = v
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| fail(format!("{k}={v}: not a number")))?;
            match k.trim() {
                "elo0" => p.elo0 = v,
                "elo1" => p.elo1 = v,
                "alpha" => p.alpha = v,
                "beta" => p.beta = v,
                other => {
                    return Err(fail(format!(
                        "unknown key {other:?} (expected elo0, elo1, alpha, beta)"
                    )));
                }
            }
        }
        if p.elo0.is_nan() || p.elo1.is_nan() {
            return Err(fail("give both elo0= and elo1=".to_owned()));
        }
        if p.elo1 <= p.elo0 {
            return Err(fail("elo1 must be greater than elo0".to_owned()));
        }
        if !(p.elo0.abs() < 1000.0 && p.elo1.abs() < 1000.0) {
            return Err(fail("elo0 and elo1 must lie within ±1000".to_owned()));
        }
        for (name, v) in [("alpha", p.alpha), ("beta", p.beta)] {
            if !(v > 0.0 && v < 0.5) {
                return Err(fail(format!("{name}={v}: must be in (0, 0.5)")));
            }
        }
        Ok(p)
    }

    /// The lower (H0) and upper (H1) bounds of the LLR.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The LLR of per-game `scores` (1, ½, 0 each) of the first engine.
    pub fn llr(&self, scores: &[f64]) -> f64 {
        if scores.is_empty() {
            return 0.0;
        }
        let n = scores.len() as f64;
        let wins = scores.iter().filter(|&&x| x > 0.75).count() as f64;
        let losses = scores.iter().filter(|&&x| x < 0.25).count() as f64;
        let draws = n - wins - losses;
        let (s0, s1) = (expected_score(self.elo0), expected_score(self.elo1));
        // Keep every win and loss probability positive under both hypotheses.
        let room = 2.0 * s0.min(1.0 - s1);
        let d = ((draws + 0.5) / (n + 1.0)).min(0.9 * room);
        let (w0, w1) = (s0 - d / 2.0, s1 - d / 2.0);
        let (l0, l1) = (1.0 - s0 - d / 2.0, 1.0 - s1 - d / 2.0);
        wins * (w1 / w0).ln() + losses * (l1 / l0).ln()
    }

    /// The verdict for `scores`.
    pub fn verdict(&self, scores: &[f64]) -> Verdict {
        let llr = self.llr(scores);
        let (lower, upper) = self.bounds();
        if llr >= upper {
            Verdict::H1
        } else if llr <= lower {
            Verdict::H0
        } else {
            Verdict::Continue
        }
    }

    /// One line for reports: `SPRT elo0=0 elo1=20 alpha=0.05 beta=0.05: LLR 1.23 [-2.94, 2.94]`.
    pub fn describe(&self, scores: &[f64]) -> String {
        let (lower, upper) = self.bounds();
        format!(
            "SPRT elo0={} elo1={} alpha={} beta={}: LLR {:.2} [{:.2}, {:.2}] after {} games: {}",
            self.elo0,
            self.elo1,
            self.alpha,
            self.beta,
            self.llr(scores),
            lower,
            upper,
            scores.len(),
            self.verdict(scores)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> SprtParams {
        SprtParams::parse("elo0=0,elo1=50").unwrap()
    }

    #[test]
    fn parsing() {
        let p = SprtParams::parse("elo0=-5, elo1=20, alpha=0.1").unwrap();
        assert_eq!((p.elo0, p.elo1, p.alpha, p.beta), (-5.0, 20.0, 0.1, 0.05));
        let (lo, hi) = params().bounds();
        assert!((lo + 2.944).abs() < 0.01 && (hi - 2.944).abs() < 0.01);
        for bad in [
            "elo0=0",
            "elo1=5",
            "elo0=10,elo1=5",
            "elo0=0,elo1=x",
            "elo0=0,elo1=5,gamma=1",
            "elo0=0,elo1=5,alpha=0.7",
            "elo0=0,elo1=5000",
            "elo0",
        ] {
            assert!(SprtParams::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_clearly_stronger_engine_is_accepted() {
        let p = params();
        // 3 wins in 4 games, repeated: 75% ≈ +190 Elo, far above elo1.
        let mut scores = Vec::new();
        let mut decided = None;
        for i in 0..400 {
            scores.push(if i % 4 == 3 { 0.0 } else { 1.0 });
            if p.verdict(&scores) != Verdict::Continue {
                decided = Some(scores.len());
                break;
            }
        }
        assert_eq!(p.verdict(&scores), Verdict::H1);
        let n = decided.unwrap();
        assert!((20..120).contains(&n), "{n}");
        // The first one-sided games alone do not decide.
        assert_eq!(p.verdict(&[1.0, 1.0, 1.0, 1.0]), Verdict::Continue);
        assert_eq!(p.verdict(&[0.0, 0.0, 0.0, 0.0]), Verdict::Continue);
        // A long run of them does.
        assert_eq!(p.verdict(&[0.0; 40]), Verdict::H0);
    }

    #[test]
    fn equal_engines_are_rejected() {
        let p = params();
        let scores: Vec<f64> = (0..2000).map(|i| [1.0, 0.0, 0.5, 0.5][i % 4]).collect();
        let first = (1..=scores.len())
            .find(|&n| p.verdict(&scores[..n]) != Verdict::Continue)
            .unwrap();
        assert_eq!(p.verdict(&scores[..first]), Verdict::H0);
        assert!(p.describe(&scores[..first]).contains("H0 accepted"));
    }
}
