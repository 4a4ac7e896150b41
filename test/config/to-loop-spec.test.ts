import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { configSchema } from '../../src/config/schema.js';
import { toLoopSpec } from '../../src/config/to-loop-spec.js';

/** A room with a heater relay (keys `relay`) and a PID or hysteresis controller. */
function roomSpec(relay: string, controller: string) {
  const config = configSchema.parse(
    parse(`
version: 1
node: { id: pi }
simulation: { plants: { p: { ambient: 10, timeConstantS: 600 } } }
sensors: { t: { kind: simulated, plant: p } }
actuators: { heater: { kind: simulated_relay, plant: p, gain: 20, minOnS: 30, minOffS: 60, ${relay} } }
loops:
  room: { sensor: t, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: ${controller} }
`),
  );
  return toLoopSpec(config, 'room');
}

describe('toLoopSpec: relay modulation', () => {
  // [relay keys, controller, expected band in the spec (duty units)]
  const cases: [string, string, { halfBand: number } | undefined][] = [
    ['windowS: 300', '{ type: pid, kp: 0.25 }', undefined],
    ['modulation: window, bandC: 0.4', '{ type: pid, kp: 0.25 }', undefined],
    ['modulation: band', '{ type: pid, kp: 0.25 }', { halfBand: 0.0625 }],
    ['modulation: band, bandC: 0.4', '{ type: pid, kp: 0.5 }', { halfBand: 0.2 }],
    ['windowS: 300', '{ type: hysteresis }', undefined],
  ];
  for (const [relay, controller, band] of cases) {
    test(`${relay}, ${controller} → ${band ? `band ±${band.halfBand} (kp · bandC)` : 'windows'}`, () => {
      const heater = roomSpec(relay, controller).raise!;
      assert.deepEqual(heater.band, band);
      // Minimum times hold whichever modulation: they stay in timeProportioning.
      assert.deepEqual(
        [heater.timeProportioning?.minOnMs, heater.timeProportioning?.minOffMs],
        [30_000, 60_000],
      );
    });
  }

  test('the window is kept as configured (used when the band is absent)', () => {
    assert.equal(
      roomSpec('windowS: 300', '{ type: pid, kp: 0.25 }').raise?.timeProportioning?.windowMs,
      300_000,
    );
  });
});
