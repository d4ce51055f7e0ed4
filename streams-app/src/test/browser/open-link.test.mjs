// A responder clicks the timeline link of a page (Slack, PagerDuty): a fresh tab opens that exact
// URL, signs in, and must see that command's timeline.
// Usage: node open-link.test.mjs URL TOKEN COMMAND_ID SCREENSHOT
import { chromium } from 'playwright-core';

const [url, token, commandId, screenshot] = process.argv.slice(2);
const fail = (why) => { console.error('FAIL: ' + why); process.exitCode = 1; };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--headless=new', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.fill('#token', token);
  await page.click('#signin-form button[type=submit]');
  await page.waitForSelector('#timeline:not([hidden])', { timeout: 30000 });
  const shown = await page.textContent('#t-id');
  if (shown !== commandId) { fail('the timeline shows ' + JSON.stringify(shown) + ', not ' + commandId); }
  await page.waitForSelector('#t-events tbody tr');
  const events = await page.$$eval('#t-events tbody tr', (trs) => trs.length);
  if (events < 1) { fail('no event of ' + commandId + ' is listed'); }
  await page.screenshot({ path: screenshot, fullPage: true });
  if (errors.length > 0) { fail('page errors: ' + errors.join(', ')); }
  if (process.exitCode !== 1) { console.log('link ok: ' + url + ' shows ' + commandId + ' with ' + events + ' event(s)'); }
} finally {
  await browser.close();
}
