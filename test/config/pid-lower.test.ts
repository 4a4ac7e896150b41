/**
 * `controller.lower`: the lower side's own gains on a loop with a heater and a cooler (split
 * range), what the core gets, and the loops that cannot have them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { toLoopSpec } from '../../src/config/to-loop-spec.js';

/** A fermenter with a heater relay and a cooler relay (both on the duty band), and a heater-only box. */
function yaml(fermController: string, boxController = '{ type: pid, kp: 0.2 }'): string {
  return `
version: 1
node: { id: pi }
simulation: { plants: { p: { ambient: 10, timeConstantS: 600 } } }
sensors: { t: { kind: simulated, plant: p } }
actuators:
  heater: { kind: simulated_relay, plant: p, gain: 20, modulation: band, band: 0.2 }
  cooler: { kind: simulated_relay, plant: p, gain: -2, modulation: band, band: 0.2 }
  mat: { kind: simulated_relay, plant: p, gain: 5 }
loops:
  ferm:
    sensor: t
    raise: heater
    lower: cooler
    setpoint: 19
    limits: { min: 0, max: 28 }
    controller: ${fermController}
  box: { sensor: t, raise: mat, setpoint: 30, limits: { min: 20, max: 40 }, controller: ${boxController} }
`;
}

function parsed(fermController: string, boxController?: string) {
  return parseConfigText(yaml(fermController, boxController), 't.yaml');
}

describe('controller.lower on a loop with a heater and a cooler', () => {
  test("the lower side's gains reach the core as lowerPid; the raise side keeps kp, tiS, tdS", () => {
    const result = parsed(
      '{ type: pid, kp: 0.1, tiS: 600, lower: { kp: 1, tiS: 900, tdS: 20, setpointWeight: 0.7 } }',
    );
    assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
    const controller = toLoopSpec(result.config, 'ferm').controller;
    assert.ok(controller.type === 'pid');
    assert.equal(controller.pid.kp, 0.1);
    assert.equal(controller.pid.tiS, 600);
    assert.deepEqual(controller.lowerPid, {
      kp: 1,
      tiS: 900,
      tdS: 20,
      derivativeFilterS: 20,
      setpointWeight: 0.7,
    });
  });

  test('tiS and tdS default to 0, setpointWeight to the raise side’s (absent in the spec)', () => {
    const result = parsed('{ type: pid, kp: 0.1, setpointWeight: 0.8, lower: { kp: 1 } }');
    assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
    const controller = toLoopSpec(result.config, 'ferm').controller;
    assert.ok(controller.type === 'pid');
    assert.deepEqual(controller.lowerPid, { kp: 1, tiS: 0, tdS: 0, derivativeFilterS: 0 });
  });

  test("each relay's duty band scales with its own side's kp", () => {
    const result = parsed('{ type: pid, kp: 0.1, lower: { kp: 1 } }');
    assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
    const spec = toLoopSpec(result.config, 'ferm');
    assert.equal(spec.raise?.band?.halfBand, 0.1 * 0.2);
    assert.equal(spec.lower?.band?.halfBand, 1 * 0.2);
  });

  test('without lower, the core gets no lowerPid (kp, tiS, tdS serve both sides)', () => {
    const result = parsed('{ type: pid, kp: 0.1 }');
    assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
    const spec = toLoopSpec(result.config, 'ferm');
    assert.ok(spec.controller.type === 'pid');
    assert.equal(spec.controller.lowerPid, undefined);
    assert.equal(spec.lower?.band?.halfBand, 0.1 * 0.2);
  });
});

describe('controller.lower refused', () => {
  test('on a loop with only a raise actuator, with a message that says why', () => {
    const result = parsed('{ type: pid, kp: 0.1 }', '{ type: pid, kp: 0.2, lower: { kp: 1 } }');
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.ok(
      result.errors.some((e) =>
        /loops\.box\.controller\.lower: needs both a raise and a lower actuator/.test(e),
      ),
      result.errors.join('\n'),
    );
  });

  const invalid: Array<[string, RegExp]> = [
    ['{ kp: 0 }', /loops\.ferm\.controller\.lower\.kp/],
    ['{ kp: 1, tiS: -1 }', /loops\.ferm\.controller\.lower\.tiS/],
    ['{ kp: 1, setpointWeight: 1.5 }', /loops\.ferm\.controller\.lower\.setpointWeight/],
    ['{ tiS: 600 }', /loops\.ferm\.controller\.lower\.kp/],
    ['{ kp: 1, derivativeFilterS: 5 }', /loops\.ferm\.controller\.lower\.derivativeFilterS/],
  ];
  for (const [lower, message] of invalid) {
    test(`lower ${lower}`, () => {
      const result = parsed(`{ type: pid, kp: 0.1, lower: ${lower} }`);
      assert.ok(!result.ok);
      assert.ok(
        result.errors.some((e) => message.test(e)),
        result.errors.join('\n'),
      );
    });
  }

  test('on a hysteresis controller: an unknown key', () => {
    const result = parsed('{ type: hysteresis, lower: { kp: 1 } }');
    assert.ok(!result.ok);
  });

  test("a relay band on the lower side is checked against the lower side's kp", () => {
    // Cooler band 0.2: lower kp 3 makes it 0.6 of the output (too wide); the raise kp 0.1 would not.
    const tooWide = parsed('{ type: pid, kp: 0.1, lower: { kp: 3 } }');
    assert.equal(tooWide.ok, false);
    assert.match(
      tooWide.ok ? '' : tooWide.errors.join('\n'),
      /actuators\.cooler\.band.*lower\.kp 3 × band 0\.2/,
    );
    // Raise kp 2 with the heater's band 0.2 is 0.4; the cooler's own kp 1 keeps its band 0.2.
    const fits = parsed('{ type: pid, kp: 2, lower: { kp: 1 } }');
    assert.ok(fits.ok, fits.ok ? '' : fits.errors.join('\n'));
  });
});
