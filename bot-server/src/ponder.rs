//! Pondering: after answering a BestMove that asked for it
//! (`SearchOptions.ponder`, with a game id), the server goes on searching the game's tree from
//! the position after its answer — the opponent's turn — so that the game's next request, after
//! the opponent's reply, reuses a larger subtree.
//!
//! A ponder is a background search with no client:
//!
//! - **Idle threads only.** Its threads are a preemptible grant of admission control
//!   ([`Admission::try_acquire_preemptible`](crate::admission::Admission::try_acquire_preemptible)):
//!   only threads that are free while no request waits, at most as many as the answered search
//!   had. Any request that would have to wait for threads raises the ponder's stop flag at
//!   once; the ponder's supervisor waits for its search threads (an OS thread, never the async
//!   runtime), parks the tree and gives the threads back, which go to the waiters in order.
//! - **The game's next request** stops it on arrival ([`Ponders::stop`]) and, on its own
//!   supervisor thread, waits for the pondered tree to be parked ([`Ponders::wait_for`]) before
//!   it looks for the game's kept tree; the kept tree's root is the position after the bot's
//!   move, and tree reuse advances it by the opponent's reply.
//! - **A cap**: `--max-ponder-ms` (0 turns pondering off), and shutdown.
//! - **Memory**: the answered search's tree-memory grant moves with its tree into the ponder,
//!   cut to what the tree holds plus what is free, up to the ponder's share (its threads'
//!   share, like any search): a ponder never evicts another game's kept tree. A search that
//!   finds its own share held by ponders stops them all and waits for their trees to be parked
//!   (`Engine::grow_grant`): their memory is as preemptible as their threads.
//!
//! The slot of a game's ponder ([`PonderSlot`]) is taken *before* the answer goes out, so a
//! next request that arrives at once still finds (and waits for) the tree. The same slot,
//! with no ponder behind it, covers the other moments when a game's tree is on its way to the
//! store after the answer left: an answer sent before the search threads stopped, and a
//! crowded tree compacted after answering.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use emergo_rules::Move;

use crate::stop::{StopCause, StopControl};

/// Longest the game's next request waits for its ponder to park the tree. A ponder stops within
/// a playout of its flag and parks at once; this only bounds a pathological case, after which
/// the request searches a fresh tree.
pub const HANDOVER_WAIT: Duration = Duration::from_secs(2);

/// The ponders of games, by game id: each one's stop switch. An entry lives from just before
/// the answer that starts a ponder (or leaves before the tree is parked) until its tree is
/// parked.
#[derive(Debug, Default)]
pub struct Ponders {
    map: Mutex<HashMap<String, Arc<StopControl>>>,
    /// Notified whenever an entry goes (supervisor threads wait on it).
    gone: Condvar,
    /// The same, for async code ([`Ponders::ended`]).
    gone_async: tokio::sync::Notify,
}

/// A game's place in [`Ponders`]; removed (and waiters woken) when dropped.
#[derive(Debug)]
pub struct PonderSlot {
    ponders: Arc<Ponders>,
    game_id: String,
    ctl: Arc<StopControl>,
}

impl PonderSlot {
    /// The game id.
    pub fn game_id(&self) -> &str {
        &self.game_id
    }

    /// The ponder's stop switch.
    pub fn control(&self) -> &Arc<StopControl> {
        &self.ctl
    }
}

impl Drop for PonderSlot {
    fn drop(&mut self) {
        let mut map = self.ponders.lock();
        if map
            .get(&self.game_id)
            .is_some_and(|c| Arc::ptr_eq(c, &self.ctl))
        {
            map.remove(&self.game_id);
        }
        drop(map);
        self.ponders.gone.notify_all();
        self.ponders.gone_async.notify_waiters();
    }
}

impl Ponders {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<StopControl>>> {
        // Every change is one map operation: a poisoned lock holds a consistent map.
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the slot of `game_id`'s ponder; `None` if the game has one already (two requests
    /// of one game at once: only the first ponders).
    pub fn begin(self: &Arc<Self>, game_id: &str) -> Option<PonderSlot> {
        let mut map = self.lock();
        if map.contains_key(game_id) {
            return None;
        }
        let ctl = Arc::new(StopControl::new());
        map.insert(game_id.to_owned(), ctl.clone());
        Some(PonderSlot {
            ponders: self.clone(),
            game_id: game_id.to_owned(),
            ctl,
        })
    }

    /// Stops `game_id`'s ponder, if it has one. Never blocks.
    pub fn stop(&self, game_id: &str, cause: StopCause) {
        if let Some(ctl) = self.lock().get(game_id) {
            ctl.stop(cause);
        }
    }

    /// Stops every ponder (shutdown, or a search that needs the memory they hold).
    pub fn stop_all(&self, cause: StopCause) {
        for ctl in self.lock().values() {
            ctl.stop(cause);
        }
    }

    /// Blocks until `game_id` has no ponder (its tree is parked), at most `timeout`; true if it
    /// has none. Blocking: call it from a search's supervisor thread, never from the runtime.
    pub fn wait_for(&self, game_id: &str, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        let mut map = self.lock();
        while map.contains_key(game_id) {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            map = self
                .gone
                .wait_timeout(map, left)
                .map_or_else(|e| e.into_inner().0, |(map, _)| map);
        }
        true
    }

    /// Blocks until no game ponders (every pondered tree is parked), at most `timeout`; true if
    /// none does. Blocking, like [`Ponders::wait_for`].
    pub fn wait_all(&self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        let mut map = self.lock();
        while !map.is_empty() {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            map = self
                .gone
                .wait_timeout(map, left)
                .map_or_else(|e| e.into_inner().0, |(map, _)| map);
        }
        true
    }

    /// Resolves at the next end of a ponder (its tree parked): for async code that waits for
    /// every ponder to end (the shutdown). Like [`tokio::sync::Notify::notified`], it sees only
    /// ends after it is enabled (or first polled).
    pub fn ended(&self) -> tokio::sync::futures::Notified<'_> {
        self.gone_async.notified()
    }

    /// Games with a ponder (running, or being set up or parked).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when no game ponders.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What an answered search hands over to its ponder.
#[derive(Debug)]
pub struct PonderJob {
    /// The game's slot, taken before the answer went out.
    pub slot: PonderSlot,
    /// The game's start FEN as the client sent it.
    pub fen: String,
    /// Moves from the FEN to the answered position.
    pub moves: Vec<Move>,
    /// The answer: the ponder's root is the position after it.
    pub best: Move,
    /// The answered search's threads: the most the ponder takes.
    pub threads: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_ponder_per_game_stopped_by_id() {
        let ponders = Arc::new(Ponders::default());
        let a = ponders.begin("a").unwrap();
        assert!(ponders.begin("a").is_none());
        let b = ponders.begin("b").unwrap();
        assert_eq!(ponders.len(), 2);
        ponders.stop("a", StopCause::Superseded);
        assert!(a.control().is_stopped());
        assert!(!b.control().is_stopped());
        ponders.stop("nobody", StopCause::Superseded);
        ponders.stop_all(StopCause::Shutdown);
        assert!(b.control().is_stopped());
        drop(a);
        assert_eq!(ponders.len(), 1);
        // The game may ponder again once its ponder ended.
        let a = ponders.begin("a").unwrap();
        drop((a, b));
        assert!(ponders.is_empty());
    }

    /// The game's next request waits (on its supervisor thread) until the ponder's tree is
    /// parked; with no ponder it does not wait at all.
    #[test]
    fn the_next_request_waits_for_the_parked_tree() {
        let ponders = Arc::new(Ponders::default());
        assert!(ponders.wait_for("g", Duration::ZERO));
        let slot = ponders.begin("g").unwrap();
        assert!(!ponders.wait_for("g", Duration::from_millis(1)));
        let parked = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let p = parked.clone();
        let ponder = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            p.store(true, std::sync::atomic::Ordering::SeqCst);
            drop(slot);
        });
        assert!(ponders.wait_for("g", Duration::from_secs(20)));
        assert!(parked.load(std::sync::atomic::Ordering::SeqCst));
        ponder.join().unwrap();
    }
}
