/**
 * The dashboard's sign-in off loopback, in a real browser (Chromium, headless, through
 * playwright-core): the demo node listens on 0.0.0.0 with http.tokenFile and the page is opened
 * at the machine's first non-loopback IPv4 address, so the server sees another machine (a
 * loopback peer needs no token). The page must ask for the token, show nothing before it, refuse
 * a wrong one, and after the right one work entirely on the HttpOnly session cookie (requests,
 * writes and the EventSource) without the token being readable by any script in the page.
 *
 * Needs /usr/bin/chromium and a non-loopback IPv4 address; without either it is skipped and says
 * why. No MQTT: the sign-in does not depend on it.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { demoConfigText } from '../support/config.js';
import { tempDir } from '../support/tmp.js';
import {
  type ApiTestNode,
  CHROMIUM,
  CHROMIUM_ARGS,
  postJson,
  setSetpointThroughPage,
  startApiNode,
} from './support.js';

const TOKEN = 'tok-7d2e9b4c1a6f3e8d5b0c2a9f4e7d1b6c';
const DEMO_LOOPS = ['room', 'fermenter', 'greenhouse_humidity'];

/** As in api-security.test.ts: requests to this address come from another machine's side. */
const LAN_ADDRESS = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;

const SKIP = !existsSync(CHROMIUM)
  ? `needs Chromium at ${CHROMIUM} (apt-get install chromium; CI installs it): not run here`
  : !LAN_ADDRESS
    ? 'no non-loopback IPv4 address on this machine to open the page from'
    : false;

const SUITE = 'given the demo node on 0.0.0.0 with http.tokenFile, opened in Chromium from another address';

/** What a script in the page can read: cookies, both storages, the DOM and every input's value. */
interface ScriptVisible {
  cookie: string;
  local: string;
  session: string;
  html: string;
  inputs: string[];
}

/**
 * Evaluated in the page. A string, not a function: the tests are compiled with esbuild's
 * keepNames (tsx), whose `__name` helper does not exist in the page, and tsconfig has no DOM lib.
 */
const SCRIPT_VISIBLE = `(() => {
  const dump = (s) => JSON.stringify(Array.from({ length: s.length }, (_, i) => [s.key(i), s.getItem(s.key(i))]));
  return {
    cookie: document.cookie,
    local: dump(localStorage),
    session: dump(sessionStorage),
    html: document.documentElement.outerHTML,
    inputs: Array.from(document.querySelectorAll('input'), (input) => input.value),
  };
})()`;

// A skipped test rather than a skipped suite: the run's summary counts it as skipped.
if (SKIP) test(SUITE, { skip: SKIP }, () => {});
else
  describe(SUITE, () => {
    let node: ApiTestNode;
    /** http://<LAN address>:<port>: where the page is opened. */
    let lanBase: string;
    /** http://127.0.0.1:<port>: the same node asked from this machine (no token needed). */
    let localBase: string;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    /** Every answer the page received from /api/*, in order. */
    const answers: { path: string; status: number }[] = [];
    const pageErrors: string[] = [];
    // Cleanups registered while starting, run in reverse after the suite.
    const cleanups: (() => unknown)[] = [];
    const suite = { after: (fn: () => unknown) => cleanups.push(fn) };
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    before(async () => {
      const tokenFile = path.join(tempDir(suite, 'homeostat-token-'), 'api-token');
      writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
      const text = demoConfigText((doc) => doc.set('http', { host: '0.0.0.0', port: 8734, tokenFile }));
      node = await startApiNode(suite, { text, http: { port: 0 } });
      assert.match(node.node.http?.url ?? '', /^http:\/\/0\.0\.0\.0:\d+$/);
      const port = new URL(node.node.http?.url ?? '').port;
      lanBase = `http://${LAN_ADDRESS}:${port}`;
      localBase = `http://127.0.0.1:${port}`;
      await node.clock.advance(60_000); // a few cycles: every loop has a status to show

      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
      suite.after(() => browser.close());
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      page = await context.newPage();
      page.on('pageerror', (error) => pageErrors.push(error.message));
      page.on('response', (res) => {
        const { pathname } = new URL(res.url());
        if (pathname.startsWith('/api/')) answers.push({ path: pathname, status: res.status() });
      });
      await page.goto(`${lanBase}/`);
    });

    test('when the page opens, then it shows the token dialog and no loop data: every API read answered 401', async () => {
      await page.locator('#auth-dialog[open]').waitFor();
      assert.equal(await page.locator('#auth-token').isVisible(), true);
      assert.equal(await page.locator('[data-loop]').count(), 0, 'no card');
      assert.equal(await page.locator('#node-name').textContent(), 'homeostat', 'not the node name');
      assert.ok(answers.length > 0, 'the page asked the API');
      assert.deepEqual(
        answers.filter((a) => a.status !== 401),
        [],
        'an API answer other than 401 before the sign-in',
      );
      assert.deepEqual(await context.cookies(), []);
    });

    test('when a wrong token is entered, then #auth-message says so, the dialog stays and still no data', async () => {
      await page.locator('#auth-token').fill(`${TOKEN}x`);
      await page.locator('#auth-submit').click();
      await page.locator('#auth-message[data-state="error"]').waitFor();
      assert.equal(await page.locator('#auth-message').textContent(), 'Wrong token');
      assert.equal(await page.locator('#auth-dialog').getAttribute('open'), '', 'the dialog is open');
      assert.equal(await page.locator('[data-loop]').count(), 0, 'no card');
      assert.deepEqual(answers.at(-1), { path: '/api/session', status: 401 });
      assert.deepEqual(
        answers.filter((a) => a.status !== 401),
        [],
        'an API answer other than 401 with a wrong token',
      );
      assert.deepEqual(await context.cookies(), [], 'no session cookie');
      assert.equal(node.store.desired.desired('room')?.setpoint, 20);
    });

    test('when the right token is entered, then the dialog closes, every loop card appears in order and the stream is live', async () => {
      await page.locator('#auth-token').fill(TOKEN);
      await page.locator('#auth-submit').click();
      await page.locator('#auth-dialog').waitFor({ state: 'hidden' });
      assert.equal(await page.locator('#auth-dialog').getAttribute('open'), null);

      await page
        .locator('[data-loop]')
        .nth(DEMO_LOOPS.length - 1)
        .waitFor();
      const loops = [];
      for (const card of await page.locator('[data-loop]').all())
        loops.push(await card.getAttribute('data-loop'));
      assert.deepEqual(loops, DEMO_LOOPS);
      await page.locator('#node-name', { hasText: 'homeostat demo' }).waitFor();
      await page.locator('#live[data-state="ok"]').waitFor(); // EventSource opened, on the cookie
      assert.equal(await page.locator('#live').textContent(), 'live');
      assert.ok(
        answers.some((a) => a.path === '/api/session' && a.status === 204),
        'the sign-in answered 204',
      );
      assert.ok(
        answers.some((a) => a.path === '/api/stream' && a.status === 200),
        'the stream answered 200',
      );

      const [cookie, ...others] = await context.cookies();
      assert.deepEqual(others, [], 'one cookie');
      assert.equal(cookie?.name, 'homeostat_session');
      assert.equal(cookie?.httpOnly, true);
      assert.equal(cookie?.sameSite, 'Strict');
      assert.equal(cookie?.value.includes(TOKEN), false, 'the cookie is a session id, not the token');
    });

    test('when a setpoint changes elsewhere, then the live stream brings it to the card (the EventSource works on the cookie)', async () => {
      const card = page.locator('[data-loop="fermenter"]');
      // From this machine: no token. The page hears of it only through its stream.
      const set = await postJson(localBase, '/api/loops/fermenter', { setpoint: 19 });
      assert.equal(set.status, 200);
      await node.clock.advance(10_000);
      await card.locator('[data-role="setpoint"]', { hasText: /^19(\.0+)? °C$/ }).waitFor();
    });

    test('when a setpoint is set through the page, then it is accepted and stored (source http)', async () => {
      await setSetpointThroughPage(page, 'room', '23.5');
      const desired = node.store.desired.desired('room');
      assert.equal(desired?.setpoint, 23.5);
      assert.equal(desired?.setpointSource, 'http');
      assert.ok(
        answers.some((a) => a.path === '/api/loops/room' && a.status === 200),
        'the write answered 200',
      );
    });

    test('then the token is nowhere a script can read: not in document.cookie, the storages, the DOM or an input', async () => {
      const seen = await page.evaluate<ScriptVisible>(SCRIPT_VISIBLE);
      assert.equal(seen.cookie.includes('homeostat_session'), false, 'the session cookie is HttpOnly');
      for (const [where, text] of Object.entries(seen)) {
        const texts = Array.isArray(text) ? text : [text];
        assert.equal(
          texts.some((t: string) => t.includes(TOKEN)),
          false,
          `the token is readable in ${where}`,
        );
      }
      assert.equal(await page.locator('#auth-token').inputValue(), '', 'the token field was cleared');
    });

    test('when wrong tokens keep coming from this address (a new visitor), then the dialog says it is locked out and when to try again', async () => {
      const visitor = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      try {
        const other = await visitor.newPage();
        other.on('pageerror', (error) => pageErrors.push(error.message));
        await other.goto(`${lanBase}/`);
        await other.locator('#auth-dialog[open]').waitFor();
        let message = '';
        for (let attempt = 0; attempt < 12 && !/Too many/.test(message); attempt++) {
          await other.locator('#auth-token').fill(`wrong-${attempt}`);
          await other.locator('#auth-submit').click();
          await other.locator('#auth-message[data-state="error"]').waitFor();
          await other.waitForFunction("document.querySelector('#auth-message')?.textContent !== 'Checking…'");
          message = (await other.locator('#auth-message').textContent()) ?? '';
        }
        assert.match(message, /^Too many wrong tokens from this address: try again in \d+ s$/);
      } finally {
        await visitor.close();
      }
    });

    test('and the page threw no error', () => {
      assert.deepEqual(pageErrors, []);
    });
  });
