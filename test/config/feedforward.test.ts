/** A PID's measured-disturbance feedforward in the config: validation and the loop spec it becomes. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { toLoopSpec } from '../../src/config/to-loop-spec.js';

const DEMO = fs.readFileSync('config/demo.yaml', 'utf8');
const ROOM_TDS = '      tdS: 40 # derivative time: brakes before the dead time makes it overshoot\n';

/** The demo with the room loop's controller extended by `lines` (indented as its keys). */
function demoWith(...lines: string[]): string {
  assert.ok(DEMO.includes(ROOM_TDS), 'the demo room loop changed: update this test');
  return DEMO.replace(ROOM_TDS, `${ROOM_TDS}${lines.map((line) => `      ${line}\n`).join('')}`);
}

const MODEL = 'model: { gain: 20, ambient: 10 }';

test('given a model and an existing sensor, the loop spec carries the disturbance with its staleness', () => {
  const loaded = parseConfigText(demoWith(MODEL, 'feedforward: { sensor: chamber_temp }'));
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  const spec = toLoopSpec(loaded.config, 'room');
  assert.equal(spec.controller.type, 'pid');
  const staleAfterS = loaded.config.sensors.chamber_temp!.staleAfterS;
  assert.deepEqual(spec.controller.type === 'pid' ? spec.controller.disturbance : undefined, {
    sensorId: 'chamber_temp',
    coupling: 1,
    staleAfterMs: staleAfterS * 1000,
    plausibleMin: -55,
    plausibleMax: 125,
  });
});

test('coupling and plausible range are taken as given', () => {
  const loaded = parseConfigText(
    demoWith(MODEL, 'feedforward: { sensor: chamber_temp, coupling: 0.4, plausible: { min: -40, max: 50 } }'),
  );
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  const spec = toLoopSpec(loaded.config, 'room');
  const disturbance = spec.controller.type === 'pid' ? spec.controller.disturbance : undefined;
  assert.equal(disturbance?.coupling, 0.4);
  assert.equal(disturbance?.plausibleMin, -40);
  assert.equal(disturbance?.plausibleMax, 50);
});

describe('invalid feedforward configs name the key and the reason', () => {
  const cases: Array<{ name: string; lines: string[]; error: string }> = [
    {
      name: 'an unknown sensor',
      lines: [MODEL, 'feedforward: { sensor: outdoor }'],
      error: 'loops.room.controller.feedforward.sensor: unknown sensor "outdoor"',
    },
    {
      name: "the loop's own sensor",
      lines: [MODEL, 'feedforward: { sensor: room_temp }'],
      error:
        'loops.room.controller.feedforward.sensor: "room_temp" is the loop\'s own sensor: the disturbance needs a sensor of its own',
    },
    {
      name: 'no model',
      lines: ['feedforward: { sensor: chamber_temp }'],
      error:
        'loops.room.controller.feedforward: needs controller.model (gain and ambient): the disturbance acts through it',
    },
    {
      name: 'a model gain of 0',
      lines: ['model: { gain: 0, ambient: 10 }', 'feedforward: { sensor: chamber_temp }'],
      error:
        "loops.room.controller.model.gain: must be above 0: the change at full output of the loop's signed output, where cooling is the negative side (a cooler that lowers the value by 15 °C at full power has gain 15)",
    },
    {
      name: 'a cooler written with a negative gain (the signed output already says cooling)',
      lines: ['model: { gain: -15, ambient: 10 }', 'feedforward: { sensor: chamber_temp }'],
      error:
        "loops.room.controller.model.gain: must be above 0: the change at full output of the loop's signed output, where cooling is the negative side (a cooler that lowers the value by 15 °C at full power has gain 15)",
    },
    {
      name: 'an inverted plausible range',
      lines: [MODEL, 'feedforward: { sensor: chamber_temp, plausible: { min: 50, max: -40 } }'],
      error: 'loops.room.controller.feedforward.plausible.min: must be less than plausible.max',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const loaded = parseConfigText(demoWith(...c.lines));
      assert.equal(loaded.ok, false);
      assert.ok(!loaded.ok && loaded.errors.includes(c.error), loaded.ok ? '' : loaded.errors.join('\n'));
    });
  }

  for (const coupling of [0, 1.5]) {
    test(`a coupling of ${coupling} (outside 0..1)`, () => {
      const loaded = parseConfigText(
        demoWith(MODEL, `feedforward: { sensor: chamber_temp, coupling: ${coupling} }`),
      );
      assert.equal(loaded.ok, false);
      assert.ok(
        !loaded.ok && loaded.errors.some((e) => e.startsWith('loops.room.controller.feedforward.coupling:')),
        loaded.ok ? '' : loaded.errors.join('\n'),
      );
    });
  }
});

test("the model's dead time reaches the loop spec (the disturbance feedforward's lead)", () => {
  const loaded = parseConfigText(
    demoWith('model: { gain: 20, ambient: 10, deadTimeS: 120 }', 'feedforward: { sensor: chamber_temp }'),
  );
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  const spec = toLoopSpec(loaded.config, 'room');
  assert.deepEqual(spec.controller.type === 'pid' ? spec.controller.model : undefined, {
    gain: 20,
    ambient: 10,
    deadTimeS: 120,
  });
});
