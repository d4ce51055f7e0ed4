// The console in a real browser: sign in, search a command, read its events and alerts.
// Usage: node console.test.mjs BASE_URL TOKEN COMMAND_ID HOSTILE_HOST SCREENSHOT
import { chromium } from 'playwright-core';

const [base, token, commandId, hostile, screenshot] = process.argv.slice(2);
const fail = (why) => { console.error('FAIL: ' + why); process.exitCode = 1; };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--headless=new'],
});
try {
  const page = await browser.newPage();
  const dialogs = [];
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));

  await page.goto(base + '/');
  await page.fill('#token', token);
  await page.click('#signin-form button[type=submit]');
  await page.waitForSelector('#search:not([hidden])');
  if (page.url().includes(token)) { fail('the token is in the URL'); }
  await page.fill('#command', commandId);
  await page.click('#search button[type=submit]');
  await page.waitForSelector('#t-events tbody tr');

  const targets = await page.$$eval('#t-events tbody tr td:nth-child(5)', (tds) => tds.map((td) => td.textContent));
  if (!targets.some((t) => t.startsWith(hostile))) { fail('the hostile host is not shown as text: ' + JSON.stringify(targets)); }
  const images = await page.evaluate(() => document.querySelectorAll('img').length);
  if (images !== 0) { fail(images + ' <img> element(s) were created from event data'); }
  const title = await page.textContent('#t-id');
  if (title !== commandId) { fail('the timeline shows ' + title); }
  await page.waitForSelector('#recent tbody tr');
  const firing = await page.$$eval('#alert-groups tbody tr', (trs) => trs.length);
  if (firing < 1) { fail('no firing alert listed'); }
  // the firing alert's rule runbook is a link; the hostile command's odd runbook is none, its tag text
  const runbooks = await page.$$eval('#alert-groups tbody tr td:nth-child(11) a', (as) => as.map((a) => a.href));
  if (!runbooks.includes('https://runbooks.example/off-role')) { fail('no runbook link: ' + JSON.stringify(runbooks)); }
  const scripted = await page.$$eval('a', (as) => as.filter((a) => !/^https?:/.test(a.href) && a.getAttribute('href') !== '#').length);
  if (scripted !== 0) { fail(scripted + ' link(s) to something other than http(s)'); }
  const tags = await page.$$eval('#t-alerts tbody tr td:nth-child(8)', (tds) => tds.map((td) => td.textContent));
  if (!tags.some((t) => t.includes('<img src=x onerror=alert(2)>'))) { fail('the tag is not shown as text: ' + JSON.stringify(tags)); }
  const stored = await page.evaluate(() => sessionStorage.getItem('knockwatch-token'));
  if (stored !== token) { fail('the token is not kept in sessionStorage'); }
  await page.screenshot({ path: screenshot, fullPage: true });
  if (dialogs.length > 0) { fail('a dialog opened: ' + dialogs.join(', ')); }
  if (errors.length > 0) { fail('page errors: ' + errors.join(', ')); }
  if (process.exitCode !== 1) { console.log('console ok: ' + targets.length + ' events, ' + firing + ' firing alert(s)'); }
} finally {
  await browser.close();
}
