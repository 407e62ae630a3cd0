//! The review load (`emergo loadtest --rpc review`): the game each request reviews — a record
//! file, moves, or the built-in 100-turn game — and the AnalyzeGame call, read to its summary.

use emergo_proto::v1 as pb;
use emergo_proto::v1::game_review_update::Update;
use emergo_rules::INITIAL_FEN;
use tonic::Status;

use super::request::Answer;
use super::{LoadTestArgs, Plan, Rpc};
use crate::client::{Client, ClientError};

/// The game `--rpc review` reviews unless told otherwise: 100 turns of an arena game
/// (`mcts:playouts=100` against `mcts:playouts=1000`, won by Black), so that "a 100-turn game
/// at N playouts per turn" means the same thing from one run to the next.
pub const SAMPLE_GAME: &str = include_str!("../review-100.pgn");

/// The record text a review sends (the server parses it): `--record`'s file, the built-in game
/// when neither `--fen` nor `--moves` is given, else empty (the game goes by its moves).
pub(super) fn record(args: &LoadTestArgs) -> Result<String, ClientError> {
    let record = match (&args.record, args.rpc) {
        (Some(path), _) => std::fs::read_to_string(path)
            .map_err(|e| ClientError::Invalid(format!("--record {}: {e}", path.display())))?,
        (None, Rpc::Review) if args.moves.is_empty() && args.fen == INITIAL_FEN => {
            SAMPLE_GAME.to_owned()
        }
        (None, _) => String::new(),
    };
    if args.rpc == Rpc::Review && record.is_empty() && args.moves.is_empty() {
        return Err(ClientError::Invalid(
            "--rpc review needs a game: --moves, --record or neither (the built-in game)"
                .to_owned(),
        ));
    }
    Ok(record)
}

/// One AnalyzeGame of the plan's game, its stream read to the summary; `None` when it ends
/// without one. A review has no game id: its turns are separate searches.
pub(super) async fn review(
    plan: &Plan,
    rpc_client: &mut Client,
    options: pb::SearchOptions,
) -> Result<Option<Answer>, Status> {
    let (game, record) = if plan.record.is_empty() {
        (Some(plan.position.clone()), String::new())
    } else {
        (None, plan.record.clone())
    };
    let mut req = tonic::Request::new(pb::AnalyzeGameRequest {
        game,
        record,
        per_turn: Some(plan.limits),
        total_time_ms: None,
        turns: Vec::new(),
        options: Some(pb::SearchOptions {
            game_id: String::new(),
            ..options
        }),
    });
    req.set_timeout(plan.timeout);
    let mut stream = rpc_client.analyze_game(req).await?.into_inner();
    while let Some(update) = stream.message().await? {
        if let Some(Update::Summary(s)) = update.update {
            return Ok(Some(Answer {
                playouts: s.playouts,
                turns: u64::from(s.turns_analysed),
                stop_reason: s.stop_reason,
            }));
        }
    }
    Ok(None)
}
