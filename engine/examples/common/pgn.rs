//! Reading `emergo arena` PGN files, for the tuning examples (`blame`, `probe`, `threads`,
//! `transpositions`).

/// Every game of an arena PGN file: White's name, Black's name, the starting FEN and the moves.
pub fn parse_games(text: &str) -> Vec<(String, String, String, Vec<String>)> {
    let mut games = Vec::new();
    let (mut white, mut black, mut fen) = (String::new(), String::new(), String::new());
    let mut moves: Vec<String> = Vec::new();
    let mut in_moves = false;
    for line in text.lines() {
        let line = line.trim();
        if let Some(tag) = line.strip_prefix('[') {
            if in_moves {
                games.push((
                    white.clone(),
                    black.clone(),
                    fen.clone(),
                    std::mem::take(&mut moves),
                ));
                in_moves = false;
            }
            // A tag without a value is not one of those read here.
            let Some((name, value)) = tag.split_once(' ') else {
                continue;
            };
            let value = value.trim_end_matches(']').trim_matches('"').to_string();
            match name {
                "White" => white = value,
                "Black" => black = value,
                "FEN" => fen = value,
                _ => {}
            }
        } else if !line.is_empty() {
            in_moves = true;
            for tok in line.split_whitespace() {
                if tok.ends_with('.') || ["1-0", "0-1", "1/2", "*", "1/2-1/2"].contains(&tok) {
                    continue;
                }
                moves.push(tok.to_string());
            }
        }
    }
    if in_moves {
        games.push((white, black, fen, moves));
    }
    games
}

/// The position before every `every`-th turn (`every`, `2 * every`, ...) of the first
/// `max_games` games of an arena PGN file, each as `(game number from 1, turn, game)`: the
/// positions the diagnosis examples search.
#[allow(dead_code)] // not every example that reads PGN files walks their positions
pub fn positions_every(
    text: &str,
    max_games: usize,
    every: usize,
) -> Result<Vec<(usize, usize, emergo_rules::Game)>, String> {
    let every = every.max(1);
    let mut positions = Vec::new();
    for (gi, (_, _, fen, moves)) in parse_games(text).iter().take(max_games).enumerate() {
        for turn in (every..moves.len()).step_by(every) {
            let before: Vec<&str> = moves[..turn - 1].iter().map(String::as_str).collect();
            let game = emergo_rules::Game::from_fen_and_moves(fen, &before)
                .map_err(|e| format!("game {}, turn {turn}: {e}", gi + 1))?;
            positions.push((gi + 1, turn, game));
        }
    }
    Ok(positions)
}
