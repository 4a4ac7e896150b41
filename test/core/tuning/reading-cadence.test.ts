/**
 * Whether a loop's sensor can feed an autotune (core/tuning/reading-cadence.ts), as a table of
 * sensors from real config text, checked at every layer that uses the rule: the pure check, the
 * core's start (startLoopAutotune) and the stored request a loop acts on (its refusal event).
 * A run already going whose reading turns quiet (kept by liveness only) ends at once.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { toLoopSpec } from '../../../src/config/to-loop-spec.js';
import type { LoopSpec } from '../../../src/core/loop-spec.js';
import { initialLoopMemory, type LoopMemory, type LoopObserved } from '../../../src/core/loop-state.js';
import { startLoopAutotune } from '../../../src/core/reconcile.js';
import { applyStoredAutotuneRequest } from '../../../src/core/tuning/autotune-request.js';
import { stepLoopAutotune } from '../../../src/core/tuning/loop-autotune.js';
import type { AutotuneMark } from '../../../src/core/tuning/loop-tuning.js';
import {
  AUTOTUNE_READING_EVERY_MS,
  quietReadingProblem,
  readingCadenceProblem,
} from '../../../src/core/tuning/reading-cadence.js';
import type { Reading } from '../../../src/core/types.js';
import { validConfig } from '../../support/config.js';
import { desired, heaterRelayLoop, min, T0 } from '../fixtures.js';

const NEED = 'autotune needs a reading at least every 60 s';
const LIVENESS = '{ preset: zigbee2mqtt, device: zigbee2mqtt/fermenter_probe }';

/** A fermenter heated by a Tasmota plug, its probe `beer_temp` given by `sensorYaml` (and more sensors). */
function fermenterSpec(sensorsYaml: string, loopSensor = 'sensor: beer_temp'): LoopSpec {
  const config = validConfig(`
version: 1
node: { id: cellar }
mqtt: {}
sensors:
${sensorsYaml}
actuators:
  heat_mat: { kind: mqtt_switch, preset: tasmota, device: heat_mat_plug }
loops:
  fermenter:
    ${loopSensor}
    raise: heat_mat
    mode: heat
    setpoint: 19
    limits: { min: 0, max: 28 }
    controller: { type: pid, kp: 0.8, tiS: 1800 }
`);
  return toLoopSpec(config, 'fermenter');
}

const probe = (extra: string) =>
  `  beer_temp: { kind: mqtt, topic: zigbee2mqtt/fermenter_probe, field: temperature${extra} }`;

/** What the sampler hands the loop from each sensor: a liveness sensor's reading carries it. */
const plainReading = (): Reading => ({ value: 18, atMs: T0 });
const livenessReading = (): Reading => ({
  value: 18,
  atMs: T0,
  liveness: {
    seenAtMs: T0,
    via: 'availability zigbee2mqtt/fermenter_probe/availability',
    maxQuietMs: min(60),
  },
});

const CASES: Array<{
  given: string;
  spec: () => LoopSpec;
  reading: () => Reading;
  refused?: string;
}> = [
  {
    given: 'an MQTT probe at its default period (60 s)',
    spec: () => fermenterSpec(probe('')),
    reading: plainReading,
  },
  {
    given: 'an MQTT probe every 10 s',
    spec: () => fermenterSpec(probe(', periodS: 10')),
    reading: plainReading,
  },
  {
    given: 'a simulated sensor every 10 s (the demo)',
    spec: () => simulatedSpec(),
    reading: plainReading,
  },
  {
    given: 'an MQTT probe that publishes every 300 s',
    spec: () => fermenterSpec(probe(', periodS: 300')),
    reading: plainReading,
    refused:
      `${NEED}; sensor beer_temp reports every 300 s (periodS): ` +
      'lower its periodS to 60 or less if the device can report that often',
  },
  {
    given: 'an MQTT probe every 61 s (just over the limit)',
    spec: () => fermenterSpec(probe(', periodS: 61')),
    reading: plainReading,
    refused:
      `${NEED}; sensor beer_temp reports every 61 s (periodS): ` +
      'lower its periodS to 60 or less if the device can report that often',
  },
  {
    given: 'a quiet Zigbee probe (liveness block), even at a 10 s period',
    spec: () => fermenterSpec(probe(`, periodS: 10, liveness: ${LIVENESS}`)),
    reading: livenessReading,
    refused: `${NEED}; sensor beer_temp reports only on change (liveness): use a sensor that reports periodically`,
  },
  {
    given: 'a sensor set whose second member is a quiet probe',
    spec: () =>
      fermenterSpec(
        `${probe('').replace('beer_temp', 'wall_temp')}\n${probe(`, liveness: ${LIVENESS}`)}`,
        'sensors: [wall_temp, beer_temp]',
      ),
    reading: plainReading,
    refused: `${NEED}; sensor beer_temp reports only on change (liveness): use a sensor that reports periodically`,
  },
  {
    given: 'a loop whose cadence is not known but whose reading carries liveness',
    spec: () => heaterRelayLoop(),
    reading: livenessReading,
    refused: `${NEED}; sensor of the loop reports only on change (liveness): use a sensor that reports periodically`,
  },
];

function simulatedSpec(): LoopSpec {
  const config = validConfig(`
version: 1
node: { id: demo }
simulation:
  plants:
    chamber: { kind: thermal, ambient: 22, timeConstantS: 3600, deadTimeS: 60 }
sensors:
  chamber_temp: { kind: simulated, plant: chamber, periodS: 10 }
actuators:
  chamber_heater: { kind: simulated_relay, plant: chamber, gain: 15, windowS: 300 }
loops:
  fermenter:
    sensor: chamber_temp
    raise: chamber_heater
    mode: heat
    setpoint: 18
    limits: { min: 0, max: 30 }
    controller: { type: pid, kp: 1, tiS: 720 }
`);
  return toLoopSpec(config, 'fermenter');
}

function observedWith(spec: LoopSpec, reading: Reading): LoopObserved {
  const actuators = Object.fromEntries([spec.raise, spec.lower].flatMap((a) => (a ? [[a.id, 0]] : [])));
  return { reading, actuators };
}

describe('reading cadence: which sensors can feed an autotune', () => {
  test('the limit is the MQTT kind default period, 60 s', () => {
    assert.equal(AUTOTUNE_READING_EVERY_MS, 60_000);
  });

  for (const { given, spec, reading, refused } of CASES) {
    const then = refused === undefined ? 'accepted' : 'refused with the reason';
    test(`given ${given}: ${then}`, () => {
      const loopSpec = spec();
      const observed = observedWith(loopSpec, reading());
      // The pure check.
      assert.equal(readingCadenceProblem(loopSpec, observed.reading), refused);
      // The core's start of a run.
      const started = startLoopAutotune(loopSpec, desired('heat', 19), observed, initialLoopMemory(), {}, T0);
      if (refused === undefined) {
        assert.ok(started.ok, started.ok ? '' : started.reason);
        assert.equal(started.memory.autotune?.phase, 'noise');
      } else {
        assert.deepEqual(started, { ok: false, reason: refused });
      }
      // A person's request as the loop acts on it: refused with an event that says why.
      const applied = applyStoredAutotuneRequest(
        {
          spec: loopSpec,
          desired: desired('heat', 19),
          observed,
          defaults: undefined,
          request: { action: 'start', atMs: T0, generation: 2, options: {} },
        },
        initialLoopMemory() as LoopMemory & AutotuneMark,
        T0,
      );
      if (refused === undefined) {
        assert.equal(applied.event, undefined);
        assert.equal(applied.memory.autotune?.phase, 'noise');
      } else {
        assert.equal(applied.event?.kind, 'autotune-refused');
        assert.equal(applied.event?.message, `autotune not started: ${refused}`);
        assert.deepEqual(applied.memory.autotuneRefused, { generation: 2, reason: refused, atMs: T0 });
        assert.equal(applied.memory.autotune, undefined, 'nothing started');
      }
    });
  }

  test('given the reading is unusable (stale), the sensor problem comes first, not the cadence', () => {
    const loopSpec = fermenterSpec(probe(''));
    const stale = { value: 18, atMs: T0 - min(10) };
    const started = startLoopAutotune(
      loopSpec,
      desired('heat', 19),
      observedWith(loopSpec, stale),
      initialLoopMemory(),
      {},
      T0,
    );
    assert.deepEqual(started, {
      ok: false,
      reason: 'the sensor cannot be used: last reading is 600 s old (limit 180 s)',
    });
  });
});

describe('reading cadence: a running autotune whose reading goes quiet', () => {
  const QUIET = 'quiet: unchanged for 4 min, device seen 10 s ago (limit 60 min)';

  test('quietReadingProblem: only a usable reading kept in force by liveness is a problem', () => {
    assert.equal(quietReadingProblem(undefined), undefined);
    assert.equal(quietReadingProblem({ ok: true, value: 18 }), undefined);
    assert.equal(quietReadingProblem({ ok: false, reason: 'Stale', message: 'old' }), undefined);
    assert.equal(
      quietReadingProblem({ ok: true, value: 18, quiet: QUIET }),
      `the sensor went quiet (${QUIET}): ${NEED}`,
    );
  });

  test('given a run in its noise phase, when the verdict turns quiet, then the run ends aborted with that reason', () => {
    const loopSpec = fermenterSpec(probe(''));
    const observed = observedWith(loopSpec, plainReading());
    const started = startLoopAutotune(loopSpec, desired('heat', 19), observed, initialLoopMemory(), {}, T0);
    assert.ok(started.ok);
    const fresh = stepLoopAutotune(
      started.memory.autotune!,
      desired('heat', 19),
      { ...observed, reading: { value: 18, atMs: T0 + 10_000 } },
      T0 + 10_000,
      { ok: true, value: 18 },
    );
    assert.equal(fresh.ended, undefined, 'a fresh reading: the run goes on');
    const quiet = stepLoopAutotune(
      fresh.autotune,
      desired('heat', 19),
      { ...observed, reading: { value: 18, atMs: T0 + 10_000 } },
      T0 + min(4),
      { ok: true, value: 18, quiet: QUIET },
    );
    assert.equal(quiet.ended, 'aborted');
    assert.equal(quiet.output, undefined);
    assert.equal(quiet.autotune.abortReason, `the sensor went quiet (${QUIET}): ${NEED}`);
  });
});
