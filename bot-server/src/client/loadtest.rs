//! `emergo loadtest` (being built).

use clap::Args;

use super::ClientError;

/// Flags of `emergo loadtest`.
#[derive(Clone, Debug, Args)]
pub struct LoadTestArgs {}

/// Runs `emergo loadtest`.
pub async fn run(_args: LoadTestArgs) -> Result<(), ClientError> {
    Err(ClientError::Invalid("not built yet".to_owned()))
}
