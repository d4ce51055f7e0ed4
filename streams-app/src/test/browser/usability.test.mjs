// What a new user meets in the console, in a real browser: signing in (where the token is, a wrong
// then a right token), errors as sentences that leave with their view, nothing of the signed-in views
// while signed out, values that never break inside (a 300-character host with a bidi override and a
// control character among them), empty tables that say so, a favicon, and a
// 390 px wide screen checked by layout (getBoundingClientRect), not by pixels.
// Usage: node usability.test.mjs BASE_URL TOKEN ALERTED_COMMAND HOSTILE_COMMAND QUIET_COMMAND HOSTILE_HOST_BASE64 SHOTS_DIR
import { chromium } from 'playwright-core';
import { join } from 'node:path';

const [base, token, alerted, hostileCommand, quiet, hostB64, shots] = process.argv.slice(2);
const hostileHost = Buffer.from(hostB64, 'base64').toString('utf8');
const failures = [];
const fail = (why) => { failures.push(why); console.error(('FAIL: ' + why).slice(0, 600)); };
const check = (ok, why) => { if (!ok) { fail(why); } };
// a short wait for what should appear; false (not a throw) when it does not, so every check reports
const soon = (page, fn, arg, ms) => page.waitForFunction(fn, arg, { timeout: ms || 15000 }).then(() => true, () => false);

// the console shows control and bidi characters of agent-written values as visible escapes
const escaped = (s) => s.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu,
  (c) => '⟨U+' + c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0') + '⟩');

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--headless=new'],
});

// in the page: what of the signed-in views takes up room (an element with a box is shown)
const SHOWN_WHEN_SIGNED_OUT = () => [...document.querySelectorAll('#views, #views *, #app, #app *, #search, #search *')]
  .filter((e) => e.getClientRects().length > 0).map((e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
    + (e.dataset && e.dataset.view ? '[' + e.dataset.view + ']' : ''));

// in the page: the cells whose text is one value, and the lines each takes (distinct tops of its text's boxes)
const VALUE_LINES = (selectors) => {
  const out = [];
  for (const td of document.querySelectorAll(selectors)) {
    const tops = new Set();
    const walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      if (!n.parentElement.checkVisibility()) { continue; } // in a closed <details>
      const r = document.createRange();
      r.selectNodeContents(n);
      for (const rect of r.getClientRects()) { if (rect.width > 0) { tops.add(Math.round(rect.top / 3)); } }
    }
    out.push({ text: td.textContent, lines: tops.size, right: Math.round(td.getBoundingClientRect().right),
      titles: [td, ...td.querySelectorAll('[title]')].map((e) => e.title).filter((t) => t) });
  }
  return out;
};

// in the page: at this viewport, what reaches past its sides outside a scroll container, and the rows
// that are tall for what they hold (a row past 10 lines, or a cell squeezed under 8 characters a line)
const LAYOUT = (rowSelectors) => {
  const width = document.documentElement.clientWidth;
  const clipped = (e) => {
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (['auto', 'scroll', 'hidden', 'clip'].includes(s.overflowX)) { return true; }
    }
    return false;
  };
  const over = [];
  for (const e of document.body.querySelectorAll('*')) {
    if (e.getClientRects().length === 0) { continue; }
    const r = e.getBoundingClientRect();
    if ((r.right > width + 0.5 || r.left < -0.5) && !clipped(e)) {
      over.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className ? '.' + e.className : '')
        + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
    }
  }
  const line = parseFloat(getComputedStyle(document.body).lineHeight) || 20;
  // the text a cell shows and the lines it takes: the distinct tops of its text's boxes
  const shown = (td) => {
    const tops = new Set();
    let text = '';
    const walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      if (!n.parentElement.checkVisibility()) { continue; } // in a closed <details>
      text += n.textContent;
      const r = document.createRange();
      r.selectNodeContents(n);
      for (const rect of r.getClientRects()) { if (rect.width > 0) { tops.add(Math.round(rect.top / 3)); } }
    }
    return { text: text.trim(), lines: tops.size };
  };
  const tall = [];
  for (const tr of document.querySelectorAll(rowSelectors)) {
    const h = tr.getBoundingClientRect().height;
    if (h > 10 * line) { tall.push(Math.round(h) + ' px: ' + tr.textContent.slice(0, 60)); continue; }
    for (const td of tr.cells) {
      const { text, lines: n } = shown(td);
      if (n > 1 && text.length / n < 8) {
        tall.push(Math.round(h) + ' px, a cell of ' + text.length + ' characters on ' + n + ' lines: ' + text.slice(0, 40));
      }
    }
  }
  return { scrollWidth: document.documentElement.scrollWidth, width, over: over.slice(0, 12), tall: tall.slice(0, 12),
    rows: document.querySelectorAll(rowSelectors).length };
};

// in the page (one task: a refresh cannot replace the rows meanwhile): a table body's rows, their text and spans
const EMPTY_ROWS = (sel) => [...document.querySelectorAll(sel + ' tr')].map((tr) => ({ text: tr.textContent.trim(),
  span: tr.cells.length === 1 ? tr.cells[0].colSpan : 0, columns: tr.closest('table').tHead.rows[0].cells.length }));

const VALUE_CELLS = ['#t-events tbody td:nth-child(-n+5)', '#t-alerts tbody td:nth-child(-n+5)',
  '#alert-groups tbody td:nth-child(n+2):nth-child(-n+9)', '#recent tbody td:nth-child(-n+3)',
  '#recent tbody td:nth-child(6)', '#t-summary .v', 'td .v'].join(', ');

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('dialog', async (d) => { problems.push('dialog: ' + d.message()); await d.dismiss(); });
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  const favicons = [];
  page.on('response', (r) => { if (new URL(r.url()).pathname === '/favicon.ico') { favicons.push(r.status()); } });

  // 1. signed out: the sign-in says where the token is; nothing of the signed-in views shows
  await page.goto(base + '/');
  const signin = await page.textContent('#signin');
  check(signin.includes('var/api-token') && signin.includes('./knockwatch up') && /\bapi\b line/.test(signin),
    'the sign-in does not say where the token is: ' + signin.replace(/\s+/g, ' '));
  const shownOut = await page.evaluate(SHOWN_WHEN_SIGNED_OUT);
  check(shownOut.length === 0, 'signed out, these show: ' + shownOut.join(', '));

  // 2. the favicon: served here, an image, under the console's own headers
  const icon = await page.evaluate(async () => {
    const href = document.querySelector('link[rel~=icon]')?.href;
    const r = await fetch('/favicon.ico');
    const page = await fetch('/');
    return { href, status: r.status, type: r.headers.get('content-type'), csp: r.headers.get('content-security-policy'),
      nosniff: r.headers.get('x-content-type-options'), pageCsp: page.headers.get('content-security-policy'),
      body: (await r.text()).slice(0, 200) };
  });
  check(icon.status === 200 && /^image\//.test(icon.type || '') && icon.csp === icon.pageCsp && icon.nosniff === 'nosniff',
    'the favicon: ' + JSON.stringify(icon));
  check(icon.href === base + '/favicon.ico', 'the page names no icon at /favicon.ico: ' + icon.href);

  // 3. a wrong token: a sentence that says what failed and where the right one is; still signed out, and
  // nothing of the signed-in views showed meanwhile, not even for a moment
  await page.evaluate(() => {
    window.shownWhileSignedOut = [];
    new MutationObserver(() => {
      for (const id of ['app', 'views', 'search']) {
        if (!document.getElementById(id).hidden) { window.shownWhileSignedOut.push(id); }
      }
    }).observe(document.body, { attributes: true, subtree: true, attributeFilter: ['hidden'] });
  });
  await page.fill('#token', 'a-wrong-token-0123456789');
  await page.click('#signin-form button[type=submit]');
  await soon(page, () => document.querySelector('#message').textContent.trim() !== '');
  await page.waitForTimeout(1500); // any answer the wrong token still had coming
  const refused = (await page.textContent('#message')).trim();
  check(/^[A-Z].{40,}\.$/s.test(refused) && refused.includes('var/api-token') && !/^\d+$/.test(refused),
    'a wrong token says ' + JSON.stringify(refused));
  const shownRefused = await page.evaluate(SHOWN_WHEN_SIGNED_OUT);
  check(shownRefused.length === 0, 'after a wrong token, these show: ' + shownRefused.join(', '));
  check(await page.isVisible('#signin'), 'after a wrong token the sign-in is gone');
  const flashed = await page.evaluate(() => window.shownWhileSignedOut);
  check(flashed.length === 0, 'a wrong token showed the signed-in views for a moment: ' + flashed.join(', '));

  // 4. then the right one: the message goes, on the overview and on the alerts
  await page.fill('#token', token);
  await page.click('#signin-form button[type=submit]');
  check(await soon(page, () => document.querySelector('#o-updated').textContent !== ''),
    'the overview did not load after the right token');
  check((await page.textContent('#message')).trim() === '', 'after the right token the overview says '
    + JSON.stringify(await page.textContent('#message')));
  await page.click('#views a[data-view=alerts]');
  check(await soon(page, () => document.querySelectorAll('#alert-groups section').length > 0
    && document.querySelectorAll('#recent tbody tr').length > 0), 'the alerts did not load');
  check((await page.textContent('#message')).trim() === '', 'after the right token the alerts say '
    + JSON.stringify(await page.textContent('#message')));

  // 5. the overview's empty lists say so (the seeded refusals are older than its 24 hours; the legend in
  // words is overview.test.mjs's, against up with refusals of now)
  await page.click('#views a[data-view=overview]');
  await soon(page, () => document.querySelector('#o-summary').textContent !== '');
  for (const sel of ['#o-agents tbody', '#o-hosts tbody', '#o-rules tbody']) {
    const rows = await page.evaluate(EMPTY_ROWS, sel);
    check(rows.length === 1 && /^No .+\.$/.test(rows[0].text) && rows[0].span === rows[0].columns,
      sel + ', empty, shows ' + JSON.stringify(rows));
  }

  // 6. a bad command id: a sentence naming the id and what to do; gone with the view
  await page.click('#views a[data-view=alerts]');
  await soon(page, () => document.querySelectorAll('#alert-groups section').length > 0);
  for (const [id, what] of [['short', 'malformed'], ['UnknownUnknownUnknown0', 'unknown']]) {
    await page.fill('#command', id);
    await page.click('#search button[type=submit]');
    // the message names the id it is about: the one before stays until this answer replaces it
    await soon(page, (asked) => document.querySelector('#message').textContent.includes(asked), id);
    const said = (await page.textContent('#message')).trim();
    check(/^[A-Z].{30,}\.$/s.test(said) && said.includes(id) && /\b(check|pick|type|copy)\b/i.test(said),
      'a ' + what + ' command id says ' + JSON.stringify(said));
  }
  await page.click('#views a[data-view=overview]');
  await soon(page, () => !document.querySelector('#overview').hidden);
  await page.waitForTimeout(1000);
  check((await page.textContent('#message')).trim() === '', 'the bad id\'s message followed to the overview: '
    + JSON.stringify(await page.textContent('#message')));
  await page.click('#views a[data-view=discover]');
  await soon(page, () => document.querySelectorAll('#d-roles section.role').length > 0);
  check((await page.textContent('#message')).trim() === '', 'the bad id\'s message followed to discover: '
    + JSON.stringify(await page.textContent('#message')));

  // 7. empty tables say so: no silence; a command without alerts
  await page.goto(base + '/#status=any&command=' + quiet);
  const quietShown = await soon(page, (id) => document.querySelector('#t-id')?.textContent === id
    && document.querySelectorAll('#t-events tbody tr').length > 0 && !document.querySelector('#silences').hidden
    && document.querySelectorAll('#recent tbody tr').length > 0, quiet);
  check(quietShown, 'the quiet command\'s timeline or the silences did not show');
  for (const sel of ['#silences tbody', '#t-alerts tbody']) {
    const rows = await page.evaluate(EMPTY_ROWS, sel);
    check(rows.length === 1 && /^No .+\.$/.test(rows[0].text) && rows[0].span === rows[0].columns,
      sel + ', empty, shows ' + JSON.stringify(rows));
  }

  // 8. values never break inside; the 300-character host ends in an ellipsis, whole in its title, escaped
  await page.goto(base + '/#status=any&command=' + hostileCommand);
  check(await soon(page, (id) => document.querySelector('#t-id')?.textContent === id
    && document.querySelectorAll('#t-events tbody tr').length > 2 && document.querySelectorAll('#alert-groups section').length > 0
    && document.querySelectorAll('#recent tbody tr').length > 0, hostileCommand), 'the hostile command did not show');
  const wide = await page.evaluate(VALUE_LINES, VALUE_CELLS);
  const broken = wide.filter((c) => c.lines > 1);
  check(wide.length > 20 && broken.length === 0, 'values broken inside at 1280 px: '
    + JSON.stringify(broken.map((c) => c.text.slice(0, 50) + ' on ' + c.lines + ' lines')));
  const target = escaped(hostileHost) + ':443';
  const hostCell = wide.find((c) => c.text === target);
  check(hostCell !== undefined, 'the 300-character host is not shown whole as text, escaped: '
    + JSON.stringify(wide.filter((c) => c.text.length > 100).map((c) => c.text.slice(0, 80))));
  if (hostCell) {
    check(hostCell.titles.includes(target), 'the long host has no title with the whole value: ' + JSON.stringify(hostCell.titles));
    check(hostCell.right <= 1280, 'the long host reaches ' + hostCell.right + ' px');
  }
  const raw = await page.evaluate(() => [...document.querySelectorAll('td')]
    .map((td) => td.textContent).filter((t) => /[\u0007\u202e]/u.test(t)).length);
  check(raw === 0, raw + ' cell(s) show a raw control or bidi character');
  const desktop = await page.evaluate(LAYOUT, '#t-events tbody tr');
  check(desktop.scrollWidth <= 1280 && desktop.over.length === 0, 'at 1280 px the timeline overflows: ' + JSON.stringify(desktop));
  check(await page.evaluate(() => document.querySelectorAll('img, script:not([src])').length) === 0, 'markup made of data');

  // 9. a 390 px wide screen: nothing past its sides but inside scroll containers; no tall blank rows
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(500);
  const rowsAt = '#t-events tr, #t-alerts tr, #alert-groups tr, #recent tr, #silences tr';
  const timeline = await page.evaluate(LAYOUT, rowsAt);
  check(timeline.scrollWidth <= 390 && timeline.over.length === 0, 'at 390 px the timeline overflows: ' + JSON.stringify(timeline));
  check(timeline.rows > 5 && timeline.tall.length === 0, 'at 390 px the timeline has tall rows: ' + JSON.stringify(timeline.tall));
  const phoneValues = (await page.evaluate(VALUE_LINES, VALUE_CELLS)).filter((c) => c.lines > 1);
  check(phoneValues.length === 0, 'values broken inside at 390 px: ' + JSON.stringify(phoneValues.map((c) => c.text.slice(0, 50))));
  await page.screenshot({ path: join(shots, 'phone-timeline.png'), fullPage: true });
  await page.goto(base + '/#status=any');
  await soon(page, () => document.querySelectorAll('#alert-groups section').length > 0
    && document.querySelectorAll('#recent tbody tr').length > 0 && document.querySelector('#timeline').hidden);
  const alerts = await page.evaluate(LAYOUT, rowsAt);
  check(alerts.scrollWidth <= 390 && alerts.over.length === 0, 'at 390 px the alerts overflow: ' + JSON.stringify(alerts));
  check(alerts.rows > 5 && alerts.tall.length === 0, 'at 390 px the alerts have tall rows: ' + JSON.stringify(alerts.tall));
  await page.screenshot({ path: join(shots, 'phone-alerts.png'), fullPage: true });
  await page.click('#views a[data-view=overview]');
  await soon(page, () => document.querySelector('#o-updated').textContent !== '' && document.querySelector('#o-chart canvas'));
  const overview = await page.evaluate(LAYOUT, '#o-agents tr, #o-hosts tr, #o-rules tr');
  check(overview.scrollWidth <= 390 && overview.over.length === 0, 'at 390 px the overview overflows: ' + JSON.stringify(overview));
  check(overview.tall.length === 0, 'at 390 px the overview has tall rows: ' + JSON.stringify(overview.tall));
  await page.screenshot({ path: join(shots, 'phone-overview.png'), fullPage: true });

  // 10. signing out hides every signed-in view again, nav included
  await page.click('#signout');
  const shownAfter = await page.evaluate(SHOWN_WHEN_SIGNED_OUT);
  check(shownAfter.length === 0, 'after signing out, these show: ' + shownAfter.join(', '));

  check(favicons.every((s) => s === 200), 'the browser got ' + favicons.join(', ') + ' for /favicon.ico');
  check(problems.length === 0, problems.join(' | '));
  await context.close();

  // 11. the overview with refusals (the API's answer with series and the long host added, as the seeded
  // refusals are older than its 24 hours): the legend names each series in words; the host stays a value
  const busy = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const overviewPage = await busy.newPage();
  const busyProblems = [];
  overviewPage.on('pageerror', (e) => busyProblems.push('page error: ' + e.message));
  await overviewPage.route('**/api/v1/overview?*', async (route) => {
    const answer = await route.fetch();
    const o = await answer.json();
    const at = (i, n) => Array.from({ length: o.minutes }, (_, m) => (m === i ? n : 0));
    o.series = { 'network/-': at(10, 3), 'network/cloud-metadata': at(20, 1), 'filesystem/-': at(30, 2) };
    o.refusals = 6;
    o.hosts = [{ target: hostileHost + ':443', role: 'default', refusals: 3, commands: 1 }];
    await route.fulfill({ response: answer, json: o });
  });
  await overviewPage.goto(base + '/');
  await overviewPage.fill('#token', token);
  await overviewPage.click('#signin-form button[type=submit]');
  await soon(overviewPage, () => document.querySelectorAll('#o-chart .u-legend .u-series').length > 0);
  const legend = await overviewPage.$$eval('#o-chart .u-legend .u-series', (ss) => ss.map((s) => s.textContent.trim()));
  check(JSON.stringify(legend) === JSON.stringify(['network refusals to host names',
    'network refusals to the cloud metadata address', 'file refusals']), 'the legend reads ' + JSON.stringify(legend));
  const summary = await overviewPage.textContent('#o-summary');
  check(summary.includes('network refusals to host names 3'), 'the chart\'s summary says ' + summary);
  const overviewHost = await overviewPage.evaluate(VALUE_LINES, '#o-hosts tbody td:first-child');
  check(overviewHost.length === 1 && overviewHost[0].lines === 1 && overviewHost[0].text === target
    && overviewHost[0].titles.includes(target), 'the long host in the overview: ' + JSON.stringify(overviewHost));
  await overviewPage.setViewportSize({ width: 390, height: 844 });
  await overviewPage.waitForTimeout(500);
  const busyPhone = await overviewPage.evaluate(LAYOUT, '#o-agents tr, #o-hosts tr, #o-rules tr, #o-table tr');
  check(busyPhone.scrollWidth <= 390 && busyPhone.over.length === 0 && busyPhone.tall.length === 0,
    'at 390 px the overview with refusals: ' + JSON.stringify(busyPhone));
  await overviewPage.screenshot({ path: join(shots, 'phone-overview-refusals.png'), fullPage: true });
  check(busyProblems.length === 0, busyProblems.join(' | '));
  await busy.close();
} finally {
  await browser.close();
}
if (failures.length > 0) {
  process.exitCode = 1;
} else {
  console.log('usability ok');
}
