//! `bot-server`: the Emergo bot gRPC server, with the HTTP/JSON gateway and web board.

use std::process::ExitCode;

use clap::Parser;
use emergo_bot_server::config::ServerConfig;
use tracing_subscriber::EnvFilter;

#[derive(Parser)]
#[command(
    name = "bot-server",
    version,
    about = "The Emergo bot gRPC server (emergo.bot.v1), with an HTTP/JSON gateway and a web board"
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
    let http = if cli.config.no_http {
        None
    } else {
        match tokio::net::TcpListener::bind(cli.config.http_listen).await {
            Ok(l) => Some(l),
            Err(e) => {
                eprintln!(
                    "bot-server: cannot listen on {} for HTTP: {e} (use --http-listen ADDR or --no-http)",
                    cli.config.http_listen
                );
                return ExitCode::from(2);
            }
        }
    };
    let shutdown = emergo_bot_server::server::shutdown_signal();
    match emergo_bot_server::server::run(listener, http, cli.config, shutdown).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bot-server: {e}");
            ExitCode::FAILURE
        }
    }
}
