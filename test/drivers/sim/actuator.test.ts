import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SimContinuous, SimRelay } from '../../../src/drivers/sim/actuator.js';
import { FopdtPlant } from '../../../src/drivers/sim/plant.js';

const START_MS = 1_700_000_000_000;

/** A plant at 20 (τ 100 s, no dead time) and a manual clock. */
function world() {
  let nowMs = START_MS;
  const plant = new FopdtPlant({ ambient: 20, timeConstantS: 100 }, START_MS);
  return {
    plant,
    nowMs: () => nowMs,
    advanceS: (s: number) => {
      nowMs += s * 1000;
    },
  };
}

describe('SimRelay', () => {
  test('is a simulated relay registered as a plant input', () => {
    const w = world();
    const relay = new SimRelay({ id: 'heater', plant: w.plant, gain: 10, nowMs: w.nowMs });
    assert.equal(relay.kind, 'relay');
    assert.equal(relay.simulated, true);
    assert.equal(w.plant.inputLevel('heater'), 0);
  });

  test('given a write of 1, the plant input is on from now and the plant heats', async () => {
    const w = world();
    const relay = new SimRelay({ id: 'heater', plant: w.plant, gain: 10, nowMs: w.nowMs });
    w.advanceS(50);
    await relay.write(1);
    assert.equal(w.plant.inputLevel('heater'), 1);
    assert.equal(await relay.observe(), 1);
    assert.equal(w.plant.valueAt(START_MS + 50_000), 20);
    assert.ok(Math.abs(w.plant.valueAt(START_MS + 150_000) - (20 + 10 * (1 - Math.exp(-1)))) < 1e-9);
  });

  test('given initialLevel 1, the relay starts on and the plant feels it at once', async () => {
    const w = world();
    const relay = new SimRelay({ id: 'heater', plant: w.plant, gain: 10, nowMs: w.nowMs, initialLevel: 1 });
    assert.equal(await relay.observe(), 1);
    assert.ok(w.plant.valueAt(START_MS + 10_000) > 20);
  });

  for (const level of [0.5, -1, 2, Number.NaN]) {
    test(`rejects a write of ${level} with RangeError and leaves the plant alone`, async () => {
      const w = world();
      const relay = new SimRelay({ id: 'heater', plant: w.plant, gain: 10, nowMs: w.nowMs });
      await assert.rejects(relay.write(level), RangeError);
      assert.equal(w.plant.inputLevel('heater'), 0);
      assert.equal(relay.switchCount, 0);
    });
  }

  test('switchCount counts only actual changes; writes records every call', async () => {
    const w = world();
    const relay = new SimRelay({ id: 'heater', plant: w.plant, gain: 10, nowMs: w.nowMs });
    const sequence = [0, 1, 1, 1, 0, 0, 1];
    for (const level of sequence) {
      await relay.write(level);
      w.advanceS(1);
    }
    assert.deepEqual(relay.writes, sequence);
    assert.equal(relay.switchCount, 3);
  });

  test('given failWrites, write rejects with that error and nothing changes; null restores writes', async () => {
    const w = world();
    const relay = new SimRelay({ id: 'heater', plant: w.plant, gain: 10, nowMs: w.nowMs });
    const error = new Error('GPIO busy');
    relay.failWrites(error);
    await assert.rejects(relay.write(1), (e) => e === error);
    assert.equal(await relay.observe(), 0);
    assert.equal(w.plant.inputLevel('heater'), 0);
    assert.equal(relay.switchCount, 0);
    relay.failWrites(null);
    await relay.write(1);
    assert.equal(await relay.observe(), 1);
    assert.deepEqual(relay.writes, [1, 1]);
  });

  const overrides: { override: number | undefined; expected: number | undefined }[] = [
    { override: 0, expected: 0 },
    { override: undefined, expected: undefined },
  ];
  for (const o of overrides) {
    test(`given observed override ${String(o.override)} while on, observe() reports ${String(o.expected)}`, async () => {
      const w = world();
      const relay = new SimRelay({ id: 'heater', plant: w.plant, gain: 10, nowMs: w.nowMs });
      await relay.write(1);
      relay.setObservedOverride(o.override);
      assert.equal(await relay.observe(), o.expected);
      assert.equal(w.plant.inputLevel('heater'), 1, 'the override does not change the truth');
      relay.setObservedOverride(null);
      assert.equal(await relay.observe(), 1);
    });
  }
});

describe('SimContinuous', () => {
  test('given a write of 0.4, the plant settles at ambient + 0.4·gain', async () => {
    const w = world();
    const pwm = new SimContinuous({ id: 'pwm', plant: w.plant, gain: 10, nowMs: w.nowMs });
    assert.equal(pwm.kind, 'continuous');
    await pwm.write(0.4);
    assert.equal(await pwm.observe(), 0.4);
    assert.ok(Math.abs(w.plant.valueAt(START_MS + 10_000_000) - 24) < 1e-9);
  });

  for (const level of [-0.01, 1.01, Number.NaN]) {
    test(`rejects a write of ${level} with RangeError`, async () => {
      const w = world();
      const pwm = new SimContinuous({
        id: 'pwm',
        plant: w.plant,
        gain: 10,
        nowMs: w.nowMs,
        initialLevel: 0.2,
      });
      await assert.rejects(pwm.write(level), RangeError);
      assert.equal(await pwm.observe(), 0.2);
      assert.deepEqual(pwm.writes, [level]);
    });
  }

  test('given failWrites and an override, it behaves like the relay', async () => {
    const w = world();
    const pwm = new SimContinuous({ id: 'pwm', plant: w.plant, gain: 10, nowMs: w.nowMs });
    pwm.failWrites(new Error('PWM chip gone'));
    await assert.rejects(pwm.write(0.5), /PWM chip gone/);
    assert.equal(w.plant.inputLevel('pwm'), 0);
    pwm.setObservedOverride(undefined);
    assert.equal(await pwm.observe(), undefined);
  });

  test('two actuators on one plant add their effects', async () => {
    const w = world();
    const heater = new SimRelay({ id: 'heater', plant: w.plant, gain: 10, nowMs: w.nowMs });
    const fan = new SimContinuous({ id: 'fan', plant: w.plant, gain: -6, nowMs: w.nowMs });
    await heater.write(1);
    await fan.write(0.5);
    assert.ok(Math.abs(w.plant.valueAt(START_MS + 10_000_000) - 27) < 1e-9);
  });
});

describe('simulated actuators: lifecycle', () => {
  test('given a stopped relay, writes are refused and the plant input keeps its level', async () => {
    const w = world();
    const relay = new SimRelay({ id: 'heater', plant: w.plant, gain: 10, nowMs: w.nowMs });
    await relay.write(1);
    await relay.stop();
    await assert.rejects(relay.write(0), /heater: driver stopped/);
    assert.equal(w.plant.inputLevel('heater'), 1);
    assert.equal(await relay.observe(), 1);
  });

  test('given a stopped relay, when started again (a daemon restarted on the same drivers), then it takes writes', async () => {
    const w = world();
    const relay = new SimRelay({ id: 'heater', plant: w.plant, gain: 10, nowMs: w.nowMs });
    await relay.stop();
    await relay.start();
    await relay.write(1);
    assert.equal(w.plant.inputLevel('heater'), 1);
  });
});
