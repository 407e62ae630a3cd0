//! The Emergo adapter for the search lives in `emergo-engine` (with the evaluation and the
//! alpha-beta engine); re-exported here for the server's modules.

pub use emergo_engine::{EmergoState, Knowledge};
