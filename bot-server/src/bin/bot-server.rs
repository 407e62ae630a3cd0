//! `bot-server`: the Emergo bot gRPC server, with the HTTP/JSON gateway and web board.

/// mimalloc rather than the system allocator: search trees are allocated in 128 KiB chunks and
/// freed wholesale (reclaims, finished searches), often on other threads than the next search's;
/// glibc keeps such memory in per-thread arenas, so the process's resident memory crept well
/// past the tree-memory budget (398 MiB RSS for trees limited to 256 MiB in a 60 s benchmark),
/// while mimalloc hands freed pages back to the system within milliseconds.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

use clap::Parser;
use emergo_bot_server::config::ServerConfig;
use emergo_bot_server::logging::{self, LogFormat};
use emergo_bot_server::server::{EXIT_CONFIG, EXIT_GRACE_EXCEEDED, EXIT_SECOND_SIGNAL};

#[derive(Parser)]
#[command(
    name = "bot-server",
    version,
    about = "The Emergo bot gRPC server (emergo.bot.v1), with an HTTP/JSON gateway and a web board"
)]
struct Cli {
    #[command(flatten)]
    config: ServerConfig,
    /// Lists every --mcts setting and exits.
    #[arg(long)]
    mcts_help: bool,
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut cli = Cli::parse();
    if cli.mcts_help {
        print!(
            "--mcts KEY=VALUE,... changes the search engine; the settings apply in order to the \
             default (config=strong):\n\n{}",
            emergo_engine::MctsConfig::settings_help("  ")
        );
        return ExitCode::SUCCESS;
    }
    // Logging first, so that the warnings of the start-up checks (a token file others can read,
    // a certificate out of its dates) reach the log. clap accepted the name, so this always
    // matches; validate() checks it again for configurations built in code.
    logging::init(LogFormat::parse(&cli.config.log_format).unwrap_or(LogFormat::Text));
    // Then a bad flag (an empty auth token, an unreadable token file) stops the server before
    // it listens, with the code clap uses for bad flags, as every configuration fault does
    // (`ServeError::exit_code`).
    if let Err(e) = cli.config.validate() {
        eprintln!("bot-server: {e}");
        return ExitCode::from(EXIT_CONFIG);
    }
    let listener = match tokio::net::TcpListener::bind(cli.config.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bot-server: cannot listen on {}: {e}", cli.config.listen);
            return ExitCode::from(EXIT_CONFIG);
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
                return ExitCode::from(EXIT_CONFIG);
            }
        }
    };
    // The first signal starts a graceful shutdown, which the server itself bounds by the grace
    // period (dropping connections still open then). A watchdog ends the process on a second
    // signal, or, as a backstop, shortly after the grace period if something still holds on.
    let grace = cli.config.shutdown_grace() + std::time::Duration::from_secs(5);
    let (first_signal, shutdown) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        emergo_bot_server::server::shutdown_signal().await;
        let _ = first_signal.send(());
        let code = tokio::select! {
            _ = emergo_bot_server::server::shutdown_signal() => {
                eprintln!("bot-server: second signal, exiting now");
                EXIT_SECOND_SIGNAL
            }
            _ = tokio::time::sleep(grace) => {
                eprintln!(
                    "bot-server: still not stopped {} ms after the shutdown signal, exiting",
                    grace.as_millis()
                );
                EXIT_GRACE_EXCEEDED
            }
        };
        std::process::exit(i32::from(code));
    });
    let shutdown = async move {
        let _ = shutdown.await;
    };
    match emergo_bot_server::server::run(listener, http, cli.config, shutdown).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bot-server: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
