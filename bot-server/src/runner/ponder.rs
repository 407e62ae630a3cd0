//! Running a game's ponder ([`crate::ponder`] has the whole story and the registry): the
//! answered search's tree searched on from the position after the answer, on idle threads,
//! then parked for the game's next request.

use std::sync::Arc;
use std::time::Duration;

use emergo_mcts::{Game as _, Snapshot};
use emergo_rules::Move;

use super::{Engine, fresh_seed};
use crate::games::{BudgetedSearch, KeptGame, Pondered};
use crate::ponder::PonderJob;
use crate::stop::StopCause;

/// Visits per root move.
fn root_visits(s: &Snapshot<Move>) -> Vec<(Move, u64)> {
    s.moves.iter().map(|m| (m.mv, m.visits)).collect()
}

/// Parks a game's tree in the kept-tree store; returns what the store evicted, for the caller
/// to drop once it released what it holds.
fn park(
    engine: &Engine,
    game_id: &str,
    fen: String,
    moves: Vec<Move>,
    tree: BudgetedSearch,
    pondered: Pondered,
) -> Vec<BudgetedSearch> {
    engine.games.put(
        game_id.to_owned(),
        KeptGame {
            fen,
            moves,
            tree,
            pondered,
        },
    )
}

/// Ponders `job` on the answered search's `tree` until it is stopped (preempted, the game's
/// next request, shutdown) or capped, then parks the tree under the game id, its root the
/// position after the answer. Blocking: runs on the answered search's supervisor thread, after
/// the answer went out and the search's own threads were given back.
pub fn run(engine: &Arc<Engine>, job: PonderJob, tree: BudgetedSearch) {
    let PonderJob {
        slot,
        fen,
        mut moves,
        best,
        threads,
    } = job;
    let BudgetedSearch {
        mut search,
        mut grant,
    } = tree;
    let ctl = slot.control().clone();
    let mut after = search.root_state().clone();
    after.play(best);
    let over = after.rules_outcome().is_some();
    let preempt = ctl.clone();
    let threads_grant = (!over && !ctl.is_stopped())
        .then(|| {
            engine.admission.try_acquire_preemptible(
                threads,
                Arc::new(move || {
                    preempt.stop(StopCause::Preempted);
                }),
            )
        })
        .flatten();
    // The ponder's tree memory: what its tree holds, plus what is free up to the share of a
    // search on its threads. A ponder never evicts another game's kept tree, and what it holds
    // beyond its tree goes back as soon as a search needs it (`Engine::grow_grant` stops the
    // ponders and the parked tree's grant shrinks to its bytes). A tree larger than the share
    // (the answered search had more threads) is cut down by `set_params`.
    let limit = threads_grant.as_ref().map(|t| {
        let share = engine.memory.share(t.threads);
        grant.shrink_to(search.memory_bytes());
        grant.grow_to(share, || false);
        (share, share.min(grant.bytes()))
    });
    // Without half its share to grow into, a ponder would spend its time reclaiming.
    let ponder = threads_grant
        .zip(limit)
        .filter(|(_, (share, limit))| *limit >= share / 2 && *limit > search.memory_bytes());
    let Some((threads_grant, (_, limit))) = ponder else {
        // No idle thread or memory, the game is over, or its next request is here already:
        // keep the tree as the search left it (reuse advances it by both moves).
        tracing::debug!(over, "no ponder");
        let tree = BudgetedSearch { search, grant };
        let garbage = park(
            engine,
            slot.game_id(),
            fen,
            moves,
            tree,
            Pondered::default(),
        );
        drop(slot);
        drop(garbage);
        return;
    };
    crate::metrics::pondering(engine.admission.preemptible());
    let mut params = search.params().clone();
    params.threads = threads_grant.threads;
    params.max_tree_bytes = limit;
    params.max_time = Some(Duration::from_millis(u64::from(
        engine.config.max_ponder_ms,
    )));
    params.max_playouts = None;
    // No move is chosen from a ponder: it searches on until stopped, wherever the visits go.
    params.smart_pruning = false;
    params.seed = fresh_seed();
    search.set_params(params);
    search.advance(&[best]);
    moves.push(best);
    grant.shrink_to(limit.max(search.memory_bytes()));
    search.set_stop_flag(ctl.flag());
    let before = root_visits(&search.snapshot());
    tracing::debug!(threads = threads_grant.threads, "pondering");
    let (search, snapshot) = search.start().wait();
    let pondered = Pondered::between(&before, &root_visits(&snapshot), snapshot.playouts);
    crate::metrics::ponder_finished(snapshot.playouts);
    tracing::debug!(
        playouts = snapshot.playouts,
        cause = ?ctl.cause(),
        "ponder ended"
    );
    let garbage = park(
        engine,
        slot.game_id(),
        fen,
        moves,
        BudgetedSearch { search, grant },
        pondered,
    );
    // The tree is parked: the game's next request may take it, and waiters the threads.
    drop(slot);
    drop(threads_grant);
    crate::metrics::pondering(engine.admission.preemptible());
    drop(garbage);
}
