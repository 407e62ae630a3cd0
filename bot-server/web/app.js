// The Emergo web board: plain JavaScript and SVG, no framework, no build step. This entry module
// wires the page's controls and starts: it opens the game the address names, or the one saved here.
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
// The modules, each importing only those above it (state.js's render() is how the lower ones
// redraw: view.js registers itself there):
//   state.js, dom.js, messages.js   shared state and constants; page helpers; the message line
//   api.js                           the gateway's API, its errors and Server-Sent Events
//   position.js, tree.js             positions and moves without rules; the move tree
//   evaluation.js, pv.js             the engine's reports; the best line and stepping along it
//   analysis.js                      analysing the shown position
//   storage.js, export.js            localStorage and the address; the record and the Export box
//   game.js                          the game's flow: moves, the engine's replies, navigation
//   graph.js, review.js              the evaluation graphs; review mode
//   board.js, movelist.js, editor.js the board's SVG; the move list; the board editor
//   view.js, clicks.js               redrawing the page; clicks on the board
//   app.js                           wiring the controls and starting

import { INITIAL_FEN, other, params, render, setRenderer, state } from './state.js';
import { $ } from './dom.js';
import { clearMessage, say } from './messages.js';
import { api, describeError } from './api.js';
import { shownMoves, sideToMove } from './position.js';
import { mainLine, treeFrom } from './tree.js';
import { resetPv, stepPv } from './pv.js';
import { startAnalysis, stopWithAnswer } from './analysis.js';
import {
  forgetAddressGame,
  GAME_PARAMS,
  readAddress,
  readTime,
  savedGame,
  saveGame,
  setEngineTime,
  setLevel,
  shareLink,
} from './storage.js';
import { exportText, gameRecord } from './export.js';
import {
  afterChange,
  bumpGeneration,
  goToLine,
  hint,
  loadFromInputs,
  maybeEngineMove,
  navigate,
  newGame,
  onResignClick,
  playLine,
  promoteShown,
  undo,
} from './game.js';
import { onEvalGraphClick } from './graph.js';
import { onGraphClick, showReviewTurn, startReview, stopReview } from './review.js';
import { checkEditorFen, closeEditor, openEditor, readEditorFields, startFromEditor } from './editor.js';
import { renderPage } from './view.js';
import { onBoardClick } from './clicks.js';

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
  if (Number.isInteger(saved.level) && saved.level >= 1 && saved.level <= 8) setLevel(saved.level);
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

/** "Review this game", offered when a game ends: review mode on the game's main line. */
function reviewThisGame() {
  state.mode = 'review';
  $('review-record').value = '';
  clearMessage();
  bumpGeneration();
  saveGame();
  render();
  startReview();
}

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
  $('level').addEventListener('change', (e) => {
    setLevel(Number(e.target.value));
    saveGame();
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
  $('hint').addEventListener('click', () => hint());
  $('review-this').addEventListener('click', () => reviewThisGame());
  $('analysis-table').addEventListener('click', (e) => {
    // A row plays its move; a move of its line plays the line up to that move.
    const row = e.target.closest('tr[data-move]');
    if (!row || !state.pos) return;
    const step = e.target.closest('[data-step]');
    const line = step ? row.dataset.pv.split(' ').slice(0, Number(step.dataset.step) + 1) : [row.dataset.move];
    playLine(shownMoves().concat(line));
  });
  // The keys of lichess's boards: arrows and Home/End through the moves, f flips, h for a hint.
  document.addEventListener('keydown', (e) => {
    if (e.target.closest('input, textarea, select') || state.editor || e.ctrlKey || e.metaKey || e.altKey) return;
    const keys = {
      ArrowLeft: () => navigate(state.cursor - 1),
      ArrowRight: () => navigate(state.cursor + 1),
      ArrowUp: () => navigate(0),
      Home: () => navigate(0),
      ArrowDown: () => navigate(state.moves.length),
      End: () => navigate(state.moves.length),
      f: () => $('flip').click(),
      h: () => {
        if (state.mode === 'play') hint();
      },
      Escape: () => {
        if (!state.sel.length) return;
        state.sel = [];
        render();
      },
    };
    const action = keys[e.key];
    if (!action) return;
    e.preventDefault(); // the arrows and Home/End would scroll the page
    action();
  });
}

async function main() {
  setRenderer(renderPage);
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
