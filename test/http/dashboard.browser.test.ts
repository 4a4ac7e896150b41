/**
 * The dashboard in a real browser (Chromium, headless, through playwright-core) against the
 * demo node as `homeostat run` builds it: its HTTP server, SQLite store and MQTT bridge on a
 * private Mosquitto. The node runs three simulated hours on a ManualClock before the page
 * opens, so every chart has hundreds of points at once; afterwards the clock only moves when a
 * test moves it.
 *
 * Needs /usr/bin/chromium (Debian/Ubuntu package `chromium`; CI installs it) and Mosquitto.
 * Without Chromium the suite is skipped and says why.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { brokerFor } from '../integration/mosquitto.js';
import { demoConfigText } from '../support/config.js';
import { startTestNode, type TestNode } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { CHROMIUM, CHROMIUM_ARGS, serving, setSetpointThroughPage, until } from './support.js';

const SKIP = existsSync(CHROMIUM)
  ? false
  : `needs Chromium at ${CHROMIUM} (apt-get install chromium; CI installs it): not run here`;

const DEMO_LOOPS = ['room', 'fermenter', 'greenhouse_humidity'];
/** A chart uPlot has drawn with measured values in it. */
const DRAWN_CHART = '[data-role="chart"][data-measured]:not([data-measured="0"])';
const STATE_TOPIC = (loop: string) => `homeostat/demo/${loop}/state`;
/** One ManualClock.advance fires at most 10 000 timers: three hours go in steps. */
const STEP_MS = 10 * 60_000;
const SIMULATED_MS = 3 * 3_600_000;

const SUITE = 'the dashboard in Chromium, on the demo node after three simulated hours';

// A skipped test rather than a skipped suite: the run's summary counts it as skipped.
if (SKIP) test(SUITE, { skip: SKIP }, () => {});
else
  describe(SUITE, () => {
    let node: TestNode;
    let browser: Browser;
    let page: Page;
    let watcher: MqttClient;
    let brokerUrl: string;
    /** Every `<loop>/state` payload the broker delivered, oldest first. */
    const states: { loop: string; setpoint: number; retain: boolean }[] = [];
    const pageErrors: string[] = [];
    // Cleanups registered while starting, run in reverse after the suite (node:test's `after`
    // called inside `before` would run at the end of the hook, not of the suite).
    const cleanups: (() => unknown)[] = [];
    const suite = { after: (fn: () => unknown) => cleanups.push(fn) };
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    before(async () => {
      const broker = await brokerFor(suite);
      brokerUrl = broker.url;
      const dir = tempDir(suite, 'homeostat-dashboard-');
      node = await startTestNode(demoConfigText(), path.join(dir, 'state.db'), {
        clock: new ManualClock(Date.UTC(2026, 0, 1)),
        http: { port: 0 },
        mqtt: { url: broker.url },
      });
      suite.after(() => node.stop());
      for (let ms = 0; ms < SIMULATED_MS; ms += STEP_MS) await node.clock.advance(STEP_MS);
      watcher = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
      suite.after(() => watcher.endAsync(true));
      watcher.on('message', (topic, payload, packet) => {
        const loop = topic.split('/')[2]!;
        const { setpoint } = JSON.parse(payload.toString()) as { setpoint: number };
        states.push({ loop, setpoint, retain: packet.retain });
      });
      await watcher.subscribeAsync(STATE_TOPIC('+'), { qos: 1 });

      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
      suite.after(() => browser.close());
      page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await page.goto(`${await serving(node.node)}/`);
    });

    test('when the page opens, then it shows one card per configured loop, in the config order', async () => {
      await page
        .locator('[data-loop]')
        .nth(DEMO_LOOPS.length - 1)
        .waitFor();
      const loops = [];
      for (const card of await page.locator('[data-loop]').all())
        loops.push(await card.getAttribute('data-loop'));
      assert.deepEqual(loops, DEMO_LOOPS);
      await page.locator('#live[data-state="ok"]').waitFor(); // the event stream is open
      await page.locator('#mqtt[data-state="ok"]').waitFor();
      assert.equal(await page.locator('#mqtt').textContent(), 'MQTT connected');
    });

    test('then every chart is drawn: a canvas of non-zero size, with the three hours of history', async () => {
      // data-measured: points with a measured value, set by the page once uPlot has drawn them.
      await page
        .locator(DRAWN_CHART)
        .nth(DEMO_LOOPS.length - 1)
        .waitFor();
      assert.equal(await page.locator(DRAWN_CHART).count(), DEMO_LOOPS.length);
      for (const loop of DEMO_LOOPS) {
        const chart = page.locator(`[data-loop="${loop}"] [data-role="chart"]`);
        const canvas = await chart.locator('canvas').boundingBox();
        assert.ok(
          canvas && canvas.width > 200 && canvas.height > 100,
          `${loop}: canvas ${JSON.stringify(canvas)}`,
        );
        // Three hours of 10–15 s cycles, at most ~1.5 points per chart pixel: hundreds of points.
        const points = Number(await chart.getAttribute('data-points'));
        const measured = Number(await chart.getAttribute('data-measured'));
        assert.ok(points >= 300, `${loop}: ${points} points drawn`);
        assert.ok(measured >= 300, `${loop}: ${measured} points with a measured value`);
      }
    });

    test('when a setpoint is set through the page, then it reaches the store (source http), the MQTT retained state and the card', async () => {
      await setSetpointThroughPage(page, 'room', '23.5');
      const desired = node.store.desired.desired('room');
      assert.equal(desired?.setpoint, 23.5);
      assert.equal(desired?.setpointSource, 'http');
      const card = page.locator('[data-loop="room"]');

      // The next cycle reconciles it: the bridge publishes the state, the stream updates the card.
      await node.clock.advance(10_000);
      await until(
        () => states.some((s) => s.loop === 'room' && s.setpoint === 23.5),
        'the MQTT state at 23.5',
      );
      const retained = await retainedState('room');
      assert.equal(retained.setpoint, 23.5, 'the retained state a new subscriber gets');
      await card.locator('[data-role="setpoint"]', { hasText: /^23\.5 °C$/ }).waitFor();
      assert.match((await card.locator('[data-role="updated"]').textContent()) ?? '', /setpoint from http/);
    });

    test("when a setpoint outside the limits is entered, then the card shows the daemon's reason and nothing changes", async () => {
      const card = page.locator('[data-loop="room"]');
      const before = node.store.desired.desired('room');
      const shownBefore = await card.locator('[data-role="setpoint"]').textContent();
      await card.locator('[data-role="setpoint-input"]').fill('31');
      await card.locator('[data-role="setpoint-submit"]').click();

      await card.locator('[data-role="message"][data-state="error"]').waitFor();
      const message = (await card.locator('[data-role="message"]').textContent()) ?? '';
      assert.match(message, /Setpoint 31: refused — .*outside the limits 5\.\.30/);
      assert.deepEqual(node.store.desired.desired('room'), before, 'nothing stored');
      assert.equal(await card.locator('[data-role="setpoint"]').textContent(), shownBefore);
      assert.equal(
        await card.locator('[data-role="setpoint-input"]').inputValue(),
        '31',
        'the entry stays, to be corrected',
      );
    });

    test('and the page threw no error', () => {
      assert.deepEqual(pageErrors, []);
    });

    /** The retained `<loop>/state` as a new subscriber receives it. */
    async function retainedState(loop: string): Promise<{ setpoint: number }> {
      const probe = await mqtt.connectAsync(brokerUrl, { reconnectPeriod: 0 });
      try {
        const got: { setpoint: number; retain: boolean }[] = [];
        probe.on('message', (_topic, payload, packet) =>
          got.push({ ...(JSON.parse(payload.toString()) as { setpoint: number }), retain: packet.retain }),
        );
        await probe.subscribeAsync(STATE_TOPIC(loop), { qos: 1 });
        const first = await until(() => got[0], `the retained ${loop} state`);
        assert.equal(first.retain, true);
        return first;
      } finally {
        await probe.endAsync(true);
      }
    }
  });
