/**
 * The dashboard's Autotune section in a real browser (Chromium through playwright-core) on the
 * demo node (its HTTP server and SQLite store, a ManualClock, no broker). The autotune routes
 * answer per src/operations/schemas.ts from a stand-in in the browser's network layer
 * (page.route): POST …/autotune and …/tuning, GET …/tunings, and the `autotune` and `tuning`
 * fields of GET /api/loops and /api/loops/{loop}; the event stream is empty (the real one would
 * send the daemon's own autotune fields); every other request goes to the real daemon.
 * The stand-in plays the daemon: a start on the fermenter (split range) runs, one on the room is
 * refused, a cancel aborts, a finished run proposes version 2.
 *
 * Needs /usr/bin/chromium; without it the suite is skipped and says why. With
 * HOMEOSTAT_SCREENSHOT_DIR set it also writes the pictures dashboard-autotune-running.png, -done.png
 * (README: docs/dashboard-autotune.png) and -phone.png there.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page, type Route } from 'playwright-core';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { demoConfigText } from '../support/config.js';
import { startTestNode, type TestNode } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { CHROMIUM, CHROMIUM_ARGS, serving } from './support.js';

const SKIP = existsSync(CHROMIUM)
  ? false
  : `needs Chromium at ${CHROMIUM} (apt-get install chromium; CI installs it): not run here`;
/** Where to write the screenshots (none when unset). */
const SHOTS = process.env.HOMEOSTAT_SCREENSHOT_DIR;
const MIN = 60_000;

const SUITE =
  "the dashboard's Autotune section in Chromium, the demo node, the autotune routes per the contract";

interface LoopFake {
  autotune: Record<string, unknown> | null;
  tuning: {
    active: number | 'config';
    latest: number | null;
    refused?: { reason: string; generation: number };
  };
  tunings: Record<string, unknown>[];
}

/** A finished run's result as the status shows it (src/operations/schemas.ts autotuneView.result). */
const MODEL = {
  gain: -19.8,
  timeConstantS: 3540,
  deadTimeS: 62.3,
  ambient: 18.1,
  standardError: { gain: 0.72, timeConstantS: 151, deadTimeS: 4.1 },
  rmsResidual: 0.038,
};
const RESULT = { ...MODEL, kp: 0.0724, tiS: 3540, tdS: 0, closedLoopS: 124.6, band: 0.25, windowS: 62 };

const tuningRow = (version: number, source: string, kp: number, tiS: number, extra = {}) => ({
  version,
  createdAt: `2026-01-0${version}T09:00:00.000Z`,
  source,
  gains: { kp, tiS, tdS: 0 },
  ...extra,
});

// A skipped test rather than a skipped suite: the run's summary counts it as skipped.
if (SKIP) test(SUITE, { skip: SKIP }, () => {});
else
  describe(SUITE, () => {
    let node: TestNode;
    let browser: Browser;
    let page: Page;
    const pageErrors: string[] = [];
    /** The POSTs the page sent to the autotune routes: [path, body]. */
    const posts: [string, unknown][] = [];
    const fakes = new Map<string, LoopFake>();
    const cleanups: (() => unknown)[] = [];
    const suite = { after: (fn: () => unknown) => cleanups.push(fn) };
    let closing = false;
    after(async () => {
      closing = true;
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    const fake = (loop: string): LoopFake => {
      let found = fakes.get(loop);
      if (!found) {
        found = { autotune: null, tuning: { active: 'config', latest: null }, tunings: [] };
        fakes.set(loop, found);
      }
      return found;
    };
    const withFake = (view: { loop: string }) => {
      const { autotune, tuning } = fake(view.loop);
      const { autotune: _real, ...rest } = view as { loop: string; autotune?: unknown };
      return { ...rest, ...(autotune === null ? {} : { autotune }), tuning };
    };

    /** The daemon's side of the contract, for the routes it does not serve (yet). */
    async function answer(route: Route): Promise<void> {
      const request = route.request();
      const url = new URL(request.url());
      const match = /^\/api\/loops(?:\/([^/]+)(?:\/(autotune|tuning|tunings))?)?$/.exec(url.pathname);
      if (!match) return route.continue();
      const [, loopPart, what] = match;
      const json = (status: number, body: unknown) =>
        route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });
      if (request.method() === 'GET' && !what) {
        const real = await route.fetch();
        const body = (await real.json()) as { loops?: { loop: string }[]; loop?: string };
        if (body.loops) return json(real.status(), { loops: body.loops.map(withFake) });
        return json(real.status(), real.ok() ? withFake(body as { loop: string }) : body);
      }
      const loop = decodeURIComponent(loopPart!);
      const state = fake(loop);
      if (what === 'tunings') {
        const tunings = [...state.tunings]
          .reverse()
          .map((t) => ({ ...t, active: t.version === state.tuning.active }));
        return json(200, { loop, active: state.tuning.active, tunings });
      }
      const body = request.postDataJSON() as Record<string, unknown>;
      posts.push([url.pathname, body]);
      if (what === 'autotune') {
        if (loop === 'room') {
          return json(422, {
            loop,
            accepted: false,
            reason: 'loop "room": a latched fault holds the loop safe: reset it first',
          });
        }
        if (loop === 'greenhouse_humidity') {
          // Accepted and stored; the loop refuses it at its next cycle and its status says why.
          state.tuning = {
            ...state.tuning,
            refused: { reason: 'the sensor cannot be used: reading is stale', generation: 12 },
          };
          return json(200, { loop, accepted: true, generation: 12 });
        }
        state.autotune =
          body.action === 'cancel'
            ? { ...state.autotune, phase: 'aborted', remainingMs: 0, abortReason: 'cancelled by http' }
            : {
                phase: 'relay',
                side: body.side,
                cycles: 1,
                cyclesNeeded: 3,
                elapsedMs: 25 * MIN,
                remainingMs: 40 * MIN,
                remainingIsLimit: false,
                hysteresis: 0.12,
              };
        return json(200, { loop, accepted: true, generation: 10 });
      }
      const version = body.version === 'latest' ? state.tuning.latest : body.version;
      const known = version === 'config' || state.tunings.some((t) => t.version === version);
      if (!known)
        return json(422, {
          loop,
          accepted: false,
          reason: `loop "${loop}" has no tuning version ${version}`,
        });
      const changed = state.tuning.active !== version;
      state.tuning = { ...state.tuning, active: version as number | 'config' };
      return json(200, { loop, accepted: true, generation: 11, changed });
    }

    before(async () => {
      const dir = tempDir(suite, 'homeostat-dashboard-autotune-');
      node = await startTestNode(demoConfigText(), path.join(dir, 'state.db'), {
        clock: new ManualClock(Date.UTC(2026, 0, 1)),
        http: { port: 0 },
      });
      suite.after(() => node.stop());
      await node.clock.advance(10 * MIN);
      fake('fermenter').tunings = [tuningRow(1, 'manual', 0.05, 3600)];
      fake('fermenter').tuning = { active: 1, latest: 1 };
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
      suite.after(() => browser.close());
      page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
      page.on('pageerror', (error) => pageErrors.push(error.message));
      // A request still in flight when the browser closes (after the suite) is no failure.
      await page.route('**/api/loops**', (route) =>
        answer(route).catch((error) => (closing ? undefined : Promise.reject(error))),
      );
      // The real stream would send the daemon's own autotune and tuning (none) over the stand-in's:
      // an empty stream that asks the page to come back in an hour.
      await page.route('**/api/stream', (route) =>
        route.fulfill({ status: 200, contentType: 'text/event-stream', body: 'retry: 3600000\n\n' }),
      );
      await page.goto(`${await serving(node.node)}/`);
      await page.locator('[data-loop="greenhouse_humidity"]').waitFor();
    });

    const card = (loop: string) => page.locator(`[data-loop="${loop}"]`);
    const role = (loop: string, name: string) => card(loop).locator(`[data-role="${name}"]`);

    test('when the page opens, then each PID loop has an Autotune section; a side choice only on the split-range fermenter', async () => {
      await role('fermenter', 'autotune').click({ position: { x: 10, y: 10 } }); // opens the details
      await role('fermenter', 'autotune-side').waitFor();
      const sides = await role('fermenter', 'autotune-side').locator('option').allTextContents();
      assert.deepEqual(sides, ['heater', 'cooler']);
      assert.equal(await role('room', 'autotune').isHidden(), false, 'the section shows on the room');
      await role('room', 'autotune').click({ position: { x: 10, y: 10 } });
      assert.equal(await role('room', 'autotune-side-label').isHidden(), true, 'one side: nothing to choose');
      assert.match(
        (await role('room', 'autotune-about').textContent()) ?? '',
        /^Switches the heater on and off around the setpoint until the oscillation is steady, at most 48 h/,
      );
    });

    test('when the daemon refuses a start, then the card shows its reason and the start stays', async () => {
      await role('room', 'autotune-start').click();
      await card('room').locator('[data-role="message"][data-state="error"]').waitFor();
      assert.equal(
        await role('room', 'message').textContent(),
        'Autotune start: refused — loop "room": a latched fault holds the loop safe: reset it first',
      );
      assert.equal(await role('room', 'autotune-start').isVisible(), true);
      assert.equal(await role('room', 'autotune-progress').isHidden(), true);
    });

    test("when the daemon accepts a start that the loop then refuses, then the card shows the loop's reason", async () => {
      await role('greenhouse_humidity', 'autotune').click({ position: { x: 10, y: 10 } });
      await role('greenhouse_humidity', 'autotune-start').click();
      await card('greenhouse_humidity').locator('[data-role="message"][data-state="error"]').waitFor();
      assert.equal(
        await role('greenhouse_humidity', 'message').textContent(),
        'Autotune start: refused by the loop — the sensor cannot be used: reading is stale',
      );
      assert.deepEqual(posts.at(-1), ['/api/loops/greenhouse_humidity/autotune', { action: 'start' }]);
    });

    test('when a start is sent with the cooler chosen, then the POST names the side and the card shows the progress: phase, cycles n/m, elapsed, time left, and Cancel', async () => {
      await role('fermenter', 'autotune-side').selectOption('lower');
      await role('fermenter', 'autotune-start').click();
      await role('fermenter', 'autotune-cancel').waitFor();
      assert.deepEqual(posts.at(-1), ['/api/loops/fermenter/autotune', { action: 'start', side: 'lower' }]);
      assert.equal(
        await role('fermenter', 'autotune-progress').textContent(),
        'Cooler: relay cycles 1/3 · elapsed 25 min · about 40 min left',
      );
      assert.equal(await role('fermenter', 'autotune-start').isHidden(), true);
      assert.equal(await role('fermenter', 'autotune-side-label').isHidden(), true);
      assert.equal(await role('fermenter', 'autotune-bar').isVisible(), true);
      assert.equal(
        await role('fermenter', 'autotune-summary').textContent(),
        '· running, cycles 1/3 · in force: v1',
      );
      if (SHOTS)
        await card('fermenter').screenshot({ path: path.join(SHOTS, 'dashboard-autotune-running.png') });
    });

    test('when Cancel is clicked, then the cancel is sent and the card shows the abort reason', async () => {
      await role('fermenter', 'autotune-cancel').click();
      await role('fermenter', 'autotune-progress').filter({ hasText: 'Aborted' }).waitFor();
      assert.deepEqual(posts.at(-1), ['/api/loops/fermenter/autotune', { action: 'cancel' }]);
      assert.equal(await role('fermenter', 'autotune-progress').textContent(), 'Aborted: cancelled by http');
      assert.equal(await role('fermenter', 'autotune-start').isVisible(), true, 'a new start is offered');
    });

    test('given a finished run proposing version 2, then the model ± its uncertainty, the gains, Accept, and the history with Restore and in force', async () => {
      const fermenter = fake('fermenter');
      fermenter.autotune = {
        phase: 'done',
        side: 'lower',
        cycles: 3,
        cyclesNeeded: 3,
        elapsedMs: 74 * MIN,
        remainingMs: 0,
        remainingIsLimit: false,
        result: RESULT,
      };
      fermenter.tunings.push(
        tuningRow(2, 'autotune', 0.05, 3600, {
          // The cooler tuned: the heater keeps version 1's gains, the cooler gets the result.
          lowerGains: { kp: 0.0724, tiS: 3540, tdS: 0 },
          model: MODEL,
        }),
      );
      fermenter.tuning = { active: 1, latest: 2 };
      await page.reload();
      await role('fermenter', 'autotune-result').waitFor();
      assert.deepEqual(await role('fermenter', 'autotune-result-text').locator('p').allTextContents(), [
        'Model: gain -19.8 ± 0.72 °C at full output · τ 3540 ± 151 s · θ 62.3 ± 4.1 s · rms residual 0.038 °C',
        'Gains: kp 0.0724 · Ti 3540 s · Td 0 s',
        'Relay: a 62 s window · or a duty band ±0.25 °C',
      ]);
      assert.equal(await role('fermenter', 'autotune-progress').textContent(), 'Done: 3 cycles in 74 min');
      assert.equal(await role('fermenter', 'tuning-accept').textContent(), 'Accept (version 2)');
      await role('fermenter', 'tuning-history').locator('tr').nth(2).waitFor();
      assert.deepEqual(await historyRows(), [
        ['v2', 'Restore'],
        ['v1', 'in force'],
        ['config', 'Back to config'],
      ]);
      const gainsCell = (version: number) =>
        role('fermenter', 'tuning-history').locator(`tr[data-version="${version}"] td`).nth(3).textContent();
      assert.equal(await gainsCell(2), 'heat: kp 0.05 · Ti 3600 s · cool: kp 0.0724 · Ti 3540 s');
      assert.equal(await gainsCell(1), 'kp 0.05 · Ti 3600 s');
      if (SHOTS) {
        await card('fermenter').screenshot({ path: path.join(SHOTS, 'dashboard-autotune-done.png') });
        await page.setViewportSize({ width: 390, height: 1400 });
        await role('fermenter', 'autotune').screenshot({
          path: path.join(SHOTS, 'dashboard-autotune-phone.png'),
        });
        await page.setViewportSize({ width: 1280, height: 1400 });
      }
    });

    test('when Accept is clicked, then "latest" is sent and version 2 shows in force; Restore 1 and Back to config send theirs', async () => {
      await role('fermenter', 'tuning-accept').click();
      await role('fermenter', 'tuning-history').locator('tr[data-version="2"][data-active]').waitFor();
      assert.deepEqual(posts.at(-1), ['/api/loops/fermenter/tuning', { version: 'latest' }]);
      await role('fermenter', 'tuning-accept').waitFor({ state: 'hidden' }); // nothing left to accept
      assert.equal(
        await role('fermenter', 'message').textContent(),
        'Accept tuning: accepted (generation 11)',
      );

      await role('fermenter', 'tuning-history').locator('button[data-version="1"]').click();
      await role('fermenter', 'tuning-history').locator('tr[data-version="1"][data-active]').waitFor();
      assert.deepEqual(posts.at(-1), ['/api/loops/fermenter/tuning', { version: 1 }]);

      await role('fermenter', 'tuning-history').locator('button[data-version="config"]').click();
      await role('fermenter', 'tuning-history').locator('tr[data-version="config"][data-active]').waitFor();
      assert.deepEqual(posts.at(-1), ['/api/loops/fermenter/tuning', { version: 'config' }]);
      assert.deepEqual(await historyRows(), [
        ['v2', 'Restore'],
        ['v1', 'Restore'],
        ['config', 'in force'],
      ]);
    });

    test('and the page threw no error', () => {
      assert.deepEqual(pageErrors, []);
    });

    /** The history as [version, last cell] per row. */
    async function historyRows(): Promise<string[][]> {
      const rows = await role('fermenter', 'tuning-history').locator('tr').all();
      const out: string[][] = [];
      for (const row of rows) {
        const cells = await row.locator('td').allTextContents();
        out.push([cells[0]!, cells.at(-1)!]);
      }
      return out;
    }
  });
