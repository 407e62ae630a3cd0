//! The Emergo bot service and the `emergo` command-line tools.
//!
//! For now this crate holds the offline tools ([`tools`]); the gRPC server joins it later.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod tools;
