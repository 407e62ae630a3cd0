//! Playing one arena game: the move loop, adjudication and the record.

use std::sync::Arc;
use std::time::{Duration, Instant};

use emergo_rules::{Game, Move};

use super::clock::{SideClock, TimeControl, format_clock};
use super::engines::{Answer, Seat, ServerEngine};
use super::schedule::{Opening, ScheduledGame, mix};
use super::spec::EngineSpec;
use crate::client::ClientError;
use crate::client::record::GameRecord;
use crate::termination::Termination;

/// What every game needs, shared by the concurrent games of a run.
pub struct Context {
    /// The engines, names unique, budgets resolved.
    pub engines: Vec<EngineSpec>,
    /// The connected server of each server engine (same indices as `engines`).
    pub servers: Vec<Option<Arc<ServerEngine>>>,
    /// The openings, indexed by `ScheduledGame::opening`.
    pub openings: Vec<Opening>,
    /// Turns (opening included) after which a game is adjudicated a draw.
    pub max_turns: usize,
    /// The run's seed: game ids, engine seeds and random openings derive from it.
    pub seed: u64,
    /// `YYYY.MM.DD` for the PGN Date tag.
    pub date: String,
    /// PGN Site tag.
    pub site: String,
    /// The game clock of each side (`--tc`); `None`: per-move budgets.
    pub tc: Option<TimeControl>,
}

/// One side's figures in one game.
#[derive(Clone, Debug, Default)]
pub struct SideStats {
    /// Moves the engine chose (the opening's moves not counted).
    pub moves: u32,
    /// Moves whose search started from a kept tree (reused visits > 0); servers and in-process
    /// MCTS with `reuse=on` only.
    pub moves_with_reuse: u32,
    /// Reused visits of every move, in order; servers only (empty for in-process engines).
    pub reused_visits: Vec<u64>,
    /// Playouts of all the engine's searches (searching engines only).
    pub playouts: u64,
    /// Wall time spent waiting for the engine's moves.
    pub think: Duration,
    /// BestMove calls that failed and were retried.
    pub retries: u32,
    /// Timed games: wall time each move took as the arena measured it, milliseconds.
    pub used_ms: Vec<u64>,
    /// Timed games: the clock after each move (increment added), milliseconds.
    pub clock_ms: Vec<u64>,
    /// Servers: the most a move's measured time exceeded the server's own wall time for it
    /// (`answer_wall_ms`): the network and the client, which the clock margin must cover.
    pub max_overhead_ms: Option<u64>,
    /// Servers with a time budget: how late each move's answer came as the arena measured it
    /// (its wall time less the server's promised budget, 0 when on time), milliseconds.
    pub late_ms: Vec<u64>,
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct GameReport {
    /// What was scheduled.
    pub scheduled: ScheduledGame,
    /// The record (tags, start FEN, all moves including the opening, result, termination).
    pub record: GameRecord,
    /// How the game ended (the record's `termination`, typed).
    pub termination: Termination,
    /// Why an adjudicated game ended (the error, the illegal move); `None` for rules endings.
    pub detail: Option<String>,
    /// White's and Black's figures.
    pub sides: [SideStats; 2],
    /// The opening as an openings-file line.
    pub opening: String,
    /// The game id sent to servers (suffixed `-w`/`-b` per side).
    pub game_id: String,
}

impl GameReport {
    /// Turns played, opening included.
    pub fn turns(&self) -> usize {
        self.record.moves.len()
    }

    /// White's score: 1, ½ or 0.
    pub fn white_score(&self) -> f64 {
        self.termination.white_score()
    }
}

/// The budget as the PGN `TimeControl` tag shows it: one description when both sides search
/// alike, else one per side.
fn time_control(white: &EngineSpec, black: &EngineSpec, tc: Option<TimeControl>) -> String {
    if let Some(tc) = tc {
        return tc.to_string();
    }
    let side = |s: &EngineSpec| {
        if s.searches() {
            s.budget.describe()
        } else {
            "no search".to_owned()
        }
    };
    let (w, b) = (side(white), side(black));
    if w == b {
        w
    } else {
        format!("White {w}, Black {b}")
    }
}

/// Plays scheduled game `g` to its end.
pub async fn play(ctx: Arc<Context>, g: ScheduledGame) -> Result<GameReport, ClientError> {
    let opening = &ctx.openings[g.opening];
    let mut game: Game = opening.game().map_err(ClientError::Invalid)?;
    let game_id = format!("arena-{}-{}", ctx.seed, g.number);
    let idx = [g.white, g.black];
    // Separate ids per side: two engines on one server must not take each other's trees.
    let mut seats = [
        Seat::new(
            &ctx.engines[g.white],
            ctx.servers[g.white].as_ref(),
            format!("{game_id}-w"),
            mix(ctx.seed, 2 * g.number as u64),
            ctx.tc.is_some(),
        )?,
        Seat::new(
            &ctx.engines[g.black],
            ctx.servers[g.black].as_ref(),
            format!("{game_id}-b"),
            mix(ctx.seed, 2 * g.number as u64 + 1),
            ctx.tc.is_some(),
        )?,
    ];
    let mut sides: [SideStats; 2] = Default::default();
    let mut clocks = ctx.tc.map(|tc| [SideClock::new(tc); 2]);
    let (termination, detail) = loop {
        if let Some(o) = game.outcome() {
            break (Termination::Rules(o), None);
        }
        if game.moves().len() >= ctx.max_turns {
            break (
                Termination::MoveCap,
                Some(super::super::count(ctx.max_turns as u64, "turn")),
            );
        }
        // The side to move: it loses if its move ends the game by adjudication.
        let mover = game.position().side_to_move();
        let i = mover as usize;
        let name = &ctx.engines[idx[i]].name;
        let started = Instant::now();
        let result = seats[i]
            .pick(&game, &opening.fen, clocks.map(|c| (c[i], c[1 - i])))
            .await;
        let used = started.elapsed();
        let side = &mut sides[i];
        side.think += used;
        side.retries += result.retries;
        if let Some(c) = &mut clocks {
            let before = c[i].remaining;
            side.used_ms.push(used.as_millis() as u64);
            let charged = c[i].charge(used);
            side.clock_ms.push(c[i].remaining.as_millis() as u64);
            if charged.is_err() {
                break (
                    Termination::TimeForfeit(mover),
                    Some(format!(
                        "{name} lost on time: the move took {} ms with {} ms on its clock",
                        used.as_millis(),
                        before.as_millis()
                    )),
                );
            }
        }
        match result.answer {
            Answer::Move {
                text,
                reused_visits,
                playouts,
                server_wall_ms,
                budget_ms,
            } => {
                if let Some(budget) = budget_ms {
                    side.late_ms
                        .push((used.as_millis() as u64).saturating_sub(budget));
                }
                if let Some(w) = server_wall_ms {
                    let over = (used.as_millis() as u64).saturating_sub(w);
                    side.max_overhead_ms = Some(side.max_overhead_ms.unwrap_or(0).max(over));
                }
                side.moves += 1;
                side.playouts += playouts.unwrap_or(0);
                if let Some(v) = reused_visits {
                    side.reused_visits.push(v);
                    if v > 0 {
                        side.moves_with_reuse += 1;
                    }
                }
                if text.is_empty() {
                    break (
                        Termination::EngineFailure(mover),
                        Some(format!("{name} offered no move")),
                    );
                }
                // The rules core is the referee: parse, then the checked play.
                let played = text
                    .parse::<Move>()
                    .map_err(|e| e.to_string())
                    .and_then(|m| game.play(m).map_err(|e| e.to_string()));
                if let Err(why) = played {
                    break (
                        Termination::IllegalMove(mover),
                        Some(format!("{name} played {text:?}: {why}")),
                    );
                }
            }
            Answer::Timeout(why) => {
                break (Termination::Timeout(mover), Some(format!("{name}: {why}")));
            }
            Answer::Failure(why) => {
                break (
                    Termination::EngineFailure(mover),
                    Some(format!("{name}: {why}")),
                );
            }
        }
    };
    let (white, black) = (&ctx.engines[g.white], &ctx.engines[g.black]);
    let mut tags: Vec<(String, String)> = vec![
        ("Event".into(), "emergo arena".into()),
        ("Site".into(), ctx.site.clone()),
        ("Date".into(), ctx.date.clone()),
        ("Round".into(), g.number.to_string()),
        ("White".into(), white.name.clone()),
        ("Black".into(), black.name.clone()),
        ("TimeControl".into(), time_control(white, black, ctx.tc)),
        (
            "Opening".into(),
            if opening.moves.is_empty() {
                "-".to_owned()
            } else {
                opening.moves.join(" ")
            },
        ),
        ("GameId".into(), game_id.clone()),
    ];
    if let Some(c) = &clocks {
        tags.push(("WhiteClock".into(), format_clock(c[0].remaining)));
        tags.push(("BlackClock".into(), format_clock(c[1].remaining)));
    }
    if let Some(d) = &detail {
        tags.push(("Adjudication".into(), d.clone()));
    }
    let record = GameRecord {
        tags,
        fen: opening.fen.clone(),
        moves: game.moves().iter().map(Move::to_string).collect(),
        result: termination.result().as_str().to_owned(),
        termination: termination.to_string(),
    };
    Ok(GameReport {
        scheduled: g,
        record,
        termination,
        detail,
        sides,
        opening: opening.describe(),
        game_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The record's result follows the termination: the rules' result, a draw at the turn
    /// cap, else a win for the side that did not cause the adjudication.
    #[test]
    fn results() {
        use emergo_rules::Player;
        let result = |t: Termination| t.result().as_str();
        assert_eq!(result(Termination::TimeForfeit(Player::Black)), "1-0");
        assert_eq!(result(Termination::IllegalMove(Player::White)), "0-1");
        assert_eq!(result(Termination::MoveCap), "1/2");
    }
}
