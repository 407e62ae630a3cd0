// The engine's reports read as evaluations: the headline winning chance, proofs and caps in
// words, and the evaluations kept per position for the game's evaluation graph.

import { state } from './state.js';
import { posKey, sideAt } from './position.js';

/**
 * Keeps the engine's evaluation of a position (key: posKey) as White's expected score, for the
 * evaluation graph. A forced answer carries no evaluation (no playouts), so it is not kept.
 */
export function recordEval(key, side, analysis) {
  if (!analysis || isForced(analysis) || !Number((analysis.stats || {}).playouts || 0)) return;
  const v = headlineValue(analysis);
  state.evals.set(key, side === 'w' ? v : 1 - v);
}

/** The engine's answer evaluates its position and, by its best move's own value, the next one. */
export function recordEngineEval(moves, analysis) {
  const side = sideAt(moves.length);
  recordEval(posKey(moves), side, analysis);
  if (analysis && analysis.bestMove && state.evals.has(posKey(moves))) {
    state.evals.set(posKey(moves.concat([analysis.bestMove])), state.evals.get(posKey(moves)));
  }
}

/** Whether the search answered at once because the position had a single legal move. */
export const isForced = (a) => a && a.stopReason === 'STOP_REASON_SINGLE_LEGAL_MOVE';

/**
 * The expected score for the side to move, one figure everywhere: the best move's value once it
 * has visits (the server's root_value is defined the same way), else root_value.
 */
export function headlineValue(a) {
  const best = a && a.moves && a.moves[0];
  if (best && Number(best.visits || 0) > 0 && best.value !== undefined) return best.value;
  return (a && a.rootValue) || 0;
}

/**
 * "forced", "forced — win in 1" or "1,234 playouts, White's winning chances 61.2%" (+ the cap
 * note): `whose` ("White's") names the side to move of the analysed position, whose chances the
 * value is.
 */
export function evaluationText(a, whose) {
  const stats = (a && a.stats) || {};
  const proof = proofText(a && a.rootProof, a && a.rootProofPlies);
  let text;
  if (isForced(a)) text = `forced${proof ? ` — ${proof}` : ''}`;
  else {
    text = `${Number(stats.playouts || 0).toLocaleString('en')} playouts, ${whose} winning chances ${(100 * headlineValue(a)).toFixed(1)}%`;
    if (proof) text += `, ${proof}`;
  }
  return text + capNote(stats);
}

/** Says when the server's cap clipped the time asked for. */
export function capNote(stats) {
  if (!stats || stats.budgetReason !== 'BUDGET_REASON_CAPPED') return '';
  return `; the server's cap clipped the budget to ${(Number(stats.budgetMs || 0) / 1000).toFixed(1)} s`;
}

export function proofText(proof, plies) {
  if (proof === 'PROOF_STATUS_WIN') return `win in ${plies || 0}`;
  if (proof === 'PROOF_STATUS_LOSS') return `loss in ${plies || 0}`;
  if (proof === 'PROOF_STATUS_DRAW') return 'draw';
  return '';
}

export const pct = (v) => `${(100 * (v || 0)).toFixed(1)}%`;
