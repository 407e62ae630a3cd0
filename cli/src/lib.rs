//! The `emergo` command-line tools, as a library with a thin binary (`main.rs`), as ripgrep and
//! mini-redis do: the end-to-end tests drive the same code the binary runs.
//!
//! - [`tools`]: offline subcommands on the rules core alone, one module each: legal, perft,
//!   bench, learn-eval, learn-value, show.
//! - [`client`]: the subcommands that talk to a bot server — or, with `--local`, to the very
//!   same service running in-process: analyze, bestmove, play, review, loadtest, arena.
//! - [`players`]: in-process players (random, greedy, MCTS, alpha-beta) for matches and the
//!   strength tests.
//! - [`termination`]: how a game between engines ended, for matches, the arena and records.
//!
//! The server itself (`emergo-bot-server`) knows nothing of this crate, so its binary and
//! container image carry no terminal or table crates.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod client;
pub mod players;
pub mod termination;
pub mod tools;
