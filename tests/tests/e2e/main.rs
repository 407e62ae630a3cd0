//! The end-to-end tests, one binary (as ripgrep has): the real `bot-server` and `emergo`
//! binaries and in-process servers, driven as users and clients drive them. Each module is one
//! area; shared helpers (binaries, test servers, request builders) are in `emergo_tests`
//! (`tests/src/lib.rs`).
//!
//! `cargo test --release -p emergo-tests --test e2e -- MODULE::` runs one area, e.g.
//! `-- web_board::`; `-- --ignored --nocapture NAME` runs a measurement.

mod architecture;
mod cli_offline;
mod client_analyze;
mod client_arena;
mod client_loadtest;
mod client_play;
mod client_review;
mod clock;
mod connections;
mod deploy;
mod exit_codes;
mod fleet;
mod gateway;
mod gateway_policy;
mod levels;
mod ponder;
mod process;
mod python_client;
mod review;
mod review_limits;
mod scheduling;
mod server;
mod server_contract;
mod startup_files;
mod strength;
mod tls;
mod web_board;
mod wording;
