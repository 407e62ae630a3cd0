//! Kept search trees, one per game id, for tree reuse between the moves of a game.
//!
//! A finished search is parked here under its game id together with the position it searched
//! (start FEN + moves). The next request with that id takes it out; if the new position continues
//! the old one, the tree is advanced along the moves played since and keeps the visits below
//! them. Taking the entry out means two concurrent requests for one game never share a tree.
//! Bounded by a number of games and a total number of nodes; the least recently used go first.

use std::collections::VecDeque;
use std::sync::Mutex;

use emergo_mcts::Search;
use emergo_rules::Move;

use crate::engine::EmergoState;

/// A parked tree and the position its root stands for.
pub struct KeptGame {
    /// The start FEN of the game as the client sent it.
    pub fen: String,
    /// Moves from the FEN to the tree's root.
    pub moves: Vec<Move>,
    /// The search (not running).
    pub search: Search<EmergoState>,
}

impl KeptGame {
    /// If the position `fen` + `moves` continues this game, the moves played since the tree's
    /// root.
    pub fn continuation<'a>(&self, fen: &str, moves: &'a [Move]) -> Option<&'a [Move]> {
        (self.fen == fen && moves.starts_with(&self.moves)).then(|| &moves[self.moves.len()..])
    }
}

/// The LRU store of kept games.
pub struct GameStore {
    entries: Mutex<VecDeque<(String, KeptGame)>>,
    max_games: usize,
    max_nodes: usize,
}

impl GameStore {
    /// A store for at most `max_games` trees of at most `max_nodes` nodes together.
    pub fn new(max_games: usize, max_nodes: usize) -> GameStore {
        GameStore {
            entries: Mutex::new(VecDeque::new()),
            max_games,
            max_nodes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(String, KeptGame)>> {
        // A panic while holding the lock cannot leave the deque inconsistent; carry on.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Removes and returns the tree kept for `id`.
    pub fn take(&self, id: &str) -> Option<KeptGame> {
        let mut entries = self.lock();
        let i = entries.iter().position(|(k, _)| k == id)?;
        entries.remove(i).map(|(_, g)| g)
    }

    /// Parks a tree as the most recently used, evicting old ones beyond the bounds. The evicted
    /// trees (or `game` itself, if it cannot be kept) are returned: freeing a large tree takes
    /// milliseconds, so the caller drops them when it suits it, and never under the lock.
    #[must_use = "dropping the evicted trees frees their memory; do it off the async runtime"]
    pub fn put(&self, id: String, game: KeptGame) -> Vec<Search<EmergoState>> {
        if self.max_games == 0 || game.search.node_count() > self.max_nodes {
            return vec![game.search];
        }
        let mut evicted = Vec::new();
        {
            let mut entries = self.lock();
            if let Some(i) = entries.iter().position(|(k, _)| *k == id) {
                evicted.extend(entries.remove(i));
            }
            entries.push_back((id, game));
            let mut nodes: usize = entries.iter().map(|(_, g)| g.search.node_count()).sum();
            while entries.len() > self.max_games || nodes > self.max_nodes {
                let Some(old) = entries.pop_front() else {
                    break;
                };
                nodes -= old.1.search.node_count();
                evicted.push(old);
            }
        }
        evicted.into_iter().map(|(_, g)| g.search).collect()
    }

    /// Number of kept games.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every kept tree.
    pub fn clear(&self) {
        let all: Vec<_> = self.lock().drain(..).collect();
        drop(all);
    }
}
