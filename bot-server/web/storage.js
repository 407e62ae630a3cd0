// Saving and addresses: the game kept in localStorage, the share link, and the URL parameters.
//
// URL parameters: fen, moves (comma or space separated), ply (the position shown: moves played so
// far), color (w|b), time (engine ms per move), mode (play|analysis|review), token (bearer token
// when the server needs one). A bad one is named in a message and ignored.

import { INITIAL_FEN, params, state } from './state.js';
import { $ } from './dom.js';
import { say } from './messages.js';
import { api, ApiError, describeError } from './api.js';
import { leafLines } from './tree.js';

const STORE_KEY = 'emergo-board-game';
/** The parameters that describe a game: an address with any of them opens that, not the saved game. */
export const GAME_PARAMS = ['fen', 'moves', 'ply', 'mode', 'color'];

/** Keeps the game (every line), the position shown, the mode and the side played in localStorage. */
export function saveGame() {
  const saved = {
    version: 1,
    startFen: state.startFen,
    lines: leafLines(),
    line: state.moves,
    cursor: state.cursor,
    mode: state.mode,
    human: state.human,
    flipped: state.flipped,
    engineTime: state.engineTime,
    level: state.level,
    resigned: state.resigned,
  };
  try {
    localStorage.setItem(STORE_KEY, JSON.stringify(saved));
  } catch {
    // Storage off or full: the game simply is not kept.
  }
}

/** The saved game, if any and well formed (the server checks its moves when it is shown). */
export function savedGame() {
  let saved;
  try {
    saved = JSON.parse(localStorage.getItem(STORE_KEY) || 'null');
  } catch {
    return null;
  }
  const isLine = (l) => Array.isArray(l) && l.every((m) => typeof m === 'string');
  if (!saved || saved.version !== 1 || typeof saved.startFen !== 'string') return null;
  if (!Array.isArray(saved.lines) || !saved.lines.every(isLine) || !isLine(saved.line)) return null;
  return saved;
}

/** An address that opens the shown line at the shown position (never the token: it is a secret). */
export function shareLink() {
  const url = new URL(location.pathname, location.origin);
  const p = url.searchParams;
  if (state.startFen !== INITIAL_FEN) p.set('fen', state.startFen);
  if (state.moves.length) p.set('moves', state.moves.join(','));
  if (state.cursor !== state.moves.length) p.set('ply', String(state.cursor));
  p.set('mode', state.mode);
  if (state.mode === 'play') p.set('color', state.human);
  return url.toString();
}

/**
 * Reads the address: returns { fen, moves, ply } for the game to open (null: none given) and says
 * which parameters were ignored and why. A bad fen or moves falls back to the initial position.
 */
export async function readAddress() {
  const problems = [];
  const mode = params.get('mode');
  if (mode !== null) {
    if (['play', 'analysis', 'review'].includes(mode)) state.mode = mode;
    else problems.push(`mode must be play, analysis or review (got "${mode}")`);
  }
  const color = params.get('color');
  if (color !== null) {
    if (color === 'w' || color === 'b') state.human = color;
    else problems.push(`color must be w or b (got "${color}")`);
  }
  const timeProblem = readTime();
  if (timeProblem) problems.push(timeProblem);
  state.flipped = state.human === 'b';
  let game = null;
  if (params.has('fen') || params.has('moves') || params.has('ply')) {
    game = { fen: params.get('fen') || INITIAL_FEN, moves: (params.get('moves') || '').split(/[\s,]+/).filter(Boolean), ply: null };
    try {
      await api('LegalMoves', { position: { fen: game.fen, moves: game.moves } });
    } catch (e) {
      // The server names the field: "position.fen: …" or "position.moves[3]: …".
      const which = e instanceof ApiError && /^position\.moves/.test(e.message) ? 'moves' : 'fen';
      problems.push(`${which}: ${describeError(e)} (showing the initial position)`);
      game = { fen: INITIAL_FEN, moves: [], ply: null };
    }
    const ply = params.get('ply');
    if (ply !== null) {
      if (/^\d+$/.test(ply) && Number(ply) <= game.moves.length) game.ply = Number(ply);
      else problems.push(`ply must be a number of moves from 0 to ${game.moves.length} (got "${ply}")`);
    }
  }
  if (problems.length) say(`Ignored in the address: ${problems.join('; ')}.`, 'error');
  return game;
}

/** Applies the address's `time` (also over a saved game); what is wrong with it, if anything. */
export function readTime() {
  const time = params.get('time');
  if (time === null) return '';
  // Read once, then dropped from the address like the game's parameters: a rejected value
  // must not stay there (a reload would reject it again), an accepted one is kept with the game.
  const url = new URL(location.href);
  url.searchParams.delete('time');
  history.replaceState(null, '', url);
  if (/^\d+$/.test(time) && Number(time) >= 10 && Number(time) <= 600000) {
    setEngineTime(Number(time));
    return '';
  }
  return `time must be the engine's milliseconds per move, 10 to 600000 (got "${time}")`;
}

/** Drops the game's parameters from the address once read, so that a reload shows the saved game. */
export function forgetAddressGame() {
  const url = new URL(location.href);
  for (const name of GAME_PARAMS) url.searchParams.delete(name);
  history.replaceState(null, '', url);
}

/** Sets the engine's playing level (1..8) and the selectors that show it. */
export function setLevel(level) {
  state.level = level;
  $('level').value = String(level);
  // Levels below 8 have a budget of their own: the time is the full engine's.
  $('engine-time').disabled = level < 8;
}

export function setEngineTime(ms) {
  state.engineTime = ms;
  const select = $('engine-time');
  if (![...select.options].some((o) => Number(o.value) === ms)) select.appendChild(new Option(`${ms / 1000} s`, String(ms)));
  select.value = String(ms);
}
