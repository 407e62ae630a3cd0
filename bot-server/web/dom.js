// Page helpers: an element by id, and a new SVG element.

const SVGNS = 'http://www.w3.org/2000/svg';

export const $ = (id) => document.getElementById(id);

export function svg(tag, attrs = {}, parent = null) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}
