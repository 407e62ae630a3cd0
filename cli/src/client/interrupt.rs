//! Ctrl-C in the client tools, handled in one place. A search the user watches (analyze,
//! review) stops at the first Ctrl-C with its answer — StopSearch with the call's search id, the
//! stream going on to its final update — and a second Ctrl-C quits at once; a tool with nothing
//! to show for a stop (bestmove) quits at the first. Quitting exits with status 130 (128 +
//! SIGINT), as a shell reports an interrupted command.

use std::future::Future;
use std::pin::Pin;

use super::Backend;

/// Ctrl-C presses during a search that the first press stops with its answer.
pub struct StopOnCtrlC {
    /// The pending wait for the next press. Kept across `select!` rounds, so that a press
    /// arriving while the loop handles something else is not lost.
    signal: Pin<Box<dyn Future<Output = ()> + Send>>,
    /// Whether a stop has been asked for: the next press quits.
    stopping: bool,
}

impl Default for StopOnCtrlC {
    fn default() -> StopOnCtrlC {
        StopOnCtrlC::new()
    }
}

impl StopOnCtrlC {
    /// Ctrl-C handling for one search; from the first wait on, Ctrl-C no longer kills the
    /// process.
    pub fn new() -> StopOnCtrlC {
        StopOnCtrlC {
            signal: Box::pin(ctrl_c()),
            stopping: false,
        }
    }

    /// Resolves at the next Ctrl-C. Cancel-safe: use it as a branch of `select!`, then call
    /// [`StopOnCtrlC::stop_or_quit`] in the branch's body.
    pub async fn pressed(&mut self) {
        self.signal.as_mut().await;
        self.signal = Box::pin(ctrl_c());
    }

    /// After a press: the first asks `backend` to stop search `search_id` with its answer and
    /// says `stopping` on stderr (the caller reads on to the final update); a second press, or
    /// a stop the backend refuses, quits.
    pub async fn stop_or_quit(&mut self, backend: &Backend, search_id: &str, stopping: &str) {
        if !self.stopping && backend.stop_search(search_id).await.is_ok() {
            self.stopping = true;
            eprintln!();
            eprintln!("emergo: {stopping} (Ctrl-C again to quit at once)");
            return;
        }
        // Exiting closes the connection, which cancels the search on the server.
        eprintln!();
        quit();
    }
}

/// Ends the process as interrupted: a note on stderr and status 130.
pub fn quit() -> ! {
    eprintln!("emergo: interrupted");
    std::process::exit(130)
}

/// Resolves at the next Ctrl-C; for a tool whose Ctrl-C ends its own work (`play` ends the
/// game unfinished) or quits at once (`bestmove`, with [`quit`]).
pub async fn ctrl_c() {
    // An error means no handler could be installed: Ctrl-C then kills the process as usual,
    // and this never resolves.
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}
