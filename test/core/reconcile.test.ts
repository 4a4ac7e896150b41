import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import { initialLoopMemory, reconcile } from '../../src/core/reconcile.js';
import type { ActuatorLevel, Mode, Reading } from '../../src/core/types.js';
import {
  allLoops,
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
  simulate,
  splitRangeLoop,
} from './fixtures.js';
import { actuatorIds, assertIdempotentOnceApplied } from './idempotence.js';

const SETPOINT = 20;

describe('reconcile: idempotent', () => {
  const readings: Array<[name: string, value: number]> = [
    ['3 °C below', SETPOINT - 3],
    ['on the setpoint', SETPOINT],
    ['3 °C above', SETPOINT + 3],
  ];
  for (const { name, spec, mode } of allLoops) {
    for (const [where, value] of readings) {
      test(`${name}, ${where}: once applied, reconciling again changes nothing`, () => {
        assertIdempotentOnceApplied(spec, mode, SETPOINT, value);
      });

      test(`${name}, ${where}: reconciling twice without applying sends nothing the second time`, () => {
        const now = at(min(1));
        const r = reading(value, now);
        const unknown: Record<string, ActuatorLevel> = {};
        const first = reconcile(
          spec,
          desired(mode, SETPOINT),
          observed(r, unknown),
          initialLoopMemory(),
          now,
        );
        assert.equal(first.commands.length, actuatorIds(spec).length, 'unknown actuators are commanded');
        const second = reconcile(spec, desired(mode, SETPOINT), observed(r, unknown), first.memory, now);
        assert.deepEqual(second.commands, [], 'retry not due yet');
        const soon = reconcile(
          spec,
          desired(mode, SETPOINT),
          observed(r, unknown),
          second.memory,
          now + s(9),
        );
        assert.deepEqual(soon.commands, [], 'retry not due 9 s later');
        const due = reconcile(spec, desired(mode, SETPOINT), observed(r, unknown), soon.memory, now + s(10));
        assert.deepEqual(
          due.commands.map((c) => c.reason),
          actuatorIds(spec).map(() => 'retry'),
          'retried after retryInitialMs',
        );
      });
    }
  }
});

describe('reconcile: mode off', () => {
  for (const { name, spec, mode } of allLoops) {
    test(`${name}: every actuator at its safe level in the same cycle`, () => {
      const h = new Harness(spec, desired(mode, SETPOINT));
      const cold = h.cycle(at(0), SETPOINT - 3);
      assert.ok((cold.wanted[spec.raise!.id] ?? 0) > 0, 'given the raising actuator is on');
      h.want = desired('off', SETPOINT, 2);
      const off = h.cycle(at(s(1)), SETPOINT - 3);
      for (const id of actuatorIds(spec)) assert.equal(off.wanted[id], 0, id);
      assert.deepEqual(
        off.commands.map((c) => [c.actuatorId, c.level, c.reason]),
        [[spec.raise!.id, 0, 'safe-state']],
      );
      assert.equal(off.status.action, 'off');
      assert.equal(off.status.output, 0);
    });
  }

  test('safety beats minimum on time: a relay on for 1 s with minOnMs 120 s goes off at once', () => {
    const spec = heaterRelayLoop({ raise: relay('heater', { minOnMs: s(120) }) });
    const h = new Harness(spec, desired('heat', SETPOINT));
    assert.equal(h.cycle(at(0), 15).wanted.heater, 1);
    h.want = desired('off', SETPOINT, 2);
    const off = h.cycle(at(s(1)), 15);
    assert.equal(off.wanted.heater, 0);
    assert.equal(off.commands[0]?.detail, 'mode off');
  });

  test('a non-zero safe level is commanded in mode off (e.g. a fan kept at 20 %)', () => {
    const spec = continuousLoop({ raise: { id: 'fan', kind: 'continuous', safeLevel: 0.2 } });
    const result = reconcile(
      spec,
      desired('off', SETPOINT),
      observed(undefined, { fan: 0 }),
      initialLoopMemory(),
      at(0),
    );
    assert.deepEqual(result.wanted, { fan: 0.2 });
    assert.deepEqual(
      result.commands.map((c) => [c.level, c.reason]),
      [[0.2, 'safe-state']],
    );
  });
});

describe('reconcile: sensor faults put every actuator in its safe state', () => {
  const faults: Array<
    [fault: string, reading: (nowMs: number, spec: LoopSpec) => Reading | undefined, reason: string]
  > = [
    ['missing', () => undefined, 'Missing'],
    ['stale (older than staleAfterMs)', (now, spec) => reading(15, now - spec.staleAfterMs - 1), 'Stale'],
    ['NaN', (now) => reading(Number.NaN, now), 'NotFinite'],
    ['implausible (200 °C)', (now) => reading(200, now), 'Implausible'],
    ['implausible (−60 °C)', (now) => reading(-60, now), 'Implausible'],
  ];
  for (const { name, spec, mode } of allLoops) {
    for (const [fault, faultyReading, reason] of faults) {
      test(`${name}, ${fault}: safe state, Faulted True (Sensor${reason}), SensorHealthy False`, () => {
        const h = new Harness(spec, desired(mode, SETPOINT));
        assert.ok((h.cycle(at(0), 15).wanted[spec.raise!.id] ?? 0) > 0, 'given a heater that is on');
        const now = at(s(30));
        const result = reconcile(
          spec,
          h.want,
          observed(faultyReading(now, spec), h.actuators),
          h.memory,
          now,
        );
        for (const id of actuatorIds(spec)) assert.equal(result.wanted[id], 0, `${id} at its safe level`);
        assert.deepEqual(
          result.commands.map((c) => [c.actuatorId, c.level, c.reason]),
          [[spec.raise!.id, 0, 'safe-state']],
          'the heater that was on is switched off',
        );
        const faulted = condition(result, 'Faulted');
        assert.equal(faulted.status, 'True');
        assert.equal(faulted.reason, `Sensor${reason}`);
        assert.equal(faulted.lastTransitionMs, now);
        const healthy = condition(result, 'SensorHealthy');
        assert.equal(healthy.status, 'False');
        assert.equal(healthy.reason, reason);
        assert.equal(condition(result, 'Converged').status, 'Unknown');
        assert.equal(result.status.measured, undefined);
        assert.equal(result.status.action, 'idle');
      });
    }
  }

  test('safety beats minimum on time on a fault too', () => {
    const spec = heaterRelayLoop({ raise: relay('heater', { minOnMs: s(120) }) });
    const h = new Harness(spec, desired('heat', SETPOINT));
    h.cycle(at(0), 15);
    assert.equal(h.cycle(at(s(1)), undefined).wanted.heater, 0);
  });
});

describe('reconcile: recovery from a fault', () => {
  test('heater relay (PID): regulation resumes and Faulted becomes False with a new lastTransitionMs', () => {
    const h = new Harness(heaterRelayLoop(), desired('heat', SETPOINT));
    // Given: cold at 0 s → heater on; the sensor fails at 30 s for 10 windows.
    assert.equal(h.cycle(at(0), 15).wanted.heater, 1);
    assert.equal(h.cycle(at(s(30)), undefined).wanted.heater, 0);
    assert.equal(condition(h.last!, 'Faulted').status, 'True');
    h.cycle(at(s(3_000)), undefined);
    // When a fresh cold reading arrives (6 030 s, inside a new window) …
    const recovered = h.cycle(at(s(6_030)), 15);
    // … then the heater is on again at once, and the conditions say so.
    assert.equal(recovered.wanted.heater, 1);
    assert.deepEqual(
      recovered.commands.map((c) => [c.actuatorId, c.level, c.reason]),
      [['heater', 1, 'regulate']],
    );
    const faulted = condition(recovered, 'Faulted');
    assert.equal(faulted.status, 'False');
    assert.equal(faulted.lastTransitionMs, at(s(6_030)));
    assert.equal(condition(recovered, 'SensorHealthy').status, 'True');
    assert.equal(recovered.status.action, 'heating');
  });

  test('heater relay (PID): after a short glitch mid-pulse, heating resumes at once in a fresh window', () => {
    const h = new Harness(heaterRelayLoop(), desired('heat', SETPOINT));
    h.cycle(at(0), 15);
    assert.equal(h.cycle(at(s(30)), undefined).wanted.heater, 0, 'the glitch cuts the pulse');
    // When the reading is back 30 s later and it is still cold …
    const back = h.cycle(at(s(60)), 15);
    // … then the heater is on again at once: the cut pulse does not keep it off for the window.
    assert.equal(condition(back, 'Faulted').status, 'False');
    assert.equal(back.wanted.heater, 1);
    assert.deepEqual(
      back.commands.map((c) => [c.actuatorId, c.level, c.reason]),
      [['heater', 1, 'regulate']],
    );
  });

  test('heater relay (PID) with minOffMs: after a glitch the restart still waits for the minimum off time', () => {
    const h = new Harness(
      heaterRelayLoop({ raise: relay('heater', { minOffMs: s(120) }) }),
      desired('heat', SETPOINT),
    );
    h.cycle(at(0), 15);
    h.cycle(at(s(30)), undefined);
    const back = h.cycle(at(s(60)), 15);
    assert.equal(back.wanted.heater, 0, 'off for only 30 s of the 120 s minimum');
    assert.equal(back.nextWakeMs, at(s(150)), 'wakes when the minimum off time ends');
    assert.equal(h.cycle(at(s(150)), 15).wanted.heater, 1);
  });

  test('hysteresis heater: comes on again at once when cold after the fault', () => {
    const h = new Harness(hysteresisHeaterLoop(), desired('heat', SETPOINT));
    h.cycle(at(0), 15);
    h.cycle(at(s(30)), Number.NaN);
    const back = h.cycle(at(s(60)), 15);
    assert.equal(back.wanted.heater, 1);
    assert.equal(condition(back, 'Faulted').lastTransitionMs, at(s(60)));
  });

  test('continuous actuator: comes back on at once when cold after the fault', () => {
    const h = new Harness(continuousLoop(), desired('heat', SETPOINT));
    assert.ok((h.cycle(at(0), 18).wanted.mat ?? 0) > 0);
    assert.equal(h.cycle(at(s(30)), 200).wanted.mat, 0);
    assert.ok((h.cycle(at(s(60)), 18).wanted.mat ?? 0) > 0);
  });
});

describe('reconcile: status', () => {
  test('generation and observedGeneration equal the desired generation; fields reflect the cycle', () => {
    const spec = heaterRelayLoop();
    const result = reconcile(
      spec,
      desired('heat', 21.5, 7),
      observed(reading(19, at(0)), { heater: 0 }),
      initialLoopMemory(),
      at(s(5)),
    );
    assert.equal(result.status.generation, 7);
    assert.equal(result.status.observedGeneration, 7);
    assert.ok(result.status.conditions.every((c) => c.observedGeneration === 7));
    assert.equal(result.status.loop, 'room');
    assert.equal(result.status.setpoint, 21.5);
    assert.equal(result.status.measured, 19);
    assert.equal(result.status.measuredAtMs, at(0));
    assert.equal(result.status.updatedAtMs, at(s(5)));
    assert.deepEqual(result.status.actuators, { heater: { wanted: 1, observed: 0 } });
    const unknown = reconcile(
      spec,
      desired('heat', 21.5, 7),
      observed(undefined, {}),
      initialLoopMemory(),
      at(0),
    );
    assert.deepEqual(unknown.status.actuators, { heater: { wanted: 0, observed: null } });
  });

  const humidity = continuousLoop({
    quantity: 'humidity',
    raise: { id: 'humidifier', kind: 'continuous', safeLevel: 0 },
    lower: { id: 'dryer', kind: 'continuous', safeLevel: 0 },
    plausibleMin: 0,
    plausibleMax: 100,
  });
  const actions: Array<
    [loop: string, spec: LoopSpec, mode: Mode, setpoint: number, value: number, action: string]
  > = [
    ['heater', heaterRelayLoop(), 'heat', 20, 17, 'heating'],
    ['heater', heaterRelayLoop(), 'heat', 20, 23, 'idle'],
    ['heater', heaterRelayLoop(), 'off', 20, 17, 'off'],
    ['split range', splitRangeLoop(), 'heat_cool', 20, 23, 'cooling'],
    ['split range', splitRangeLoop(), 'heat_cool', 20, 17, 'heating'],
    ['split range', splitRangeLoop(), 'heat_cool', 20, 20.2, 'idle'], // inside the deadband
    ['split range', splitRangeLoop(), 'heat', 20, 23, 'idle'], // heat only: the compressor may not run
    ['split range', splitRangeLoop(), 'cool', 20, 17, 'idle'],
    ['hysteresis', hysteresisHeaterLoop(), 'heat', 20, 19.5, 'heating'],
    ['hysteresis', hysteresisHeaterLoop(), 'heat', 20, 19.8, 'idle'],
    ['humidity', humidity, 'humidify', 60, 40, 'humidifying'],
    ['humidity', humidity, 'dehumidify', 60, 80, 'drying'],
    ['humidity', humidity, 'off', 60, 80, 'off'],
  ];
  for (const [loop, spec, mode, setpoint, value, action] of actions) {
    test(`action: ${loop}, ${mode}, setpoint ${setpoint}, measured ${value} → ${action}`, () => {
      const result = reconcile(
        spec,
        desired(mode, setpoint),
        observed(reading(value, at(0)), {}),
        initialLoopMemory(),
        at(0),
      );
      assert.equal(result.status.action, action);
    });
  }

  test('Converged: True within ±convergedBand, False outside (which side), False when off', () => {
    const table: Array<[mode: Mode, value: number, status: string, reason: string]> = [
      ['heat', 20, 'True', 'WithinBand'],
      ['heat', 19.5, 'True', 'WithinBand'],
      ['heat', 20.5, 'True', 'WithinBand'],
      ['heat', 19.4, 'False', 'BelowSetpoint'],
      ['heat', 20.6, 'False', 'AboveSetpoint'],
      ['off', 20, 'False', 'Off'],
    ];
    for (const [mode, value, status, reason] of table) {
      const result = reconcile(
        heaterRelayLoop(),
        desired(mode, SETPOINT),
        observed(reading(value, at(0)), { heater: 0 }),
        initialLoopMemory(),
        at(0),
      );
      const converged = condition(result, 'Converged');
      assert.deepEqual([converged.status, converged.reason], [status, reason], `${mode}, measured ${value}`);
    }
  });

  test('conditions keep lastTransitionMs while their status is unchanged', () => {
    const h = new Harness(heaterRelayLoop(), desired('heat', SETPOINT));
    const table: Array<[atS: number, value: number | undefined, converged: string, convergedSinceS: number]> =
      [
        [0, 20.1, 'True', 0],
        [30, 19.9, 'True', 0],
        [60, 20.3, 'True', 0],
        [90, 19, 'False', 90],
        [120, 18.9, 'False', 90],
        [150, undefined, 'Unknown', 150],
        [180, 20, 'True', 180],
        [210, 20.2, 'True', 180],
      ];
    for (const [atS, value, converged, convergedSinceS] of table) {
      const result = h.cycle(at(s(atS)), value);
      const c = condition(result, 'Converged');
      assert.deepEqual([c.status, c.lastTransitionMs], [converged, at(s(convergedSinceS))], `t = ${atS} s`);
      assert.equal(
        condition(result, 'Reconciled').lastTransitionMs,
        at(0),
        `Reconciled since 0 s, t = ${atS} s`,
      );
    }
    // SensorHealthy went False at 150 s and True again at 180 s.
    assert.equal(condition(h.last!, 'SensorHealthy').lastTransitionMs, at(s(180)));
  });

  test('ActuatorConfirmed: False until the actuator reports the wanted level', () => {
    const spec = heaterRelayLoop();
    const first = reconcile(
      spec,
      desired('heat', 20),
      observed(reading(15, at(0)), { heater: 0 }),
      initialLoopMemory(),
      at(0),
    );
    assert.equal(condition(first, 'ActuatorConfirmed').status, 'False');
    const second = reconcile(
      spec,
      desired('heat', 20),
      observed(reading(15, at(0)), { heater: 1 }),
      first.memory,
      at(s(2)),
    );
    assert.equal(condition(second, 'ActuatorConfirmed').status, 'True');
    assert.equal(condition(second, 'ActuatorConfirmed').lastTransitionMs, at(s(2)));
  });
});

describe('reconcile: nextWakeMs', () => {
  test('equals the relay’s pulse end when that is the next event', () => {
    // 0.6 °C below with kp 0.5: output 0.3 → a 180 s pulse in a 600 s window.
    const spec = heaterRelayLoop();
    const r = reading(SETPOINT - 0.6, at(0));
    const first = reconcile(
      spec,
      desired('heat', SETPOINT),
      observed(r, { heater: 0 }),
      initialLoopMemory(),
      at(0),
    );
    assert.equal(first.wanted.heater, 1);
    assert.equal(first.nextWakeMs, at(s(10)), 'first: the retry of the unconfirmed command');
    const confirmed = reconcile(
      spec,
      desired('heat', SETPOINT),
      observed(r, { heater: 1 }),
      first.memory,
      at(s(2)),
    );
    assert.equal(confirmed.nextWakeMs, at(s(180)), 'then: the end of the pulse');
  });

  test('equals the staleness deadline when no actuator event comes earlier', () => {
    const spec = heaterRelayLoop();
    const r = reading(SETPOINT + 2, at(0));
    const result = reconcile(
      spec,
      desired('heat', SETPOINT),
      observed(r, { heater: 0 }),
      initialLoopMemory(),
      at(0),
    );
    assert.equal(result.wanted.heater, 0);
    assert.equal(result.nextWakeMs, at(spec.staleAfterMs + 1), 'the reading becomes stale');
  });

  for (const { name, spec, mode } of allLoops) {
    test(`${name}: never before now, and the loop is woken before anything is due (6 h)`, () => {
      const h = new Harness(spec, desired(mode, SETPOINT));
      // Temperature swinging ±3 °C around the setpoint with a 40 min period.
      const records = simulate(h, (t) => SETPOINT + 3 * Math.sin((2 * Math.PI * t) / 2_400), 6 * 3_600);
      for (const { atMs, result } of records) assert.ok(result.nextWakeMs >= atMs);
      assert.ok(records.length > 6 * 120, 'cycled at least on every reading');
    });
  }
});

describe('reconcile: drift', () => {
  for (const { name, spec, mode } of allLoops) {
    test(`${name}: an actuator changed by hand after confirmation is restored at once`, () => {
      const h = new Harness(spec, desired(mode, SETPOINT));
      const id = spec.raise!.id;
      const wanted = h.cycle(at(0), SETPOINT - 3).wanted[id]!;
      assert.ok(wanted > 0);
      assert.deepEqual(h.cycle(at(s(5)), SETPOINT - 3, at(0)).commands, [], 'confirmed');
      // Someone switches it off by hand.
      h.actuators[id] = 0;
      const drift = h.cycle(at(s(20)), SETPOINT - 3, at(0));
      assert.deepEqual(
        drift.commands.map((c) => [c.actuatorId, c.level, c.reason]),
        [[id, wanted, 'drift']],
      );
    });
  }
});

describe('reconcile: setpoint weight below 1', () => {
  test('b 0.5: a cold room gets heat at once after a start or a mode change', () => {
    const spec = continuousLoop({
      controller: { type: 'pid', pid: { kp: 0.2, tiS: 900, tdS: 0, setpointWeight: 0.5 } },
    });
    const h = new Harness(spec, desired('heat', SETPOINT));
    const start = h.cycle(at(0), SETPOINT - 2);
    assert.ok(start.wanted.mat! >= 0.39, `heats from the start: ${start.wanted.mat}`);
    const cycles = simulate(h, () => SETPOINT - 2, 1_800, 30, 30);
    assert.ok(
      cycles.every((c) => c.result.wanted.mat! >= 0.39),
      'and keeps heating while cold',
    );
  });
});
