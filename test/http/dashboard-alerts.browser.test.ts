/**
 * The dashboard's "Recent alerts" panel in a real browser (Chromium through playwright-core)
 * against a real node (test/http/alert-node.ts): a sensor fault and its resolution told to
 * `phone` (ntfy), which refuses until a test lets it take them, and to `hook` (a webhook),
 * which takes them. The loop's name is HTML, as a
 * hostile config could write it: it must show as text. The page's clock is Playwright's, so
 * the panel's 30 s refresh is moved on rather than waited for; the node's is a ManualClock.
 * A node without alert channels shows one plain line instead.
 *
 * Needs /usr/bin/chromium; without it the suite is skipped and says why. With
 * HOMEOSTAT_SCREENSHOT_DIR set it also writes there dashboard-alerts.png (the panel: the alert
 * not delivered to the phone, its resolution waiting), dashboard-alerts-phone.png (the same on
 * a phone) and
 * dashboard-alerts-delivered.png (both alerts delivered everywhere).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import {
  type AlertingNode,
  deliverAll,
  raiseSensorFault,
  resolveSensorFault,
  startAlertingNode,
} from './alert-node.js';
import { CHROMIUM, CHROMIUM_ARGS, startApiNode } from './support.js';

const SKIP = existsSync(CHROMIUM)
  ? false
  : `needs Chromium at ${CHROMIUM} (apt-get install chromium; CI installs it): not run here`;
/** Where to write the screenshots (none when unset). */
const SHOTS = process.env.HOMEOSTAT_SCREENSHOT_DIR;
/** dashboard/alerts.js's ALERTS_REFRESH_MS. */
const REFRESH_MS = 30_000;
/** The loop's name: markup that would run if the page wrote it as HTML. */
const HOSTILE = '<img src=x onerror="window.injected=1">Cellar';
const TITLE = `${HOSTILE}: sensor fault, actuators safe`;

const panel = '#alerts-panel';
const delivery = (channel: string, state: string) =>
  `${panel} [data-alert] [data-channel="${channel}"][data-state="${state}"]`;

const SUITE = 'the recent alerts on the dashboard, in Chromium';

if (SKIP) test(SUITE, { skip: SKIP }, () => {});
else
  describe(SUITE, () => {
    let alerting: AlertingNode;
    let browser: Browser;
    let page: Page;
    const pageErrors: string[] = [];
    const cleanups: (() => unknown)[] = [];
    const suite = { after: (fn: () => unknown) => cleanups.push(fn) };
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    before(async () => {
      alerting = await startAlertingNode(suite, { loopName: HOSTILE });
      alerting.phone.script.push(...Array(20).fill({ status: 503, body: 'down for maintenance' }));
      await raiseSensorFault(alerting);
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
      suite.after(() => browser.close());
      const context = await browser.newContext({
        viewport: { width: 1280, height: 900 },
        locale: 'en-GB',
        timezoneId: 'UTC', // the node's ManualClock runs in UTC
      });
      page = await context.newPage();
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await page.clock.install(); // runs on by itself; fastForward moves it past the refresh
      await page.goto(`${alerting.base}/`);
      await page.locator(`${panel}[data-state="ok"]`).waitFor();
    });

    test('given a phone that refused the alert, then the panel shows its time, phase and title, delivered to hook and not to phone, with the attempt and the error', async () => {
      const alert = page.locator(`${panel} [data-alert]`);
      assert.equal(await alert.count(), 1);
      assert.equal(await alert.locator('time').textContent(), '1 Jan, 00:01');
      assert.equal(await alert.locator('[data-phase]').textContent(), 'raised');
      assert.equal(await alert.locator('.alert-title').textContent(), TITLE);
      assert.match((await alert.locator('.alert-message').textContent()) ?? '', /reading is NaN/);
      assert.equal(await page.locator(delivery('hook', 'delivered')).textContent(), '✓ hook');
      const phone = page.locator(delivery('phone', 'failing'));
      assert.equal(await phone.locator('.badge').textContent(), '✗ phone: not delivered, 1 attempt');
      assert.match(
        (await phone.locator('.delivery-error').textContent()) ?? '',
        /^ntfy \(127\.0\.0\.1:\d+\) answered HTTP 503: down for maintenance$/,
      );
      assert.equal(await page.locator('#alerts-summary').textContent(), 'phone: 1 waiting');
      assert.equal(await page.locator('#alerts').getAttribute('data-state'), 'bad');
      assert.equal(await page.locator('#alerts').textContent(), 'alerts: 1 undelivered');
    });

    test('then the loop’s name is text: the markup in it is shown, never made into an element', async () => {
      assert.equal(await page.locator(`${panel} img`).count(), 0);
      assert.equal(await page.evaluate('window.injected'), undefined);
    });

    test('when the fault resolves while the phone still refuses, then at the next refresh the resolution is listed first, waiting on phone behind the alert it has not taken', async () => {
      await resolveSensorFault(alerting);
      await page.clock.fastForward(REFRESH_MS);
      await page.locator(`${panel} [data-alert]`).nth(1).waitFor();
      const [resolved, raised] = await page.locator(`${panel} [data-alert]`).all();
      assert.equal(await resolved?.getAttribute('data-phase'), 'resolved');
      assert.equal(
        await resolved?.locator('.alert-title').textContent(),
        `${HOSTILE}: resolved: sensor fault, actuators safe`,
      );
      assert.equal(
        await resolved?.locator('[data-channel="phone"][data-state="waiting"]').textContent(),
        '○ phone: waiting, not tried yet',
      );
      assert.equal(await resolved?.locator('[data-channel="hook"]').getAttribute('data-state'), 'delivered');
      // Retried with backoff while the clock moved: how often depends on the jitter.
      assert.match(
        (await raised?.locator('[data-channel="phone"][data-state="failing"] .badge').textContent()) ?? '',
        /^✗ phone: not delivered, \d+ attempts?$/,
      );
      assert.equal(await page.locator('#alerts-summary').textContent(), 'phone: 2 waiting');
      assert.equal(await page.locator('#alerts').textContent(), 'alerts: 2 undelivered');
      if (SHOTS) await takeShots(page);
    });

    test('when the phone takes them on its retry, then at the next refresh both alerts show delivered everywhere and the pill says ok', async () => {
      alerting.phone.script.length = 0; // it answers 200 from now on
      await deliverAll(alerting);
      await page.clock.fastForward(REFRESH_MS);
      await page.locator('#alerts[data-state="ok"]').waitFor();
      const phases = await page
        .locator(`${panel} [data-alert]`)
        .evaluateAll((items) => items.map((item) => item.getAttribute('data-phase')));
      assert.deepEqual(phases, ['resolved', 'raised']);
      assert.equal(await page.locator(delivery('phone', 'delivered')).count(), 2);
      assert.equal(await page.locator(delivery('hook', 'delivered')).count(), 2);
      assert.equal(await page.locator(`${panel} [data-channel]:not([data-state="delivered"])`).count(), 0);
      assert.equal(await page.locator('#alerts').textContent(), 'alerts ok');
      assert.equal(await page.locator('#alerts-summary').textContent(), 'all delivered · phone, hook');
      if (SHOTS)
        await page.locator(panel).screenshot({ path: path.join(SHOTS, 'dashboard-alerts-delivered.png') });
    });

    test('given a node without alert channels, then the panel is one plain line and the header has no alerts pill', async (t) => {
      const quiet = await startApiNode(t);
      const other = await browser.newPage();
      t.after(() => other.close());
      other.on('pageerror', (error) => pageErrors.push(error.message));
      await other.goto(`${quiet.base}/`);
      await other.locator(`${panel}[data-state="none"]`).waitFor();
      assert.equal(
        await other.locator('#alerts-message').textContent(),
        'No alerts configured: add alerts.channels to the config (and a broker for mqtt).',
      );
      assert.equal(await other.locator(`${panel} [data-alert]`).count(), 0);
      assert.equal(await other.locator('#alerts').isVisible(), false);
    });

    test('and no page threw an error', () => {
      assert.deepEqual(pageErrors, []);
    });
  });

/** The panel at desktop width, and the whole page on a phone scrolled to it. */
async function takeShots(page: Page): Promise<void> {
  await page.locator(panel).screenshot({ path: path.join(SHOTS!, 'dashboard-alerts.png') });
  const phone = await page
    .context()
    .browser()!
    .newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      locale: 'en-GB',
      timezoneId: 'UTC',
    });
  const small = await phone.newPage();
  await small.goto(page.url());
  await small.locator(`${panel}[data-state="ok"]`).scrollIntoViewIfNeeded();
  await small.screenshot({ path: path.join(SHOTS!, 'dashboard-alerts-phone.png') });
  await phone.close();
}
