/**
 * What init writes is a config the rest of homeostat accepts: it validates on every fixture
 * tree, doctor's checks pass on the trees with a probe and a Pi's GPIO, and the simulated
 * room actually regulates when the daemon runs it.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { checkConfig, checkGpio, checkKinds } from '../../src/commands/doctor.js';
import { loadConfigFile } from '../../src/config/load.js';
import { startStoreDaemon } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { fixture, runInit } from './helpers.js';

/** Every tree under test/fixtures/sys, and which starter init writes there with --relay-pin 17. */
const EXPECTED_KIND: Record<string, 'ds18b20' | 'simulated'> = {
  'expanders-only': 'ds18b20',
  'no-chips': 'simulated',
  'pi3-legacy': 'ds18b20',
  'pi4-bookworm': 'ds18b20',
  'pi4-one-ds18b20': 'ds18b20',
  'pi5-bookworm': 'ds18b20',
  'pi5-two-ds18b20': 'ds18b20',
  'unknown-soc': 'ds18b20',
  'w1-bus-empty': 'simulated',
  'w1-two-sensors': 'ds18b20',
};

describe('the generated config validates on every fixture tree', () => {
  test('the table names every tree (a new tree must be added here)', () => {
    const trees = readdirSync(fixture('.'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    assert.deepEqual(trees, Object.keys(EXPECTED_KIND).sort());
  });

  for (const [tree, kind] of Object.entries(EXPECTED_KIND)) {
    for (const flags of [{ relayPin: '17' }, { relayPin: '27', setpoint: '5', loop: 'cellar' }]) {
      test(`${tree} ${JSON.stringify(flags)}: ${kind} sensor, valid`, async (t) => {
        const run = await runInit(t, { tree, ...flags });
        assert.equal(run.code, 0, run.lines.join('\n'));
        const result = loadConfigFile(run.path);
        assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
        assert.deepEqual(result.warnings, []);
        const loop = flags.loop ?? 'room';
        assert.equal(result.config.sensors[`${loop}_temp`]?.kind, kind);
        assert.equal(result.config.loops[loop]?.setpoint, Number(flags.setpoint ?? 20));
      });
    }
  }
});

describe("doctor's checks pass on a Pi tree with probes", () => {
  const trees: [tree: string, sensor?: string][] = [
    ['pi4-one-ds18b20'],
    ['pi5-two-ds18b20'],
    ['pi5-two-ds18b20', '28-0316a2795bff'],
  ];
  for (const [tree, sensor] of trees) {
    test(`${tree}${sensor ? ` --sensor ${sensor}` : ''}: config, GPIO chips, GPIO17, 1-Wire and the probe all ok`, async (t) => {
      const run = await runInit(t, { tree, relayPin: '17', ...(sensor ? { sensor } : {}) });
      assert.equal(run.code, 0, run.lines.join('\n'));
      const { result, config } = checkConfig(run.path);
      assert.equal(result.status, 'ok', result.detail);
      const checks = [
        result,
        ...(await checkGpio(config!, { canWrite: async () => true })),
        ...(await checkKinds(config!, { nowMs: () => 0 })),
      ];
      assert.deepEqual(
        checks.map((c) => `${c.status} ${c.name}`),
        [
          'ok config',
          'ok GPIO chips',
          'ok GPIO17 (actuators.room_heater)',
          'ok 1-Wire bus',
          'ok DS18B20 sensors.room_temp',
        ],
      );
    });
  }

  test('the probe with a bad contact, chosen: doctor fails it and says why (what init listed)', async (t) => {
    const run = await runInit(t, { tree: 'pi5-two-ds18b20', relayPin: '17', sensor: '28-3c01d607d4a1' });
    const { config } = checkConfig(run.path);
    const probe = (await checkKinds(config!, { nowMs: () => 0 })).at(-1)!;
    assert.equal(probe.status, 'fail');
    assert.match(probe.detail, /CRC error/);
  });
});

describe('the simulated room runs', () => {
  test('given the simulated starter, when the daemon runs it three hours, the room is held at 20 °C without a fault', async (t) => {
    const run = await runInit(t, { tree: 'no-chips' });
    assert.equal(run.code, 0);
    const { daemon, clock, stop } = await startStoreDaemon(run.text!, join(tempDir(t), 'state.db'));
    t.after(() => stop());
    // Starts at the 10 °C ambient: the effect watch sees full heating work, the PID settles.
    for (let minute = 0; minute < 180; minute++) await clock.advance(60_000);
    const room = daemon.statuses().find((s) => s.loop === 'room')!;
    assert.ok(room.measured !== undefined && Math.abs(room.measured - 20) < 0.5, `measured ${room.measured}`);
    const faulted = room.conditions.find((c) => c.type === 'Faulted');
    assert.ok(faulted, room.conditions.map((c) => c.type).join(', '));
    assert.equal(faulted.status, 'False', faulted.message);
  });
});
