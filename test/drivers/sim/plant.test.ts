import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FopdtPlant, type PlantParams } from '../../../src/drivers/sim/plant.js';
import { assertClose } from '../../support/assert.js';

const START_MS = 1_700_000_000_000;
const S = 1000;

/** A plant starting at START_MS with one input named `heater`. */
function plantWithHeater(params: Partial<PlantParams>, gain: number): FopdtPlant {
  const plant = new FopdtPlant({ ambient: 20, timeConstantS: 600, ...params }, START_MS);
  plant.addInput('heater', gain);
  return plant;
}

describe('FopdtPlant step response', () => {
  // Analytic FOPDT step: y(t) = ambient + K·(1 − e^{−(t−θ)/τ}) for t >= θ, ambient before.
  const cases = [
    { name: 'no dead time', ambient: 20, gain: 10, tauS: 600, deadS: 0 },
    { name: 'with dead time', ambient: 15, gain: 8, tauS: 300, deadS: 45 },
    { name: 'negative gain (cooler)', ambient: 25, gain: -12, tauS: 900, deadS: 10 },
  ];
  for (const c of cases) {
    test(`given ${c.name}, when the input steps to 1, then y follows the analytic curve`, () => {
      const plant = plantWithHeater(
        { ambient: c.ambient, timeConstantS: c.tauS, deadTimeS: c.deadS },
        c.gain,
      );
      plant.setInput('heater', 1, START_MS);
      const timesS = [0, 1, c.deadS / 2, c.deadS, c.deadS + 1, c.deadS + c.tauS, c.deadS + 5 * c.tauS];
      for (const tS of timesS.sort((a, b) => a - b)) {
        const expected =
          tS < c.deadS ? c.ambient : c.ambient + c.gain * (1 - Math.exp(-(tS - c.deadS) / c.tauS));
        assertClose(plant.valueAt(START_MS + tS * S), expected, 1e-9, `y(${tS} s)`);
      }
    });
  }

  test('given dead time θ, nothing changes before θ even just before it', () => {
    const plant = plantWithHeater({ deadTimeS: 30 }, 10);
    plant.setInput('heater', 1, START_MS + 100 * S);
    assert.equal(plant.valueAt(START_MS + 129_999), 20);
    assert.ok(plant.valueAt(START_MS + 131 * S) > 20);
  });

  test('given a step to level 0.5, the steady state is ambient + K/2', () => {
    const plant = plantWithHeater({}, 10);
    plant.setInput('heater', 0.5, START_MS);
    assertClose(plant.valueAt(START_MS + 100 * 600 * S), 25, 1e-9, 'steady state');
  });

  test('given an initial value, it decays towards ambient with τ', () => {
    const plant = new FopdtPlant({ ambient: 20, initial: 30, timeConstantS: 100 }, START_MS);
    assertClose(plant.valueAt(START_MS + 100 * S), 20 + 10 * Math.exp(-1), 1e-9, 'y(τ)');
  });
});

describe('FopdtPlant inputs', () => {
  test('given two inputs, their steady-state effects add', () => {
    const plant = new FopdtPlant({ ambient: 20, timeConstantS: 60 }, START_MS);
    plant.addInput('heater', 10);
    plant.addInput('cooler', -4);
    plant.setInput('heater', 1, START_MS);
    plant.setInput('cooler', 0.5, START_MS);
    assertClose(plant.valueAt(START_MS + 3600 * S), 20 + 10 - 2, 1e-9, 'steady state');
  });

  test('inputLevel reports the last level set, even before the dead time has passed', () => {
    const plant = plantWithHeater({ deadTimeS: 60 }, 10);
    assert.equal(plant.inputLevel('heater'), 0);
    plant.setInput('heater', 0.7, START_MS);
    assert.equal(plant.inputLevel('heater'), 0.7);
    assert.equal(plant.valueAt(START_MS + 30 * S), 20);
  });

  test('given addInput with a level, it is in effect immediately, without dead time', () => {
    const plant = new FopdtPlant({ ambient: 20, timeConstantS: 100, deadTimeS: 50 }, START_MS);
    plant.addInput('heater', 10, 1);
    assert.equal(plant.inputLevel('heater'), 1);
    assertClose(plant.valueAt(START_MS + 100 * S), 20 + 10 * (1 - Math.exp(-1)), 1e-9, 'y(τ)');
  });

  const rejected: { name: string; act: (p: FopdtPlant) => void; error: RegExp }[] = [
    { name: 'an unknown input', act: (p) => p.setInput('fan', 1, START_MS), error: /unknown input "fan"/ },
    { name: 'a level above 1', act: (p) => p.setInput('heater', 1.5, START_MS), error: /0\.\.1/ },
    { name: 'a negative level', act: (p) => p.setInput('heater', -0.1, START_MS), error: /0\.\.1/ },
    { name: 'a NaN level', act: (p) => p.setInput('heater', Number.NaN, START_MS), error: /0\.\.1/ },
    { name: 'a duplicate input', act: (p) => p.addInput('heater', 1), error: /already registered/ },
    { name: 'inputLevel of an unknown input', act: (p) => p.inputLevel('fan'), error: /unknown input/ },
  ];
  for (const r of rejected) {
    test(`rejects ${r.name}`, () => {
      assert.throws(() => r.act(plantWithHeater({}, 10)), r.error);
    });
  }
});

describe('FopdtPlant disturbances', () => {
  test('given a disturbance of +5 from 100 s for 200 s, it applies without dead time and then ends', () => {
    const plant = new FopdtPlant(
      {
        ambient: 20,
        timeConstantS: 50,
        deadTimeS: 30,
        disturbances: [{ atS: 100, offset: 5, durationS: 200 }],
      },
      START_MS,
    );
    assert.equal(plant.valueAt(START_MS + 100 * S), 20);
    // Without dead time: one τ after the start it is 1 − e^{−1} of the way.
    assertClose(plant.valueAt(START_MS + 150 * S), 20 + 5 * (1 - Math.exp(-1)), 1e-9, 'y(150 s)');
    const atEnd = 20 + 5 * (1 - Math.exp(-4));
    assertClose(plant.valueAt(START_MS + 300 * S), atEnd, 1e-9, 'y(300 s)');
    assertClose(plant.valueAt(START_MS + 350 * S), 20 + (atEnd - 20) * Math.exp(-1), 1e-9, 'y(350 s)');
    assertClose(plant.valueAt(START_MS + 5000 * S), 20, 1e-9, 'long after');
  });

  test('given a disturbance without duration, it lasts for ever', () => {
    const plant = new FopdtPlant(
      { ambient: 20, timeConstantS: 50, disturbances: [{ atS: 10, offset: -3 }] },
      START_MS,
    );
    assertClose(plant.valueAt(START_MS + 100_000 * S), 17, 1e-9, 'steady state');
  });

  test('given overlapping disturbances, their offsets add', () => {
    const plant = new FopdtPlant(
      {
        ambient: 20,
        timeConstantS: 10,
        disturbances: [
          { atS: 0, offset: 2, durationS: 10_000 },
          { atS: 0, offset: 3, durationS: 10_000 },
        ],
      },
      START_MS,
    );
    assertClose(plant.valueAt(START_MS + 5000 * S), 25, 1e-9, 'steady state');
  });
});

describe('FopdtPlant humidity', () => {
  const cases = [
    { name: 'pushed above 100', ambient: 60, gain: 80, bound: 100 },
    { name: 'pushed below 0', ambient: 30, gain: -80, bound: 0 },
  ];
  for (const c of cases) {
    test(`given a humidity plant ${c.name}, the value is held at ${c.bound}`, () => {
      const plant = new FopdtPlant({ kind: 'humidity', ambient: c.ambient, timeConstantS: 100 }, START_MS);
      plant.addInput('humidifier', c.gain);
      plant.setInput('humidifier', 1, START_MS);
      assert.equal(plant.valueAt(START_MS + 10_000 * S), c.bound);
    });
  }

  test('given humidity saturated at 100, when the input stops, it decays from 100 (not from the unclamped value)', () => {
    const plant = new FopdtPlant({ kind: 'humidity', ambient: 60, timeConstantS: 100 }, START_MS);
    plant.addInput('humidifier', 80);
    plant.setInput('humidifier', 1, START_MS);
    plant.setInput('humidifier', 0, START_MS + 10_000 * S);
    assertClose(plant.valueAt(START_MS + 10_100 * S), 60 + 40 * Math.exp(-1), 1e-9, 'one τ after');
  });

  test('a thermal plant is not clamped', () => {
    const plant = plantWithHeater({ ambient: 60, timeConstantS: 100 }, 80);
    plant.setInput('heater', 1, START_MS);
    assertClose(plant.valueAt(START_MS + 10_000 * S), 140, 1e-9, 'steady state');
  });
});

describe('FopdtPlant sampling independence', () => {
  const scenarios: { name: string; params: Partial<PlantParams> }[] = [
    {
      name: 'thermal with dead time and disturbances',
      params: { deadTimeS: 37, disturbances: [{ atS: 500, offset: -4, durationS: 900 }] },
    },
    {
      name: 'humidity that saturates',
      params: { kind: 'humidity', ambient: 70, timeConstantS: 120, deadTimeS: 5 },
    },
  ];
  for (const s of scenarios) {
    test(`given ${s.name}, querying every second or only at the end gives the same value`, () => {
      const dense = plantWithHeater(s.params, 45);
      const sparse = plantWithHeater(s.params, 45);
      // A relay switching on and off at odd times, over 1 h.
      const switches = [
        { atS: 0, level: 1 },
        { atS: 333, level: 0 },
        { atS: 1000, level: 1 },
        { atS: 2222, level: 0.25 },
        { atS: 3000, level: 0 },
      ];
      let nextSwitch = 0;
      for (let tS = 0; tS <= 3600; tS++) {
        const sw = switches[nextSwitch];
        if (sw !== undefined && sw.atS === tS) {
          dense.setInput('heater', sw.level, START_MS + tS * S);
          nextSwitch++;
        }
        dense.valueAt(START_MS + tS * S);
      }
      for (const sw of switches) sparse.setInput('heater', sw.level, START_MS + sw.atS * S);
      const end = START_MS + 3600 * S;
      assertClose(sparse.valueAt(end), dense.valueAt(end), 1e-9, 'y(1 h)');
      assert.notEqual(dense.valueAt(end), 20, 'the scenario should move the plant');
    });
  }
});

describe('FopdtPlant time', () => {
  test('when valueAt goes backwards, it throws a clear error', () => {
    const plant = plantWithHeater({}, 10);
    plant.valueAt(START_MS + 10 * S);
    assert.throws(() => plant.valueAt(START_MS + 9 * S), /time went backwards/);
  });

  test('when setInput is dated before the last query, it throws', () => {
    const plant = plantWithHeater({}, 10);
    plant.valueAt(START_MS + 10 * S);
    assert.throws(() => plant.setInput('heater', 1, START_MS + 5 * S), /time went backwards/);
  });

  test('querying the same instant twice is allowed and gives the same value', () => {
    const plant = plantWithHeater({}, 10);
    plant.setInput('heater', 1, START_MS);
    const first = plant.valueAt(START_MS + 60 * S);
    assert.equal(plant.valueAt(START_MS + 60 * S), first);
  });

  test('given days of 1 s steps with frequent switching, the queue is pruned and the value stays right', () => {
    const plant = plantWithHeater({ deadTimeS: 20, timeConstantS: 300 }, 10);
    const days = 3;
    for (let tS = 0; tS < days * 86_400; tS++) {
      if (tS % 60 === 0) plant.setInput('heater', (tS / 60) % 2, START_MS + tS * S);
      plant.valueAt(START_MS + tS * S);
    }
    // Heater off from the last switch on; after 10 τ the value is back at ambient.
    plant.setInput('heater', 0, START_MS + days * 86_400 * S);
    assertClose(plant.valueAt(START_MS + (days * 86_400 + 3000) * S), 20, 1e-3, 'after switching off');
    assert.ok(
      (plant as unknown as { queue: unknown[] }).queue.length < 2048,
      'the change queue should be pruned',
    );
  });
});

describe('FopdtPlant parameters', () => {
  const invalid: { name: string; params: PlantParams }[] = [
    { name: 'zero time constant', params: { ambient: 20, timeConstantS: 0 } },
    { name: 'negative dead time', params: { ambient: 20, timeConstantS: 10, deadTimeS: -1 } },
    { name: 'NaN ambient', params: { ambient: Number.NaN, timeConstantS: 10 } },
    {
      name: 'negative disturbance duration',
      params: { ambient: 20, timeConstantS: 10, disturbances: [{ atS: 0, offset: 1, durationS: -1 }] },
    },
  ];
  for (const c of invalid) {
    test(`rejects ${c.name}`, () => {
      assert.throws(() => new FopdtPlant(c.params, START_MS), RangeError);
    });
  }
});

describe('FopdtPlant.setInputGain (a reload re-describing an actuator)', () => {
  test('given a heater at level 1, when its gain changes from 20 to 10, then the plant settles 10 above ambient and the level is kept', () => {
    const plant = new FopdtPlant({ ambient: 10, timeConstantS: 100 }, 0);
    plant.addInput('heater', 20, 1);
    plant.setInputGain('heater', 10);
    assert.equal(plant.hasInput('heater'), true);
    assert.equal(plant.inputLevel('heater'), 1);
    assert.ok(Math.abs(plant.valueAt(10_000_000) - 20) < 1e-6);
  });
  test('an unknown input is an error', () => {
    const plant = new FopdtPlant({ ambient: 10, timeConstantS: 100 }, 0);
    assert.throws(() => plant.setInputGain('nope', 1), /unknown input "nope"/);
  });
});
