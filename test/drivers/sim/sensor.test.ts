import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FopdtPlant } from '../../../src/drivers/sim/plant.js';
import { Random } from '../../../src/drivers/sim/random.js';
import { quantize, SimSensor, type SimSensorFault } from '../../../src/drivers/sim/sensor.js';

const START_MS = 1_700_000_000_000;

/** A plant decaying from 30 towards 20 (τ 100 s) and a manual clock. */
function setup(opts: { noise?: number; quantization?: number; random?: Random } = {}) {
  let nowMs = START_MS;
  const plant = new FopdtPlant({ ambient: 20, initial: 30, timeConstantS: 100 }, START_MS);
  const sensor = new SimSensor({ id: 't1', plant, nowMs: () => nowMs, ...opts });
  return {
    plant,
    sensor,
    advanceS: (s: number) => {
      nowMs += s * 1000;
    },
  };
}

async function readMany(sensor: SimSensor, n: number, advanceS: (s: number) => void): Promise<number[]> {
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    values.push(await sensor.read());
    advanceS(1);
  }
  return values;
}

describe('SimSensor readings', () => {
  test('is marked simulated', () => {
    assert.equal(setup().sensor.simulated, true);
  });

  test('given no noise, read() returns the plant value at the clock time', async () => {
    const { sensor, advanceS } = setup();
    assert.equal(await sensor.read(), 30);
    advanceS(100);
    assert.ok(Math.abs((await sensor.read()) - (20 + 10 * Math.exp(-1))) < 1e-9);
  });

  const steps = [0.0625, 0.1, 0.5, 2];
  for (const step of steps) {
    test(`given quantization ${step}, every reading is a multiple of ${step}`, async () => {
      const { sensor, advanceS } = setup({ quantization: step, noise: 0.3, random: new Random(5) });
      const values = await readMany(sensor, 200, advanceS);
      for (const v of values) {
        const multiples = v / step;
        assert.ok(Math.abs(multiples - Math.round(multiples)) < 1e-9, `${v} is not a multiple of ${step}`);
      }
    });
  }

  const roundings = [
    { value: 20.43, step: 0.1, expected: 20.4 },
    { value: 20.46, step: 0.1, expected: 20.5 },
    { value: 20.03, step: 0.0625, expected: 20 },
    { value: 20.04, step: 0.0625, expected: 20.0625 },
    { value: 20.43, step: 0, expected: 20.43 },
    { value: 21.2, step: 2, expected: 22 },
  ];
  for (const r of roundings) {
    test(`quantize(${r.value}, ${r.step}) = ${r.expected}`, () => {
      assert.equal(quantize(r.value, r.step), r.expected);
    });
  }

  test('given the same seed, two sensors produce the same noisy sequence', async () => {
    const a = setup({ noise: 0.5, random: new Random(1234) });
    const b = setup({ noise: 0.5, random: new Random(1234) });
    const first = await readMany(a.sensor, 50, a.advanceS);
    assert.deepEqual(first, await readMany(b.sensor, 50, b.advanceS));
  });

  test('given noise, readings scatter around the true value with about the asked std dev', async () => {
    // A plant at ambient, so the true value is a constant 20.
    const plant = new FopdtPlant({ ambient: 20, timeConstantS: 100 }, START_MS);
    const sensor = new SimSensor({ id: 't1', plant, nowMs: () => START_MS, noise: 0.5 });
    const values: number[] = [];
    for (let i = 0; i < 5000; i++) values.push(await sensor.read());
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    const std = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length);
    assert.ok(Math.abs(mean - 20) < 0.05, `mean ${mean}`);
    assert.ok(Math.abs(std - 0.5) < 0.05, `std dev ${std}`);
  });

  test('given no explicit random, the noise is still reproducible (seeded from the id)', async () => {
    const a = setup({ noise: 0.5 });
    const b = setup({ noise: 0.5 });
    assert.deepEqual(await readMany(a.sensor, 20, a.advanceS), await readMany(b.sensor, 20, b.advanceS));
  });

  test('rejects a negative noise or quantization', () => {
    const plant = new FopdtPlant({ ambient: 20, timeConstantS: 100 }, START_MS);
    assert.throws(() => new SimSensor({ id: 't1', plant, nowMs: () => START_MS, noise: -1 }), RangeError);
    assert.throws(
      () => new SimSensor({ id: 't1', plant, nowMs: () => START_MS, quantization: -1 }),
      RangeError,
    );
  });
});

describe('SimSensor faults', () => {
  const cases: { fault: SimSensorFault; outcome: 'rejects' | 'resolves'; expected: RegExp | number }[] = [
    { fault: { kind: 'stale' }, outcome: 'rejects', expected: /^sensor stale \(simulated\)$/ },
    { fault: { kind: 'error', message: 'CRC mismatch' }, outcome: 'rejects', expected: /^CRC mismatch$/ },
    { fault: { kind: 'nan' }, outcome: 'resolves', expected: Number.NaN },
    { fault: { kind: 'spike', value: 85 }, outcome: 'resolves', expected: 85 },
  ];
  for (const c of cases) {
    test(`given fault ${c.fault.kind}, read() ${c.outcome} ${String(c.expected)}`, async () => {
      const { sensor } = setup();
      sensor.injectFault(c.fault);
      if (c.outcome === 'rejects') {
        await assert.rejects(sensor.read(), { message: c.expected as RegExp });
      } else {
        assert.equal(await sensor.read(), c.expected);
      }
    });
  }

  test('given a fault, when it is cleared with none, readings are normal again', async () => {
    const { sensor } = setup();
    sensor.injectFault({ kind: 'spike', value: 85 });
    assert.equal(await sensor.read(), 85);
    sensor.injectFault({ kind: 'none' });
    assert.equal(await sensor.read(), 30);
  });
});
