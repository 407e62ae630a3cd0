//! The text view of `emergo review`: the move list printed in turn order as the turns
//! arrive (each move's class marked `?!`/`?`/`??`, its value, the loss and the better move),
//! the plot of White's expected score per turn, and the per-player summary.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use emergo_proto::v1 as pb;

use crate::client::analyze::{grouped, proof_label, stop_reason_text};

/// The turns received so far, printed in turn order: the server may finish turns out of order
/// when it searches several at once, so a row waits until the turns before it are in.
pub struct Report {
    /// The turns still to come, in order, when `--turns` named them; else every turn from 1.
    expected: Option<Vec<u32>>,
    /// How many rows have been printed.
    printed: usize,
    /// The next turn to print when every turn is reviewed.
    next: u32,
    /// Turns received but not printed yet.
    pending: BTreeMap<u32, pb::TurnReview>,
    /// Every turn received, for the plot.
    done: BTreeMap<u32, pb::TurnReview>,
}

impl Report {
    /// A report expecting `turns` (or every turn from 1 when `None`).
    pub fn new(turns: Option<Vec<u32>>) -> Report {
        Report {
            expected: turns,
            printed: 0,
            next: 1,
            pending: BTreeMap::new(),
            done: BTreeMap::new(),
        }
    }

    /// Takes a turn; returns the rows that can be printed now.
    pub fn add(&mut self, turn: pb::TurnReview) -> String {
        self.done.insert(turn.turn, turn.clone());
        self.pending.insert(turn.turn, turn);
        let mut out = String::new();
        loop {
            let want = match &self.expected {
                Some(list) => match list.get(self.printed) {
                    Some(&t) => t,
                    None => break,
                },
                None => self.next,
            };
            let Some(turn) = self.pending.remove(&want) else {
                break;
            };
            out += &turn_line(&turn);
            out.push('\n');
            self.printed += 1;
            self.next = want + 1;
        }
        out
    }

    /// The rows still held back (the review ended before the turns in between came).
    pub fn flush(&mut self) -> String {
        let mut out = String::new();
        for turn in std::mem::take(&mut self.pending).into_values() {
            out += &turn_line(&turn);
            out.push('\n');
        }
        out
    }

    /// The plot's points: each turn with White's expected score after it and its class.
    pub fn points(&self) -> Vec<Point> {
        self.done.values().map(Point::of).collect()
    }
}

/// One point of the evaluation plot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// The turn.
    pub turn: u32,
    /// White's expected score after the turn's move (0..1).
    pub white: f64,
    /// The class of the move played.
    pub class: pb::MoveClass,
}

impl Point {
    /// The point of a turn review.
    pub fn of(t: &pb::TurnReview) -> Point {
        Point {
            turn: t.turn,
            white: white_score(t),
            class: t.class(),
        }
    }
}

/// White's expected score after the turn's move: the mover's value of the played move, turned
/// round when Black moved.
pub fn white_score(t: &pb::TurnReview) -> f64 {
    let v = f64::from(t.played_value).clamp(0.0, 1.0);
    if t.player == "b" { 1.0 - v } else { v }
}

/// The annotation of a class, as in chess: `?!`, `?`, `??` (nothing for the others).
pub fn class_mark(class: pb::MoveClass) -> &'static str {
    match class {
        pb::MoveClass::Inaccuracy => "?!",
        pb::MoveClass::Mistake => "?",
        pb::MoveClass::Blunder => "??",
        _ => "",
    }
}

/// A class in a word.
pub fn class_word(class: pb::MoveClass) -> &'static str {
    match class {
        pb::MoveClass::Unspecified => "",
        pb::MoveClass::Best => "best",
        pb::MoveClass::Good => "good",
        pb::MoveClass::Inaccuracy => "inaccuracy",
        pb::MoveClass::Mistake => "mistake",
        pb::MoveClass::Blunder => "blunder",
        pb::MoveClass::Forced => "forced",
    }
}

fn pct(v: f32) -> String {
    format!("{:.1}%", f64::from(v) * 100.0)
}

/// The header of the move list.
pub fn move_list_header() -> String {
    format!(
        "{:>4}  {:<5}  {:<16} {:<10}  {:>6}  {:>5}  better (its value, line)",
        "turn", "side", "played", "class", "value", "loss"
    )
}

/// One row of the move list: the played move with its mark and class, its value for the mover,
/// the loss in percentage points, and the engine's move when it differs.
pub fn turn_line(t: &pb::TurnReview) -> String {
    let side = match t.player.as_str() {
        "w" => "White",
        "b" => "Black",
        other => other,
    };
    let class = t.class();
    let played = format!("{}{}", t.played_move, class_mark(class));
    let value = match t.played_proof() {
        pb::ProofStatus::Win => "win".to_owned(),
        pb::ProofStatus::Loss => "loss".to_owned(),
        pb::ProofStatus::Draw => "draw".to_owned(),
        pb::ProofStatus::Unproven => pct(t.played_value),
    };
    let loss = if class == pb::MoveClass::Forced {
        String::new()
    } else {
        format!("{:.1}", f64::from(t.loss) * 100.0)
    };
    let mut line = format!(
        "{:>4}  {side:<5}  {played:<16} {:<10}  {value:>6}  {loss:>5}",
        t.turn,
        class_word(class)
    );
    // The engine's move, when it thought better of it (a "best" move may differ from the
    // engine's first choice by less than a point, or be valued higher after it was played).
    let worse = !matches!(class, pb::MoveClass::Best | pb::MoveClass::Forced);
    if worse && !t.best_move.is_empty() && t.best_move != t.played_move {
        let best_value = match t.proof() {
            pb::ProofStatus::Unproven => pct(t.best_value),
            proof => proof_label(proof, t.proof_plies),
        };
        let _ = write!(line, "  {} ({best_value}", t.best_move);
        let rest: Vec<&str> = t
            .best_pv
            .iter()
            .skip(1)
            .take(5)
            .map(String::as_str)
            .collect();
        if !rest.is_empty() {
            let _ = write!(line, "; {} {}", t.best_move, rest.join(" "));
            if t.best_pv.len() > 6 {
                line.push_str(" ...");
            }
        }
        line.push(')');
    }
    line.trim_end().to_owned()
}

/// A plot of White's expected score per turn, `2 * half + 1` rows high (the middle row is 50%)
/// and at most `width` columns wide (several turns share a column in a long game, several
/// columns show a turn in a short one), with the turn axis and the mistakes marked below it.
pub fn eval_graph(points: &[Point], width: usize, half: usize) -> String {
    let mut out = String::new();
    if points.is_empty() {
        return out;
    }
    let width = width.max(1);
    let half = half.max(1);
    let n = points.len();
    // Each column shows the turns `columns[c]` (indices into points).
    let columns: Vec<std::ops::Range<usize>> = if n <= width {
        let k = (width / n).clamp(1, 3);
        (0..n * k).map(|c| c / k..c / k + 1).collect()
    } else {
        (0..width)
            .map(|c| c * n / width..(c + 1) * n / width)
            .collect()
    };
    // A column shows the score after its last turn and the worst mark among its turns.
    let score = |r: &std::ops::Range<usize>| points[r.end - 1].white;
    let worst = |r: &std::ops::Range<usize>| {
        points[r.clone()]
            .iter()
            .map(|p| match p.class {
                pb::MoveClass::Blunder => 3,
                pb::MoveClass::Mistake => 2,
                pb::MoveClass::Inaccuracy => 1,
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    };
    let step = 0.5 / half as f64;
    let _ = writeln!(out, "White's expected score after each turn:");
    for row in 0..(2 * half + 1) {
        let label = if row == 0 {
            "100%"
        } else if row == half {
            " 50%"
        } else if row == 2 * half {
            "  0%"
        } else {
            ""
        };
        let mut line = format!("{label:>4} |");
        for c in &columns {
            let v = score(c);
            let filled = if row < half {
                // Rows above the middle: filled when White's score reaches the row's middle.
                v >= 1.0 - (row as f64 + 0.5) * step
            } else if row > half {
                let below = (row - half - 1) as f64;
                v <= 0.5 - (below + 0.5) * step
            } else {
                false
            };
            line.push(if filled {
                '#'
            } else if row == half {
                '-'
            } else {
                ' '
            });
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    // The turn axis: the first turn of a column every ten columns or so.
    let mut axis = " ".repeat(6);
    let mut c = 0;
    while c < columns.len() {
        let label = points[columns[c].start].turn.to_string();
        if axis.len() <= 6 + c {
            axis.truncate(6 + c);
            while axis.len() < 6 + c {
                axis.push(' ');
            }
            axis.push_str(&label);
        }
        c += 10.max(label.len() + 1);
    }
    let _ = writeln!(out, "{}", axis.trim_end());
    let marks: String = columns
        .iter()
        .map(|c| match worst(c) {
            3 => 'B',
            2 => 'M',
            1 => 'i',
            _ => ' ',
        })
        .collect();
    if !marks.trim().is_empty() {
        let _ = writeln!(out, "      {}", marks.trim_end());
        let _ = writeln!(out, "      (B blunder ??, M mistake ?, i inaccuracy ?!)");
    }
    out
}

/// The per-player summary and how the review ended.
pub fn summary_text(s: &pb::GameReviewSummary) -> String {
    let white = s.white.clone().unwrap_or_default();
    let black = s.black.clone().unwrap_or_default();
    let mut out = String::new();
    let _ = writeln!(out, "{:<20} {:>8} {:>8}", "summary", "White", "Black");
    let mut row = |name: &str, w: String, b: String| {
        let _ = writeln!(out, "{name:<20} {w:>8} {b:>8}");
    };
    row(
        "accuracy",
        format!("{:.1}%", white.accuracy),
        format!("{:.1}%", black.accuracy),
    );
    row(
        "mean loss (points)",
        format!("{:.1}", f64::from(white.mean_loss) * 100.0),
        format!("{:.1}", f64::from(black.mean_loss) * 100.0),
    );
    let (w, b) = (&white, &black);
    for (name, wn, bn) in [
        ("turns", w.turns, b.turns),
        ("best", w.best, b.best),
        ("good", w.good, b.good),
        ("inaccuracies (?!)", w.inaccuracies, b.inaccuracies),
        ("mistakes (?)", w.mistakes, b.mistakes),
        ("blunders (??)", w.blunders, b.blunders),
        ("forced", w.forced, b.forced),
    ] {
        row(name, wn.to_string(), bn.to_string());
    }
    let status = s.status.clone().unwrap_or_default();
    let ended = match s.stop_reason() {
        pb::StopReason::Time | pb::StopReason::Playouts => "complete".to_owned(),
        pb::StopReason::Stopped => "stopped on request: the turns above only".to_owned(),
        other => format!("ended early: {}", stop_reason_text(other)),
    };
    let _ = writeln!(
        out,
        "{} turns analysed, {} playouts, {:.1} s; game result {}{}; review {ended}",
        s.turns_analysed,
        grouped(s.playouts),
        s.elapsed_ms as f64 / 1000.0,
        if status.result.is_empty() {
            "*"
        } else {
            status.result.as_str()
        },
        if status.reason.is_empty() {
            String::new()
        } else {
            format!(" ({})", status.reason)
        },
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(
        n: u32,
        player: &str,
        played: &str,
        value: f32,
        class: pb::MoveClass,
    ) -> pb::TurnReview {
        pb::TurnReview {
            turn: n,
            player: player.to_owned(),
            fen: String::new(),
            played_move: played.to_owned(),
            played_value: value,
            played_visits: 100,
            best_move: if class == pb::MoveClass::Best {
                played.to_owned()
            } else {
                "e5".to_owned()
            },
            best_value: 0.6,
            best_pv: vec!["e5".into(), "f6".into(), "g7".into()],
            loss: (0.6 - value).max(0.0),
            class: class as i32,
            ..Default::default()
        }
    }

    #[test]
    fn rows_mark_the_classes_and_name_the_better_move() {
        let t = turn(12, "w", "c3-d4", 0.31, pb::MoveClass::Blunder);
        let line = turn_line(&t);
        assert!(line.starts_with("  12  White  c3-d4??"), "{line}");
        assert!(line.contains("blunder"), "{line}");
        assert!(line.contains("31.0%"), "{line}");
        assert!(line.contains("29.0"), "loss in points: {line}");
        assert!(line.contains("e5 (60.0%; e5 f6 g7)"), "{line}");
        let line = turn_line(&turn(3, "b", "i9", 0.6, pb::MoveClass::Best));
        assert!(
            line.contains("Black  i9 ") && line.contains("best"),
            "{line}"
        );
        assert!(!line.contains('('), "no better move: {line}");
        assert!(turn_line(&turn(4, "w", "a1", 0.5, pb::MoveClass::Inaccuracy)).contains("a1?!"));
        assert!(turn_line(&turn(5, "w", "a1", 0.5, pb::MoveClass::Mistake)).contains("a1? "));
        let mut won = turn(6, "w", "a1", 0.0, pb::MoveClass::Blunder);
        won.proof = pb::ProofStatus::Win as i32;
        won.proof_plies = 7;
        won.played_proof = pb::ProofStatus::Loss as i32;
        let line = turn_line(&won);
        assert!(
            line.contains(" loss ") && line.contains("(win in 7"),
            "{line}"
        );
        assert!(move_list_header().contains("better"));
    }

    #[test]
    fn rows_wait_for_the_turns_before_them() {
        let mut r = Report::new(None);
        assert_eq!(r.add(turn(2, "b", "i9", 0.5, pb::MoveClass::Best)), "");
        let rows = r.add(turn(1, "w", "a1", 0.5, pb::MoveClass::Best));
        assert_eq!(rows.lines().count(), 2, "{rows}");
        assert!(rows.lines().next().unwrap().starts_with("   1"));
        let mut r = Report::new(Some(vec![5, 9]));
        assert_eq!(r.add(turn(9, "w", "a1", 0.5, pb::MoveClass::Best)), "");
        assert_eq!(
            r.add(turn(5, "w", "a1", 0.5, pb::MoveClass::Best))
                .lines()
                .count(),
            2
        );
        let mut r = Report::new(Some(vec![5, 9]));
        r.add(turn(9, "w", "a1", 0.5, pb::MoveClass::Best));
        assert!(
            r.flush().starts_with("   9"),
            "a stopped review prints what it has"
        );
        assert_eq!(r.points().len(), 1);
    }

    #[test]
    fn the_graph_follows_whites_score() {
        // Black's value is turned round: 0.2 for Black after turn 2 is 0.8 for White.
        assert!((white_score(&turn(2, "b", "i9", 0.2, pb::MoveClass::Best)) - 0.8).abs() < 1e-6);
        let points: Vec<Point> = [(1, 0.5), (2, 0.8), (3, 1.0), (4, 0.3), (5, 0.0)]
            .iter()
            .map(|&(t, w)| Point {
                turn: t,
                white: w,
                class: if t == 4 {
                    pb::MoveClass::Blunder
                } else if t == 5 {
                    pb::MoveClass::Inaccuracy
                } else {
                    pb::MoveClass::Good
                },
            })
            .collect();
        let g = eval_graph(&points, 5, 2);
        let lines: Vec<&str> = g.lines().collect();
        assert_eq!(lines[0], "White's expected score after each turn:");
        // Rows: 100% (>= 0.875), 0.625..0.875 (>= 0.625), 50%, <= 0.375, 0% (<= 0.125).
        assert_eq!(lines[1], "100% |  #");
        assert_eq!(lines[2], "     | ##");
        assert_eq!(lines[3], " 50% |-----");
        assert_eq!(lines[4], "     |   ##");
        assert_eq!(lines[5], "  0% |    #");
        assert_eq!(lines[6], "      1");
        assert_eq!(lines[7], "         Bi");
        assert!(lines[8].contains("B blunder"));
        // A short game is stretched (3 columns a turn at most), a long one squeezed.
        let g = eval_graph(&points, 60, 2);
        assert!(g.lines().nth(3).unwrap().ends_with(&"-".repeat(15)), "{g}");
        let many: Vec<Point> = (1..=100)
            .map(|t| Point {
                turn: t,
                white: 0.95,
                class: pb::MoveClass::Best,
            })
            .collect();
        let g = eval_graph(&many, 40, 3);
        assert_eq!(
            g.lines().nth(1).unwrap(),
            format!("100% |{}", "#".repeat(40))
        );
        let axis = g.lines().nth(8).unwrap();
        assert!(
            axis.starts_with("      1") && axis.contains(" 26"),
            "{axis:?}"
        );
        assert!(!g.contains("blunder"), "no marks, no legend: {g}");
        assert_eq!(eval_graph(&[], 40, 3), "");
    }

    #[test]
    fn the_summary_counts_per_player() {
        let s = pb::GameReviewSummary {
            white: Some(pb::PlayerReview {
                player: "w".into(),
                turns: 50,
                best: 20,
                blunders: 2,
                mean_loss: 0.031,
                accuracy: 87.3,
                ..Default::default()
            }),
            black: Some(pb::PlayerReview {
                player: "b".into(),
                turns: 49,
                mistakes: 3,
                accuracy: 64.0,
                ..Default::default()
            }),
            turns_analysed: 99,
            playouts: 198_000,
            elapsed_ms: 9_800,
            status: Some(pb::GameStatus {
                result: "1-0".into(),
                reason: "no-units".into(),
            }),
            stop_reason: pb::StopReason::Playouts as i32,
            search_id: String::new(),
        };
        let t = summary_text(&s);
        assert!(t.contains("accuracy                87.3%    64.0%"), "{t}");
        assert!(t.contains("blunders (??)               2        0"), "{t}");
        assert!(t.contains("mistakes (?)                0        3"), "{t}");
        assert!(t.contains("mean loss (points)        3.1      0.0"), "{t}");
        assert!(t.contains("99 turns analysed, 198,000 playouts, 9.8 s; game result 1-0 (no-units); review complete"), "{t}");
        let stopped = pb::GameReviewSummary {
            stop_reason: pb::StopReason::Stopped as i32,
            ..s
        };
        assert!(summary_text(&stopped).contains("stopped on request"));
    }
}
