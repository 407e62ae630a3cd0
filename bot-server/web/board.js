// The board's SVG: squares and coordinates, units (their counts on a layer of their own, above
// everything), the squares' highlights and the best line's arrows.

import { FILES, NAME, other, state } from './state.js';
import { $, svg } from './dom.js';
import { gameOver, movePath, parseFen, sideToMove, startsWith } from './position.js';
import { bestLine, shownReviewTurn } from './pv.js';

const S = 60; // square size in SVG units
const M = 30; // margin for the coordinates

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
  for (const side of ['w', 'b', 'played']) {
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

/**
 * Where an arrow's number goes: the first of `candidates` at least 20 units from every number
 * already placed, so that a line returning over the same squares never hides an earlier
 * number under a later one; failing that, the first candidate moved aside until it is free.
 */
function freeSpot(candidates, placed) {
  const free = ([x, y]) => placed.every(([px, py]) => Math.hypot(px - x, py - y) >= 20);
  const spot = candidates.find(free);
  if (spot) return spot;
  let [x, y] = candidates[0];
  for (let k = 0; k < 8 && !free([x, y]); k += 1) [x, y] = [x + 14, y - 14];
  return [x, y];
}

function drawArrows(line, fen) {
  const layer = layers.arrows;
  layer.textContent = '';
  layers.labels.textContent = '';
  if (!line.length) return;
  let side = parseFen(fen).side;
  const placed = []; // the numbers' centres so far
  const used = new Set(); // squares pairs crossed so far, either way
  line.slice(0, 4).forEach((move, i) => {
    const path = movePath(move);
    const opacity = (1 - i * 0.17).toFixed(2);
    const g = svg('g', { class: `arrow arrow-${side}`, opacity }, layer);
    g.dataset.move = move;
    g.dataset.index = i + 1;
    let candidates;
    if (path.length === 1) {
      const [cx, cy] = center(path[0]);
      svg('circle', { cx, cy, r: 26, class: 'entry-mark' }, g);
      const h = S / 2;
      candidates = [[cx - h, cy - h], [cx + h, cy - h], [cx - h, cy + h], [cx + h, cy + h]];
    } else {
      let pts = path.map(center);
      // A move back over squares an earlier arrow crossed runs beside it, not on top of it:
      // the two arrowheads would otherwise make one knot.
      const pairs = path.slice(1).map((sq, k) => [path[k], sq].sort().join('-'));
      if (pairs.some((pair) => used.has(pair))) {
        const [[ax, ay], [bx, by]] = [pts[0], pts[1]];
        const len = Math.hypot(bx - ax, by - ay);
        const [nx, ny] = [(-(by - ay) / len) * 9, ((bx - ax) / len) * 9];
        pts = pts.map(([x, y]) => [x + nx, y + ny]);
      }
      pairs.forEach((pair) => used.add(pair));
      pts = drawShaft(g, pts, side);
      // On a square corner: a quarter of a jump (its middle is the jumped unit), half a step;
      // then other points of the first segment, for a number that would cover another.
      const base = move.includes('x') ? 0.25 : 0.5;
      const [a, b] = [pts[0], pts[1]];
      candidates = [base, 0.75, 0.35, 0.6].map((t) => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t]);
    }
    const label = freeSpot(candidates, placed);
    placed.push(label);
    const lg = svg('g', { class: 'arrow-number', opacity }, layers.labels);
    lg.dataset.move = move;
    lg.dataset.index = i + 1;
    svg('circle', { cx: label[0], cy: label[1], r: 9, class: 'arrow-label-bg' }, lg);
    svg('text', { x: label[0], y: label[1] + 1, class: 'arrow-label' }, lg).textContent = String(i + 1);
    // The first move's number on top: if numbers ever touch, the best move's stays readable.
    layers.labels.insertBefore(lg, layers.labels.firstChild);
    side = other(side);
  });
}

/** A cross by the square a jump from `a` to `b` passes over (its corner, clear of the count). */
function crossJumped([x1, y1], [x2, y2], cls) {
  const [cx, cy] = [(x1 + x2) / 2 - 20, (y1 + y2) / 2 - 20];
  const g = svg('g', { class: cls }, layers.marks);
  svg('path', { d: `M${cx - 5},${cy - 5} L${cx + 5},${cy + 5} M${cx + 5},${cy - 5} L${cx - 5},${cy + 5}` }, g);
}

/** The move played at a reviewed turn, drawn under the engine's line (grey, no number). */
function drawPlayed(move) {
  const path = movePath(move);
  const g = svg('g', { class: 'arrow arrow-played' }, layers.arrows);
  g.dataset.move = move;
  g.dataset.played = 'true';
  layers.arrows.insertBefore(g, layers.arrows.firstChild);
  if (path.length === 1) {
    const [cx, cy] = center(path[0]);
    svg('circle', { cx, cy, r: 26, class: 'entry-mark' }, g);
    return;
  }
  drawShaft(g, path.map(center), 'played');
}

/**
 * An arrow's shaft through `pts`, stopped short of the last centre so that its head (the marker
 * `head-<kind>`) does not hide the unit there; returns the points drawn.
 */
function drawShaft(g, pts, kind) {
  const [x1, y1] = pts[pts.length - 2];
  const [x2, y2] = pts[pts.length - 1];
  const len = Math.hypot(x2 - x1, y2 - y1);
  const k = (len - 14) / len;
  const shaft = pts.slice(0, -1).concat([[x1 + (x2 - x1) * k, y1 + (y2 - y1) * k]]);
  svg('polyline', { points: shaft.map((p) => p.join(',')).join(' '), class: 'shaft', 'marker-end': `url(#head-${kind})` }, g);
  return shaft;
}

/** Whether a click on the board could play a move for the side to move now. */
function canPlayHere() {
  if (gameOver() || state.engine || state.editor) return false;
  if (state.mode !== 'play') return true;
  return state.cursor === state.moves.length && sideToMove() === state.human;
}

/**
 * Draws the position `fen` (`board` parsed; both null before the first answer): the units and
 * their counts, the squares' highlights (last move, selection, next targets, legal starts), the
 * men the last move captured and the best line's arrows (none while editing).
 */
export function drawBoard(fen, board) {
  if (builtFlipped !== state.flipped) buildBoard();
  const pos = state.pos;
  const editing = Boolean(state.editor);
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
    // On an occupied square (a chain coming back to where it started) the dot goes to the
    // square's corner: at the centre it would sit on the unit's count.
    const occupied = board && board.units.has(sq);
    const [x, y] = occupied ? [cx + S / 2 - 10, cy - S / 2 + 10] : [cx, cy];
    svg('circle', { cx: x, cy: y, r: 8, class: 'target-dot', 'data-target': sq }, layers.marks);
  }
  if (sel.length > 1) svg('polyline', { points: sel.map((sq) => center(sq).join(',')).join(' '), class: 'sel-path' }, layers.marks);
  // The men a chain being built has jumped so far: crossed as they will be once it is played.
  if (pos && sel.length > 1 && pos.legal.some((m) => m.kind === 'capture' && startsWith(m.path, sel))) {
    for (let i = 1; i < sel.length; i += 1) crossJumped(center(sel[i - 1]), center(sel[i]), 'jumped-mark');
  }
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
    for (let i = 1; i < lastPath.length; i += 1) crossJumped(center(lastPath[i - 1]), center(lastPath[i]), 'captured-mark');
  }

  // Arrows for the best line (of the analysis, or of the reviewed turn shown).
  if (fen && !editing) {
    drawArrows(state.pv.step > 0 ? state.pv.line.slice(state.pv.step) : bestLine(), fen);
    // A reviewed turn whose move was not the engine's: the move played, in grey, beside the
    // better line, so that the two can be compared on the board.
    const t = state.pv.step === 0 ? shownReviewTurn() : null;
    if (t && t.playedMove && t.bestMove && t.playedMove !== t.bestMove) drawPlayed(t.playedMove);
  }
  else {
    layers.arrows.textContent = '';
    layers.labels.textContent = '';
  }
}
