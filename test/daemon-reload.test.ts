/**
 * Hot reload (Persistence issue): an invalid file keeps the last good config running and says
 * so in ConfigValid; a valid one is applied as a new generation; loops whose settings did not
 * change keep running untouched; changed loops switch bumplessly; removed loops end safe.
 * Real SQLite files in a temp directory, a manual clock, the simulated demo plants.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { loadConfigFile, parseConfigText } from '../src/config/load.js';
import type { Daemon } from '../src/daemon/daemon.js';
import type { SimContinuous } from '../src/drivers/sim/actuator.js';
import { DEMO, startDemoStore } from './storage/support.js';

async function startDemo(t: TestContext, text = DEMO) {
  return (await startDemoStore(t, 'homeostat-reload-', 20, { text })).run;
}

const byLoop = (daemon: Daemon) => Object.fromEntries(daemon.statuses().map((s) => [s.loop, s]));

describe('hot reload', () => {
  test('given a running demo, when the file changes the fermenter setpoint, then only the fermenter gets a new generation', async (t) => {
    const { daemon, store, clock } = await startDemo(t);
    const before = byLoop(daemon);
    const roomMemoryBefore = store.desired.desired('room');
    const outcome = await daemon.reload(parseConfigText(DEMO.replace('setpoint: 18', 'setpoint: 19')));
    await clock.advance(60_000);
    assert.equal(outcome.result, 'applied');
    const after = byLoop(daemon);
    assert.equal(after.fermenter?.setpoint, 19);
    assert.ok(after.fermenter!.generation > before.fermenter!.generation, 'fermenter generation bumped');
    assert.equal(after.fermenter?.observedGeneration, after.fermenter?.generation, 'and reconciled');
    assert.equal(after.room?.generation, before.room?.generation, 'room untouched');
    assert.deepEqual(store.desired.desired('room'), roomMemoryBefore);
    assert.equal(after.room?.conditions.find((c) => c.type === 'ConfigValid')?.status, 'True');
    await daemon.stop();
  });

  test('given a running demo, when the file becomes invalid, then the last good config keeps running and ConfigValid=False names the problem', async (t) => {
    const { daemon, clock } = await startDemo(t);
    const outcome = await daemon.reload(parseConfigText(DEMO.replace('sensor: room_temp', 'sensor: nope')));
    assert.equal(outcome.result, 'invalid');
    await clock.advance(60_000);
    const room = byLoop(daemon).room!;
    const configValid = room.conditions.find((c) => c.type === 'ConfigValid');
    assert.equal(configValid?.status, 'False');
    assert.match(configValid!.message, /loops\.room\.sensor: unknown sensor "nope"/);
    assert.equal(room.conditions.find((c) => c.type === 'SensorHealthy')?.status, 'True', 'still regulating');
    // A valid file again clears it.
    await daemon.reload(parseConfigText(DEMO));
    assert.equal(byLoop(daemon).room!.conditions.find((c) => c.type === 'ConfigValid')?.status, 'True');
    await daemon.stop();
  });

  test('given a running demo, when a loop is removed from the file, then its actuators go safe and it is forgotten', async (t) => {
    const { daemon, store } = await startDemo(t);
    const withoutHumidity = DEMO.slice(0, DEMO.indexOf('  greenhouse_humidity:'));
    const fogger = daemon.drivers.actuators.get('fogger')!;
    assert.ok(((await fogger.observe()) ?? 0) > 0, 'the fogger was running');
    const outcome = await daemon.reload(parseConfigText(withoutHumidity));
    assert.equal(outcome.result, 'applied');
    assert.deepEqual(outcome.result === 'applied' && outcome.removed, ['greenhouse_humidity']);
    assert.equal(await fogger.observe(), 0, 'driven to its safe level');
    assert.equal(byLoop(daemon).greenhouse_humidity, undefined);
    assert.equal(store.desired.desired('greenhouse_humidity'), undefined);
    const kinds = store.desired.events({ loop: 'greenhouse_humidity' }).map((e) => e.kind);
    assert.ok(kinds.includes('loop-removed') && kinds.includes('loop-removed-safe'), kinds.join());
    await daemon.stop();
  });

  test('given a running demo, when the room gain changes, then its output continues where it was (bumpless)', async (t) => {
    // Two identical daemons (same seeded noise); one gets kp 0.75 → 0.5 right after a setpoint step.
    const changed = await startDemo(t);
    const twin = await startDemo(t);
    // Settled, then both asked for +0.5 °C so the error is real and the output unsaturated.
    for (const { clock, store } of [changed, twin]) {
      await clock.advance(60 * 60_000);
      store.desired.setDesired('room', { setpoint: 20.5 }, 'cli');
      await clock.advance(20_000);
    }
    const before = byLoop(changed.daemon).room!;
    const error = before.setpoint - before.measured!;
    assert.ok(Math.abs(error) > 0.3, `a real error to act on (${error})`);
    assert.ok(before.output > 0.05 && before.output < 0.95, `not saturated (${before.output})`);
    await changed.daemon.reload(parseConfigText(DEMO.replace('kp: 0.75', 'kp: 0.5')));
    // At the next readings, the output follows the twin's closely: no jump of Δkp·e.
    for (const { clock } of [changed, twin]) await clock.advance(15_000);
    const after = byLoop(changed.daemon).room!;
    const reference = byLoop(twin.daemon).room!;
    assert.ok(after.generation > before.generation, 'the changed loop got a new generation');
    const naiveJump = 0.25 * Math.abs(error);
    assert.ok(
      Math.abs(after.output - reference.output) < naiveJump / 3,
      `output ${after.output} vs unchanged twin ${reference.output}; a bumpy switch would differ by ${naiveJump}`,
    );
    await changed.daemon.stop();
    await twin.daemon.stop();
  });

  test('given an actuator whose driver changes, when its old driver cannot be written, then the reload still applies', async (t) => {
    const { daemon, clock } = await startDemo(t);
    const oldFogger = daemon.drivers.actuators.get('fogger') as SimContinuous;
    oldFogger.failWrites(new Error('device gone'));
    const outcome = await daemon.reload(parseConfigText(DEMO.replace('gain: 40', 'gain: 35')));
    assert.equal(outcome.result, 'applied');
    assert.notEqual(daemon.drivers.actuators.get('fogger'), oldFogger, 'the new driver is in place');
    await clock.advance(60_000);
    const humidity = byLoop(daemon).greenhouse_humidity!;
    assert.equal(
      humidity.conditions.find((c) => c.type === 'Reconciled')?.status,
      'True',
      'regulating on it',
    );
    await daemon.stop();
  });

  test('the same file again is no change: same generation', async (t) => {
    const { daemon } = await startDemo(t);
    const before = byLoop(daemon).room!.generation;
    const outcome = await daemon.reload(loadConfigFile('config/demo.yaml'));
    assert.equal(outcome.result, 'unchanged');
    assert.equal(byLoop(daemon).room!.generation, before);
    await daemon.stop();
  });

  test('given a heating room, when the loop is switched to another heater, then the one no loop drives any more is driven safe', async (t) => {
    const { daemon, clock } = await startDemo(t);
    const heater = daemon.drivers.actuators.get('room_heater')!;
    await clock.advance(60_000);
    // A cold room heats at full output at first: wait until the old heater is on.
    for (let i = 0; i < 30 && (await heater.observe()) !== 1; i++) await clock.advance(10_000);
    assert.equal(await heater.observe(), 1, 'the old heater is on');
    const spare = DEMO.replace(
      '  chamber_heater:\n',
      '  spare_heater:\n    kind: simulated_relay\n    plant: room\n    gain: 20\n  chamber_heater:\n',
    ).replace('raise: room_heater # only a heater', 'raise: spare_heater # only a heater');
    const outcome = await daemon.reload(parseConfigText(spare));
    assert.equal(outcome.result, 'applied', JSON.stringify(outcome));
    assert.equal(await heater.observe(), 0, 'room_heater is still defined but no loop drives it: safe');
    await daemon.stop();
  });
});
