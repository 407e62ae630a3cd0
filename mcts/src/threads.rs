//! The search threads: each runs [`worker_loop`] (iterations between limit checks, parking for
//! reclaims) until a limit stops the run; a guard retires it even when the game's code panics.

use std::sync::Arc;
use std::thread::JoinHandle;

use crate::control::StopReason;
use crate::core::Core;
use crate::game::Game;
use crate::iteration::Worker;
use crate::limits;

/// Iterations between a thread's smart-pruning checks and statistics flushes. Counted per
/// thread, so a single-threaded search checks at the same points every time (determinism).
const CHECK_INTERVAL: u64 = 16;

/// Retires the worker when its loop ends, also by panic (then it stops the other threads, so
/// that joining them never hangs).
struct ExitGuard<'a, G: Game>(&'a Core<G>);

impl<G: Game> Drop for ExitGuard<'_, G> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.ctl.poison();
        }
        self.0.retire_worker();
    }
}

/// A search thread: iterate until some limit says stop.
pub(crate) fn worker_loop<G: Game>(core: &Core<G>, thread: usize) {
    let _exit = ExitGuard(core);
    core.root.thread_started();
    let mut worker = Worker::new(core, thread);
    let mut tree = core.tree.load();
    let mut epoch = core.tree.epoch();
    let mut iterations: u64 = 0;
    let mut clock = limits::TimeCheck::new();
    loop {
        if core.ctl.is_done() {
            break;
        }
        if core.reclaimer.is_requested() {
            // Let go of the old tree while parked, so that it is freed as soon as possible.
            drop(tree);
            core.reclaimer.park(
                || core.ctl.running(),
                || core.ctl.is_done(),
                || core.reclaim(),
            );
            tree = core.tree.load();
            epoch = core.tree.epoch();
        } else if core.tree.epoch() != epoch {
            tree = core.tree.load();
            epoch = core.tree.epoch();
        }
        if let Some(reason) = limits::limit_reached(core, &tree, &mut clock) {
            core.ctl.finish(reason);
            break;
        }
        let ticket = core
            .params
            .max_playouts
            .is_none_or(|max| core.ctl.take_ticket(max));
        if !ticket {
            core.ctl.finish(StopReason::Playouts);
            break;
        }
        worker.sync(epoch);
        worker.iterate(core, &tree);
        iterations += 1;
        if tree.root().bounds().is_exact() {
            core.ctl.finish(StopReason::Solved);
            break;
        }
        if iterations % CHECK_INTERVAL == 0 {
            worker.flush(&core.ctl);
            if limits::smart_prune(core, &tree) {
                core.ctl.finish(StopReason::SmartPruning);
                break;
            }
        }
    }
    worker.flush(&core.ctl);
}

/// Runs the search on `core.params.thread_count()` threads, the calling one included, and
/// returns once they have all stopped.
pub(crate) fn run_scoped<G: Game>(core: &Core<G>) {
    std::thread::scope(|scope| {
        for thread in 1..core.params.thread_count() {
            let spawned = std::thread::Builder::new()
                .name(format!("mcts-{thread}"))
                .spawn_scoped(scope, move || worker_loop(core, thread));
            if spawned.is_err() {
                core.retire_worker();
            }
        }
        worker_loop(core, 0);
    });
}

/// Starts the search on `core.params.thread_count()` background threads and returns their
/// handles (a thread that could not be spawned is retired at once).
pub(crate) fn spawn<G: Game>(core: &Arc<Core<G>>) -> Vec<JoinHandle<()>> {
    let mut threads = Vec::new();
    for thread in 0..core.params.thread_count() {
        let shared = Arc::clone(core);
        let spawned = std::thread::Builder::new()
            .name(format!("mcts-{thread}"))
            .spawn(move || {
                worker_loop(&shared, thread);
                // Dropped before the thread ends, so after joining the handle holds the
                // only reference and can hand the search back.
                drop(shared);
            });
        match spawned {
            Ok(handle) => threads.push(handle),
            Err(_) => core.retire_worker(),
        }
    }
    threads
}
