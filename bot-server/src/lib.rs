//! The Emergo bot service (gRPC, `emergo.bot.v1`), its HTTP/JSON gateway and the web board.
//!
//! A library with thin binaries, as in mini-redis: [`server::run`] serves on a listener until a
//! shutdown future completes; `bin/bot-server.rs` parses flags, installs tracing, binds and calls
//! it; tests start the very same server on port 0.
//!
//! - The Emergo knowledge and its adapter for the search are `emergo-engine`'s, used directly:
//!   "engine" here names only [`runner::Engine`], the shared state of the running searches.
//! - [`request`]: client messages checked into domain values; [`error`]: errors → gRPC codes.
//! - [`admission`]: the server-wide search-thread budget, granted by priority with a bounded
//!   queue per priority; [`stop`]: search ids and StopSearch (stop with answer);
//!   [`memory`]: the tree-memory budget shared by running searches and kept trees.
//! - [`runner`]: one search per request on its own threads: deadlines, streaming, cancellation,
//!   tree reuse ([`games`]), shutdown; [`ponder`]: searching a game's tree on idle threads
//!   between its moves; [`timeman`]: game clocks turned into move budgets,
//!   [`budget`]: a search's budget counted from the request's arrival.
//! - [`review`]: whole-game review (AnalyzeGame): a game's positions searched turn by turn,
//!   the played moves classified, the turns streamed in order, a per-player summary.
//! - [`service`]: the service core, transport-neutral: each operation takes its request
//!   message and the deadline as a value and answers with its response or a typed
//!   [`error::ServiceError`], logging and counting every request; two thin doors call it:
//!   [`grpc`] (tonic) and [`http`] (the HTTP/JSON gateway and the web board, [`web`]), and the
//!   `emergo` tools' `--local` mode calls it in-process.
//! - [`server`]: assembling the doors, health, reflection, TLS and a graceful shutdown;
//!   [`auth`]: the bearer token, one check for both doors; [`net`]: the connection layer;
//!   [`metrics`]: Prometheus; [`files`]: the operator's files, read with a size cap.
//!
//! The `emergo` command-line tools live in their own crate (`emergo-cli`), which uses this
//! library for its `--local` mode.

#![warn(missing_debug_implementations)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod admission;
pub mod auth;
pub mod budget;
pub mod config;
pub mod convert;
pub mod error;
pub mod files;
pub mod games;
pub mod grpc;
pub mod http;
pub mod http_policy;
pub mod logging;
pub mod memory;
pub mod metrics;
pub mod net;
pub mod ponder;
pub mod request;
pub mod review;
pub mod runner;
pub mod server;
pub mod service;
pub mod stop;
pub mod timeman;
pub mod tls;
pub mod web;
