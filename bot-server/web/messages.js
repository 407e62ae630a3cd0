// The message line under the board and the status light.

import { $ } from './dom.js';

export function say(text, kind = 'info') {
  const el = $('message');
  el.textContent = text;
  el.dataset.kind = kind;
}

export function clearMessage() {
  const el = $('message');
  el.textContent = '';
  el.dataset.kind = '';
}

export function setBusy(what) {
  $('status').dataset.state = what;
}
