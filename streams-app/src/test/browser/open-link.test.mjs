// A responder clicks the timeline link of a page (Slack, PagerDuty): a fresh tab opens that exact
// URL, signs in, and must see that command's timeline. Each URL gets a browser context of its own
// (no cookie, no storage: as a fresh browser), one Chromium for them all.
// Usage: node open-link.test.mjs TOKEN COMMAND_ID URL SCREENSHOT [URL SCREENSHOT]...
import { chromium } from 'playwright-core';

const [token, commandId, ...links] = process.argv.slice(2);
if (links.length === 0 || links.length % 2 !== 0) {
  console.error('usage: node open-link.test.mjs TOKEN COMMAND_ID URL SCREENSHOT [URL SCREENSHOT]...');
  process.exit(2);
}
const fail = (url, why) => { console.error('FAIL: ' + url + ': ' + why); process.exitCode = 1; };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--headless=new', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run'],
});
try {
  for (let i = 0; i < links.length; i += 2) {
    const [url, screenshot] = [links[i], links[i + 1]];
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(url);
      await page.fill('#token', token);
      await page.click('#signin-form button[type=submit]');
      await page.waitForSelector('#timeline:not([hidden])', { timeout: 30000 });
      const shown = await page.textContent('#t-id');
      let ok = true;
      if (shown !== commandId) { fail(url, 'the timeline shows ' + JSON.stringify(shown) + ', not ' + commandId); ok = false; }
      await page.waitForSelector('#t-events tbody tr');
      const events = await page.$$eval('#t-events tbody tr', (trs) => trs.length);
      if (events < 1) { fail(url, 'no event of ' + commandId + ' is listed'); ok = false; }
      await page.screenshot({ path: screenshot, fullPage: true });
      if (errors.length > 0) { fail(url, 'page errors: ' + errors.join(', ')); ok = false; }
      if (ok) { console.log('link ok: ' + url + ' shows ' + commandId + ' with ' + events + ' event(s)'); }
    } finally {
      await context.close();
    }
  }
} finally {
  await browser.close();
}
