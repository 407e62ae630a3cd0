// Browser test of the web board: a real headless Chromium (Debian's /usr/bin/chromium) driven by
// playwright-core, against a running bot server.
//
//   node tests/web/board.test.mjs BASE_URL SCREENSHOT_DIR CAPPED_URL
//
// (CAPPED_URL: a second server whose --max-time-ms is 300.) It plays against the engine by
// clicking (entries, an illegal click, undo, the game record, the evaluation graph filled by the
// engine's answers and clicked, a reload that restores the game, resigning with its banner and
// record), plays a five-jump capture chain square by square, runs a live analysis (the table
// updates, visits grow, the best line is drawn with arrows and can be stepped through, every stack
// count stays on top of the arrows), stops it with its answer (StopSearch: the final result stays
// shown, the server's search ends), checks the teaching aids (help panel, marked entry squares and
// must-capture units, a forced winning move shown as "forced" with its proof, the result banner,
// the Export box after a take-back), keeps a variation when a different move is played back in
// the game (clicking either line, promoting it, the record giving the main line, a reload keeping
// the tree), opens a copied link in a fresh tab and names bad address parameters, sets up a
// position in the board editor (a bad one refused with the server's reason, the good one
// analysed), shows the note when the server's cap clips the engine time, analyses on a 390 px
// phone (no horizontal growth, the evaluation bar with the board; the new controls checked at
// 390 px too), saves the README picture (analysis with a graph and a variation), reviews a pasted
// 100-turn game (the evaluation graph fills in, mistakes are marked, clicking one shows its
// position and the engine's line, the summary appears, Stop ends a review with a summary, a bad
// record names its turn, no horizontal scrolling at 390 px), and saves screenshots. Exits
// non-zero with a message on the first failure.

import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const [base, shotDir, capped] = process.argv.slice(2);
if (!base || !shotDir || !capped) {
  console.error('usage: node tests/web/board.test.mjs BASE_URL SCREENSHOT_DIR CAPPED_URL (a server with --max-time-ms 300)');
  process.exit(2);
}
const BASE = base.replace(/\/$/, '');
const CAPPED = capped.replace(/\/$/, '');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const INITIAL = '9/9/9/9/9/9/9/9/9 w 0 12,12';
const CHAIN_FEN = '9/9/2a@1a@4/9/2bb1a@4/3C@5/9/9/9 w 31 0,0';
const CHAIN = ['d4', 'b6', 'd8', 'f6', 'd4', 'b6'];
const T = 30_000; // default wait
// A middlegame (30 turns of engine self-play) where the best line has captures and steps.
const MIDGAME = 'e1,a3,c1,d6,a9,d4,g5,c3,a5,i7,f4,c9,f2,e9,i1,g1,d2,g1xe3,d2xb4,a3xc5,a5xc3xe5xc7,b8,f4xd2,b8xd6,g1,i3,a5,g3,f2,c3';

class Failure extends Error {}
const check = (cond, message) => {
  if (!cond) throw new Failure(message);
};
const log = (...a) => console.log('[web-board]', ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function api(rpc, body) {
  const r = await fetch(`${BASE}/v1/${rpc}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const data = await r.json();
  check(r.ok, `${rpc} answered HTTP ${r.status}: ${JSON.stringify(data)}`);
  return data;
}

async function waitFor(page, what, fn, arg, timeout = T) {
  try {
    return await page.waitForFunction(fn, arg, { timeout, polling: 50 });
  } catch (e) {
    const status = await page.evaluate(() => ({
      status: document.getElementById('status')?.textContent,
      state: document.getElementById('status')?.dataset.state,
      message: document.getElementById('message')?.textContent,
      fen: document.getElementById('board')?.dataset.fen,
    }));
    throw new Failure(`timed out waiting for ${what} (${e.message.split('\n')[0]}); page: ${JSON.stringify(status)}`);
  }
}

/** Waits until the board is idle: the position is loaded and the engine is not thinking. */
const waitReady = (page, what = 'the board to be ready') =>
  waitFor(page, what, () => {
    const s = document.getElementById('status');
    return s && (s.dataset.state === 'ready' || s.dataset.state === 'over');
  });

const boardState = (page) =>
  page.evaluate(() => {
    const s = document.getElementById('status');
    const b = document.getElementById('board');
    return {
      state: s.dataset.state,
      turn: s.dataset.turn,
      result: s.dataset.result,
      reason: s.dataset.reason,
      ply: Number(b.dataset.ply),
      fen: b.dataset.fen,
      message: document.getElementById('message').textContent,
      moves: [...document.querySelectorAll('#move-list .move[data-ply]')].map((e) => e.textContent),
    };
  });

const clickSquare = (page, sq) => page.click(`#board [data-square="${sq}"]`);

/** At 390×844 (a phone) the page must not scroll sideways; the viewport is restored after. */
async function checkPhoneWidth(page, what, shot = null) {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await sleep(150);
    const w = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
    check(w.scroll <= w.client, `no horizontal scrolling at 390 px (${what}): the page is ${w.scroll} px wide`);
    if (shot) await shot();
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
}

async function playGame(page) {
  log('game: entries against the engine (0.2 s per move)');
  await page.goto(`${BASE}/?color=w&time=200`);
  await waitReady(page);
  let st = await boardState(page);
  check(st.fen === INITIAL && st.turn === 'w' && st.ply === 0, `unexpected start: ${JSON.stringify(st)}`);
  check((await page.locator('#board rect[data-square]').count()) === 41, 'the board should have 41 playable squares');

  // An illegal click: White's first entry may not be on the centre.
  await clickSquare(page, 'e5');
  await waitFor(page, 'the illegal-click message', () => document.getElementById('message').textContent.includes('e5'));
  st = await boardState(page);
  check(/may not be on e5/.test(st.message), `the message should explain the illegal click on e5, got: ${st.message}`);
  check(st.ply === 0, 'the illegal click must not play a move');
  check(await page.locator('#message[data-kind="error"]').isVisible(), 'the message should be visible');
  log(`  illegal click explained: ${st.message}`);

  for (let i = 0; i < 3; i += 1) {
    st = await boardState(page);
    if (st.state === 'over') break;
    const legal = await api('LegalMoves', { position: { fen: INITIAL, moves: st.moves } });
    // Prefer an entry that the engine cannot capture at once: any legal move is fine.
    const move = legal.moves[0].move;
    for (const sq of move.split(/[-x]/)) await clickSquare(page, sq);
    await waitFor(page, `the engine's answer to ${move}`, (ply) => {
      const s = document.getElementById('status');
      return (Number(document.getElementById('board').dataset.ply) >= ply + 2 && s.dataset.state === 'ready') || s.dataset.state === 'over';
    }, st.ply);
    const after = await boardState(page);
    check(after.moves[st.ply] === move, `the move list should show ${move}: ${JSON.stringify(after.moves)}`);
    if (move.length === 2) {
      const owner = await page.locator(`#units [data-unit="${move}"]`).getAttribute('data-owner');
      check(owner === 'w', `a white unit should stand on ${move} (found owner ${owner})`);
    }
    log(`  played ${move}, engine answered ${after.moves[st.ply + 1] ?? '(game over)'}`);
  }
  st = await boardState(page);
  check(st.moves.length >= 6, `three moves each should have been played: ${JSON.stringify(st.moves)}`);
  const hand = await page.locator('[data-hand="w"]').getAttribute('data-count');
  check(hand === '9', `White should have 9 men in hand, the board says ${hand}`);

  // Undo takes back the engine's reply and our move.
  const before = st.ply;
  await page.click('#undo');
  await waitFor(page, 'undo', (ply) => Number(document.getElementById('board').dataset.ply) === ply - 2 && document.getElementById('status').dataset.state === 'ready', before);
  st = await boardState(page);
  check(st.turn === 'w', 'after undo it is White (us) to move');
  log(`  undo: ${before} -> ${st.ply} moves`);

  // The game record.
  await page.click('#copy-pgn');
  await waitFor(page, 'the game record', () => document.getElementById('export').value.includes('[FEN'));
  const pgn = await page.locator('#export').inputValue();
  for (const part of ['[Event "', '[White "Human"]', '[Black "', `[FEN "${INITIAL}"]`, '[Result "*"]', '[Termination "unterminated"]', `1. ${st.moves[0]} ${st.moves[1]} 2. `]) {
    check(pgn.includes(part), `the game record should contain ${part}:\n${pgn}`);
  }
  await page.click('#copy-fen');
  await waitFor(page, 'the FEN export', (fen) => document.getElementById('export').value === fen, st.fen);

  // The evaluation graph: each engine answer evaluates its position and the one after its move.
  const plies = await page.evaluate(() => [...document.querySelectorAll('#eval-graph circle.pt')].map((c) => Number(c.dataset.ply)));
  check(plies.length >= 3 && plies.every((p) => p >= 1 && p <= st.ply), `the evaluation graph should have points for the engine's positions: ${plies}`);
  check(await page.locator('#eval-graph').isVisible(), 'the evaluation graph is shown during play');
  await page.click('#eval-graph circle[data-ply="2"]');
  await waitFor(page, 'the position of the clicked graph point', () => document.getElementById('board').dataset.ply === '2');
  check((await page.locator('#eval-graph line.cursor').count()) === 1, 'the graph marks the position shown');
  await page.click('#nav-last');
  await waitReady(page);
  log(`  evaluation graph: points at plies ${plies.join(', ')}`);

  // A reload brings the game back as it was: moves, position, mode and side.
  await page.reload();
  await waitReady(page, 'the game restored after a reload');
  const restored = await boardState(page);
  check(restored.fen === st.fen && restored.ply === st.ply && restored.moves.join(' ') === st.moves.join(' '),
    `the reload should restore the game: ${JSON.stringify(restored)} vs ${JSON.stringify(st)}`);
  check((await page.locator('#mode').inputValue()) === 'play' && (await page.locator('#color').inputValue()) === 'w', 'the reload keeps the mode and side');
  log(`  reload restored ${restored.ply} moves`);

  // Resigning: a second click confirms; the banner says who resigned and who won; the record agrees.
  await page.click('#resign');
  check((await page.locator('#result-banner').isHidden()) && (await page.locator('#resign').innerText()) === 'Really resign?', 'one click only asks for confirmation');
  await page.click('#resign');
  await waitFor(page, 'the resignation banner', () => !document.getElementById('result-banner').hidden);
  const banner = await page.locator('#result-banner').innerText();
  check(/White resigned/.test(banner) && /Black wins/.test(banner) && (await page.locator('#result-banner').getAttribute('data-reason')) === 'resignation',
    `the banner should say who resigned and who won: ${banner}`);
  check((await boardState(page)).state === 'over' && (await page.locator('#resign').isDisabled()), 'the game is over after resigning');
  await page.click('#copy-pgn');
  await waitFor(page, 'the record of the resigned game', () => /Termination "resignation"/.test(document.getElementById('export').value));
  check((await page.locator('#export').inputValue()).includes('[Result "0-1"]'), 'the record gives Black the win');
  await page.reload();
  await waitFor(page, 'the resignation kept over a reload', () => document.getElementById('result-banner').dataset.reason === 'resignation');
  await checkPhoneWidth(page, 'play mode, Resign and the banner shown');
  log(`  resigned: ${banner}`);
}

async function playChain(page) {
  log('capture chain: d4xb6xd8xf6xd4xb6 by clicks');
  const legal = await api('LegalMoves', { position: { fen: CHAIN_FEN } });
  check(legal.moves.length === 1 && legal.moves[0].move === CHAIN.join('x'), `unexpected legal moves: ${JSON.stringify(legal.moves)}`);
  const expectedFen = legal.moves[0].fenAfter;
  await page.goto(`${BASE}/?fen=${encodeURIComponent(CHAIN_FEN)}&color=w&time=200`);
  await waitReady(page);
  let st = await boardState(page);
  check(st.fen === CHAIN_FEN && st.turn === 'w', `the FEN from the address was not loaded: ${JSON.stringify(st)}`);
  const c5 = page.locator('#units [data-unit="c5"]');
  check((await c5.getAttribute('data-owner')) === 'b' && (await c5.getAttribute('data-controllers')) === '2' && (await c5.getAttribute('data-prisoners')) === '2',
    'c5 should show a black stack of 2 over 2 white prisoners');

  // Illegal: the compulsory capture is explained.
  await clickSquare(page, 'c5');
  await waitFor(page, 'the compulsory-capture message', () => /capture is compulsory/.test(document.getElementById('message').textContent));
  log(`  illegal click explained: ${(await boardState(page)).message}`);

  for (let i = 0; i < CHAIN.length; i += 1) {
    if (i + 1 < CHAIN.length) {
      await clickSquare(page, CHAIN[i]);
      const next = CHAIN[i + 1];
      await waitFor(page, `${next} highlighted as the next square`, (sq) => document.querySelector(`#board [data-square="${sq}"]`).classList.contains('target'), next, 5000);
      st = await boardState(page);
      check(st.ply === 0, `the chain must not be played before its last square (after ${CHAIN.slice(0, i + 1).join('x')})`);
      // The men jumped so far are crossed while the chain is built.
      const jumped = await page.locator('#marks .jumped-mark').count();
      check(jumped === i, `${i} jumped men should be marked after ${CHAIN.slice(0, i + 1).join('x')}, found ${jumped}`);
      // A target on an occupied square (back to the start) keeps clear of the unit's count.
      const dot = await page.evaluate((sq) => {
        const c = document.querySelector(`#marks .target-dot[data-target="${sq}"]`);
        const count = document.querySelector(`#counts [data-unit="${sq}"] text`);
        return c && count ? Math.hypot(Number(c.getAttribute('cx')) - Number(count.getAttribute('x')), Number(c.getAttribute('cy')) - Number(count.getAttribute('y'))) : null;
      }, next);
      check(dot === null || dot > 15, `the target dot on ${next} covers its count (${dot} apart)`);
    } else {
      await clickSquare(page, CHAIN[i]);
    }
  }
  await waitFor(page, 'the chain to be played', () => Number(document.getElementById('board').dataset.ply) >= 1);
  await waitReady(page, 'the engine to answer or the game to end');
  st = await boardState(page);
  check(st.moves[0] === CHAIN.join('x'), `the move list should start with the chain: ${JSON.stringify(st.moves)}`);
  if (st.ply === 1) check(st.fen === expectedFen, `the board should show ${expectedFen}, shows ${st.fen}`);
  check(st.state === 'over' || st.ply === 2, `the engine should answer or the game end: ${JSON.stringify(st)}`);
  if (st.state === 'over') {
    const text = await page.locator('#status').textContent();
    check(st.result === '1-0' && /1-0/.test(text) && /no units/.test(text) && !/no-units/.test(text), `the result should be shown: ${text}`);
    log(`  chain played; ${text}`);
  } else log(`  chain played; engine answered ${st.moves[1]}`);
  await page.screenshot({ path: join(shotDir, 'game.png'), fullPage: true });
}

async function analyse(page) {
  log('analysis: live updates, arrows, best-line stepping, stop');
  await page.goto(`${BASE}/?mode=analysis&moves=${MIDGAME}`);
  await waitReady(page);
  check((await page.locator('#mode').inputValue()) === 'analysis', 'analysis mode from the address');
  const baseFen = (await boardState(page)).fen;
  await page.click('#analyze-start');
  // The table must change at least twice with growing visits.
  const seen = [];
  const deadline = Date.now() + T;
  while (Date.now() < deadline) {
    const snap = await page.evaluate(() => {
      const t = document.getElementById('analysis-table');
      return {
        updates: Number(t.dataset.updates),
        playouts: Number(t.dataset.playouts),
        text: t.querySelector('tbody').innerText,
        rows: t.querySelectorAll('tbody tr').length,
        visits: Number(t.querySelector('tbody tr')?.dataset.visits || 0),
      };
    });
    if (snap.rows > 0 && (seen.length === 0 || snap.text !== seen[seen.length - 1].text)) seen.push(snap);
    if (seen.length >= 3) break;
    await sleep(50);
  }
  check(seen.length >= 3, `the analysis table should change at least twice, saw ${seen.length} versions`);
  check(seen[2].playouts > seen[0].playouts, `playouts should grow: ${seen.map((s) => s.playouts).join(' -> ')}`);
  check(seen[2].visits > 0, 'the top move should have visits');
  log(`  table changed ${seen.length - 1} times, playouts ${seen.map((s) => s.playouts).join(' -> ')}`);
  const row = await page.locator('#analysis-table tbody tr').first().locator('td').allInnerTexts();
  check(/^\d+(\.\d)?$/.test(row[2]), `the win % cell should be a number: ${row}`);

  await waitFor(page, 'arrows for the best line', () => document.querySelectorAll('#arrows .arrow').length >= 2);
  // Stack counts and prisoner badges are painted above every arrow, ring and label:
  // their layer comes last, and at each count's centre the topmost element is the count.
  const counts = await page.evaluate(() => {
    const order = [...document.getElementById('board').children].map((e) => e.id).filter(Boolean);
    const style = document.createElement('style');
    style.textContent = '#board * { pointer-events: auto !important; }';
    document.head.appendChild(style);
    const hidden = [];
    const texts = [...document.querySelectorAll('#counts text')];
    for (const t of texts) {
      const r = t.getBoundingClientRect();
      const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
      if (!top || !top.closest('#counts')) hidden.push(`${t.parentNode.dataset.unit} under ${top ? top.outerHTML.slice(0, 60) : 'nothing'}`);
    }
    style.remove();
    return { order, n: texts.length, hidden };
  });
  check(counts.order[counts.order.length - 1] === 'counts' && counts.order.indexOf('arrows') < counts.order.indexOf('counts'),
    `the counts' layer should be drawn last: ${counts.order}`);
  check(counts.n >= 10 && counts.hidden.length === 0, `every count should be on top (${counts.n} checked): ${counts.hidden.join('; ')}`);
  // The arrows' numbers lie on square corners: never on a stack's count.
  const near = await page.evaluate(() => {
    const units = [...document.querySelectorAll('#units circle.disc')].map((c) => [Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))]);
    const labels = [...document.querySelectorAll('#arrow-labels circle')].map((c) => [Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))]);
    const d = Math.min(...labels.flatMap(([x, y]) => units.map(([u, v]) => Math.hypot(x - u, y - v))));
    return { n: labels.length, d };
  });
  check(near.n >= 2 && near.d >= 30, `arrow numbers should stay off the stacks' counts: ${JSON.stringify(near)}`);
  await waitFor(page, 'the best line to be drawn', () => !document.getElementById('pv-forward').disabled);
  await page.click('#pv-forward');
  await waitFor(page, 'stepping along the best line', () => document.getElementById('board').dataset.preview === '1');
  const stepped = await boardState(page);
  check(stepped.fen !== baseFen, 'the board should show the position after the first best-line move');
  await page.click('#pv-forward');
  await waitFor(page, 'a second best-line step', () => document.getElementById('board').dataset.preview === '2');
  await page.click('#pv-first');
  await waitFor(page, 'back to the analysed position', (fen) => document.getElementById('board').dataset.fen === fen, baseFen);
  await waitFor(page, 'arrows again', () => document.querySelectorAll('#arrows .arrow').length >= 2);
  const updates = Number(await page.locator('#analysis-table').getAttribute('data-updates'));
  await waitFor(page, 'one more update', (n) => Number(document.getElementById('analysis-table').dataset.updates) > n, updates);

  mkdirSync(shotDir, { recursive: true });
  await page.screenshot({ path: join(shotDir, 'board.png'), fullPage: true });
  await page.locator('#board').screenshot({ path: join(shotDir, 'board-only.png') });
  log(`  screenshots in ${shotDir}`);

  await page.click('#analyze-stop');
  await waitFor(page, 'the analysis to stop', () => document.getElementById('analysis-state').dataset.state === 'stopped');
  const stoppedAt = Number(await page.locator('#analysis-table').getAttribute('data-updates'));
  // Stop ends the search with its answer (StopSearch): the final update stays shown.
  const stateText = await page.locator('#analysis-state').innerText();
  check(stateText.includes('stopped on request'), `Stop should end the search with its answer: "${stateText}"`);
  const finalRows = await page.locator('#analysis-table tbody tr').count();
  check(finalRows > 0, 'the final result should stay on the board after Stop');
  const until = Date.now() + 10_000;
  let running = -1;
  while (Date.now() < until) {
    const info = await api('ServerInfo', {});
    running = (info.load && info.load.runningSearches) || 0;
    if (running === 0) break;
    await sleep(100);
  }
  check(running === 0, `the server should stop searching after Stop (running searches: ${running})`);
  await sleep(700);
  const after = Number(await page.locator('#analysis-table').getAttribute('data-updates'));
  check(after === stoppedAt, `no updates should arrive after Stop (${stoppedAt} -> ${after})`);
  log('  stopped; the server has no running search');
}

// A capture that is White's only legal move and wins the game (Black is left with no units).
const FORCED_WIN_FEN = '9/9/9/9/9/3a@5/2A@6/9/9 w 10 0,0';

async function teachTheGame(page) {
  log('teaching: help panel, entry squares and must-capture units marked, legend, stale export');
  await page.goto(`${BASE}/?mode=analysis`);
  await waitReady(page);
  check(!(await page.locator('#help').evaluate((d) => d.open)), 'the help panel starts closed');
  await page.click('#help summary');
  check(await page.locator('#help .help-body').isVisible(), 'the help panel opens');
  const help = await page.locator('#help').innerText();
  check(/shadow piece/i.test(help) && /most/.test(help) && /prisoner/.test(help), `the help should teach the rules: ${help}`);
  await page.click('#help summary');
  check(await page.locator('#legend').isVisible(), 'the stack legend is visible without hovering');
  const header = await page.locator('header').innerText();
  check(!/rules/i.test(header) || !/\d+\.\d+/.test(header), `the header should not be a version string: ${header}`);
  const dots = await page.locator('#marks .entry-dot').count();
  check(dots === 40, `40 entry squares (not e5) should be marked before any click, saw ${dots}`);
  check((await page.locator('#marks .entry-dot[data-hint="e5"]').count()) === 0, 'e5 is not a legal first entry');

  // The export box follows the game: a record copied before a take-back does not stay.
  await clickSquare(page, 'a1');
  await waitFor(page, 'the entry on a1', () => document.getElementById('board').dataset.ply === '1');
  await page.click('#copy-pgn');
  await waitFor(page, 'the record in the Export box', () => / a1 /.test(document.getElementById('export').value));
  await page.click('#undo');
  await waitFor(page, 'the Export box without a1', () => !/ a1 /.test(document.getElementById('export').value) && document.getElementById('board').dataset.ply === '0');

  // Units that must capture are ringed; a forced move says so; the result banner says who won and why.
  await page.goto(`${BASE}/?mode=analysis&fen=${encodeURIComponent(FORCED_WIN_FEN)}`);
  await waitReady(page);
  check((await page.locator('#marks .must-capture[data-hint="c3"]').count()) === 1, 'the unit on c3 must capture and should be ringed');
  check((await page.locator('#marks .entry-dot').count()) === 0, 'no entry squares while a capture is compulsory');
  await page.click('#analyze-start');
  await waitFor(page, 'the forced move analysed', () => /forced/.test(document.getElementById('analysis-summary').textContent));
  await sleep(500);
  const summary = await page.locator('#analysis-summary').innerText();
  check(/forced/.test(summary) && !/50\.0%/.test(summary) && !/0 playouts/.test(summary), `a forced move should say "forced": ${summary}`);
  check(/win in 1/.test(summary), `the forced winning capture should show its proven result: ${summary}`);
  log(`  forced: ${summary}`);
  await clickSquare(page, 'c3');
  await clickSquare(page, 'e5');
  await waitFor(page, 'the game over', () => document.getElementById('status').dataset.state === 'over');
  const banner = page.locator('#result-banner');
  check(await banner.isVisible(), 'the result banner should be shown');
  const text = await banner.innerText();
  check(/White wins/.test(text) && /no units/.test(text) && (await banner.getAttribute('data-reason')) === 'no-units', `the banner should say who won and why: ${text}`);
  check((await page.locator('#marks .captured-mark').count()) === 1, 'the captured man of the last move should be marked');
  log(`  banner: ${text}`);
  await page.click('#undo');
  await waitFor(page, 'the banner gone after the take-back', () => document.getElementById('result-banner').hidden);
}

const moveList = (page) =>
  page.evaluate(() => ({
    main: [...document.querySelectorAll('#move-list .move.main')].map((e) => e.textContent),
    variations: [...document.querySelectorAll('#move-list .variation')].map((e) => e.innerText.replace(/\s+/g, ' ').trim()),
    current: document.querySelector('#move-list .move.current')?.dataset.path || '',
  }));

async function variationsAndLinks(page, context) {
  log('variations, shared links, reload in analysis mode, bad address parameters');
  await page.goto(`${BASE}/?mode=analysis`);
  await waitReady(page);
  for (const [i, sq] of ['a1', 'i9', 'c3'].entries()) {
    await clickSquare(page, sq);
    await waitFor(page, `move ${i + 1}`, (n) => document.getElementById('board').dataset.ply === String(n) && document.getElementById('status').dataset.state === 'ready', i + 1);
  }
  // Back one move and a different one: the old line stays as a variation.
  await page.click('#move-list .move[data-path="a1"]');
  await waitFor(page, 'the position after a1', () => document.getElementById('board').dataset.ply === '1' && document.getElementById('status').dataset.state === 'ready');
  await clickSquare(page, 'g9');
  await waitFor(page, 'the variation a1 g9', () => document.querySelector('#move-list .move.current')?.dataset.path === 'a1 g9');
  let list = await moveList(page);
  check(list.main.join(' ') === 'a1 i9 c3' && list.variations.length === 1 && /g9/.test(list.variations[0]),
    `the main line should stay, the new move be a variation: ${JSON.stringify(list)}`);
  log(`  move list: ${list.main.join(' ')} with variation ${list.variations[0]}`);
  // Any move of either line shows its position.
  await page.click('#move-list .move[data-path="a1 i9 c3"]');
  const mainFen = (await api('ApplyMoves', { fen: INITIAL, moves: ['a1', 'i9', 'c3'] })).fen;
  await waitFor(page, 'the main line again', (fen) => document.getElementById('board').dataset.fen === fen, mainFen);
  await page.click('#move-list .variation .move[data-path="a1 g9"]');
  const varFen = (await api('ApplyMoves', { fen: INITIAL, moves: ['a1', 'g9'] })).fen;
  await waitFor(page, 'the variation again', (fen) => document.getElementById('board').dataset.fen === fen, varFen);
  // The record gives the main line; "Make main line" promotes the variation.
  await page.click('#copy-pgn');
  await waitFor(page, 'the record of the main line', () => /1\. a1 i9 2\. c3/.test(document.getElementById('export').value));
  await page.click('#promote');
  await waitFor(page, 'the promoted line', () => /1\. a1 g9 \*/.test(document.getElementById('export').value) || document.querySelector('#move-list .move.main[data-ply="2"]')?.textContent === 'g9');
  list = await moveList(page);
  check(list.main.join(' ') === 'a1 g9' && list.variations.length === 1 && /i9 .*c3/.test(list.variations[0]), `after promoting: ${JSON.stringify(list)}`);
  await checkPhoneWidth(page, 'a move list with a variation');

  // The reload keeps the variations and the position shown.
  await page.reload();
  await waitReady(page, 'the analysis restored');
  const again = await moveList(page);
  check(JSON.stringify(again) === JSON.stringify(list) && (await boardState(page)).fen === varFen && (await page.locator('#mode').inputValue()) === 'analysis',
    `the reload should keep the tree and the position: ${JSON.stringify(again)}`);

  // "Copy link" gives an address that opens this line at this position, in a fresh tab.
  await page.click('#move-list .move[data-path="a1"]');
  await waitFor(page, 'the position after a1', () => document.getElementById('board').dataset.ply === '1');
  await page.click('#copy-link');
  await waitFor(page, 'the link in the Export box', () => document.getElementById('export').value.startsWith('http'));
  const link = await page.locator('#export').inputValue();
  check(/moves=a1%2Cg9/.test(link) && /ply=1/.test(link) && /mode=analysis/.test(link) && !/token/.test(link), `the link: ${link}`);
  const other = await context.newPage();
  try {
    await other.goto(link);
    await waitFor(other, 'the shared position', () => document.getElementById('board').dataset.ply === '1' && document.getElementById('status').dataset.state === 'ready');
    const shared = await boardState(other);
    check(shared.fen === (await api('ApplyMoves', { fen: INITIAL, moves: ['a1'] })).fen && shared.moves.join(' ') === 'a1 g9', `the link should open a1 g9 at move 1: ${JSON.stringify(shared)}`);
    check((await other.locator('#mode').inputValue()) === 'analysis', 'the link keeps the mode');
    await other.click('#nav-forward');
    await waitFor(other, 'the rest of the shared line', (fen) => document.getElementById('board').dataset.fen === fen, varFen);
    log(`  link opened: ${link}`);

    // Bad parameters: named, ignored, the initial position shown; the page still works.
    await other.goto(`${BASE}/?fen=9/9/nonsense&color=x&time=-5`);
    await waitReady(other);
    let bad = await boardState(other);
    check(bad.fen === INITIAL && /fen: /.test(bad.message) && /color must be w or b/.test(bad.message) && /time must be/.test(bad.message),
      `bad parameters should be named and the initial position shown: ${JSON.stringify(bad)}`);
    check(!/INVALID_ARGUMENT|position\.fen/.test(bad.message), `no internal codes for a player: ${bad.message}`);
    check(!/time=|fen=|color=/.test(other.url()), `the rejected parameters leave the address: ${other.url()}`);
    log(`  bad address: ${bad.message}`);
    await other.goto(`${BASE}/?moves=a1,a1&ply=7`);
    await waitReady(other);
    bad = await boardState(other);
    check(bad.fen === INITIAL && /moves: move 2: a1: a1 is occupied/.test(bad.message) && /ply must be/.test(bad.message), `bad moves should be named: ${bad.message}`);
    await clickSquare(other, 'c1');
    await waitFor(other, 'a move after the bad address', () => document.getElementById('board').dataset.ply === '1');
  } finally {
    await other.close();
  }
}

async function boardEditor(page) {
  log('board editor: set up a position by clicks, a bad one named, analysed');
  await page.goto(`${BASE}/?mode=analysis`);
  await waitReady(page);
  await page.click('#edit-position');
  check(await page.locator('#editor').isVisible(), 'the editor opens');
  await page.click('#ed-clear');
  const place = async (owner, men, prisoners, sq) => {
    await page.selectOption('#ed-owner', owner);
    await page.fill('#ed-men', String(men));
    await page.fill('#ed-prisoners', String(prisoners));
    await clickSquare(page, sq);
  };
  // From a cleared board, a man placed comes out of the hand: the position stays valid.
  await place('w', 1, 0, 'a1');
  await waitFor(page, 'one man placed on a cleared board', () => document.getElementById('ed-check').dataset.valid === 'true');
  check((await page.locator('#ed-hand-w').inputValue()) === '11', 'the man placed came out of White\'s hand');
  await place('w', 1, 0, 'a1'); // emptied again
  await page.fill('#ed-hand-w', '0');
  await page.fill('#ed-hand-b', '0');
  await place('w', 3, 0, 'c3');
  await place('b', 2, 1, 'e7');
  await place('b', 1, 0, 'g7');
  await place('b', 1, 0, 'e5');
  await place('b', 1, 0, 'e5'); // the same unit again: the square is emptied
  const fen = '9/9/4ba1a@2/9/9/9/2C@6/9/9 w 0 0,0';
  await waitFor(page, 'the FEN of the set-up position', (f) => document.getElementById('ed-fen').textContent === f, fen);
  await waitFor(page, 'the position checked', () => document.getElementById('ed-check').dataset.valid === 'true');
  check((await page.locator('#units [data-unit="e7"]').getAttribute('data-prisoners')) === '1', 'the board shows the edited stack');
  // Too many white men: the server's answer names the field.
  await page.fill('#ed-hand-w', '12');
  await waitFor(page, 'the bad position refused', () => document.getElementById('ed-check').dataset.valid === 'false');
  const refused = await page.locator('#ed-check').innerText();
  check(!/position\.fen|INVALID_ARGUMENT/.test(refused) && /white has 16 men/i.test(refused) && (await page.locator('#ed-analyse').isDisabled()), `the refusal should name the field: ${refused}`);
  log(`  refused: ${refused}`);
  await checkPhoneWidth(page, 'the board editor open', () => page.locator('#editor').screenshot({ path: join(shotDir, 'editor-phone.png') }));
  await page.fill('#ed-hand-w', '0');
  await waitFor(page, 'the position valid again', () => document.getElementById('ed-check').dataset.valid === 'true');
  await page.click('#ed-analyse');
  await waitFor(page, 'the analysis of the set-up position', () => document.querySelectorAll('#analysis-table tbody tr').length >= 1 && /best/.test(document.getElementById('analysis-summary').textContent));
  const st = await boardState(page);
  check(st.fen === fen && st.ply === 0 && (await page.locator('#editor').isHidden()), `the set-up position is on the board: ${JSON.stringify(st)}`);
  const best = await page.locator('#analysis-table tbody tr').first().getAttribute('data-move');
  const legal = (await api('LegalMoves', { position: { fen } })).moves.map((m) => m.move);
  check(legal.includes(best), `the best move ${best} should be legal in the set-up position: ${legal}`);
  await waitFor(page, 'the evaluation graph in analysis', () => Number(document.getElementById('eval-graph').dataset.points) >= 1);
  log(`  analysed ${fen}: best ${best}`);
  await page.click('#analyze-stop');
  await waitFor(page, 'the analysis to stop', () => document.getElementById('analysis-state').dataset.state === 'stopped');
}

/** A server whose --max-time-ms cap is below the time asked: the engine's note says so. */
async function cappedBudget(page) {
  log('capped budget: the note when the server clips the engine time');
  await page.goto(`${CAPPED}/?color=b&time=1000`);
  await waitFor(page, 'the engine note', () => /Engine played/.test(document.getElementById('engine-info').textContent));
  const note = await page.locator('#engine-info').innerText();
  check(/the server's cap clipped the budget to 0\.3 s/.test(note), `the cap should be named: ${note}`);
  log(`  ${note}`);
}

/**
 * The README's picture: analysis of the middlegame, gone back a few moves (the analysis follows
 * the board, so the evaluation graph fills in), branched into a variation there, and back at the
 * main line's end.
 */
async function readmePicture(page) {
  log('README picture: analysis with an evaluation graph and a variation');
  await page.goto(`${BASE}/?mode=analysis&moves=${MIDGAME}`);
  await waitReady(page);
  await page.click('#analyze-start');
  const analysed = (ply) =>
    waitFor(page, `the analysis at move ${ply}`, (p) => {
      const t = document.getElementById('analysis-table');
      return document.getElementById('board').dataset.ply === String(p) && Number(t.dataset.updates) >= 2 && t.querySelectorAll('tbody tr').length >= 2;
    }, ply);
  await analysed(30);
  for (const ply of [29, 28, 27]) {
    await page.click('#nav-back');
    await analysed(ply);
  }
  // Another move than the game's: the engine's choice if it differs, else its second.
  const game = MIDGAME.split(',');
  const rows = await page.locator('#analysis-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.move));
  const move = rows.find((m) => m !== game[27]);
  for (const sq of move.split(/[-x]/)) await clickSquare(page, sq);
  await waitFor(page, 'the variation', (m) => document.querySelector('#move-list .move.current.var')?.textContent === m, move);
  await analysed(28);
  // Back on the main line: its graph has the positions analysed on the way back.
  await page.click('#move-list .move.main[data-ply="30"]');
  await analysed(30);
  await sleep(600);
  const points = Number(await page.locator('#eval-graph').getAttribute('data-points'));
  check(points >= 4, `the evaluation graph should have a point per analysed position, has ${points}`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(shotDir, 'web-board.png'), fullPage: true, clip: { x: 0, y: 0, width: 1280, height: 1060 } });
  check((await page.locator('#move-list .variation').count()) === 1, 'the variation stays in the move list');
  log(`  ${points} points; variation ${move} at move 28; web-board.png saved`);
  await page.click('#analyze-stop');
  await waitFor(page, 'the analysis to stop', () => document.getElementById('analysis-state').dataset.state === 'stopped');
}

async function phoneAnalysis(page) {
  log('phone: analysis at 390×844 without horizontal growth, the evaluation beside the board');
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await page.goto(`${BASE}/?mode=analysis&moves=${MIDGAME}`);
    await waitReady(page);
    await page.click('#analyze-start');
    await waitFor(page, 'analysis rows', () => document.querySelectorAll('#analysis-table tbody tr').length >= 2);
    await waitFor(page, 'the evaluation bar', () => !document.getElementById('eval-bar').hidden);
    await sleep(800);
    // The start of the page: the board with the evaluation bar right under it, on one screen.
    await page.evaluate(() => window.scrollTo(0, 0));
    const m = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
      board: document.getElementById('board').getBoundingClientRect().toJSON(),
      bar: document.getElementById('eval-bar').getBoundingClientRect().toJSON(),
      white: document.getElementById('eval-bar').dataset.white,
      firstRow: document.querySelector('#analysis-table tbody tr').getBoundingClientRect().toJSON(),
    }));
    check(m.scroll <= m.client, `no horizontal scrolling at 390 px during analysis: the page is ${m.scroll} px wide`);
    check(m.bar.bottom <= 844 && m.board.top >= 0 && m.bar.top - m.board.bottom < 20, `the evaluation bar should be on screen with the board: ${JSON.stringify(m)}`);
    check(Number(m.white) >= 0 && Number(m.white) <= 1, `the bar's value: ${m.white}`);
    // The engine's lines come right under the board, on the first screen with it.
    check(m.firstRow.top + 24 <= 844 && m.firstRow.top > m.board.bottom, `the best line should be on screen under the board: ${JSON.stringify(m)}`);
    await page.screenshot({ path: join(shotDir, 'phone.png') });
    log(`  page ${m.scroll} px wide, bar at ${Math.round(m.bar.top)}-${Math.round(m.bar.bottom)} px, White ${m.white}`);
    await page.click('#analyze-stop');
    await waitFor(page, 'the analysis to stop', () => document.getElementById('analysis-state').dataset.state === 'stopped');
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
}

// The built-in game of `emergo loadtest --rpc review`: 100 turns, mcts:playouts=100 (White, who
// makes mistakes) against mcts:playouts=1000.
const REVIEW_RECORD = readFileSync(new URL('../../cli/src/client/review-100.pgn', import.meta.url), 'utf8');

const reviewState = (page) =>
  page.evaluate(() => ({
    state: document.getElementById('review-state').dataset.state,
    text: document.getElementById('review-state').textContent,
    points: document.querySelectorAll('#review-graph circle.pt').length,
    rows: [...document.querySelectorAll('#review-moves li')].map((li) => ({ turn: Number(li.dataset.turn), cls: li.dataset.class, text: li.innerText })),
    detail: document.getElementById('review-detail').textContent,
    detailTurn: document.getElementById('review-detail').dataset.turn,
    message: document.getElementById('message').textContent,
  }));

async function reviewGame(page) {
  log('review: a pasted 100-turn record, the graph filling in, a marked mistake clicked');
  const moves = REVIEW_RECORD.split('\n\n')[1].split(/\s+/).filter((t) => t && !/^\d+\.$/.test(t) && !/^(1-0|0-1|1\/2|\*)$/.test(t));
  check(moves.length === 100, `the sample record should have 100 moves, found ${moves.length}`);
  await page.goto(`${BASE}/?mode=review`);
  await waitReady(page);
  check(await page.locator('#review').isVisible(), 'the review panel is shown in review mode');
  await page.fill('#review-record', REVIEW_RECORD);
  await page.selectOption('#review-budget', 'p500');
  await page.click('#review-start');
  // The graph fills in as turns arrive.
  const counts = [];
  const deadline = Date.now() + 120_000;
  for (;;) {
    const st = await reviewState(page);
    if (counts[counts.length - 1] !== st.points) counts.push(st.points);
    if (st.state !== 'running' || Date.now() > deadline) break;
    await sleep(30);
  }
  let st = await reviewState(page);
  check(st.state === 'done', `the review should end with a summary: ${JSON.stringify({ state: st.state, text: st.text, message: st.message })}`);
  log(`  points drawn as turns arrived: ${counts.join(' -> ')}; ${st.text}`);
  check(st.points === 100, `the graph should have 100 points, has ${st.points}`);
  check(st.rows.length === 100 && st.rows[0].turn === 1 && st.rows[99].turn === 100, `the move list should have turns 1..100: ${st.rows.length}`);
  check((await page.locator('#review-summary').isVisible()) && /^\d+(\.\d)?%$/.test(await page.locator('#review-summary tr[data-row="accuracy"] td').nth(1).innerText()),
    'the summary shows White\'s accuracy');
  const board = await boardState(page);
  check(board.moves.length === 100 && board.moves[99] === moves[99], 'the board holds the reviewed game');
  const marked = st.rows.filter((r) => ['blunder', 'mistake', 'inaccuracy'].includes(r.cls));
  log(`  classes: ${['blunder', 'mistake', 'inaccuracy'].map((c) => `${st.rows.filter((r) => r.cls === c).length} ${c}`).join(', ')}`);
  check(marked.length > 0, 'a game by a 100-playout engine has marked moves');
  const worst = st.rows.find((r) => r.cls === 'blunder') || st.rows.find((r) => r.cls === 'mistake') || marked[0];
  check(worst.text.includes({ blunder: '??', mistake: '?', inaccuracy: '?!' }[worst.cls]), `the row is marked: ${worst.text}`);

  // Clicking its point on the graph shows the position before the move, and the better line.
  await page.click(`#review-graph circle[data-turn="${worst.turn}"]`);
  await waitFor(page, `the position before turn ${worst.turn}`, (t) => Number(document.getElementById('board').dataset.ply) === t - 1 && document.getElementById('status').dataset.state === 'ready', worst.turn);
  const expected = await api('ApplyMoves', { fen: INITIAL, moves: moves.slice(0, worst.turn - 1) });
  st = await reviewState(page);
  check((await boardState(page)).fen === expected.fen, `the board should show the position before turn ${worst.turn}`);
  check(st.detailTurn === String(worst.turn) && /Best /.test(st.detail), `the detail names the better move: ${st.detail}`);
  await waitFor(page, 'the better line drawn as arrows', () => document.querySelectorAll('#arrows .arrow').length >= 1);
  const played = await page.locator('#arrows [data-played="true"]').getAttribute('data-move');
  check(played === moves[worst.turn - 1], `the move played (${moves[worst.turn - 1]}) is drawn beside the better line, found ${played}`);
  check(await page.locator(`#review-moves li[data-turn="${worst.turn}"].current`).count() === 1, 'the move is highlighted in the list');
  log(`  turn ${worst.turn} (${worst.cls}): ${st.detail}`);
  await page.evaluate(() => window.scrollTo(0, 0));
  // The board and the review panel (the picture in docs/WEB.md: docs/review.png).
  await page.screenshot({ path: join(shotDir, 'review.png'), clip: { x: 0, y: 0, width: 1220, height: 820 } });

  // Clicking a row of the move list jumps too.
  const other = marked.find((r) => r.turn !== worst.turn) || st.rows[10];
  await page.click(`#review-moves li[data-turn="${other.turn}"]`);
  await waitFor(page, `the position before turn ${other.turn}`, (t) => Number(document.getElementById('board').dataset.ply) === t - 1, other.turn);

  // A phone: no horizontal scrolling.
  await page.setViewportSize({ width: 390, height: 844 });
  await sleep(200);
  const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  check(widths.scroll <= widths.client, `no horizontal scrolling at 390 px: the page is ${widths.scroll} px wide`);
  await page.locator('#review').screenshot({ path: join(shotDir, 'review-phone.png') });
  await page.setViewportSize({ width: 1280, height: 900 });

  // Stop: the server ends the review with a summary of the turns done.
  await page.selectOption('#review-budget', 't1000');
  await page.click('#review-start');
  await waitFor(page, 'a first turn of the slow review', () => document.querySelectorAll('#review-graph circle.pt').length >= 1, undefined, 60_000);
  await page.click('#review-stop');
  await waitFor(page, 'the stopped review', () => document.getElementById('review-state').dataset.state !== 'running');
  st = await reviewState(page);
  check(st.state === 'done' && /stopped/.test(st.text) && st.points < 100, `Stop should end the review with a summary: ${st.text} (${st.points} points)`);
  const until = Date.now() + 10_000;
  let running = -1;
  while (Date.now() < until) {
    const info = await api('ServerInfo', {});
    running = (info.load && info.load.runningSearches) || 0;
    if (running === 0) break;
    await sleep(100);
  }
  check(running === 0, `the server should stop reviewing after Stop (running searches: ${running})`);
  log(`  stopped: ${st.text}`);

  // A bad record: the server's error names the turn.
  await page.fill('#review-record', REVIEW_RECORD.replace('3. i9 g7', '3. i9 i9'));
  await page.click('#review-start');
  await waitFor(page, 'the review error', () => document.getElementById('review-state').dataset.state === 'failed');
  st = await reviewState(page);
  check(!/INVALID_ARGUMENT/.test(st.message) && /turn 6/.test(st.message), `the error should name turn 6: ${st.message}`);
  log(`  bad record: ${st.message}`);
}

async function playAtALevel(page) {
  log('levels: the selector, the level sent with the engine\'s move, kept over a reload');
  await page.goto(`${BASE}/?color=w&time=200`);
  await waitReady(page);
  check((await page.locator('#level').inputValue()) === '8', 'the default level is 8, the full engine');
  check(await page.locator('#engine-time').isEnabled(), 'at level 8 the engine time can be chosen');
  await page.selectOption('#level', '2');
  check(await page.locator('#engine-time').isDisabled(), 'below level 8 the time does not apply');
  const sent = page.waitForRequest((r) => r.url().endsWith('/v1/BestMove'));
  const st = await boardState(page);
  const legal = await api('LegalMoves', { position: { fen: INITIAL, moves: st.moves } });
  const move = legal.moves[0].move;
  for (const sq of move.split(/[-x]/)) await clickSquare(page, sq);
  const body = JSON.parse((await sent).postData());
  check(body.options && body.options.level === 2, `the engine's move should be asked at level 2: ${JSON.stringify(body.options)}`);
  await waitFor(page, 'the level-2 engine answer', (ply) => Number(document.getElementById('board').dataset.ply) >= ply + 2, st.ply);
  await page.reload();
  await waitReady(page, 'the game restored after a reload');
  check((await page.locator('#level').inputValue()) === '2', 'the level is kept over a reload');
  await page.selectOption('#level', '8');
  log(`  level 2 answered ${move} with ${(await boardState(page)).moves[st.ply + 1]}`);
}

async function feedbackInView(browser) {
  log('feedback in view at 1280×800: the message of an illegal click and the status');
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(T);
  try {
    await page.goto(`${BASE}/?color=w&time=200`);
    await waitReady(page);
    await clickSquare(page, 'e5');
    await waitFor(page, 'the illegal-click message', () => document.getElementById('message').textContent.includes('e5'));
    const m = await page.evaluate(() => ({
      message: document.getElementById('message').getBoundingClientRect().toJSON(),
      status: document.getElementById('status').getBoundingClientRect().toJSON(),
      scrollY: window.scrollY,
    }));
    check(m.scrollY === 0 && m.message.bottom <= 800 && m.status.bottom <= 800, `the message and status should be in view without scrolling: ${JSON.stringify(m)}`);
    log(`  message at ${Math.round(m.message.top)}-${Math.round(m.message.bottom)} px of 800`);
  } finally {
    await context.close();
  }
}

async function navigationAndHints(page) {
  log('lichess-style keys, clicking the analysis, a hint, a review offered at the end');
  await page.goto(`${BASE}/?mode=analysis&moves=a1,i9,c3,g7`);
  await waitReady(page);
  const plyAfter = async (key, ply) => {
    await page.keyboard.press(key);
    await waitFor(page, `${key} to show ply ${ply}`, (p) => Number(document.getElementById('board').dataset.ply) === p, ply);
  };
  await plyAfter('Home', 0);
  await plyAfter('End', 4);
  await plyAfter('ArrowUp', 0);
  await plyAfter('ArrowDown', 4);
  await plyAfter('ArrowLeft', 3);
  await plyAfter('ArrowRight', 4);
  const a1Top = () => page.evaluate(() => document.querySelector('#board [data-square="a1"]').getBoundingClientRect().top);
  const before = await a1Top();
  await page.keyboard.press('f');
  await waitFor(page, 'the board flipped by f', (y) => document.querySelector('#board [data-square="a1"]').getBoundingClientRect().top < y - 100, before);
  await page.keyboard.press('f');
  check(Math.abs((await a1Top()) - before) < 1, 'f again flips the board back');

  // A row of the analysis plays its move; a move of a line plays the line up to it, as a variation.
  await page.click('#analyze-start');
  await waitFor(page, 'analysis rows', () => document.querySelectorAll('#analysis-table tbody tr').length >= 2);
  await page.click('#analyze-stop');
  await waitFor(page, 'the analysis to stop', () => document.getElementById('analysis-state').dataset.state === 'stopped');
  const first = await page.locator('#analysis-table tbody tr').first().getAttribute('data-move');
  await page.locator('#analysis-table tbody tr').first().locator('td').first().click();
  await waitFor(page, 'the clicked row played', () => Number(document.getElementById('board').dataset.ply) === 5);
  let st = await boardState(page);
  check(st.moves[4] === first, `the row's move ${first} should be played: ${JSON.stringify(st.moves)}`);
  await plyAfter('ArrowLeft', 4);
  await page.click('#analyze-start');
  // A row other than the move played, with a line of two moves at least.
  const otherRow = (played) => [...document.querySelectorAll('#analysis-table tbody tr')]
    .findIndex((row) => row.dataset.move !== played && row.querySelectorAll('.pv-move').length >= 2);
  await waitFor(page, 'another row with a line', (played) => [...document.querySelectorAll('#analysis-table tbody tr')]
    .some((row) => row.dataset.move !== played && row.querySelectorAll('.pv-move').length >= 2), first);
  await page.click('#analyze-stop');
  await waitFor(page, 'the analysis to stop', () => document.getElementById('analysis-state').dataset.state === 'stopped');
  const second = page.locator('#analysis-table tbody tr').nth(await page.evaluate(otherRow, first));
  const pv = (await second.getAttribute('data-pv')).split(' ');
  await second.locator('.pv-move').nth(1).click();
  await waitFor(page, 'the clicked line played', () => Number(document.getElementById('board').dataset.ply) === 6);
  st = await boardState(page);
  const expected = await api('ApplyMoves', { fen: INITIAL, moves: ['a1', 'i9', 'c3', 'g7', ...pv.slice(0, 2)] });
  check(st.fen === expected.fen, `the board should show the line up to the clicked move ${pv.slice(0, 2)}: ${st.fen}`);
  check((await page.locator('#move-list .variation').count()) >= 1, 'the other line stays as a variation');
  log(`  row ${first} played; line ${pv.slice(0, 2).join(' ')} played as a variation`);

  // A hint: one arrow, no line.
  await page.goto(`${BASE}/?color=w&time=200`);
  await waitReady(page);
  check(await page.locator('#hint').isVisible(), 'play mode offers a hint');
  await page.click('#hint');
  await waitFor(page, 'the hint', () => /Hint: the engine would play/.test(document.getElementById('message').textContent));
  const arrows = await page.locator('#arrows > *').count();
  check(arrows === 1, `a hint is one arrow, found ${arrows}`);

  // Play the hinted move; the engine answers.
  const hinted = (await page.locator('#message').innerText()).match(/would play (\S+)\./)[1];
  for (const sq of hinted.split(/[-x]/)) await clickSquare(page, sq);
  await waitFor(page, 'the engine\'s answer to the hinted move', () => Number(document.getElementById('board').dataset.ply) >= 2 && document.getElementById('status').dataset.state === 'ready');

  // The end of a game offers its review.
  check(await page.locator('#review-this').isHidden(), 'no review offered during the game');
  await page.click('#resign');
  await page.click('#resign');
  await waitFor(page, 'the review offered', () => !document.getElementById('review-this').hidden);
  await page.click('#review-this');
  await waitFor(page, 'the review of the finished game', () => ['done', 'failed'].includes(document.getElementById('review-state').dataset.state));
  check((await page.locator('#mode').inputValue()) === 'review' && (await page.locator('#review-state').getAttribute('data-state')) === 'done',
    `the review should run in review mode: ${await page.locator('#review-state').innerText()}`);
  log(`  hint drawn as ${arrows} arrow; review after resigning: ${await page.locator('#review-state').innerText()}`);
}

async function returningLine(page) {
  log('a best line that returns over its squares: every number readable, no knot of arrowheads');
  const fen = '9/9/6a@2/9/9/9/2A@6/9/9 w 40 0,0';
  await page.goto(`${BASE}/?mode=analysis&fen=${encodeURIComponent(fen)}`);
  await waitReady(page);
  // The line is put in the board's state as an analysis would (the engine rarely plays it).
  await page.evaluate(async () => {
    const { state, render } = await import('/state.js');
    const line = ['c3-d4', 'g7-f6', 'd4-c3', 'f6-g7'];
    state.analysis = { key: state.pos.key, fen: state.pos.fen, updates: 1, running: false, last: { moves: [{ move: line[0], pv: line, visits: '1' }], stats: {} } };
    render();
  });
  await waitFor(page, 'four arrows', () => document.querySelectorAll('#arrows .arrow').length === 4);
  const m = await page.evaluate(() => ({
    labels: [...document.querySelectorAll('#arrow-labels .arrow-number circle')].map((c) => [Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))]),
    shafts: [...document.querySelectorAll('#arrows polyline')].map((p) => p.getAttribute('points')),
  }));
  for (let i = 0; i < m.labels.length; i += 1) {
    for (let j = i + 1; j < m.labels.length; j += 1) {
      const d = Math.hypot(m.labels[i][0] - m.labels[j][0], m.labels[i][1] - m.labels[j][1]);
      check(d >= 18, `arrow numbers overlap (${d.toFixed(1)} apart): ${JSON.stringify(m.labels)}`);
    }
  }
  check(new Set(m.shafts).size === m.shafts.length, `a move back must not draw over the move out: ${JSON.stringify(m.shafts)}`);
  log(`  numbers at ${m.labels.map(([x, y]) => `${Math.round(x)},${Math.round(y)}`).join(' ')}`);
}

async function main() {
  mkdirSync(shotDir, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const errors = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(T);
    page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') console.warn('[browser console]', m.text());
    });
    await playGame(page);
    await playAtALevel(page);
    await feedbackInView(browser);
    await navigationAndHints(page);
    await returningLine(page);
    await playChain(page);
    await analyse(page);
    await teachTheGame(page);
    await variationsAndLinks(page, context);
    await boardEditor(page);
    await cappedBudget(page);
    await phoneAnalysis(page);
    await readmePicture(page);
    await reviewGame(page);
    check(errors.length === 0, `JavaScript errors in the page:\n${errors.join('\n')}`);
  } finally {
    await browser.close();
  }
  log('PASS');
}

main().catch((e) => {
  console.error(`[web-board] FAIL: ${e instanceof Failure ? e.message : e.stack || e}`);
  process.exit(1);
});
