//! Emergo playing knowledge on top of the rules core:
//!
//! - [`eval`]: the static evaluation (documented features × weights from `weights.txt`);
//! - [`alphabeta`]: the alpha-beta engine (the sparring partner and baseline player, and the
//!   quiescence search that scores MCTS leaves);
//! - [`state`]: the adapter that lets the generic MCTS (`emergo-mcts`) search Emergo, with
//!   leaf evaluation, priors, implicit minimax values and heavy playouts;
//! - [`config`]: named MCTS configurations (the default `strong` one, the `uniform` one and
//!   the first version's, `v1`) and their `key=value` settings, shared by the server and the
//!   tools;
//! - [`learn`]: fitting the evaluation weights to self-play results;
//! - [`level`]: playing levels 1–8, weaker opponents made from the same search;
//! - [`value_net`]: a learned correction of the evaluation, distilled from deeper searches,
//!   and [`distill`]: its training data.
//!
//! Dependencies point one way: this crate knows the rules and the MCTS; neither knows it.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod alphabeta;
pub mod config;
pub mod distill;
pub mod eval;
mod knowledge_cache;
pub mod learn;
pub mod level;
pub mod state;
pub mod value_net;

pub use alphabeta::{AbLimits, AbResult, AlphaBeta};
pub use config::MctsConfig;
pub use state::{EmergoState, Knowledge};
