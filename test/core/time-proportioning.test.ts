import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  effectiveOnMs,
  type TimeProportioningMemory,
  type TimeProportioningParams,
  timeProportion,
  timeProportioningInitialMemory,
} from '../../src/core/time-proportioning.js';
import { at, s } from './fixtures.js';

const window600 = { windowMs: s(600), minOnMs: 0, minOffMs: 0 };

/** A relay driven by time-proportioning; remembers what it was told and counts its switches. */
class Relay {
  memory: TimeProportioningMemory;
  switches = 0;
  /** Seconds after T0 of every switch, with the new state. */
  log: Array<[atS: number, on: boolean]> = [];

  constructor(
    readonly params: TimeProportioningParams,
    memory = timeProportioningInitialMemory(),
  ) {
    this.memory = memory;
  }

  /** One evaluation at `atS` seconds; returns the state and nextChangeMs in seconds after T0. */
  step(atS: number, duty: number): { on: boolean; nextS: number } {
    const result = timeProportion(duty, this.memory, at(s(atS)), this.params);
    if (result.on !== this.memory.isOn) {
      this.switches++;
      this.log.push([atS, result.on]);
    }
    this.memory = result.memory;
    assert.ok(result.nextChangeMs >= at(s(atS)), `nextChangeMs before now at ${atS} s`);
    return { on: result.on, nextS: (result.nextChangeMs - at(0)) / 1000 };
  }

  /** Evaluates every `everyS` seconds over [fromS, toS). */
  sweep(fromS: number, toS: number, everyS: number, duty: number): boolean[] {
    const states: boolean[] = [];
    for (let t = fromS; t < toS; t += everyS) states.push(this.step(t, duty).on);
    return states;
  }
}

describe('timeProportion: steady duties', () => {
  test('duty 0 is off forever: no switch over 10 windows', () => {
    const relay = new Relay(window600);
    const states = relay.sweep(0, 6_000, 10, 0);
    assert.ok(states.every((on) => !on));
    assert.equal(relay.switches, 0);
  });

  test('duty 1 is on forever: switched on once, never off at window boundaries', () => {
    const relay = new Relay(window600);
    const states = relay.sweep(0, 6_000, 10, 1);
    assert.ok(states.every((on) => on));
    assert.deepEqual(relay.log, [[0, true]]);
  });

  test('duty 0.3, window 600 s: on for the first 180 s of each window', () => {
    const relay = new Relay(window600);
    // Given/when the relay is evaluated at t, then it is on/off and next changes at nextS.
    const table: Array<[atS: number, on: boolean, nextS: number]> = [
      [0, true, 180],
      [60, true, 180],
      [179, true, 180],
      [180, false, 600],
      [300, false, 600],
      [599, false, 600],
      [600, true, 780],
      [779, true, 780],
      [780, false, 1_200],
      [1_200, true, 1_380],
      [1_380, false, 1_800],
    ];
    for (const [atS, on, nextS] of table) {
      assert.deepEqual(relay.step(atS, 0.3), { on, nextS }, `t = ${atS} s`);
    }
  });

  test('windows stay on their grid when evaluations are skipped', () => {
    const relay = new Relay(window600);
    relay.step(0, 0.3);
    // No evaluation for 2 500 s: the current window began at 2 400 s, so at 2 500 s the pulse is on.
    assert.deepEqual(relay.step(2_500, 0.3), { on: true, nextS: 2_580 });
    assert.deepEqual(relay.step(2_580, 0.3), { on: false, nextS: 3_000 });
  });
});

describe('timeProportion: minimum on and off times', () => {
  test('effectiveOnMs: runt pulses are skipped, runt gaps are filled', () => {
    const table: Array<[duty: number, minOnS: number, minOffS: number, onS: number]> = [
      [0, 0, 0, 0],
      [0.3, 0, 0, 180],
      [0.05, 60, 0, 0], // 30 s pulse < 60 s minimum on → no pulse
      [0.1, 60, 0, 60], // exactly the minimum → pulse
      [0.95, 0, 60, 600], // 30 s gap < 60 s minimum off → stays on
      [0.9, 0, 60, 540], // exactly the minimum gap → normal pulse
      [1.5, 0, 0, 600], // duty clamped to 0..1
      [-0.2, 0, 0, 0],
    ];
    for (const [duty, minOnS, minOffS, onS] of table) {
      const onMs = effectiveOnMs(duty, { windowMs: s(600), minOnMs: s(minOnS), minOffMs: s(minOffS) });
      assert.equal(onMs, s(onS), `duty ${duty}, minOn ${minOnS} s, minOff ${minOffS} s`);
    }
  });

  test('a pulse shorter than minOnMs is never started', () => {
    const relay = new Relay({ ...window600, minOnMs: s(60) });
    relay.sweep(0, 6_000, 5, 0.05);
    assert.equal(relay.switches, 0);
  });

  test('a gap shorter than minOffMs is never made: the relay stays on', () => {
    const relay = new Relay({ ...window600, minOffMs: s(60) });
    relay.sweep(0, 6_000, 5, 0.95);
    assert.deepEqual(relay.log, [[0, true]]);
  });

  test('minimum on time holds when the duty drops mid-pulse; nextChangeMs is when it may switch', () => {
    const relay = new Relay({ ...window600, minOnMs: s(120) });
    const table: Array<[atS: number, duty: number, on: boolean, nextS: number]> = [
      [0, 0.5, true, 300],
      [30, 0, true, 120], // wants off, held on until 0 + 120 s
      [119, 0, true, 120],
      [120, 0, false, 600],
      [300, 0.5, false, 600], // this window's pulse has ended
      [600, 0.5, true, 900],
    ];
    for (const [atS, duty, on, nextS] of table) {
      assert.deepEqual(relay.step(atS, duty), { on, nextS }, `t = ${atS} s, duty ${duty}`);
    }
  });

  test('minimum off time holds across a duty change; nextChangeMs is when it may switch', () => {
    // Given a relay switched off 10 s before T0 with a 120 s minimum off time …
    const relay = new Relay(
      { ...window600, minOffMs: s(120) },
      timeProportioningInitialMemory(false, at(s(-10))),
    );
    const table: Array<[atS: number, duty: number, on: boolean, nextS: number]> = [
      [0, 0.5, false, 110], // wants on, held off until −10 + 120 s
      [60, 0.8, false, 110],
      [110, 0.8, true, 480], // allowed now; the pulse still ends at 0.8 · 600 s
      [480, 0.8, false, 600],
    ];
    for (const [atS, duty, on, nextS] of table) {
      assert.deepEqual(relay.step(atS, duty), { on, nextS }, `t = ${atS} s, duty ${duty}`);
    }
  });
});

describe('timeProportion: one pulse per window', () => {
  test('a duty rising after the pulse ended waits for the next window', () => {
    const relay = new Relay(window600);
    const table: Array<[atS: number, duty: number, on: boolean, nextS: number]> = [
      [0, 0.3, true, 180],
      [180, 0.3, false, 600],
      [200, 0.8, false, 600], // 200 s < 480 s, but this window already had its pulse
      [400, 1, false, 600],
      [600, 0.8, true, 1_080],
      [1_080, 0.8, false, 1_200],
    ];
    for (const [atS, duty, on, nextS] of table) {
      assert.deepEqual(relay.step(atS, duty), { on, nextS }, `t = ${atS} s, duty ${duty}`);
    }
  });

  test('a duty rising before the pulse ended lengthens it', () => {
    const relay = new Relay(window600);
    assert.deepEqual(relay.step(0, 0.3), { on: true, nextS: 180 });
    assert.deepEqual(relay.step(100, 0.5), { on: true, nextS: 300 });
    assert.deepEqual(relay.step(300, 0.5), { on: false, nextS: 600 });
  });

  test('constant duty: exactly 2 switches per window over 10 windows', () => {
    const params = { windowMs: s(600), minOnMs: s(30), minOffMs: s(30) };
    for (const duty of [0.1, 0.3, 0.5, 0.7, 0.9]) {
      // Sampled every 5 s …
      const sampled = new Relay(params);
      sampled.sweep(0, 6_000, 5, duty);
      assert.equal(sampled.switches, 20, `duty ${duty}, sampled`);
      // … and event-driven, waking only at nextChangeMs: same switches at the same times.
      const woken = new Relay(params);
      for (let t = 0; t < 6_000; t = woken.step(t, duty).nextS);
      assert.deepEqual(woken.log, sampled.log, `duty ${duty}, event-driven`);
      const expected = Array.from(
        { length: 10 },
        (_, w): Array<[number, boolean]> => [
          [w * 600, true],
          [w * 600 + duty * 600, false],
        ],
      ).flat();
      assert.deepEqual(
        woken.log.map(([t, on]) => [Math.round(t * 1000) / 1000, on]),
        expected.map(([t, on]) => [Math.round(t * 1000) / 1000, on]),
        `duty ${duty}: on at each window start, off after duty · window`,
      );
    }
  });
});
