//! `bot-server`: the Emergo bot gRPC server.

use std::process::ExitCode;

use clap::Parser;
use emergo_bot_server::config::ServerConfig;
use tracing_subscriber::EnvFilter;

#[derive(Parser)]
#[command(
    name = "bot-server",
    version,
    about = "The Emergo bot gRPC server (emergo.bot.v1)"
)]
struct Cli {
    #[command(flatten)]
    config: ServerConfig,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    let listener = match tokio::net::TcpListener::bind(cli.config.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bot-server: cannot listen on {}: {e}", cli.config.listen);
            return ExitCode::from(2);
        }
    };
    match emergo_bot_server::server::run(
        listener,
        cli.config,
        emergo_bot_server::server::shutdown_signal(),
    )
    .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bot-server: {e}");
            ExitCode::FAILURE
        }
    }
}
