//! One load-test request: the RPC the plan names (BestMove, Analyze to its final update, or a
//! whole review), under the client's own deadline, and how it ended as an [`Outcome`].

use emergo_bot_server::metrics::code_name;
use emergo_proto::v1 as pb;
use tonic::Status;

use super::stats::{NO_FINAL_UPDATE, Outcome};
use super::{Plan, Rpc, review};
use crate::client::{Client, request_with_game};

/// What a request's answer says: its playouts, turns reviewed and stop reason.
pub(super) struct Answer {
    pub(super) playouts: u64,
    pub(super) turns: u64,
    pub(super) stop_reason: i32,
}

impl Answer {
    /// The figures of a search's final update.
    fn of(update: pb::AnalysisUpdate) -> Answer {
        Answer {
            playouts: update.stats.map_or(0, |s| s.playouts),
            turns: 0,
            stop_reason: update.stop_reason,
        }
    }
}

impl Plan {
    /// Makes request `n` (0-based) for client `client` and waits for its answer.
    pub(super) async fn request(&self, rpc_client: &mut Client, client: usize, n: u64) -> Outcome {
        let game_id = if self.game_ids {
            format!("load-{client}")
        } else {
            String::new()
        };
        let options = pb::SearchOptions {
            threads: self.threads,
            // A different seed per request, so the searches are not all the same one; not 0,
            // which would let the server pick and make runs less reproducible.
            seed: n + 1,
            game_id: game_id.clone(),
            priority: self.priority as i32,
            ..pb::SearchOptions::default()
        };
        let call = async {
            match self.rpc {
                Rpc::Bestmove => self.best_move(rpc_client, options, &game_id).await,
                Rpc::Analyze => self.analyze(rpc_client, options, &game_id).await,
                Rpc::Review => review::review(self, rpc_client, options).await,
            }
        };
        // grpc-timeout asks the server to respect the deadline; this enforces it on our side
        // too, so a stalled server or network cannot hang a client. Dropping the call cancels
        // the RPC, which frees the server's search threads.
        let answer: Result<Option<Answer>, Status> =
            match tokio::time::timeout(self.timeout, call).await {
                Ok(answer) => answer,
                Err(_) => Err(Status::deadline_exceeded(format!(
                    "no answer within the client deadline of {:?}",
                    self.timeout
                ))),
            };
        match answer {
            Ok(Some(a)) => Outcome::Ok {
                playouts: a.playouts,
                turns: a.turns,
                stop_reason: a.stop_reason,
            },
            Ok(None) => Outcome::Failed {
                code: NO_FINAL_UPDATE,
                message: match self.rpc {
                    Rpc::Analyze => "the stream ended without a final update".to_owned(),
                    Rpc::Bestmove => "the answer has no analysis".to_owned(),
                    Rpc::Review => "the review stream ended without a summary".to_owned(),
                },
            },
            Err(status) => Outcome::Failed {
                code: code_name(status.code()),
                message: status.message().to_owned(),
            },
        }
    }

    /// A BestMove; `None` when the answer has no analysis.
    async fn best_move(
        &self,
        rpc_client: &mut Client,
        options: pb::SearchOptions,
        game_id: &str,
    ) -> Result<Option<Answer>, Status> {
        let mut req = request_with_game(
            pb::BestMoveRequest {
                position: Some(self.position.clone()),
                limits: Some(self.limits),
                options: Some(options),
            },
            game_id,
        );
        req.set_timeout(self.timeout);
        let answer = rpc_client.best_move(req).await?.into_inner();
        Ok(answer.analysis.map(Answer::of))
    }

    /// An Analyze, its stream read to the final update; `None` when it ends without one.
    async fn analyze(
        &self,
        rpc_client: &mut Client,
        options: pb::SearchOptions,
        game_id: &str,
    ) -> Result<Option<Answer>, Status> {
        let mut req = request_with_game(
            pb::AnalyzeRequest {
                position: Some(self.position.clone()),
                limits: Some(self.limits),
                options: Some(options),
                report_interval_ms: 0,
            },
            game_id,
        );
        req.set_timeout(self.timeout);
        let mut stream = rpc_client.analyze(req).await?.into_inner();
        while let Some(update) = stream.message().await? {
            if update.r#final {
                return Ok(Some(Answer::of(update)));
            }
        }
        Ok(None)
    }
}
