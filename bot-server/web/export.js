// Export: the game record of the main line, and the Export box (FEN, record or link), kept up to
// date with the game and copied to the clipboard.

import { state } from './state.js';
import { $ } from './dom.js';
import { say } from './messages.js';
import { api } from './api.js';
import { posKey, sideAt } from './position.js';
import { mainLine } from './tree.js';
import { shareLink } from './storage.js';

/** The main line's record (variations are the board's own: a record holds one game). */
export async function gameRecord() {
  const moves = mainLine();
  const key = posKey(moves);
  let status = null;
  if (state.resigned && state.resigned.key === key) status = { result: state.resigned.side === 'w' ? '0-1' : '1-0', reason: 'resignation' };
  else if (state.pos && state.pos.key === key) status = state.pos.status;
  else {
    const r = await api('ApplyMoves', { fen: state.startFen, moves });
    status = { result: (r.status && r.status.result) || '*', reason: (r.status && r.status.reason) || '' };
  }
  const engineName = `emergo-bot ${(state.info && state.info.version) || ''} (${state.level < 8 ? `level ${state.level}` : `${state.engineTime / 1000} s/move`})`.replace('  ', ' ');
  const white = state.mode === 'play' ? (state.human === 'w' ? 'Human' : engineName) : '?';
  const black = state.mode === 'play' ? (state.human === 'b' ? 'Human' : engineName) : '?';
  const d = new Date();
  const date = `${d.getFullYear()}.${String(d.getMonth() + 1).padStart(2, '0')}.${String(d.getDate()).padStart(2, '0')}`;
  const tags = [
    ['Event', state.mode === 'play' ? 'Emergo game against the engine' : 'Emergo analysis'],
    ['Date', date],
    ['White', white],
    ['Black', black],
    ['FEN', state.startFen],
    ['Result', status.result],
    ['Termination', status.reason || (status.result === '*' ? 'unterminated' : 'normal')],
  ];
  const tokens = [];
  let number = 1;
  moves.forEach((m, i) => {
    const side = sideAt(i);
    if (side === 'w') tokens.push(`${number}.`);
    else if (i === 0) tokens.push(`${number}...`);
    tokens.push(m);
    if (side === 'b') number += 1;
  });
  tokens.push(status.result);
  const lines = [];
  let line = '';
  for (const t of tokens) {
    if (line && line.length + 1 + t.length > 79) {
      lines.push(line);
      line = t;
    } else line = line ? `${line} ${t}` : t;
  }
  if (line) lines.push(line);
  return `${tags.map(([k, v]) => `[${k} "${String(v).replace(/"/g, "'")}"]`).join('\n')}\n\n${lines.join('\n')}\n`;
}

/** Keeps the Export box on the game shown (a FEN or a record copied earlier goes stale otherwise). */
export async function refreshExport() {
  try {
    if (state.exportKind === 'fen' && state.pos) $('export').value = state.pos.fen;
    else if (state.exportKind === 'record') $('export').value = await gameRecord();
    else if (state.exportKind === 'link') $('export').value = shareLink();
  } catch {
    // the box keeps its text; the next change tries again
  }
}

export async function exportText(text, what, kind) {
  state.exportKind = kind;
  const box = $('export');
  box.value = text;
  try {
    await navigator.clipboard.writeText(text);
    say(`${what} copied to the clipboard.`, 'info');
  } catch {
    box.focus();
    box.select();
    let copied = false;
    try {
      copied = document.execCommand('copy');
    } catch {
      copied = false;
    }
    say(copied ? `${what} copied to the clipboard.` : `${what} is in the Export box below (the clipboard is not available).`, 'info');
  }
}
