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
    // The first signal starts a graceful shutdown; a watchdog then ends the process on a second
    // signal, or when the grace period is over while clients still hold requests open.
    let grace = cli.config.shutdown_grace();
    let (first_signal, shutdown) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        emergo_bot_server::server::shutdown_signal().await;
        let _ = first_signal.send(());
        let code = tokio::select! {
            _ = emergo_bot_server::server::shutdown_signal() => {
                eprintln!("bot-server: second signal, exiting now");
                130
            }
            _ = tokio::time::sleep(grace) => {
                eprintln!(
                    "bot-server: still not drained after the {} ms shutdown grace, dropping connections",
                    grace.as_millis()
                );
                1
            }
        };
        std::process::exit(code);
    });
    let shutdown = async move {
        let _ = shutdown.await;
    };
    match emergo_bot_server::server::run(listener, http, cli.config, shutdown).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bot-server: {e}");
            ExitCode::FAILURE
        }
    }
}
