//! The reference vectors (RULES.md §13): every position's legal moves, the FEN after each, the
//! capture length and the result must match exactly; perft counts must match.

use std::io::{BufRead, BufReader};

use emergo_rules::{Player, Position, perft};
use flate2::read::GzDecoder;
use serde_json::Value;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

/// Perft entries with more leaves than this are skipped unless `EMERGO_PERFT_LIMIT` raises the
/// limit (an opt-in deep run: `EMERGO_PERFT_LIMIT=2000000000 cargo test --release`).
const PERFT_NODE_LIMIT: u64 = 300_000;

fn perft_node_limit() -> u64 {
    std::env::var("EMERGO_PERFT_LIMIT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(PERFT_NODE_LIMIT)
}

fn positions() -> Vec<Value> {
    let file = std::fs::File::open(format!("{DATA}/positions.jsonl.gz")).unwrap();
    BufReader::new(GzDecoder::new(file))
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn every_vector_position_matches() {
    let rows = positions();
    assert!(rows.len() > 3000, "only {} vectors", rows.len());
    for row in &rows {
        let id = row["id"].as_str().unwrap();
        let fen = row["fen"].as_str().unwrap();
        let pos: Position = fen.parse().unwrap_or_else(|e| panic!("{id}: {fen}: {e}"));
        assert_eq!(pos.to_string(), fen, "{id}: FEN round trip");
        pos.validity_check(false)
            .unwrap_or_else(|e| panic!("{id}: {e}"));

        let side = if row["side_to_move"] == "w" {
            Player::White
        } else {
            Player::Black
        };
        assert_eq!(pos.side_to_move(), side, "{id}");
        assert_eq!(
            u64::from(pos.turns()),
            row["turns_played"].as_u64().unwrap(),
            "{id}"
        );
        assert_eq!(
            u64::from(pos.in_hand(Player::White)),
            row["in_hand"]["w"].as_u64().unwrap()
        );
        assert_eq!(
            u64::from(pos.in_hand(Player::Black)),
            row["in_hand"]["b"].as_u64().unwrap()
        );

        let mut legal: Vec<(String, emergo_rules::Move)> = pos
            .legal_moves()
            .iter()
            .map(|m| (m.to_string(), *m))
            .collect();
        legal.sort_by(|a, b| a.0.cmp(&b.0));
        let names: Vec<&str> = legal.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(names, strings(&row["legal"]), "{id}: {fen}: legal moves");
        assert_eq!(pos.count_legal_moves(), legal.len() as u64, "{id}: count");
        assert_eq!(pos.has_legal_move(), !legal.is_empty(), "{id}");

        let after = strings(&row["after"]);
        for ((name, mv), want) in legal.iter().zip(&after) {
            // Both the parsed notation and the generated move must play to the same FEN.
            let parsed: emergo_rules::Move = name.parse().unwrap();
            assert_eq!(parsed, *mv, "{id}: {name} notation round trip");
            let next = pos.play(parsed).unwrap_or_else(|e| panic!("{id}: {e}"));
            assert_eq!(&next.to_string(), want, "{id}: {fen}: after {name}");
            next.validity_check(false)
                .unwrap_or_else(|e| panic!("{id} after {name}: {e}"));
        }

        let max_jumps = row["max_jumps"].as_u64().unwrap() as usize;
        let expect = if pos.has_capture() {
            pos.max_capture_len()
        } else {
            0
        };
        assert_eq!(expect, max_jumps, "{id}: max jumps");

        let (result, reason) = match pos.outcome() {
            None => ("*", Value::Null),
            Some(o) => (o.result.as_str(), Value::from(o.reason.as_str())),
        };
        assert_eq!(
            result,
            row["result"].as_str().unwrap(),
            "{id}: {fen}: result"
        );
        assert_eq!(reason, row["reason"], "{id}: {fen}: reason");
    }
}

#[test]
fn perft_counts_match() {
    let text = std::fs::read_to_string(format!("{DATA}/perft.json")).unwrap();
    let data: Value = serde_json::from_str(&text).unwrap();
    let mut checked = 0;
    for entry in data["positions"].as_array().unwrap() {
        let name = entry["name"].as_str().unwrap();
        let pos: Position = entry["fen"].as_str().unwrap().parse().unwrap();
        for (depth, count) in entry["perft"].as_object().unwrap() {
            let (depth, count): (u32, u64) = (depth.parse().unwrap(), count.as_u64().unwrap());
            if count > perft_node_limit() {
                continue;
            }
            assert_eq!(perft(&pos, depth), count, "{name} depth {depth}");
            checked += 1;
        }
    }
    assert!(checked >= 50, "only {checked} perft entries checked");
}
