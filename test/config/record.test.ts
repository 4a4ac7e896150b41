/**
 * loops.<id>.record: sensors recorded beside a loop without regulating on it. What is
 * accepted (with its defaults) and what is refused, with the path and the reason.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { recordedSeriesOf } from '../../src/config/schema/record.js';
import { configErrors, minimalSimConfigText, validConfig } from '../support/config.js';

/** Two more sensors on plant p, and a second loop `box` regulating on `u`. */
const EXTRA = `
  outdoor: { kind: simulated, plant: p, periodS: 60 }
  gravity: { kind: simulated, plant: p, periodS: 300 }
  u: { kind: simulated, plant: p }`;

/** The minimal config with the extra sensors and `record` as given (YAML flow text). */
function withRecord(record: string): string {
  return minimalSimConfigText({ loopExtra: `    record: ${record}` }).replace(
    /sensors:\n {2}t: \{ kind: simulated, plant: p \}/,
    `sensors:\n  t: { kind: simulated, plant: p }${EXTRA}`,
  );
}

describe('loops.<id>.record: accepted', () => {
  const accepted: { given: string; series: ReturnType<typeof recordedSeriesOf> }[] = [
    {
      given: '[outdoor]',
      series: [{ sensor: 'outdoor', label: 'outdoor', unit: '°C' }],
    },
    {
      given: '[outdoor, { sensor: gravity, label: gravity SG, unit: SG }]',
      series: [
        { sensor: 'outdoor', label: 'outdoor', unit: '°C' },
        { sensor: 'gravity', label: 'gravity SG', unit: 'SG' },
      ],
    },
    { given: '[{ sensor: u }]', series: [{ sensor: 'u', label: 'u', unit: '°C' }] },
    { given: '[]', series: [] },
  ];
  for (const { given, series } of accepted) {
    test(`given record: ${given}, then the series are ${JSON.stringify(series.map((s) => s.label))}`, () => {
      const config = validConfig(withRecord(given));
      assert.deepEqual(recordedSeriesOf(config.loops.room!), series);
    });
  }

  test('given no record key, then the loop records nothing', () => {
    assert.deepEqual(
      recordedSeriesOf(validConfig(withRecord('[]').replace('    record: []\n', '')).loops.room!),
      [],
    );
  });

  test("given another loop's sensor, then it is accepted", () => {
    const text = `${withRecord('[u]')}
  box:
    sensor: u
    raise: heater2
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: hysteresis }
`.replace('actuators:\n', 'actuators:\n  heater2: { kind: simulated_relay, plant: p, gain: 20 }\n');
    assert.deepEqual(
      recordedSeriesOf(validConfig(text).loops.room!).map((s) => s.sensor),
      ['u'],
    );
  });
});

describe('loops.<id>.record: refused, with the path and the reason', () => {
  const refused: { given: string; error: RegExp }[] = [
    { given: '[nowhere]', error: /^loops\.room\.record\[0\]: unknown sensor "nowhere"/ },
    { given: '[{ sensor: nowhere }]', error: /^loops\.room\.record\[0\]\.sensor: unknown sensor "nowhere"/ },
    { given: '[t]', error: /^loops\.room\.record\[0\]: "t" is the loop's own sensor/ },
    { given: '[outdoor, outdoor]', error: /^loops\.room\.record\[1\]: sensor "outdoor" is recorded twice/ },
    {
      given: '[outdoor, { sensor: gravity, label: outdoor }]',
      error: /^loops\.room\.record\[1\]: label "outdoor" is already another recorded series/,
    },
    { given: '[{ sensor: outdoor, colour: red }]', error: /^loops\.room\.record\[0\]/ },
    { given: '[{ label: x }]', error: /^loops\.room\.record\[0\]/ },
    { given: '[""]', error: /^loops\.room\.record\[0\]/ },
    { given: 'outdoor', error: /^loops\.room\.record/ },
    { given: `[${Array.from({ length: 9 }, () => 'outdoor').join(', ')}]`, error: /^loops\.room\.record/ },
  ];
  for (const { given, error } of refused) {
    test(`given record: ${given.slice(0, 60)}, then ${error.source.slice(1, 70)}`, () => {
      const errors = configErrors(withRecord(given));
      assert.ok(
        errors.some((line) => error.test(line)),
        errors.join('\n'),
      );
    });
  }
});
