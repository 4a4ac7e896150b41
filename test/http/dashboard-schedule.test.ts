/**
 * The dashboard's presets, schedule, profile and sensor set in a real browser
 * (Chromium through playwright-core) against a real node: the demo config with presets, a weekly
 * schedule and three sensors on the room (one stuck at 85 °C, dropped as an outlier) and a
 * profile on the fermenter, its HTTP server, the real event stream and a SQLite file, on a
 * ManualClock that only moves when a test moves it. The browser runs in the node's time zone
 * (Europe/Berlin, en-GB), so the times on the page are the schedule's.
 *
 * Needs /usr/bin/chromium; without it the suite is skipped and says why. With
 * HOMEOSTAT_SCREENSHOT_DIR set it also writes dashboard-schedule.png (the room and fermenter
 * cards) and dashboard-schedule-phone.png there.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { SimSensor } from '../../src/drivers/sim/sensor.js';
import type { CommandResult } from '../../src/operations/schemas.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { demoConfigText } from '../support/config.js';
import { startTestNode, type TestNode } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { CHROMIUM, CHROMIUM_ARGS, postJson, serving, setSetpointThroughPage } from './support.js';

const SKIP = existsSync(CHROMIUM)
  ? false
  : `needs Chromium at ${CHROMIUM} (apt-get install chromium; CI installs it): not run here`;
/** Where to write the screenshots (none when unset). */
const SHOTS = process.env.HOMEOSTAT_SCREENSHOT_DIR;
const MIN = 60_000;
/** Monday 2 March 2026, 06:00 in Berlin (UTC+1): before the 06:30 schedule point. */
const START_MS = Date.UTC(2026, 2, 2, 5, 0);
const EVERY_DAY = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

const TEXT = demoConfigText((doc) => {
  doc.setIn(['node', 'timeZone'], 'Europe/Berlin');
  for (const probe of ['room_temp_b', 'room_temp_c'])
    doc.setIn(['sensors', probe], doc.createNode({ kind: 'simulated', plant: 'room', periodS: 10 }));
  doc.deleteIn(['loops', 'room', 'sensor']);
  doc.setIn(['loops', 'room', 'sensors'], doc.createNode(['room_temp', 'room_temp_b', 'room_temp_c']));
  doc.setIn(['loops', 'room', 'minHealthy'], 2);
  doc.setIn(['loops', 'room', 'outlierLimit'], 2);
  doc.setIn(
    ['loops', 'room', 'presets'],
    doc.createNode({ comfort: { setpoint: 21.5 }, eco: { setpoint: 17 } }),
  );
  doc.setIn(
    ['loops', 'room', 'schedule'],
    doc.createNode({
      weekly: [
        { days: EVERY_DAY, at: '06:30', preset: 'comfort' },
        { days: EVERY_DAY, at: '22:00', setpoint: 18 },
      ],
    }),
  );
  // Hours rather than days: the test moves the clock through a step.
  doc.setIn(
    ['loops', 'fermenter', 'profiles'],
    doc.createNode({
      ale: {
        steps: [
          { holdS: 2 * 3600, setpoint: 18 },
          { rampS: 2 * 3600, to: 21 },
          { holdS: 3 * 3600, setpoint: 21 },
          { holdS: 3600, setpoint: 2 },
        ],
      },
    }),
  );
});

const SUITE =
  "the dashboard's presets, schedule, profile and sensors in Chromium, on a real node (SQLite, ManualClock)";

// A skipped test rather than a skipped suite: the run's summary counts it as skipped.
if (SKIP) test(SUITE, { skip: SKIP }, () => {});
else
  describe(SUITE, () => {
    let node: TestNode;
    let base: string;
    let browser: Browser;
    let page: Page;
    const pageErrors: string[] = [];
    /** The POSTs the page sent: [path, body]. */
    const posts: [string, unknown][] = [];
    const cleanups: (() => unknown)[] = [];
    const suite = { after: (fn: () => unknown) => cleanups.push(fn) };
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    before(async () => {
      const dir = tempDir(suite, 'homeostat-dashboard-schedule-');
      node = await startTestNode(TEXT, path.join(dir, 'state.db'), {
        clock: new ManualClock(START_MS),
        http: { port: 0 },
      });
      suite.after(() => node.stop());
      base = `http://127.0.0.1:${new URL(await serving(node.node)).port}`;
      (node.node.drivers.sensors.get('room_temp_c') as SimSensor).injectFault({ kind: 'spike', value: 85 });
      await node.clock.advance(MIN);
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
      suite.after(() => browser.close());
      const context = await browser.newContext({
        viewport: { width: 1280, height: 1400 },
        timezoneId: 'Europe/Berlin',
        locale: 'en-GB',
      });
      page = await context.newPage();
      page.on('pageerror', (error) => pageErrors.push(error.message));
      page.on('request', (request) => {
        if (request.method() === 'POST' && request.url().includes('/api/loops/'))
          posts.push([new URL(request.url()).pathname, request.postDataJSON()]);
      });
      await page.goto(`${base}/`);
      await page.locator('[data-loop="greenhouse_humidity"]').waitFor();
      await page.locator('#live[data-state="ok"]').waitFor(); // the event stream is open
    });

    const card = (loop: string) => page.locator(`[data-loop="${loop}"]`);
    const role = (loop: string, name: string) => card(loop).locator(`[data-role="${name}"]`);
    const text = async (loop: string, name: string) => (await role(loop, name).textContent()) ?? '';
    /** One cycle of every loop: the daemon publishes the new statuses, the stream brings them. */
    const cycle = () => node.clock.advance(10_000);

    test('when the page opens, then the room shows its presets (none in force), the setpoint from the schedule and the next changes in local time', async () => {
      const options = await role('room', 'preset-select').locator('option').allTextContents();
      assert.deepEqual(options, ['none', 'comfort', 'eco']);
      assert.equal(await role('room', 'preset-select').inputValue(), '');
      assert.equal(await text('room', 'setpoint-source'), 'Setpoint from the schedule');
      assert.deepEqual(await role('room', 'next-list').locator('li').allTextContents(), [
        '06:30 → 21.5 °C',
        '22:00 → 18.0 °C',
        'Tue 06:30 → 21.5 °C',
      ]);
      assert.equal(await role('room', 'profile').isHidden(), true, 'the room has no profiles');
    });

    test('then the room shows its three sensors: the summary, and the one dropped with its reason', async () => {
      assert.match(
        await text('room', 'sensors-summary'),
        /^Sensors: median of 3 \(dropped room_temp_c: \d+(\.\d+)? °C from the others\)$/,
      );
      const dropped = role('room', 'sensors-dropped').locator('li');
      assert.equal(await dropped.count(), 1);
      assert.equal(await dropped.getAttribute('data-sensor'), 'room_temp_c');
      assert.match(
        (await dropped.textContent()) ?? '',
        /^room_temp_c outlier: reading 85 is [\d.]+ from the median [\d.]+ of the healthy sensors \(limit 2\)$/,
      );
    });

    test('and a loop with none of it (the greenhouse) shows no preset, schedule, profile or sensor set', async () => {
      for (const name of ['preset-label', 'schedule', 'profile', 'sensors'])
        assert.equal(await role('greenhouse_humidity', name).isHidden(), true, name);
    });

    test('when preset eco is chosen, then it is sent, accepted, and at the next cycle the setpoint comes from it, held until the next schedule point', async () => {
      await role('room', 'preset-select').selectOption('eco');
      await card('room').locator('[data-role="message"][data-state="ok"]').waitFor();
      assert.deepEqual(posts.at(-1), ['/api/loops/room/preset', { preset: 'eco' }]);
      assert.match(await text('room', 'message'), /^Preset eco: accepted \(generation \d+\)$/);
      assert.equal(node.store.desired.desired('room')?.preset, 'eco', 'stored');
      await cycle();
      await role('room', 'setpoint-source').and(page.locator('[data-source="preset"]')).waitFor();
      assert.equal(await text('room', 'setpoint-source'), 'Setpoint from preset eco, held until 06:30');
      await card('room')
        .locator('[data-role="setpoint"]', { hasText: /^17\.0 °C$/ })
        .waitFor();
      assert.equal(await role('room', 'preset-select').inputValue(), 'eco');
    });

    test('given the fermenter with a profile and nothing started, then it offers the start and shows no progress', async () => {
      assert.deepEqual(await role('fermenter', 'profile-select').locator('option').allTextContents(), [
        'ale',
      ]);
      assert.equal(await role('fermenter', 'profile-start').isVisible(), true);
      for (const name of [
        'profile-pause',
        'profile-resume',
        'profile-stop',
        'profile-progress',
        'profile-bar',
      ])
        assert.equal(await role('fermenter', name).isHidden(), true, name);
      assert.equal(await text('fermenter', 'setpoint-source'), 'Setpoint set by hand');
      assert.equal(await role('fermenter', 'preset-label').isHidden(), true, 'the fermenter has no presets');
    });

    test('when the profile is started, then its progress shows: step 1 of 4, hold, the time left, the bar, and the next changes', async () => {
      await role('fermenter', 'profile-start').click();
      await card('fermenter').locator('[data-role="message"][data-state="ok"]').waitFor();
      assert.deepEqual(posts.at(-1), ['/api/loops/fermenter/profile', { action: 'start', name: 'ale' }]);
      await cycle();
      await role('fermenter', 'profile-pause').waitFor();
      assert.equal(
        await text('fermenter', 'profile-progress'),
        'Profile ale, running: step 1 of 4, hold · 2 h left in the step · 8 h in total',
      );
      assert.equal(await text('fermenter', 'setpoint-source'), 'Setpoint from profile ale');
      assert.deepEqual(await barOf('fermenter'), { value: 0, max: 4 });
      assert.equal(
        await role('fermenter', 'profile-choice').isHidden(),
        true,
        'no second start while running',
      );
      assert.equal(await role('fermenter', 'profile-stop').isVisible(), true);
      assert.deepEqual(await role('fermenter', 'next-list').locator('li').allTextContents(), [
        '08:01 → 21.0 °C',
        '10:01 → 21.0 °C',
        '13:01 → 2.0 °C',
      ]);
    });

    test('when the clock passes the first hold, then the card shows step 2 of 4, the ramp, and the bar moves', async () => {
      for (let i = 0; i < 13; i++) await node.clock.advance(10 * MIN);
      await role('fermenter', 'profile-progress').filter({ hasText: 'step 2 of 4, ramp' }).waitFor();
      assert.equal(
        await text('fermenter', 'profile-progress'),
        'Profile ale, running: step 2 of 4, ramp · 1 h 50 min left in the step · 5 h 50 min in total',
      );
      assert.deepEqual(await barOf('fermenter'), { value: 1, max: 4 });
      // The ramp moves the setpoint by fractions: the field shows it to the step's decimals.
      assert.match(await role('fermenter', 'setpoint-input').inputValue(), /^\d+(\.\d)?$/);
      assert.match(await text('fermenter', 'updated'), /setpoint from profile/);
      if (SHOTS) {
        await card('room').screenshot({ path: path.join(SHOTS, 'dashboard-schedule-room.png') });
        await card('fermenter').screenshot({ path: path.join(SHOTS, 'dashboard-schedule.png') });
      }
    });

    test('when Pause and then Resume are clicked, then each is sent and the card shows paused, then running', async () => {
      await role('fermenter', 'profile-pause').click();
      await card('fermenter')
        .locator('[data-role="message"]', { hasText: 'Profile pause: accepted' })
        .waitFor();
      assert.deepEqual(posts.at(-1), ['/api/loops/fermenter/profile', { action: 'pause' }]);
      await cycle();
      await role('fermenter', 'profile-resume').waitFor();
      assert.match(await text('fermenter', 'profile-progress'), /^Profile ale, paused: step 2 of 4, ramp · /);
      assert.equal(await role('fermenter', 'profile-pause').isHidden(), true);

      await role('fermenter', 'profile-resume').click();
      await card('fermenter')
        .locator('[data-role="message"]', { hasText: 'Profile resume: accepted' })
        .waitFor();
      assert.deepEqual(posts.at(-1), ['/api/loops/fermenter/profile', { action: 'resume' }]);
      await cycle();
      await role('fermenter', 'profile-pause').waitFor();
      assert.match(
        await text('fermenter', 'profile-progress'),
        /^Profile ale, running: step 2 of 4, ramp · /,
      );
    });

    test('when Stop is clicked, then it is sent, the progress goes and the start is offered again', async () => {
      await role('fermenter', 'profile-stop').click();
      await card('fermenter')
        .locator('[data-role="message"]', { hasText: 'Profile stop: accepted' })
        .waitFor();
      assert.deepEqual(posts.at(-1), ['/api/loops/fermenter/profile', { action: 'stop' }]);
      await cycle();
      await role('fermenter', 'profile-start').waitFor();
      for (const name of [
        'profile-pause',
        'profile-resume',
        'profile-stop',
        'profile-progress',
        'profile-bar',
      ])
        assert.equal(await role('fermenter', name).isHidden(), true, name);
      assert.equal(node.store.desired.desired('fermenter')?.profileRun, undefined, 'stored');
    });

    test('when the room setpoint is changed by hand, then it holds until the next schedule point and no preset is in force', async () => {
      await setSetpointThroughPage(page, 'room', '19.5');
      await cycle();
      await role('room', 'setpoint-source').and(page.locator('[data-source="manual"]')).waitFor();
      assert.equal(await text('room', 'setpoint-source'), 'Setpoint set by hand, held until 22:00');
      assert.equal(await role('room', 'preset-select').inputValue(), '', 'preset none');
    });

    test("when the daemon refuses a preset (the loop's change budget is spent), then the card shows its reason and the select goes back", async () => {
      // Someone else spends the room's budget through the API (the clock stands still meanwhile).
      for (let i = 0; i < 20; i++) {
        const preset = i % 2 === 0 ? 'comfort' : 'eco';
        const answer = await postJson<CommandResult>(base, '/api/loops/room/preset', { preset });
        if (answer.status === 429) break;
      }
      const inForce = node.store.desired.desired('room')?.preset ?? '';
      const shown = await role('room', 'preset-select').inputValue();
      const other = shown === 'comfort' ? 'none' : 'comfort';
      await role('room', 'preset-select').selectOption({ label: other });
      await card('room').locator('[data-role="message"][data-state="error"]').waitFor();
      assert.match(
        await text('room', 'message'),
        new RegExp(`^Preset ${other}: refused — too many changes: loop room accepts \\d+ at once`),
      );
      assert.equal(node.store.desired.desired('room')?.preset ?? '', inForce, 'nothing stored');
      assert.equal(await role('room', 'preset-select').inputValue(), shown, 'back to what the card showed');
      if (SHOTS) {
        await page.setViewportSize({ width: 390, height: 1400 });
        await card('room').screenshot({ path: path.join(SHOTS, 'dashboard-schedule-phone.png') });
        await page.setViewportSize({ width: 1280, height: 1400 });
      }
    });

    test('and the page threw no error', () => {
      assert.deepEqual(pageErrors, []);
    });

    /** The profile bar's value and max. */
    async function barOf(loop: string): Promise<{ value: number; max: number }> {
      const bar = role(loop, 'profile-bar');
      assert.equal(await bar.isVisible(), true, 'the bar shows');
      return {
        value: Number(await bar.getAttribute('value')),
        max: Number(await bar.getAttribute('max')),
      };
    }
  });
