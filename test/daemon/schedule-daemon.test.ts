/**
 * Presets, schedules and profiles through the daemon: the effective setpoint reaches
 * reconcile at the injected clock's time, a clock step moves a started profile, and a restart
 * on the same SQLite file resumes a profile at the right step and setpoint.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { nodeTimeZone } from '../../src/config/schema/schedule.js';
import type { Config } from '../../src/config/schema.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { buildDrivers } from '../../src/kinds/build.js';
import type { PublishedLoopStatus } from '../../src/runtime/loop-reconciler.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { openStore } from '../../src/store/database.js';
import { DesiredStore } from '../../src/store/desired-store.js';
import { StateStore } from '../../src/store/state-store.js';
import { minimalSimConfig } from '../support/config.js';
import { silentLogger } from '../support/logger.js';
import { inMemoryStore } from '../support/store.js';
import { makeTempDir } from '../support/tmp.js';

const HOUR = 3_600_000;
// Thursday 2026-01-01 05:00 UTC.
const START_MS = Date.UTC(2026, 0, 1, 5, 0);

const SCHEDULED = `    presets:
      eco: { setpoint: 15 }
    schedule:
      weekly:
        - { days: [mon, tue, wed, thu, fri, sat, sun], at: "06:00", setpoint: 22 }
        - { days: [mon, tue, wed, thu, fri, sat, sun], at: "20:00", preset: eco }
    profiles:
      ale:
        steps:
          - { holdS: 7200, setpoint: 18 }
          - { rampS: 7200, to: 24 }
          - { holdS: 7200, setpoint: 24 }`;

// The node zone defaults to the system's: these tests pin it to UTC (their times are UTC).
let savedTz: string | undefined;
before(() => {
  savedTz = process.env.TZ;
  process.env.TZ = 'UTC';
});
after(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

function room(daemon: Daemon): PublishedLoopStatus {
  const status = daemon.statuses().find((s) => s.loop === 'room');
  assert.ok(status, 'room reports a status');
  return status as PublishedLoopStatus;
}

/** A started daemon on an in-memory store, and that store (what commands write to). */
async function runningDaemon(config: Config, clock: ManualClock) {
  const drivers = buildDrivers(config, clock);
  const { store, configText } = inMemoryStore(clock);
  const daemon = new Daemon({
    config,
    clock,
    logger: silentLogger,
    drivers,
    statusEveryMs: 0,
    store,
    configText,
  });
  await daemon.start();
  await clock.advance(1_000);
  return { daemon, store: store.desired };
}

describe('daemon: the effective setpoint reaches reconcile', () => {
  test('a loop without presets, schedule or profiles has no schedule part and regulates to its setpoint', async () => {
    const clock = new ManualClock(START_MS);
    const { daemon } = await runningDaemon(minimalSimConfig(), clock);
    const status = room(daemon);
    assert.equal(status.setpoint, 20);
    assert.equal('schedule' in status, false);
    await daemon.stop();
  });

  test('given a weekly schedule, the loop regulates to the entry in force and switches at its time', async () => {
    const config = minimalSimConfig({ loopExtra: SCHEDULED });
    assert.equal(nodeTimeZone(config), 'UTC');
    const clock = new ManualClock(START_MS);
    const { daemon } = await runningDaemon(config, clock);
    // 05:00: yesterday's 20:00 entry (preset eco) is in force, not the file's 20.
    assert.equal(room(daemon).setpoint, 15);
    assert.deepEqual(
      { source: room(daemon).schedule?.source, preset: room(daemon).schedule?.preset },
      { source: 'schedule', preset: 'eco' },
    );
    assert.equal(room(daemon).schedule?.next[0]?.at, '2026-01-01T06:00:00.000Z');
    // One second after 06:00 the loop has acted on 22: it woke at the point, not at a resync.
    await clock.advance(HOUR - 1_000 + 1_000);
    assert.equal(room(daemon).setpoint, 22);
    assert.equal(room(daemon).schedule?.source, 'schedule');
    await daemon.stop();
  });

  test('given a manual setpoint, it holds until the next point, then the schedule is back', async () => {
    const config = minimalSimConfig({ loopExtra: SCHEDULED });
    const clock = new ManualClock(START_MS);
    const { daemon, store } = await runningDaemon(config, clock);
    store.setDesired('room', { setpoint: 19 }, 'mqtt');
    await clock.advance(10_000);
    assert.equal(room(daemon).setpoint, 19);
    assert.equal(room(daemon).schedule?.heldUntil, '2026-01-01T06:00:00.000Z');
    await clock.advance(HOUR);
    assert.equal(room(daemon).setpoint, 22);
    await daemon.stop();
  });

  test('given a started profile, the loop follows its steps (wins over the schedule), with its progress', async () => {
    const config = minimalSimConfig({ loopExtra: SCHEDULED });
    const clock = new ManualClock(START_MS);
    const { daemon, store } = await runningDaemon(config, clock);
    store.profileCommand('room', { action: 'start', name: 'ale' }, 'cli');
    await clock.advance(5_000);
    assert.equal(room(daemon).setpoint, 18);
    assert.equal(room(daemon).schedule?.profile?.stepIndex, 0);
    await clock.advance(3 * HOUR);
    // 3 h in: half way up the ramp 18 → 24 (within a cycle's resync).
    const status = room(daemon);
    assert.equal(status.schedule?.profile?.stepKind, 'ramp');
    assert.ok(Math.abs(status.setpoint - 21) < 0.2, `setpoint ${status.setpoint}`);
    await daemon.stop();
  });
});

describe('daemon: a clock step moves a started profile (neither skipped nor repeated)', () => {
  for (const stepMs of [HOUR, -HOUR]) {
    test(`a wall-clock step of ${stepMs / HOUR} h leaves the profile's remaining time as it was`, async () => {
      const config = minimalSimConfig({ loopExtra: SCHEDULED });
      const clock = new ManualClock(START_MS);
      const { daemon, store } = await runningDaemon(config, clock);
      store.profileCommand('room', { action: 'start', name: 'ale' }, 'cli');
      const startedAtMs = store.desired('room')!.profileRun!.startedAtMs;
      await clock.advance(30 * 60_000);
      const before = room(daemon).schedule!.profile!;
      clock.stepWall(stepMs);
      await clock.advance(60_000);
      const after = room(daemon).schedule!.profile!;
      assert.equal(
        store.desired('room')!.profileRun!.startedAtMs,
        startedAtMs + stepMs,
        'the start moved with the step',
      );
      assert.equal(after.stepIndex, 0);
      // One more minute of profile time, whatever the clock did.
      assert.ok(
        Math.abs(before.totalRemainingS - after.totalRemainingS - 60) <= 1,
        `${before.totalRemainingS} → ${after.totalRemainingS}`,
      );
      assert.equal(room(daemon).setpoint, 18);
      await daemon.stop();
    });
  }
});

describe('daemon: a restart mid-profile on the same SQLite file', () => {
  test('given a profile started and the daemon stopped, when started again later, then it is at the right step and setpoint', async () => {
    // In-process restart: two Daemons one after the other on the same store file (temp dir).
    const { dir, remove } = makeTempDir();
    const path = join(dir, 'homeostat.db');
    const config = minimalSimConfig({ loopExtra: SCHEDULED });
    const clock = new ManualClock(START_MS);
    const daemonOn = (clockNow: () => number) => {
      const db = openStore({ path, logger: silentLogger, nowMs: clockNow }).db;
      const store = { desired: new DesiredStore(db, clockNow), state: new StateStore(db) };
      const drivers = buildDrivers(config, clockNow);
      const daemon = new Daemon({
        config,
        clock,
        logger: silentLogger,
        drivers,
        statusEveryMs: 0,
        store,
        configText: '# restart test\n',
      });
      return { daemon, db, store };
    };
    try {
      const first = daemonOn(() => clock.nowMs());
      await first.daemon.start();
      first.store.desired.profileCommand('room', { action: 'start', name: 'ale' }, 'cli');
      await clock.advance(60 * 60_000);
      assert.equal(room(first.daemon).setpoint, 18);
      await first.daemon.stop();
      first.db.close();

      // Down for 2.5 h: the profile is 3.5 h in, in the ramp, 18 + 6 × 1.5/2 = 22.5.
      await clock.advance(150 * 60_000);
      const second = daemonOn(() => clock.nowMs());
      await second.daemon.start();
      await clock.advance(1_000);
      const status = room(second.daemon);
      assert.equal(status.schedule?.profile?.name, 'ale');
      assert.equal(status.schedule?.profile?.stepIndex, 1);
      assert.ok(Math.abs(status.setpoint - 22.5) < 0.01, `setpoint ${status.setpoint}`);
      await second.daemon.stop();
      second.db.close();
    } finally {
      remove();
    }
  });
});
