// The best line of the shown position (the analysis's, or the reviewed turn's) and stepping along
// it on the board.

import { render, state } from './state.js';
import { say } from './messages.js';
import { api, describeError } from './api.js';

/** The analysis of the shown position, if any. */
export function currentAnalysis() {
  const a = state.analysis;
  return a && a.last && state.pos && a.key === state.pos.key ? a : null;
}

export function bestLine() {
  const a = currentAnalysis();
  const best = a && a.last.moves && a.last.moves[0];
  if (best) return best.pv || [best.move];
  const t = shownReviewTurn();
  if (t && t.bestMove) return t.bestPv && t.bestPv.length ? t.bestPv : [t.bestMove];
  // A hint is one arrow, the move alone: a player asked what to play, not for the line.
  const h = state.hint;
  if (h && h.move && state.pos && h.key === state.pos.key) return [h.move];
  return [];
}

export function resetPv(doRender = true) {
  state.pv = { step: 0, line: [], fen: null };
  if (doRender) render();
}

let pvSeq = 0;
export async function stepPv(delta) {
  const line = state.pv.step > 0 ? state.pv.line : bestLine();
  if (!line.length || !state.pos) return;
  const step = Math.max(0, Math.min(line.length, state.pv.step + delta));
  if (step === 0) return resetPv(true);
  const seq = ++pvSeq;
  try {
    const r = await api('ApplyMoves', { fen: state.pos.fen, moves: line.slice(0, step) });
    if (seq !== pvSeq) return undefined;
    state.pv = { step, line, fen: r.fen };
    render();
  } catch (e) {
    say(describeError(e), 'error');
  }
  return undefined;
}

/** The review of the turn played from the shown position, if the board shows the reviewed game. */
export function shownReviewTurn() {
  const r = state.review;
  if (!r || state.startFen !== r.startFen || state.pv.step > 0) return null;
  const t = r.turns.get(state.cursor + 1);
  return t && state.moves[state.cursor] === t.playedMove ? t : null;
}
