//! `emergo analyze` (being built).

use clap::Args;

use super::ClientError;

/// Flags of `emergo analyze`.
#[derive(Clone, Debug, Args)]
pub struct AnalyzeArgs {}

/// Runs `emergo analyze`.
pub async fn run(_args: AnalyzeArgs) -> Result<(), ClientError> {
    Err(ClientError::Invalid("not built yet".to_owned()))
}

/// Flags of `emergo bestmove`.
#[derive(Clone, Debug, Args)]
pub struct BestMoveArgs {}

/// Runs `emergo bestmove`.
pub async fn run_best_move(_args: BestMoveArgs) -> Result<(), ClientError> {
    Err(ClientError::Invalid("not built yet".to_owned()))
}
