import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ActuatorSpec, LoopSpec } from '../../src/core/loop-spec.js';
import { reconcile } from '../../src/core/reconcile.js';
import type { Mode, Reading } from '../../src/core/types.js';
import {
  at,
  condition,
  desired,
  Harness,
  heaterRelayLoop,
  hysteresisHeaterLoop,
  min,
  observed,
  reading,
  relay,
  s,
  simulate,
  splitRangeLoop,
} from './fixtures.js';
import { assertIdempotentOnceApplied } from './idempotence.js';

const SETPOINT = 20;

/** A relay switched on the duty band (half band in duty units), with optional minimum times. */
function bandRelay(id: string, halfBand: number, timing: { minOnMs?: number; minOffMs?: number } = {}) {
  return { ...relay(id, timing), band: { halfBand } } satisfies ActuatorSpec;
}

/** The room heater of the fixtures (PI, kp 0.5, Ti 1200 s) on a band of ±0.25 °C (kp · 0.25). */
function bandHeaterLoop(timing: { minOnMs?: number; minOffMs?: number } = {}): LoopSpec {
  return heaterRelayLoop({ raise: bandRelay('heater', 0.5 * 0.25, timing) });
}

/**
 * The same heater with a P-only controller (kp 0.5, no integral), so the band reads in °C:
 * output 0.5 · (20 − measured); on above 0.625 (below 18.75 °C), off below 0.375 (above 19.25 °C).
 */
function proportionalBandLoop(timing: { minOnMs?: number; minOffMs?: number } = {}): LoopSpec {
  return heaterRelayLoop({
    controller: { type: 'pid', pid: { kp: 0.5, tiS: 0, tdS: 0 } },
    raise: bandRelay('heater', 0.125, timing),
  });
}

describe('reconcile, band modulation: regulation', () => {
  test('heater on when cold, off when warm', () => {
    // [measured °C, heater wanted] on a fresh loop
    const table: Array<[value: number, heater: number]> = [
      [15, 1],
      [17, 1],
      [19.5, 0], // output 0.25: below the band, stays off
      [23, 0],
    ];
    for (const [value, heater] of table) {
      const h = new Harness(bandHeaterLoop(), desired('heat', SETPOINT));
      const result = h.cycle(at(0), value);
      assert.equal(result.wanted.heater, heater, `${value} °C`);
      // The action follows the output, not the relay: at 19.5 °C the loop asks for 25 % (heating)
      // though the band keeps the relay off; only at 23 °C is the output zero (idle).
      assert.equal(result.status.action, value < SETPOINT ? 'heating' : 'idle');
      if (heater) assert.deepEqual(result.commands[0]?.reason, 'regulate');
    }
  });

  test('on below 18.75 °C, off above 19.25 °C, holds in between (P-only, band kp · 0.25 °C)', () => {
    const h = new Harness(proportionalBandLoop(), desired('heat', SETPOINT));
    // Given a reading every 30 s, the heater is wanted at …
    const table: Array<[atS: number, value: number, heater: number]> = [
      [0, 19, 0], // inside the band, fresh loop (off): stays off
      [30, 18.7, 1], // output 0.65 > 0.625
      [60, 19, 1], // inside: holds on
      [90, 19.25, 1], // on the upper edge: holds
      [120, 19.3, 0], // output 0.35 < 0.375
      [150, 19, 0], // inside: holds off
      [180, 18.75, 0], // on the lower edge: holds
      [210, 18.6, 1],
    ];
    for (const [atS, value, heater] of table) {
      assert.equal(h.cycle(at(s(atS)), value).wanted.heater, heater, `t = ${atS} s, ${value} °C`);
    }
  });

  test('a duty inside the band brings no wake-up of its own (no windows): the next is staleness', () => {
    const h = new Harness(proportionalBandLoop(), desired('heat', SETPOINT));
    h.cycle(at(0), 18);
    const result = h.cycle(at(s(30)), 19);
    assert.equal(result.wanted.heater, 1);
    assert.equal(result.nextWakeMs, at(s(30)) + min(5) + 1);
  });

  test('minimum off time: a heater switched off waits before it may come on again, and wakes then', () => {
    const h = new Harness(proportionalBandLoop({ minOffMs: s(120) }), desired('heat', SETPOINT));
    const table: Array<[atS: number, value: number, heater: number]> = [
      [0, 18, 1],
      [30, 19.5, 0], // off at 30 s
      [60, 18, 0], // wanted on: held until 150 s
      [149, 18, 0],
      [150, 18, 1],
    ];
    for (const [atS, value, heater] of table) {
      const result = h.cycle(at(s(atS)), value);
      assert.equal(result.wanted.heater, heater, `t = ${atS} s, ${value} °C`);
      if (atS === 60) assert.equal(result.nextWakeMs, at(s(150)), 'wakes when the minimum off time ends');
    }
  });

  test('minimum on time: a heater switched on stays on until it has run minOnMs', () => {
    const h = new Harness(proportionalBandLoop({ minOnMs: s(300) }), desired('heat', SETPOINT));
    assert.equal(h.cycle(at(0), 18).wanted.heater, 1);
    const early = h.cycle(at(s(60)), 21);
    assert.equal(early.wanted.heater, 1);
    assert.equal(early.nextWakeMs, at(s(300)));
    assert.equal(h.cycle(at(s(300)), 21, at(s(60))).wanted.heater, 0);
  });

  test('holds a simulated room on the setpoint, at a modest switching rate', () => {
    // The bench's room-relay plant: K 20 °C, τ 600 s, θ 60 s, ambient 10 °C; SIMC PI (kp 0.25,
    // Ti 480 s) on a band of kp · 0.25 °C, minimum on/off 30 s, a reading every 10 s.
    const spec = heaterRelayLoop({
      controller: { type: 'pid', pid: { kp: 0.25, tiS: 480, tdS: 0 } },
      raise: bandRelay('heater', 0.25 * 0.25, { minOnMs: s(30), minOffMs: s(30) }),
    });
    const h = new Harness(spec, desired('heat', SETPOINT));
    const room = new DelayedRoom(() => h.actuators.heater ?? 0);
    const records = simulate(h, (atS) => room.advanceTo(atS), 6 * 3_600, 10);
    const lastHour = records.filter(({ atMs }) => atMs >= at(min(300)));
    const values = lastHour.map(({ result }) => result.status.measured!);
    const meanC = values.reduce((sum, v) => sum + v, 0) / values.length;
    assert.ok(Math.abs(meanC - SETPOINT) < 0.05, `mean over the last hour ${meanC.toFixed(3)} °C`);
    // A relay at full power moves this room 1 °C/min near 20 °C and acts 60 s late: ±1.5 °C.
    assert.ok(
      values.every((v) => Math.abs(v - SETPOINT) < 1.5),
      `range ${Math.min(...values).toFixed(2)}..${Math.max(...values).toFixed(2)} °C`,
    );
    let switches = 0;
    for (let i = 1; i < lastHour.length; i++) {
      if (lastHour[i]!.result.wanted.heater !== lastHour[i - 1]!.result.wanted.heater) switches++;
    }
    assert.ok(switches >= 10 && switches <= 30, `${switches} switches in the last hour`);
  });
});

/**
 * A first-order room with dead time, stepped per second: the heater level seen 60 s ago drives
 * it towards 10 + 20 · level °C with τ 600 s. `level()` is read when the room is advanced.
 */
class DelayedRoom {
  private tempC = 10;
  private atS = 0;
  private readonly levels: number[] = [];

  constructor(private readonly level: () => number) {}

  advanceTo(atS: number): number {
    const now = this.level();
    for (; this.atS < atS; this.atS++) {
      this.levels.push(now);
      const delayed = this.levels[this.atS - 60] ?? 0;
      this.tempC += (10 + 20 * delayed - this.tempC) * (1 - Math.exp(-1 / 600));
    }
    return this.tempC;
  }
}

describe('reconcile, band modulation: safe state overrides it', () => {
  const faults: Array<[fault: string, reading: (nowMs: number) => Reading | undefined]> = [
    ['missing reading', () => undefined],
    ['stale reading', (now) => reading(15, now - min(5) - 1)],
    ['NaN reading', (now) => reading(Number.NaN, now)],
    ['implausible reading', (now) => reading(200, now)],
  ];
  for (const [fault, faulty] of faults) {
    test(`${fault}: a heater on (minOnMs 10 min) goes off at once, as a safe-state command`, () => {
      const h = new Harness(bandHeaterLoop({ minOnMs: min(10) }), desired('heat', SETPOINT));
      assert.equal(h.cycle(at(0), 15).wanted.heater, 1, 'given a heater that is on');
      const now = at(s(30));
      const result = reconcile(h.spec, h.want, observed(faulty(now), h.actuators), h.memory, now);
      assert.equal(result.wanted.heater, 0);
      assert.deepEqual(
        result.commands.map((c) => [c.actuatorId, c.level, c.reason]),
        [['heater', 0, 'safe-state']],
      );
      assert.equal(condition(result, 'Faulted').status, 'True');
    });
  }

  test('mode off: a heater on goes off at once', () => {
    const h = new Harness(bandHeaterLoop({ minOnMs: min(10) }), desired('heat', SETPOINT));
    h.cycle(at(0), 15);
    h.want = desired('off', SETPOINT, 2);
    const result = h.cycle(at(s(10)), 15);
    assert.equal(result.wanted.heater, 0);
    assert.equal(result.commands[0]?.reason, 'safe-state');
  });

  test('after the fault, heating resumes when cold, but only once the minimum off time has passed', () => {
    const h = new Harness(bandHeaterLoop({ minOffMs: s(120) }), desired('heat', SETPOINT));
    assert.equal(h.cycle(at(0), 15).wanted.heater, 1);
    assert.equal(h.cycle(at(s(30)), undefined).wanted.heater, 0); // forced off at 30 s
    const back = h.cycle(at(s(60)), 15);
    assert.equal(back.wanted.heater, 0, 'held off: off for 30 s only');
    assert.equal(back.nextWakeMs, at(s(150)));
    assert.equal(condition(back, 'Faulted').status, 'False');
    assert.equal(h.cycle(at(s(150)), 15, at(s(60))).wanted.heater, 1);
  });
});

describe('reconcile, band modulation: idempotent', () => {
  const cases: Array<[name: string, spec: LoopSpec, mode: Mode]> = [
    ['band heater (PI)', bandHeaterLoop(), 'heat'],
    ['band heater (P), minimum times', proportionalBandLoop({ minOnMs: s(60), minOffMs: s(60) }), 'heat'],
    [
      'split range, both relays on bands',
      splitRangeLoop({ raise: bandRelay('heater', 0.125), lower: bandRelay('compressor', 0.125) }),
      'heat_cool',
    ],
  ];
  for (const [name, spec, mode] of cases) {
    for (const value of [SETPOINT - 3, SETPOINT, SETPOINT + 3]) {
      test(`${name}, ${value} °C: once applied, reconciling again changes nothing`, () => {
        assertIdempotentOnceApplied(spec, mode, SETPOINT, value);
      });
    }
  }
});

describe('reconcile, band modulation: where it does not apply', () => {
  test('a hysteresis controller ignores a band: the same levels as without one (6 h swing)', () => {
    const swing = (t: number) => SETPOINT + 1.5 * Math.sin((2 * Math.PI * t) / 1_800);
    const run = (spec: LoopSpec) =>
      simulate(new Harness(spec, desired('heat', SETPOINT)), swing, 6 * 3_600).map(({ atMs, result }) => [
        atMs,
        result.wanted.heater,
      ]);
    const plain = run(hysteresisHeaterLoop());
    assert.ok(plain.some(([, heater]) => heater === 1) && plain.some(([, heater]) => heater === 0));
    assert.deepEqual(run(hysteresisHeaterLoop({ raise: bandRelay('heater', 0.1) })), plain);
  });

  test('split range with bands on both relays: never both on (6 h, slow swing ±3 °C)', () => {
    const spec = splitRangeLoop({
      raise: bandRelay('heater', 0.125),
      lower: bandRelay('compressor', 0.125, { minOffMs: s(300) }),
    });
    const records = simulate(
      new Harness(spec, desired('heat_cool', SETPOINT)),
      (t) => SETPOINT + 3 * Math.sin((2 * Math.PI * t) / 2_400),
      6 * 3_600,
    );
    const both = records.filter(({ result }) => result.wanted.heater! > 0 && result.wanted.compressor! > 0);
    assert.deepEqual(both, []);
    assert.ok(records.some(({ result }) => result.wanted.heater === 1));
    assert.ok(records.some(({ result }) => result.wanted.compressor === 1));
  });
});
