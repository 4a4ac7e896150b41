/** Which loops a new reading or an actuator's availability change runs at once. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loopsDrivingActuator, loopsReadingSensor } from '../../src/daemon/loop-triggers.js';
import { validConfig } from '../support/config.js';

const CONFIG = validConfig(`
version: 1
node: { id: t }
simulation: { plants: { a: { ambient: 15, timeConstantS: 600 }, b: { ambient: 15, timeConstantS: 600 } } }
sensors:
  a_temp: { kind: simulated, plant: a }
  b_temp: { kind: simulated, plant: b }
  b_second: { kind: simulated, plant: b }
  window: { kind: simulated, plant: a }
actuators:
  a_heater: { kind: simulated_relay, plant: a, gain: 10 }
  b_heater: { kind: simulated_relay, plant: b, gain: 10 }
  b_fan: { kind: simulated_relay, plant: b, gain: -10 }
loops:
  a: { sensor: a_temp, raise: a_heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis }, interlocks: [{ sensor: window }] }
  b: { sensors: [b_temp, b_second], raise: b_heater, lower: b_fan, mode: heat_cool, setpoint: 20, deadband: 2, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`);

describe('loopsReadingSensor', () => {
  const cases: [sensor: string, loops: string[]][] = [
    ['a_temp', ['a']],
    ['window', ['a']], // an interlock
    ['b_second', ['b']], // one of a set
    ['nobody', []],
  ];
  for (const [sensor, loops] of cases) {
    test(`a reading of ${sensor} runs ${loops.join(', ') || 'no loop'}`, () => {
      assert.deepEqual(loopsReadingSensor(CONFIG, sensor), loops);
    });
  }
});

describe('loopsDrivingActuator', () => {
  const cases: [actuator: string, loops: string[]][] = [
    ['a_heater', ['a']],
    ['b_fan', ['b']], // lower
    ['nobody', []],
  ];
  for (const [actuator, loops] of cases) {
    test(`an availability change of ${actuator} runs ${loops.join(', ') || 'no loop'}`, () => {
      assert.deepEqual(loopsDrivingActuator(CONFIG, actuator), loops);
    });
  }
});
