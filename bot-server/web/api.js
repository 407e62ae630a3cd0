// The gateway's JSON API: requests (with the bearer token), its errors in words, Server-Sent Events
// streams, and the ids and thread counts that requests carry.

import { state } from './state.js';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function headers() {
  const h = { 'content-type': 'application/json' };
  if (state.token) h.authorization = `Bearer ${state.token}`;
  return h;
}

export async function errorFrom(response) {
  const text = await response.text();
  let data = {};
  try {
    data = JSON.parse(text);
  } catch {
    data = { message: text };
  }
  return new ApiError(response.status, data.code || `HTTP ${response.status}`, data.message || text);
}

export async function api(rpc, body, signal) {
  const r = await fetch(`/v1/${rpc}`, { method: 'POST', headers: headers(), body: JSON.stringify(body), signal });
  if (!r.ok) throw await errorFrom(r);
  return r.json();
}

/**
 * A server message in a player's words: the request's field names (`position.fen:`,
 * `position.moves[3]:`) become what the player knows them as; the gRPC code is left out (the
 * hint after the message says what kind of trouble it is).
 */
export function playerWords(message) {
  return String(message)
    .replace(/^position\.fen: /, '')
    .replace(/^position\.moves\[(\d+)\]: /, (_, i) => `move ${Number(i) + 1}: `)
    .replace(/^(request body|limits|options\.[a-z_]+|game): /, '');
}

export function describeError(e) {
  if (e instanceof ApiError) {
    const hint = {
      429: ' (the server is busy: try again in a moment)',
      401: ' (this server needs a token: add ?token=... to the address)',
      503: ' (the server is unavailable or shutting down)',
      504: ' (the server ran out of time)',
    }[e.status] || '';
    return `${playerWords(e.message)}${hint}`;
  }
  return `${e.message || e}`;
}

export function threads() {
  const l = (state.info && state.info.limits) || {};
  return Math.max(1, Math.min(l.maxThreadsPerRequest || 1, l.threadBudget || 1));
}

/** Reads a Server-Sent Events answer to its end, calling onEvent(name, payload) per event. */
export async function readSse(response, onEvent) {
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

/** 128 random bits in hex: an unguessable search id of our own. */
export function newSearchId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
