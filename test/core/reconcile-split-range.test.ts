import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import type { Direction } from '../../src/core/types.js';
import { at, type CycleRecord, desired, Harness, relay, s, simulate, splitRangeLoop } from './fixtures.js';

const SETPOINT = 20;
const hysteresis = { type: 'hysteresis', hysteresis: { coldTolerance: 0.3, hotTolerance: 0.3 } } as const;

/** Wanted levels of heater and compressor per cycle, as [atS, heater, compressor]. */
function levels(records: CycleRecord[]): Array<[atS: number, heater: number, compressor: number]> {
  return records.map(({ atMs, result }) => [
    (atMs - at(0)) / 1000,
    result.wanted.heater ?? Number.NaN,
    result.wanted.compressor ?? Number.NaN,
  ]);
}

interface Violation {
  atS: number;
  rule: string;
}

/**
 * Checks a run against the split-range rules; an actuator is on from the cycle that wanted it
 * above 0 until the cycle that wanted it at 0 (it holds its state between cycles).
 */
function violations(spec: LoopSpec, records: CycleRecord[]): Violation[] {
  const found: Violation[] = [];
  const id: Record<Direction, string> = { raise: spec.raise!.id, lower: spec.lower!.id };
  const on: Record<Direction, boolean> = { raise: false, lower: false };
  const idleSinceMs: Partial<Record<Direction, number>> = {};
  const onSinceMs: Partial<Record<Direction, number>> = {};
  for (const { atMs, result } of records) {
    const atS = (atMs - at(0)) / 1000;
    const wanted = { raise: result.wanted[id.raise]!, lower: result.wanted[id.lower]! };
    if (wanted.raise > 0 && wanted.lower > 0) found.push({ atS, rule: 'both on' });
    for (const direction of ['raise', 'lower'] as const) {
      const other = direction === 'raise' ? 'lower' : 'raise';
      const timing = spec[direction]!.timeProportioning!;
      const nowOn = wanted[direction] > 0;
      if (nowOn && !on[direction]) {
        const otherIdle = idleSinceMs[other];
        if (otherIdle !== undefined && atMs - otherIdle < spec.changeoverMs) {
          found.push({
            atS,
            rule: `${direction} started ${(atMs - otherIdle) / 1000} s after ${other} went idle`,
          });
        }
        const offSince = idleSinceMs[direction];
        if (offSince !== undefined && atMs - offSince < timing.minOffMs) {
          found.push({ atS, rule: `${direction} off only ${(atMs - offSince) / 1000} s` });
        }
        onSinceMs[direction] = atMs;
      }
      if (!nowOn && on[direction]) {
        const onSince = onSinceMs[direction]!;
        if (atMs - onSince < timing.minOnMs)
          found.push({ atS, rule: `${direction} on only ${(atMs - onSince) / 1000} s` });
        idleSinceMs[direction] = atMs;
      }
      on[direction] = nowOn;
    }
  }
  return found;
}

describe('reconcile, split range: heater and compressor never fight', () => {
  const specs: Array<[name: string, spec: LoopSpec]> = [
    ['PID, deadband 1 °C, changeover 5 min, compressor minOff 300 s', splitRangeLoop()],
    [
      'PID, no changeover delay, heater minOn 120 s',
      splitRangeLoop({ changeoverMs: 0, raise: relay('heater', { minOnMs: s(120) }) }),
    ],
    [
      'PID, changeover 60 s, heater minOn 120 s, compressor minOn 180 s / minOff 300 s',
      splitRangeLoop({
        changeoverMs: s(60),
        raise: relay('heater', { minOnMs: s(120) }),
        lower: relay('compressor', { minOnMs: s(180), minOffMs: s(300) }),
      }),
    ],
    ['hysteresis, changeover 5 min', splitRangeLoop({ controller: hysteresis })],
    [
      'hysteresis, no changeover delay, both minOn 120 s',
      splitRangeLoop({
        controller: hysteresis,
        changeoverMs: 0,
        raise: relay('heater', { minOnMs: s(120) }),
        lower: relay('compressor', { minOnMs: s(120), minOffMs: s(300) }),
      }),
    ],
  ];
  // Slow changes must use both directions; fast ones may be held on one side by the changeover.
  const temperatures: Array<[name: string, valueAtS: (atS: number) => number, slow: boolean]> = [
    ['slow swing ±3 °C, 40 min', (t) => SETPOINT + 3 * Math.sin((2 * Math.PI * t) / 2_400), true],
    ['fast swing ±3 °C, 6 min', (t) => SETPOINT + 3 * Math.sin((2 * Math.PI * t) / 360), false],
    ['square wave 17 / 23 °C every 90 s', (t) => (Math.floor(t / 90) % 2 === 0 ? 17 : 23), false],
    ['square wave 17 / 23 °C every 11 min', (t) => (Math.floor(t / 660) % 2 === 0 ? 17 : 23), true],
  ];
  for (const [specName, spec] of specs) {
    for (const [temperatureName, valueAtS, slow] of temperatures) {
      test(`${specName}; ${temperatureName}: never both on, changeover and minimum times honoured (6 h)`, () => {
        const records = simulate(new Harness(spec, desired('heat_cool', SETPOINT)), valueAtS, 6 * 3_600);
        assert.deepEqual(violations(spec, records), []);
        const run = levels(records);
        const heated = run.some(([, heater]) => heater > 0);
        const cooled = run.some(([, , compressor]) => compressor > 0);
        assert.ok(slow ? heated && cooled : heated || cooled, `heated ${heated}, cooled ${cooled}`);
      });
    }
  }
});

describe('reconcile, split range: changeover delay', () => {
  test('the compressor starts changeoverMs after the heater went idle, not after it was last seen on', () => {
    const h = new Harness(splitRangeLoop(), desired('heat_cool', SETPOINT));
    const table: Array<[atS: number, value: number, heater: number, compressor: number]> = [
      [0, 17, 1, 0],
      [30, 17, 1, 0],
      [180, 23, 0, 0], // heater idle from 180 s: the compressor waits 5 min
      [300, 23, 0, 0],
      [479, 23, 0, 0],
      [480, 23, 0, 1],
      [510, 23, 0, 1],
    ];
    for (const [atS, value, heater, compressor] of table) {
      const result = h.cycle(at(s(atS)), value);
      assert.deepEqual(
        [result.wanted.heater, result.wanted.compressor],
        [heater, compressor],
        `t = ${atS} s, ${value} °C`,
      );
      if (atS === 180) assert.ok(result.nextWakeMs <= at(s(480)), 'wakes when the changeover ends');
    }
  });
});

describe('reconcile, split range: compressor minimum off time', () => {
  test('hysteresis: turned off, wanted again 60 s later → stays off until 300 s after it went off', () => {
    const spec = splitRangeLoop({ controller: hysteresis, changeoverMs: 0 });
    const h = new Harness(spec, desired('cool', SETPOINT));
    // With a 1 °C deadband the compressor runs from 20.8 °C and stops at 20.2 °C.
    const table: Array<[atS: number, value: number, compressor: number]> = [
      [0, 21, 1],
      [60, 20, 0], // off at 60 s
      [120, 21, 0], // wanted again: held off
      [359, 21, 0],
      [360, 21, 1], // 300 s after it went off
    ];
    for (const [atS, value, compressor] of table) {
      const result = h.cycle(at(s(atS)), value);
      assert.equal(result.wanted.compressor, compressor, `t = ${atS} s, ${value} °C`);
      if (atS === 120) assert.equal(result.nextWakeMs, at(s(360)), 'wakes when the minimum off time ends');
    }
  });

  test('PID: switched off by mode off, cool again soon → held off until 300 s after it went off', () => {
    const h = new Harness(splitRangeLoop(), desired('cool', SETPOINT));
    assert.equal(h.cycle(at(0), 23).wanted.compressor, 1);
    h.want = desired('off', SETPOINT, 2);
    assert.equal(h.cycle(at(s(500)), 23).wanted.compressor, 0);
    h.want = desired('cool', SETPOINT, 3);
    assert.equal(h.cycle(at(s(560)), 23).wanted.compressor, 0);
    const newWindow = h.cycle(at(s(600)), 23);
    assert.equal(newWindow.wanted.compressor, 0, 'a new window, but only 100 s off');
    assert.equal(newWindow.nextWakeMs, at(s(800)));
    assert.equal(h.cycle(at(s(800)), 23).wanted.compressor, 1);
  });
});
