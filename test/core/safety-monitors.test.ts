/**
 * Safety monitors (src/core/safety-monitors.ts), read as specifications: given a loop and what
 * its plant does, when the cycle runs, then the actuators end up here — and a latched fault
 * holds every one of them safe until a person resets it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import { resetLatchedFault } from '../../src/core/loop-state.js';
import { initialLoopMemory, reconcile } from '../../src/core/reconcile.js';
import { safetyMonitors, shiftSafetyMemory } from '../../src/core/safety-monitors.js';
import type { Mode } from '../../src/core/types.js';
import {
  at,
  condition,
  continuousLoop,
  desired,
  Harness,
  heaterRelayLoop,
  hysteresisHeaterLoop,
  min,
  observed,
  reading,
  relay,
  s,
  splitRangeLoop,
} from './fixtures.js';

/** A cooler-only loop (a freezer's compressor) under hysteresis. */
function freezerLoop(overrides: Partial<LoopSpec> = {}): LoopSpec {
  return hysteresisHeaterLoop({
    id: 'freezer',
    raise: undefined,
    lower: relay('compressor'),
    plausibleMin: -55,
    ...overrides,
  });
}

/** A tank pump on a float switch (0 = low, 1 = full), hysteresis around 0.5. */
function tankLoop(overrides: Partial<LoopSpec> = {}): LoopSpec {
  return hysteresisHeaterLoop({
    id: 'tank',
    quantity: 'generic',
    raise: { ...relay('pump'), maxOnMs: min(10) },
    ...overrides,
  });
}

describe('cut-off: the loop never pushes past an absolute limit', () => {
  const rows: Array<{
    given: string;
    spec: LoopSpec;
    mode: Mode;
    setpoint: number;
    value: number;
    actuators: Record<string, number>;
    expect: Record<string, number>;
    latches?: string;
  }> = [
    {
      given: 'a fermenter heater on, 29.9 °C, cut-off max 30',
      spec: heaterRelayLoop({ cutoff: { max: 30 } }),
      mode: 'heat',
      setpoint: 35, // a setpoint beyond the cut-off: the cut-off does not depend on it
      value: 29.9,
      actuators: { heater: 1 },
      expect: { heater: 1 },
    },
    {
      given: 'the heater still wanted on when the value reaches 30 (cut-off max 30)',
      spec: heaterRelayLoop({ cutoff: { max: 30 } }),
      mode: 'heat',
      setpoint: 35,
      value: 30,
      actuators: { heater: 1 },
      expect: { heater: 0 },
      latches: 'AboveCutoff',
    },
    {
      given: 'a heater the controller switched off, but the plug still reports on, at 31',
      spec: heaterRelayLoop({ cutoff: { max: 30 } }),
      mode: 'heat',
      setpoint: 20,
      value: 31,
      actuators: { heater: 1 },
      expect: { heater: 0 },
      latches: 'AboveCutoff',
    },
    {
      given: 'a greenhouse at 45 °C in the sun with its heater off (cut-off max 40)',
      spec: heaterRelayLoop({ cutoff: { max: 40 } }),
      mode: 'heat',
      setpoint: 8,
      value: 45,
      actuators: { heater: 0 },
      expect: { heater: 0 },
    },
    {
      given: 'a fermenter in a 32 °C cellar, heater off, fridge cooling (cut-off max 30)',
      spec: splitRangeLoop({ cutoff: { max: 30 }, changeoverMs: 0 }),
      mode: 'heat_cool',
      setpoint: 18,
      value: 32,
      actuators: { heater: 0, compressor: 1 },
      expect: { heater: 0, compressor: 1 },
    },
    {
      given: 'a freezer compressor running at -30 °C (cut-off min -30)',
      spec: freezerLoop({ cutoff: { min: -30 } }),
      mode: 'cool',
      setpoint: -18,
      value: -30,
      actuators: { compressor: 1 },
      expect: { compressor: 0 },
      latches: 'BelowCutoff',
    },
    {
      given: 'mode off, heater off, the value above the cut-off',
      spec: heaterRelayLoop({ cutoff: { max: 30 } }),
      mode: 'off',
      setpoint: 20,
      value: 33,
      actuators: { heater: 0 },
      expect: { heater: 0 },
    },
  ];
  for (const row of rows) {
    test(`given ${row.given}, then ${JSON.stringify(row.expect)}${row.latches ? ` and ${row.latches} latches` : ', no fault'}`, () => {
      const result = reconcile(
        row.spec,
        desired(row.mode, row.setpoint),
        observed(reading(row.value, at(0)), row.actuators),
        initialLoopMemory(),
        at(0),
      );
      assert.deepEqual(result.wanted, row.expect);
      assert.equal(result.memory.latchedFault?.reason, row.latches);
      assert.equal(condition(result, 'Faulted').reason, row.latches ? `Latched${row.latches}` : 'NoFault');
    });
  }

  test('given a heater inside its minimum on time, when the cut-off is reached, then it goes off at once', () => {
    const spec = heaterRelayLoop({ raise: relay('heater', { minOnMs: min(10) }), cutoff: { max: 30 } });
    const h = new Harness(spec, desired('heat', 35));
    assert.equal(h.cycle(at(0), 25).wanted.heater, 1);
    assert.equal(h.cycle(at(min(1)), 30.1).wanted.heater, 0, 'the minimum on time does not hold it');
  });

  test('given a kettle past its cut-off, when it cools and when the fault is reset, then the heater stays off until the reset and heats after it', () => {
    const kettle = heaterRelayLoop({ id: 'kettle', plausibleMax: 125, cutoff: { max: 105 } });
    const h = new Harness(kettle, desired('heat', 110));
    assert.equal(h.cycle(at(0), 104).wanted.heater, 1, 'heating at 104');
    const tripped = h.cycle(at(s(10)), 105.2);
    assert.equal(tripped.wanted.heater, 0, 'off in the cycle that reached the cut-off');
    assert.equal(tripped.commands[0]?.detail, 'latched fault AboveCutoff');
    assert.equal(h.cycle(at(min(30)), 60).wanted.heater, 0, 'cold again, still latched');
    h.memory = resetLatchedFault(h.memory, at(min(31)));
    h.want = desired('heat', 100);
    assert.equal(h.cycle(at(min(32)), 60).wanted.heater, 1, 'heats after the reset');
  });
});

describe('stuck watch: a welded relay or a plug that does not switch off', () => {
  const WATCH = { periodMs: min(30), minChange: 2 };
  /** Hysteresis heater at setpoint 20: commanded off from the first cycle (value above 20.3). */
  const run = (spec: LoopSpec, valueAtMin: (t: number) => number, minutes: number) => {
    const h = new Harness(spec, desired('heat', 20));
    const results = [];
    for (let t = 0; t <= minutes; t++) results.push(h.cycle(at(min(t)), valueAtMin(t)));
    return { h, results, last: results.at(-1)! };
  };
  const rows: Array<[given: string, valueAtMin: (t: number) => number, latchesAtMin: number | undefined]> = [
    ['the heater is off and the room keeps warming 0.1 °C/min from 20.5', (t) => 20.5 + t * 0.1, 30],
    [
      'the heater is off and the room overshoots 1 °C, then cools back',
      (t) => (t < 10 ? 20.5 + t * 0.1 : Math.max(20.5, 21.5 - (t - 10) * 0.1)),
      undefined,
    ],
    [
      'the heater is off and the room warms 2.5 °C but stays below setpoint + 2',
      (t) => Math.min(21.9, 19.5 + t * 0.1),
      undefined,
    ],
  ];
  for (const [given, valueAtMin, latchesAtMin] of rows) {
    test(`given ${given}, then ${latchesAtMin === undefined ? 'no fault' : `StuckOn latches at ${latchesAtMin} min`}`, () => {
      const { results, last } = run(hysteresisHeaterLoop({ stuckWatch: WATCH }), valueAtMin, 60);
      const firstFault = results.findIndex((r) => r.memory.latchedFault !== undefined);
      assert.equal(firstFault === -1 ? undefined : firstFault, latchesAtMin);
      assert.equal(last.wanted.heater, 0, 'the heater is commanded off either way');
      if (latchesAtMin !== undefined) assert.equal(condition(last, 'Faulted').reason, 'LatchedStuckOn');
    });
  }

  test('default (no stuckWatch): a room the sun warms 6 °C with the heater off raises no fault', () => {
    const { last } = run(hysteresisHeaterLoop(), (t) => 20.5 + t * 0.1, 60);
    assert.equal(condition(last, 'Faulted').status, 'False');
  });

  test('given a split range whose compressor is commanded off while the cellar keeps cooling, then StuckOn latches and both actuators are safe', () => {
    const spec = splitRangeLoop({ stuckWatch: WATCH, changeoverMs: 0 });
    const h = new Harness(spec, desired('heat_cool', 18));
    // 18.4 °C falling 0.1 °C/min: inside the deadband, then below it, where the heater comes on.
    let faultAt: number | undefined;
    for (let t = 0; t <= 60 && faultAt === undefined; t++) {
      const r = h.cycle(at(min(t)), 18.4 - t * 0.1);
      if (r.memory.latchedFault) faultAt = t;
    }
    assert.equal(h.memory.latchedFault?.reason, 'StuckOn');
    assert.match(h.memory.latchedFault?.message ?? '', /compressor has been commanded off/);
    assert.deepEqual(h.last?.wanted, { heater: 0, compressor: 0 });
  });

  test('the watch restarts when the heater runs: a pulse resets "commanded off since"', () => {
    const { h } = run(
      hysteresisHeaterLoop({ stuckWatch: WATCH }),
      (t) => (t === 20 ? 19 : 20.5 + t * 0.01),
      20,
    );
    assert.equal(h.memory.safety?.stuck, undefined, 'heater on at 20 min (19 °C): no stuck window');
  });
});

describe('runaway watch: once converged, out of the band at saturated output', () => {
  const WATCH = { band: 2, periodMs: min(30) };
  test('given a heater converged at 20, when the probe falls out (reads 15) and heating is full for 30 min, then Runaway latches and the heater goes off', () => {
    const h = new Harness(heaterRelayLoop({ runawayWatch: WATCH }), desired('heat', 20));
    h.cycle(at(0), 20);
    assert.ok(h.memory.safety?.runaway, 'armed once converged');
    for (let t = 1; t < 31; t++)
      assert.equal(h.cycle(at(min(t)), 15).wanted.heater, 1, `heating at ${t} min`);
    const tripped = h.cycle(at(min(31)), 15);
    assert.equal(tripped.memory.latchedFault?.reason, 'Runaway');
    assert.equal(tripped.wanted.heater, 0);
  });

  test('given a cold start (never converged), full heating for hours raises no runaway', () => {
    const h = new Harness(heaterRelayLoop({ runawayWatch: WATCH }), desired('heat', 20));
    for (let t = 0; t <= 180; t += 5) h.cycle(at(min(t)), 10 + t * 0.05);
    assert.equal(h.memory.latchedFault, undefined);
  });

  test('a new setpoint disarms it until the loop converges there', () => {
    const h = new Harness(heaterRelayLoop({ runawayWatch: WATCH }), desired('heat', 20));
    h.cycle(at(0), 20);
    h.want = desired('heat', 25, 2);
    for (let t = 1; t <= 90; t++) h.cycle(at(min(t)), 20 + t * 0.05);
    assert.equal(h.memory.latchedFault, undefined);
  });

  test('back inside the band before the period: the window restarts', () => {
    const h = new Harness(heaterRelayLoop({ runawayWatch: WATCH }), desired('heat', 20));
    h.cycle(at(0), 20);
    for (let t = 1; t <= 25; t++) h.cycle(at(min(t)), 15);
    h.cycle(at(min(26)), 19);
    for (let t = 27; t <= 50; t++) h.cycle(at(min(t)), 15);
    assert.equal(h.memory.latchedFault, undefined, '24 min out: below the 30 min period');
  });

  const unit: Array<[when: string, value: number, output: number, faults: boolean]> = [
    ['5 below, output +1 (saturated towards the setpoint)', 15, 1, true],
    ['5 below, output +0.8 (not saturated)', 15, 0.8, false],
    ['5 above, output 0 (a heater-only loop: the stuck watch’s case)', 25, 0, false],
    ['5 above, output −1 (a cooler at full)', 25, -1, true],
    ['1.5 below, output +1 (inside the band)', 18.5, 1, false],
  ];
  for (const [when, value, output, faults] of unit) {
    test(`armed, when ${when} for 30 min, then ${faults ? 'Runaway' : 'no fault'}`, () => {
      const spec = splitRangeLoop({ runawayWatch: WATCH });
      const inputs = {
        value,
        setpoint: 20,
        regulating: true,
        output,
        levels: { heater: 0, compressor: 0 },
        observed: {},
        lastCommanded: {},
        convergedBand: 0.5,
      };
      const first = safetyMonitors(spec, { runaway: { setpoint: 20 } }, inputs, at(0));
      const later = safetyMonitors(spec, first.memory, inputs, at(min(30)));
      assert.equal(later.fault?.reason, faults ? 'Runaway' : undefined);
    });
  }
});

describe('maximum on-time', () => {
  test('given a tank pump limited to 10 min, when the float never rises, then the pump goes off at 10 min and MaxOnTime latches', () => {
    const h = new Harness(tankLoop(), desired('heat', 0.5));
    assert.equal(h.cycle(at(0), 0).wanted.pump, 1);
    assert.equal(h.cycle(at(min(9)), 0).wanted.pump, 1);
    const tripped = h.cycle(at(min(10)), 0);
    assert.equal(tripped.wanted.pump, 0);
    assert.equal(condition(tripped, 'Faulted').reason, 'LatchedMaxOnTime');
    assert.equal(h.cycle(at(min(30)), 0).wanted.pump, 0, 'held off until reset');
  });

  test('a cycle is due exactly when the limit is reached', () => {
    const spec = tankLoop({ staleAfterMs: min(30), raise: { ...relay('pump'), maxOnMs: min(7) } });
    const h = new Harness(spec, desired('heat', 0.5));
    h.cycle(at(0), 0);
    assert.equal(h.cycle(at(min(1)), 0).nextWakeMs, at(min(7)));
  });

  test('a pump that fills the tank in 8 min never trips, and each run is timed afresh', () => {
    const h = new Harness(tankLoop(), desired('heat', 0.5));
    for (let run = 0; run < 3; run++) {
      const t0 = run * 20;
      for (let t = t0; t < t0 + 8; t++) h.cycle(at(min(t)), 0);
      for (let t = t0 + 8; t < t0 + 20; t++) assert.equal(h.cycle(at(min(t)), 1).wanted.pump, 0);
    }
    assert.equal(h.memory.latchedFault, undefined);
  });

  test('a continuous heating mat limited to 1 h latches at 1 h', () => {
    const spec = continuousLoop({ raise: { id: 'mat', kind: 'continuous', safeLevel: 0, maxOnMs: min(60) } });
    const h = new Harness(spec, desired('heat', 30));
    for (let t = 0; t < 60; t++) assert.ok((h.cycle(at(min(t)), 25).wanted.mat ?? 0) > 0);
    const tripped = h.cycle(at(min(60)), 25);
    assert.equal(tripped.wanted.mat, 0);
    assert.equal(tripped.memory.latchedFault?.reason, 'MaxOnTime');
  });

  test('an actuator whose safe state is on is not limited (the safe state wins)', () => {
    const spec = tankLoop({ raise: { ...relay('pump'), safeLevel: 1, maxOnMs: min(10) } });
    const h = new Harness(spec, desired('heat', 0.5));
    for (let t = 0; t <= 30; t++) h.cycle(at(min(t)), 0);
    assert.equal(h.memory.latchedFault, undefined);
  });
});

describe('start cap (switch-ons per hour)', () => {
  /** A hysteresis compressor on a chattering value: wants on every other minute. */
  const chatter = (t: number) => (t % 2 === 0 ? 25 : 15);
  const spec = freezerLoop({ lower: { ...relay('compressor'), maxStartsPerHour: 3 } });

  test('given 3 starts allowed per hour, when the controller wants a 4th, then the compressor stays off until the first start is an hour old', () => {
    const h = new Harness(spec, desired('cool', 20));
    const wanted: number[] = [];
    for (let t = 0; t <= 61; t++) wanted.push(h.cycle(at(min(t)), chatter(t)).wanted.compressor!);
    // Starts at 0, 2 and 4 min; off is always allowed (1, 3, 5); held from 6 until 60.
    assert.deepEqual(wanted.slice(0, 8), [1, 0, 1, 0, 1, 0, 0, 0]);
    assert.equal(wanted[60], 1, 'allowed again once the 0 min start is an hour old');
    assert.equal(h.memory.latchedFault, undefined, 'the cap holds, it does not latch');
  });

  test('a held start asks for a cycle when it becomes allowed', () => {
    const inputs = {
      value: 25,
      setpoint: 20,
      regulating: true,
      output: -1,
      levels: { compressor: 1 },
      observed: {},
      lastCommanded: {},
      convergedBand: 0.5,
    };
    const memory = { startsMs: { compressor: [at(0), at(min(2)), at(min(4))] } };
    const held = safetyMonitors(spec, memory, inputs, at(min(6)));
    assert.deepEqual(Object.keys(held.heldOff), ['compressor']);
    assert.ok(held.wakeTimes.includes(at(min(60))), JSON.stringify(held.wakeTimes));
  });

  test('the held start is explained in the command detail', () => {
    const h = new Harness(spec, desired('cool', 20));
    for (let t = 0; t < 6; t++) h.cycle(at(min(t)), chatter(t));
    // Observed on (someone switched it on by hand): the held-off relay is commanded off, with why.
    h.actuators.compressor = 1;
    const held = h.cycle(at(min(6)), 25);
    assert.equal(held.wanted.compressor, 0);
    assert.match(held.commands[0]?.detail ?? '', /start held back: 3 starts in the last hour/);
  });

  test('with a maximum on-time too, the relay still goes off at the limit (off is always allowed)', () => {
    const both = freezerLoop({ lower: { ...relay('compressor'), maxStartsPerHour: 1, maxOnMs: min(20) } });
    const h = new Harness(both, desired('cool', 20));
    for (let t = 0; t < 20; t++) assert.equal(h.cycle(at(min(t)), 25).wanted.compressor, 1);
    assert.equal(h.cycle(at(min(20)), 25).wanted.compressor, 0);
  });
});

describe('precedence: mode off, sensor faults and interlocks stay safe and latch nothing', () => {
  const guarded = heaterRelayLoop({
    cutoff: { max: 30 },
    stuckWatch: { periodMs: min(30), minChange: 2 },
    runawayWatch: { band: 2, periodMs: min(30) },
    raise: { ...relay('heater'), maxOnMs: min(10), maxStartsPerHour: 2 },
    interlocks: [{ sensorId: 'window', pauseWhen: 1, staleAfterMs: min(5) }],
  });
  const cases: Array<[when: string, mode: Mode, value: number | undefined, window: number]> = [
    ['mode off', 'off', 25, 0],
    ['no reading', 'heat', undefined, 0],
    ['the window open', 'heat', 10, 1],
  ];
  for (const [when, mode, value, window] of cases) {
    test(`when ${when} for 2 h, then the heater is off and no monitor latches`, () => {
      let memory = initialLoopMemory();
      for (let t = 0; t <= 120; t += 5) {
        const r = reconcile(
          guarded,
          desired(mode, 20),
          {
            actuators: { heater: 0 },
            ...(value === undefined ? {} : { reading: reading(value + t * 0.05, at(min(t))) }),
            interlocks: { window: reading(window, at(min(t))) },
          },
          memory,
          at(min(t)),
        );
        assert.equal(r.wanted.heater, 0, `at ${t} min`);
        memory = r.memory;
      }
      assert.equal(memory.latchedFault, undefined);
    });
  }
});

describe('clock stepped back: times ahead of now count as now', () => {
  const spec = freezerLoop({ lower: { ...relay('compressor'), maxStartsPerHour: 2, maxOnMs: min(10) } });
  const inputs = {
    value: 25,
    setpoint: 20,
    regulating: true,
    output: -1,
    levels: { compressor: 1 },
    observed: {},
    lastCommanded: {},
    convergedBand: 0.5,
  };
  test('an on-time that started "in the future" runs its limit in full from now, no longer', () => {
    const memory = { onSinceMs: { compressor: at(min(60)) } };
    const now = safetyMonitors(spec, memory, inputs, at(0));
    assert.equal(now.fault, undefined);
    assert.deepEqual(now.memory?.onSinceMs, { compressor: at(0) });
    assert.equal(safetyMonitors(spec, now.memory, inputs, at(min(10))).fault?.reason, 'MaxOnTime');
  });
  test('starts stamped "in the future" still count against the cap', () => {
    const memory = { startsMs: { compressor: [at(min(30)), at(min(40))] } };
    const held = safetyMonitors(spec, memory, inputs, at(0));
    assert.deepEqual(Object.keys(held.heldOff), ['compressor']);
  });
});

describe('shiftSafetyMemory (a wall-clock step, for clock-step.ts)', () => {
  test('moves every absolute time by the step and nothing else', () => {
    const memory = {
      stuck: { raise: { offSinceMs: at(0), extreme: 19.5 } },
      runaway: { setpoint: 20, outsideSinceMs: at(min(1)) },
      onSinceMs: { heater: at(min(2)) },
      startsMs: { heater: [at(min(3)), at(min(4))] },
    };
    assert.deepEqual(shiftSafetyMemory(memory, min(120)), {
      stuck: { raise: { offSinceMs: at(min(120)), extreme: 19.5 } },
      runaway: { setpoint: 20, outsideSinceMs: at(min(121)) },
      onSinceMs: { heater: at(min(122)) },
      startsMs: { heater: [at(min(123)), at(min(124))] },
    });
  });

  test('given a heater on for 50 of its 60 min, when the clock steps 2 h forward and the memory is shifted, then it is not cut off early', () => {
    const spec = heaterRelayLoop({ raise: { ...relay('heater'), maxOnMs: min(60) } });
    const inputs = {
      value: 15,
      setpoint: 20,
      regulating: true,
      output: 1,
      levels: { heater: 1 },
      observed: {},
      lastCommanded: {},
      convergedBand: 0.5,
    };
    const memory = { onSinceMs: { heater: at(0) } };
    const after = at(min(50 + 120));
    assert.equal(
      safetyMonitors(spec, memory, inputs, after).fault?.reason,
      'MaxOnTime',
      'unshifted: false trip',
    );
    assert.equal(safetyMonitors(spec, shiftSafetyMemory(memory, min(120)), inputs, after).fault, undefined);
  });
});
