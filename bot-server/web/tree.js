// The move tree: every line tried, with its variations.
//
// A node's first child is its main continuation, the others are variations, in the order they
// were first played. `state.moves` is the line shown: a path from the root, continued along first
// children, so the rest of the board works on a plain list and only branching touches the tree.

import { state } from './state.js';
import { shownMoves } from './position.js';

// A node's first child is its main continuation, the others are variations, in the order they
// were first played. `state.moves` is the line shown: a path from the root, continued along first
// children, so the rest of the board works on a plain list and only branching touches the tree.

function newNode(move) {
  return { move, children: [] };
}

export function treeFrom(lines) {
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
export function nodeAt(moves) {
  let node = state.tree;
  for (const m of moves) {
    node = node.children.find((c) => c.move === m);
    if (!node) return null;
  }
  return node;
}

/** `moves` continued along the main continuation of the node they lead to. */
export function lineThrough(moves) {
  const line = moves.slice();
  let node = nodeAt(moves);
  while (node && node.children.length) {
    node = node.children[0];
    line.push(node.move);
  }
  return line;
}

export const mainLine = () => lineThrough([]);
export const sameMoves = (a, b) => a.length === b.length && a.every((m, i) => b[i] === m);
/** Whether the shown position lies off the main line. */
export const inVariation = () => !sameMoves(shownMoves(), mainLine().slice(0, state.cursor));

/** Every leaf's line, in tree order: adding them in turn rebuilds the same tree (for saving). */
export function leafLines(node = state.tree, prefix = []) {
  if (!node.children.length) return prefix.length ? [prefix] : [];
  return node.children.flatMap((c) => leafLines(c, prefix.concat(c.move)));
}

/** Removes the last move of `moves` from the tree, with everything after it. */
export function deleteLine(moves) {
  const parent = nodeAt(moves.slice(0, -1));
  if (parent) parent.children = parent.children.filter((c) => c.move !== moves[moves.length - 1]);
}

/** Makes the line through `moves` the main line (each step becomes its parent's first child). */
export function promoteLine(moves) {
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
export function showNewLine(moves) {
  addLine(state.tree, moves);
  state.moves = lineThrough(moves);
  state.cursor = moves.length;
}
