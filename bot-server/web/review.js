// Review mode: a whole game (a pasted record, or the game on the board) sent to `AnalyzeGame`; its
// Server-Sent Events fill the graph, the marked move list and the summary as the turns arrive, and
// a click on either shows that position with the engine's better line.

import { INITIAL_FEN, NAME, newGameId, state } from './state.js';
import { $ } from './dom.js';
import { clearMessage, say } from './messages.js';
import { api, describeError, errorFrom, headers, newSearchId, readSse, threads } from './api.js';
import { posKey } from './position.js';
import { lineThrough, mainLine, nodeAt, sameMoves, treeFrom } from './tree.js';
import { pct } from './evaluation.js';
import { shownReviewTurn } from './pv.js';
import { clearAnalysis, stopAnalysis } from './analysis.js';
import { afterChange, bumpGeneration } from './game.js';
import { drawScoreGraph, graphPointAt } from './graph.js';

const CLASS = {
  MOVE_CLASS_BEST: { name: 'best', mark: '' },
  MOVE_CLASS_GOOD: { name: 'good', mark: '' },
  MOVE_CLASS_INACCURACY: { name: 'inaccuracy', mark: '?!' },
  MOVE_CLASS_MISTAKE: { name: 'mistake', mark: '?' },
  MOVE_CLASS_BLUNDER: { name: 'blunder', mark: '??' },
  MOVE_CLASS_FORCED: { name: 'forced', mark: '' },
};
const classOf = (t) => CLASS[t.class] || { name: '', mark: '' };

/** Whether the engine preferred another move (a "best" one may differ from its first choice by a hair). */
const worse = (t) => t.bestMove && t.bestMove !== t.playedMove && !['MOVE_CLASS_BEST', 'MOVE_CLASS_FORCED'].includes(t.class);
/** White's expected score after the turn's move (the mover's value, turned round for Black). */
const whiteScore = (t) => (t.player === 'b' ? 1 - (t.playedValue || 0) : t.playedValue || 0);

/** The start FEN and moves of a pasted record (the server parses it again and has the last word). */
function parseRecord(text) {
  const tags = {};
  const tokens = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const tag = line.match(/^\[(\w+)\s+"(.*)"\]$/);
    if (tag) {
      if (tokens.length) break; // the next record
      tags[tag[1]] = tag[2];
    } else if (line) tokens.push(...line.split(/\s+/));
  }
  const moves = tokens.filter((t) => !/^\d+\.+$/.test(t) && !/^(1-0|0-1|1\/2(-1\/2)?|\*)$/.test(t));
  return { fen: tags.FEN || INITIAL_FEN, moves };
}

function reviewBudget() {
  const v = $('review-budget').value;
  return v[0] === 't' ? { maxTimeMs: Number(v.slice(1)) } : { maxPlayouts: String(Number(v.slice(1))) };
}

export async function startReview() {
  abandonReview();
  const text = $('review-record').value.trim();
  let game;
  const body = {};
  if (text) {
    game = parseRecord(text);
    body.record = text;
  } else {
    game = { fen: state.startFen, moves: mainLine() };
    if (!game.moves.length) return say('Nothing to review: play or load a game, or paste a game record.', 'error');
    body.game = { fen: game.fen, moves: game.moves };
  }
  const r = {
    controller: new AbortController(),
    searchId: newSearchId(), // our own, so that "Stop" works before the first turn arrives
    running: true,
    stopping: false,
    startFen: game.fen,
    moves: game.moves.slice(), // the game's moves, corrected by the turns as they arrive
    total: game.moves.length,
    turns: new Map(),
    summary: null,
    selected: 0,
    shown: !text, // the board shows this game (a pasted one is put there once the server accepts it)
  };
  state.review = r;
  Object.assign(body, {
    perTurn: reviewBudget(),
    options: { threads: threads(), searchId: r.searchId, pvLength: 12 },
  });
  renderReview();
  try {
    const resp = await fetch('/v1/AnalyzeGame', { method: 'POST', headers: headers(), body: JSON.stringify(body), signal: r.controller.signal });
    if (!resp.ok) throw await errorFrom(resp);
    await readSse(resp, (name, payload) => onReviewEvent(r, name, payload));
    if (state.review === r && !r.summary && !r.error) r.error = 'the review ended without a summary';
  } catch (e) {
    if (e.name !== 'AbortError' && state.review === r) r.error = describeError(e);
  } finally {
    r.running = false;
    r.controller = null;
    if (state.review === r) {
      if (r.error) say(`Review failed: ${r.error}`, 'error');
      renderReview();
    }
  }
  return undefined;
}

function onReviewEvent(r, name, payload) {
  if (state.review !== r) return;
  if (name === 'error') {
    r.error = `${payload.code}: ${payload.message}`;
    return;
  }
  if (payload.turn) {
    const t = payload.turn;
    r.turns.set(t.turn, t);
    if (t.turn === 1 && t.fen) r.startFen = t.fen;
    r.moves[t.turn - 1] = t.playedMove;
    r.total = Math.max(r.total, t.turn);
    // The first turn proves the record readable: show its game on the board.
    if (!r.shown) showReviewGame(r, null);
  } else if (payload.summary) {
    r.summary = payload.summary;
  }
  renderReview();
}

/** "Stop": the server ends the review with a summary of the turns done (StopSearch). */
export async function stopReview() {
  const r = state.review;
  if (!r || !r.running || r.stopping) return;
  r.stopping = true;
  renderReview();
  try {
    await api('StopSearch', { searchId: r.searchId });
  } catch {
    if (state.review === r && r.controller) r.controller.abort(); // closing the stream cancels it
  }
}

/** Drops the review in progress, if any (closing its stream cancels it on the server). */
function abandonReview() {
  const r = state.review;
  if (r && r.running && r.controller) r.controller.abort();
}

/** The moves of the reviewed game known so far, up to the first one not yet known. */
function reviewMoves(r) {
  const moves = [];
  for (let i = 0; i < r.moves.length && r.moves[i]; i += 1) moves.push(r.moves[i]);
  return moves;
}

/** Puts the reviewed game on the board, at `cursor` (null: its last known position). */
function showReviewGame(r, cursor) {
  const moves = reviewMoves(r);
  // A game already in the tree (the one on the board) keeps its variations.
  const known = state.startFen === r.startFen && nodeAt(moves) !== null;
  if (!known) {
    bumpGeneration();
    stopAnalysis();
    clearAnalysis();
    state.startFen = r.startFen;
    state.tree = treeFrom([moves]);
    state.resigned = null;
    state.gameId = newGameId();
    $('fen-input').value = r.startFen;
    $('moves-input').value = moves.join(' ');
  }
  r.shown = true;
  const to = cursor === null ? moves.length : Math.min(cursor, moves.length);
  const line = lineThrough(moves);
  if (known && state.pos && state.pos.key === posKey(line.slice(0, to)) && sameMoves(line, state.moves)) return Promise.resolve();
  state.moves = line;
  state.cursor = to;
  state.sel = [];
  return afterChange();
}

/** Shows the position before turn `t` with the engine's better line drawn. */
export function showReviewTurn(t) {
  const r = state.review;
  if (!r || !r.turns.has(t)) return undefined;
  r.selected = t;
  clearMessage();
  renderReview();
  return showReviewGame(r, t - 1);
}

export function onGraphClick(event) {
  const r = state.review;
  if (!r || !r.turns.size) return undefined;
  const at = graphPointAt(event, $('review-graph'), reviewScale(r), [...r.turns.keys()]);
  return at === null ? undefined : showReviewTurn(at);
}

const REVIEW_GRAPH_H = 170;

const reviewScale = (r) => ({ first: 1, last: r.total });

function drawGraph(r) {
  const turns = r ? [...r.turns.values()].sort((a, b) => a.turn - b.turn) : [];
  const points = turns.map((t) => ({
    at: t.turn,
    white: whiteScore(t),
    cls: classOf(t).name,
    title: `${t.turn}. ${t.playedMove}${classOf(t).mark} — White ${pct(whiteScore(t))}`,
  }));
  const shown = shownReviewTurn();
  drawScoreGraph($('review-graph'), REVIEW_GRAPH_H, r ? reviewScale(r) : null, points, shown ? shown.turn : null, (p) => ({ turn: String(p.at), class: p.cls }));
}

function reviewRow(t) {
  const c = classOf(t);
  const li = document.createElement('li');
  li.dataset.turn = String(t.turn);
  li.dataset.class = c.name;
  li.className = c.name;
  const num = document.createElement('span');
  num.className = 'num';
  num.textContent = `${t.turn}. ${t.player === 'b' ? 'B' : 'W'}`;
  const mv = document.createElement('span');
  mv.className = 'mv';
  mv.append(t.playedMove || '');
  if (c.mark) {
    const mark = document.createElement('span');
    mark.className = 'mark';
    mark.textContent = c.mark;
    mv.append(mark);
  }
  const why = document.createElement('span');
  why.className = 'why';
  let text = `${c.name} · ${pct(t.playedValue)}`;
  if (worse(t)) text += ` · best ${t.bestMove} ${pct(t.bestValue)}`;
  why.textContent = text;
  li.append(num, mv, why);
  return li;
}

export function renderReview() {
  const r = state.review;
  $('review-start').disabled = Boolean(r && r.running);
  $('review-stop').disabled = !(r && r.running && !r.stopping);
  const st = $('review-state');
  st.dataset.state = !r ? 'idle' : r.running ? 'running' : r.summary ? 'done' : 'failed';
  if (!r) st.textContent = 'idle';
  else if (r.running) st.textContent = `${r.stopping ? 'stopping' : 'reviewing'}: ${r.turns.size} / ${r.total || '?'} turns`;
  else if (r.summary) {
    const reason = r.summary.stopReason === 'STOP_REASON_STOPPED' ? ', stopped' : '';
    st.textContent = `${r.summary.turnsAnalysed || 0} turns in ${(Number(r.summary.elapsedMs || 0) / 1000).toFixed(1)} s${reason}`;
  } else st.textContent = 'failed';
  drawGraph(r);
  $('review-graph').dataset.points = String(r ? r.turns.size : 0);

  // The move list: rebuilt when turns arrive, else only the current row changes.
  const list = $('review-moves');
  const shown = shownReviewTurn();
  if (!r) list.textContent = '';
  else if (list.children.length !== r.turns.size) {
    list.textContent = '';
    for (const t of [...r.turns.values()].sort((a, b) => a.turn - b.turn)) list.appendChild(reviewRow(t));
  }
  let current = null;
  for (const li of list.children) {
    const on = Boolean(shown) && Number(li.dataset.turn) === shown.turn;
    li.classList.toggle('current', on);
    if (on) current = li;
  }
  if (current && r.selected === shown.turn && list.dataset.scrolled !== String(shown.turn)) {
    list.dataset.scrolled = String(shown.turn);
    if (list.scrollHeight > list.clientHeight) list.scrollTop = current.offsetTop - list.offsetTop - list.clientHeight / 2;
  }

  const detail = $('review-detail');
  detail.dataset.turn = shown ? String(shown.turn) : '';
  if (shown) {
    const c = classOf(shown);
    const line = (shown.bestPv || []).slice(0, 8).join(' ');
    detail.textContent =
      `Turn ${shown.turn} (${NAME[shown.player] || shown.player}): played ${shown.playedMove}${c.mark} — ${c.name}, ${pct(shown.playedValue)}` +
      (worse(shown)
        ? `; loss ${(100 * (shown.loss || 0)).toFixed(1)}. Best ${shown.bestMove} ${pct(shown.bestValue)}${line ? `: ${line}` : ''}`
        : '') +
      '.';
  } else detail.textContent = r && r.turns.size ? 'Click the graph or a move to see the position and the engine’s line.' : '';

  const table = $('review-summary');
  const body = table.querySelector('tbody');
  body.textContent = '';
  table.hidden = !(r && r.summary);
  if (r && r.summary) {
    const w = r.summary.white || {};
    const b = r.summary.black || {};
    const rows = [
      ['Accuracy', (p) => `${Number(p.accuracy || 0).toFixed(1)}%`, 'accuracy'],
      ['Inaccuracies ?!', (p) => p.inaccuracies || 0, 'inaccuracies'],
      ['Mistakes ?', (p) => p.mistakes || 0, 'mistakes'],
      ['Blunders ??', (p) => p.blunders || 0, 'blunders'],
      ['Mean loss', (p) => (100 * (p.meanLoss || 0)).toFixed(1), 'mean-loss'],
      ['Turns', (p) => p.turns || 0, 'turns'],
    ];
    for (const [label, get, key] of rows) {
      const tr = document.createElement('tr');
      tr.dataset.row = key;
      for (const text of [label, get(w), get(b)]) {
        const td = document.createElement('td');
        td.textContent = String(text);
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
  }
}
