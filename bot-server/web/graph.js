// The evaluation graphs: one drawing of White's expected score shared by the review's graph (over
// turns) and the game's (play and analysis, over plies), and the game's graph itself.

import { state } from './state.js';
import { $, svg } from './dom.js';
import { posKey } from './position.js';
import { pct } from './evaluation.js';
import { navigate } from './game.js';

// The graphs of White's expected score (the review's, over turns; the game's, over plies) share
// one drawing: a scale { first, last } of x positions and points { at, white, cls, title }.

/** A click on the game's evaluation graph shows the position after that move. */
export function onEvalGraphClick(event) {
  const points = evalPoints();
  const at = graphPointAt(event, $('eval-graph'), evalScale(), points.map((p) => p.at));
  if (at !== null) navigate(at);
}

/** The point clicked, or (anywhere else on the graph) the nearest one by x; null when none. */
export function graphPointAt(event, svgEl, scale, ats) {
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

const EVAL_GRAPH_H = 120;

/**
 * Draws White's expected score, `h` units high: the frame, the x ticks, the area and line, the
 * points (each with pointData(point) as data attributes) and the cursor at x = cursor.
 */
export function drawScoreGraph(g, h, scale, points, cursor, pointData) {
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

export function renderEvalGraph() {
  const g = $('eval-graph');
  const points = evalPoints();
  const box = $('eval-graph-box');
  box.hidden = state.mode === 'review' || Boolean(state.editor) || !points.length;
  g.dataset.points = String(points.length);
  if (!box.hidden) drawScoreGraph(g, EVAL_GRAPH_H, evalScale(), points, state.cursor, (p) => ({ ply: String(p.at) }));
}
