// The view: redraws the page from the state (the board, the hands, the status, the result banner,
// the evaluation bar, the controls) and the panels of the other modules.

import { NAME, other, state } from './state.js';
import { $ } from './dom.js';
import { describeStatus, gameOver, parseFen, shownStatus, sideToMove } from './position.js';
import { inVariation } from './tree.js';
import { headlineValue, isForced, proofText } from './evaluation.js';
import { bestLine, currentAnalysis } from './pv.js';
import { canResign } from './game.js';
import { renderEvalGraph } from './graph.js';
import { renderReview } from './review.js';
import { drawBoard } from './board.js';
import { renderMoveList } from './movelist.js';
import { editorFen, renderEditor } from './editor.js';

function renderHands(board) {
  const bottom = state.flipped ? 'b' : 'w';
  for (const [id, side] of [['hand-bottom', bottom], ['hand-top', other(bottom)]]) {
    const el = $(id);
    el.dataset.hand = side;
    el.dataset.count = board ? board.hand[side] : '';
    const toMove = board && board.side === side && !gameOver();
    el.classList.toggle('to-move', Boolean(toMove));
    const who = state.mode === 'play' ? (side === state.human ? ' (you)' : ' (engine)') : '';
    el.innerHTML = '';
    const dot = document.createElement('span');
    dot.className = `hand-man man-${side}`;
    el.appendChild(dot);
    const text = document.createElement('span');
    const count = board && Number.isFinite(board.hand[side]) ? board.hand[side] : '?'; // the editor's may be mistyped
    text.textContent = `${NAME[side]}${who}: ${count} in hand${toMove ? ' — to move' : ''}`;
    el.appendChild(text);
  }
}

function renderStatus() {
  const el = $('status');
  const pos = state.pos;
  if (state.editor) {
    el.textContent = 'Editing a position: click the dark squares to place or remove units';
    el.dataset.state = 'editing';
    return;
  }
  if (!pos) {
    el.textContent = 'Loading…';
    el.dataset.state = 'wait';
    return;
  }
  const board = parseFen(pos.fen);
  el.dataset.turn = board.side;
  el.dataset.result = shownStatus().result;
  el.dataset.reason = shownStatus().reason;
  el.dataset.ply = String(state.cursor);
  if (gameOver()) {
    el.textContent = describeStatus(shownStatus());
    el.dataset.state = 'over';
  } else if (state.engine) {
    el.textContent = `${NAME[board.side]} to move — the engine is thinking…`;
    el.dataset.state = 'engine';
  } else {
    let who = '';
    if (state.mode === 'play') {
      if (state.cursor !== state.moves.length) who = ' (viewing an earlier position)';
      else who = board.side === state.human ? ' — your move' : ' — the engine’s move';
    }
    el.textContent = `${NAME[board.side]} to move${who}`;
    el.dataset.state = 'ready';
  }
}

/** Redraws the board, the hands, the status and the controls from the state. */
export function renderPage(withAnalysis = true) {
  const pos = state.pos;
  const editing = Boolean(state.editor);
  const fen = editing ? editorFen(state.editor) : state.pv.step > 0 && state.pv.fen ? state.pv.fen : pos && pos.fen;
  const board = fen ? parseFen(fen) : null;
  drawBoard(fen, board);

  const pvLine = state.pv.step > 0 ? state.pv.line : bestLine();
  $('pv-position').textContent = pvLine.length ? `${state.pv.step} / ${pvLine.length}` : '';
  $('pv-back').disabled = state.pv.step === 0;
  $('pv-first').disabled = state.pv.step === 0;
  $('pv-forward').disabled = !pvLine.length || state.pv.step >= pvLine.length;

  const note = state.engineNote;
  const noteShown = note && note.ply === state.cursor && state.moves[note.ply - 1] === note.move && state.pv.step === 0;
  $('engine-info').textContent = noteShown ? note.text : '';
  renderHands(board);
  renderStatus();
  renderBanner();
  renderEvalBar();
  renderEvalGraph();
  if (withAnalysis) renderMoveList();
  $('fen').textContent = fen || '';
  $('nav-back').disabled = state.cursor === 0;
  $('nav-first').disabled = state.cursor === 0;
  $('nav-forward').disabled = state.cursor >= state.moves.length;
  $('nav-last').disabled = state.cursor >= state.moves.length;
  $('undo').disabled = state.moves.length === 0;
  $('engine-move').disabled = Boolean(state.engine) || !pos || gameOver();
  $('resign').hidden = state.mode !== 'play';
  $('hint').hidden = state.mode !== 'play';
  $('hint').disabled = !pos || gameOver() || Boolean(state.engine) || Boolean(state.hint && state.hint.controller) || sideToMove() !== state.human;
  $('resign').disabled = !canResign();
  $('promote').disabled = !inVariation();
  $('mode').value = state.mode;
  $('color').value = state.human;
  document.body.dataset.mode = state.mode;
  renderReview();
  renderEditor();
}

/** Who won and why, in words (the GameStatus reason). */
function resultText(status, side) {
  const loser = NAME[side];
  const winner = status.result === '1-0' ? 'White' : status.result === '0-1' ? 'Black' : '';
  switch (status.reason) {
    case 'no-units':
      return `${winner || NAME[other(side)]} wins: ${loser} has no units and no men in hand left (all captured).`;
    case 'blocked':
      return `Draw: ${loser}, to move, is blocked — no men in hand and no capture or step.`;
    case 'no-legal-entry':
      return `Draw: ${loser}, to move, cannot enter — every empty square would feed the opponent a capture.`;
    case 'repetition':
      return 'Draw by threefold repetition: the same position arose a third time.';
    case 'resignation':
      return `${NAME[state.resigned.side]} resigned: ${winner} wins.`;
    default:
      return winner ? `${winner} wins.` : status.result === '1/2' ? 'Draw.' : describeStatus(status);
  }
}

function renderBanner() {
  const el = $('result-banner');
  const pos = state.pos;
  const over = Boolean(pos) && gameOver() && state.pv.step === 0 && !state.editor;
  const status = shownStatus();
  el.hidden = !over;
  el.dataset.result = over ? status.result : '';
  el.dataset.reason = over ? status.reason : '';
  el.textContent = over ? resultText(status, parseFen(pos.fen).side) : '';
  // A finished game in play mode: offer its review, as lichess does.
  $('review-this').hidden = !(over && state.mode === 'play' && state.cursor === state.moves.length);
}

/** The evaluation bar beside the board: White's share of the expected score, from the analysis. */
function renderEvalBar() {
  const bar = $('eval-bar');
  const a = currentAnalysis();
  if (!a) {
    bar.hidden = true;
    bar.dataset.white = '';
    return;
  }
  const last = a.last;
  const side = parseFen(last.fen || a.fen).side;
  const v = headlineValue(last);
  const white = side === 'w' ? v : 1 - v;
  bar.hidden = false;
  bar.dataset.white = white.toFixed(3);
  $('eval-fill').style.width = `${(100 * white).toFixed(1)}%`;
  const proof = proofText(last.rootProof, last.rootProofPlies);
  $('eval-text').textContent =
    (isForced(last) || a.single ? `forced ${last.bestMove || ''} · ` : '') +
    `White ${(100 * white).toFixed(1)}% · Black ${(100 * (1 - white)).toFixed(1)}%${proof ? ` · ${NAME[side]}: ${proof}` : ''}`;
}
