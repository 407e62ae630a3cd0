// The move list: the main line, each variation indented under the move it replaces.

import { state } from './state.js';
import { $ } from './dom.js';
import { shownMoves, sideAt, startSide } from './position.js';

/** The move list: the main line, each variation indented in parentheses under the move it replaces. */
export function renderMoveList() {
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
