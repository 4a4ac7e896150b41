import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { validateConfig } from '../../src/config/load.js';
import { toLoopSpec } from '../../src/config/to-loop-spec.js';
import type { ActuatorSpec } from '../../src/core/loop-spec.js';
import {
  DEFAULT_BAND,
  DEFAULT_MAX_HALF_BAND,
  DEFAULT_WINDOW_S,
  relayModulationOf,
} from '../../src/kinds/fields.js';

/** A room heated by a relay with the keys `relay` under `controller`, validated in full. */
function heater(relay: string, controller: string): ActuatorSpec {
  const result = validateConfig(
    parse(`
version: 1
node: { id: pi }
simulation: { plants: { p: { ambient: 10, timeConstantS: 600 } } }
sensors: { t: { kind: simulated, plant: p } }
actuators: { heater: { kind: simulated_relay, plant: p, gain: 20${relay ? `, ${relay}` : ''} } }
loops:
  room: { sensor: t, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: ${controller} }
`),
  );
  assert.ok(result.ok, result.ok ? '' : result.errors.join('; '));
  return toLoopSpec(result.config, 'room').raise!;
}

describe('relay defaults: a PID relay with nothing configured switches on the duty band', () => {
  const windows = { windowMs: DEFAULT_WINDOW_S * 1000, minOnMs: 0, minOffMs: 0 };
  // [relay keys, controller, expected band (duty units) or undefined for windows, window ms]
  const table: Array<[relay: string, controller: string, band: number | undefined, windowMs: number]> = [
    ['', '{ type: pid, kp: 0.25 }', 0.25 * DEFAULT_BAND, windows.windowMs],
    ['band: 0.4', '{ type: pid, kp: 0.5 }', 0.2, windows.windowMs],
    // A file written for windows keeps them, exactly as written.
    ['windowS: 300', '{ type: pid, kp: 0.25 }', undefined, 300_000],
    ['modulation: window', '{ type: pid, kp: 0.25 }', undefined, windows.windowMs],
    ['modulation: window, band: 0.4', '{ type: pid, kp: 0.25 }', undefined, windows.windowMs],
    ['modulation: band, windowS: 300', '{ type: pid, kp: 0.25 }', 0.25 * DEFAULT_BAND, 300_000],
    // A default must not make a valid file invalid: kp·band ≥ 0.5 is narrowed, not rejected.
    ['', '{ type: pid, kp: 4 }', DEFAULT_MAX_HALF_BAND, windows.windowMs],
    ['band: 1', '{ type: pid, kp: 1 }', DEFAULT_MAX_HALF_BAND, windows.windowMs],
    ['modulation: window', '{ type: pid, kp: 4 }', undefined, windows.windowMs],
    // A hysteresis controller switches the relay itself: no band.
    ['', '{ type: hysteresis }', undefined, windows.windowMs],
  ];
  for (const [relay, controller, band, windowMs] of table) {
    test(`{ ${relay || 'nothing'} } under ${controller} → ${band === undefined ? 'windows' : `band ±${band}`}`, () => {
      const spec = heater(relay, controller);
      assert.deepEqual(spec.band, band === undefined ? undefined : { halfBand: band });
      assert.deepEqual(spec.timeProportioning, { ...windows, windowMs });
    });
  }

  test('a written modulation band still has to fit the PID (kp·band < 0.5)', () => {
    const result = validateConfig(
      parse(`
version: 1
node: { id: pi }
simulation: { plants: { p: { ambient: 10, timeConstantS: 600 } } }
sensors: { t: { kind: simulated, plant: p } }
actuators: { heater: { kind: simulated_relay, plant: p, gain: 20, modulation: band } }
loops:
  room: { sensor: t, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: pid, kp: 4 } }
`),
    );
    assert.equal(result.ok, false);
    assert.match(result.ok ? '' : result.errors.join('\n'), /band too wide for kp/);
  });

  test('relayModulationOf: the written one, else window when a window is given, else band', () => {
    const table: Array<[raw: Parameters<typeof relayModulationOf>[0], modulation: string]> = [
      [{ modulation: undefined, windowS: undefined }, 'band'],
      [{ modulation: undefined, windowS: 600 }, 'window'],
      [{ modulation: 'window', windowS: undefined }, 'window'],
      [{ modulation: 'band', windowS: 300 }, 'band'],
    ];
    for (const [raw, modulation] of table)
      assert.equal(relayModulationOf(raw), modulation, JSON.stringify(raw));
  });
});
