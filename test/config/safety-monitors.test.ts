/**
 * Safety monitors in the config: what a user writes, what the core gets, and the mistakes the
 * schema refuses (a cut-off that a legal setpoint would trip, a limit on a safe-on actuator).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { toLoopSpec } from '../../src/config/to-loop-spec.js';

/** A fermenter (heater relay, cooler relay, fogger-like continuous spare) with extra keys. */
function yaml(loopExtra: string, heaterExtra = '', quantity = 'temperature', matExtra = ''): string {
  return `
version: 1
node: { id: pi }
simulation: { plants: { p: { ambient: 10, timeConstantS: 600 } } }
sensors: { t: { kind: simulated, plant: p } }
actuators:
  heater: { kind: simulated_relay, plant: p, gain: 20 ${heaterExtra} }
  cooler: { kind: simulated_relay, plant: p, gain: -20 }
  mat: { kind: simulated_continuous, plant: p, gain: 5 ${matExtra} }
loops:
  ferm:
    quantity: ${quantity}
    sensor: t
    raise: heater
    lower: cooler
    setpoint: 19
    limits: { min: 0, max: 28 }
    ${loopExtra}
    controller: { type: pid, kp: 0.8 }
  box: { sensor: t, raise: mat, setpoint: 30, limits: { min: 20, max: 40 }, controller: { type: pid, kp: 0.2 } }
`;
}

function spec(loopExtra: string, heaterExtra = '', quantity = 'temperature', matExtra = '') {
  const result = parseConfigText(yaml(loopExtra, heaterExtra, quantity, matExtra), 't.yaml');
  assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
  return { ferm: toLoopSpec(result.config, 'ferm'), box: toLoopSpec(result.config, 'box') };
}

function errors(loopExtra: string, heaterExtra = '', quantity = 'temperature'): string[] {
  const result = parseConfigText(yaml(loopExtra, heaterExtra, quantity), 't.yaml');
  assert.ok(!result.ok, 'expected the config to be refused');
  return result.errors;
}

describe('config → core: safety monitors', () => {
  test('default: every monitor off', () => {
    const { ferm, box } = spec('');
    assert.deepEqual(
      [ferm.cutoff, ferm.stuckWatch, ferm.runawayWatch, ferm.raise?.maxOnMs, ferm.raise?.maxStartsPerHour],
      [undefined, undefined, undefined, undefined, undefined],
    );
    assert.equal(box.raise?.maxOnMs, undefined);
  });

  const cases: Array<[given: string, loopExtra: string, quantity: string, expect: object]> = [
    ['cutoff: { max: 30 }', 'cutoff: { max: 30 }', 'temperature', { cutoff: { max: 30 } }],
    [
      'stuckWatch: {} (temperature)',
      'stuckWatch: {}',
      'temperature',
      { stuckWatch: { periodMs: 1_800_000, minChange: 2 } },
    ],
    [
      'stuckWatch: {} (humidity)',
      'stuckWatch: {}',
      'humidity',
      { stuckWatch: { periodMs: 1_800_000, minChange: 10 } },
    ],
    [
      'runawayWatch: { periodS: 600 } (temperature)',
      'runawayWatch: { periodS: 600 }',
      'temperature',
      { runawayWatch: { band: 2, periodMs: 600_000 } },
    ],
    [
      'runawayWatch: { band: 0.3 } (generic)',
      'runawayWatch: { band: 0.3 }',
      'generic',
      { runawayWatch: { band: 0.3, periodMs: 1_800_000 } },
    ],
  ];
  for (const [given, loopExtra, quantity, expect] of cases) {
    test(`${given} → ${JSON.stringify(expect)}`, () => {
      const { ferm } = spec(loopExtra, '', quantity);
      const picked = Object.fromEntries(
        Object.keys(expect).map((key) => [key, ferm[key as keyof typeof ferm]]),
      );
      assert.deepEqual(picked, expect);
    });
  }

  test('actuator limits: maxOnS and maxStartsPerHour on a relay, maxOnS on a continuous actuator', () => {
    const { ferm, box } = spec('', ', maxOnS: 3600, maxStartsPerHour: 6', 'temperature', ', maxOnS: 600');
    assert.deepEqual([ferm.raise?.maxOnMs, ferm.raise?.maxStartsPerHour], [3_600_000, 6]);
    assert.equal(box.raise?.maxOnMs, 600_000);
  });
});

describe('config: safety monitor mistakes are refused with a message', () => {
  const cases: Array<
    [given: string, loopExtra: string, heaterExtra: string, quantity: string, error: string]
  > = [
    ['an empty cut-off', 'cutoff: {}', '', 'temperature', 'loops.ferm.cutoff: give max, min or both'],
    [
      'a cut-off max a legal setpoint would trip',
      'cutoff: { max: 28 }',
      '',
      'temperature',
      'loops.ferm.cutoff.max: must lie above limits.max (28): a setpoint there would trip it',
    ],
    [
      'a cut-off min inside the limits',
      'cutoff: { min: 2 }',
      '',
      'temperature',
      'loops.ferm.cutoff.min: must lie below limits.min (0): a setpoint there would trip it',
    ],
    [
      'a cut-off max beyond the plausible range',
      'cutoff: { max: 130 }',
      '',
      'temperature',
      'loops.ferm.cutoff.max: must lie below plausible.max (125): readings above are sensor faults',
    ],
    [
      'a generic stuck watch without minChange',
      'stuckWatch: {}',
      '',
      'generic',
      'loops.ferm.stuckWatch.minChange: required for a generic loop (no default unit)',
    ],
    [
      'a generic runaway watch without band',
      'runawayWatch: {}',
      '',
      'generic',
      'loops.ferm.runawayWatch.band: required for a generic loop (no default unit)',
    ],
    [
      'maxOnS on a relay whose safe state is on',
      '',
      ', safeState: on, maxOnS: 600',
      'temperature',
      'actuators.heater.maxOnS: needs a safe state of off: maxOnS limits the time an actuator is on',
    ],
    [
      'a fractional maxStartsPerHour',
      '',
      ', maxStartsPerHour: 2.5',
      'temperature',
      'actuators.heater.maxStartsPerHour',
    ],
  ];
  for (const [given, loopExtra, heaterExtra, quantity, error] of cases) {
    test(`given ${given}, then "${error}"`, () => {
      const found = errors(loopExtra, heaterExtra, quantity);
      assert.ok(
        found.some((line) => line.startsWith(error)),
        found.join('\n'),
      );
    });
  }

  test('a cut-off max needs a raise actuator', () => {
    const text = yaml('').replace(
      'box: { sensor: t, raise: mat,',
      'box: { cutoff: { max: 45 }, sensor: t, lower: mat,',
    );
    const result = parseConfigText(text, 't.yaml');
    assert.ok(!result.ok);
    assert.ok(
      result.errors.includes(
        'loops.box.cutoff.max: needs a raise actuator (nothing else pushes the value up)',
      ),
      result.errors.join('\n'),
    );
  });
});
