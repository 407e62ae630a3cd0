// Analysis of the shown position: an `Analyze` stream followed as it runs, stopped with its answer
// or abandoned, and its table of moves.

import { NAME, render, state } from './state.js';
import { $ } from './dom.js';
import { say } from './messages.js';
import { api, describeError, errorFrom, headers, newSearchId, readSse, threads } from './api.js';
import { parseFen, posKey, shownMoves } from './position.js';
import { capNote, headlineValue, isForced, proofText, recordEval } from './evaluation.js';
import { resetPv } from './pv.js';

const STOP_REASONS = {
  STOP_REASON_TIME: 'time is up',
  STOP_REASON_PLAYOUTS: 'playout budget used',
  STOP_REASON_SOLVED: 'solved',
  STOP_REASON_NODE_CAP: 'tree size cap reached',
  STOP_REASON_SINGLE_LEGAL_MOVE: 'single legal move',
  STOP_REASON_CANCELLED: 'cancelled',
  STOP_REASON_DEADLINE: 'deadline',
  STOP_REASON_SHUTDOWN: 'server shutting down',
  STOP_REASON_BEST_MOVE_SETTLED: 'best move settled',
  STOP_REASON_GAME_OVER: 'the game is over',
  STOP_REASON_STOPPED: 'stopped on request',
};

function analysisLimits() {
  const cap = (state.info && state.info.limits && state.info.limits.maxTimeMs) || 60000;
  return { maxTimeMs: cap };
}

export async function startAnalysis() {
  stopAnalysis();
  if (state.engine) return say('Wait: the engine is thinking.', 'info');
  if (!state.pos) return undefined;
  const moves = shownMoves();
  const a = {
    controller: new AbortController(),
    key: posKey(moves),
    fen: state.pos.fen,
    updates: 0,
    last: null,
    running: true,
    stopReason: '',
    // Our own id for the search, so that "Stop" can end it with its answer (StopSearch) even
    // before the first update arrives.
    searchId: newSearchId(),
    stopping: false,
    single: state.pos.legal.length === 1, // a forced move: no evaluation to show, only the move
  };
  state.analysis = a;
  resetPv(false);
  renderAnalysis();
  const body = {
    position: { fen: state.startFen, moves },
    limits: analysisLimits(),
    options: {
      multiPv: 3,
      pvLength: 16,
      exhaustive: true,
      threads: threads(),
      gameId: `${state.gameId}-analysis`,
      searchId: a.searchId,
      priority: 'PRIORITY_INTERACTIVE',
    },
    reportIntervalMs: 250,
  };
  try {
    const r = await fetch('/v1/Analyze', { method: 'POST', headers: headers(), body: JSON.stringify(body), signal: a.controller.signal });
    if (!r.ok) throw await errorFrom(r);
    await readSse(r, (name, payload) => onAnalysisEvent(a, name, payload));
  } catch (e) {
    if (e.name !== 'AbortError' && state.analysis === a) say(`Analysis failed: ${describeError(e)}`, 'error');
  } finally {
    a.running = false;
    a.controller = null;
    if (state.analysis === a) renderAnalysis();
  }
  return undefined;
}

function onAnalysisEvent(a, name, payload) {
  if (state.analysis !== a) return;
  if (name === 'error') {
    say(`Analysis failed: ${payload.code}: ${payload.message}`, 'error');
    return;
  }
  a.updates += 1;
  a.last = payload;
  if (name === 'final') a.stopReason = payload.stopReason || '';
  recordEval(a.key, parseFen(payload.fen || a.fen).side, payload);
  renderAnalysis();
}

/**
 * The "Stop" button: ends the search with its answer. The server stops it and the stream ends
 * with a final update (stop reason STOPPED) that stays on the board. If the server no longer
 * (or not yet) knows the search, the stream is simply closed.
 */
export async function stopWithAnswer() {
  const a = state.analysis;
  if (!a || !a.running || a.stopping) return;
  a.stopping = true;
  $('analyze-stop').disabled = true;
  try {
    await api('StopSearch', { searchId: a.searchId });
  } catch (e) {
    if (state.analysis === a) stopAnalysis();
  }
}

/** Abandons the analysis (a new position, a new game): closes the stream, cancelling the search. */
export function stopAnalysis() {
  const a = state.analysis;
  if (a && a.running) {
    a.running = false;
    a.stopReason = a.stopReason || 'stopped';
    if (a.controller) a.controller.abort(); // closes the stream: the server cancels the search
    renderAnalysis();
  }
}

export function clearAnalysis() {
  state.analysis = null;
  resetPv(false);
  renderAnalysis();
}

function renderAnalysis() {
  const a = state.analysis;
  const table = $('analysis-table');
  const body = table.querySelector('tbody');
  $('analyze-start').disabled = Boolean(a && a.running);
  $('analyze-stop').disabled = !(a && a.running && !a.stopping);
  const st = $('analysis-state');
  if (!a) st.textContent = 'idle';
  else if (a.running) st.textContent = a.updates ? `running (${a.updates} updates)` : 'starting…';
  else st.textContent = `stopped${a.stopReason && a.stopReason !== 'stopped' ? `: ${STOP_REASONS[a.stopReason] || a.stopReason}` : ''}`;
  st.dataset.state = !a ? 'idle' : a.running ? 'running' : 'stopped';
  const last = a && a.last;
  table.dataset.updates = String(a ? a.updates : 0);
  body.textContent = '';
  const summary = $('analysis-summary');
  if (!last) {
    summary.textContent = '';
    table.dataset.playouts = '0';
    render(false);
    return;
  }
  const stats = last.stats || {};
  const side = parseFen(last.fen || a.fen).side;
  const rootProof = proofText(last.rootProof, last.rootProofPlies);
  table.dataset.playouts = String(Number(stats.playouts || 0));
  const forced = isForced(last) || a.single;
  summary.dataset.forced = String(forced);
  summary.textContent = forced
    ? `${NAME[side]} to move: forced ${last.bestMove || ''}${rootProof ? ` — ${rootProof}` : ''}`
    : `${NAME[side]} to move: ${(100 * headlineValue(last)).toFixed(1)}%${rootProof ? ` (${rootProof})` : ''} · ` +
      `best ${last.bestMove || '—'} · ${Number(stats.playouts || 0).toLocaleString('en')} playouts · ` +
      `${Math.round(Number(stats.playoutsPerSecond || 0)).toLocaleString('en')}/s · depth ${stats.maxDepth || 0} · ` +
      `${((Number(stats.elapsedMs || 0)) / 1000).toFixed(1)} s`;
  summary.textContent += capNote(stats);
  for (const m of (last.moves || []).slice(0, 10)) {
    const tr = document.createElement('tr');
    tr.dataset.move = m.move;
    tr.dataset.pv = (m.pv || [m.move]).join(' ');
    tr.title = 'Click to play this move (or a move of its line) on the board';
    tr.dataset.visits = String(Number(m.visits || 0));
    const cells = [
      m.move,
      forced ? 'forced' : Number(m.visits || 0).toLocaleString('en'),
      forced && !Number(m.visits || 0) ? '—' : (100 * (m.value || 0)).toFixed(1),
      proofText(m.proof, m.proofPlies),
      (m.pv || [m.move]).slice(0, 6).join(' ') + ((m.pv || []).length > 6 ? ' …' : ''),
    ];
    cells.forEach((c, i) => {
      const td = document.createElement('td');
      if (i === 4) {
        td.className = 'pv';
        // Each move of the line is clickable: the line up to it is played on the board.
        (m.pv || [m.move]).slice(0, 6).forEach((mv, k) => {
          if (k) td.append(' ');
          const span = document.createElement('span');
          span.className = 'pv-move';
          span.dataset.step = String(k);
          span.textContent = mv;
          td.appendChild(span);
        });
        if ((m.pv || []).length > 6) td.append(' …');
      } else td.textContent = c;
      tr.appendChild(td);
    });
    body.appendChild(tr);
  }
  render(false);
}
