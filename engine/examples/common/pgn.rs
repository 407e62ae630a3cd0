//! Reading `emergo arena` PGN files, for the tuning examples (`blame`, `probe`).

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
