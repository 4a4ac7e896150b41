/**
 * The demo tells its story (`npm start`): the demo config on its simulated plants, on a manual
 * clock, as `homeostat run` builds it, for three simulated hours with the demo's status check
 * every 5 minutes. What a person reads at the default level (info) is checked here.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { disturbanceMessage, FopdtPlant } from '../../src/drivers/sim/plant.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { demoConfigText } from '../support/config.js';
import { LogLevel, type LogRecord, recordingLogger } from '../support/logger.js';
import { startTestNode } from '../support/node.js';
import { makeTempDir } from '../support/tmp.js';

async function demoHours(hours: number): Promise<LogRecord[]> {
  const log = recordingLogger({ level: 'debug' });
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const temp = makeTempDir('homeostat-demo-story-');
  const node = await startTestNode(demoConfigText(), join(temp.dir, 'demo.db'), {
    clock,
    logger: log.logger,
    statusEveryMs: 300_000,
  });
  try {
    for (let i = 0; i < hours * 6; i++) await clock.advance(600_000);
  } finally {
    await node.stop();
    temp.remove();
  }
  return log.records;
}

describe('the demo at the default level', async () => {
  const records = await demoHours(3);
  const info = records.filter((r) => r.level >= LogLevel.info);
  const statusRecords = info.filter((r) => r.status !== undefined) as Array<
    LogRecord & { status: { loop: string; action: string; output: number }; why: string }
  >;

  test('then the window opening and closing (the room plant, 2 h in, 15 min) are announced at info', () => {
    const plant = info.filter((r) => r.plant === 'room').map((r) => r.msg);
    assert.deepEqual(plant, [
      'simulated plant room: "window open" begins, its ambient 10 → 7 °C for 15 min',
      'simulated plant room: "window open" ends, its ambient 7 → 10 °C',
    ]);
  });

  test("then the fogger's continuous moves are debug lines only", () => {
    const fogger = records.filter((r) => r.actuator === 'fogger' && r.reason === 'regulate');
    assert.ok(fogger.length > 100, `the fogger moved (${fogger.length})`);
    assert.deepEqual(
      fogger.filter((r) => r.level >= LogLevel.info).map((r) => r.msg),
      [],
    );
  });

  test('then no status line says idle while the output is not zero', () => {
    const wrong = statusRecords.filter(
      (r) => r.status.action === 'idle' && Math.abs(r.status.output) >= 0.005,
    );
    assert.deepEqual(
      wrong.map((r) => r.msg),
      [],
    );
  });

  test('then each loop has a first line, then lines on change and hourly, at most one per 5-minute check', () => {
    for (const loop of ['room', 'fermenter', 'greenhouse_humidity']) {
      const lines = statusRecords.filter((r) => r.status.loop === loop);
      assert.equal(lines[0]?.why, 'first', loop);
      assert.ok(lines.length <= 3 * 12, `${loop}: ${lines.length} lines in 3 h`);
      assert.ok(
        lines.every((r) => r.why !== 'interval' || lines.indexOf(r) > 0),
        `${loop}: hourly lines follow a first one`,
      );
    }
  });

  test('then warnings and errors: none in a healthy demo', () => {
    assert.deepEqual(
      records.filter((r) => r.level >= LogLevel.warn).map((r) => r.msg),
      [],
    );
  });
});

describe('a simulated disturbance', () => {
  test('given a window 60 s in for 15 min, when the plant is read across it, then its start and end are told once each', () => {
    const told: string[] = [];
    const plant = new FopdtPlant(
      { ambient: 10, timeConstantS: 600, disturbances: [{ atS: 60, offset: -3, durationS: 900 }] },
      0,
      { onDisturbance: (event) => told.push(disturbanceMessage('room', '°C', event)) },
    );
    for (let s = 0; s <= 1200; s += 10) plant.valueAt(s * 1000);
    assert.deepEqual(told, [
      'simulated plant room: a disturbance begins, its ambient 10 → 7 °C for 15 min',
      'simulated plant room: a disturbance ends, its ambient 7 → 10 °C',
    ]);
  });

  test('given one that never ends and a listener that throws, then the plant still runs', () => {
    const plant = new FopdtPlant(
      { ambient: 45, timeConstantS: 600, kind: 'humidity', disturbances: [{ atS: 0, offset: 5 }] },
      0,
      {
        onDisturbance: () => {
          throw new Error('listener defect');
        },
      },
    );
    assert.ok(plant.valueAt(3_600_000) > 49);
    assert.equal(
      disturbanceMessage('air', '%RH', { edge: 'start', atMs: 0, ambientBefore: 45, ambientAfter: 50 }),
      'simulated plant air: a disturbance begins, its ambient 45 → 50 %RH from now on',
    );
  });
});

describe('a named disturbance (simulation.plants.*.disturbances[].name)', () => {
  test('given name "window open", when it begins and ends, then the log says so by name', () => {
    const told: string[] = [];
    const plant = new FopdtPlant(
      {
        ambient: 10,
        timeConstantS: 600,
        disturbances: [{ atS: 60, offset: -3, durationS: 900, name: 'window open' }],
      },
      0,
      { onDisturbance: (event) => told.push(disturbanceMessage('room', '°C', event)) },
    );
    plant.valueAt(61_000);
    plant.valueAt(961_000);
    assert.deepEqual(told, [
      'simulated plant room: "window open" begins, its ambient 10 → 7 °C for 15 min',
      'simulated plant room: "window open" ends, its ambient 7 → 10 °C',
    ]);
  });
});
