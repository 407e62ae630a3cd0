// The Emergo web board: plain JavaScript and SVG, no framework, no build step.
//
// The game is kept as a start FEN plus a move tree; every position shown comes from the server
// (`LegalMoves` gives the legal moves, the FEN after each and the game status), so the board
// knows no rules itself: clicks are matched against the legal move strings, and illegal clicks
// are explained by asking `ApplyMoves` why the would-be move is refused.
//
// Review mode sends a whole game (a pasted record, or the game on the board) to `AnalyzeGame`
// and follows its Server-Sent Events: the evaluation graph and the marked move list fill in as
// the turns arrive, and a click on either shows that position with the engine's better line.
//
// Every line tried is kept in the tree (variations); the game, its variations, the mode and the
// side played are saved in localStorage and restored on reload, and "Copy link" gives an address
// that opens the shown line and position. The board editor sets up a position by clicking and
// lets the server validate its FEN; the evaluation graph of play and analysis draws what the
// engine reported about each position of the shown line, with the review graph's drawing code.
//
// URL parameters: fen, moves (comma or space separated), ply (the position shown: moves played so
// far), color (w|b), time (engine ms per move), mode (play|analysis|review), token (bearer token
// when the server needs one). A bad one is named in a message and ignored.

const INITIAL_FEN = '9/9/9/9/9/9/9/9/9 w 0 12,12';
const FILES = 'abcdefghi';
const S = 60; // square size in SVG units
const M = 30; // margin for the coordinates
const SVGNS = 'http://www.w3.org/2000/svg';
const NAME = { w: 'White', b: 'Black' };
const REASONS = {
  'no-units': 'no units and no men in hand left',
  blocked: 'the player to move is blocked',
  'no-legal-entry': 'the player to move cannot enter',
  repetition: 'threefold repetition',
  resignation: 'a player resigned',
};
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

const $ = (id) => document.getElementById(id);
const other = (side) => (side === 'w' ? 'b' : 'w');
const params = new URLSearchParams(location.search);

const state = {
  mode: 'play', // 'play' (the engine answers), 'analysis' or 'review' (free moves for both sides)
  human: 'w',
  engineTime: 1000,
  startFen: INITIAL_FEN,
  tree: newNode(null), // every line tried (see "The move tree")
  moves: [], // the line shown: a path of the tree, continued along its first children
  cursor: 0, // the position shown is after moves[0 .. cursor)
  resigned: null, // { side, key }: who resigned, in the position with that key
  evals: new Map(), // posKey -> White's expected score, as the engine reported it
  editor: null, // the board editor's position while it is open (see "Board editor")
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
  engineNote: null, // { ply, move, text }: what the engine said about the move it played
  exportKind: '', // 'fen', 'record' or 'link': what the Export box holds (kept up to date with the game)
};

function newGameId() {
  const rnd = crypto.getRandomValues(new Uint32Array(2));
  return `web-${Date.now().toString(36)}-${rnd[0].toString(36)}${rnd[1].toString(36)}`;
}

// ---------------------------------------------------------------------------------------------
// Server calls

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function headers() {
  const h = { 'content-type': 'application/json' };
  if (state.token) h.authorization = `Bearer ${state.token}`;
  return h;
}

async function errorFrom(response) {
  const text = await response.text();
  let data = {};
  try {
    data = JSON.parse(text);
  } catch {
    data = { message: text };
  }
  return new ApiError(response.status, data.code || `HTTP ${response.status}`, data.message || text);
}

async function api(rpc, body, signal) {
  const r = await fetch(`/v1/${rpc}`, { method: 'POST', headers: headers(), body: JSON.stringify(body), signal });
  if (!r.ok) throw await errorFrom(r);
  return r.json();
}

function describeError(e) {
  if (e instanceof ApiError) {
    const hint = {
      429: ' (the server is busy: try again in a moment)',
      401: ' (this server needs a token: add ?token=... to the address)',
      503: ' (the server is unavailable or shutting down)',
      504: ' (the server ran out of time)',
    }[e.status] || '';
    return `${e.code}: ${e.message}${hint}`;
  }
  return `${e.message || e}`;
}

function threads() {
  const l = (state.info && state.info.limits) || {};
  return Math.max(1, Math.min(l.maxThreadsPerRequest || 1, l.threadBudget || 1));
}

// ---------------------------------------------------------------------------------------------
// Positions and moves

/** Parses a FEN into units by square, side to move, turns played and men in hand. */
function parseFen(fen) {
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

const movePath = (move) => move.split(/[-x]/);
const moveKind = (move) => (move.includes('x') ? 'capture' : move.includes('-') ? 'step' : 'entry');
const startsWith = (path, prefix) => prefix.every((sq, i) => path[i] === sq);
const posKey = (moves) => `${state.startFen}|${moves.join(' ')}`;
const startSide = () => parseFen(state.startFen).side;
/** The side that plays moves[ply] (and so is to move after `ply` moves). */
const sideAt = (ply) => (ply % 2 === 0 ? startSide() : other(startSide()));
const sideToMove = () => sideAt(state.cursor);
/** Whether the shown position is where the player resigned. */
const resignedHere = () => Boolean(state.resigned && state.pos && state.resigned.key === state.pos.key);
/** The shown position's result: the server's, or a resignation there. */
function shownStatus() {
  if (resignedHere()) return { result: state.resigned.side === 'w' ? '0-1' : '1-0', reason: 'resignation' };
  return state.pos ? state.pos.status : { result: '*', reason: '' };
}
const gameOver = () => Boolean(state.pos) && shownStatus().result !== '*';
const shownMoves = () => state.moves.slice(0, state.cursor);

function isNeighbour(a, b) {
  const df = Math.abs(FILES.indexOf(a[0]) - FILES.indexOf(b[0]));
  const dr = Math.abs(Number(a.slice(1)) - Number(b.slice(1)));
  return df === 1 && dr === 1;
}

// ---------------------------------------------------------------------------------------------
// The move tree
//
// A node's first child is its main continuation, the others are variations, in the order they
// were first played. `state.moves` is the line shown: a path from the root, continued along first
// children, so the rest of the board works on a plain list and only branching touches the tree.

function newNode(move) {
  return { move, children: [] };
}

function treeFrom(lines) {
  const root = newNode(null);
  for (const line of lines) addLine(root, line);
  return root;
}

/** Adds `moves` from the root (a new branch becomes its parent's last variation); returns its node. */
function addLine(root, moves) {
  let node = root;
  for (const m of moves) {
    let next = node.children.find((c) => c.move === m);
    if (!next) {
      next = newNode(m);
      node.children.push(next);
    }
    node = next;
  }
  return node;
}

/** The node `moves` lead to, or null when they are not a path of the tree. */
function nodeAt(moves) {
  let node = state.tree;
  for (const m of moves) {
    node = node.children.find((c) => c.move === m);
    if (!node) return null;
  }
  return node;
}

/** `moves` continued along the main continuation of the node they lead to. */
function lineThrough(moves) {
  const line = moves.slice();
  let node = nodeAt(moves);
  while (node && node.children.length) {
    node = node.children[0];
    line.push(node.move);
  }
  return line;
}

const mainLine = () => lineThrough([]);
const sameMoves = (a, b) => a.length === b.length && a.every((m, i) => b[i] === m);
/** Whether the shown position lies off the main line. */
const inVariation = () => !sameMoves(shownMoves(), mainLine().slice(0, state.cursor));

/** Every leaf's line, in tree order: adding them in turn rebuilds the same tree (for saving). */
function leafLines(node = state.tree, prefix = []) {
  if (!node.children.length) return prefix.length ? [prefix] : [];
  return node.children.flatMap((c) => leafLines(c, prefix.concat(c.move)));
}

/** Removes the last move of `moves` from the tree, with everything after it. */
function deleteLine(moves) {
  const parent = nodeAt(moves.slice(0, -1));
  if (parent) parent.children = parent.children.filter((c) => c.move !== moves[moves.length - 1]);
}

/** Makes the line through `moves` the main line (each step becomes its parent's first child). */
function promoteLine(moves) {
  let node = state.tree;
  for (const m of moves) {
    const i = node.children.findIndex((c) => c.move === m);
    if (i < 0) return;
    const [child] = node.children.splice(i, 1);
    node.children.unshift(child);
    node = child;
  }
}

/** Plays `moves` (a known or a new line) and shows the position at their end. */
function showNewLine(moves) {
  addLine(state.tree, moves);
  state.moves = lineThrough(moves);
  state.cursor = moves.length;
}

function describeStatus(status) {
  if (!status || status.result === '*') return '';
  const why = REASONS[status.reason] || status.reason || '';
  const who =
    status.result === '1-0' ? 'White wins' : status.result === '0-1' ? 'Black wins' : status.result === '1/2' ? 'Draw' : status.result;
  return `Game over: ${status.result} — ${who}${why ? ` (${status.reason}: ${why})` : ''}`;
}

// ---------------------------------------------------------------------------------------------
// Game flow

let refreshSeq = 0;

/** Asks the server about the shown position; false when it failed or was overtaken. */
async function refresh() {
  const seq = ++refreshSeq;
  const moves = shownMoves();
  const key = posKey(moves);
  setBusy('wait');
  try {
    const r = await api('LegalMoves', { position: { fen: state.startFen, moves } });
    if (seq !== refreshSeq) return false;
    state.pos = {
      key,
      fen: r.fen,
      legal: (r.moves || []).map((m) => ({ move: m.move, fenAfter: m.fenAfter, path: movePath(m.move), kind: moveKind(m.move) })),
      status: { result: (r.status && r.status.result) || '*', reason: (r.status && r.status.reason) || '' },
    };
    state.sel = [];
    render();
    await refreshExport();
    return true;
  } catch (e) {
    if (seq === refreshSeq) {
      say(describeError(e), 'error');
      render();
    }
    return false;
  }
}

/** Replaces the game or takes moves back: stops the engine's search for the old game. */
function bumpGeneration() {
  state.generation += 1;
  if (state.engine) {
    state.engine.controller.abort();
    state.engine = null;
  }
}

async function afterChange() {
  resetPv(false);
  const ok = await refresh();
  if (!ok) return;
  saveGame();
  const engineTurn =
    state.mode === 'play' && !gameOver() && state.cursor === state.moves.length && sideToMove() !== state.human;
  const a = state.analysis;
  if (a && a.key !== state.pos.key) {
    if (a.running && !engineTurn) startAnalysis(); // the analysis follows the board
    else {
      stopAnalysis();
      clearAnalysis();
    }
  }
  if (engineTurn) maybeEngineMove(); // not awaited: clicks meanwhile are answered
}

async function maybeEngineMove(force = false) {
  if (state.engine || !state.pos || gameOver()) return;
  if (!force) {
    if (state.mode !== 'play' || state.cursor !== state.moves.length || sideToMove() === state.human) return;
  }
  if (state.pos.key !== posKey(shownMoves())) return;
  stopAnalysis();
  const gen = state.generation;
  const controller = new AbortController();
  state.engine = { controller };
  const moves = shownMoves();
  render();
  try {
    const r = await api(
      'BestMove',
      {
        position: { fen: state.startFen, moves },
        limits: { maxTimeMs: state.engineTime },
        options: { gameId: state.gameId, threads: threads() },
      },
      controller.signal,
    );
    if (gen !== state.generation) return;
    state.engine = null;
    const a = r.analysis || {};
    const stats = a.stats || {};
    if (r.bestMove) {
      recordEngineEval(moves, a);
      showNewLine(moves.concat([r.bestMove]));
      state.engineNote = { ply: state.cursor, move: r.bestMove, text: `Engine played ${r.bestMove} (${evaluationText(a)}).` };
    }
    await afterChange();
  } catch (e) {
    if (gen !== state.generation) return;
    state.engine = null;
    if (e.name !== 'AbortError') say(`The engine could not move: ${describeError(e)}. Press "Engine move" to retry.`, 'error');
    render();
  }
}

async function playMove(m) {
  showNewLine(shownMoves().concat([m.move]));
  state.sel = [];
  clearMessage();
  await afterChange();
}

function newGame(fen = INITIAL_FEN, moves = []) {
  bumpGeneration();
  stopAnalysis();
  clearAnalysis();
  state.startFen = fen;
  state.tree = treeFrom([moves]);
  state.moves = moves;
  state.cursor = moves.length;
  state.resigned = null;
  state.evals = new Map();
  state.gameId = newGameId();
  state.sel = [];
  state.pos = null;
  state.engineNote = null;
  $('fen-input').value = fen;
  $('moves-input').value = moves.join(' ');
  return afterChange();
}

function undo() {
  clearMessage();
  let keep;
  if (state.mode === 'play') {
    // Take back the engine's reply (if any) and the player's last move.
    let k = state.moves.length;
    while (k > 0 && sideAt(k - 1) !== state.human) k -= 1;
    if (k === 0) return say('Nothing of yours to take back.', 'info');
    keep = k - 1;
  } else {
    if (state.cursor === 0) return say('Nothing to take back.', 'info');
    keep = state.cursor - 1;
  }
  bumpGeneration();
  // A take-back deletes the moves from the tree too (unlike going back, which keeps them).
  deleteLine(state.moves.slice(0, keep + 1));
  state.moves = state.moves.slice(0, keep);
  state.cursor = state.moves.length;
  state.resigned = null;
  return afterChange();
}

function navigate(to) {
  const c = Math.max(0, Math.min(state.moves.length, to));
  if (c === state.cursor) return;
  if (state.engine) bumpGeneration();
  state.cursor = c;
  clearMessage();
  afterChange();
}

/** Shows the position after `moves`, a path of the tree (a click in the move list). */
function goToLine(moves) {
  if (sameMoves(moves, shownMoves())) return;
  if (state.engine) bumpGeneration();
  state.moves = lineThrough(moves);
  state.cursor = moves.length;
  clearMessage();
  afterChange();
}

/** "Make main line": the shown line becomes the game (the record, the review). */
function promoteShown() {
  promoteLine(state.moves);
  saveGame();
  render();
}

async function loadFromInputs() {
  const fen = $('fen-input').value.trim() || INITIAL_FEN;
  const moves = $('moves-input').value.split(/[\s,]+/).filter(Boolean);
  try {
    await api('LegalMoves', { position: { fen, moves } });
  } catch (e) {
    say(`Cannot load this position: ${describeError(e)}`, 'error');
    return;
  }
  clearMessage();
  await newGame(fen, moves);
}

// ---------------------------------------------------------------------------------------------
// Clicks

let clickChain = Promise.resolve();

function onBoardClick(event) {
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

// ---------------------------------------------------------------------------------------------
// Analysis

function analysisLimits() {
  const cap = (state.info && state.info.limits && state.info.limits.maxTimeMs) || 60000;
  return { maxTimeMs: cap };
}

async function startAnalysis() {
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

/** Reads a Server-Sent Events answer to its end, calling onEvent(name, payload) per event. */
async function readSse(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true }).replace(/\r/g, '');
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue; // keep-alive comment
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let v = colon < 0 ? '' : line.slice(colon + 1);
        if (v.startsWith(' ')) v = v.slice(1);
        if (field === 'event') name = v;
        else if (field === 'data') data.push(v);
      }
      if (data.length) onEvent(name, JSON.parse(data.join('\n')));
    }
  }
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

/** 128 random bits in hex: an unguessable search id of our own. */
function newSearchId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The "Stop" button: ends the search with its answer. The server stops it and the stream ends
 * with a final update (stop reason STOPPED) that stays on the board. If the server no longer
 * (or not yet) knows the search, the stream is simply closed.
 */
async function stopWithAnswer() {
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
function stopAnalysis() {
  const a = state.analysis;
  if (a && a.running) {
    a.running = false;
    a.stopReason = a.stopReason || 'stopped';
    if (a.controller) a.controller.abort(); // closes the stream: the server cancels the search
    renderAnalysis();
  }
}

function clearAnalysis() {
  state.analysis = null;
  resetPv(false);
  renderAnalysis();
}

/** The analysis of the shown position, if any. */
function currentAnalysis() {
  const a = state.analysis;
  return a && a.last && state.pos && a.key === state.pos.key ? a : null;
}

function bestLine() {
  const a = currentAnalysis();
  const best = a && a.last.moves && a.last.moves[0];
  if (best) return best.pv || [best.move];
  const t = shownReviewTurn();
  if (t && t.bestMove) return t.bestPv && t.bestPv.length ? t.bestPv : [t.bestMove];
  return [];
}

function resetPv(doRender = true) {
  state.pv = { step: 0, line: [], fen: null };
  if (doRender) render();
}

let pvSeq = 0;
async function stepPv(delta) {
  const line = state.pv.step > 0 ? state.pv.line : bestLine();
  if (!line.length || !state.pos) return;
  const step = Math.max(0, Math.min(line.length, state.pv.step + delta));
  if (step === 0) return resetPv(true);
  const seq = ++pvSeq;
  try {
    const r = await api('ApplyMoves', { fen: state.pos.fen, moves: line.slice(0, step) });
    if (seq !== pvSeq) return undefined;
    state.pv = { step, line, fen: r.fen };
    render();
  } catch (e) {
    say(describeError(e), 'error');
  }
  return undefined;
}

/**
 * Keeps the engine's evaluation of a position (key: posKey) as White's expected score, for the
 * evaluation graph. A forced answer carries no evaluation (no playouts), so it is not kept.
 */
function recordEval(key, side, analysis) {
  if (!analysis || isForced(analysis) || !Number((analysis.stats || {}).playouts || 0)) return;
  const v = headlineValue(analysis);
  state.evals.set(key, side === 'w' ? v : 1 - v);
}

/** The engine's answer evaluates its position and, by its best move's own value, the next one. */
function recordEngineEval(moves, analysis) {
  const side = sideAt(moves.length);
  recordEval(posKey(moves), side, analysis);
  if (analysis && analysis.bestMove && state.evals.has(posKey(moves))) {
    state.evals.set(posKey(moves.concat([analysis.bestMove])), state.evals.get(posKey(moves)));
  }
}

/** Whether the search answered at once because the position had a single legal move. */
const isForced = (a) => a && a.stopReason === 'STOP_REASON_SINGLE_LEGAL_MOVE';

/**
 * The expected score for the side to move, one figure everywhere: the best move's value once it
 * has visits (the server's root_value is defined the same way), else root_value.
 */
function headlineValue(a) {
  const best = a && a.moves && a.moves[0];
  if (best && Number(best.visits || 0) > 0 && best.value !== undefined) return best.value;
  return (a && a.rootValue) || 0;
}

/** "forced", "forced — win in 1" or "1,234 playouts, winning chances 61.2%" (+ the cap note). */
function evaluationText(a) {
  const stats = (a && a.stats) || {};
  const proof = proofText(a && a.rootProof, a && a.rootProofPlies);
  let text;
  if (isForced(a)) text = `forced${proof ? ` — ${proof}` : ''}`;
  else {
    text = `${Number(stats.playouts || 0).toLocaleString('en')} playouts, winning chances ${(100 * headlineValue(a)).toFixed(1)}%`;
    if (proof) text += `, ${proof}`;
  }
  return text + capNote(stats);
}

/** Says when the server's cap clipped the time asked for. */
function capNote(stats) {
  if (!stats || stats.budgetReason !== 'BUDGET_REASON_CAPPED') return '';
  return `; the server's cap clipped the budget to ${(Number(stats.budgetMs || 0) / 1000).toFixed(1)} s`;
}

function proofText(proof, plies) {
  if (proof === 'PROOF_STATUS_WIN') return `win in ${plies || 0}`;
  if (proof === 'PROOF_STATUS_LOSS') return `loss in ${plies || 0}`;
  if (proof === 'PROOF_STATUS_DRAW') return 'draw';
  return '';
}

// ---------------------------------------------------------------------------------------------
// Review

const CLASS = {
  MOVE_CLASS_BEST: { name: 'best', mark: '' },
  MOVE_CLASS_GOOD: { name: 'good', mark: '' },
  MOVE_CLASS_INACCURACY: { name: 'inaccuracy', mark: '?!' },
  MOVE_CLASS_MISTAKE: { name: 'mistake', mark: '?' },
  MOVE_CLASS_BLUNDER: { name: 'blunder', mark: '??' },
  MOVE_CLASS_FORCED: { name: 'forced', mark: '' },
};
const classOf = (t) => CLASS[t.class] || { name: '', mark: '' };
const pct = (v) => `${(100 * (v || 0)).toFixed(1)}%`;
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

async function startReview() {
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
async function stopReview() {
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
function showReviewTurn(t) {
  const r = state.review;
  if (!r || !r.turns.has(t)) return undefined;
  r.selected = t;
  clearMessage();
  renderReview();
  return showReviewGame(r, t - 1);
}

/** The review of the turn played from the shown position, if the board shows the reviewed game. */
function shownReviewTurn() {
  const r = state.review;
  if (!r || state.startFen !== r.startFen || state.pv.step > 0) return null;
  const t = r.turns.get(state.cursor + 1);
  return t && state.moves[state.cursor] === t.playedMove ? t : null;
}

// The graphs of White's expected score (the review's, over turns; the game's, over plies) share
// one drawing: a scale { first, last } of x positions and points { at, white, cls, title }.

function onGraphClick(event) {
  const r = state.review;
  if (!r || !r.turns.size) return undefined;
  const at = graphPointAt(event, $('review-graph'), reviewScale(r), [...r.turns.keys()]);
  return at === null ? undefined : showReviewTurn(at);
}

/** A click on the game's evaluation graph shows the position after that move. */
function onEvalGraphClick(event) {
  const points = evalPoints();
  const at = graphPointAt(event, $('eval-graph'), evalScale(), points.map((p) => p.at));
  if (at !== null) navigate(at);
}

/** The point clicked, or (anywhere else on the graph) the nearest one by x; null when none. */
function graphPointAt(event, svgEl, scale, ats) {
  const el = event.target.closest('[data-at]');
  if (el) return Number(el.dataset.at);
  const pt = svgEl.createSVGPoint();
  pt.x = event.clientX;
  pt.y = event.clientY;
  const x = pt.matrixTransform(svgEl.getScreenCTM().inverse()).x;
  let best = null;
  for (const at of ats) if (best === null || Math.abs(graphX(scale, at) - x) < Math.abs(graphX(scale, best) - x)) best = at;
  return best;
}

// Both graphs are 600 units wide (their viewBox); the review's is taller than the game's.
const G = { w: 600, left: 44, right: 16, top: 8, bottom: 24 };
const graphX = (scale, at) => G.left + ((at - scale.first) / Math.max(1, scale.last - scale.first)) * (G.w - G.left - G.right);
const graphY = (v, h) => G.top + (1 - v) * (h - G.top - G.bottom);
const REVIEW_GRAPH_H = 170;
const EVAL_GRAPH_H = 120;
const reviewScale = (r) => ({ first: 1, last: r.total });

/**
 * Draws White's expected score, `h` units high: the frame, the x ticks, the area and line, the
 * points (each with pointData(point) as data attributes) and the cursor at x = cursor.
 */
function drawScoreGraph(g, h, scale, points, cursor, pointData) {
  g.textContent = '';
  const x0 = G.left;
  const x1 = G.w - G.right;
  svg('rect', { x: x0, y: G.top, width: x1 - x0, height: h - G.top - G.bottom, class: 'plot' }, g);
  svg('rect', { x: x0, y: G.top, width: x1 - x0, height: graphY(0.5, h) - G.top, class: 'band-w' }, g);
  svg('line', { x1: x0, x2: x1, y1: graphY(0.5, h), y2: graphY(0.5, h), class: 'mid' }, g);
  for (const [v, label] of [[1, '100%'], [0.5, '50%'], [0, '0%']]) {
    svg('text', { x: x0 - 4, y: graphY(v, h) + 4, class: 'axis', 'text-anchor': 'end' }, g).textContent = label;
  }
  if (!scale) return;
  const span = scale.last - scale.first;
  const step = span > 60 ? 20 : span > 20 ? 10 : 5;
  for (let at = scale.first; at <= scale.last; at = at === scale.first ? Math.ceil((at + 1) / step) * step : at + step) {
    const x = graphX(scale, at);
    svg('text', { x, y: h - 6, class: 'axis', 'text-anchor': x > G.w - 30 ? 'end' : 'middle' }, g).textContent = String(at);
  }
  if (cursor !== null) svg('line', { x1: graphX(scale, cursor), x2: graphX(scale, cursor), y1: G.top, y2: h - G.bottom, class: 'cursor' }, g);
  if (!points.length) return;
  const pts = points.map((p) => [graphX(scale, p.at), graphY(p.white, h)]);
  const mid = graphY(0.5, h);
  const area = `M${pts[0][0]},${mid} ${pts.map((p) => `L${p[0]},${p[1]}`).join(' ')} L${pts[pts.length - 1][0]},${mid} Z`;
  svg('path', { d: area, class: 'area' }, g);
  svg('polyline', { points: pts.map((p) => p.join(',')).join(' '), class: 'line' }, g);
  points.forEach((p, i) => {
    const marked = p.cls === 'inaccuracy' || p.cls === 'mistake' || p.cls === 'blunder';
    const dot = svg('circle', { cx: pts[i][0], cy: pts[i][1], r: marked ? 6 : 3, class: `pt ${p.cls || ''}${p.at === cursor ? ' sel' : ''}` }, g);
    dot.dataset.at = String(p.at);
    Object.assign(dot.dataset, pointData(p));
    svg('title', {}, dot).textContent = p.title;
  });
}

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

// The game's evaluation graph (play and analysis): the engine's evaluations of the shown line's
// positions, as they arrive (its own moves in play, each position analysed).

const evalScale = () => ({ first: 0, last: Math.max(1, state.moves.length) });

function evalPoints() {
  const points = [];
  for (let ply = 0; ply <= state.moves.length; ply += 1) {
    const white = state.evals.get(posKey(state.moves.slice(0, ply)));
    if (white === undefined) continue;
    const move = ply ? `after ${ply}. ${state.moves[ply - 1]}` : 'start';
    points.push({ at: ply, white, cls: '', title: `${move} — White ${pct(white)}` });
  }
  return points;
}

function renderEvalGraph() {
  const g = $('eval-graph');
  const points = evalPoints();
  const box = $('eval-graph-box');
  box.hidden = state.mode === 'review' || Boolean(state.editor) || !points.length;
  g.dataset.points = String(points.length);
  if (!box.hidden) drawScoreGraph(g, EVAL_GRAPH_H, evalScale(), points, state.cursor, (p) => ({ ply: String(p.at) }));
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

function renderReview() {
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

// ---------------------------------------------------------------------------------------------
// Export

/** The main line's record (variations are the board's own: a record holds one game). */
async function gameRecord() {
  const moves = mainLine();
  const key = posKey(moves);
  let status = null;
  if (state.resigned && state.resigned.key === key) status = { result: state.resigned.side === 'w' ? '0-1' : '1-0', reason: 'resignation' };
  else if (state.pos && state.pos.key === key) status = state.pos.status;
  else {
    const r = await api('ApplyMoves', { fen: state.startFen, moves });
    status = { result: (r.status && r.status.result) || '*', reason: (r.status && r.status.reason) || '' };
  }
  const engineName = `emergo-bot ${(state.info && state.info.version) || ''} (${state.engineTime / 1000} s/move)`.replace('  ', ' ');
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
async function refreshExport() {
  try {
    if (state.exportKind === 'fen' && state.pos) $('export').value = state.pos.fen;
    else if (state.exportKind === 'record') $('export').value = await gameRecord();
    else if (state.exportKind === 'link') $('export').value = shareLink();
  } catch {
    // the box keeps its text; the next change tries again
  }
}

async function exportText(text, what, kind) {
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

// ---------------------------------------------------------------------------------------------
// Messages and status

function say(text, kind = 'info') {
  const el = $('message');
  el.textContent = text;
  el.dataset.kind = kind;
}

function clearMessage() {
  const el = $('message');
  el.textContent = '';
  el.dataset.kind = '';
}

function setBusy(what) {
  $('status').dataset.state = what;
}

// ---------------------------------------------------------------------------------------------
// Rendering

function svg(tag, attrs = {}, parent = null) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

function center(sq) {
  const f = FILES.indexOf(sq[0]);
  const r = Number(sq.slice(1)) - 1;
  const x = state.flipped ? 8 - f : f;
  const y = state.flipped ? r : 8 - r;
  return [M + x * S + S / 2, M + y * S + S / 2];
}

let builtFlipped = null;
const layers = {};

/** The static board (squares and coordinates); rebuilt only when flipped. */
function buildBoard() {
  const board = $('board');
  board.textContent = '';
  const defs = svg('defs', {}, board);
  for (const side of ['w', 'b']) {
    const marker = svg('marker', { id: `head-${side}`, viewBox: '0 0 10 10', refX: '6', refY: '5', markerWidth: '4', markerHeight: '4', orient: 'auto-start-reverse' }, defs);
    svg('path', { d: 'M0,0 L10,5 L0,10 z', class: `arrowhead arrow-${side}` }, marker);
  }
  svg('rect', { x: 0, y: 0, width: 2 * M + 9 * S, height: 2 * M + 9 * S, class: 'frame' }, board);
  const squares = svg('g', { id: 'squares' }, board);
  for (let r = 1; r <= 9; r += 1) {
    for (let f = 0; f < 9; f += 1) {
      const sq = FILES[f] + r;
      const [cx, cy] = center(sq);
      const playable = (f + r - 1) % 2 === 0;
      const rect = svg('rect', { x: cx - S / 2, y: cy - S / 2, width: S, height: S, class: playable ? 'sq dark' : 'sq light' }, squares);
      if (playable) {
        rect.dataset.square = sq;
        const title = svg('title', {}, rect);
        title.textContent = sq;
      }
    }
  }
  const coords = svg('g', { class: 'coords' }, board);
  for (let i = 0; i < 9; i += 1) {
    const [x] = center(`${FILES[i]}1`);
    const [, y] = center(`a${i + 1}`);
    for (const yy of [M / 2, 2 * M + 9 * S - M / 2]) svg('text', { x, y: yy }, coords).textContent = FILES[i];
    for (const xx of [M / 2, 2 * M + 9 * S - M / 2]) svg('text', { x: xx, y }, coords).textContent = String(i + 1);
  }
  layers.units = svg('g', { id: 'units' }, board);
  layers.marks = svg('g', { id: 'marks' }, board);
  layers.arrows = svg('g', { id: 'arrows' }, board);
  // The arrows' numbers, on square corners (never on a unit's count), above the shafts.
  layers.labels = svg('g', { id: 'arrow-labels' }, board);
  // Each unit's count and prisoner badge, on top of everything: no arrow shaft, capture ring or
  // label may hide how many men a stack holds.
  layers.counts = svg('g', { id: 'counts' }, board);
  board.setAttribute('viewBox', `0 0 ${2 * M + 9 * S} ${2 * M + 9 * S}`);
  builtFlipped = state.flipped;
}

function drawUnit(parent, sq, unit) {
  const [cx, cy] = center(sq);
  const g = svg('g', { class: `unit unit-${unit.owner}` }, parent);
  g.dataset.unit = sq;
  g.dataset.owner = unit.owner;
  g.dataset.controllers = unit.controllers;
  g.dataset.prisoners = unit.prisoners;
  const prisonerSide = other(unit.owner);
  const title = svg('title', {}, g);
  title.textContent =
    `${sq}: ${unit.controllers} ${NAME[unit.owner].toLowerCase()}` +
    (unit.prisoners ? ` over ${unit.prisoners} ${NAME[prisonerSide].toLowerCase()} prisoner${unit.prisoners > 1 ? 's' : ''}` : '');
  if (unit.prisoners > 0) {
    svg('circle', { cx, cy, r: 25, class: `band man-${prisonerSide}` }, g);
    svg('circle', { cx, cy, r: 17, class: `disc man-${unit.owner}` }, g);
  } else {
    svg('circle', { cx, cy, r: 22, class: `disc man-${unit.owner}` }, g);
  }
  const counts = svg('g', { class: 'unit-counts' }, layers.counts);
  counts.dataset.unit = sq;
  svg('text', { x: cx, y: cy + 1, class: `count text-${unit.owner}` }, counts).textContent = String(unit.controllers);
  if (unit.prisoners > 0) {
    svg('circle', { cx: cx + 18, cy: cy + 18, r: 10, class: `badge man-${prisonerSide}` }, counts);
    svg('text', { x: cx + 18, y: cy + 19, class: `badge-count text-${prisonerSide}` }, counts).textContent = String(unit.prisoners);
  }
}

function drawArrows(line, fen) {
  const layer = layers.arrows;
  layer.textContent = '';
  layers.labels.textContent = '';
  if (!line.length) return;
  let side = parseFen(fen).side;
  line.slice(0, 4).forEach((move, i) => {
    const path = movePath(move);
    const opacity = (1 - i * 0.17).toFixed(2);
    const g = svg('g', { class: `arrow arrow-${side}`, opacity }, layer);
    g.dataset.move = move;
    g.dataset.index = i + 1;
    let label;
    if (path.length === 1) {
      const [cx, cy] = center(path[0]);
      svg('circle', { cx, cy, r: 26, class: 'entry-mark' }, g);
      label = [cx - S / 2, cy - S / 2];
    } else {
      const pts = path.map(center);
      // Stop short of the last centre so the arrowhead does not hide the unit.
      const [x1, y1] = pts[pts.length - 2];
      const [x2, y2] = pts[pts.length - 1];
      const len = Math.hypot(x2 - x1, y2 - y1);
      const k = (len - 14) / len;
      pts[pts.length - 1] = [x1 + (x2 - x1) * k, y1 + (y2 - y1) * k];
      svg('polyline', { points: pts.map((p) => p.join(',')).join(' '), class: 'shaft', 'marker-end': `url(#head-${side})` }, g);
      // On a square corner: a quarter of a jump (its middle is the jumped unit), half a step.
      const t = path.length > 1 && move.includes('x') ? 0.25 : 0.5;
      const [a, b] = [center(path[0]), center(path[1])];
      label = [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t];
    }
    const lg = svg('g', { class: 'arrow-number', opacity }, layers.labels);
    lg.dataset.move = move;
    svg('circle', { cx: label[0], cy: label[1], r: 9, class: 'arrow-label-bg' }, lg);
    svg('text', { x: label[0], y: label[1] + 1, class: 'arrow-label' }, lg).textContent = String(i + 1);
    side = other(side);
  });
}

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

/** The move list: the main line, each variation indented in parentheses under the move it replaces. */
function renderMoveList() {
  const list = $('move-list');
  list.textContent = '';
  appendLine(list, [], state.tree, true, shownMoves().join(' '));
  const current = list.querySelector('.current');
  if (current && list.scrollHeight > list.clientHeight) list.scrollTop = current.offsetTop - list.offsetTop - list.clientHeight / 2;
}

/**
 * Writes the line after `path` (which leads to `node`): its first continuation move by move, and
 * after each move its alternatives, each as a block of its own holding that variation's line.
 */
function appendLine(el, path, node, main, shown) {
  let numbered = true; // the first move, and the first after a variation, carry their number
  while (node.children.length) {
    const [next, ...alternatives] = node.children;
    const nextPath = path.concat([next.move]);
    el.append(moveSpan(nextPath, main, numbered, shown), ' ');
    numbered = false;
    for (const alt of alternatives) {
      const box = document.createElement('div');
      box.className = 'variation';
      const altPath = path.concat([alt.move]);
      box.append(moveSpan(altPath, false, true, shown), ' ');
      appendLine(box, altPath, alt, false, shown);
      box.lastChild.remove(); // the space after its last move: ")" follows at once
      el.appendChild(box);
      numbered = true;
    }
    path = nextPath;
    node = next;
  }
}

/** One move of the list: its number before White's moves (and "n…" where Black's comes first). */
function moveSpan(path, main, numbered, shown) {
  const ply = path.length;
  const side = sideAt(ply - 1);
  const number = Math.floor((ply - 1 + (startSide() === 'b' ? 1 : 0)) / 2) + 1;
  const span = document.createElement('span');
  span.className = 'entry';
  if (side === 'w' || numbered) {
    const num = document.createElement('span');
    num.className = 'num';
    num.textContent = side === 'w' ? `${number}.` : `${number}…`;
    span.append(num, ' ');
  }
  const move = document.createElement('span');
  move.className = `move${main ? ' main' : ' var'}${path.join(' ') === shown ? ' current' : ''}`;
  move.textContent = path[ply - 1];
  move.dataset.path = path.join(' ');
  if (main) move.dataset.ply = String(ply);
  span.appendChild(move);
  return span;
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
      td.textContent = c;
      if (i === 4) td.className = 'pv';
      tr.appendChild(td);
    });
    body.appendChild(tr);
  }
  render(false);
}

/** Redraws the board, the hands, the status and the controls from the state. */
function render(withAnalysis = true) {
  if (builtFlipped !== state.flipped) buildBoard();
  const pos = state.pos;
  const editing = Boolean(state.editor);
  const fen = editing ? editorFen(state.editor) : state.pv.step > 0 && state.pv.fen ? state.pv.fen : pos && pos.fen;
  const board = fen ? parseFen(fen) : null;
  const svgEl = $('board');
  svgEl.dataset.fen = fen || '';
  svgEl.dataset.ply = String(state.cursor);
  svgEl.dataset.preview = String(state.pv.step);

  // Units.
  layers.units.textContent = '';
  layers.counts.textContent = '';
  if (board) for (const [sq, unit] of board.units) drawUnit(layers.units, sq, unit);

  // Square highlights: last move, selection, next targets, legal starts.
  const last = editing ? null : state.pv.step > 0 ? state.pv.line[state.pv.step - 1] : state.cursor > 0 ? state.moves[state.cursor - 1] : null;
  const lastPath = last ? movePath(last) : [];
  const sel = state.sel;
  const targets = new Set();
  if (pos && sel.length && state.pv.step === 0) {
    for (const m of pos.legal) if (m.path.length > sel.length && startsWith(m.path, sel)) targets.add(m.path[sel.length]);
  }
  for (const rect of svgEl.querySelectorAll('rect[data-square]')) {
    const sq = rect.dataset.square;
    rect.classList.toggle('last', lastPath.includes(sq));
    rect.classList.toggle('sel', sel.includes(sq));
    rect.classList.toggle('target', targets.has(sq));
  }
  layers.marks.textContent = '';
  for (const sq of targets) {
    const [cx, cy] = center(sq);
    svg('circle', { cx, cy, r: 8, class: 'target-dot' }, layers.marks);
  }
  if (sel.length > 1) svg('polyline', { points: sel.map((sq) => center(sq).join(',')).join(' '), class: 'sel-path' }, layers.marks);
  sel.forEach((sq, i) => {
    const [cx, cy] = center(sq);
    if (i > 0) svg('text', { x: cx - 20, y: cy - 18, class: 'sel-index' }, layers.marks).textContent = String(i);
  });
  // Before any click: where the player may enter, and which units must capture.
  if (pos && !sel.length && state.pv.step === 0 && canPlayHere()) {
    for (const m of pos.legal) {
      const [cx, cy] = center(m.path[0]);
      if (m.kind === 'entry') svg('circle', { cx, cy, r: 6, class: 'entry-dot', 'data-hint': m.path[0] }, layers.marks);
    }
    for (const sq of new Set(pos.legal.filter((m) => m.kind === 'capture').map((m) => m.path[0]))) {
      const [cx, cy] = center(sq);
      svg('circle', { cx, cy, r: 27, class: 'must-capture', 'data-hint': sq }, layers.marks);
    }
  }
  // The men the last move captured: a cross on each jumped square.
  if (last && last.includes('x')) {
    for (let i = 1; i < lastPath.length; i += 1) {
      const [x1, y1] = center(lastPath[i - 1]);
      const [x2, y2] = center(lastPath[i]);
      const [cx, cy] = [(x1 + x2) / 2 - 20, (y1 + y2) / 2 - 20];
      const g = svg('g', { class: 'captured-mark' }, layers.marks);
      svg('path', { d: `M${cx - 5},${cy - 5} L${cx + 5},${cy + 5} M${cx + 5},${cy - 5} L${cx - 5},${cy + 5}` }, g);
    }
  }

  // Arrows for the best line (of the analysis, or of the reviewed turn shown).
  if (fen && !editing) drawArrows(state.pv.step > 0 ? state.pv.line.slice(state.pv.step) : bestLine(), fen);
  else {
    layers.arrows.textContent = '';
    layers.labels.textContent = '';
  }
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
  $('resign').disabled = !canResign();
  $('promote').disabled = !inVariation();
  $('mode').value = state.mode;
  $('color').value = state.human;
  document.body.dataset.mode = state.mode;
  renderReview();
  renderEditor();
}

/** Whether a click on the board could play a move for the side to move now. */
function canPlayHere() {
  if (gameOver() || state.engine || state.editor) return false;
  if (state.mode !== 'play') return true;
  return state.cursor === state.moves.length && sideToMove() === state.human;
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

// ---------------------------------------------------------------------------------------------
// Board editor: a position set up by clicking. The board shows the editor's position while it is
// open; the server checks each version of its FEN, and its answer (which names the bad field)
// is shown as it stands. "Analyse" and "Play from here" start a game from it.

function openEditor() {
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

function closeEditor() {
  state.editor = null;
  render();
}

/** The editor's FEN (vchess form: runs of empty squares as one digit, a unit as two letters). */
function editorFen(e) {
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
function editSquare(sq) {
  const e = state.editor;
  const owner = $('ed-owner').value;
  const unit = owner ? { owner, controllers: clampInt($('ed-men').value, 1, 12), prisoners: clampInt($('ed-prisoners').value, 0, 12) } : null;
  const old = e.units.get(sq);
  const same = old && unit && old.owner === unit.owner && old.controllers === unit.controllers && old.prisoners === unit.prisoners;
  if (!unit || same) e.units.delete(sq);
  else e.units.set(sq, unit);
  render();
  return checkEditorFen();
}

/** The side to move, men in hand and turns: kept as typed, so the server names a bad one. */
function readEditorFields() {
  const e = state.editor;
  if (!e) return;
  e.side = $('ed-side').value;
  e.hand = { w: $('ed-hand-w').value.trim() || '0', b: $('ed-hand-b').value.trim() || '0' };
  e.turns = $('ed-turns').value.trim() || '0';
  render();
  checkEditorFen();
}

let editorSeq = 0;

async function checkEditorFen() {
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

function renderEditor() {
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
async function startFromEditor(mode) {
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

// ---------------------------------------------------------------------------------------------
// Saving, links and resigning

const STORE_KEY = 'emergo-board-game';
/** The parameters that describe a game: an address with any of them opens that, not the saved game. */
const GAME_PARAMS = ['fen', 'moves', 'ply', 'mode', 'color'];

/** Keeps the game (every line), the position shown, the mode and the side played in localStorage. */
function saveGame() {
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
    resigned: state.resigned,
  };
  try {
    localStorage.setItem(STORE_KEY, JSON.stringify(saved));
  } catch {
    // Storage off or full: the game simply is not kept.
  }
}

/** The saved game, if any and well formed (the server checks its moves when it is shown). */
function savedGame() {
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

/** Shows a saved game as it was left; false (and the initial position) when the server refuses it. */
async function restoreGame(saved) {
  try {
    for (const line of [saved.line, ...saved.lines]) await api('LegalMoves', { position: { fen: saved.startFen, moves: line } });
  } catch (e) {
    say(`The saved game could not be restored: ${describeError(e)}`, 'error');
    return false;
  }
  state.mode = ['play', 'analysis', 'review'].includes(saved.mode) ? saved.mode : 'play';
  state.human = saved.human === 'b' ? 'b' : 'w';
  state.flipped = Boolean(saved.flipped);
  if (saved.engineTime > 0 && !params.has('time')) setEngineTime(Number(saved.engineTime));
  bumpGeneration();
  state.startFen = saved.startFen;
  state.tree = treeFrom(saved.lines.concat([saved.line]));
  state.moves = saved.line;
  state.cursor = Math.max(0, Math.min(saved.line.length, Number(saved.cursor) || 0));
  state.resigned = saved.resigned && ['w', 'b'].includes(saved.resigned.side) ? saved.resigned : null;
  $('fen-input').value = saved.startFen;
  $('moves-input').value = mainLine().join(' ');
  await afterChange();
  return true;
}

/** An address that opens the shown line at the shown position (never the token: it is a secret). */
function shareLink() {
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
async function readAddress() {
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
function readTime() {
  const time = params.get('time');
  if (time === null) return '';
  if (/^\d+$/.test(time) && Number(time) >= 10 && Number(time) <= 600000) {
    setEngineTime(Number(time));
    return '';
  }
  return `time must be the engine's milliseconds per move, 10 to 600000 (got "${time}")`;
}

/** Drops the game's parameters from the address once read, so that a reload shows the saved game. */
function forgetAddressGame() {
  const url = new URL(location.href);
  for (const name of GAME_PARAMS) url.searchParams.delete(name);
  history.replaceState(null, '', url);
}

function setEngineTime(ms) {
  state.engineTime = ms;
  const select = $('engine-time');
  if (![...select.options].some((o) => Number(o.value) === ms)) select.appendChild(new Option(`${ms / 1000} s`, String(ms)));
  select.value = String(ms);
}

let resignTimer = null;

/** "Resign" asks again before it counts: a second click within four seconds resigns. */
function onResignClick() {
  const button = $('resign');
  if (button.dataset.confirm !== 'true') {
    button.dataset.confirm = 'true';
    button.textContent = 'Really resign?';
    clearTimeout(resignTimer);
    resignTimer = setTimeout(resetResignButton, 4000);
    return;
  }
  resetResignButton();
  if (!canResign()) return;
  bumpGeneration(); // the engine stops thinking about a game that is over
  stopAnalysis();
  state.resigned = { side: state.human, key: state.pos.key };
  saveGame();
  refreshExport();
  render();
}

function resetResignButton() {
  clearTimeout(resignTimer);
  const button = $('resign');
  button.dataset.confirm = 'false';
  button.textContent = 'Resign';
}

const canResign = () => state.mode === 'play' && Boolean(state.pos) && !gameOver() && state.cursor === state.moves.length;

// ---------------------------------------------------------------------------------------------
// Start-up

function wire() {
  $('board').addEventListener('click', onBoardClick);
  $('new-game').addEventListener('click', () => {
    clearMessage();
    state.human = $('color').value;
    state.flipped = state.human === 'b';
    newGame();
  });
  $('undo').addEventListener('click', () => undo());
  $('resign').addEventListener('click', onResignClick);
  $('edit-position').addEventListener('click', openEditor);
  $('ed-cancel').addEventListener('click', closeEditor);
  $('ed-clear').addEventListener('click', () => {
    state.editor.units.clear();
    render();
    checkEditorFen();
  });
  $('ed-analyse').addEventListener('click', () => startFromEditor('analysis'));
  $('ed-play').addEventListener('click', () => startFromEditor('play'));
  for (const id of ['ed-side', 'ed-hand-w', 'ed-hand-b', 'ed-turns']) $(id).addEventListener('input', readEditorFields);
  $('eval-graph').addEventListener('click', onEvalGraphClick);
  $('promote').addEventListener('click', promoteShown);
  $('copy-link').addEventListener('click', () => exportText(shareLink(), 'Link', 'link'));
  $('move-list').addEventListener('click', (e) => {
    const move = e.target.closest('.move[data-path]');
    if (move) goToLine(move.dataset.path.split(' '));
  });
  $('flip').addEventListener('click', () => {
    state.flipped = !state.flipped;
    saveGame();
    render();
  });
  $('engine-move').addEventListener('click', () => {
    clearMessage();
    if (state.mode === 'play' && state.cursor === state.moves.length) state.human = other(sideToMove());
    maybeEngineMove(true);
  });
  $('mode').addEventListener('change', (e) => {
    state.mode = e.target.value;
    clearMessage();
    if (state.mode !== 'play') bumpGeneration();
    saveGame();
    render();
    if (state.mode === 'play') maybeEngineMove();
  });
  $('color').addEventListener('change', (e) => {
    state.human = e.target.value;
    state.flipped = state.human === 'b';
    saveGame();
    render();
    maybeEngineMove();
  });
  $('engine-time').addEventListener('change', (e) => {
    state.engineTime = Number(e.target.value);
    saveGame();
  });
  $('load-fen').addEventListener('click', () => loadFromInputs());
  $('nav-first').addEventListener('click', () => navigate(0));
  $('nav-back').addEventListener('click', () => navigate(state.cursor - 1));
  $('nav-forward').addEventListener('click', () => navigate(state.cursor + 1));
  $('nav-last').addEventListener('click', () => navigate(state.moves.length));
  $('analyze-start').addEventListener('click', () => {
    clearMessage();
    startAnalysis();
  });
  $('analyze-stop').addEventListener('click', () => stopWithAnswer());
  $('review-start').addEventListener('click', () => {
    clearMessage();
    startReview();
  });
  $('review-stop').addEventListener('click', () => stopReview());
  $('review-graph').addEventListener('click', onGraphClick);
  $('review-moves').addEventListener('click', (e) => {
    const li = e.target.closest('li[data-turn]');
    if (li) showReviewTurn(Number(li.dataset.turn));
  });
  $('pv-first').addEventListener('click', () => resetPv(true));
  $('pv-back').addEventListener('click', () => stepPv(-1));
  $('pv-forward').addEventListener('click', () => stepPv(1));
  $('copy-fen').addEventListener('click', () => {
    const fen = $('board').dataset.fen;
    if (fen) exportText(fen, 'FEN', 'fen');
  });
  $('copy-pgn').addEventListener('click', async () => {
    try {
      await exportText(await gameRecord(), 'Game record', 'record');
    } catch (e) {
      say(describeError(e), 'error');
    }
  });
  document.addEventListener('keydown', (e) => {
    if (e.target.closest('input, textarea, select') || state.editor) return;
    if (e.key === 'ArrowLeft') navigate(state.cursor - 1);
    else if (e.key === 'ArrowRight') navigate(state.cursor + 1);
    else if (e.key === 'Escape' && state.sel.length) {
      state.sel = [];
      render();
    }
  });
}

async function main() {
  wire();
  state.engineTime = Number($('engine-time').value);
  render();
  try {
    state.info = await api('ServerInfo', {});
    const i = state.info;
    $('server-info').textContent = `emergo-bot ${i.version || ''} · rules ${i.rulesVersion || '?'}${i.replica ? ` · ${i.replica}` : ''}`;
  } catch (e) {
    say(`Cannot reach the server: ${describeError(e)}`, 'error');
  }
  // An address that names a game opens it; a bare address brings back the game left here.
  const fromAddress = GAME_PARAMS.some((name) => params.has(name));
  const saved = fromAddress ? null : savedGame();
  if (saved) {
    const problem = readTime(); // the address's time wins over the saved one
    if (await restoreGame(saved)) {
      if (problem) say(`Ignored in the address: ${problem}.`, 'error');
      return;
    }
  }
  const game = await readAddress();
  forgetAddressGame();
  await newGame(game ? game.fen : INITIAL_FEN, game ? game.moves : []);
  if (game && game.ply !== null && game.ply !== game.moves.length) navigate(game.ply);
}

main();
