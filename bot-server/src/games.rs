//! Kept search trees, one per game id, for tree reuse between the moves of a game.
//!
//! A finished search is parked here under its game id together with the position it searched
//! (start FEN + moves). The next request with that id takes it out; if the new position continues
//! the old one, the tree is advanced along the moves played since and keeps the visits below
//! them. Taking the entry out means two concurrent requests for one game never share a tree.
//! Bounded by a number of games and a total number of nodes; the least recently used go first.
//! Kept trees also hold their bytes of the tree-memory budget ([`crate::memory`]), and a search
//! that needs room evicts the least recently used ones ([`GameStore::evict_oldest`]).

use std::collections::VecDeque;
use std::sync::Mutex;

use emergo_engine::EmergoState;
use emergo_mcts::Search;
use emergo_rules::Move;

use crate::memory::TreeGrant;

/// A search tree and the bytes of the tree-memory budget that pay for it. Fields drop in
/// declaration order: the tree is freed before its bytes go back to the budget.
#[derive(Debug)]
pub struct BudgetedSearch {
    /// The search (not running).
    pub search: Search<EmergoState>,
    /// Its grant; keep it declared after `search`.
    pub grant: TreeGrant,
}

/// A parked tree and the position its root stands for.
pub struct KeptGame {
    /// The start FEN of the game as the client sent it.
    pub fen: String,
    /// Moves from the FEN to the tree's root.
    pub moves: Vec<Move>,
    /// The search and its grant.
    pub tree: BudgetedSearch,
    /// What pondering added to the tree ([`crate::ponder`]); empty if it was not pondered.
    pub pondered: Pondered,
}

impl std::fmt::Debug for KeptGame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptGame")
            .field("fen", &self.fen)
            .field("moves", &self.moves.len())
            .field("pondered", &self.pondered)
            .finish_non_exhaustive()
    }
}

impl KeptGame {
    /// If the position `fen` + `moves` continues this game, the moves played since the tree's
    /// root.
    pub fn continuation<'a>(&self, fen: &str, moves: &'a [Move]) -> Option<&'a [Move]> {
        (self.fen == fen && moves.starts_with(&self.moves)).then(|| &moves[self.moves.len()..])
    }
}

/// What a ponder added to a kept tree, whose root is then the position after the bot's answer:
/// its playouts, and the visits each of the opponent's replies (the root's moves) got.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pondered {
    /// Playouts of the ponder.
    pub playouts: u64,
    /// Visits the ponder added below each root move.
    pub by_reply: Vec<(Move, u64)>,
}

impl Pondered {
    /// The difference between the root moves' visits `before` and `after` a ponder of
    /// `playouts` playouts (a reclaim during the ponder can lower a count: never below 0).
    pub fn between(before: &[(Move, u64)], after: &[(Move, u64)], playouts: u64) -> Pondered {
        let by_reply = after
            .iter()
            .map(|&(mv, visits)| {
                let old = before.iter().find(|(m, _)| *m == mv).map_or(0, |&(_, v)| v);
                (mv, visits.saturating_sub(old))
            })
            .filter(|&(_, added)| added > 0)
            .collect();
        Pondered { playouts, by_reply }
    }

    /// Of `reused` visits kept by advancing the tree along `extra`, those the ponder added: all
    /// of its playouts at the pondered root itself, those below the opponent's reply after it
    /// (further moves keep a part of them: the count is then an upper bound), never more than
    /// `reused`.
    pub fn visits_after(&self, extra: &[Move], reused: u64) -> u64 {
        let added = match extra.first() {
            None => self.playouts,
            Some(reply) => self
                .by_reply
                .iter()
                .find(|(m, _)| m == reply)
                .map_or(0, |&(_, v)| v),
        };
        added.min(reused)
    }
}

/// The LRU store of kept games.
pub struct GameStore {
    entries: Mutex<VecDeque<(String, KeptGame)>>,
    max_games: usize,
    max_nodes: usize,
}

impl std::fmt::Debug for GameStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameStore")
            .field("max_games", &self.max_games)
            .field("max_nodes", &self.max_nodes)
            .finish_non_exhaustive()
    }
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

    /// Removes and returns the tree kept for `id`; its grant counts as a running search's again.
    pub fn take(&self, id: &str) -> Option<KeptGame> {
        let mut game = {
            let mut entries = self.lock();
            let i = entries.iter().position(|(k, _)| k == id)?;
            entries.remove(i).map(|(_, g)| g)?
        };
        game.tree.grant.set_kept(false);
        Some(game)
    }

    /// Removes and returns the least recently used tree, to make room in the tree-memory budget
    /// (dropping it frees the tree, then its bytes).
    pub fn evict_oldest(&self) -> Option<KeptGame> {
        self.lock().pop_front().map(|(_, g)| g)
    }

    /// Parks a tree as the most recently used, evicting old ones beyond the bounds. Its grant
    /// shrinks to the bytes the tree holds; a tree holding more than its grant covers (which the
    /// search's memory limit should prevent) is not kept. The evicted trees (or `game`'s own,
    /// if it cannot be kept) are returned: freeing a large tree takes milliseconds, so the caller
    /// drops them when it suits it, and never under the lock.
    #[must_use = "dropping the evicted trees frees their memory; do it off the async runtime"]
    pub fn put(&self, id: String, mut game: KeptGame) -> Vec<BudgetedSearch> {
        let held = game.tree.search.memory_bytes();
        if held > game.tree.grant.bytes() {
            // Only from free memory: a tree over its limit must not push others out.
            game.tree.grant.grow_to(held, || false);
        }
        if self.max_games == 0
            || game.tree.search.node_count() > self.max_nodes
            || held > game.tree.grant.bytes()
        {
            return vec![game.tree];
        }
        game.tree.grant.shrink_to(held);
        game.tree.grant.set_kept(true);
        let mut evicted = Vec::new();
        {
            let mut entries = self.lock();
            if let Some(i) = entries.iter().position(|(k, _)| *k == id) {
                evicted.extend(entries.remove(i));
            }
            entries.push_back((id, game));
            let mut nodes: usize = entries
                .iter()
                .map(|(_, g)| g.tree.search.node_count())
                .sum();
            while entries.len() > self.max_games || nodes > self.max_nodes {
                let Some(old) = entries.pop_front() else {
                    break;
                };
                nodes -= old.1.tree.search.node_count();
                evicted.push(old);
            }
        }
        evicted.into_iter().map(|(_, g)| g.tree).collect()
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use emergo_mcts::SearchParams;
    use emergo_rules::Position;

    use super::*;
    use crate::memory::TreeMemory;

    const MIB: usize = 1 << 20;

    /// A finished 300-playout search with its grant of `share` bytes.
    fn searched(memory: &Arc<TreeMemory>, share: usize) -> BudgetedSearch {
        let mut grant = memory.grant();
        let params = SearchParams {
            max_playouts: Some(300),
            max_tree_bytes: grant.grow_to(share, || false),
            ..SearchParams::default()
        };
        let mut search = Search::new(EmergoState::new(Position::initial()), params);
        search.run();
        BudgetedSearch { search, grant }
    }

    fn kept(tree: BudgetedSearch) -> KeptGame {
        KeptGame {
            fen: String::new(),
            moves: Vec::new(),
            tree,
            pondered: Pondered::default(),
        }
    }

    /// The visits a ponder added, per reply, and the part of a reuse they are.
    #[test]
    fn pondered_visits_per_reply() {
        let mv = |s: &str| s.parse::<Move>().unwrap();
        let (a, b, c) = (mv("a1"), mv("b2"), mv("c3"));
        let p = Pondered::between(&[(a, 10), (b, 5)], &[(a, 40), (b, 5), (c, 7)], 37);
        assert_eq!(p.by_reply, [(a, 30), (c, 7)]);
        assert_eq!(p.visits_after(&[a], 100), 30);
        assert_eq!(p.visits_after(&[a], 20), 20);
        assert_eq!(p.visits_after(&[b], 5), 0);
        assert_eq!(p.visits_after(&[], 1000), 37);
        assert_eq!(p.visits_after(&[c, a], 3), 3);
        assert_eq!(Pondered::default().visits_after(&[a], 50), 0);
        // A reclaim during the ponder lowered a count: no underflow.
        let p = Pondered::between(&[(a, 10)], &[(a, 4)], 0);
        assert!(p.by_reply.is_empty());
    }

    /// A kept tree's grant shrinks to what the tree holds and counts as kept;
    /// taken out again it is a running search's; evicted or dropped, its bytes come back.
    #[test]
    fn kept_trees_hold_what_they_use_of_the_budget() {
        let memory = Arc::new(TreeMemory::new(64 * MIB, 2));
        let store = GameStore::new(4, 1_000_000);
        let tree = searched(&memory, memory.share(1));
        let held = tree.search.memory_bytes();
        assert!(held > 0 && held < 32 * MIB, "{held}");
        assert_eq!(memory.in_use(), 32 * MIB);
        assert!(store.put("g1".into(), kept(tree)).is_empty());
        assert_eq!((memory.in_use(), memory.kept()), (held, held));
        let game = store.take("g1").unwrap();
        assert_eq!((memory.in_use(), memory.kept()), (held, 0));
        assert!(store.put("g1".into(), game).is_empty());
        let second = searched(&memory, memory.share(1));
        let held2 = second.search.memory_bytes();
        assert!(store.put("g2".into(), kept(second)).is_empty());
        assert_eq!(memory.kept(), held + held2);
        // Eviction takes the least recently used first.
        let oldest = store.evict_oldest().unwrap();
        assert_eq!(oldest.tree.grant.bytes(), held);
        drop(oldest);
        assert_eq!((memory.in_use(), memory.kept()), (held2, held2));
        store.clear();
        assert_eq!((memory.in_use(), memory.kept()), (0, 0));
        assert!(store.evict_oldest().is_none());
    }

    /// A store that keeps nothing hands the tree back with its grant untouched; so it does with
    /// a tree holding more than its grant pays for.
    #[test]
    fn trees_that_cannot_be_kept_are_handed_back() {
        let memory = Arc::new(TreeMemory::new(64 * MIB, 1));
        let none = GameStore::new(0, 1_000_000);
        let back = none.put("g".into(), kept(searched(&memory, 8 * MIB)));
        assert_eq!(back.len(), 1);
        assert_eq!((memory.in_use(), memory.kept()), (8 * MIB, 0));
        drop(back);
        assert_eq!(memory.in_use(), 0);
        // A tree whose grant is smaller than the tree (here: none at all), with no free budget
        // to cover it, is not kept.
        let store = GameStore::new(4, 1_000_000);
        let mut tree = searched(&memory, 8 * MIB);
        tree.grant = memory.grant();
        let mut all = memory.grant();
        all.grow_to(memory.budget(), || false);
        let back = store.put("g".into(), kept(tree));
        assert_eq!(back.len(), 1);
        assert!(store.is_empty());
        drop((back, all));
        assert_eq!(memory.in_use(), 0);
    }
}
