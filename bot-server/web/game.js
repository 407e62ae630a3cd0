// The game's flow: asking the server about the shown position, playing moves, the engine's
// replies, taking back, navigating the line and the tree, new games, and resigning.

import { INITIAL_FEN, NAME, newGameId, render, state } from './state.js';
import { $ } from './dom.js';
import { clearMessage, say, setBusy } from './messages.js';
import { api, describeError, threads } from './api.js';
import { gameOver, moveKind, movePath, posKey, shownMoves, sideAt, sideToMove } from './position.js';
import { deleteLine, lineThrough, promoteLine, sameMoves, showNewLine, treeFrom } from './tree.js';
import { evaluationText, recordEngineEval } from './evaluation.js';
import { resetPv } from './pv.js';
import { clearAnalysis, startAnalysis, stopAnalysis } from './analysis.js';
import { saveGame } from './storage.js';
import { refreshExport } from './export.js';

let refreshSeq = 0;

/** Asks the server about the shown position; false when it failed or was overtaken. */
async function refresh() {
  const seq = ++refreshSeq;
  const moves = shownMoves();
  const key = posKey(moves);
  setBusy('wait');
  try {
    const r = await api('LegalMoves', { position: { fen: state.startFen, moves } });
    if (seq !== refreshSeq) return false;
    state.pos = {
      key,
      fen: r.fen,
      legal: (r.moves || []).map((m) => ({ move: m.move, fenAfter: m.fenAfter, path: movePath(m.move), kind: moveKind(m.move) })),
      status: { result: (r.status && r.status.result) || '*', reason: (r.status && r.status.reason) || '' },
    };
    state.sel = [];
    render();
    await refreshExport();
    return true;
  } catch (e) {
    if (seq === refreshSeq) {
      say(describeError(e), 'error');
      render();
    }
    return false;
  }
}

/** Replaces the game or takes moves back: stops the engine's search for the old game. */
export function bumpGeneration() {
  state.generation += 1;
  if (state.engine) {
    state.engine.controller.abort();
    state.engine = null;
  }
}

export async function afterChange() {
  resetPv(false);
  const ok = await refresh();
  if (!ok) return;
  saveGame();
  const engineTurn =
    state.mode === 'play' && !gameOver() && state.cursor === state.moves.length && sideToMove() !== state.human;
  const a = state.analysis;
  if (a && a.key !== state.pos.key) {
    if (a.running && !engineTurn) startAnalysis(); // the analysis follows the board
    else {
      stopAnalysis();
      clearAnalysis();
    }
  }
  if (engineTurn) maybeEngineMove(); // not awaited: clicks meanwhile are answered
}

export async function maybeEngineMove(force = false) {
  if (state.engine || !state.pos || gameOver()) return;
  if (!force) {
    if (state.mode !== 'play' || state.cursor !== state.moves.length || sideToMove() === state.human) return;
  }
  if (state.pos.key !== posKey(shownMoves())) return;
  stopAnalysis();
  if (state.hint && state.hint.controller) state.hint.controller.abort();
  state.hint = null;
  const gen = state.generation;
  const controller = new AbortController();
  state.engine = { controller };
  const moves = shownMoves();
  render();
  try {
    const r = await api(
      'BestMove',
      {
        position: { fen: state.startFen, moves },
        limits: { maxTimeMs: state.engineTime },
        // Level 8 is the full engine: sent as no level at all, as every client without levels.
        options: { gameId: state.gameId, threads: threads(), ...(state.level < 8 ? { level: state.level } : {}) },
      },
      controller.signal,
    );
    if (gen !== state.generation) return;
    state.engine = null;
    const a = r.analysis || {};
    const stats = a.stats || {};
    if (r.bestMove) {
      recordEngineEval(moves, a);
      const mover = NAME[sideAt(moves.length)];
      showNewLine(moves.concat([r.bestMove]));
      state.engineNote = { ply: state.cursor, move: r.bestMove, text: `Engine played ${r.bestMove} (${evaluationText(a, `${mover}'s`)}).` };
    }
    await afterChange();
  } catch (e) {
    if (gen !== state.generation) return;
    state.engine = null;
    if (e.name !== 'AbortError') say(`The engine could not move: ${describeError(e)}. Press "Engine move" to retry.`, 'error');
    render();
  }
}

export async function playMove(m) {
  showNewLine(shownMoves().concat([m.move]));
  state.sel = [];
  clearMessage();
  await afterChange();
}

export function newGame(fen = INITIAL_FEN, moves = []) {
  bumpGeneration();
  stopAnalysis();
  clearAnalysis();
  state.startFen = fen;
  state.tree = treeFrom([moves]);
  state.moves = moves;
  state.cursor = moves.length;
  state.resigned = null;
  state.evals = new Map();
  state.gameId = newGameId();
  state.sel = [];
  state.pos = null;
  state.engineNote = null;
  $('fen-input').value = fen;
  $('moves-input').value = moves.join(' ');
  return afterChange();
}

export function undo() {
  clearMessage();
  let keep;
  if (state.mode === 'play') {
    // Take back the engine's reply (if any) and the player's last move.
    let k = state.moves.length;
    while (k > 0 && sideAt(k - 1) !== state.human) k -= 1;
    if (k === 0) return say('Nothing of yours to take back.', 'info');
    keep = k - 1;
  } else {
    if (state.cursor === 0) return say('Nothing to take back.', 'info');
    keep = state.cursor - 1;
  }
  bumpGeneration();
  // A take-back deletes the moves from the tree too (unlike going back, which keeps them).
  deleteLine(state.moves.slice(0, keep + 1));
  state.moves = state.moves.slice(0, keep);
  state.cursor = state.moves.length;
  state.resigned = null;
  return afterChange();
}

export function navigate(to) {
  const c = Math.max(0, Math.min(state.moves.length, to));
  if (c === state.cursor) return;
  if (state.engine) bumpGeneration();
  state.cursor = c;
  clearMessage();
  afterChange();
}

/**
 * Plays `moves` from the start into the move tree (a new variation where they leave the known
 * lines) and shows the position at their end: a click on a row of the analysis, or on a move of
 * its line.
 */
export function playLine(moves) {
  if (state.engine) bumpGeneration();
  showNewLine(moves);
  clearMessage();
  afterChange();
}

/** Asks the engine for the move it would play in the shown position, drawn as one arrow. */
export async function hint() {
  if (!state.pos || gameOver() || state.engine || (state.hint && state.hint.controller)) return;
  const key = state.pos.key;
  const controller = new AbortController();
  state.hint = { key, move: null, controller };
  render();
  try {
    const r = await api(
      'BestMove',
      {
        position: { fen: state.startFen, moves: shownMoves() },
        limits: { maxTimeMs: 1000 },
        options: { gameId: state.gameId, threads: threads() },
      },
      controller.signal,
    );
    if (!state.hint || state.hint.controller !== controller) return;
    state.hint = { key, move: r.bestMove || null, controller: null };
    if (r.bestMove) say(`Hint: the engine would play ${r.bestMove}.`, 'info');
  } catch (e) {
    if (state.hint && state.hint.controller === controller) state.hint = null;
    if (e.name !== 'AbortError') say(`No hint: ${describeError(e)}.`, 'error');
  }
  render();
}

/** Shows the position after `moves`, a path of the tree (a click in the move list). */
export function goToLine(moves) {
  if (sameMoves(moves, shownMoves())) return;
  if (state.engine) bumpGeneration();
  state.moves = lineThrough(moves);
  state.cursor = moves.length;
  clearMessage();
  afterChange();
}

/** "Make main line": the shown line becomes the game (the record, the review). */
export function promoteShown() {
  promoteLine(state.moves);
  saveGame();
  render();
}

export async function loadFromInputs() {
  const fen = $('fen-input').value.trim() || INITIAL_FEN;
  const moves = $('moves-input').value.split(/[\s,]+/).filter(Boolean);
  try {
    await api('LegalMoves', { position: { fen, moves } });
  } catch (e) {
    say(`Cannot load this position: ${describeError(e)}`, 'error');
    return;
  }
  clearMessage();
  await newGame(fen, moves);
}

let resignTimer = null;

/** "Resign" asks again before it counts: a second click within four seconds resigns. */
export function onResignClick() {
  const button = $('resign');
  if (button.dataset.confirm !== 'true') {
    button.dataset.confirm = 'true';
    button.textContent = 'Really resign?';
    clearTimeout(resignTimer);
    resignTimer = setTimeout(resetResignButton, 4000);
    return;
  }
  resetResignButton();
  if (!canResign()) return;
  bumpGeneration(); // the engine stops thinking about a game that is over
  stopAnalysis();
  state.resigned = { side: state.human, key: state.pos.key };
  saveGame();
  refreshExport();
  render();
}

function resetResignButton() {
  clearTimeout(resignTimer);
  const button = $('resign');
  button.dataset.confirm = 'false';
  button.textContent = 'Resign';
}

export const canResign = () => state.mode === 'play' && Boolean(state.pos) && !gameOver() && state.cursor === state.moves.length;
