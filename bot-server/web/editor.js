// Board editor: a position set up by clicking. The board shows the editor's position while it is
// open; the server checks each version of its FEN, and its answer (which names the bad field)
// is shown as it stands. "Analyse" and "Play from here" start a game from it.

import { FILES, INITIAL_FEN, NAME, render, state } from './state.js';
import { $ } from './dom.js';
import { clearMessage } from './messages.js';
import { api, describeError } from './api.js';
import { describeStatus, parseFen } from './position.js';
import { clearAnalysis, startAnalysis, stopAnalysis } from './analysis.js';
import { bumpGeneration, newGame } from './game.js';

// open; the server checks each version of its FEN, and its answer (which names the bad field)
// is shown as it stands. "Analyse" and "Play from here" start a game from it.

export function openEditor() {
  bumpGeneration();
  stopAnalysis();
  clearAnalysis();
  const b = parseFen((state.pos && state.pos.fen) || INITIAL_FEN);
  state.editor = { units: b.units, side: b.side, turns: String(b.turns), hand: { w: String(b.hand.w), b: String(b.hand.b) }, check: null };
  state.sel = [];
  $('ed-side').value = state.editor.side;
  $('ed-hand-w').value = state.editor.hand.w;
  $('ed-hand-b').value = state.editor.hand.b;
  $('ed-turns').value = state.editor.turns;
  clearMessage();
  render();
  checkEditorFen();
}

export function closeEditor() {
  state.editor = null;
  render();
}

/** The editor's FEN (vchess form: runs of empty squares as one digit, a unit as two letters). */
export function editorFen(e) {
  const letter = (n) => String.fromCharCode(64 + n);
  const rows = [];
  for (let rank = 9; rank >= 1; rank -= 1) {
    let row = '';
    let run = 0;
    for (const file of FILES) {
      const u = e.units.get(file + rank);
      if (!u) {
        run += 1;
        continue;
      }
      if (run) row += String(run);
      run = 0;
      const code = letter(u.controllers) + (u.prisoners ? letter(u.prisoners) : '@');
      row += u.owner === 'w' ? code : code.toLowerCase();
    }
    if (run) row += String(run);
    rows.push(row);
  }
  return `${rows.join('/')} ${e.side} ${e.turns} ${e.hand.w},${e.hand.b}`;
}

const clampInt = (text, lo, hi) => Math.max(lo, Math.min(hi, Math.round(Number(text)) || lo));

/** A click in the editor: puts the chosen unit there, or empties the square (a second click too). */
export function editSquare(sq) {
  const e = state.editor;
  const owner = $('ed-owner').value;
  const unit = owner ? { owner, controllers: clampInt($('ed-men').value, 1, 12), prisoners: clampInt($('ed-prisoners').value, 0, 12) } : null;
  const old = e.units.get(sq);
  const same = old && unit && old.owner === unit.owner && old.controllers === unit.controllers && old.prisoners === unit.prisoners;
  if (!unit || same) e.units.delete(sq);
  else e.units.set(sq, unit);
  fitHands(e);
  render();
  return checkEditorFen();
}

/**
 * Men in hand cut to what the board leaves of each side's 12 (a man placed comes out of the
 * hand), so that setting up a position from a cleared board never passes through an invalid
 * one. Never raised: a player who typed a smaller hand keeps it.
 */
export function fitHands(e) {
  const onBoard = { w: 0, b: 0 };
  for (const u of e.units.values()) {
    onBoard[u.owner] += u.controllers;
    onBoard[u.owner === 'w' ? 'b' : 'w'] += u.prisoners;
  }
  for (const side of ['w', 'b']) {
    const typed = Number(e.hand[side]);
    if (Number.isInteger(typed) && typed > 12 - onBoard[side]) {
      e.hand[side] = String(Math.max(0, 12 - onBoard[side]));
      $(`ed-hand-${side}`).value = e.hand[side];
    }
  }
}

/** The side to move, men in hand and turns: kept as typed, so the server names a bad one. */
export function readEditorFields() {
  const e = state.editor;
  if (!e) return;
  e.side = $('ed-side').value;
  e.hand = { w: $('ed-hand-w').value.trim() || '0', b: $('ed-hand-b').value.trim() || '0' };
  e.turns = $('ed-turns').value.trim() || '0';
  render();
  checkEditorFen();
}

let editorSeq = 0;

export async function checkEditorFen() {
  const e = state.editor;
  const fen = editorFen(e);
  const seq = ++editorSeq;
  e.check = null;
  renderEditor();
  let check;
  try {
    const r = await api('LegalMoves', { position: { fen } });
    const status = { result: (r.status && r.status.result) || '*', reason: (r.status && r.status.reason) || '' };
    const n = (r.moves || []).length;
    check = {
      ok: true,
      text:
        status.result !== '*'
          ? `Valid, but the game is over here: ${describeStatus(status)}.`
          : `Valid: ${NAME[e.side]} to move, ${n} legal move${n === 1 ? '' : 's'}.`,
    };
  } catch (err) {
    check = { ok: false, text: `Not a valid position: ${describeError(err)}` };
  }
  if (seq !== editorSeq || state.editor !== e) return;
  e.check = { ...check, fen };
  renderEditor();
}

export function renderEditor() {
  const e = state.editor;
  document.body.dataset.editing = String(Boolean(e));
  $('editor').hidden = !e;
  $('edit-position').disabled = Boolean(e);
  if (!e) return;
  const fen = editorFen(e);
  $('ed-fen').textContent = fen;
  const check = e.check && e.check.fen === fen ? e.check : null;
  const el = $('ed-check');
  el.textContent = check ? check.text : 'Checking…';
  el.dataset.valid = check ? String(check.ok) : '';
  $('ed-analyse').disabled = !(check && check.ok);
  $('ed-play').disabled = !(check && check.ok);
}

/** Leaves the editor for a game from its (valid) position: analysed, or played against the engine. */
export async function startFromEditor(mode) {
  const e = state.editor;
  if (!e || !e.check || !e.check.ok) return;
  const fen = e.check.fen;
  state.editor = null;
  state.mode = mode;
  if (mode === 'play') {
    state.human = e.side; // the player moves first; the engine answers
    state.flipped = state.human === 'b';
  }
  clearMessage();
  await newGame(fen);
  if (mode === 'analysis') startAnalysis();
}
