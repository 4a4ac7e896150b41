import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type DutyBandMemory, type DutyBandParams, dutyBand } from '../../src/core/duty-band.js';
import {
  type TimeProportioningMemory,
  timeProportioningInitialMemory,
} from '../../src/core/time-proportioning.js';
import { Random } from '../../src/drivers/sim/random.js';
import { at, s } from './fixtures.js';

/** Band 0.4..0.6, no minimum times. */
const band01: DutyBandParams = { halfBand: 0.1, minOnMs: 0, minOffMs: 0 };

const off = (): DutyBandMemory => ({ isOn: false });
/** On since `sinceS` seconds after T0. */
const onSince = (sinceS: number): DutyBandMemory => ({ isOn: true, lastSwitchMs: at(s(sinceS)) });

/** A relay driven by the band; remembers what it was told and logs its switches. */
class Relay {
  memory: DutyBandMemory;
  /** Seconds after T0 of every switch, with the new state. */
  log: Array<[atS: number, on: boolean]> = [];

  constructor(
    readonly params: DutyBandParams,
    memory: DutyBandMemory = off(),
  ) {
    this.memory = memory;
  }

  /** One evaluation at `atS` seconds; returns the state and nextChangeMs in seconds after T0. */
  step(atS: number, duty: number): { on: boolean; nextS?: number } {
    const result = dutyBand(duty, this.memory, at(s(atS)), this.params);
    if (result.on !== this.memory.isOn) this.log.push([atS, result.on]);
    this.memory = result.memory;
    return {
      on: result.on,
      ...(result.nextChangeMs === undefined ? {} : { nextS: (result.nextChangeMs - at(0)) / 1000 }),
    };
  }
}

describe('dutyBand: thresholds (half band 0.1: on above 0.6, off below 0.4)', () => {
  // [relay before, duty, relay after]
  const table: Array<[from: 'off' | 'on', duty: number, on: boolean]> = [
    ['off', 0.61, true],
    ['off', 0.6, false], // on the threshold: not above it, holds
    ['off', 0.55, false],
    ['off', 0.5, false],
    ['off', 0.45, false],
    ['off', 0.39, false],
    ['on', 0.39, false],
    ['on', 0.4, true], // on the threshold: not below it, holds
    ['on', 0.45, true],
    ['on', 0.5, true],
    ['on', 0.55, true],
    ['on', 0.61, true],
  ];
  for (const [from, duty, on] of table) {
    test(`relay ${from}, duty ${duty} → ${on ? 'on' : 'off'}`, () => {
      const memory = from === 'on' ? onSince(0) : off();
      const result = dutyBand(duty, memory, at(s(60)), band01);
      assert.equal(result.on, on);
      assert.equal(result.memory.isOn, on);
    });
  }
});

describe('dutyBand: saturation and out-of-range inputs', () => {
  // [half band, relay before, duty, relay after]
  const table: Array<[halfBand: number, from: 'off' | 'on', duty: number, on: boolean, why: string]> = [
    [0.1, 'off', 1, true, 'duty 1 is on'],
    [0.1, 'on', 0, false, 'duty 0 is off'],
    [0.1, 'off', 1.5, true, 'duty above 1 counts as 1'],
    [0.1, 'on', -0.2, false, 'duty below 0 counts as 0'],
    [0.7, 'off', 1, true, 'a half band ≥ 0.5 is clamped to 0.49: duty 1 still switches on'],
    [0.7, 'on', 0, false, 'a half band ≥ 0.5 is clamped to 0.49: duty 0 still switches off'],
    [0.7, 'off', 0.98, false, 'clamped band 0.01..0.99: 0.98 holds off'],
    [0.7, 'on', 0.02, true, 'clamped band 0.01..0.99: 0.02 holds on'],
    [-0.1, 'off', 0.51, true, 'a negative half band counts as 0: on above 0.5'],
    [-0.1, 'on', 0.49, false, 'a negative half band counts as 0: off below 0.5'],
    [0, 'on', 0.5, true, 'half band 0: exactly 0.5 holds'],
  ];
  for (const [halfBand, from, duty, on, why] of table) {
    test(why, () => {
      const memory = from === 'on' ? onSince(0) : off();
      assert.equal(dutyBand(duty, memory, at(s(60)), { ...band01, halfBand }).on, on);
    });
  }

  test('duty 0 is off forever and duty 1 on forever: one switch over a day, whatever the band', () => {
    for (const halfBand of [0, 0.1, 0.3, 0.49]) {
      const low = new Relay({ ...band01, halfBand }, onSince(0));
      const high = new Relay({ ...band01, halfBand });
      for (let t = 10; t < 86_400; t += 10) {
        low.step(t, 0);
        high.step(t, 1);
      }
      assert.deepEqual(low.log, [[10, false]], `half band ${halfBand}`);
      assert.deepEqual(high.log, [[10, true]], `half band ${halfBand}`);
    }
  });
});

describe('dutyBand: minimum on/off times', () => {
  test('a switch the minimum times forbid waits, and nextChangeMs says until when', () => {
    const relay = new Relay({ halfBand: 0.1, minOnMs: s(60), minOffMs: s(120) });
    // Given/when the duty at t, then the relay is on/off and (if held) may change at nextS.
    const table: Array<[atS: number, duty: number, on: boolean, nextS: number | undefined]> = [
      [0, 1, true, undefined], // never switched before: no minimum applies
      [10, 0, true, 60], // wants off, minimum on time holds it until 60 s
      [59, 0.2, true, 60],
      [60, 0.2, false, undefined],
      [70, 1, false, 180], // wants on, minimum off time holds it until 180 s
      [120, 0.5, false, undefined], // inside the band: nothing wanted, nothing held
      [150, 0.9, false, 180],
      [180, 0.9, true, undefined],
      [200, 0.5, true, undefined],
    ];
    for (const [atS, duty, on, nextS] of table) {
      assert.deepEqual(relay.step(atS, duty), nextS === undefined ? { on } : { on, nextS }, `t = ${atS} s`);
    }
    assert.deepEqual(relay.log, [
      [0, true],
      [60, false],
      [180, true],
    ]);
  });

  test('a duty that returns into the band before the minimum time ends cancels the held switch', () => {
    const relay = new Relay({ halfBand: 0.1, minOnMs: s(60), minOffMs: 0 });
    relay.step(0, 1);
    assert.deepEqual(relay.step(10, 0.3), { on: true, nextS: 60 });
    assert.deepEqual(relay.step(20, 0.5), { on: true });
    assert.deepEqual(relay.step(60, 0.5), { on: true });
    assert.deepEqual(relay.log, [[0, true]]);
  });
});

describe('dutyBand: memory', () => {
  test('a switch records its time; no switch returns the memory unchanged', () => {
    const switched = dutyBand(0.9, off(), at(s(30)), band01);
    assert.deepEqual(switched.memory, { isOn: true, lastSwitchMs: at(s(30)) });
    const kept = dutyBand(0.5, switched.memory, at(s(40)), band01);
    assert.deepEqual(kept.memory, switched.memory);
    assert.equal(dutyBand(0.9, switched.memory, at(s(50)), band01).memory, switched.memory);
  });

  test("keeps the fields it does not own (a loop's time-proportioning memory)", () => {
    const memory: TimeProportioningMemory = { ...timeProportioningInitialMemory(), windowStartMs: at(0) };
    const result = dutyBand(0.9, memory, at(s(30)), band01);
    assert.deepEqual(result.memory, {
      windowStartMs: at(0),
      pulseEnded: false,
      isOn: true,
      lastSwitchMs: at(s(30)),
    });
  });

  test('the same inputs give the same answer (pure)', () => {
    const memory = onSince(0);
    const a = dutyBand(0.3, memory, at(s(90)), { ...band01, minOnMs: s(120) });
    const b = dutyBand(0.3, memory, at(s(90)), { ...band01, minOnMs: s(120) });
    assert.deepEqual(a, b);
    assert.deepEqual(memory, onSince(0));
  });
});

describe('dutyBand: no chatter on a noisy duty', () => {
  const periodS = 1_200;
  const dayS = 86_400;
  /** Duty every 10 s: a slow swing 0.25..0.75 (period 20 min) plus uniform noise of ±noise. */
  function noisySwing(noise: number, seed = 7): Array<[atS: number, duty: number]> {
    const random = new Random(seed);
    const duties: Array<[number, number]> = [];
    for (let t = 0; t < dayS; t += 10) {
      const swing = 0.5 + 0.25 * Math.sin((2 * Math.PI * t) / periodS);
      duties.push([t, swing + noise * (2 * random.next() - 1)]);
    }
    return duties;
  }

  test('noise ±0.09 inside a band 0.4..0.6: exactly one on and one off per swing, for a day', () => {
    const relay = new Relay(band01);
    for (const [t, duty] of noisySwing(0.09)) relay.step(t, duty);
    const periods = dayS / periodS;
    for (let k = 0; k < periods; k++) {
      const inPeriod = relay.log.filter(([t]) => t >= k * periodS && t < (k + 1) * periodS);
      assert.deepEqual(
        inPeriod.map(([, on]) => on),
        [true, false],
        `swing ${k}`,
      );
    }
  });

  test('the same duty without a band chatters (what the band is for)', () => {
    const relay = new Relay({ ...band01, halfBand: 0 });
    for (const [t, duty] of noisySwing(0.09)) relay.step(t, duty);
    assert.ok(relay.log.length > 4 * (dayS / periodS), `${relay.log.length} switches`);
  });

  test('noise ±0.09 around 0.5 never switches, from either state', () => {
    const random = new Random(3);
    for (const start of [off(), onSince(0)]) {
      const relay = new Relay(band01, start);
      for (let t = 10; t < dayS; t += 10) relay.step(t, 0.5 + 0.09 * (2 * random.next() - 1));
      assert.deepEqual(relay.log, []);
    }
  });
});
