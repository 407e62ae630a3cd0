//! Search results and rules values turned into protobuf messages.

use emergo_mcts::{Proven, Snapshot, StopReason as MctsStop};
use emergo_proto::v1 as pb;
use emergo_rules::{Move, Outcome};

/// Proof state and plies in protobuf terms.
pub fn proof(p: Option<Proven>) -> (pb::ProofStatus, u32) {
    match p {
        None => (pb::ProofStatus::Unproven, 0),
        Some(Proven::Win { plies }) => (pb::ProofStatus::Win, plies),
        Some(Proven::Loss { plies }) => (pb::ProofStatus::Loss, plies),
        Some(Proven::Draw) => (pb::ProofStatus::Draw, 0),
    }
}

/// The stop reason of the search itself (outside causes are resolved by the caller).
pub fn stop_reason(r: Option<MctsStop>) -> pb::StopReason {
    match r {
        None => pb::StopReason::Unspecified,
        Some(MctsStop::Time) => pb::StopReason::Time,
        Some(MctsStop::Playouts) => pb::StopReason::Playouts,
        Some(MctsStop::Solved) => pb::StopReason::Solved,
        Some(MctsStop::NodeCap) => pb::StopReason::NodeCap,
        Some(MctsStop::SingleMove) => pb::StopReason::SingleLegalMove,
        Some(MctsStop::Stopped) => pb::StopReason::Cancelled,
        Some(MctsStop::SmartPruning) => pb::StopReason::BestMoveSettled,
        Some(MctsStop::Terminal) => pb::StopReason::GameOver,
    }
}

/// The position's value for the side to move as clients show it: the value of the move the
/// engine would play (a proven root: its exact value). The root node's own mean averages every
/// move tried, the poor ones too, so it sat a point or two below the best move's value shown
/// beside it; one definition everywhere.
fn headline_value(s: &Snapshot<Move>) -> f32 {
    match (s.root_proven, s.moves.first()) {
        (None, Some(best)) if best.visits > 0 && s.best_move == Some(best.mv) => best.value,
        _ => s.root_value,
    }
}

/// An analysis update from a snapshot.
pub fn update(
    s: &Snapshot<Move>,
    fen: &str,
    threads: usize,
    last: bool,
    reason: Option<pb::StopReason>,
) -> pb::AnalysisUpdate {
    let moves = s
        .moves
        .iter()
        .map(|m| {
            let (status, plies) = proof(m.proven);
            pb::MoveInfo {
                r#move: m.mv.to_string(),
                visits: m.visits,
                value: m.value,
                proof: status as i32,
                proof_plies: plies,
                pv: m.pv.iter().map(|mv| mv.to_string()).collect(),
            }
        })
        .collect();
    let (root_proof, root_plies) = proof(s.root_proven);
    pb::AnalysisUpdate {
        r#final: last,
        best_move: s.best_move.map(|m| m.to_string()).unwrap_or_default(),
        root_value: headline_value(s),
        moves,
        root_proof: root_proof as i32,
        root_proof_plies: root_plies,
        stats: Some(pb::SearchStats {
            playouts: s.playouts,
            nodes: s.nodes as u64,
            elapsed_ms: s.elapsed.as_millis() as u64,
            playouts_per_second: s.playouts_per_second,
            max_depth: s.max_depth,
            mean_depth: s.mean_depth,
            reused_visits: s.reused_visits,
            threads: threads as u32,
            node_cap_reached: s.node_cap_reached,
            tree_bytes: s.tree_bytes as u64,
            reclaims: s.reclaims,
            nodes_reclaimed: s.nodes_reclaimed,
            // The budget and the wall time are the server's, filled in by `crate::budget`.
            ..Default::default()
        }),
        stop_reason: reason.unwrap_or(pb::StopReason::Unspecified) as i32,
        fen: fen.to_owned(),
        search_id: String::new(),
    }
}

/// The final (and only) update for a position whose game is already over.
pub fn game_over(fen: String, outcome: Outcome) -> pb::AnalysisUpdate {
    let side_value = match outcome.result.winner() {
        None => 0.5,
        Some(_) => 0.0, // the side to move never wins a finished position (RULES.md §9)
    };
    pb::AnalysisUpdate {
        r#final: true,
        root_value: side_value,
        stats: Some(pb::SearchStats::default()),
        stop_reason: pb::StopReason::GameOver as i32,
        fen,
        search_id: String::new(),
        ..Default::default()
    }
}

/// A game status message.
pub fn status(outcome: Option<Outcome>) -> pb::GameStatus {
    match outcome {
        None => pb::GameStatus {
            result: "*".to_owned(),
            reason: String::new(),
        },
        Some(o) => pb::GameStatus {
            result: o.result.as_str().to_owned(),
            reason: o.reason.as_str().to_owned(),
        },
    }
}
