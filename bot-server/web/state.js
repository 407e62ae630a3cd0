// The board's shared state: the game, the position shown and what runs on the server for it, with
// the few constants every module uses. Modules read and change `state` directly; render() (set by
// the view) redraws the page from it.

export const INITIAL_FEN = '9/9/9/9/9/9/9/9/9 w 0 12,12';
export const FILES = 'abcdefghi';

export const NAME = { w: 'White', b: 'Black' };

export const other = (side) => (side === 'w' ? 'b' : 'w');
export const params = new URLSearchParams(location.search);

export const state = {
  mode: 'play', // 'play' (the engine answers), 'analysis' or 'review' (free moves for both sides)
  human: 'w',
  engineTime: 1000,
  level: 8, // the engine's playing level in play mode: 1 (beginner) to 8 (the full engine)
  startFen: INITIAL_FEN,
  tree: { move: null, children: [] }, // every line tried (see tree.js)
  moves: [], // the line shown: a path of the tree, continued along its first children
  cursor: 0, // the position shown is after moves[0 .. cursor)
  resigned: null, // { side, key }: who resigned, in the position with that key
  evals: new Map(), // posKey -> White's expected score, as the engine reported it
  editor: null, // the board editor's position while it is open (see editor.js)
  gameId: newGameId(),
  flipped: false,
  pos: null, // { key, fen, legal: [{ move, fenAfter, path, kind }], status: { result, reason } }
  sel: [], // squares clicked so far for the move being built
  engine: null, // { controller } while the engine thinks
  analysis: null, // { controller, key, fen, updates, last, running, stopReason }
  review: null, // { controller, searchId, running, turns: Map(turn -> TurnReview), summary, selected, ... }
  pv: { step: 0, line: [], fen: null }, // stepping along the best line
  generation: 0, // bumped whenever the game is replaced or taken back
  info: null, // ServerInfo
  token: params.get('token') || '',
  hint: null, // { key, move, controller }: the engine's suggestion for the shown position (play mode)
  engineNote: null, // { ply, move, text }: what the engine said about the move it played
  exportKind: '', // 'fen', 'record' or 'link': what the Export box holds (kept up to date with the game)
};

export function newGameId() {
  const rnd = crypto.getRandomValues(new Uint32Array(2));
  return `web-${Date.now().toString(36)}-${rnd[0].toString(36)}${rnd[1].toString(36)}`;
}

let redraw = () => {};

/**
 * Redraws the page from the state. The view (view.js) draws, and registers itself here at start-up,
 * so that the modules it draws from can ask for a redraw without importing it (a circle).
 */
export const render = (withAnalysis) => redraw(withAnalysis);

/** Sets what render() calls (once, at start-up). */
export function setRenderer(fn) {
  redraw = fn;
}
