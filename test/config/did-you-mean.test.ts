/** A reference to an undefined id names the defined one it was probably meant to be. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { closestId } from '../../src/config/schema/did-you-mean.js';
import { configErrors, minimalSimConfigText } from '../support/config.js';

describe('closestId', () => {
  const known = ['probe', 'fridge_probe', 'heater', 'cooler', 't'];
  const cases: Array<[name: string, expected: string | undefined]> = [
    ['prob', 'probe'],
    ['Probe', 'probe'],
    ['fridge-probe', 'fridge_probe'],
    ['heatr', 'heater'],
    ['t2', 't'],
    ['colour', undefined],
    ['window', undefined],
    ['x', undefined],
  ];
  for (const [name, expected] of cases) {
    test(`${name} → ${expected ?? 'none close'}`, () => assert.equal(closestId(name, known), expected));
  }
});

test('validate: a loop naming a mistyped sensor and actuator is told the names meant', () => {
  const text = minimalSimConfigText()
    .replace('sensor: t\n', 'sensor: t2\n')
    .replace('raise: heater', 'raise: heatr');
  const errors = configErrors(text).join('\n');
  assert.match(errors, /loops\.room\.sensor: unknown sensor "t2" \(did you mean "t"\?\)/);
  assert.match(errors, /loops\.room\.raise: unknown actuator "heatr" \(did you mean "heater"\?\)/);
});
