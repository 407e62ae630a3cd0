//! `emergo play` (being built).

use clap::Args;

use super::ClientError;

/// Flags of `emergo play`.
#[derive(Clone, Debug, Args)]
pub struct PlayArgs {}

/// Runs `emergo play`.
pub async fn run(_args: PlayArgs) -> Result<(), ClientError> {
    Err(ClientError::Invalid("not built yet".to_owned()))
}
