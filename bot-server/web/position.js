// Positions and moves as the board reads them, without the rules: a FEN's units and hands, a move's
// squares and kind, whose turn it is and the shown position's result (all legality is the server's).

import { FILES, other, state } from './state.js';

const REASONS = {
  'no-units': 'no units and no men in hand left',
  blocked: 'the player to move is blocked',
  'no-legal-entry': 'the player to move cannot enter',
  repetition: 'threefold repetition',
  resignation: 'a player resigned',
};

/** Parses a FEN into units by square, side to move, turns played and men in hand. */
export function parseFen(fen) {
  const parts = fen.trim().split(/\s+/);
  const units = new Map();
  parts[0].split('/').forEach((row, i) => {
    const rank = 9 - i;
    let file = 0;
    for (let k = 0; k < row.length; ) {
      const c = row[k];
      if (c >= '0' && c <= '9') {
        file += Number(c);
        k += 1;
        continue;
      }
      const p = row[k + 1] || '@';
      units.set(FILES[file] + rank, {
        owner: c === c.toUpperCase() ? 'w' : 'b',
        controllers: c.toUpperCase().charCodeAt(0) - 64,
        prisoners: p === '@' ? 0 : p.toUpperCase().charCodeAt(0) - 64,
      });
      file += 1;
      k += 2;
    }
  });
  const [w, b] = (parts[3] || '0,0').split(',').map(Number);
  return { units, side: parts[1] || 'w', turns: Number(parts[2] || 0), hand: { w, b } };
}

export const movePath = (move) => move.split(/[-x]/);
export const moveKind = (move) => (move.includes('x') ? 'capture' : move.includes('-') ? 'step' : 'entry');
export const startsWith = (path, prefix) => prefix.every((sq, i) => path[i] === sq);
export const posKey = (moves) => `${state.startFen}|${moves.join(' ')}`;
export const startSide = () => parseFen(state.startFen).side;
/** The side that plays moves[ply] (and so is to move after `ply` moves). */
export const sideAt = (ply) => (ply % 2 === 0 ? startSide() : other(startSide()));
export const sideToMove = () => sideAt(state.cursor);
/** Whether the shown position is where the player resigned. */
const resignedHere = () => Boolean(state.resigned && state.pos && state.resigned.key === state.pos.key);
/** The shown position's result: the server's, or a resignation there. */
export function shownStatus() {
  if (resignedHere()) return { result: state.resigned.side === 'w' ? '0-1' : '1-0', reason: 'resignation' };
  return state.pos ? state.pos.status : { result: '*', reason: '' };
}
export const gameOver = () => Boolean(state.pos) && shownStatus().result !== '*';
export const shownMoves = () => state.moves.slice(0, state.cursor);

export function isNeighbour(a, b) {
  const df = Math.abs(FILES.indexOf(a[0]) - FILES.indexOf(b[0]));
  const dr = Math.abs(Number(a.slice(1)) - Number(b.slice(1)));
  return df === 1 && dr === 1;
}

export function describeStatus(status) {
  if (!status || status.result === '*') return '';
  const why = REASONS[status.reason] || status.reason || '';
  const who =
    status.result === '1-0' ? 'White wins' : status.result === '0-1' ? 'Black wins' : status.result === '1/2' ? 'Draw' : status.result;
  return `Game over: ${status.result} — ${who}${why ? ` (${why})` : ''}`;
}
