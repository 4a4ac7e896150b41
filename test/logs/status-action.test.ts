/**
 * The action a status line, Home Assistant and the history show: `idle` only when the loop's
 * output is really zero, whatever its relays do within their windows.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  at,
  continuousLoop,
  desired,
  Harness,
  heaterRelayLoop,
  min,
  relay,
  s,
  splitRangeLoop,
} from '../core/fixtures.js';

describe('action: idle only when the output is zero', () => {
  test('given a relay heater at 30 % (time-proportioning), then heating in the on and the off part of its window', () => {
    // P-only, kp 0.5: 19.4 °C → output 0.3, on for 3 of every 10 minutes.
    const h = new Harness(
      heaterRelayLoop({ controller: { type: 'pid', pid: { kp: 0.5, tiS: 0, tdS: 0 } } }),
      desired('heat', 20),
    );
    const table: Array<[atMs: number, heater: number]> = [
      [at(0), 1],
      [at(min(2)), 1],
      [at(min(4)), 0], // the off part of the window: still heating
      [at(min(9)), 0],
    ];
    for (const [nowMs, heater] of table) {
      const result = h.cycle(nowMs, 19.4);
      assert.equal(result.wanted.heater, heater, `heater at ${(nowMs - at(0)) / 60_000} min`);
      assert.equal(Math.round(result.status.output * 100), 30);
      assert.equal(result.status.action, 'heating');
    }
  });

  test('given a cooler held off by its minimum off time, when the loop wants cooling, then cooling', () => {
    const spec = splitRangeLoop({
      controller: { type: 'pid', pid: { kp: 0.5, tiS: 0, tdS: 0 } },
      lower: relay('compressor', { minOffMs: s(300) }),
      changeoverMs: 0,
    });
    const h = new Harness(spec, desired('heat_cool', 20));
    h.cycle(at(0), 23); // cools
    h.cycle(at(s(60)), 20); // within the deadband: stops, its minimum off time starts
    const result = h.cycle(at(s(120)), 23); // wants cooling again, the compressor may not start yet
    assert.equal(result.wanted.compressor, 0, 'held off');
    assert.ok(result.status.output < 0);
    assert.equal(result.status.action, 'cooling');
  });

  test('given a heater the changeover delay holds back (the cooler ran a minute ago), when the output turns positive, then idle', () => {
    const spec = splitRangeLoop({
      controller: { type: 'pid', pid: { kp: 0.5, tiS: 0, tdS: 0 } },
      deadband: 0,
      changeoverMs: s(300),
    });
    const h = new Harness(spec, desired('heat_cool', 20));
    assert.equal(h.cycle(at(0), 22).status.action, 'cooling');
    const result = h.cycle(at(s(60)), 19.8); // output +0.1, the cooler stopped a minute ago
    assert.ok(result.status.output > 0);
    assert.equal(result.wanted.heater, 0, 'held back by the changeover');
    assert.equal(result.status.action, 'idle');
    assert.equal(h.cycle(at(s(400)), 19.8).status.action, 'heating', 'after the changeover');
  });

  const cases: Array<[name: string, measured: number, mode: 'heat' | 'off', action: string]> = [
    ['warmer than the setpoint: output 0', 21, 'heat', 'idle'],
    ['a hair below the setpoint: output under half a percent, shown as 0 %', 19.995, 'heat', 'idle'],
    ['colder: output above 0', 19, 'heat', 'heating'],
    ['mode off', 15, 'off', 'off'],
  ];
  for (const [name, measured, mode, action] of cases) {
    test(`given a continuous heater, ${name}, then ${action}`, () => {
      const h = new Harness(
        continuousLoop({ controller: { type: 'pid', pid: { kp: 0.5, tiS: 0, tdS: 0 } } }),
        desired(mode, 20),
      );
      assert.equal(h.cycle(at(0), measured).status.action, action);
    });
  }

  test('given a sensor that is gone, then idle (the actuators are safe, the output 0)', () => {
    const h = new Harness(heaterRelayLoop(), desired('heat', 20));
    h.cycle(at(0), 15);
    const result = h.cycle(at(min(5)), undefined);
    assert.equal(result.status.output, 0);
    assert.equal(result.status.action, 'idle');
  });
});
