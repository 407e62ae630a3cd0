//! Emergo playing knowledge on top of the rules core: a static [`eval`]uation, an
//! [`alphabeta`] engine (the sparring partner and baseline player) and the [`state`] adapter
//! that lets the generic MCTS (`emergo-mcts`) search Emergo with priors, evaluation-cut playouts
//! and heavy playouts.
//!
//! Dependencies point one way: this crate knows the rules and the MCTS; neither knows it.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod alphabeta;
pub mod config;
pub mod eval;
pub mod learn;
pub mod state;

pub use alphabeta::{AbLimits, AbResult, AlphaBeta};
pub use config::MctsConfig;
pub use state::{EmergoState, Knowledge};
