/**
 * Recorded series on the dashboard's chart (loops.<id>.record), in a real Chromium
 * (headless, through playwright-core): the demo node, its room loop recording the chamber's
 * temperature (its own unit, °C) and the greenhouse's humidity (%RH, another unit). Each series
 * is a line of its own colour on the canvas with a legend entry naming it and its unit; the
 * other unit gets an axis of its own. The fermenter's chart, recording nothing, is the control.
 * The node runs three simulated hours (half of the page's default 6 h range) on a ManualClock before the page opens; no MQTT.
 *
 * Needs /usr/bin/chromium (Debian/Ubuntu package `chromium`; CI installs it). Without Chromium
 * the test is skipped and says why.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { demoConfigText } from '../support/config.js';
import { startTestNode, type TestNode } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { CHROMIUM, CHROMIUM_ARGS, serving } from './support.js';

const SKIP = existsSync(CHROMIUM)
  ? false
  : `needs Chromium at ${CHROMIUM} (apt-get install chromium; CI installs it): not run here`;

/** The colours dashboard/recorded.js gives the first two series, as RGB. */
const CHAMBER_RGB = [0x7c, 0x3a, 0xed];
const GREENHOUSE_RGB = [0x0e, 0x74, 0x90];
/** One ManualClock.advance fires at most 10 000 timers: the hours go in steps. */
const STEP_MS = 10 * 60_000;
const SIMULATED_MS = 3 * 3_600_000;
/** A chart uPlot has drawn with recorded values in it (the page sets data-recorded). */
const DRAWN = (loop: string) => `[data-loop="${loop}"] [data-role="chart"][data-recorded]`;

/**
 * Pixels of the chart's plot area (uPlot's .u-over, without the axes and their labels) within 12
 * of `rgb` on each channel: the core of a line drawn in that colour, not its anti-aliased edges
 * nor where the loop's blue line crosses its green output fill. Page code as text: the project's
 * TypeScript has no DOM types (see dashboard-screenshot.ts).
 */
const pixelsOf = (loop: string, rgb: number[]) => `(() => {
  const chart = document.querySelector('[data-loop="${loop}"] [data-role="chart"]');
  const canvas = chart.querySelector('canvas');
  const box = canvas.getBoundingClientRect();
  const over = chart.querySelector('.u-over').getBoundingClientRect();
  const scale = canvas.width / box.width;
  const [x, y] = [(over.left - box.left) * scale, (over.top - box.top) * scale];
  const area = canvas.getContext('2d').getImageData(x, y, over.width * scale, over.height * scale);
  const [r, g, b] = ${JSON.stringify(rgb)};
  const near = (i) => Math.abs(area.data[i] - r) < 12 && Math.abs(area.data[i + 1] - g) < 12 && Math.abs(area.data[i + 2] - b) < 12;
  let n = 0;
  for (let i = 0; i < area.data.length; i += 4) if (near(i)) n++;
  return n;
})()`;

const SUITE = 'the chart of a loop recording two sensors, in Chromium';

if (SKIP) test(SUITE, { skip: SKIP }, () => {});
else
  describe(SUITE, () => {
    let node: TestNode;
    let browser: Browser;
    let page: Page;
    const pageErrors: string[] = [];
    const cleanups: (() => unknown)[] = [];
    const suite = { after: (fn: () => unknown) => cleanups.push(fn) };
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    before(async () => {
      const text = demoConfigText((doc) =>
        doc.setIn(
          ['loops', 'room', 'record'],
          doc.createNode([
            { sensor: 'chamber_temp', label: 'chamber' },
            { sensor: 'greenhouse_rh', label: 'greenhouse', unit: '%RH' },
          ]),
        ),
      );
      const dir = tempDir(suite, 'homeostat-dashboard-recorded-');
      node = await startTestNode(text, path.join(dir, 'state.db'), {
        clock: new ManualClock(Date.UTC(2026, 0, 1)),
        http: { port: 0 },
      });
      suite.after(() => node.stop());
      for (let ms = 0; ms < SIMULATED_MS; ms += STEP_MS) await node.clock.advance(STEP_MS);
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
      suite.after(() => browser.close());
      page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await page.goto(`${await serving(node.node)}/`);
      await page.locator(DRAWN('room')).waitFor();
      await page.locator(DRAWN('fermenter')).waitFor();
    });

    test('then the legend names each recorded series with its unit, after the loop’s own', async () => {
      const labels = await page.locator('[data-loop="room"] .u-legend .u-series .u-label').allTextContents();
      assert.deepEqual(labels, [
        'time',
        'measured',
        'setpoint',
        'output',
        'chamber (°C)',
        'greenhouse (%RH)',
      ]);
      const fermenter = await page
        .locator('[data-loop="fermenter"] .u-legend .u-series .u-label')
        .allTextContents();
      assert.deepEqual(fermenter, ['time', 'measured', 'setpoint', 'output']);
    });

    test('then each series has the three hours of values on the chart, the newest in its legend entry', async () => {
      const counts = (await page.locator(DRAWN('room')).getAttribute('data-recorded'))
        ?.split(',')
        .map(Number);
      // Both sensors are read every 10–15 s: 720–1080 values in three hours; the page asks for about
      // 1.5 points per chart pixel over its 6 h (on a ~600 px card, bucket means of the 10 s ones).
      assert.equal(counts?.length, 2);
      for (const count of counts ?? []) assert.ok(count >= 300, `${counts} values drawn`);
      assert.equal(await page.locator(DRAWN('fermenter')).getAttribute('data-recorded'), '');
      const values = await page.locator('[data-loop="room"] .u-legend .u-series .u-value').allTextContents();
      assert.match(values[4] ?? '', /^-?\d+(\.\d+)? °C$/);
      assert.match(values[5] ?? '', /^\d+(\.\d+)? %RH$/);
    });

    test('then each is drawn as a line of its own colour, which the chart recording nothing does not have', async () => {
      const chamber = (await page.evaluate(pixelsOf('room', CHAMBER_RGB))) as number;
      const greenhouse = (await page.evaluate(pixelsOf('room', GREENHOUSE_RGB))) as number;
      // A line across half of a ~1100 px plot: hundreds of pixels of its colour.
      assert.ok(chamber >= 300, `${chamber} pixels of the chamber's colour`);
      assert.ok(greenhouse >= 300, `${greenhouse} pixels of the greenhouse's colour`);
      for (const rgb of [CHAMBER_RGB, GREENHOUSE_RGB]) {
        assert.equal(await page.evaluate(pixelsOf('fermenter', rgb)), 0, `${rgb} on the control chart`);
      }
    });

    test('then the other unit has an axis of its own (the loop’s unit, output % and %RH), the same unit none', async () => {
      // uPlot puts one .u-axis element per axis: time, the loop's unit, output %, then %RH.
      assert.equal(await page.locator('[data-loop="room"] .u-axis').count(), 4);
      assert.equal(await page.locator('[data-loop="fermenter"] .u-axis').count(), 3);
    });

    test('and on one time axis a gap stays a gap (null: the line breaks), a time of the other columns is no value of its own (undefined: joined over)', async () => {
      // The page's own module, run in the page on a small history answer.
      const merged = await page.evaluate(`import('/assets/recorded.js').then(({ mergeRecorded }) => {
        const at = (s) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
        const loop = [0, 20].map((s) => ({ at: at(s), measured: 20 + s / 10, setpoint: 21, output: 0.5 }));
        const recorded = [{ points: [{ at: at(0), value: 4 }, { at: at(10), value: null }, { at: at(30), value: 5 }] }];
        const row = (p) => ({ t: Date.parse(p.at) / 1000, m: p.measured, s: p.setpoint, o: p.output * 100 });
        const columns = mergeRecorded(loop, recorded, row);
        const shown = (column) => column.map((x) => (x === undefined ? 'undefined' : x));
        return { t: columns.t.map((t) => t % 60), m: shown(columns.m), r: columns.r.map(shown) };
      })`);
      assert.deepEqual(merged, {
        t: [0, 10, 20, 30],
        m: [20, 'undefined', 22, 'undefined'],
        r: [[4, null, 'undefined', 5]],
      });
    });

    test('and the page threw no error', () => {
      assert.deepEqual(pageErrors, []);
    });
  });
