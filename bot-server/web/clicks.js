// Clicks on the board: building a move square by square against the legal moves, and explaining
// an illegal one (asking the server for the rule).

import { render, state } from './state.js';
import { clearMessage, say } from './messages.js';
import { api, describeError } from './api.js';
import {
  describeStatus,
  gameOver,
  isNeighbour,
  parseFen,
  posKey,
  shownMoves,
  shownStatus,
  sideToMove,
  startsWith,
} from './position.js';
import { resetPv } from './pv.js';
import { playMove } from './game.js';
import { editSquare } from './editor.js';

let clickChain = Promise.resolve();

export function onBoardClick(event) {
  const target = event.target.closest('[data-square]');
  if (!target) return;
  const sq = target.dataset.square;
  clickChain = clickChain.then(() => onSquareClick(sq)).catch((e) => say(describeError(e), 'error'));
}

async function onSquareClick(sq) {
  if (state.editor) return editSquare(sq);
  const pos = state.pos;
  if (!pos || pos.key !== posKey(shownMoves())) return say('One moment: the position is loading.', 'info');
  if (gameOver()) return say(`${describeStatus(shownStatus())}. Start a new game or take moves back.`, 'error');
  if (state.mode === 'play') {
    if (state.engine) return say('Wait: the engine is thinking.', 'info');
    if (state.cursor !== state.moves.length) {
      return say('You are looking at an earlier position: go to the last move (>|) to play on, or switch to analysis mode to try a variation here.', 'error');
    }
    if (sideToMove() !== state.human) return say(`It is the engine's turn (${NAME[sideToMove()]}): press "Engine move".`, 'error');
  }
  if (state.pv.step > 0) resetPv(true);
  const path = state.sel.concat([sq]);
  const candidates = pos.legal.filter((m) => startsWith(m.path, path));
  if (candidates.length === 0) {
    if (state.sel.length === 1 && sq === state.sel[0]) {
      state.sel = [];
      clearMessage();
      return render();
    }
    if (state.sel.length > 0 && pos.legal.some((m) => m.path.length > 1 && m.path[0] === sq)) {
      state.sel = [sq];
      clearMessage();
      return render();
    }
    return explainIllegal(path);
  }
  const complete = candidates.filter((m) => m.path.length === path.length);
  if (candidates.length === 1 && complete.length === 1) return playMove(complete[0]);
  state.sel = path;
  clearMessage();
  render();
}

function captureHint(pos) {
  const captures = pos.legal.filter((m) => m.kind === 'capture');
  if (captures.length === 0) return '';
  const shown = captures.slice(0, 3).map((m) => m.move).join(', ');
  return ` A capture is compulsory: ${shown}${captures.length > 3 ? ', …' : ''}`;
}

/** Says why the clicks `path` do not make a legal move, asking the server for the rule. */
async function explainIllegal(path) {
  const pos = state.pos;
  const sq = path[path.length - 1];
  const prefix = path.slice(0, -1);
  const board = parseFen(pos.fen);
  const side = board.side;
  let attempt = '';
  let reason = '';
  if (prefix.length === 0) {
    const unit = board.units.get(sq);
    if (!unit) attempt = sq; // an entry
    else if (unit.owner !== side) reason = `the unit on ${sq} is the opponent's`;
    else if (pos.legal.some((m) => m.kind === 'capture')) reason = `that square is not a legal start: the unit on ${sq} has no capture`;
    else if (board.hand[side] > 0) reason = `that square is not a legal start: men in hand must be entered before any unit may move`;
    else reason = `that square is not a legal start: the unit on ${sq} has no legal move`;
  } else {
    attempt = prefix.length === 1 && isNeighbour(prefix[0], sq) ? `${prefix[0]}-${sq}` : path.join('x');
  }
  if (attempt) {
    try {
      const r = await api('ApplyMoves', { fen: pos.fen, moves: [attempt] });
      if (!r.ok && r.error) reason = r.error;
    } catch {
      // keep the local reason
    }
    if (state.pos !== pos) return undefined; // the position changed meanwhile
    if (!reason) reason = `${attempt} is not a legal move here`;
  }
  let text = `Illegal: ${reason}.`;
  const next = [...new Set(pos.legal.filter((m) => prefix.length && startsWith(m.path, prefix)).map((m) => m.path[prefix.length]))];
  if (next.length) text += ` From ${prefix.length > 1 ? prefix.join('x') : prefix[0]} the next square can be ${next.join(', ')}.`;
  else text += captureHint(pos);
  say(text, 'error');
  render();
  return undefined;
}
