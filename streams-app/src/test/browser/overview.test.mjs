// The overview (the landing view) and the Discover view in a real browser, against `up` with seeded traffic.
// Usage: node overview.test.mjs BASE_URL TOKEN SCREENSHOT_DIR HOSTILE_HOST
import { chromium } from 'playwright-core';
import { join } from 'node:path';

const [base, token, shots, hostile] = process.argv.slice(2);
const fail = (why) => { console.error(('FAIL: ' + why).slice(0, 600)); process.exitCode = 1; };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--headless=new'],
});

async function open(scheme) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: scheme });
  const page = await context.newPage();
  const problems = [];
  page.on('dialog', async (d) => { problems.push('dialog: ' + d.message()); await d.dismiss(); });
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  // a Content-Security-Policy violation (an inline style or script the chart library tried) is a console error
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) { problems.push('console: ' + m.text()); } });
  // the favicon included: the console serves one
  page.on('response', (r) => { if (r.status() >= 400) { problems.push(r.status() + ' for ' + r.url()); } });
  await page.goto(base + '/');
  await page.fill('#token', token);
  await page.click('#signin-form button[type=submit]');
  await page.waitForSelector('#overview:not([hidden]) #o-chart canvas');
  await page.waitForFunction(() => document.querySelectorAll('#o-hosts tbody tr').length > 0);
  return { context, page, problems };
}

try {
  const { context, page, problems } = await open('light');
  // 1. the landing view is the overview; the alerts are one click away
  if (!(await page.isHidden('#alerts-view'))) { fail('the alerts view shows on landing'); }
  if ((await page.getAttribute('#views a[data-view=overview]', 'aria-current')) !== 'page') { fail('the overview is not the current view'); }
  const api = await page.evaluate(async (t) => (await fetch('/api/v1/overview?since=24h&top=10',
    { headers: { Authorization: 'Bearer ' + t } })).json(), token);

  // 2. the chart: one line per kind and class, with the API's series, each named in words in the legend
  // (no values beside the names: the counts are the table's), and its text alternative
  const legend = await page.$$eval('#o-chart .u-legend .u-series', (ss) => ss.map((s) => s.textContent.trim()));
  if (legend.length !== Object.keys(api.series).length || !legend.every((l) => /^[a-z-]+ refusals( to [a-z' -]+)?$/.test(l))) {
    fail('the legend reads ' + JSON.stringify(legend) + ' for the series ' + JSON.stringify(Object.keys(api.series)));
  }
  if (!legend.includes('network refusals to the cloud metadata address')) { fail('no cloud-metadata series: ' + JSON.stringify(legend)); }
  const summary = await page.textContent('#o-summary');
  if (!summary.startsWith(api.refusals + ' refusals in the last 24 hours')) { fail('the summary says ' + summary); }
  if ((await page.getAttribute('#o-chart', 'role')) !== 'img' || (await page.getAttribute('#o-chart', 'aria-describedby')) !== 'o-summary') {
    fail('the chart has no text alternative');
  }
  const hourRows = await page.$$eval('#o-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  const tableTotal = hourRows.reduce((acc, r) => acc + r.slice(1).reduce((a, b) => a + Number(b), 0), 0);
  if (tableTotal !== api.refusals) { fail('the table sums to ' + tableTotal + ', the API to ' + api.refusals); }
  const drawn = await page.$eval('#o-chart canvas', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) { if (d[i] !== 0) { n++; } }
    return n;
  });
  if (drawn < 500) { fail('the chart drew ' + drawn + ' pixels'); }

  // 3. the counts by severity, each a link into the filtered alert list
  const cards = await page.$$eval('#o-severities a.card', (as) => as.map((a) => [a.dataset.severity, a.querySelector('.n').textContent]));
  for (const [sev, n] of cards) {
    if (Number(n) !== (api.severities[sev] || 0)) { fail(sev + ' card says ' + n + ', the API ' + api.severities[sev]); }
  }
  if (!api.severities.critical) { fail('no critical alert was seeded: ' + JSON.stringify(api.severities)); }

  // 4. the agent's bytes as text: the hostile host in the top destinations, nothing made of it
  const hosts = await page.$$eval('#o-hosts tbody tr td:first-child', (tds) => tds.map((td) => td.textContent));
  if (!hosts.some((h) => h.startsWith(hostile))) { fail('the hostile host is not shown as text: ' + JSON.stringify(hosts)); }
  if (await page.evaluate(() => document.querySelectorAll('img, script:not([src])').length) !== 0) { fail('markup was made of event data'); }
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  if (wide > 1280) { fail('the overview is ' + wide + ' px wide at 1280'); }
  await page.screenshot({ path: join(shots, 'overview.png'), fullPage: true });

  // 5. a severity's count opens the alert list filtered to it
  await page.click('#o-severities a.card[data-severity=critical]');
  await page.waitForSelector('#alerts-view:not([hidden]) #alert-groups section');
  const groups = await page.$$eval('#alert-groups section', (ss) => ss.map((s) => s.dataset.severity));
  if (JSON.stringify(groups) !== JSON.stringify(['critical'])) { fail('the critical link shows ' + groups); }
  if (!page.url().includes('severity=critical') || !page.url().includes('view=alerts')) { fail('the link is not in the URL: ' + page.url()); }

  // 6. Discover: the role's narrow list; what must stay shut is listed, never proposed
  await page.click('#views a[data-view=discover]');
  await page.waitForSelector('#discover:not([hidden]) section.role');
  await page.selectOption('#d-role', 'ci');
  await page.waitForFunction(() => location.hash.includes('role=ci')
    && [...document.querySelectorAll('#d-roles section.role')].every((s) => s.dataset.role === 'ci'));
  const proposed = (await page.textContent('section.role[data-role=ci] pre.proposed')).split('\n');
  if (proposed[0] !== 'objects.githubusercontent.com:443') { fail('the first proposed is ' + JSON.stringify(proposed)); }
  if (proposed.some((p) => p.startsWith('169.254.') || p.includes('*') || p === 'githubusercontent.com:443')) {
    fail('proposed what must stay shut, or widened: ' + JSON.stringify(proposed));
  }
  const never = await page.$$eval('section.role[data-role=ci] tr.never td:first-child', (tds) => tds.map((td) => td.textContent));
  if (!never.includes('169.254.169.254:80')) { fail('the metadata address is not listed apart: ' + JSON.stringify(never)); }
  await page.screenshot({ path: join(shots, 'discover.png'), fullPage: true });
  if (problems.length > 0) { fail(problems.join(' | ')); }
  await context.close();

  // 7. the same overview in dark mode: the page and the chart's axes in light text
  const dark = await open('dark');
  const colour = await dark.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  if (colour === 'rgb(255, 255, 255)' || colour === 'rgba(0, 0, 0, 0)') { fail('no dark background: ' + colour); }
  await dark.page.screenshot({ path: join(shots, 'overview-dark.png'), fullPage: true });
  if (dark.problems.length > 0) { fail(dark.problems.join(' | ')); }
  await dark.context.close();
  if (process.exitCode !== 1) {
    console.log('overview ok: ' + api.refusals + ' refusals, ' + Object.keys(api.series).length + ' series, '
      + proposed.length + ' proposed for ci');
  }
} finally {
  await browser.close();
}
