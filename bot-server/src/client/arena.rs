//! `emergo arena` (being built).

use clap::Args;

use super::ClientError;

/// Flags of `emergo arena`.
#[derive(Clone, Debug, Args)]
pub struct ArenaArgs {}

/// Runs `emergo arena`.
pub async fn run(_args: ArenaArgs) -> Result<(), ClientError> {
    Err(ClientError::Invalid("not built yet".to_owned()))
}
